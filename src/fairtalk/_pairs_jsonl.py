"""Pairs on disk: JSONL records ``{"id", "axis", "a", "b", "original_side", "swaps", "origin"[, "cluster"]}``.

A bottom-layer module (records in, records out), so that the report can save the pairs of a
run without depending on the stage that builds them.

Each swap is ``{"start", "end", "from", "to", "side"}`` (plus ``"n_choices"`` when a word had
several counterparts); ``start``/``end`` index the original side's text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from fairtalk._jsonl import first_record, read_objects, write_records
from fairtalk.errors import InputError, check_output_argument, path_argument
from fairtalk.files import atomic_writer
from fairtalk.records import Pair, Swap

__all__ = ["is_pairs_check", "is_pairs_file", "read_pairs", "write_pairs"]

_MSG_A_FOLDER = "is a directory, not a pairs file (give a pairs JSONL file, as `fairtalk pairs -o` writes)"
_MSG_MISSING_KEY = "missing key {key!r}"
_MSG_BAD_TYPE = "{key!r} must be {expected}"
_MSG_BAD_SIDE = "{key!r} must be 'a' or 'b', got {value!r}"
_MSG_BAD_SPAN = "swaps[{i}]: span {start}..{end} is outside side {side!r} ({n} characters)"
_MSG_DUPLICATE_ID = "duplicate pair id {id!r} (first on line {first})"
#: The keys every pair record has: how a file of pairs is told from another JSONL file.
_PAIR_KEYS = frozenset({"id", "axis", "a", "b"})


#: The keys of every ``pairs_check.json`` (``PairsCheck.to_dict()``): how one is told from another JSON file.
_CHECK_KEYS = frozenset({"axis", "n_pairs", "n_leftover", "leftover_share"})
#: A validity check is a few kilobytes; a larger file is not one.
_MAX_CHECK_BYTES = 1 << 20


def is_pairs_check(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a pairs' validity check (``pairs_check.json``) as fairtalk writes them: JSON with its keys."""
    where = Path(path)
    try:
        if not where.is_file() or where.is_symlink() or where.stat().st_size > _MAX_CHECK_BYTES:
            return False
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and _CHECK_KEYS <= data.keys()


def is_pairs_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an (empty or) pairs JSONL file, as :func:`write_pairs` writes them: its first record has a pair's keys."""
    record = first_record(path)
    return record is not None and (not record or _PAIR_KEYS <= record.keys())


def _pair_record(pair: Pair) -> dict[str, object]:
    swaps = []
    for s in pair.swaps:
        item: dict[str, object] = {"start": s.start, "end": s.end, "from": s.source, "to": s.target, "side": s.source_side}
        if s.n_choices != 1:
            item["n_choices"] = s.n_choices
        swaps.append(item)
    record: dict[str, object] = {
        "id": pair.id,
        "axis": pair.axis,
        "a": pair.a,
        "b": pair.b,
        "original_side": pair.original_side,
        "swaps": swaps,
        "origin": pair.origin,
    }
    if pair.cluster is not None:
        record["cluster"] = pair.cluster
    return record


def write_pairs(pairs: Iterable[Pair], path: str | os.PathLike[str] | IO[str]) -> int:
    """Write pairs as JSONL to a path (atomically; parent folders created) or a text stream.

    Returns the number of pairs written.

    Raises
    ------
    OutputError
        The file cannot be written (full disk, permissions); the old file is left as it was.
    """
    check_output_argument(path, "write_pairs: path")
    if not isinstance(path, (str, os.PathLike)):
        return _write_lines(pairs, path)
    with atomic_writer(path) as fh:
        return _write_lines(pairs, fh)


def _write_lines(pairs: Iterable[Pair], fh: IO[str]) -> int:
    return write_records(fh, (_pair_record(pair) for pair in pairs))


