"""``audit(until_decided=True)``: add pairs look by look until every primary measure is decided or the budget is spent.

The design (:mod:`fairtalk.stats._sequential`):

- **Nested looks.** An axis' candidate pairs are ranked once by a seeded hash of their id
  (``blake2b(seed, id)``; with ``balance`` each original side is ranked on its own and the two
  interleaved), and look ``k`` audits the first ``n_k`` of that order: a uniform sample that
  the next look extends, so the pairs of a look are exactly those of the look before plus new
  ones, and the run store answers the old ones (only new pairs reach the model). A pair side
  that failed at an earlier look is not asked again in the run (:class:`~fairtalk.run._generate.FailedBefore`):
  it stays a lost answer, counted as a fixed audit counts one, and the store keeps its failure,
  which a rerun asks for again.
- **Looks**: ``n_pairs`` pairs first, then steps of ``n_pairs`` (or ``looks`` equal steps) up to
  ``max_pairs``, or to the pairs the corpus has when it has fewer (planned before any answer).
  The information fraction of a look is ``n_k / n_K``.
- **Difference**: each key's fixed-sample p-value at each look becomes a repeated p-value
  under the two-sided Lan-DeMets boundaries, and its minimum over the looks is the key's
  sequential p-value; the run's correction (Holm by default) over the family of sequential
  p-values gives ``p_adjusted`` (Holm with group-sequential boundaries, Maurer & Bretz 2013).
- **Equivalence**: the TOST p-value (the larger of the two one-sided p-values) is treated the
  same way under one-sided boundaries: both one-sided tests cross together.
- **Stopping**: an axis stops once each of its tested primary measures has a verdict
  (difference detected or equivalent), or at its last look. A key answered identically on every
  pair counts (it waits on the identical-answers bound); a key not tested for too few scored pairs
  does not. Stopping early forgoes the α not yet spent, so the levels hold.

The finished AxisRun is the last look's, with ``p_adjusted`` and the equivalence test made
sequential, and ``provenance.audit.sequential`` saying how the looks went.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from fairtalk.config import AuditConfig, InferenceOptions, PairsOptions, SequentialOptions
from fairtalk.corpora import Corpus
from fairtalk.counterfactual import Swapper
from fairtalk.errors import SpecError
from fairtalk.inference import Scored, check_gold, correct_families
from fairtalk.lexicons import Lexicon
from fairtalk.pairs import PairColumn, PairColumns, build_pairs
from fairtalk.progress import ProgressReporter
from fairtalk.records import Coverage, Pair
from fairtalk.results import AxisRun, SequentialProvenance
from fairtalk.run._axis import AxisWork, audit_axis, finish_axes, too_few_pairs
from fairtalk.run._generate import FailedBefore
from fairtalk.run._score import audit_score_options
from fairtalk.stats import Equivalence, boundaries, look_sizes, repeated_p
from fairtalk.store import CachingResponder

__all__ = ["ALL_DECIDED", "BUDGET_SPENT", "NestedPairs", "nested_pairs", "run_sequential"]

#: Why an axis stopped adding pairs.
ALL_DECIDED, BUDGET_SPENT = "all decided", "budget spent"
_DESIGN = "group-sequential, Lan-DeMets {spending}-type alpha spending"
_CORRECTION = "{correction} over sequential p-values (group-sequential {correction}, Maurer & Bretz 2013)"
_NOTE = "group-sequential, look {look} of {planned} ({n:,} pairs): p_adjusted and the equivalence p are over the looks"
#: Why an undecided key held its axis back to the budget: a key answered identically on every pair, and any other.
_WHY_IDENTICAL = (
    "identical on every pair, so there is no difference to test; the identical-answers bound had not shown it "
    "equivalent within its margin by the last look ({advice})"
)
_WHY_UNDECIDED = "no difference detected, and equivalence within its margin not shown"
#: What decides an undecided key: more pairs where the budget (max_pairs) stopped the looks; where the corpus did, not.
_MORE_PAIRS = "more pairs, or a wider margin, decide it"
_CORPUS_SPENT = "the corpus has no more pairs: a larger corpus, or a wider margin, decide it"
_SPENDING_NAMES = {"obrien-fleming": "O'Brien-Fleming", "pocock": "Pocock"}
#: ``looks`` that fit between ``n_pairs`` and ``max_pairs`` but not in the fewer pairs the corpus gives (as AuditConfig words it).
_MSG_LOOKS_CORPUS = (
    "looks={k} (--looks {k}): axis {axis}: {corpus} gives {available:,} pairs, fewer than max_pairs={max:,} (--max-pairs): "
    "from n_pairs={n:,} (--pairs) to its {available:,} pairs the looks after the first add at most {room:,} pairs, at "
    "least one each, so at most {most} looks fit; give looks={most} (--looks {most}) or fewer (or a smaller n_pairs, or "
    "a corpus with more pairs)"
)
_MSG_LOOKS_CORPUS_NO_ROOM = (
    "looks={k} (--looks {k}): axis {axis}: {corpus} gives {available:,} pairs, no more than the first look's "
    "n_pairs={n:,} (--pairs), so no look after the first can add a pair; leave looks (--looks) out (one fixed-sample "
    "look of {available:,} pairs) or give a smaller n_pairs (or a corpus with more pairs)"
)


@dataclass(frozen=True, slots=True)
class NestedPairs:
    """An axis' candidate pairs in the order the looks take them, and the pairs stage's coverage of the corpus.

    ``ranked`` holds them as columns (a :class:`~fairtalk.pairs.PairColumn`, no record per pair);
    ``positions[i]`` is the corpus position (among the unique pairs) of ``ranked[i]``.
    """

    ranked: PairColumn
    positions: npt.NDArray[np.int64]
    coverage: Coverage

    def look(self, n: int) -> tuple[PairColumn, Coverage]:
        """The first ``n`` pairs (in corpus order, as columns) and their coverage, as a ``limit=n`` pairs stage reports it.

        A look's size is the design's (planned within the pairs the corpus has), not asked for: no shortfall.
        """
        pairs = self.ranked.take(np.argsort(self.positions[:n], kind="stable").tolist())
        return pairs, dataclasses.replace(self.coverage, n_pairs=len(pairs), limit=n, limit_given=False)


def _rank(seed: int, pair: Pair) -> int:
    """The pair's rank: its id's seeded 8-byte hash, as a number (ordered as the bytes are)."""
    digest = hashlib.blake2b(f"{seed}\x1f{pair.id}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class _Lowest:
    """The ``k`` pairs of lowest (rank, position) seen so far, kept in slots of shared columns: no object per pair.

    It holds up to ``k + k // 4`` pairs. Once they are full, one sort keeps the ``k`` lowest,
    and the other slots take the next pairs that rank below the ``k``-th (a pair of equal rank
    comes later, so it ranks after). The pairs it drops rank after ``k`` pairs it keeps, so the
    ``k`` lowest of all are always among its slots.
    """

    def __init__(self, k: int, columns: PairColumns) -> None:
        self._k = k
        self._capacity = k + max(1, k // 4)
        self._columns = columns
        self._slots = array("q")  # each entry's slot in the columns
        self._ranks = array("Q")
        self._positions = array("q")
        self._free: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)  # the entries the next pairs take
        self._next_free = 0
        self._bound: int | None = None  # a pair enters when its rank is below it

    def add(self, rank: int, position: int, pair: Pair) -> None:
        """Keep ``pair`` (at ``position``, of ``rank``) when it may be among the ``k`` lowest."""
        if self._bound is not None and rank >= self._bound:
            return
        if len(self._slots) < self._capacity:
            self._slots.append(len(self._columns))
            self._columns.append(pair)
            self._ranks.append(rank)
            self._positions.append(position)
            if len(self._slots) == self._capacity:
                self._select()
            return
        entry = int(self._free[self._next_free])
        self._next_free += 1
        self._columns[self._slots[entry]] = pair
        self._ranks[entry], self._positions[entry] = rank, position
        if self._next_free == len(self._free):
            self._select()

    def _order(self) -> npt.NDArray[np.intp]:
        """The entries by (rank, position)."""
        ranks = np.array(self._ranks, dtype=np.uint64)
        return np.lexsort((np.array(self._positions, dtype=np.int64), ranks))

    def _select(self) -> None:
        order = self._order()
        self._free, self._next_free = order[self._k :], 0
        self._bound = self._ranks[int(order[self._k - 1])]

    def lowest(self) -> tuple[list[int], list[int]]:
        """The ``k`` lowest (or all, when fewer came) by (rank, position): their slots and their positions."""
        order = self._order()[: self._k].tolist()
        return [self._slots[i] for i in order], [self._positions[i] for i in order]


def nested_pairs(contexts: Corpus, lexicon: Lexicon, pairing: PairsOptions, budget: int) -> NestedPairs:
    """At most ``budget`` of the axis' pairs, ranked so that the first ``n`` of them are a seeded uniform sample of ``n``.

    The rank is the pair id's seeded hash, so a larger budget extends a smaller one's order
    (ties, which a 64-bit hash all but never makes, go to the earlier pair). With ``balance``,
    each original side is ranked alone and the two alternate (a, b, a, b, ...) as long as both
    have pairs. The pairs are read once and only those that may rank among the ``budget``
    first are kept, as columns.
    """
    seed = pairing.seed
    pair_set = build_pairs(
        contexts, Swapper(lexicon, seed=seed), mixed=pairing.mixed, limit=None, seed=seed, balance=pairing.balance
    )
    columns = PairColumns(lexicon.axis)
    if pairing.balance:
        by_side = {"a": _Lowest(-(-budget // 2), columns), "b": _Lowest(-(-budget // 2), columns)}
    else:
        by_side = dict.fromkeys("ab", _Lowest(budget, columns))
    for position, pair in enumerate(pair_set):
        by_side[pair.original_side].add(_rank(seed, pair), position, pair)
    if pairing.balance:
        (slots_a, at_a), (slots_b, at_b) = by_side["a"].lowest(), by_side["b"].lowest()
        slots = [slot for both in zip(slots_a, slots_b) for slot in both][:budget]
        positions = [at for both in zip(at_a, at_b) for at in both][:budget]
    else:
        slots, positions = by_side["a"].lowest()
    return NestedPairs(columns.take(slots).column(), np.array(positions, dtype=np.int64), pair_set.coverage)


@dataclass
class _Axis:
    """One axis across its looks: the pairs, the planned looks, each look's work and the p-values so far."""

    lexicon: Lexicon
    pool: NestedPairs
    sizes: tuple[int, ...]
    works: list[AxisWork] = field(default_factory=list)
    repeated: dict[str, list[float]] = field(default_factory=dict)  # key -> repeated p of each look it was tested at
    repeated_equivalence: dict[str, list[float]] = field(default_factory=dict)
    decided_at: dict[str, int] = field(default_factory=dict)
    stopped: str | None = None

    @property
    def fractions(self) -> tuple[float, ...]:
        return tuple(n / self.sizes[-1] for n in self.sizes)

    def sequential(self, key: str, equivalence: bool = False) -> float | None:
        values = (self.repeated_equivalence if equivalence else self.repeated).get(key)
        return min(values) if values else None


