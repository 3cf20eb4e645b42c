"""Reading and writing model responses to parallel context pairs: JSONL records or two aligned text files.

A record may carry a ``cluster`` (the dialogue its pair came from); :attr:`ResponseSet.clusters`
collects them for the cluster-robust statistics.

A side the model failed on is a record of its own, ``"response": null`` with an ``"error"``
(``"<kind>: <message>"``): its pair is left out and counted as lost on that side
(``n_lost_a_only``, ``n_lost_b_only``, ``n_lost_both``), with ``n_errors`` (the failed sides) and
``n_pairs_with_errors``, as generation counted it; so the gates see the same losses when a file
is scored again. :attr:`ResponseSet.left_out` holds the records of the pairs left out, which
:func:`write_responses` writes after the complete pairs.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any, cast, overload

import numpy as np

from fairtalk._columns import RecordColumn
from fairtalk._jsonl import first_record, numbered_lines, open_input, parse_object, write_records
from fairtalk.errors import InputError, check_output_argument
from fairtalk.files import atomic_writer
from fairtalk.records import Response, Side

__all__ = [
    "ResponseColumn",
    "ResponseSet",
    "aligned_responses",
    "check_axis",
    "empty_tally",
    "failed_response",
    "is_failure",
    "is_responses_file",
    "loss_tally",
    "prompt_cuts",
    "read_responses",
    "response_contexts",
    "response_texts",
    "responses_from_texts",
    "write_responses",
]

_MSG_TEXTS_NOT_LISTS = "give the two sides' responses as two lists of strings, not strings"
_MSG_TEXTS_LENGTHS = "the two sides must have one response per pair: got {n_a} and {n_b}"
_MSG_TEXTS_TYPE = "side {side}'s response #{index} is a {type}, not a string"
_MSG_MISSING_FIELD = "missing field {field!r} (need pair_id, side, response)"
_MSG_BAD_PAIR_ID = "field 'pair_id' must be a non-empty string or an integer, got {value!r}"
_MSG_BAD_SIDE = 'field \'side\' must be "a" or "b", got {value!r}'
_MSG_NOT_STRING = "field {field!r} must be a string, got {type}"
_MSG_NULL_RESPONSE = "field 'response' is null without an 'error' (a failed side says why: \"error\": \"<kind>: <message>\")"
_MSG_BAD_ERROR = (
    "field 'response' is null and its 'error' is {given}, not a non-empty string saying why the side failed "
    '("error": "<kind>: <message>")'
)
_MSG_BAD_AXIS = (
    "field 'axis' must be a non-empty string, the axis of the pair answered (`fairtalk respond` copies it from the "
    "pairs), got {given}"
)
_MSG_LINE_COUNTS = "{path_a} has {n_a} lines but {path_b} has {n_b}; the two files must align line by line"
_MSG_TWO_PATHS = "a two-file layout takes exactly two paths (a.txt, b.txt), got {n}"
_MSG_DIRECTORY = "a responses directory must hold a.txt and b.txt"
_MSG_BAD_SOURCE = "responses must be a path, two paths (a.txt, b.txt) or Response records, got {type}"
_MSG_BAD_RECORD = "item {index} is not a Response but {type}"
_MSG_CONFLICT = (
    "{n} conflicting duplicate record(s): pair {pair_id!r} side {side} at {where} gives a different response than"
    " {first}; each pair's side must be answered once (identical copies are allowed), so remove the extra records"
)

_MSG_OTHER_AXIS = "these responses answer {found!r} pairs ({why}), not {axis!r} ones: score them {advice}"
_WHY_ID = "their pair ids start '{found}-'"
_WHY_NAMED = "so their records' axis field says, copied from the pairs by `fairtalk respond`"
_ADVICE_UNKNOWN = "with the lexicon file their pairs were made with (--axis FILE; its axis is {found!r})"
_WARN_UNKNOWN_IDS = (
    "{n:,} of {total:,} pairs have ids of the form `fairtalk pairs` gives, naming an axis that is neither {axis!r} "
    "(the axis scored) nor any axis known here ({listed}; the first {pair_id!r}), and their records name no axis "
    "(written before `fairtalk respond` recorded the pairs' axis, or made elsewhere): if they answer pairs made with "
    "a lexicon file, score them with that file (--axis FILE), or the report names an axis they are not of; ids of "
    "your own need nothing"
)
_MSG_MIXED_AXES = (
    "these responses mix the pairs of several axes ({counts}): pair {pair_id!r} is of axis {found!r}, not {axis!r}, "
    "the axis scored; score each axis' responses on their own"
)
#: A pair id as `fairtalk pairs` makes it: the axis, a hyphen and the 16 hex digits of the pair's 8-byte hash.
_AXIS_ID = re.compile(r"(.+)-[0-9a-f]{16}")

#: Fields every JSONL record carries; any other field is kept in ``Response.extra``.
CORE_FIELDS = ("pair_id", "side", "context", "response")
#: The summary counters, always present in ``ResponseSet.summary``.
SUMMARY_KEYS = (
    "n_records",
    "n_blank_lines",
    "n_pairs",
    "n_missing_side",
    "n_duplicates",
    "n_conflicting_duplicates",
    "n_empty",
    "n_empty_dropped",
)
#: The pairs left out with one side lost (side a only, side b only) or both: counted in ``ResponseSet.summary``
#: only when some pair was lost (a side missing from the input, failed in generation, or dropped empty).
LOSS_KEYS = ("n_lost_a_only", "n_lost_b_only", "n_lost_both")
#: The empty answers of the pairs kept (measured), on side a, on side b, and the pairs empty on both sides: counted in
#: ``ResponseSet.summary`` only when some pair kept has an empty side (``drop_empty`` leaves none: it counts them lost).
EMPTY_KEYS = ("n_empty_a", "n_empty_b", "n_empty_both")
#: The pairs left out of the tests because their two sides were asked the same (non-empty) context: counted in
#: ``ResponseSet.summary`` by scoring (whose ``n_pairs`` then counts the pairs kept), only when some pair is such.
SAME_CONTEXT_DROPPED_KEY = "n_same_context_dropped"


def same_context(a: str, b: str) -> bool:
    """Whether a pair's two sides were asked the same (non-empty) context: no counterfactual pair.

    Two empty contexts say nothing of what was asked (the two-file layout records none): not the same.

    Examples
    --------
    >>> same_context("he said hi", "he said hi"), same_context("he said hi", "she said hi"), same_context("", "")
    (True, False, False)
    """
    return a == b and bool(a.strip())


#: The extra fields of a response beside its seed (a cluster, a finish reason).
Extra = tuple[tuple[str, object], ...]

#: The field of a failed side's record: why the model gave no answer (``"<kind>: <message>"``).
ERROR_FIELD = "error"

#: The field naming the axis of the pair a response answers (``Pair.axis``), as `fairtalk respond` records it, so
#: that scoring can refuse answers to another axis' pairs even where the pair id does not say (a lexicon file's axis).
AXIS_FIELD = "axis"


def failed_response(pair_id: str, side: Side, context: str, error: str, extra: Extra = ()) -> Response:
    """The record of a side the model failed on: no answer (``""``, written as null) and ``error`` saying why."""
    return Response(pair_id, side, context, "", (*extra, (ERROR_FIELD, error)))


def is_failure(response: Response) -> bool:
    """Whether ``response`` records a failed side (:func:`failed_response`), not an answer."""
    return response.response == "" and isinstance(dict(response.extra).get(ERROR_FIELD), str)


def count_loss(counts: dict[str, int], lost_a: bool, lost_b: bool, n: int = 1) -> None:
    """Count ``n`` pairs left out because side a (``lost_a``), side b, or both were lost."""
    key = LOSS_KEYS[2] if lost_a and lost_b else LOSS_KEYS[0] if lost_a else LOSS_KEYS[1]
    counts[key] = counts.get(key, 0) + n


class ResponseColumn(RecordColumn[Response]):
    """One side's responses to aligned pairs, held as columns: the records are built when read.

    Item ``i`` is ``Response(pair_ids[i], side, contexts[i], texts[i], (("seed", seeds[i]), *axis, *rest[i]))``,
    where ``axis`` is ``(("axis", axis),)`` for a column of one axis' pairs (:data:`AXIS_FIELD`), else nothing.
    Besides its answer text, a response costs a reference to its context, 8 bytes of seed and
    (only when some response has a cluster or a finish reason) a reference to those: generation
    holds a million pairs' answers this way instead of two ``Response`` records and their
    ``extra`` tuples per pair. It equals any sequence of the same records (a tuple of them).
    """

    __slots__ = ("_axis", "_contexts", "_ids", "_rest", "_seeds", "_side", "_texts")
    _name = "response column"

    def __init__(
        self,
        pair_ids: tuple[str, ...],
        side: Side,
        contexts: Sequence[str],
        texts: Sequence[str],
        seeds: np.ndarray,
        rest: Sequence[Extra] | None = None,
        axis: str | None = None,
    ) -> None:
        n = len(pair_ids)
        if not len(contexts) == len(texts) == len(seeds) == (n if rest is None else len(rest)) == n:
            raise ValueError("unaligned response column")
        self._ids, self._side, self._contexts, self._texts = pair_ids, side, contexts, texts
        self._seeds = np.asarray(seeds, dtype=np.int64)
        self._rest = None if rest is None or not any(rest) else rest
        self._axis: Extra = ((AXIS_FIELD, axis),) if axis else ()

    @property
    def pair_ids(self) -> tuple[str, ...]:
        """The pairs' ids, in order."""
        return self._ids

    @property
    def side(self) -> Side:
        """``"a"`` or ``"b"``."""
        return self._side

    @property
    def texts(self) -> Sequence[str]:
        """The response texts, in order (no records built)."""
        return self._texts

    @property
    def contexts(self) -> Sequence[str]:
        """The contexts asked, in order (no records built)."""
        return self._contexts

    @property
    def axis(self) -> str | None:
        """The axis of every pair answered (:data:`AXIS_FIELD`), or None: the records name their own, if any."""
        return str(self._axis[0][1]) if self._axis else None

    @property
    def rest(self) -> Sequence[Extra] | None:
        """Each response's extra fields but its seed and the column's :attr:`axis`, in order (None: no response has any)."""
        return self._rest

    def __len__(self) -> int:
        return len(self._ids)

    def _record(self, i: int) -> Response:
        extra: Extra = (("seed", int(self._seeds[i])), *self._axis)
        if self._rest is not None:
            extra += self._rest[i]
        return Response(self._ids[i], self._side, self._contexts[i], self._texts[i], extra)

    def __repr__(self) -> str:
        return f"ResponseColumn(side={self._side!r}, n={len(self)})"