def read_pairs(path: str | os.PathLike[str]) -> Iterator[Pair]:
    """Stream pairs from a JSONL file written by :func:`write_pairs` (or by hand), validating each.

    Blank lines are ignored; ``swaps``, ``origin`` and ``cluster`` are optional.

    Raises
    ------
    InputError
        ``path:line: ...`` for a missing file, non-UTF-8 bytes, malformed JSON, a record that is
        not an object, a missing or mistyped key, a swap span outside its text, or a repeated id.
    SpecError
        ``path`` is not a str or os.PathLike (None, a number).
    """
    where = path_argument(path, "read_pairs: path")
    if Path(where).is_dir():
        raise InputError(_MSG_A_FOLDER, path=where)
    return _iter_pairs(read_objects(where, what="pairs file"), where)


def _iter_pairs(objects: Iterator[tuple[int, dict[str, Any]]], where: str) -> Iterator[Pair]:
    """Yield validated pairs from the file's JSON objects; a repeated id is an error."""
    first_line: dict[str, int] = {}
    for lineno, obj in objects:
        try:
            pair = _parse_pair(obj)
        except ValueError as exc:
            raise InputError(str(exc), path=where, line=lineno) from None
        if pair.id in first_line:
            message = _MSG_DUPLICATE_ID.format(id=pair.id, first=first_line[pair.id])
            raise InputError(message, path=where, line=lineno)
        first_line[pair.id] = lineno
        yield pair


def _parse_pair(obj: dict[str, Any]) -> Pair:
    """Validate one JSONL record; ValueError carries the message."""
    for key in ("id", "axis", "a", "b", "original_side"):
        if key not in obj:
            raise ValueError(_MSG_MISSING_KEY.format(key=key))
        if not isinstance(obj[key], str) or (key == "id" and not obj[key]):
            raise ValueError(_MSG_BAD_TYPE.format(key=key, expected="a non-empty string" if key == "id" else "a string"))
    side = obj["original_side"]
    if side not in ("a", "b"):
        raise ValueError(_MSG_BAD_SIDE.format(key="original_side", value=side))
    origin = obj.get("origin", "")
    if not isinstance(origin, str):
        raise ValueError(_MSG_BAD_TYPE.format(key="origin", expected="a string"))
    cluster = obj.get("cluster")
    if cluster is not None and (isinstance(cluster, bool) or not isinstance(cluster, (str, int))):
        raise ValueError(_MSG_BAD_TYPE.format(key="cluster", expected="a string or an integer"))
    raw_swaps = obj.get("swaps", [])
    if not isinstance(raw_swaps, list):
        raise ValueError(_MSG_BAD_TYPE.format(key="swaps", expected="a list"))
    original = obj[side]
    swaps = tuple(_parse_swap(i, item, len(original), side) for i, item in enumerate(raw_swaps))
    return Pair(
        id=obj["id"],
        axis=obj["axis"],
        a=obj["a"],
        b=obj["b"],
        original_side=side,
        swaps=swaps,
        origin=origin,
        cluster=None if cluster is None else str(cluster),
    )


def _parse_swap(i: int, item: object, n_chars: int, side: str) -> Swap:
    if not isinstance(item, dict):
        raise ValueError(_MSG_BAD_TYPE.format(key=f"swaps[{i}]", expected="an object"))
    for key, kind in (("start", int), ("end", int), ("from", str), ("to", str), ("side", str)):
        if key not in item:
            raise ValueError(_MSG_MISSING_KEY.format(key=f"swaps[{i}].{key}"))
        if not isinstance(item[key], kind) or isinstance(item[key], bool):
            expected = "an integer" if kind is int else "a string"
            raise ValueError(_MSG_BAD_TYPE.format(key=f"swaps[{i}].{key}", expected=expected))
    if item["side"] not in ("a", "b"):
        raise ValueError(_MSG_BAD_SIDE.format(key=f"swaps[{i}].side", value=item["side"]))
    n_choices = item.get("n_choices", 1)
    if not isinstance(n_choices, int) or isinstance(n_choices, bool) or n_choices < 1:
        raise ValueError(_MSG_BAD_TYPE.format(key=f"swaps[{i}].n_choices", expected="a positive integer"))
    start, end = item["start"], item["end"]
    if not 0 <= start <= end <= n_chars:
        raise ValueError(_MSG_BAD_SPAN.format(i=i, start=start, end=end, side=side, n=n_chars))
    return Swap(start, end, item["from"], item["to"], item["side"], n_choices)