def run_sequential(
    config: AuditConfig,
    lexicons: Sequence[Lexicon],
    cached: CachingResponder,
    reporter: ProgressReporter,
    *,
    contexts: Corpus,
    run_id: str,
    extra_manifest: Mapping[str, object] | None = None,
) -> dict[str, AxisRun]:
    """Every axis look by look through ``cached`` (a CachingResponder) until decided or out of budget; the AxisRuns.

    It wires the stages (the whole config); each stage it calls receives its own options.
    """
    pairing, generation, inference, sequential = config.pairs, config.generation, config.inference, config.sequential
    assert sequential.max_pairs is not None and sequential.n_pairs is not None  # AuditConfig checks both
    if inference.score.binary_test == "score":  # the looks keep their own rate test: McNemar exact (by dialogue the mean test)
        inference = dataclasses.replace(inference, score=inference.score.updated({"binary_test": "exact"}))
    scoring = audit_score_options(inference.score, lexicons)  # each axis' margin and primary keys (checked by the caller)
    axes: list[_Axis] = []
    for lexicon in lexicons:
        reporter.start(f"{lexicon.axis}: pairs", unit="pairs")
        pool = nested_pairs(contexts, lexicon, pairing, sequential.max_pairs)
        reporter.finish()
        available = len(pool.ranked)
        if available < 2:
            raise too_few_pairs(lexicon.axis, pairing, available, pool.coverage)
        axes.append(_Axis(lexicon, pool, _planned_looks(lexicon.axis, sequential, pairing.corpus, available)))
    if inference.score.gold:  # the pairs every look may take: a gold file must label some, before any answer
        check_gold(inference.score.gold, pair_ids=(i for axis in axes for i in axis.pool.ranked.pair_ids()))
    failed = FailedBefore()  # a pair side that fails at one look stays a lost answer of the run: never asked again
    look = 0
    while any(axis.stopped is None for axis in axes):
        for axis in axes:
            if axis.stopped is None:
                pairs, coverage = axis.pool.look(axis.sizes[look])
                axis.works.append(
                    audit_axis(
                        axis.lexicon,
                        cached,
                        reporter,
                        pairing=pairing,
                        generation=generation,
                        inference=dataclasses.replace(inference, score=scoring[axis.lexicon.axis]),
                        contexts=None,
                        given=(pairs, coverage),
                        run_id=run_id,
                        extra_manifest=extra_manifest,
                        failed=failed,
                    )
                )
        _decide(axes, sequential, inference, look)
        look += 1
    works = [_final_work(axis, sequential) for axis in axes]
    pvalues = [[axis.sequential(row.tested.name) for row in work.scored.rows] for axis, work in zip(axes, works)]
    return finish_axes(works, inference, pvalues)


