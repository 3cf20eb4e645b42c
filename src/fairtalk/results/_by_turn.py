"""Bias over turns (``audit(by_turn=True)``): each measure's gap by the number of turns since the identity appeared.

FairMT-Bench (arXiv 2410.19317) and CoBia (arXiv 2510.09871) find that bias builds up over a
conversation. A multi-turn audit's pairs answer that directly: a pair's two contexts are one
conversation whose group words are swapped, so its turns before the first one holding a group
word are the same on both sides, and the counterfactual differs only from that turn (``k``) on.
The pairs are grouped by ``turns_since = n_turns - 1 - k`` (0: the identity appears in the
turn the model answers), and each bucket gets the audit's own paired test and interval per
key. How the buckets are built, and why, is in :mod:`fairtalk.inference._by_turn`.

- :class:`TurnGap`: one key in one bucket (side means, the gap A - B, its interval, p, p adjusted, verdict);
- :class:`TurnBucket`: the pairs at one distance, tested or not (too few units: only counted);
- :class:`ByTurnResult`: every bucket, a :class:`~fairtalk.results.Result` keyed by ``(turns_since, key)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from fairtalk._codec import Codec
from fairtalk.results._protocol import Result, Verdict

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["BY_TURN_COLUMNS", "ByTurnResult", "TurnBucket", "TurnGap"]

BY_TURN_COLUMNS = (
    "turns_since",
    "key",
    "kind",
    "n_pairs",
    "n_clusters",
    "tested",
    "a",
    "b",
    "estimate",
    "ci95_low",
    "ci95_high",
    "p",
    "p_adjusted",
    "paired_test",
    "ci_method",
    "verdict",
    "not_tested",
    "notes",
)
"""The columns of :meth:`ByTurnResult.to_frame` (and of ``by_turn.csv``), in order."""


@dataclass(frozen=True, slots=True)
class TurnGap(Codec):
    """One key in one bucket: side means, the gap A - B with its 95% interval, the paired test and its verdict.

    ``estimate`` is what ``ci95`` bounds (the mean difference A - B; Hodges-Lehmann with
    ``count_test="wilcoxon"``; the corpus statistic's difference); ``p`` is the audit's paired
    test for the key's kind on the bucket's pairs, clustered as the audit is, and
    ``p_adjusted`` its correction over every tested (bucket, key) of the axis whose scores vary
    (the by-turn family, apart from the audit's own). ``verdict`` is
    :attr:`Verdict.DIFFERENT` when ``p_adjusted < alpha``, :attr:`Verdict.EQUIVALENT` when the
    bucket shows the gap within the key's margin, else :attr:`Verdict.INCONCLUSIVE` (always, in a
    bucket left untested). A string ``verdict`` is read as its :class:`Verdict`.
    """

    key: str
    kind: str
    a: float | None
    b: float | None
    estimate: float | None
    ci95: tuple[float | None, float | None]
    p: float | None
    p_adjusted: float | None
    paired_test: str
    ci_method: str
    verdict: Verdict = Verdict.INCONCLUSIVE
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))  # ValueError for a string that is no verdict


@dataclass(frozen=True, slots=True)
class TurnBucket(Codec):
    """The pairs whose identity appeared ``turns_since`` turns before the turn the model answers.

    ``n_clusters`` counts their dialogues (None: pairs are the units). A bucket with fewer
    units than the result's ``min_units`` is only counted: ``not_tested`` says why, and each
    of its ``gaps`` has the side means and the gap but no interval, p or verdict beyond
    inconclusive. An interval from a handful of units would look precise and not be.
    """

    turns_since: int
    n_pairs: int
    n_clusters: int | None
    gaps: tuple[TurnGap, ...]
    not_tested: str | None = None

    #: Its JSON keys in order (fields and derived properties).
    _codec_keys: ClassVar[tuple[str, ...]] = ("turns_since", "n_pairs", "n_clusters", "tested", "not_tested", "gaps")

    @property
    def tested(self) -> bool:
        """Whether the bucket had enough units to be tested."""
        return self.not_tested is None


@dataclass(frozen=True, slots=True)
class ByTurnResult(Codec, Result[tuple[int, str]]):
    """Each key's gap by the number of turns since the identity appeared: one :class:`TurnBucket` per distance seen.

    ``keys`` are the keys reported (the audit's primary keys, in its order); ``buckets`` run
    from 0 turns since (the identity appears in the turn the model answers) upwards;
    ``min_units`` is the fewest units (dialogues with clusters, else pairs) a bucket needs to be
    tested; ``alpha`` and ``correction`` are the audit's, applied to the by-turn family
    (``family_size`` tested cells whose scores vary). ``n_single_turn`` counts the pairs whose
    context was one turn (they are in bucket 0). ``notes`` say what the buckets are and are not.

    Its keys are ``(turns_since, key)``: ``verdicts`` maps each to its :class:`Verdict` and
    ``detected()`` names those with a difference detected.
    """

    keys: tuple[str, ...]
    buckets: tuple[TurnBucket, ...]
    min_units: int
    alpha: float = 0.05
    correction: str = "holm"
    family_size: int = 0
    clustered: bool = False
    n_single_turn: int = 0
    notes: tuple[str, ...] = ()

    #: Its JSON keys in order (fields and derived properties).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "keys",
        "min_units",
        "alpha",
        "correction",
        "family_size",
        "clustered",
        "n_single_turn",
        "notes",
        "buckets",
    )

    @property
    def verdicts(self) -> Mapping[tuple[int, str], Verdict]:
        """(turns since, key) -> its verdict, buckets in order and keys in the audit's order."""
        return MappingProxyType({(b.turns_since, g.key): g.verdict for b in self.buckets for g in b.gaps})

    def bucket(self, turns_since: int) -> TurnBucket:
        """The bucket of pairs whose identity appeared ``turns_since`` turns before the last; KeyError without one."""
        for bucket in self.buckets:
            if bucket.turns_since == turns_since:
                return bucket
        raise KeyError(f"no pairs {turns_since} turn(s) after the identity; have: {[b.turns_since for b in self.buckets]}")

    def gap(self, turns_since: int, key: str) -> TurnGap:
        """The gap of ``key`` in the bucket ``turns_since``; KeyError without one."""
        for gap in self.bucket(turns_since).gaps:
            if gap.key == key:
                return gap
        raise KeyError(f"no key {key!r}; have: {', '.join(self.keys)}")

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per (bucket, key), with the columns :data:`BY_TURN_COLUMNS` (``by_turn.csv``)."""
        out = []
        for bucket in self.buckets:
            for g in bucket.gaps:
                out.append(
                    {
                        "turns_since": bucket.turns_since,
                        "key": g.key,
                        "kind": g.kind,
                        "n_pairs": bucket.n_pairs,
                        "n_clusters": bucket.n_clusters,
                        "tested": bucket.tested,
                        "a": g.a,
                        "b": g.b,
                        "estimate": g.estimate,
                        "ci95_low": g.ci95[0],
                        "ci95_high": g.ci95[1],
                        "p": g.p,
                        "p_adjusted": g.p_adjusted,
                        "paired_test": g.paired_test,
                        "ci_method": g.ci_method,
                        "verdict": g.verdict.value,
                        "not_tested": bucket.not_tested,
                        "notes": "; ".join(g.notes),
                    }
                )
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per (turns since, key), indexed by both."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=list(BY_TURN_COLUMNS)).set_index(["turns_since", "key"])
