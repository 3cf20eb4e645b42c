"""Reading JSON Lines files that users give: numbered lines and objects, every error at ``path:line``.

Every reader of a user's JSONL file (responses, pairs, replay files, pools, prompts and
completions) goes through here, so they agree on the details: a UTF-8 BOM and CRLF line
endings are accepted, blank lines are skipped, and bytes that are not UTF-8, malformed JSON
or a line that is not an object raise :class:`~fairtalk.errors.InputError` naming the file and
line. Readers of corpora do not use it: a corpus skips and counts bad lines instead of failing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from fairtalk.errors import InputError

__all__ = ["numbered_lines", "open_input", "parse_object", "read_objects"]

_MSG_NOT_FOUND = "{what} not found"
_MSG_UNREADABLE = "cannot read {what} ({reason})"
_MSG_NOT_UTF8 = "not valid UTF-8 (byte {byte} at column {column})"
_MSG_BAD_JSON = "malformed JSON ({error})"
_MSG_NOT_OBJECT = "expected a JSON object, got {type}"
_BOM = b"\xef\xbb\xbf"


def open_input(path: str | os.PathLike[str], *, what: str = "file") -> IO[bytes]:
    """Open a user's file for binary reading; a missing or unreadable file is an InputError."""
    try:
        return Path(path).open("rb")
    except FileNotFoundError:
        raise InputError(_MSG_NOT_FOUND.format(what=what), path=str(path)) from None
    except OSError as exc:
        raise InputError(_MSG_UNREADABLE.format(what=what, reason=exc.strerror or exc), path=str(path)) from exc


def numbered_lines(handle: IO[bytes], where: str, digest: Any = None) -> Iterator[tuple[int, str]]:
    """Decoded lines without their line ending, numbered from 1, blank ones included.

    ``digest`` (a ``hashlib`` object) is fed every raw line, so a reader can hash the file
    in the same pass.
    """
    for number, raw in enumerate(handle, start=1):
        if digest is not None:
            digest.update(raw)
        if number == 1:
            raw = raw.removeprefix(_BOM)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            message = _MSG_NOT_UTF8.format(byte=f"0x{raw[exc.start]:02x}", column=exc.start + 1)
            raise InputError(message, path=where, line=number) from exc
        yield number, text.rstrip("\r\n")


def parse_object(text: str, where: str, number: int) -> dict[str, Any]:
    """One JSONL line as a dict, or an InputError naming ``where:number``."""
    try:
        record = json.loads(text)
    except (ValueError, RecursionError) as exc:
        message = _MSG_BAD_JSON.format(error=getattr(exc, "msg", None) or exc)
        raise InputError(message, path=where, line=number) from None
    if not isinstance(record, dict):
        raise InputError(_MSG_NOT_OBJECT.format(type=type(record).__name__), path=where, line=number)
    return record


def read_objects(path: str | os.PathLike[str], *, what: str = "file", digest: Any = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSONL file.

    The file is opened at once (so a missing file fails at the call) and read lazily.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = path.write_text('{"a": 1}\\n\\n{"a": 2}\\n', encoding="utf-8")
    >>> list(read_objects(path))
    [(1, {'a': 1}), (3, {'a': 2})]
    """
    handle = open_input(path, what=what)
    return _objects(handle, str(path), digest)


def _objects(handle: IO[bytes], where: str, digest: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    with handle:
        for number, text in numbered_lines(handle, where, digest):
            if text.strip():
                yield number, parse_object(text, where, number)
