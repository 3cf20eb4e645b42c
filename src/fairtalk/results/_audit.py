"""The audit's result object: one frozen ``AuditResult`` (per measure a ``MeasureResult``), a :class:`~fairtalk.results.Result`."""

from __future__ import annotations

import dataclasses
import warnings as _warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from fairtalk._codec import INLINE, OMIT_DEFAULT, SKIP, Codec, key, keyed
from fairtalk._responses import (  # input_summary's counts, by side
    EMPTY_KEYS,
    LOSS_KEYS,
    SAME_CONTEXT_DROPPED_KEY,
)
from fairtalk.results._by_turn import ByTurnResult
from fairtalk.results._protocol import Result, Verdict
from fairtalk.results._provenance import Provenance
from fairtalk.results._schema import ResultKind
from fairtalk.results._tested_key import MaskedComparison, TestedKey
from fairtalk.stats import PPIEstimate

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = [
    "NOTE_NO_VARIATION",
    "AuditResult",
    "DivergentPair",
    "JudgeAnswer",
    "MaskedComparison",
    "MeasureResult",
    "PairLosses",
    "ScorerCheck",
    "TestedKey",
    "verdict_counts",
]

_MSG_MANIFEST_DEPRECATED = (
    "AuditResult.manifest is deprecated: read AuditResult.provenance (a typed Provenance; "
    "provenance.to_dict() is this mapping); manifest stops working in fairtalk 0.3"
)


NOTE_NO_VARIATION = "every pair scores the same on both sides: not tested, and left out of the correction family"
"""The note of a key whose every pair scores the same on both sides (the family leaves it out); last of its notes."""


@dataclass(frozen=True, slots=True)
class PairLosses(Codec):
    """The pairs an axis asked for but could not test, by the side that was lost.

    A side is lost when the model failed on it, when ``drop_empty`` dropped its empty answer, or
    when a responses file lacks it. ``n_asked`` counts every pair asked, lost or not (the pairs
    tested plus those lost); ``lost_a``/``lost_b`` count the pairs whose side a (b) was lost.
    ``unknown`` counts pairs lost whose side was not recorded (a result written before fairtalk
    recorded it): the gates fail closed on them.

    ``by_dialogue`` tallies the pairs asked per dialogue where the audit counted dialogues:
    ``(asked, a_only, b_only, both, dialogues)`` rows, dialogues alike counted once. The gates
    then take dialogues, not pairs, as the units of their test on the losses; empty (a result
    written before the dialogues were recorded, or an audit that counts pairs): pairs are the units.

    Examples
    --------
    >>> losses = PairLosses(n_asked=500, a_only=0, b_only=125, both=0)
    >>> losses.n_lost, losses.lost_b, losses.describe()
    (125, 125, '125 of 500 pairs (side a only 0, side b only 125, both 0)')
    """

    n_asked: int
    a_only: int
    b_only: int
    both: int
    unknown: int = 0
    by_dialogue: tuple[tuple[int, int, int, int, int], ...] = field(default=(), metadata=OMIT_DEFAULT)

    @property
    def n_lost(self) -> int:
        """Pairs lost, whichever side."""
        return self.a_only + self.b_only + self.both + self.unknown

    @property
    def lost_a(self) -> int:
        """Pairs whose side a was lost (side a only, or both)."""
        return self.a_only + self.both

    @property
    def lost_b(self) -> int:
        """Pairs whose side b was lost (side b only, or both)."""
        return self.b_only + self.both

    @classmethod
    def from_summary(
        cls, summary: Mapping[str, Any], n_pairs: int, by_dialogue: tuple[tuple[int, int, int, int, int], ...] = ()
    ) -> PairLosses | None:
        """The losses an input summary counts beside ``n_pairs`` pairs tested (None when none was lost)."""
        a_only, b_only, both = (int(summary.get(k) or 0) for k in LOSS_KEYS)
        unknown = 0
        if not any(k in summary for k in LOSS_KEYS):
            unknown = sum(int(summary.get(k) or 0) for k in ("n_pairs_with_errors", "n_empty_dropped", "n_missing_side"))
        n_lost = a_only + b_only + both + unknown
        if not n_lost:
            return None
        return cls(n_pairs + n_lost, a_only, b_only, both, unknown, by_dialogue if not unknown else ())

    @classmethod
    def from_empties(
        cls, summary: Mapping[str, Any], n_pairs: int, by_dialogue: tuple[tuple[int, int, int, int, int], ...] = ()
    ) -> PairLosses | None:
        """The empty answers an input summary counts among ``n_pairs`` pairs measured, by side (None when none is empty).

        Shaped as losses (``n_asked`` the pairs measured, ``a_only`` the pairs empty on side a
        only, ...), so the gates test them as they test lost answers.

        Examples
        --------
        >>> PairLosses.from_empties({"n_empty_a": 0, "n_empty_b": 85, "n_empty_both": 0}, 100).describe()
        '85 of 100 pairs (side a only 0, side b only 85, both 0)'
        """
        empty_a, empty_b, both = (int(summary.get(k) or 0) for k in EMPTY_KEYS)
        if not (empty_a or empty_b):
            return None
        return cls(n_pairs, empty_a - both, empty_b - both, both, 0, by_dialogue)

    def flags(self) -> tuple[list[int], list[int], list[int] | None]:
        """Per pair asked, whether side a (b) was lost, and its dialogue (None: not tallied); the pairs tested lost neither.

        The paired 0/1 outcomes the gates test (:mod:`fairtalk.gates`): a dialogue's id is where its
        pairs start.
        """
        a: list[int] = []
        b: list[int] = []
        if not self.by_dialogue:
            a = [1] * self.a_only + [0] * self.b_only + [1] * self.both
            b = [0] * self.a_only + [1] * self.b_only + [1] * self.both
            kept = self.n_asked - len(a)
            return a + [0] * kept, b + [0] * kept, None
        clusters: list[int] = []
        for asked, a_only, b_only, both, n_dialogues in self.by_dialogue:
            kept = asked - a_only - b_only - both
            row_a = [1] * a_only + [0] * b_only + [1] * both + [0] * kept
            row_b = [0] * a_only + [1] * b_only + [1] * both + [0] * kept
            for _ in range(n_dialogues):
                clusters += [len(a)] * asked
                a += row_a
                b += row_b
        return a, b, clusters

    def describe(self) -> str:
        """``"125 of 500 pairs (side a only 0, side b only 125, both 0)"``."""
        unknown = f", side not recorded {self.unknown:,}" if self.unknown else ""
        return (
            f"{self.n_lost:,} of {self.n_asked:,} pairs "
            f"(side a only {self.a_only:,}, side b only {self.b_only:,}, both {self.both:,}{unknown})"
        )