#: The field of a response whose prompt the model cut from its start to fit its positions: the tokens cut
#: (:meth:`~fairtalk.models.Responder.prompts_cut`); beside it, :data:`MAX_NEW_FIELD` the token limit that left no room.
PROMPT_CUT_FIELD = "prompt_cut"
#: The field beside :data:`PROMPT_CUT_FIELD`: the ``max_new_tokens`` the answer was generated with.
MAX_NEW_FIELD = "max_new_tokens"


def _extras(side: Sequence[Response]) -> Iterator[Extra]:
    """Each record's extra fields but its seed: a column's own, with no record built (``()`` for most)."""
    if isinstance(side, ResponseColumn):
        rest = side.rest
        return iter(rest) if rest is not None else iter(() for _ in range(len(side)))
    return (r.extra for r in side)


def _cut_of(extra: Extra) -> tuple[int, int | None]:
    """The tokens cut from a record's prompt (0: none recorded) and the ``max_new_tokens`` recorded beside them."""
    cut = limit = None
    for key, value in extra:  # no dict per record: most records hold a seed alone
        if key == PROMPT_CUT_FIELD:
            cut = value
        elif key == MAX_NEW_FIELD:
            limit = value
    if not isinstance(cut, int) or isinstance(cut, bool) or cut <= 0:
        return 0, None
    return cut, limit if isinstance(limit, int) and not isinstance(limit, bool) else None