def _planned_looks(axis: str, sequential: SequentialOptions, corpus: str, available: int) -> tuple[int, ...]:
    """The pairs at each look of an axis whose corpus gives ``available`` pairs: the budget is the fewer of those and ``max_pairs``.

    ``looks`` that the budget so capped cannot hold (each look after the first adds a pair at the
    least) are refused, as AuditConfig refuses them against ``max_pairs``: never fewer looks than asked, silently.
    """
    assert sequential.max_pairs is not None and sequential.n_pairs is not None  # AuditConfig checks both
    first, k = min(sequential.n_pairs, available), sequential.looks
    if k is not None and k - 1 > available - first:
        room = available - sequential.n_pairs
        message = _MSG_LOOKS_CORPUS if room > 0 else _MSG_LOOKS_CORPUS_NO_ROOM
        raise SpecError(
            message.format(
                k=k,
                axis=axis,
                corpus=corpus,
                available=available,
                max=sequential.max_pairs,
                n=sequential.n_pairs,
                room=room,
                most=room + 1,
            )
        )
    return look_sizes(first, available, k)


def _decide(axes: Sequence[_Axis], sequential: SequentialOptions, inference: InferenceOptions, look: int) -> None:
    """Add this look's repeated p-values, correct the families, and stop each axis decided or out of looks."""
    for axis in axes:
        if axis.stopped is None:
            _add_repeated(axis, sequential, look)
    scored = [(axis.lexicon.axis, axis.works[-1].scored) for axis in axes]
    pvalues = [[axis.sequential(row.tested.name) for row in axis.works[-1].scored.rows] for axis in axes]
    adjusted, _, _ = correct_families(
        scored, correction=inference.score.correction, scope=inference.correction_scope, pvalues=pvalues
    )
    for axis, p_adjusted in zip(axes, adjusted):
        if axis.stopped is None:
            _stop_if_done(axis, p_adjusted, sequential.alpha, look)