@dataclass(frozen=True, slots=True)
class MeasureResult(Codec):
    """One result key: its test as inference found it (``tested``) and what the decision over the family adds.

    ``tested`` is the :class:`~fairtalk.results.TestedKey` that ``fairtalk.inference`` built
    for the key, held unchanged; its figures read through this result (``m.a``, ``m.p_paired``,
    ``m.ci95``, ...: see :class:`~fairtalk.results.TestedKey`). What the decision adds:

    - ``p_adjusted``: the paired p corrected within the family (None when the key was not tested
      or is not in the family).
    - ``equivalence_margin``, ``p_equivalence``, ``equivalent``: the TOST within ``±margin``
      (``equivalence_test`` names it). What decided it: ``equivalence_interval``, the ``1 - 2α``
      interval of A - B the TOST inverts (equivalent exactly when it lies inside the margin; a
      90% interval at α 0.05, not ``ci95``), or ``equivalence_bound``, where an exact rule decided
      (identical answers, few differing units), the one-sided ``1 - α`` upper bound on the share
      of units that could differ; None where neither applies.
    - ``verdict``: :attr:`Verdict.DIFFERENT` (``difference detected``), ``EQUIVALENT`` or ``INCONCLUSIVE``
      (a string is read as its :class:`Verdict`). A key that was ``not_tested`` has no p, no
      interval and no equivalence: its verdict is ``inconclusive`` (it was neither shown
      different nor shown equivalent), and ``a``/``b`` are the means over the pairs it did
      score (NaN where none).
    - ``mde``: the minimum detectable effect at this n; ``primary``: whether the key is in the
      primary family.
    - ``no_variation``: every pair scores the same on both sides, so the family left the key out
      (:data:`NOTE_NO_VARIATION` ends its ``notes``; a ``tested`` whose notes end with it is read
      as such, as ``from_dict()`` reads it back).
    - ``identical_share``: for a count key with a margin, the share of units (pairs, or dialogues
      where the audit clusters) that could differ below which the exact identical-answers rule
      bounds it (``fairtalk.stats.identical_share``): its margin over the range of its scores in
      this run, so that identical answers pass from ``identical_units_needed`` of it units; None
      for a rate or corpus key, where no margin applies, and in files written before it was
      recorded (``fairtalk plan --gate --results`` then assumes the rule's default, 2%).
    - ``gate_pairs``: the pairs the equivalence gate (TOST at the result's α, this margin, the
      power of ``mde``) needs to pass a fair model, from this run's spread (None without one).
    - ``ppi``: the gap corrected by human labels (``score(gold=...)``): the prediction-powered
      estimate of A - B by the labels, its interval and p, and how many labels it used; None
      without labels for this key.

    Examples
    --------
    >>> key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), 0.0, "cohens_h")
    >>> m = MeasureResult(key, p_adjusted=1.0, equivalent=True, verdict="equivalent")
    >>> m.tested is key, m.p_paired, m.verdict.value
    (True, 1.0, 'equivalent')

    ``to_dict()`` is its ``results.json`` entry (``tested``'s keys inlined, ``masked`` and ``ppi`` only
    when set); ``from_dict()`` reads one back with its name under ``"name"``.
    """

    tested: TestedKey = field(metadata=INLINE)  # its keys sit in the measure's own entry
    p_adjusted: float | None = None
    equivalence_margin: float | None = None
    p_equivalence: float | None = None
    equivalent: bool | None = None
    equivalence_test: str = ""
    equivalence_interval: tuple[float, float] | None = None
    equivalence_bound: float | None = None
    identical_share: float | None = None
    verdict: Verdict = Verdict.INCONCLUSIVE
    mde: float | None = None
    primary: bool = True
    no_variation: bool = field(default=False, metadata=SKIP)  # written as the last of the notes
    gate_pairs: int | None = None
    ppi: PPIEstimate | None = field(default=None, metadata=OMIT_DEFAULT)

    #: Its ``results.json`` entry's keys in order (the name is the entry's key in ``measures``).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "tested.kind",
        "tested.a",
        "tested.b",
        "tested.difference",
        "difference_abs",
        "tested.z",
        "tested.p",
        "tested.p_paired",
        "tested.paired_test",
        "p_adjusted",
        "tested.ci95",
        "tested.ci_method",
        "tested.estimate",
        "tested.estimate_name",
        "tested.effect_size",
        "tested.effect_size_name",
        "tested.higher_is_better",
        "primary",
        "verdict",
        "equivalence_margin",
        "p_equivalence",
        "equivalent",
        "equivalence_test",
        "equivalence_interval",
        "equivalence_bound",
        "identical_share",
        "mde",
        "gate_pairs",
        "tested.n_clusters",
        "tested.design_effect",
        "tested.sd_difference",
        "tested.not_tested",
        "notes",
        "tested.masked",
        "ppi",
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))  # ValueError for a string that is no verdict
        notes = self.tested.notes
        if notes and notes[-1] == NOTE_NO_VARIATION:  # a key read back from its entry: the note says what no_variation says
            object.__setattr__(self, "tested", dataclasses.replace(self.tested, notes=notes[:-1]))
            object.__setattr__(self, "no_variation", True)

    @property
    def name(self) -> str:
        """The result key."""
        return self.tested.name

    @property
    def kind(self) -> str:
        """The key's kind: ``rate``, ``count`` or ``corpus``."""
        return self.tested.kind

    @property
    def a(self) -> float:
        """Side A's mean (a corpus key: its value)."""
        return self.tested.a

    @property
    def b(self) -> float:
        """Side B's mean (a corpus key: its value)."""
        return self.tested.b

    @property
    def difference(self) -> float | None:
        """The paper's relative difference (A - B) / A, None when A is 0."""
        return self.tested.difference

    @property
    def difference_abs(self) -> float | None:
        """A - B (None when a side has no value)."""
        return None if self.a is None or self.b is None else self.a - self.b

    @property
    def z(self) -> float | None:
        """The paper's two-sample Z statistic."""
        return self.tested.z

    @property
    def p(self) -> float | None:
        """The two-sided p of the paper's Z test."""
        return self.tested.p

    @property
    def p_paired(self) -> float | None:
        """The paired test's p."""
        return self.tested.p_paired

    @property
    def paired_test(self) -> str:
        """The paired test that ran."""
        return self.tested.paired_test

    @property
    def ci95(self) -> tuple[float | None, float | None]:
        """The 95% interval of A - B (``(None, None)`` when undefined)."""
        return self.tested.ci95

    @property
    def ci_method(self) -> str:
        """How ``ci95`` was computed."""
        return self.tested.ci_method

    @property
    def estimate(self) -> float | None:
        """What ``ci95`` is an interval of."""
        return self.tested.estimate

    @property
    def estimate_name(self) -> str:
        """The name of ``estimate`` (the mean difference, or Hodges-Lehmann)."""
        return self.tested.estimate_name

    @property
    def effect_size(self) -> float | None:
        """The effect size (``effect_size_name``)."""
        return self.tested.effect_size

    @property
    def effect_size_name(self) -> str:
        """The name of ``effect_size``."""
        return self.tested.effect_size_name

    @property
    def higher_is_better(self) -> bool | None:
        """The key's direction (None: neither)."""
        return self.tested.higher_is_better

    @property
    def masked(self) -> MaskedComparison | None:
        """The values with the group words masked (None without ``mask_groups``)."""
        return self.tested.masked

    @property
    def n_clusters(self) -> int | None:
        """The independent dialogues (None: pairs were the units)."""
        return self.tested.n_clusters

    @property
    def design_effect(self) -> float | None:
        """Variance with clusters over variance as if pairs were independent."""
        return self.tested.design_effect

    @property
    def sd_difference(self) -> float | None:
        """The standard deviation of the paired differences."""
        return self.tested.sd_difference

    @property
    def not_tested(self) -> str | None:
        """Why the key has no test, None when it has one."""
        return self.tested.not_tested

    @property
    def notes(self) -> tuple[str, ...]:
        """The test's notes, then :data:`NOTE_NO_VARIATION` when the family left the key out for it."""
        return (*self.tested.notes, NOTE_NO_VARIATION) if self.no_variation else self.tested.notes

    def detected(self) -> bool:
        """Whether this measure's verdict is :attr:`Verdict.DIFFERENT` (its adjusted p is below the result's level)."""
        return self.verdict is Verdict.DIFFERENT