def prompt_cuts(rs: ResponseSet) -> tuple[list[int], list[int], tuple[int, ...]]:
    """Per pair asked (the complete pairs, then those left out), the tokens cut from side a's and side b's prompt.

    Read from the records' :data:`PROMPT_CUT_FIELD` (written by generation when the model cut a
    prompt's start to fit its positions), with the ``max_new_tokens`` values recorded beside
    them (sorted), so that a responses file scored later says what its model run cut.
    """
    cut_a: list[int] = []
    cut_b: list[int] = []
    limits: set[int] = set()
    for cut, side in ((cut_a, rs.a), (cut_b, rs.b)):
        for extra in _extras(side):
            tokens, limit = _cut_of(extra)
            cut.append(tokens)
            if limit is not None:
                limits.add(limit)
    left: dict[str, dict[str, int]] = {}
    for record in rs.left_out:
        tokens, limit = _cut_of(record.extra)
        left.setdefault(record.pair_id, {})[record.side] = tokens
        if limit is not None:
            limits.add(limit)
    for sides in left.values():
        cut_a.append(sides.get("a", 0))
        cut_b.append(sides.get("b", 0))
    return cut_a, cut_b, tuple(sorted(limits))


def response_texts(side: Sequence[Response]) -> Sequence[str]:
    """The response texts of one side's records, in order: a column's own list, with no record built."""
    if isinstance(side, ResponseColumn):
        return side.texts
    return [r.response for r in side]


def response_contexts(side: Sequence[Response]) -> Sequence[str]:
    """The contexts of one side's records, in order: a column's own list, with no record built."""
    if isinstance(side, ResponseColumn):
        return side.contexts
    return [r.context for r in side]


def _aligned(pair_ids: tuple[str, ...], side: Sequence[Response], name: str) -> bool:
    """Whether ``side`` is a column of ``pair_ids`` (the very tuple) on side ``name``: aligned as built."""
    return isinstance(side, ResponseColumn) and side.pair_ids is pair_ids and side.side == name


@dataclass(frozen=True, slots=True)
class ResponseSet:
    """Responses to complete pairs, aligned: ``a[i]`` and ``b[i]`` answer pair ``pair_ids[i]``.

    Pairs keep the order of their first appearance. ``summary`` counts what reading kept
    or skipped (see ``SUMMARY_KEYS``); ``sources`` holds ``(path, sha256)`` of each file read.
    ``a`` and ``b`` are tuples of records, or (from generation) columns (:class:`ResponseColumn`).
    ``left_out`` holds the records of the pairs left out (a side missing or failed, an empty
    answer dropped): the answers given and the failed sides (:func:`is_failure`), so that a file
    written from the set keeps every pair asked.
    """

    pair_ids: tuple[str, ...]
    a: Sequence[Response]
    b: Sequence[Response]
    summary: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    sources: tuple[tuple[str, str], ...] = ()
    left_out: tuple[Response, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "left_out", tuple(self.left_out))
        if not len(self.pair_ids) == len(self.a) == len(self.b):
            raise ValueError(f"unaligned response set: {len(self.pair_ids)} ids, {len(self.a)} a, {len(self.b)} b")
        if _aligned(self.pair_ids, self.a, "a") and _aligned(self.pair_ids, self.b, "b"):
            object.__setattr__(self, "summary", MappingProxyType(dict(self.summary)))
            return
        for pair_id, ra, rb in zip(self.pair_ids, self.a, self.b):
            if (ra.pair_id, ra.side, rb.pair_id, rb.side) != (pair_id, "a", pair_id, "b"):
                raise ValueError(f"pair {pair_id!r}: responses are not its a and b sides")
        object.__setattr__(self, "summary", MappingProxyType(dict(self.summary)))

    def __len__(self) -> int:
        return len(self.pair_ids)

    def __iter__(self) -> Iterator[tuple[Response, Response]]:
        return iter(zip(self.a, self.b))

    @property
    def n_pairs(self) -> int:
        """Number of complete pairs."""
        return len(self.pair_ids)

    @property
    def clusters(self) -> tuple[str, ...] | None:
        """Each pair's cluster (the dialogue its context came from), or None when no pair names one.

        Read from a ``cluster`` field of the records (side a's, else side b's); a pair without
        one is a cluster of its own.
        """
        found = [dict(ra.extra).get("cluster", dict(rb.extra).get("cluster")) for ra, rb in zip(self.a, self.b)]
        if all(c is None for c in found):
            return None
        return tuple(f"pair:{pair_id}" if c is None else str(c) for pair_id, c in zip(self.pair_ids, found))

    @property
    def finish_reasons(self) -> tuple[tuple[str | None, ...], tuple[str | None, ...]] | None:
        """Per side, why the model stopped on each pair (``"length"``: the token limit cut it off).

        Read from a ``finish_reason`` field of the records (the ``openai:`` and ``hf:`` adapters
        report it); None when no record has one, and None for a record without one.
        """
        a = tuple(_reason(r) for r in self.a)
        b = tuple(_reason(r) for r in self.b)
        return None if all(x is None for x in a + b) else (a, b)


def _reason(response: Response) -> str | None:
    value = dict(response.extra).get("finish_reason")
    return value if isinstance(value, str) and value else None


