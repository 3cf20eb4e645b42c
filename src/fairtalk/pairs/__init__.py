"""Parallel context pairs: contexts x Swapper -> pairs (side a: group-A wording, side b: group-B).

:func:`build_pairs` streams contexts through a :class:`~fairtalk.counterfactual.Swapper` and keeps
those that mention the axis' groups. Each pair puts the group-A wording on side ``a`` and the
group-B wording on side ``b``, whichever the original was; ``original_side`` records which.

Rules
-----
* **Mixed contexts** mention both groups. ``mixed="drop"`` (default) drops and counts them;
  ``mixed="keep"`` swaps them anyway, with ``original_side`` the side with more mentions (a tie
  goes to ``"a"``), so for these side ``a`` only mostly holds the group-A wording.
* **Counts** (:class:`~fairtalk.records.Coverage`) add up: every matched context is a unique
  pair of one original side, a duplicate, or (``mixed="drop"``) a dropped mixed context, so
  ``n_matched == sum(n_by_group.values()) + n_duplicates + (n_mixed if mixed == "drop" else 0)``.
  Under ``mixed="keep"``, ``n_mixed`` counts the unique mixed pairs kept, which ``n_by_group``
  holds on their majority side (a repeated mixed context is a duplicate only).
* **Duplicates**: a pair whose sides, lowercased and with whitespace collapsed, equal those of an
  earlier pair is dropped and counted. This catches repeated contexts and also a context whose
  counterfactual twin came earlier ("how is he?" after "how is she?"). Only an 8-byte hash per
  pair is kept in memory.
* **Ids** are ``f"{axis}-{hash}"``, the hex of that 8-byte hash: stable across runs and unique
  within a pair set by construction.
* **limit**: a uniform random sample of ``limit`` pairs (reservoir sampling, Algorithm L, seeded;
  O(limit) memory, the sample held as columns: :class:`PairColumn`). It reads the whole corpus, and
  yields the sample in corpus order.
* **balance**: as many pairs from group-A originals as from group-B originals (a seeded sample of
  each side: ``limit // 2`` each, or the smaller side's count without ``limit``), so that one
  side's wording does not dominate. On the race axis 99.1% of the chitchat pairs have a Standard
  English original; ``balance=True`` draws equally from both dialects' originals. It holds the
  unique pairs in memory (as columns).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Literal, Protocol, TypeVar

import numpy as np

from fairtalk._pairs_jsonl import read_pairs, write_pairs
from fairtalk.corpora import Corpus
from fairtalk.counterfactual import Swapper
from fairtalk.errors import SpecError
from fairtalk.lexicons import Lexicon
from fairtalk.pairs._check import PairsChecker, as_swapper, check_pairs
from fairtalk.pairs._column import PairColumn, PairColumns
from fairtalk.records import Context, Coverage, Pair, PairsCheck, Side, Swap

__all__ = [
    "Coverage",
    "PairColumn",
    "PairColumns",
    "PairSet",
    "PairsCheck",
    "PairsChecker",
    "build_pairs",
    "check_pairs",
    "read_pairs",
    "write_pairs",
]

MIXED_POLICIES = ("drop", "keep")
#: How many swapped terms :attr:`Coverage.top_terms` lists.
N_TOP_TERMS = 10

#: Distinct swap records held once and shared by the pairs that make the same swaps (beyond it, each pair keeps its own).
_MAX_SHARED_SWAPS = 1 << 16
#: The reservoir's array of input positions starts this long and doubles up to the sample's size.
_RESERVOIR_CHUNK = 1 << 16
_T = TypeVar("_T")
_T_contra = TypeVar("_T_contra", contravariant=True)
_MSG_BAD_MIXED = "unknown mixed-context policy {given!r}"
_MSG_BAD_LIMIT = "limit must be a positive int or None, got {value!r}"
_MSG_BAD_SEED = "seed must be an integer >= 0, got {value!r}"
_MSG_BAD_BALANCE = "balance must be True or False, got {value!r}"
#: A lone string is an iterable of its characters: read as contexts, each would be one character long.
_MSG_CONTEXTS_TYPE = (
    "build_pairs: contexts must be a list of texts or Contexts, or a corpus (fairtalk.read_corpus(spec) for a file or a "
    "corpus spec), got {type}"
)


class _Counts:
    """Mutable counters for one pass of a :class:`PairSet`."""

    def __init__(self) -> None:
        self.n_read = self.n_matched = self.n_mixed = self.n_duplicates = self.n_pairs = 0
        self.by_side: Counter[str] = Counter()
        self.terms: Counter[str] = Counter()
        self.dialogues: Counter[str] = Counter()  # unique pairs per named dialogue
        self.alone = 0  # unique pairs whose context names no dialogue: a unit each, where others name one


class PairSet:
    """Iterable of :class:`~fairtalk.records.Pair`; :attr:`coverage` describes the latest pass.

    Re-iterable when its contexts are (a :class:`~fairtalk.corpora.Corpus` is).
    """

    def __init__(
        self,
        contexts: Iterable[Context | str],
        swapper: Swapper,
        *,
        mixed: str,
        limit: int | None,
        seed: int,
        balance: bool = False,
    ) -> None:
        self._contexts = contexts
        self.swapper = swapper
        self.axis = swapper.lexicon.axis
        self.mixed = mixed
        self.limit = limit
        self.seed = seed
        self.balance = balance
        self._counts = _Counts()

    def __iter__(self) -> Iterator[Pair]:
        """Stream the pairs (under ``limit``: after reading everything, in corpus order)."""
        self._counts = counts = _Counts()
        unique = self._unique_pairs(counts)
        if self.balance:
            return self._count_out(_balanced(unique, self.limit, self.seed, self.axis), counts)
        if self.limit is None:
            return self._count_out(unique, counts)
        return self._count_out(_sample(unique, self.limit, self.seed, self.axis), counts)

    def column(self) -> PairColumn:
        """One pass held as a :class:`PairColumn` (the pairs that iterating yields, in that order; no record per pair).

        Under ``limit`` the reservoir itself holds its sample as columns; with ``balance``, the
        unique pairs are held as columns before the draw.
        """
        self._counts = counts = _Counts()
        unique = self._unique_pairs(counts)
        columns = PairColumns(self.axis)
        if self.limit is None or self.balance:
            for pair in unique:
                columns.append(pair)
            if self.balance:
                columns = columns.take(_balanced_order(columns.sides, self.limit, self.seed))
        else:
            columns = columns.take(_reservoir(unique, self.limit, self.seed, columns))
        counts.n_pairs = len(columns)
        return columns.column()

    @property
    def coverage(self) -> Coverage:
        """Counts of the current (or latest) pass."""
        c = self._counts
        groups = self.swapper.lexicon.groups
        summary = self._contexts.summary if isinstance(self._contexts, Corpus) else None  # a corpus counts what it skipped
        return Coverage(
            axis=self.axis,
            groups=groups,
            n_read=c.n_read,
            n_matched=c.n_matched,
            n_by_group={groups[0]: c.by_side["a"], groups[1]: c.by_side["b"]},
            n_mixed=c.n_mixed,
            n_duplicates=c.n_duplicates,
            n_pairs=c.n_pairs,
            top_terms=tuple(sorted(c.terms.items(), key=lambda kv: (-kv[1], kv[0]))[:N_TOP_TERMS]),
            skipped=summary.skipped if summary else (),
            skipped_first=summary.first_location if summary else (),
            mixed=self.mixed,
            limit=self.limit,
            balance=self.balance,
            dialogue_sizes=_dialogue_sizes(c),
            limit_given=None if self.limit is None else True,  # asked for by the caller (an audit says when not)
        )

    def _count_out(self, pairs: Iterator[Pair], counts: _Counts) -> Iterator[Pair]:
        for pair in pairs:
            counts.n_pairs += 1
            yield pair

    def _unique_pairs(self, counts: _Counts) -> Iterator[Pair]:
        """Every unique, kept pair in corpus order, counting as it goes."""
        swap = self.swapper.swap
        keep_mixed = self.mixed == "keep"
        seen: set[bytes] = set()
        shared: dict[tuple[Swap, ...], tuple[Swap, ...]] = {}  # equal swap records, held once (a million pairs repeat few)
        for index, context in enumerate(self._contexts):
            if isinstance(context, str):
                context = Context(id=str(index), text=context)
            counts.n_read += 1
            result = swap(context.text)
            if not result.swaps:
                continue
            counts.n_matched += 1
            n_b = sum(s.source_side == "b" for s in result.swaps)
            n_a = len(result.swaps) - n_b
            if n_a and n_b and not keep_mixed:  # dropped before de-duplication: counted as mixed only
                counts.n_mixed += 1
                continue
            side: Side = "a" if n_a >= n_b else "b"
            a, b = (context.text, result.text) if side == "a" else (result.text, context.text)
            key = _pair_key(a, b)
            if key in seen:
                counts.n_duplicates += 1
                continue
            seen.add(key)
            counts.by_side[side] += 1  # a kept mixed pair too, on its majority side; n_mixed counts it among these
            counts.n_mixed += bool(n_a and n_b)
            if context.cluster is not None:
                counts.dialogues[context.cluster] += 1
            else:
                counts.alone += 1
            counts.terms.update(f"{s.source.lower()}→{s.target.lower()}" for s in result.swaps)
            swaps = shared.setdefault(result.swaps, result.swaps) if len(shared) < _MAX_SHARED_SWAPS else result.swaps
            yield Pair(
                id=f"{self.axis}-{key.hex()}",
                axis=self.axis,
                a=a,
                b=b,
                original_side=side,
                swaps=swaps,
                origin=context.origin,
                cluster=context.cluster,
            )


def _dialogue_sizes(counts: _Counts) -> tuple[tuple[int, int], ...]:
    """The unique pairs' dialogues by size; a pair that names none is a dialogue of its own (as the statistics count it)."""
    if not counts.dialogues:
        return ()
    sizes = Counter(counts.dialogues.values())
    sizes[1] += counts.alone
    return tuple(sorted((m, n) for m, n in sizes.items() if n))


