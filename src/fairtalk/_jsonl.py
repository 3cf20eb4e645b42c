r"""Reading JSON Lines files that users give: numbered lines and objects, every error at ``path:line``.

Every reader of a user's JSONL file (responses, pairs, replay files, pools, prompts and
completions) goes through here, so they agree on the details: a UTF-8 BOM and CRLF line
endings are accepted, blank lines are skipped, and bytes that are not UTF-8, malformed JSON,
a line that is not an object, a gzip file (named as one), a line longer than :data:`MAX_RECORD_BYTES` or values nested
deeper than :data:`MAX_DEPTH` raise
:class:`~fairtalk.errors.InputError` naming the file and line. A path that is not a regular
file (a FIFO, a device) is refused at once instead of blocking. JSON escapes of lone
surrogates (``"\ud800"``), which no UTF-8 output can hold, are replaced by U+FFFD. Readers of
corpora do not use it: a corpus skips and counts bad lines instead of failing. What fairtalk
writes itself is kept within the same cap: :func:`fit_in_record` cuts a model's overlong answer.

Every JSONL file fairtalk writes (pairs, responses, augmented dialogues, prompts, completions,
judge answers) goes through the one writer, :func:`write_records` (one :func:`json_line` per
record), which replaces a lone surrogate by U+FFFD as the readers do, so what is written can
always be read back.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from fairtalk.errors import InputError
from fairtalk.records import MAX_RECORD_BYTES, SCHEMA_VERSION

__all__ = [
    "MAX_DEPTH",
    "MAX_JSON_FILE_BYTES",
    "MAX_RECORD_BYTES",
    "first_record",
    "fit_in_record",
    "gzip_error",
    "is_json_of",
    "is_records_of",
    "is_written_as",
    "json_line",
    "jsonable",
    "numbered_lines",
    "open_input",
    "parse_object",
    "read_json_file",
    "read_objects",
    "replace_surrogates",
    "without_surrogates",
    "write_records",
]


#: How deep lists and objects may nest in one record (a pair's swaps reach 3).
MAX_DEPTH = 100

#: The largest JSON document (``results.json``, ``run.json``) :func:`read_json_file` reads, in bytes.
MAX_JSON_FILE_BYTES = 64 << 20

#: Room a record keeps for what is not its long texts (keys, ids, seed, cluster, swaps) when a text is cut to fit.
RECORD_OVERHEAD = 64 << 10

_MSG_NOT_FOUND = "{what} not found"
_MSG_UNREADABLE = "cannot read {what} ({reason})"
_MSG_NOT_UTF8 = "not valid UTF-8 (byte {byte} at column {column})"
_MSG_BAD_JSON = "malformed JSON ({error})"
_MSG_NOT_OBJECT = "expected a JSON object, got {type}"
_MSG_NOT_REGULAR = "{what} is not a regular file (a pipe, a device or a socket); save it to a file first"
_MSG_TOO_LONG = "record is longer than {limit} MiB, the most one record may hold"
_MSG_TOO_DEEP = "values nest deeper than {limit} levels, more than a record needs"
_MSG_FILE_TOO_BIG = "{size:,} bytes, more than the {limit} MiB a fairtalk JSON file may hold (is it the right file?)"
_MSG_NEWER_RECORD = (
    "schema_version {found}, but this fairtalk reads schema_version {ours} "
    "(a newer fairtalk wrote this record; upgrade fairtalk to read it)"
)
_MSG_FILE_TOO_DEEP = "malformed JSON (values nest deeper than {limit} levels, more than a fairtalk file holds)"
_BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"
_MSG_GZIP = "a gzip-compressed file, not {kind}; decompress it first (gunzip)"
#: A lone surrogate: a code point no UTF-8 text can hold.
_SURROGATE = re.compile("[\ud800-\udfff]")
_DRAIN_CHUNK = 1 << 16


def open_input(path: str | os.PathLike[str], *, what: str = "file") -> IO[bytes]:
    """Open a user's file for binary reading; a missing, unreadable or non-regular file is an InputError."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise InputError(_MSG_NOT_REGULAR.format(what=what), path=str(path))
        return Path(path).open("rb")
    except FileNotFoundError:
        raise InputError(_MSG_NOT_FOUND.format(what=what), path=str(path)) from None
    except OSError as exc:
        raise InputError(_MSG_UNREADABLE.format(what=what, reason=exc.strerror or exc), path=str(path)) from exc