class _Collector:
    """Gathers responses by pair and side, counting duplicates, then builds a ResponseSet.

    A repeated (pair, side) with the same text is counted and skipped; one with a different
    text is an input error (which answer counts would decide the verdict), raised by
    :meth:`build` with the number of such records and the first one's place.
    """

    def __init__(self, *, path: str | None = None, unit: str = "line") -> None:
        self.by_pair: dict[str, dict[str, tuple[Response, int]]] = {}
        self.counts = dict.fromkeys(SUMMARY_KEYS, 0)
        self.path, self.unit = path, unit
        self.first_conflict: tuple[Response, int, int] | None = None

    def add(self, response: Response, where: int) -> None:
        self.counts["n_records"] += 1
        sides = self.by_pair.setdefault(response.pair_id, {})
        first = sides.get(response.side)
        if first is None or (is_failure(first[0]) and not is_failure(response)):
            sides[response.side] = (response, where)  # an answer stands in for a failure of an earlier run
            return
        if is_failure(response):
            return  # a failure beside an answer: the answer stands
        self.counts["n_duplicates"] += 1
        if first[0].response != response.response:
            self.counts["n_conflicting_duplicates"] += 1
            if self.first_conflict is None:
                self.first_conflict = (response, where, first[1])

    def _check_conflicts(self) -> None:
        if self.first_conflict is None:
            return
        response, where, first = self.first_conflict
        message = _MSG_CONFLICT.format(
            n=self.counts["n_conflicting_duplicates"],
            pair_id=response.pair_id,
            side=response.side,
            where=f"{self.unit} {where}",
            first=f"{self.unit} {first}",
        )
        raise InputError(message, path=self.path)

    def build(self, *, drop_empty: bool, sources: tuple[tuple[str, str], ...] = ()) -> ResponseSet:
        self._check_conflicts()
        ids, side_a, side_b = [], [], []
        left_out: list[Response] = []
        for pair_id, sides in self.by_pair.items():
            answered = {side for side, (r, _) in sides.items() if not is_failure(r)}
            if len(answered) < 2:
                # an empty answer beside a failed side is lost too where empty answers are dropped
                lost = {s for s in ("a", "b") if s not in answered or (drop_empty and not sides[s][0].response.strip())}
                self._count_lost(len(sides) - len(answered), "a" in lost, "b" in lost)
                left_out += (sides[side][0] for side in ("a", "b") if side in sides)
                continue
            ids.append(pair_id)
            side_a.append(sides["a"][0])
            side_b.append(sides["b"][0])
        return _finish(
            tuple(ids), tuple(side_a), tuple(side_b), self.counts, drop_empty=drop_empty, sources=sources, left_out=left_out
        )

    def _count_lost(self, n_failed: int, lost_a: bool, lost_b: bool) -> None:
        """One pair left out: a side failed (``n_failed`` of them, counted as generation counts them) or missing."""
        if n_failed:
            self.counts["n_errors"] = self.counts.get("n_errors", 0) + n_failed
            self.counts["n_pairs_with_errors"] = self.counts.get("n_pairs_with_errors", 0) + 1
        else:
            self.counts["n_missing_side"] += 1
        count_loss(self.counts, lost_a, lost_b)


def _finish(
    ids: tuple[str, ...],
    side_a: Sequence[Response],
    side_b: Sequence[Response],
    counts: dict[str, int],
    *,
    drop_empty: bool,
    sources: tuple[tuple[str, str], ...],
    left_out: Sequence[Response] = (),
) -> ResponseSet:
    empty_a = [not text.strip() for text in response_texts(side_a)]
    empty_b = [not text.strip() for text in response_texts(side_b)]
    counts["n_empty"] = sum(empty_a) + sum(empty_b)
    for name in EMPTY_KEYS:  # recounted: a ResponseSet read again may carry them
        counts.pop(name, None)
    if counts["n_empty"] and not drop_empty:  # dropped, they are counted lost instead
        counts[EMPTY_KEYS[0]], counts[EMPTY_KEYS[1]] = sum(empty_a), sum(empty_b)
        counts[EMPTY_KEYS[2]] = sum(1 for ea, eb in zip(empty_a, empty_b) if ea and eb)
    if drop_empty and counts["n_empty"]:
        keep = [i for i in range(len(ids)) if not (empty_a[i] or empty_b[i])]
        for lost in ((True, False), (False, True), (True, True)):
            n_lost = sum(1 for ea, eb in zip(empty_a, empty_b) if (ea, eb) == lost)
            if n_lost:
                count_loss(counts, *lost, n=n_lost)
        counts["n_empty_dropped"] += len(ids) - len(keep)
        kept = set(keep)
        dropped = [r for i in range(len(ids)) if i not in kept for r in (side_a[i], side_b[i])]
        left_out = (*left_out, *dropped)
        ids = tuple(ids[i] for i in keep)
        side_a = tuple(side_a[i] for i in keep)
        side_b = tuple(side_b[i] for i in keep)
    counts["n_pairs"] = len(ids)
    return ResponseSet(ids, side_a, side_b, counts, sources, tuple(left_out))


def id_axis(pair_id: str) -> str | None:
    """The axis a pair id names (``gender-55cd42283474fa0f``: ``gender``), or None for an id of another form (a user's own).

    Examples
    --------
    >>> id_axis("gender-55cd42283474fa0f"), id_axis("my-axis-55cd42283474fa0f"), id_axis("17")
    ('gender', 'my-axis', None)
    """
    found = _AXIS_ID.fullmatch(pair_id)
    return None if found is None else found.group(1)


def _axis_named(extra: Extra) -> str | None:
    """The axis a record's :data:`AXIS_FIELD` names (None: no such field, or not a non-empty string)."""
    for key, value in extra:  # no dict per record
        if key == AXIS_FIELD:
            return value if isinstance(value, str) and value else None
    return None


def _side_axes(side: Sequence[Response]) -> Iterable[str | None]:
    """The axis each record of one side names: a column's own, with no record built."""
    if isinstance(side, ResponseColumn):
        return repeat(side.axis, len(side)) if side.axis is not None else map(_axis_named, _extras(side))
    return (_axis_named(r.extra) for r in side)


def _named_axes(responses: ResponseSet, axis: str) -> dict[str, str]:
    """Each pair's axis as its records name it (:data:`AXIS_FIELD`); pairs whose records name none are left out.

    Where a pair's records name different axes, one other than ``axis`` is kept.
    """
    named: dict[str, str] = {}
    sides = zip(responses.pair_ids, _side_axes(responses.a), _side_axes(responses.b))
    found = chain(
        ((r.pair_id, _axis_named(r.extra)) for r in responses.left_out),
        ((pair_id, name) for pair_id, name_a, name_b in sides for name in (name_a, name_b)),
    )
    for pair_id, name in found:
        if name is not None and named.get(pair_id, axis) == axis:
            named[pair_id] = name
    return named