def _pair_key(a: str, b: str) -> bytes:
    """8-byte hash of both sides, lowercased with whitespace collapsed."""
    text = " ".join(a.lower().split()) + "\x1f" + " ".join(b.lower().split())
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()


class _Slots(Protocol[_T_contra]):
    """Where a reservoir keeps its sample: a list, or the columns of pairs (:class:`PairColumns`)."""

    def __len__(self) -> int: ...
    def append(self, item: _T_contra, /) -> None: ...
    def __setitem__(self, index: int, item: _T_contra, /) -> None: ...


def _reservoir(items: Iterator[_T], k: int, seed: int, into: _Slots[_T]) -> list[int]:
    """A uniform sample of ``k`` items (reservoir Algorithm L) put in ``into``'s slots; the slots in input order."""
    rng = np.random.default_rng(seed)

    def uniform() -> float:  # in (0, 1]
        return 1.0 - float(rng.random())

    def skip(w: float) -> int:
        return 0 if w >= 1.0 else math.floor(math.log(uniform()) / math.log1p(-w))

    positions = np.zeros(min(k, _RESERVOIR_CHUNK), dtype=np.int64)  # each slot's input position, in a compact array
    w = math.exp(math.log(uniform()) / k)
    next_index = k + skip(w)
    for index, item in enumerate(items):
        if index < k:
            if index == len(positions):
                positions = np.resize(positions, min(k, 2 * len(positions)))
            into.append(item)
            positions[index] = index
        elif index == next_index:
            slot = int(rng.integers(k))
            into[slot], positions[slot] = item, index
            w *= math.exp(math.log(uniform()) / k)
            next_index = index + 1 + skip(w)
    order: list[int] = np.argsort(positions[: len(into)], kind="stable").tolist()
    return order