def gzip_error(raw: bytes, where: str, line: int | None = None, *, kind: str = "JSON Lines text") -> InputError | None:
    """The error for a user's text file that is gzip-compressed (``raw`` its first bytes), or None when it is not one.

    ``kind`` says what the file should have been (``"JSON Lines text"``, ``"label<TAB>text lines"``).
    """
    return InputError(_MSG_GZIP.format(kind=kind), path=where, line=line) if raw.startswith(_GZIP_MAGIC) else None


def numbered_lines(handle: IO[bytes], where: str, digest: Any = None) -> Iterator[tuple[int, str]]:
    """Decoded lines without their line ending, numbered from 1, blank ones included.

    ``digest`` (a ``hashlib`` object) is fed every raw line, so a reader can hash the file
    in the same pass.
    """
    number = 0
    while raw := handle.readline(MAX_RECORD_BYTES + 1):
        number += 1
        if digest is not None:
            digest.update(raw)
        if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
            raise InputError(_MSG_TOO_LONG.format(limit=MAX_RECORD_BYTES >> 20), path=where, line=number)
        if number == 1:
            raw = raw.removeprefix(_BOM)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            gzipped = gzip_error(raw, where, number) if number == 1 else None
            if gzipped is not None:
                raise gzipped from None
            message = _MSG_NOT_UTF8.format(byte=f"0x{raw[exc.start]:02x}", column=exc.start + 1)
            raise InputError(message, path=where, line=number) from exc
        yield number, text.rstrip("\r\n")


def _depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (a scalar: 0), counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def parse_object(text: str, where: str, number: int) -> dict[str, Any]:
    """One JSONL line as a dict, or an InputError naming ``where:number``.

    Values may nest :data:`MAX_DEPTH` levels deep, so that no later step (a copy, a writer)
    meets a RecursionError on what a reader let through. A record whose ``schema_version``
    is above :data:`~fairtalk.records.SCHEMA_VERSION` was written by a newer fairtalk in a
    format this one cannot know: it is refused rather than misread.
    """
    try:
        record = json.loads(text)
    except RecursionError:
        raise InputError(_MSG_TOO_DEEP.format(limit=MAX_DEPTH), path=where, line=number) from None
    except ValueError as exc:
        message = _MSG_BAD_JSON.format(error=getattr(exc, "msg", None) or exc)
        raise InputError(message, path=where, line=number) from None
    if not isinstance(record, dict):
        raise InputError(_MSG_NOT_OBJECT.format(type=type(record).__name__), path=where, line=number)
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(record) > MAX_DEPTH:  # counting first: cheap
        raise InputError(_MSG_TOO_DEEP.format(limit=MAX_DEPTH), path=where, line=number)
    found = record.get("schema_version")
    if isinstance(found, int) and not isinstance(found, bool) and found > SCHEMA_VERSION:
        raise InputError(_MSG_NEWER_RECORD.format(found=found, ours=SCHEMA_VERSION), path=where, line=number)
    if "\\ud" in text or "\\uD" in text:  # only a JSON escape can make a lone surrogate
        cleaned: dict[str, Any] = without_surrogates(record)
        return cleaned
    return record