def _pair_axis(pair_id: str, named: str | None, axis: str, known: Mapping[str, str | None]) -> str | None:
    """The axis a pair is taken to be of (None: neither its records nor its id name one).

    The one its records name (``named``), unless that is ``axis`` and its id names another known
    axis; an id naming no known axis may be a user's own, and names none.
    """
    if named is not None and named != axis:
        return named
    found = id_axis(pair_id)
    if found is not None and (found in known or found.partition(":")[0] in known):
        return found
    return named


def check_axis(responses: ResponseSet, axis: str, known: Mapping[str, str | None]) -> tuple[str, ...]:
    """Raise InputError when a pair is of another axis than ``axis``; the warnings on the pairs whose axis is unsure.

    A pair's axis is the one its records name (:data:`AXIS_FIELD`: `fairtalk respond` records the
    pairs' axis, a lexicon file's axis included), or the one its id names (``gender-55cd42283474fa0f``)
    when that is a ``known`` axis. ``known``: the axes a pair id's prefix is taken for
    (``conv-00d9892d42b4b548`` may be a user's own id, not an axis ``conv``), each with the lexicon file
    that holds it, or None for an axis known by name (built-in, registered): the advice names the file
    to score with, as a file's axis is no name to score on. A multiway axis' pairs
    (``religion:christian-muslim``) count as known when their axis (``religion``) is.

    The error names the axis the responses belong to, or where they mix axes, how many pairs each
    has; and, for a JSONL file, the line of the first record of another axis. The pairs whose records
    name no axis (a file written before `fairtalk respond` recorded it) and whose ids have the form of a
    pairs id but name no known axis are scored, with a warning: such ids may be a user's own.
    """
    named = _named_axes(responses, axis)
    ids = chain((r.pair_id for r in responses.left_out), responses.pair_ids)
    pairs = {pair_id: _pair_axis(pair_id, named.get(pair_id), axis, known) for pair_id in ids}
    counts = Counter(found for found in pairs.values() if found is not None)
    others = [found for found in counts if found != axis]
    if others:
        raise _other_axis(responses, axis, known, pairs, counts, frozenset(named.values()))
    return _unknown_ids(pairs, axis)


def _other_axis(
    responses: ResponseSet,
    axis: str,
    known: Mapping[str, str | None],
    pairs: Mapping[str, str | None],
    counts: Counter[str],
    named: frozenset[str],
) -> InputError:
    """The error of :func:`check_axis` for responses of another axis (``pairs``: each pair's axis, ``named``: those records name)."""
    path, line, pair_id = _first_of_other_axis(responses, axis, lambda i, name: _pair_axis(i, name, axis, known))
    pair_id = pair_id or next(i for i, found in pairs.items() if found is not None and found != axis)
    if len(counts) == 1:
        found = next(iter(counts))
        file = known.get(found)
        if found not in known and found.partition(":")[0] not in known:
            advice = _ADVICE_UNKNOWN.format(found=found)
        else:
            advice = f"on axis {found!r}" if file is None else f"with --lexicon {file} (of axis {found!r})"
        why = _WHY_NAMED if found in named else _WHY_ID.format(found=found)
        return InputError(_MSG_OTHER_AXIS.format(found=found, why=why, axis=axis, advice=advice), path=path, line=line)
    listed = ", ".join(f"{name} {n:,} pair{'s' if n != 1 else ''}" for name, n in counts.most_common())
    message = _MSG_MIXED_AXES.format(counts=listed, pair_id=pair_id, found=pairs.get(pair_id), axis=axis)
    return InputError(message, path=path, line=line)


def _unknown_ids(pairs: Mapping[str, str | None], axis: str) -> tuple[str, ...]:
    """The warning on the pairs of no axis known whose ids have the form of a pairs id naming another axis (none: none)."""
    unknown = {pair_id: id_axis(pair_id) for pair_id, found in pairs.items() if found is None}
    prefixes = Counter(prefix for prefix in unknown.values() if prefix is not None and prefix != axis)
    if not prefixes:
        return ()
    first = next(pair_id for pair_id, prefix in unknown.items() if prefix is not None and prefix != axis)
    listed = ", ".join(f"{name!r} {n:,} pair{'s' if n != 1 else ''}" for name, n in prefixes.most_common(3))
    more = f" and {len(prefixes) - 3:,} more" if len(prefixes) > 3 else ""
    n = prefixes.total()
    return (_WARN_UNKNOWN_IDS.format(n=n, total=len(pairs), axis=axis, listed=listed + more, pair_id=first),)


def _first_of_other_axis(
    responses: ResponseSet, axis: str, of: Callable[[str, str | None], str | None]
) -> tuple[str | None, int | None, str | None]:
    """The JSONL file the responses came from, the line and pair id of its first record of another axis than ``axis``.

    ``of``: the axis of a pair, from its id and the axis its record names (None: none), or None.

    ``(None, None, None)`` for responses not read from one JSONL file (records given in Python).
    """
    if len(responses.sources) != 1 or not Path(responses.sources[0][0]).is_file():
        return None, None, None
    path = responses.sources[0][0]
    try:
        with open_input(path, what="responses file") as handle:
            for number, text in numbered_lines(handle, path):
                if not text.strip():
                    continue
                record = parse_object(text, path, number)
                given = record.get("pair_id")
                pair_id = str(given) if isinstance(given, int) and not isinstance(given, bool) else given
                if not isinstance(pair_id, str):
                    continue
                found = of(pair_id, _axis_named(tuple(record.items())))
                if found is not None and found != axis:
                    return path, number, pair_id
    except InputError:  # changed since it was read: the message names no line
        pass
    return path, None, None


#: JSON's names of the Python types a JSON value parses to, for messages.
_JSON_TYPES = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array", dict: "an object"}


def _given(value: object) -> str:
    """A JSON value, named for a message: ``null``, ``an empty string``, or its JSON type (``a number``)."""
    if value is None:
        return "null"
    return "an empty string" if value == "" else _JSON_TYPES.get(type(value), type(value).__name__)