def _add_repeated(axis: _Axis, sequential: SequentialOptions, look: int) -> None:
    """Append this look's repeated p-values (difference and equivalence) of each row of the axis's last work."""
    spending = sequential.spending
    fractions = axis.fractions[: look + 1]
    for row in axis.works[-1].scored.rows:
        if row.tested.p_paired is not None and row.varies:
            axis.repeated.setdefault(row.tested.name, []).append(repeated_p(row.tested.p_paired, fractions, spending=spending))
        if row.equivalence.p is not None:
            p_equivalence = repeated_p(row.equivalence.p, fractions, spending=spending, sides=1)
            axis.repeated_equivalence.setdefault(row.tested.name, []).append(p_equivalence)


def _stop_if_done(axis: _Axis, p_adjusted: Sequence[float | None], alpha: float, look: int) -> None:
    """Record the primary rows decided at this look; stop the axis when all are decided or its looks are spent."""
    undecided = 0
    for row, p in zip(axis.works[-1].scored.rows, p_adjusted):
        if row.tested.name not in axis.works[-1].scored.primary or row.tested.not_tested is not None:
            continue
        shown = axis.sequential(row.tested.name, equivalence=True)
        if (p is not None and p < alpha) or (shown is not None and shown < alpha):
            axis.decided_at.setdefault(row.tested.name, look + 1)
        else:
            undecided += 1
    if not undecided:
        axis.stopped = ALL_DECIDED
    elif look + 1 == len(axis.sizes):
        axis.stopped = BUDGET_SPENT


