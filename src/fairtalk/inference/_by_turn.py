"""``audit(by_turn=True)``: each measure's gap by the number of turns since the identity appeared in the conversation.

How the buckets are built, and why
----------------------------------
A multi-turn pair is one conversation with its group words swapped (every turn, one
consistent choice). Its turns before the first turn that holds a group word are therefore the
same on both sides: the counterfactual differs only from that turn, ``k``, on. That is the
"identity introduced at turn k" design of FairMT-Bench and CoBia, and each pair *is* one
instance of it, with no text rewritten. A pair goes into the bucket
``turns_since = n_turns - 1 - k`` (turns of either speaker between the identity's first
appearance and the turn the model answers; 0: it appears in that last user turn). ``k`` is
read off the pair itself (the first turn whose text differs between the sides, role marks
aside), so it is the turn the *model* first sees the identity in: with ``--turns N`` a window
that starts after the dialogue's first mention counts from the first mention it shows.

Bucketing by the *first* differing turn, not the last: the question is how the gap evolves
once the identity is in the conversation, and later turns that name it again are part of
that conversation (they are the same on neither side from ``k`` on, in any case). Bucketing
by the last mention would mix "named long ago, repeated now" with "named just now".

What the buckets are not: a randomised assignment of distances. Two buckets hold different
contexts (a distance of 3 needs at least 4 turns; the first mention sits at different points
of different talks), so a difference *between* buckets may come from what falls in them as well
as from the distance. Within a bucket each pair is still a clean counterfactual, so each
bucket's gap is the model's bias on conversations whose identity appeared that many turns
ago. With the sliding windows of ``builtin:chitchat --turns N`` one mention is seen at several
distances in successive windows of one dialogue, which keeps the content of neighbouring
buckets alike; the same dialogue then sits in several buckets, so their estimates are
correlated (and overlapping intervals are a conservative reading of a change).

Statistics: in each bucket each key gets the audit's own test for its kind
(:func:`~fairtalk.inference._measure_tests.compare_scored`; corpus keys the paired
permutation), its interval and equivalence, on the bucket's pairs, clustered by dialogue as
the audit is (``clusters``), with the audit's seed. A bucket with fewer than
:data:`MIN_BUCKET_UNITS` units (dialogues with clusters, else pairs) is counted and its side
means shown, but it is not tested: a CR2 interval from a handful of dialogues under-covers
(``docs/statistics.md``) and would look precise. The tested cells whose scores vary form the
by-turn family, corrected with the audit's correction apart from the audit's own family, whose
verdicts this leaves as they were.

No response is scored again here: the by-turn tests read the scores the audit computed
(:attr:`~fairtalk.inference._family.Scored.scores`, one float array per side of each
per-response key, from this process or from Ray; a judge's from its answers), and the corpus
keys the audit's corpus measures (:attr:`~fairtalk.inference._family.Scored.corpus_measures`),
whose statistic is cheap to evaluate again on a bucket's responses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from fairtalk._responses import ResponseSet
from fairtalk.config import ScoreOptions
from fairtalk.errors import InputError
from fairtalk.inference._family import KeyScores, Scored
from fairtalk.inference._measure_tests import Inference, KeyTest, compare_scored, corpus_rows
from fairtalk.measures import CorpusMeasure
from fairtalk.records import Pair, split_turns
from fairtalk.results import ByTurnResult, TurnBucket, TurnGap, Verdict
from fairtalk.stats import adjust_pvalues, verdict

__all__ = ["MIN_BUCKET_UNITS", "by_turn", "check_multi_turn", "identity_turn"]

#: The fewest units (dialogues with clusters, else pairs) a bucket needs to be tested.
MIN_BUCKET_UNITS = 20
_MSG_SINGLE_TURN = (
    "axis {axis}: by_turn (--by-turn) reports the gap by the turns since the identity appeared, and needs "
    "conversations, but all {n} pair(s) have one turn: give builtin:chitchat --turns N with N >= 2, or a JSONL "
    'corpus of conversations ("messages")'
)
_NOT_TESTED = "not tested: {n} {units} (at least {least} are needed for an interval that holds)"
_NOTES = (
    "turns since the identity appeared = the turns (either speaker) after the first turn that differs between the "
    "sides, up to the turn the model answers (0: the identity appears in it); turns before it are the same on both sides",
    "the buckets hold different contexts: compare buckets with care (each bucket's gap is a clean counterfactual, "
    "a difference between buckets may also come from which conversations fall in them)",
    "p (adj.) corrects the tested cells of this table together (apart from the audit's own family)",
)


def identity_turn(a: str, b: str) -> tuple[int, int]:
    """``(k, n_turns)``: the first turn where the two sides of a pair differ, and the number of turns of side A.

    ``k == n_turns`` when the sides are the same in every turn (no pair is built so).

    Examples
    --------
    >>> from fairtalk.records import join_turns
    >>> identity_turn(join_turns(["hi", "my son is ill", "oh no"]), join_turns(["hi", "my daughter is ill", "oh no"]))
    (1, 3)
    """
    turns_a, turns_b = split_turns(a), split_turns(b)
    for k, (x, y) in enumerate(zip(turns_a, turns_b)):
        if x != y:
            return k, len(turns_a)
    return min(len(turns_a), len(turns_b)), len(turns_a)


def check_multi_turn(pairs: Sequence[Pair], axis: str) -> None:
    """InputError, before any answer is asked for, when no pair is a conversation of two turns or more."""
    if not any(len(split_turns(p.a)) > 1 or len(split_turns(p.b)) > 1 for p in pairs):
        raise InputError(_MSG_SINGLE_TURN.format(axis=axis, n=len(pairs)))


@dataclass(frozen=True, slots=True)
class _Bucket:
    """The pairs of one distance: their indices into the response set, and their clusters (None: pairs are units)."""

    turns_since: int
    index: np.ndarray
    clusters: tuple[str, ...] | None

    @property
    def n_units(self) -> int:
        return self.index.size if self.clusters is None else len(set(self.clusters))


def _buckets(rs: ResponseSet, clusters: tuple[str, ...] | None) -> tuple[list[_Bucket], int]:
    """The response set's pairs by turns since the identity appeared (in order), and how many had one turn."""
    distance = np.empty(rs.n_pairs, dtype=np.int64)
    n_single = 0
    for i, (ra, rb) in enumerate(zip(rs.a, rs.b)):
        k, n_turns = identity_turn(ra.context, rb.context)
        distance[i] = max(0, n_turns - 1 - k)
        n_single += n_turns == 1
    out = []
    for value in np.unique(distance):
        index = np.flatnonzero(distance == value)
        out.append(_Bucket(int(value), index, None if clusters is None else tuple(clusters[i] for i in index)))
    return out, n_single