def _parse_record(text: str, path: str, number: int) -> Response:
    """One JSONL line -> Response, or InputError naming ``path:line``."""
    record = parse_object(text, path, number)
    for name in ("pair_id", "side", "response"):
        if name not in record:
            raise InputError(_MSG_MISSING_FIELD.format(field=name), path=path, line=number)
    pair_id = record["pair_id"]
    if isinstance(pair_id, int) and not isinstance(pair_id, bool):
        pair_id = str(pair_id)
    if not isinstance(pair_id, str) or not pair_id:
        raise InputError(_MSG_BAD_PAIR_ID.format(value=record["pair_id"]), path=path, line=number)
    if record["side"] not in ("a", "b"):
        raise InputError(_MSG_BAD_SIDE.format(value=record["side"]), path=path, line=number)
    context = record.get("context", "")
    failed = record["response"] is None
    if failed and not (isinstance(record.get(ERROR_FIELD), str) and record[ERROR_FIELD]):
        if ERROR_FIELD not in record:
            raise InputError(_MSG_NULL_RESPONSE, path=path, line=number)
        raise InputError(_MSG_BAD_ERROR.format(given=_given(record[ERROR_FIELD])), path=path, line=number)
    axis = record.get(AXIS_FIELD)
    if axis is not None and not (isinstance(axis, str) and axis):  # null: none recorded
        raise InputError(_MSG_BAD_AXIS.format(given=_given(axis)), path=path, line=number)
    for name, value in (("response", "" if failed else record["response"]), ("context", context)):
        if not isinstance(value, str):
            raise InputError(_MSG_NOT_STRING.format(field=name, type=type(value).__name__), path=path, line=number)
    extra = tuple((k, v) for k, v in record.items() if k not in CORE_FIELDS)
    return Response(pair_id, record["side"], context, "" if failed else record["response"], extra)


def _read_jsonl(path: Path, *, drop_empty: bool) -> ResponseSet:
    collector = _Collector(path=str(path))
    digest = hashlib.sha256()
    with open_input(path, what="responses file") as handle:
        for number, text in numbered_lines(handle, str(path), digest):
            if not text.strip():
                collector.counts["n_blank_lines"] += 1
                continue
            collector.add(_parse_record(text, str(path), number), number)
    return collector.build(drop_empty=drop_empty, sources=((str(path), digest.hexdigest()),))


def _read_text_lines(path: Path) -> tuple[list[str], str]:
    digest = hashlib.sha256()
    with open_input(path, what="responses file") as handle:
        lines = [text for _, text in numbered_lines(handle, str(path), digest)]
    return lines, digest.hexdigest()


def _read_two_files(path_a: Path, path_b: Path, *, drop_empty: bool) -> ResponseSet:
    lines_a, sha_a = _read_text_lines(path_a)
    lines_b, sha_b = _read_text_lines(path_b)
    if len(lines_a) != len(lines_b):
        message = _MSG_LINE_COUNTS.format(path_a=path_a, n_a=len(lines_a), path_b=path_b, n_b=len(lines_b))
        raise InputError(message, path=str(path_a))
    ids = tuple(str(i) for i in range(1, len(lines_a) + 1))
    side_a = tuple(Response(i, "a", "", text) for i, text in zip(ids, lines_a))
    side_b = tuple(Response(i, "b", "", text) for i, text in zip(ids, lines_b))
    counts = dict.fromkeys(SUMMARY_KEYS, 0)
    counts["n_records"] = 2 * len(ids)
    sources = ((str(path_a), sha_a), (str(path_b), sha_b))
    return _finish(ids, side_a, side_b, counts, drop_empty=drop_empty, sources=sources)


def aligned_responses(pair_ids: Sequence[str], side_a: Sequence[Response], side_b: Sequence[Response]) -> ResponseSet:
    """The ResponseSet of records already aligned by pair (``side_a[i]`` and ``side_b[i]`` answer ``pair_ids[i]``).

    What ``read_responses`` gives for the records ``a0, b0, a1, b1, ...``, without gathering them
    by pair first (a dict per pair): for ids that are all distinct. Repeated ids go through
    ``read_responses``, which keeps the first record of each pair and side and counts identical
    others (different texts for one pair and side are an :class:`~fairtalk.errors.InputError`).
    """
    if len(set(pair_ids)) != len(pair_ids):
        return read_responses([r for pair in zip(side_a, side_b) for r in pair])
    counts = dict.fromkeys(SUMMARY_KEYS, 0)
    counts["n_records"] = len(side_a) + len(side_b)
    ids = tuple(pair_ids)
    kept_a = side_a if _aligned(ids, side_a, "a") else tuple(side_a)  # a column stays one
    kept_b = side_b if _aligned(ids, side_b, "b") else tuple(side_b)
    return _finish(ids, kept_a, kept_b, counts, drop_empty=False, sources=())


def _from_records(records: Iterable[Any], *, drop_empty: bool) -> ResponseSet:
    collector = _Collector(unit="item")
    for index, record in enumerate(records):
        if not isinstance(record, Response):
            raise InputError(_MSG_BAD_RECORD.format(index=index, type=type(record).__name__))
        if record.side not in ("a", "b"):
            raise InputError(_MSG_BAD_SIDE.format(value=record.side))
        collector.add(record, index)
    return collector.build(drop_empty=drop_empty)


