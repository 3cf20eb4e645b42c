"""One result key as its test found it: the record inference builds once and the audit's result holds unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field

from fairtalk._codec import OMIT_DEFAULT

__all__ = ["MaskedComparison", "TestedKey"]


@dataclass(frozen=True, slots=True)
class MaskedComparison:
    """The same measure re-scored with the group words masked (the scorer-bias check).

    ``remaining`` is the masked absolute difference over the unmasked one: near 1 means
    the gap comes from the responses, near 0 means the scorer reacted to the group words.
    ``None`` when the unmasked difference is 0.
    """

    a: float
    b: float
    remaining: float | None


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
