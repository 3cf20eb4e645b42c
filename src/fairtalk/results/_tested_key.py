"""One result key as its test found it: the record inference builds once and the audit's result holds unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field

from fairtalk._codec import OMIT_DEFAULT

__all__ = ["MASKED_GAP_FLOOR", "MaskedComparison", "TestedKey"]


@dataclass(frozen=True, slots=True)
class MaskedComparison:
    """The same measure re-scored with the group words masked (the scorer-bias check).

    ``remaining`` is the masked absolute difference over the unmasked one: near 1 means
    the gap comes from the responses, near 0 means the scorer reacted to the group words.
    ``None`` when the unmasked difference is about 0 (below :data:`MASKED_GAP_FLOOR`): a share of
    no gap means nothing (a diversity gap of 4e-7 read "77529% remains").
    """

    a: float
    b: float
    remaining: float | None

    @classmethod
    def of(cls, unmasked: tuple[float, float], masked: tuple[float, float]) -> MaskedComparison:
        """The masked values, with the share of the unmasked gap they keep (None where that gap is about 0).

        Examples
        --------
        >>> round(MaskedComparison.of((0.30, 0.20), (0.28, 0.22)).remaining, 3)
        0.6
        >>> MaskedComparison.of((0.4647800, 0.4647804), (0.46478, 0.46511)).remaining is None
        True
        """
        gap = abs(unmasked[0] - unmasked[1])
        share = abs(masked[0] - masked[1]) / gap if gap >= MASKED_GAP_FLOOR else None
        return cls(masked[0], masked[1], share)


#: The smallest unmasked gap whose masked share is shown, in the key's units (a rate's or corpus
#: measure's fraction: 0.001 percentage points, the last decimal the reports print).
MASKED_GAP_FLOOR = 1e-5


@dataclass(frozen=True, slots=True)
class TestedKey:
    """One result key, tested: its side values, Z test, paired test, interval and effect size, and why it has no test.

    ``fairtalk.inference`` builds it once per key; the :class:`~fairtalk.results.MeasureResult`
    of the key holds that very record (:attr:`~fairtalk.results.MeasureResult.tested`) and adds
    only what the decision over the family adds (corrected p, equivalence, verdict, power).

    - ``a``/``b`` are the side means (or corpus values); ``difference`` the paper's relative
      difference (A - B) / A as a fraction, ``None`` when A is 0; ``z``/``p`` its two-sample Z
      test (``None`` for corpus-level keys and where undefined: ``notes`` says why).
    - ``p_paired`` is the paired test's p, ``paired_test`` names the test that ran.
    - ``ci95`` bounds A - B (by ``ci_method``; ``(None, None)`` when undefined) around
      ``estimate`` (``estimate_name``: the mean difference, or Hodges-Lehmann).
    - ``effect_size`` (``effect_size_name``), ``higher_is_better`` (the key's direction, None:
      neither), ``n_clusters``, ``design_effect`` and ``sd_difference`` (the spread of the
      paired differences).
    - ``not_tested``: why the key has no test (too few pairs scored on both sides), None when
      it was tested; ``masked``: the values with the group words masked (``mask_groups``).
    """

    __test__ = False  # not a pytest test class, whatever its name

    name: str
    kind: str
    a: float
    b: float
    difference: float | None
    z: float | None
    p: float | None
    p_paired: float | None
    paired_test: str
    ci95: tuple[float | None, float | None]
    effect_size: float | None
    effect_size_name: str
    higher_is_better: bool | None = None
    masked: MaskedComparison | None = field(default=None, metadata=OMIT_DEFAULT)  # in results.json only when set
    ci_method: str = ""
    estimate: float | None = None
    estimate_name: str = "mean difference"
    notes: tuple[str, ...] = ()
    n_clusters: int | None = None
    design_effect: float | None = None
    sd_difference: float | None = None
    not_tested: str | None = None