def read_responses(
    source: str | os.PathLike[str] | tuple[str | os.PathLike[str], ...] | Iterable[Response] | ResponseSet,
    *,
    drop_empty: bool = False,
) -> ResponseSet:
    """Read responses to parallel pairs into an aligned ``ResponseSet``.

    Parameters
    ----------
    source : path, (path_a, path_b), iterable of Response, or ResponseSet
        - a JSONL file, one record per pair and side:
          ``{"pair_id", "side": "a"|"b", "context", "response", ...}``. ``pair_id`` may be
          a string or an integer; ``context`` is optional; other fields go to ``Response.extra``;
          blank lines are skipped and counted;
        - two text files (or a directory holding ``a.txt`` and ``b.txt``) aligned line by
          line; pair ids are the line numbers ``"1"``, ``"2"``, ...;
        - ``Response`` records, or a ``ResponseSet`` (re-filtered when ``drop_empty``);
        - a DataFrame with columns ``a`` and ``b`` (and optionally ``pair_id``,
          ``context_a``, ``context_b``, ``cluster``).
    drop_empty : bool
        Empty (all-whitespace) responses are real outputs and are kept unless this is set;
        then any pair with an empty side is dropped and counted in ``n_empty_dropped``.

    Returns
    -------
    ResponseSet
        Complete pairs in order of first appearance. Pairs missing a side are excluded and
        counted (``n_missing_side``), pairs with a side recorded as failed (``"response": null``
        and an ``"error"``) likewise (``n_pairs_with_errors``, and ``n_errors`` the failed sides),
        both by the side lost (``n_lost_a_only``, ...); their records are kept in ``left_out``.
        A repeated (pair_id, side) with the same text keeps the first record and counts
        ``n_duplicates`` (an answer stands in for a failure); one with a different text is an error.

    Raises
    ------
    InputError
        Naming ``path:line`` for a malformed record, bad JSON, non-UTF-8 bytes; a pair's
        side answered twice with different texts (how many, and the first one's line); two
        files whose line counts differ; or a missing file.

    Examples
    --------
    >>> from fairtalk import Response
    >>> rs = read_responses([Response("1", "a", "he is", "ok"), Response("1", "b", "she is", "ok")])
    >>> rs.pair_ids, rs.summary["n_pairs"]
    (('1',), 1)
    """
    if isinstance(source, ResponseSet):
        if not drop_empty:
            return source
        counts = {**dict.fromkeys(SUMMARY_KEYS, 0), **source.summary}
        return _finish(
            source.pair_ids, source.a, source.b, counts, drop_empty=True, sources=source.sources, left_out=source.left_out
        )
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            if not ((path / "a.txt").is_file() and (path / "b.txt").is_file()):
                raise InputError(_MSG_DIRECTORY, path=str(path))
            return _read_two_files(path / "a.txt", path / "b.txt", drop_empty=drop_empty)
        return _read_jsonl(path, drop_empty=drop_empty)
    if isinstance(source, (tuple, list)) and source and all(isinstance(s, (str, os.PathLike)) for s in source):
        if len(source) != 2:
            raise InputError(_MSG_TWO_PATHS.format(n=len(source)))
        first, second = (Path(s) for s in source if isinstance(s, (str, os.PathLike)))
        return _read_two_files(first, second, drop_empty=drop_empty)
    if hasattr(source, "columns") and {"a", "b"} <= set(source.columns):  # a DataFrame
        return _from_records(_from_frame(source), drop_empty=drop_empty)
    if isinstance(source, Iterable):
        return _from_records(source, drop_empty=drop_empty)
    raise InputError(_MSG_BAD_SOURCE.format(type=type(source).__name__))


def responses_from_texts(texts_a: Sequence[object], texts_b: Sequence[object]) -> list[Response]:
    """Response records from two aligned sequences of response texts (pair ``i`` is ``texts_a[i]``, ``texts_b[i]``).

    Examples
    --------
    >>> [r.response for r in responses_from_texts(["ok", "fine"], ["sure", "no"])]
    ['ok', 'sure', 'fine', 'no']
    """
    if isinstance(texts_a, (str, bytes)) or isinstance(texts_b, (str, bytes)):
        raise InputError(_MSG_TEXTS_NOT_LISTS)
    a, b = list(texts_a), list(texts_b)
    if len(a) != len(b):
        raise InputError(_MSG_TEXTS_LENGTHS.format(n_a=len(a), n_b=len(b)))
    for i, text in enumerate([*a, *b]):
        if not isinstance(text, str):
            side, index = ("A", i) if i < len(a) else ("B", i - len(a))
            raise InputError(_MSG_TEXTS_TYPE.format(side=side, index=index, type=type(text).__name__))
    texts = cast(list[str], [*a, *b])
    return [r for i in range(len(a)) for r in (Response(str(i), "a", "", texts[i]), Response(str(i), "b", "", texts[len(a) + i]))]


def _from_frame(frame: Any) -> list[Response]:
    """Records from a DataFrame with columns ``a`` and ``b`` (optional ``pair_id``, ``context_a``, ``context_b``, ``cluster``)."""
    ids = [str(v) for v in frame["pair_id"]] if "pair_id" in frame.columns else [str(i) for i in range(len(frame))]
    records = responses_from_texts(list(frame["a"]), list(frame["b"]))
    contexts = {
        side: list(frame[f"context_{side}"]) if f"context_{side}" in frame.columns else [""] * len(frame) for side in "ab"
    }
    clusters = list(frame["cluster"]) if "cluster" in frame.columns else None
    out = []
    for k, record in enumerate(records):
        i, side = k // 2, record.side
        context = contexts[side][i]
        extra: tuple[tuple[str, str], ...] = (("cluster", str(clusters[i])),) if clusters is not None else ()
        out.append(Response(ids[i], side, str(context), record.response, extra))
    return out