def read_json_file(path: str | os.PathLike[str], *, what: str = "file") -> Any:
    """A whole JSON document a user gives (a ``results.json``, a ``run.json``), parsed; an InputError naming the file otherwise.

    Guarded as a hostile input: a missing, unreadable or non-regular file, one over
    :data:`MAX_JSON_FILE_BYTES` (refused from its size, before it is read), bytes that are not
    UTF-8, malformed JSON, and values nested deeper than :data:`MAX_DEPTH` (a file of ``[[[[...``
    included: no RecursionError escapes) each raise :class:`~fairtalk.errors.InputError`. What the
    document holds is the caller's to check.
    """
    where = str(path)
    with open_input(path, what=what) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_JSON_FILE_BYTES:
            raise InputError(_MSG_FILE_TOO_BIG.format(size=size, limit=MAX_JSON_FILE_BYTES >> 20), path=where)
        raw = handle.read(MAX_JSON_FILE_BYTES + 1)
    if len(raw) > MAX_JSON_FILE_BYTES:  # grew after the size was read
        raise InputError(_MSG_FILE_TOO_BIG.format(size=len(raw), limit=MAX_JSON_FILE_BYTES >> 20), path=where)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})", path=where) from None
    try:
        document = json.loads(text)
    except RecursionError:
        raise InputError(_MSG_FILE_TOO_DEEP.format(limit=MAX_DEPTH), path=where) from None
    except ValueError as exc:
        raise InputError(_MSG_BAD_JSON.format(error=exc), path=where) from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(document) > MAX_DEPTH:  # counting first: cheap
        raise InputError(_MSG_FILE_TOO_DEEP.format(limit=MAX_DEPTH), path=where)
    return document