def _sample(pairs: Iterator[Pair], k: int, seed: int, axis: str) -> Iterator[Pair]:
    """A uniform sample of ``k`` pairs (reservoir Algorithm L, held as columns), yielded in input order."""
    columns = PairColumns(axis)
    yield from columns.take(_reservoir(pairs, k, seed, columns)).column()


def _balanced(pairs: Iterator[Pair], limit: int | None, seed: int, axis: str) -> Iterator[Pair]:
    """As many pairs from each original side: ``limit // 2`` each (or the smaller side's count), in input order.

    The unique pairs are held as columns until the draw.
    """
    columns = PairColumns(axis)
    for pair in pairs:
        columns.append(pair)
    yield from columns.take(_balanced_order(columns.sides, limit, seed)).column()


def _balanced_order(sides: bytes | bytearray, limit: int | None, seed: int) -> list[int]:
    """The positions :func:`_balanced` keeps, in input order, from each pair's original side (0: a, 1: b)."""
    side_of = np.frombuffer(bytes(sides), dtype=np.uint8)
    by_side = [np.flatnonzero(side_of == side) for side in (0, 1)]
    k = min(len(by_side[0]), len(by_side[1]))
    if limit is not None:
        k = min(k, limit // 2)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for positions in by_side:
        picks = rng.choice(len(positions), size=k, replace=False) if k else np.zeros(0, dtype=np.int64)
        chosen += positions[picks].tolist()
    return sorted(chosen)


def build_pairs(
    contexts: Iterable[Context | str],
    swapper: Swapper | Lexicon,
    *,
    mixed: Literal["drop", "keep"] = "drop",
    limit: int | None = None,
    seed: int = 0,
    balance: bool = False,
) -> PairSet:
    """Turn contexts into parallel context pairs for the swapper's axis.

    Parameters
    ----------
    contexts : iterable of Context (or str)
        Typically a :class:`~fairtalk.corpora.Corpus`; its read summary feeds ``Coverage.skipped``.
    swapper : Swapper or Lexicon
        Built from the axis lexicon (a Lexicon gets a Swapper with seed 0).
    mixed : {"drop", "keep"}
        What to do with contexts that mention both groups (see the module docstring).
    limit : int, optional
        Keep a seeded uniform sample of this many pairs; reads the whole corpus.
    seed : int
        Seeds the sample (the swapper has its own seed for many-to-many choices).
    balance : bool
        Draw as many pairs from group-A originals as from group-B originals (see the module docstring).

    Returns
    -------
    PairSet
        Lazy and re-iterable (when ``contexts`` is); ``.coverage`` after a pass.

    Examples
    --------
    >>> from fairtalk.lexicons import load_lexicon
    >>> pairs = build_pairs(["she is a nurse", "the sky"], Swapper(load_lexicon("gender")))
    >>> [(p.a, p.b, p.original_side) for p in pairs]
    [('he is a nurse', 'she is a nurse', 'b')]
    >>> pairs.coverage.n_read, pairs.coverage.n_by_group["female"]
    (2, 1)
    """
    if isinstance(contexts, str | bytes) or not isinstance(contexts, Iterable):
        raise SpecError(_MSG_CONTEXTS_TYPE.format(type=type(contexts).__name__))
    swapper = as_swapper(swapper, "build_pairs")
    if mixed not in MIXED_POLICIES:
        raise SpecError(_MSG_BAD_MIXED.format(given=mixed), choices=MIXED_POLICIES, given=str(mixed))
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise SpecError(_MSG_BAD_LIMIT.format(value=limit))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SpecError(_MSG_BAD_SEED.format(value=seed))
    if not isinstance(balance, bool):
        raise SpecError(_MSG_BAD_BALANCE.format(value=balance))
    return PairSet(contexts, swapper, mixed=mixed, limit=limit, seed=seed, balance=balance)
