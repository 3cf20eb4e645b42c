"""Two models audited on the same pairs, compared: per axis and key the change in gap, its verdict and the release gate.

:class:`ModelComparison` is what ``fairtalk compare BASELINE CANDIDATE`` and
:func:`fairtalk.pipeline.compare_runs` return: per ``(axis, key)`` a :class:`GapChange` (each
model's gap, the change in gap with its interval and test, non-inferiority and a
:class:`Change` verdict), and per axis a :class:`ComparedAxis` naming the pairs and keys left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from fairtalk._codec import OMIT_DEFAULT, SKIP, Codec, via
from fairtalk.results._audit import PairLosses
from fairtalk.results._protocol import Result, Verdict

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["Change", "ComparedAxis", "GapChange", "ModelComparison"]

_Bounds = tuple[float | None, float | None]
#: What a comparison does with the pairs a run lost a side of (:meth:`ComparedAxis.describe_losses`).
LOSSES_LEFT_OUT = "the comparison uses the pairs both runs answered"


class Change(StrEnum):
    """What the evidence says about a key's gap from the baseline to the candidate.

    ``IMPROVED`` / ``REGRESSED``: the candidate's gap is shown smaller / larger in size (corrected
    over the family); ``UNCHANGED``: shown to differ in size by less than the margin, both ways;
    ``INCONCLUSIVE``: neither.

    Examples
    --------
    >>> Change("improved").verdict, Change.UNCHANGED.verdict
    (<Verdict.DIFFERENT: 'difference detected'>, <Verdict.EQUIVALENT: 'equivalent'>)
    """

    IMPROVED = "improved"
    REGRESSED = "regressed"
    UNCHANGED = "unchanged"
    INCONCLUSIVE = "inconclusive"

    @property
    def verdict(self) -> Verdict:
        """The protocol's :class:`Verdict`: a change is a difference, unchanged is equivalence."""
        if self in (Change.IMPROVED, Change.REGRESSED):
            return Verdict.DIFFERENT
        return Verdict.EQUIVALENT if self is Change.UNCHANGED else Verdict.INCONCLUSIVE


@dataclass(frozen=True, slots=True)
class GapChange(Codec):
    """One result key of one axis, compared: both models' gaps, the change in gap, its tests and verdict.

    - ``baseline_a``/``baseline_b`` and ``candidate_a``/``candidate_b``: each model's side means;
      ``baseline_gap``/``candidate_gap`` its mean ``A − B`` with ``baseline_ci``/``candidate_ci``.
    - ``change``: ``g_c − g_b`` (difference in differences) with ``change_ci`` and ``p_change``
      (the test of no change, ``change_test``); ``total``: ``g_c + g_b`` with ``total_ci`` and ``p_total``.
    - ``p_magnitude``: ``max(p_change, p_total)``, the p of "the gap's size changed", and
      ``p_adjusted`` its correction within the family (primary keys, then the others).
    - ``margin``, ``non_inferior`` (shown ``|g_c| < |g_b| + margin``), ``within_margin`` (shown
      ``||g_c| − |g_b|| < margin``); ``identical``: every pair has the same gap in both runs;
      ``identical_answers``: pairs where both models gave the same two answers; ``units_needed``:
      for identical gaps on too few units to show non-inferiority, the units (pairs, or dialogues
      when clustered) the exact bound needs (None otherwise).
    - ``verdict``: a :class:`Change`. Intervals are at ``1 − α`` of the comparison.
    """

    axis: str = field(metadata=SKIP)  # filed under its axis and key in ``results.json``
    key: str = field(metadata=SKIP)
    kind: str
    primary: bool
    higher_is_better: bool | None
    n_pairs: int
    n_units: int
    baseline_a: float
    baseline_b: float
    baseline_gap: float
    baseline_ci: _Bounds
    candidate_a: float
    candidate_b: float
    candidate_gap: float
    candidate_ci: _Bounds
    change: float
    change_ci: _Bounds
    p_change: float | None
    change_test: str
    total: float
    total_ci: _Bounds
    p_total: float | None
    p_magnitude: float | None
    p_adjusted: float | None
    margin: float | None
    non_inferior: bool | None
    within_margin: bool | None
    identical: bool
    identical_answers: int
    verdict: Change
    notes: tuple[str, ...] = ()
    units_needed: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Change(self.verdict))