def _final_work(axis: _Axis, sequential: SequentialOptions) -> AxisWork:
    """The last look's work with sequential equivalence tests, a note per tested row, summed counts and the record."""
    last = axis.works[-1]
    n_looks = len(axis.works)
    alpha = sequential.alpha
    note = _NOTE.format(look=n_looks, planned=len(axis.sizes), n=axis.sizes[n_looks - 1])
    rows = []
    for row in last.scored.rows:
        p_equivalence = axis.sequential(row.tested.name, equivalence=True)
        if p_equivalence is None and axis.sequential(row.tested.name) is None:
            rows.append(row)
            continue
        old = row.equivalence
        equivalence = (
            old
            if p_equivalence is None
            else Equivalence(old.margin, p_equivalence, p_equivalence < alpha, f"{old.method}; group-sequential", old.note)
        )
        rows.append(dataclasses.replace(row.with_notes(note), equivalence=equivalence))
    scored: Scored = dataclasses.replace(last.scored, rows=tuple(rows))
    generation = last.generation
    n_generated = sum(work.generation.n_generated for work in axis.works)
    generation = dataclasses.replace(
        generation,
        n_generated=n_generated,
        n_cached=max(0, generation.n_items - generation.n_errors - n_generated),
        seconds=sum(work.generation.seconds for work in axis.works),
    )
    timings: dict[str, float] = {}
    for work in axis.works:
        for stage, seconds in work.timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
    audit = dataclasses.replace(last.audit, sequential=_record(axis, sequential))
    return dataclasses.replace(last, scored=scored, generation=generation, timings=timings, audit=audit)


def _record(axis: _Axis, sequential: SequentialOptions) -> SequentialProvenance:
    """What ``provenance.audit.sequential`` says: the design, the looks run, the last look's levels and why it stopped."""
    n_looks = len(axis.works)
    alpha, spending = sequential.alpha, sequential.spending
    two_sided = boundaries(axis.fractions, alpha=alpha, spending=spending)
    one_sided = boundaries(axis.fractions, alpha=alpha, spending=spending, sides=1)
    primary = {
        row.tested.name: row.varies
        for row in axis.works[-1].scored.rows
        if row.tested.name in axis.works[-1].scored.primary and row.tested.not_tested is None
    }
    undecided = tuple(name for name in primary if name not in axis.decided_at)
    return SequentialProvenance(
        design=_DESIGN.format(spending=_SPENDING_NAMES[spending]),
        spending=spending,
        correction=_CORRECTION.format(correction=sequential.correction),
        max_pairs=sequential.max_pairs,
        n_pairs_available=len(axis.pool.ranked),
        planned_looks=tuple(axis.sizes),
        fractions=tuple(round(t, 6) for t in axis.fractions),
        looks=n_looks,
        n_pairs=axis.sizes[n_looks - 1],
        z_boundaries=tuple(None if math.isinf(z) else z for z in two_sided.z[:n_looks]),
        nominal_alpha=two_sided.nominal[n_looks - 1],
        nominal_alpha_equivalence=one_sided.nominal[n_looks - 1],
        stopped=axis.stopped,
        decided_at=dict(axis.decided_at),
        undecided=undecided,
        undecided_why=_why_undecided(axis, sequential, primary, undecided),
    )


def _why_undecided(
    axis: _Axis, sequential: SequentialOptions, varies: Mapping[str, bool], undecided: Sequence[str]
) -> dict[str, str]:
    """Why each undecided key held the axis back, and what would decide it: more pairs, or, the corpus spent, a larger one.

    The corpus is spent when the last look took every pair the axis has and that is not because ``max_pairs`` cut the
    pairs short: the corpus gave fewer pairs than ``max_pairs`` (balanced ones, with ``balance``), or no more at all.
    """
    available, last = len(axis.pool.ranked), axis.sizes[len(axis.works) - 1]
    assert sequential.max_pairs is not None  # AuditConfig checks it
    spent = last >= available and (available < sequential.max_pairs or available >= axis.pool.coverage.n_pairs)
    advice = _CORPUS_SPENT if spent else _MORE_PAIRS
    return {
        name: (f"{_WHY_UNDECIDED} ({advice})" if spent else _WHY_UNDECIDED)
        if varies[name]
        else _WHY_IDENTICAL.format(advice=advice)
        for name in undecided
    }