def _json_size(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def fit_in_record(text: str, *, beside: str = "") -> tuple[str, bool]:
    """``text`` cut (at a character) so that a JSONL record holding it and ``beside`` stays within the cap.

    A model can answer more than one record may hold (:data:`MAX_RECORD_BYTES`, counted as
    JSON, escapes included); a writer would write it, and no reader of fairtalk could read it
    back. Returns the text, cut when needed, and whether it was cut. When ``beside`` (the
    record's other long text, the context) leaves no room, ``text`` is returned as it is.

    Examples
    --------
    >>> fit_in_record("short")
    ('short', False)
    >>> text, cut = fit_in_record("x" * (MAX_RECORD_BYTES + 1))
    >>> cut, len(text) == MAX_RECORD_BYTES - RECORD_OVERHEAD - 2
    (True, True)
    """
    room = MAX_RECORD_BYTES - RECORD_OVERHEAD - (_json_size(beside) if beside else 0)
    if room <= 2 or len(text) * 6 + 2 <= room or _json_size(text) <= room:  # 6: the longest escape of a character
        return text, False
    low, high = 0, len(text)  # the longest prefix whose JSON fits: low fits, high does not
    while high - low > 1:
        middle = (low + high) // 2
        if _json_size(text[:middle]) <= room:
            low = middle
        else:
            high = middle
    return text[:low], True


def replace_surrogates(text: str) -> tuple[str, int]:
    r"""``text`` with every code point UTF-8 cannot encode (a lone surrogate) replaced by U+FFFD, and how many.

    A model or a server can return such text (one JSON escape is enough); SQLite and UTF-8
    files cannot hold it.

    Examples
    --------
    >>> replace_surrogates("ok \ud800!")
    ('ok \ufffd!', 1)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        n = sum(1 for ch in text if 0xD800 <= ord(ch) <= 0xDFFF)
        return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text), n
    return text, 0


def without_surrogates(value: Any) -> Any:
    r"""``value`` (JSON data) with every lone surrogate in its strings replaced by U+FFFD.

    Examples
    --------
    >>> without_surrogates({"a": ["x\ud800"]})
    {'a': ['x\ufffd']}
    """
    if isinstance(value, str):
        return replace_surrogates(value)[0]
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    return value


def read_objects(path: str | os.PathLike[str], *, what: str = "file", digest: Any = None) -> Iterator[tuple[int, dict[str, Any]]]:
    r"""``(line number, object)`` for every non-blank line of a JSONL file.

    The file is opened at once (so a missing file fails at the call) and read lazily.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = path.write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    >>> list(read_objects(path))
    [(1, {'a': 1}), (3, {'a': 2})]
    """
    handle = open_input(path, what=what)
    return _objects(handle, str(path), digest)


def first_record(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The first record of a JSONL file, ``{}`` when it holds none, or None when it is not a readable JSONL file.

    For telling whether a file is of a format fairtalk writes, before writing over it: a
    missing or non-regular file, bytes that are not UTF-8 or a first line that is not a JSON
    object give None, never an error.
    """
    try:
        for _, record in read_objects(path):
            return record
    except (InputError, OSError):
        return None
    return {}


def is_records_of(path: str | os.PathLike[str], keys: Iterable[str]) -> bool:
    r"""Whether ``path`` is a JSONL file whose first record has every one of ``keys`` (or one holding no record).

    How a file of a kind fairtalk writes is told from the user's own file before it is replaced.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.jsonl"
    >>> _ = path.write_text('{"id": "1", "label": "neutral"}\n', encoding="utf-8")
    >>> is_records_of(path, ("id", "label")), is_records_of(path, ("pair_id",))
    (True, False)
    """
    record = first_record(path)
    return record is not None and (not record or set(keys) <= record.keys())


def is_written_as(path: str | os.PathLike[str], test: Callable[[dict[str, Any]], bool]) -> bool:
    r"""Whether ``path`` is a readable JSONL file every record of which passes ``test`` (or one holding no record).

    How a file fairtalk writes in one fixed shape (``regard label``'s labels, ``prompts
    paraphrase``'s prompts) is told from the user's own before it is replaced: a record with a
    key fairtalk never writes there (a text, an annotator) or a value it never writes makes the
    file the user's, wherever in the file it is. :func:`is_records_of` looks at the first
    record's keys alone, for a file whose records may carry more.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.jsonl"
    >>> _ = path.write_text('{"id": "1", "label": "neutral"}\n{"id": "2", "label": "neutral", "annotator": "ann"}\n')
    >>> is_written_as(path, lambda record: record.keys() == {"id", "label"})
    False
    """
    try:
        return all(test(record) for _, record in read_objects(path))
    except (InputError, OSError):
        return False


def is_json_of(path: str | os.PathLike[str], keys: Iterable[str]) -> bool:
    """Whether ``path`` is a JSON document (within :func:`read_json_file`'s bounds): an object with every one of ``keys``."""
    try:
        document = read_json_file(path)
    except (InputError, OSError):
        return False
    return isinstance(document, dict) and set(keys) <= document.keys()


def _objects(handle: IO[bytes], where: str, digest: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    with handle:
        for number, text in numbered_lines(handle, where, digest):
            if text.strip():
                yield number, parse_object(text, where, number)


def jsonable(value: Any) -> Any:
    """A copy of ``value`` that strict JSON accepts: non-finite floats -> None, tuples -> lists (the one such helper).

    NumPy scalars and arrays (``.item()`` / ``.tolist()``) and paths are converted too;
    anything else unknown becomes its ``str``.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=str)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist"):  # numpy arrays and scalars, without importing numpy here
        return jsonable(value.tolist())
    return str(value)


def json_line(record: Mapping[str, Any]) -> str:
    r"""One record as a JSON line, newline included: text kept readable, a lone surrogate made U+FFFD.

    A lone surrogate, which no UTF-8 file can hold, is replaced as :func:`replace_surrogates`
    replaces it (in keys too), so the line can always be written and read back.

    Examples
    --------
    >>> json_line({"a": "é", "b": "x\udcff"})
    '{"a": "é", "b": "x\ufffd"}\n'
    """
    line = json.dumps(record, ensure_ascii=False)
    if _SURROGATE.search(line) is not None:  # only text can hold one: ensure_ascii=False writes it as it is
        line = json.dumps(without_surrogates(record), ensure_ascii=False)
    return line + "\n"


def write_records(handle: IO[str], records: Iterable[Mapping[str, Any]]) -> int:
    r"""Write each record as one JSON line (:func:`json_line`) to an open text ``handle``: the one JSONL writer.

    Returns how many were written. Callers open the handle, usually with
    :func:`fairtalk.files.atomic_writer` (a binary stream is wrapped in a UTF-8
    :class:`io.TextIOWrapper`).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> write_records(out, [{"a": 1}, {"b": "é"}, {"c": "\ud800"}]), out.getvalue().splitlines()
    (3, ['{"a": 1}', '{"b": "é"}', '{"c": "\ufffd"}'])
    """
    n = 0
    for record in records:
        handle.write(json_line(record))
        n += 1
    return n