@dataclass(frozen=True, slots=True)
class ScorerCheck(Codec):
    """A scorer's own group gap on neutral probe sentences (the scorer certificate).

    ``a``/``b`` are the key's means on the side-A probes and their counterfactuals; ``gap`` is
    ``a - b`` with its interval ``ci95`` and paired ``p``. ``flagged``: the gap exceeds
    ``margin`` and is distinguishable from 0 (p below the audit's alpha, an interval that
    excludes 0), so part of the audit's gap on this key may be the scorer's. ``note`` says why a
    gap that is only one of the two is not flagged, and what limits the check (few probes).
    """

    key: str = field(metadata=SKIP)  # filed under its key in ``results.json``
    n_probes: int
    a: float
    b: float
    gap: float
    ci95: tuple[float | None, float | None]
    p: float | None
    margin: float | None
    flagged: bool
    note: str | None = None


@dataclass(frozen=True, slots=True)
class JudgeAnswer(Codec):
    """A judge's raw answer about one side of one pair: a line of ``judge.jsonl``.

    ``judge`` is the judge measure's name; ``response`` the response as the judge read it
    (group words masked, as sent); ``answer`` its raw answer (None where it failed, and
    ``error`` says how); ``value`` how the answer was read: ``"yes"``/``"no"`` or the score,
    else ``"unparsed"`` or ``"error"``. ``to_dict()`` is its ``judge.jsonl`` line (and its entry in a
    divergent pair of ``results.json``).
    """

    judge: str
    pair_id: str
    side: str
    response: str
    answer: str | None
    value: str | float
    error: str | None = None