def is_responses_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an (empty or) responses JSONL file, as :func:`write_responses` writes them (its first record)."""
    record = first_record(path)
    return record is not None and (not record or {"pair_id", "side", "response"} <= record.keys())


@overload
def write_responses(responses: ResponseSet | Iterable[Response], path: str | os.PathLike[str]) -> Path: ...
@overload
def write_responses(responses: ResponseSet | Iterable[Response], path: IO[str]) -> None: ...
def write_responses(responses: ResponseSet | Iterable[Response], path: str | os.PathLike[str] | IO[str]) -> Path | None:
    """Write responses as JSONL (``read_responses`` reads it back); a ResponseSet is written pair by pair.

    A ResponseSet's pairs left out (:attr:`ResponseSet.left_out`) follow its complete pairs: the
    answers given, and each failed side as ``"response": null`` with its ``"error"``, so that
    reading the file back counts the same losses.

    A path is written atomically (a temporary file renamed over ``path``), so a kill or a
    full disk never leaves it half-written; returns the path written. An open text stream
    (stdout) is written as it is, and None is returned.
    """
    if isinstance(responses, ResponseSet):
        records: Iterable[Response] = chain((r for pair in responses for r in pair), responses.left_out)
    else:
        records = responses
    check_output_argument(path, "write_responses: path")
    if not isinstance(path, str | os.PathLike):
        _write_rows(records, path)
        return None
    out = Path(path)
    with atomic_writer(out) as handle:
        _write_rows(records, handle)
    return out


def _write_rows(records: Iterable[Response], handle: IO[str]) -> None:
    """Each response as one JSONL record, through the one writer (a lone surrogate becomes U+FFFD)."""
    write_records(handle, (_row(r) for r in records))


def _row(r: Response) -> dict[str, object]:
    """A response's JSONL record: its fields, then its extra input fields that do not clash with them."""
    response = None if is_failure(r) else r.response
    row: dict[str, object] = {"pair_id": r.pair_id, "side": r.side, "context": r.context, "response": response}
    row.update((k, v) for k, v in r.extra if k not in row)
    return row


#: One row of :func:`loss_tally`: pairs asked in a dialogue, lost on side a only, side b only, both; dialogues so.
TallyRow = tuple[int, int, int, int, int]


def _lost_sides(records: Sequence[Response], empties: bool) -> tuple[bool, bool]:
    """Whether a left-out pair's side a (b) was lost: missing or failed, or (``empties``) empty."""
    found = {r.side: r for r in records}
    lost = {side: side not in found or is_failure(found[side]) for side in ("a", "b")}
    if empties or not any(lost.values()):  # a pair left out with both sides answered was dropped for an empty side
        lost = {side: lost[side] or not found[side].response.strip() for side in ("a", "b")}
    return lost["a"], lost["b"]


def _tally(rs: ResponseSet, clusters: Sequence[str], empties: bool) -> tuple[TallyRow, ...]:
    per: dict[str, list[int]] = {}
    for cluster in clusters:
        per.setdefault(cluster, [0, 0, 0, 0])[0] += 1
    by_pair: dict[str, list[Response]] = {}
    for record in rs.left_out:
        by_pair.setdefault(record.pair_id, []).append(record)
    for pair_id, records in by_pair.items():
        lost_a, lost_b = _lost_sides(records, empties)
        if not (lost_a or lost_b):  # left out with both sides answered (cut off, the same context on both): not lost
            continue
        named = [dict(r.extra).get("cluster") for r in records]
        cluster = next((str(c) for c in named if c is not None), f"pair:{pair_id}")
        row = per.setdefault(cluster, [0, 0, 0, 0])
        row[0] += 1
        row[3 if lost_a and lost_b else 1 if lost_a else 2] += 1
    shapes = Counter((row[0], row[1], row[2], row[3]) for row in per.values())
    return tuple(sorted((*shape, n) for shape, n in shapes.items()))


def empty_tally(rs: ResponseSet) -> tuple[TallyRow, ...]:
    """The pairs measured per dialogue and those with an empty answer by side, as ``(pairs, a_only, b_only, both, dialogues)`` rows.

    What :func:`loss_tally` is to the pairs lost, for the empty answers of the pairs kept
    (:data:`EMPTY_KEYS`): empty when no pair kept has an empty side or no pair names a dialogue.

    Examples
    --------
    >>> from fairtalk.records import Response
    >>> def r(i, side, text, d):
    ...     return Response(str(i), side, "c", text, (("cluster", d),))
    >>> rs = read_responses([r(1, "a", "x", "d1"), r(1, "b", "", "d1"), r(2, "a", "x", "d1"), r(2, "b", "y", "d1")])
    >>> empty_tally(rs)
    ((2, 0, 1, 0, 1),)
    """
    clusters = rs.clusters
    if clusters is None or not any(rs.summary.get(k) for k in EMPTY_KEYS[:2]):
        return ()
    per: dict[str, list[int]] = {}
    for cluster, text_a, text_b in zip(clusters, response_texts(rs.a), response_texts(rs.b)):
        row = per.setdefault(cluster, [0, 0, 0, 0])
        row[0] += 1
        empty_a, empty_b = not text_a.strip(), not text_b.strip()
        if empty_a or empty_b:
            row[3 if empty_a and empty_b else 1 if empty_a else 2] += 1
    shapes = Counter((row[0], row[1], row[2], row[3]) for row in per.values())
    return tuple(sorted((*shape, n) for shape, n in shapes.items()))


def loss_tally(rs: ResponseSet) -> tuple[TallyRow, ...]:
    """The pairs asked per dialogue and those lost by side, as ``(asked, a_only, b_only, both, dialogues)`` rows.

    Dialogues alike are one row (``dialogues`` counts them); a pair with no ``cluster`` is a
    dialogue of its own. Empty when no pair was lost, when no pair names a dialogue, or when
    the left-out records do not add up to the summary's loss counts (:data:`LOSS_KEYS`): the
    gates then count pairs, as they did before the dialogues were recorded.

    Examples
    --------
    >>> from fairtalk.records import Response
    >>> def r(i, side, text, d):
    ...     return Response(str(i), side, "c", text, (("cluster", d),))
    >>> rs = read_responses([r(1, "a", "x", "d1"), r(1, "b", "y", "d1"), r(2, "a", "x", "d1"), r(3, "a", "x", "d2")])
    >>> loss_tally(rs)
    ((1, 0, 1, 0, 1), (2, 0, 1, 0, 1))
    """
    counts = tuple(int(rs.summary.get(k) or 0) for k in LOSS_KEYS)
    kept = rs.clusters
    if not any(counts) or (kept is None and not any(dict(r.extra).get("cluster") is not None for r in rs.left_out)):
        return ()
    clusters = [f"pair:{i}" for i in rs.pair_ids] if kept is None else list(kept)
    for empties in (False, True):
        tally = _tally(rs, clusters, empties)
        if tuple(sum(row[k] * row[4] for row in tally) for k in (1, 2, 3)) == counts:
            return tally
    return ()