def _index(texts_a: Sequence[str], texts_b: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct texts of both sides, and each pair's index into them per side."""
    position: dict[str, int] = {}
    ia = np.array([position.setdefault(t, len(position)) for t in texts_a], dtype=np.int64)
    ib = np.array([position.setdefault(t, len(position)) for t in texts_b], dtype=np.int64)
    return list(position), ia, ib


def _corpus_rows(
    measure: CorpusMeasure, rs: ResponseSet, bucket: _Bucket, opts: Inference, seed: int, n_resamples: int
) -> list[KeyTest]:
    """The corpus keys of one tested bucket: the statistic on each side's responses, by paired permutation."""
    uniques, ia, ib = _index([rs.a[i].response for i in bucket.index], [rs.b[i].response for i in bucket.index])
    return corpus_rows(measure, uniques, ia, ib, opts, seed=seed, n_resamples=n_resamples)


def _untested(key: str, scored: KeyScores | CorpusMeasure, rs: ResponseSet, bucket: _Bucket) -> TurnGap:
    """A key of a bucket too small to test: its side means (corpus: its statistic) and their difference, nothing more."""
    if isinstance(scored, CorpusMeasure):
        uniques, ia, ib = _index([rs.a[i].response for i in bucket.index], [rs.b[i].response for i in bucket.index])
        stat = scored.prepare(uniques)
        a = float(stat(np.bincount(ia, minlength=len(uniques)))[key])
        b = float(stat(np.bincount(ib, minlength=len(uniques)))[key])
        kind = "corpus"
    else:
        sa, sb = scored.a[bucket.index], scored.b[bucket.index]
        both = np.isfinite(sa) & np.isfinite(sb)
        a, b = (float(s[both].mean()) if both.any() else float("nan") for s in (sa, sb))
        kind = scored.meta.kind
    estimate = a - b if np.isfinite(a) and np.isfinite(b) else None
    return TurnGap(
        key=key, kind=kind, a=a, b=b, estimate=estimate, ci95=(None, None), p=None, p_adjusted=None, paired_test="", ci_method=""
    )


def by_turn(scored: Scored, options: ScoreOptions, *, min_units: int = MIN_BUCKET_UNITS) -> ByTurnResult:
    """Each primary key's gap by the turns since the identity appeared, tested per bucket as the audit tests (see module).

    ``scored`` is the axis as the audit scored it (its responses after ``drop_empty`` and
    ``exclude_truncated``, its primary keys, each per-response key's scores and the corpus
    measures); ``options`` the audit's scoring options. No response is scored again: a judge's
    answers, as every per-response score, come with ``scored``.
    """
    o = options
    rs = scored.responses
    clusters = rs.clusters if o.clusters else None
    opts = Inference.of(o, clusters)
    buckets, n_single = _buckets(rs, clusters)
    cells = _cells(scored, rs, buckets, opts, min_units)
    keys = tuple(dict.fromkeys(key for _, row in cells for key in ([row.key] if isinstance(row, TurnGap) else [row.tested.name])))
    family = {
        i: row.tested.p_paired
        for i, (_, row) in enumerate(cells)
        if isinstance(row, KeyTest) and row.tested.p_paired is not None and row.varies
    }
    adjusted: dict[int, float] = {}
    if family:
        adjusted = {i: float(v) for i, v in zip(family, adjust_pvalues(list(family.values()), method=o.correction))}
    out: list[TurnBucket] = []
    for bucket in buckets:
        gaps = []
        for i, (turns_since, row) in enumerate(cells):
            if turns_since != bucket.turns_since:
                continue
            if isinstance(row, TurnGap):
                gaps.append(row)
                continue
            p_adjusted = adjusted.get(i)
            key = row.tested
            gaps.append(
                TurnGap(
                    key=key.name,
                    kind=key.kind,
                    a=key.a,
                    b=key.b,
                    estimate=key.estimate,
                    ci95=key.ci95,
                    p=key.p_paired,
                    p_adjusted=p_adjusted,
                    paired_test=key.paired_test,
                    ci_method=key.ci_method,
                    verdict=Verdict(verdict(p_adjusted, o.alpha, row.equivalence)),
                    notes=key.notes,
                )
            )
        units = "dialogues" if bucket.clusters is not None else "pairs"
        reason = None if bucket.n_units >= min_units else _NOT_TESTED.format(n=bucket.n_units, units=units, least=min_units)
        out.append(
            TurnBucket(
                turns_since=bucket.turns_since,
                n_pairs=int(bucket.index.size),
                n_clusters=None if bucket.clusters is None else bucket.n_units,
                gaps=tuple(gaps),
                not_tested=reason,
            )
        )
    return ByTurnResult(
        keys=keys,
        buckets=tuple(out),
        min_units=min_units,
        alpha=o.alpha,
        correction=o.correction,
        family_size=len(family),
        clustered=clusters is not None,
        n_single_turn=n_single,
        notes=_NOTES,
    )


def _cells(
    scored: Scored, rs: ResponseSet, buckets: Sequence[_Bucket], opts: Inference, min_units: int
) -> list[tuple[int, KeyTest | TurnGap]]:
    """Every (bucket, primary key): a KeyTest where the bucket is tested, else the untested gap; keys in the audit's order.

    A per-response key's tests read the audit's scores (``scored.scores``), a corpus key's
    statistic is the audit's corpus measure's on the bucket's responses.
    """
    order = [row.tested.name for row in scored.rows if row.tested.name in scored.primary]
    owner: dict[str, KeyScores | CorpusMeasure] = dict(scored.scores)
    for measure in scored.corpus_measures:
        owner.update(dict.fromkeys(measure.keys, measure))
    keys = [key for key in order if key in owner]
    cells: list[tuple[int, KeyTest | TurnGap]] = []
    for bucket in buckets:
        tested = bucket.n_units >= min_units
        sub = replace(opts, clusters=bucket.clusters)
        corpus_done: dict[str, KeyTest] = {}
        for key in keys:
            found = owner[key]
            if not tested:
                cells.append((bucket.turns_since, _untested(key, found, rs, bucket)))
            elif isinstance(found, CorpusMeasure):
                if key not in corpus_done:
                    corpus_done.update(
                        {row.tested.name: row for row in _corpus_rows(found, rs, bucket, sub, opts.seed, opts.n_resamples)}
                    )
                cells.append((bucket.turns_since, corpus_done[key]))
            else:
                sa, sb = found.a[bucket.index], found.b[bucket.index]
                cells.append((bucket.turns_since, compare_scored(key, found.meta, sa, sb, sub)))
    return cells