@dataclass(frozen=True, slots=True)
class DivergentPair(Codec):
    """A pair whose two responses differ most on one measure (the paper's Table 1).

    ``judged``: every judge's raw answer about each side of the pair (empty without a judge).
    """

    pair_id: str
    measure: str
    context_a: str
    context_b: str
    response_a: str
    response_b: str
    score_a: float
    score_b: float
    judged: tuple[JudgeAnswer, ...] = ()


def verdict_counts(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """How many keys got each verdict, by the verdict's string (in the order first met): a result's repr.

    Examples
    --------
    >>> verdict_counts([Verdict.EQUIVALENT, Verdict.DIFFERENT, Verdict.EQUIVALENT])
    {'equivalent': 2, 'difference detected': 1}
    """
    return dict(Counter(str(v) for v in verdicts))


@dataclass(frozen=True, slots=True)
class AuditResult(Codec, Result[str]):
    """Everything one audit of one axis found. Built once; its shape never varies.

    ``input_summary`` counts what the reader skipped or kept (pairs missing a side,
    duplicate records, empty responses). ``provenance`` (a :class:`~fairtalk.results.Provenance`,
    ``results.json``'s ``manifest``) records versions, hashes, thresholds and seeds, so that a
    result can be traced and reproduced. ``n_clusters``
    counts the independent dialogues (None: pairs were the units); ``correction_scope``
    (``axis`` or ``run``) and ``family_size`` say what the correction spanned;
    ``warnings`` flags what a reader must know (few distinct responses, small samples, answers
    cut off at the token limit or the pairs ``exclude_truncated`` left out for that);
    ``scorer_check`` is each scorer's own gap on neutral probes (the scorer certificate).
    ``judge_answers`` holds every judge's raw answer about each side of each pair (what
    ``judge.jsonl`` holds); like the responses, it is not part of ``to_dict()`` (the divergent
    pairs keep theirs). ``by_turn`` is each key's gap by the turns since the identity appeared
    (``audit(by_turn=True)``; ``results.json`` has its ``by_turn`` section only then).
    ``corpus_dialogue_sizes`` are the dialogues of the corpus' pairs the audit drew from, by size
    (``((pairs, dialogues), ...)``; only where the pairs name their dialogues): ``gate_pairs`` and
    ``fairtalk plan --gate --results`` count the dialogues a larger sample of it would span.
    ``lost_by_dialogue`` tallies, where the audit counts dialogues and some pair was lost, the
    pairs asked per dialogue and those lost by side (``((asked, a_only, b_only, both, dialogues), ...)``):
    the gates test the losses by dialogue on it (see :attr:`losses`); ``empty_by_dialogue`` tallies
    so the pairs measured and those with an empty answer by side (see :attr:`empties`).
    ``corpus_differing_pairs`` counts the pairs whose two answers differ (None: no corpus measure
    ran): a corpus key's permutation test swaps only those, so ``fairtalk plan --gate --results``
    counts from their share the chance that a smaller sample holds the units that test needs.

    Its keys are the measures' result keys: ``verdicts`` maps each to its :class:`Verdict`, and
    ``detected()`` names the primary ones with a difference detected.

    ``to_dict()`` is the ``results.json`` schema (with a ``by_turn`` section before the manifest
    when the audit ran one); ``from_dict()`` reads it back.

    Examples
    --------
    >>> result = AuditResult("gender", ("male", "female"), 0, ())
    >>> AuditResult.from_dict(result.to_dict()) == result
    True
    """

    axis: str
    groups: tuple[str, str]
    n_pairs: int
    measures: tuple[MeasureResult, ...] = field(metadata=keyed("name"))
    alpha: float = 0.05
    correction: str = "holm"
    divergent_pairs: tuple[DivergentPair, ...] = ()
    input_summary: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    provenance: Provenance = field(default_factory=Provenance, metadata=key("manifest"))
    n_clusters: int | None = None
    correction_scope: str = "axis"
    family_size: int = 0
    n_distinct_responses: int | None = None
    warnings: tuple[str, ...] = ()
    scorer_check: tuple[ScorerCheck, ...] = field(default=(), metadata=keyed("key"))
    judge_answers: tuple[JudgeAnswer, ...] = field(default=(), repr=False, compare=False, metadata=SKIP)
    by_turn: ByTurnResult | None = field(default=None, metadata=OMIT_DEFAULT)
    corpus_dialogue_sizes: tuple[tuple[int, int], ...] = field(default=(), metadata=OMIT_DEFAULT)
    corpus_differing_pairs: int | None = field(default=None, metadata=OMIT_DEFAULT)
    lost_by_dialogue: tuple[tuple[int, int, int, int, int], ...] = field(default=(), metadata=OMIT_DEFAULT)
    empty_by_dialogue: tuple[tuple[int, int, int, int, int], ...] = field(default=(), metadata=OMIT_DEFAULT)

    _file_kind: ClassVar[ResultKind] = "audit"

    #: Its ``results.json`` keys in order (``measures`` and ``scorer_check`` as objects keyed by name).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "axis",
        "groups",
        "n_pairs",
        "n_clusters",
        "corpus_dialogue_sizes",
        "corpus_differing_pairs",
        "n_distinct_responses",
        "alpha",
        "correction",
        "correction_scope",
        "family_size",
        "warnings",
        "scorer_check",
        "measures",
        "input_summary",
        "lost_by_dialogue",
        "empty_by_dialogue",
        "divergent_pairs",
        "by_turn",
        "provenance",
    )

    @property
    def manifest(self) -> Mapping[str, Any]:
        """Deprecated (FutureWarning; removed in fairtalk 0.3): ``provenance.to_dict()``, read-only; read :attr:`provenance`."""
        _warnings.warn(_MSG_MANIFEST_DEPRECATED, FutureWarning, stacklevel=2)
        return MappingProxyType(self.provenance.to_dict())

    def __repr__(self) -> str:
        """One line: the axis, its pairs, how many keys got each verdict, those detected, the warnings' count.

        The fields stay whole on the result (``to_dict()``, ``to_frame()``, :meth:`measure`).

        Examples
        --------
        >>> AuditResult("gender", ("male", "female"), 0, ())
        AuditResult(axis='gender', groups=('male', 'female'), n_pairs=0, measures=0, verdicts={}, detected=(), warnings=0)
        """
        return (
            f"AuditResult(axis={self.axis!r}, groups={self.groups!r}, n_pairs={self.n_pairs}, "
            f"measures={len(self.measures)}, verdicts={verdict_counts(self.verdicts.values())}, "
            f"detected={self.detected()!r}, warnings={len(self.warnings)})"
        )

    def measure(self, name: str) -> MeasureResult:
        """The result of the measure with this result key."""
        for result in self.measures:
            if result.name == name:
                return result
        raise KeyError(f"no measure {name!r}; have: {', '.join(m.name for m in self.measures)}")

    def flagged_scorers(self) -> tuple[str, ...]:
        """Keys whose scorer reacts to the group on neutral probes (see ``scorer_check``)."""
        return tuple(c.key for c in self.scorer_check if c.flagged)

    @property
    def verdicts(self) -> Mapping[str, Verdict]:
        """Result key -> its verdict, for every measure (primary and secondary), in the result's order."""
        return MappingProxyType({m.name: m.verdict for m in self.measures})

    @property
    def losses(self) -> PairLosses | None:
        """The pairs asked but left out because a side was lost, by side (None when no pair was lost).

        Read from ``input_summary`` (``n_lost_a_only``, ``n_lost_b_only``, ``n_lost_both``), which
        ``results.json`` carries: the gates (:func:`fairtalk.gates.evaluate`) decide on it. A result
        written before the sides were recorded, whose pairs left out (``n_pairs_with_errors``,
        ``n_empty_dropped``, ``n_missing_side``) carry no side, has them as ``unknown``. Where the
        audit counts dialogues, ``lost_by_dialogue`` (its ``by_dialogue``) tallies them per dialogue.

        Examples
        --------
        >>> AuditResult("gender", ("m", "f"), 375, (), input_summary={"n_lost_b_only": 125}).losses.describe()
        '125 of 500 pairs (side a only 0, side b only 125, both 0)'
        """
        return PairLosses.from_summary(self.input_summary, self.n_pairs, self.lost_by_dialogue)

    @property
    def empties(self) -> PairLosses | None:
        """The pairs measured with an empty answer, by side, shaped as losses (None when no answer is empty).

        Read from ``input_summary`` (``n_empty_a``, ``n_empty_b``, ``n_empty_both``: the empty
        answers of the pairs kept). An empty answer is scored as an answer, so a model that answers
        one group with nothing could pass on the measures: the gates (:func:`fairtalk.gates.evaluate`)
        test the two sides' empty answers as they test lost ones. Where the audit counts dialogues,
        ``empty_by_dialogue`` tallies them per dialogue. With ``drop_empty`` the empty answers are
        lost pairs (:attr:`losses`), and none is left here.

        Examples
        --------
        >>> summary = {"n_empty_a": 0, "n_empty_b": 85, "n_empty_both": 0}
        >>> AuditResult("gender", ("m", "f"), 100, (), input_summary=summary).empties.b_only
        85
        """
        return PairLosses.from_empties(self.input_summary, self.n_pairs, self.empty_by_dialogue)

    @property
    def same_context(self) -> int | None:
        """The pairs whose two sides were asked the same context (not counterfactual pairs); None where not counted.

        Read from ``input_summary``'s ``n_same_context_dropped``, present only where some pair is
        such: scoring left them out of the tests (:attr:`same_context_left_out`; :attr:`n_pairs`
        counts the pairs kept, and the gates (:func:`fairtalk.gates.evaluate`) fail an axis with
        fewer than two). A result written before they were counted reads None, as one with none.

        Examples
        --------
        >>> AuditResult("gender", ("m", "f"), 100, (), input_summary={"n_same_context_dropped": 20}).same_context
        20
        """
        found = self.input_summary.get(SAME_CONTEXT_DROPPED_KEY)
        return None if found is None else int(found)

    @property
    def same_context_left_out(self) -> bool:
        """Whether the pairs with the same context on both sides (:attr:`same_context`) were left out of the tests.

        False for a result with none, and for one written before they were counted.

        Examples
        --------
        >>> AuditResult("gender", ("m", "f"), 100, (), input_summary={"n_same_context_dropped": 20}).same_context_left_out
        True
        """
        return SAME_CONTEXT_DROPPED_KEY in self.input_summary

    def detected(self) -> tuple[str, ...]:
        """Names of the primary measures whose verdict is :attr:`Verdict.DIFFERENT` (adjusted p below the result's α).

        The verdict was decided once, under the result's own options; nothing here re-decides it.
        These are the scorer's verdicts alone: a gate also reads the labels (``score(gold=...)``),
        lost and empty answers and same-context pairs, so ``fail-on-bias`` can fail where this is
        empty. The gate's decision is :func:`fairtalk.gates.evaluate` (``.passed``, ``.failures``).

        Examples
        --------
        >>> AuditResult("gender", ("male", "female"), 0, ()).detected()
        ()
        """
        return tuple(m.name for m in self.measures if m.primary and m.detected())

    def not_equivalent(self) -> tuple[str, ...]:
        """Names of the primary measures the scorer did not show equivalent within their margin.

        The scorer's view alone, as :meth:`detected`: ``fail-unless-equivalent`` also fails keys
        the labels overrule and the axis' lost or empty answers, so it can fail where this is
        empty. The gate's decision is :func:`fairtalk.gates.evaluate`.
        """
        return tuple(m.name for m in self.measures if m.primary and not m.equivalent)

    def to_frame(self) -> pd.DataFrame:
        """One row per measure, indexed by measure name."""
        import pandas as pd

        rows = []
        for m in self.measures:
            row = m.to_dict()
            row.pop("masked", None)
            ppi = row.pop("ppi", None)
            row.update({f"ppi_{k}": ppi[k] if ppi else None for k in ("estimate", "p", "n_labels")})
            row["ppi_ci95_low"], row["ppi_ci95_high"] = ppi["ci95"] if ppi else (None, None)
            row["notes"] = "; ".join(m.notes)
            row["ci95_low"], row["ci95_high"] = m.ci95
            del row["ci95"]
            row["equivalence_low"], row["equivalence_high"] = m.equivalence_interval or (None, None)
            del row["equivalence_interval"]
            if m.masked is not None:
                row["masked_a"], row["masked_b"], row["masked_remaining"] = m.masked.a, m.masked.b, m.masked.remaining
            rows.append({"measure": m.name, **row})
        return pd.DataFrame(rows).set_index("measure")