@dataclass(frozen=True, slots=True)
class ComparedAxis(Codec):
    """One axis both runs hold: its groups, the pairs compared, and what was left out and why.

    ``only_baseline``/``only_candidate`` count the pairs one run holds (``*_examples``: the first
    few ids); ``n_context_differs`` the pairs whose id both hold but whose contexts differ (not
    the same pair, left out); ``skipped`` maps a key that was not compared to why.
    ``candidate_losses``/``baseline_losses``: the pairs each run's audit lost a side of (None: none
    lost); a pair one run lost is left out (it is counted there, not as a pair only the other run
    holds), and :meth:`describe_losses` says so. ``fail-if-worse`` decides on the candidate's
    losses; the baseline's do not fail the candidate (the gate is about the candidate), they only
    narrow the pairs compared. ``candidate_empties`` likewise the candidate's pairs measured with an
    empty answer (:attr:`~fairtalk.results.AuditResult.empties`). ``corpus_dialogues``: where the axis counts dialogues, how many
    the audited corpus holds (from the runs' ``corpus_dialogue_sizes``; None: not recorded), so a
    gate can say when the identical-answers bound needs more than the corpus can give.
    ``unmeasured_primary``: the candidate's primary keys that the baseline did not measure (not
    compared): no comparison can show them non-inferior, so ``fail-if-worse`` fails on them.
    ``short_responses``: per run (``baseline``, ``candidate``) whose responses file holds fewer
    pairs than its ``results.json`` counts (a file cut short, or another run's), what each says:
    the evidence does not match the result, so ``fail-if-worse`` fails on it.
    """

    axis: str = field(metadata=SKIP)  # filed under its name in ``results.json``
    groups: tuple[str, str]
    n_pairs: int
    n_clusters: int | None
    only_baseline: int = 0
    only_baseline_examples: tuple[str, ...] = ()
    only_candidate: int = 0
    only_candidate_examples: tuple[str, ...] = ()
    n_context_differs: int = 0
    n_identical_answers: int = 0
    skipped: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    candidate_losses: PairLosses | None = field(default=None, metadata=OMIT_DEFAULT)
    baseline_losses: PairLosses | None = field(default=None, metadata=OMIT_DEFAULT)
    candidate_empties: PairLosses | None = field(default=None, metadata=OMIT_DEFAULT)
    corpus_dialogues: int | None = field(default=None, metadata=OMIT_DEFAULT)
    unmeasured_primary: tuple[str, ...] = field(default=(), metadata=OMIT_DEFAULT)
    short_responses: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), metadata=OMIT_DEFAULT)

    def describe_losses(self) -> tuple[str, ...]:
        """Each run's lost answers on the axis, counted, with what the comparison does about them (empty: none lost).

        Examples
        --------
        >>> axis = ComparedAxis("gender", ("m", "f"), 375, None, baseline_losses=PairLosses(500, 0, 125, 0))
        >>> print(axis.describe_losses()[0])
        baseline lost answers on 125 of 500 pairs (side a only 0, side b only 125, both 0): the comparison uses the pairs both runs answered
        """
        return tuple(
            f"{name} lost answers on {losses.describe()}: {LOSSES_LEFT_OUT}"
            for name, losses in (("baseline", self.baseline_losses), ("candidate", self.candidate_losses))
            if losses is not None and losses.n_lost
        )

    def describe_unmeasured(self) -> str | None:
        """The candidate's primary keys the baseline did not measure, in words (None: there are none).

        Examples
        --------
        >>> ComparedAxis("gender", ("m", "f"), 10, None, unmeasured_primary=("length",)).describe_unmeasured()
        "the candidate's primary key length was not measured in the baseline: it cannot be shown non-inferior"
        """
        keys = self.unmeasured_primary
        if not keys:
            return None
        if len(keys) == 1:
            return f"the candidate's primary key {keys[0]} was not measured in the baseline: it cannot be shown non-inferior"
        return (
            f"the candidate's primary keys {', '.join(keys)} were not measured in the baseline: they cannot be shown non-inferior"
        )


KIND = "model comparison"
"""The ``kind`` of a comparison's ``results.json``."""


def _axes_json(comparison: ModelComparison) -> dict[str, dict[str, Any]]:
    """The ``axes`` object: each axis under its name, its keys' changes under ``keys``."""
    by_axis: dict[str, dict[str, Any]] = {}
    for row in comparison.changes:
        by_axis.setdefault(row.axis, {})[row.key] = row.to_dict()
    return {a.axis: {**a.to_dict(), "keys": by_axis.get(a.axis, {})} for a in comparison.axes}


def _axes_of(data: Mapping[str, Any]) -> tuple[ComparedAxis, ...]:
    """The axes of a comparison's ``results.json`` (each entry's name put back as its ``axis``)."""
    return tuple(ComparedAxis.from_dict({**entry, "axis": name}) for name, entry in (data.get("axes") or {}).items())


def _changes_of(data: Mapping[str, Any]) -> tuple[GapChange, ...]:
    """The changes filed under each axis's ``keys`` (the axis and key put back)."""
    return tuple(
        GapChange.from_dict({**row, "axis": name, "key": compared})
        for name, entry in (data.get("axes") or {}).items()
        for compared, row in (entry.get("keys") or {}).items()
    )


@dataclass(frozen=True, slots=True)
class ModelComparison(Codec, Result[tuple[str, str]]):
    """A baseline and a candidate model audited on the same pairs: per axis and key, how the gap changed. Built once.

    ``baseline``/``candidate`` name the two runs (their folders) and ``models`` their model specs;
    ``axes`` are the axes both hold (:class:`ComparedAxis`) and ``changes`` one :class:`GapChange`
    per ``(axis, key)``. ``axes_only_baseline``/``axes_only_candidate``: axes one run holds, left out.
    ``alpha`` is the level of every test (intervals are ``1 − α``), ``correction`` the correction of
    ``p_magnitude`` within each axis's primary family (and separately its other keys).

    Its keys are ``(axis, key)``: ``verdicts`` maps each to the protocol's :class:`Verdict`
    (``change_verdicts`` to its :class:`Change`), ``detected()`` names the primary keys whose gap
    changed, and ``not_non_inferior()`` the compared primary keys not shown non-inferior. The release
    gate (``--fail-if-worse``) is decided by :func:`fairtalk.gates.evaluate` alone: it fails on those
    keys and on failures no compared key holds (see :meth:`not_non_inferior`).

    ``design`` is ``"paired"`` for two audits of the same pairs (each key's change tested per pair)
    and ``"independent"`` for two paper-004 prompts analyses (one axis per group pair, key
    ``regard``; the two gaps compared as independent estimates, ``n_pairs`` 0: no pair is shared).
    ``results.json`` records it only when it is not ``"paired"``.

    ``same_run`` says what the baseline and the candidate are when they cannot be told apart (``one
    run (the same folder …)``, the same run id or a copy; ``two runs of the same model … with the
    same decoding settings``), else None: the release gate fails on it, since a model cannot be
    shown not worse than itself.

    ``to_dict()`` is the comparison's ``results.json``: each axis under its name, with its keys'
    changes under ``keys``; ``from_dict()`` reads it back.

    Examples
    --------
    >>> empty = ModelComparison("old", "new", (), ())
    >>> ModelComparison.from_dict(empty.to_dict()) == empty
    True
    """

    baseline: str
    candidate: str
    axes: tuple[ComparedAxis, ...] = field(metadata=via(_axes_json, _axes_of, whole=True))
    changes: tuple[GapChange, ...] = field(metadata=SKIP | via(tuple, _changes_of, whole=True))  # filed in ``axes``
    models: tuple[str | None, str | None] = (None, None)
    alpha: float = 0.05
    correction: str = "holm"
    axes_only_baseline: tuple[str, ...] = ()
    axes_only_candidate: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    manifest: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    design: str = field(default="paired", metadata=OMIT_DEFAULT)
    same_run: str | None = field(default=None, metadata=OMIT_DEFAULT)

    #: Its JSON keys in order (fields and the derived ``kind``).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "kind",
        "baseline",
        "candidate",
        "models",
        "alpha",
        "correction",
        "axes",
        "axes_only_baseline",
        "axes_only_candidate",
        "warnings",
        "manifest",
        "design",
        "same_run",
    )

    @property
    def kind(self) -> str:
        """What ``results.json`` says the file is: ``"model comparison"``."""
        return KIND

    def change(self, axis: str, key: str) -> GapChange:
        """The comparison of ``key`` on ``axis``."""
        for row in self.changes:
            if (row.axis, row.key) == (axis, key):
                return row
        raise KeyError(f"no key {key!r} on axis {axis!r}; have: {', '.join(f'{r.axis}/{r.key}' for r in self.changes)}")

    @property
    def change_verdicts(self) -> Mapping[tuple[str, str], Change]:
        """(axis, key) -> its :class:`Change`, in the result's order."""
        return MappingProxyType({(r.axis, r.key): r.verdict for r in self.changes})

    @property
    def verdicts(self) -> Mapping[tuple[str, str], Verdict]:
        """(axis, key) -> the protocol's :class:`Verdict` of its change (see :attr:`Change.verdict`)."""
        return MappingProxyType({(r.axis, r.key): r.verdict.verdict for r in self.changes})

    def detected(self) -> tuple[tuple[str, str], ...]:
        """(axis, key) of the primary keys whose gap was shown to change in size (improved or regressed)."""
        return tuple((r.axis, r.key) for r in self.changes if r.primary and r.verdict.verdict.shows_difference)

    def regressed(self) -> tuple[tuple[str, str], ...]:
        """(axis, key) of the primary keys whose gap was shown larger in the candidate."""
        return tuple((r.axis, r.key) for r in self.changes if r.primary and r.verdict is Change.REGRESSED)

    def not_non_inferior(self) -> tuple[tuple[str, str], ...]:
        """(axis, key) of the compared primary keys not shown non-inferior (``|g_c| < |g_b| + margin``).

        These are not the release gate's failures: ``fairtalk.gates.evaluate(comparison,
        "fail-if-worse")`` decides the gate, and it also fails where no compared key does: a
        primary key of the candidate that the baseline did not measure (not compared, so not
        here), an axis only the baseline holds, the candidate's lost or empty answers not shown
        balanced, a responses file shorter than its results, one model compared with itself, no
        primary key compared. An empty tuple is not a passing gate.
        """
        return tuple((r.axis, r.key) for r in self.changes if r.primary and not r.non_inferior)

    def to_frame(self) -> pd.DataFrame:
        """One row per (axis, key), indexed by both; interval bounds in ``*_low``/``*_high`` columns."""
        import pandas as pd

        rows = []
        for row in self.changes:
            flat = row.to_dict()
            for name in ("baseline_ci", "candidate_ci", "change_ci", "total_ci"):
                flat[name.replace("_ci", "_low")], flat[name.replace("_ci", "_high")] = flat.pop(name)
            flat["notes"] = "; ".join(row.notes)
            rows.append({"axis": row.axis, "key": row.key, **flat})
        if not rows:
            return pd.DataFrame(columns=["axis", "key"]).set_index(["axis", "key"])
        return pd.DataFrame(rows).set_index(["axis", "key"])
