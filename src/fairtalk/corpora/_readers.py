"""Format readers behind :func:`fairtalk.corpora.read_corpus`: bytes in, contexts out, skips counted."""

from __future__ import annotations

import codecs
import csv
import gzip
import json
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from fairtalk._jsonl import replace_surrogates
from fairtalk.corpora._tally import BAD_DIALOGUE, REPLY_PREFIX, SYSTEM_MESSAGES, Tally
from fairtalk.errors import CorpusError
from fairtalk.records import Context, join_turns

if TYPE_CHECKING:
    import pyarrow as pa

#: Lines longer than this many bytes are skipped with reason ``"line too long"``; such a line
#: is consumed in chunks of at most this size, never held whole.
MAX_LINE_BYTES = 1_000_000
_DRAIN_CHUNK = 1 << 16
_PARQUET_BATCH = 8192
_HEADER_NAMES = ("context", "text")
_ROLES = ("user", "assistant", "system")
#: JSONL fields naming the dialogue a context belongs to (its cluster), in order of preference.
_CLUSTER_FIELDS = ("cluster", "dialogue_id", "conversation_id")

# Skip reasons: the keys of ReadSummary.skipped.
NOT_UTF8 = "not UTF-8"
TOO_LONG = "line too long"
EMPTY_LINE = "empty line"
EMPTY_VALUE = "empty value"
BAD_JSON = "malformed JSON"
NOT_OBJECT = "JSON line is not an object"
MISSING_FIELD = "missing field"
NOT_STRING = "field is not a string"
FEW_COLUMNS = "too few columns"
#: A row with text in more cells than the header (or the first row) has: an unquoted separator in its text.
MANY_COLUMNS = "too many columns"
BAD_CSV = "malformed CSV"
NO_TEXT = "no text: field"
NO_REPLY = "reply: missing (odd number of lines)"
SURROGATE = "lone surrogate escape (not UTF-8 text)"
BAD_MESSAGES = "malformed messages (a list of {role: user|assistant|system, content: text} with a user turn)"
REASONS = (
    NOT_UTF8,
    TOO_LONG,
    EMPTY_LINE,
    EMPTY_VALUE,
    BAD_JSON,
    NOT_OBJECT,
    MISSING_FIELD,
    NOT_STRING,
    FEW_COLUMNS,
    MANY_COLUMNS,
    BAD_CSV,
    NO_TEXT,
    NO_REPLY,
    SURROGATE,
    BAD_MESSAGES,
    SYSTEM_MESSAGES,
    BAD_DIALOGUE,
)


_MSG_READ_FAILED = "cannot read corpus file ({reason})"
_MSG_NO_COLUMN = "no column {column!r}; the header has: {columns}"
_MSG_COLUMN_RANGE = "column {column} is out of range: the first row has {n} column(s)"
_MSG_NOT_PARQUET = "not a readable Parquet file ({reason})"
_MSG_PARQUET_NO_COLUMN = "no column {column!r}; the Parquet file has: {columns}"
_MSG_PARQUET_TYPE = "column {column!r} holds {type}, not text"
_MSG_PARQUET_EMPTY = "the Parquet file has no columns"
_MSG_UTF16 = "UTF-16 text (it starts with a UTF-16 byte order mark): save it as UTF-8"
_MSG_UTF16_NO_BOM = "UTF-16 text (a NUL byte at every other position of its start, no byte order mark): save it as UTF-8"
#: How much of a text's start :func:`check_not_utf16` reads for UTF-16 without a byte order mark.
_UTF16_SNIFF_BYTES = 1024
_MSG_QUOTE_OPEN = (
    "the quote opened on line {line} is never closed, and too many lines follow such quotes to read them again: "
    "close it (or double the quote inside the field)"
)
#: How many lines, in all, :func:`read_csv` reads again after malformed records that spanned lines.
_MAX_CSV_REREAD = 1_000_000

Opener = Callable[[], IO[bytes]]


def open_binary(path: Path) -> IO[bytes]:
    """Open a corpus file for binary reading, decompressing ``.gz`` transparently."""
    try:
        if path.suffix.lower() == ".gz":
            return cast(IO[bytes], gzip.open(path, "rb"))
        return open(path, "rb")  # noqa: SIM115 - the reader closes it
    except OSError as exc:
        raise CorpusError(_MSG_READ_FAILED.format(reason=exc.strerror or exc), path=str(path)) from exc


def check_not_utf16(start: bytes, path: str) -> None:
    """CorpusError where ``start`` (a text's first bytes) is UTF-16, not UTF-8.

    Either it opens with a UTF-16 byte order mark, or, without one, its first KiB holds a NUL byte at every other
    position and none between them (UTF-16LE or BE of text in Latin script), over two characters at least: a NUL
    byte here and there in UTF-8 text is not UTF-16, and is read as it was.
    """
    if start.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise CorpusError(_MSG_UTF16, path=path)
    sample = start[:_UTF16_SNIFF_BYTES]
    sample = sample[: len(sample) // 2 * 2]  # whole code units (a line's last byte is UTF-16LE's newline, 0A, alone)
    if len(sample) < 4:
        return
    even, odd = sample[0::2], sample[1::2]
    if (not odd.strip(b"\0") and b"\0" not in even) or (not even.strip(b"\0") and b"\0" not in odd):
        raise CorpusError(_MSG_UTF16_NO_BOM, path=path)


def iter_lines(path: str, opener: Opener) -> Iterator[tuple[int, str | None, str | None]]:
    """Yield ``(line number, text, None)`` per decodable line, ``(n, None, reason)`` otherwise."""
    lineno = 0
    try:
        with opener() as fh:
            while raw := fh.readline(MAX_LINE_BYTES + 1):
                lineno += 1
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    while (chunk := fh.readline(_DRAIN_CHUNK)) and not chunk.endswith(b"\n"):
                        pass
                    yield lineno, None, TOO_LONG
                    continue
                if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                elif lineno == 1:
                    check_not_utf16(raw, path)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    yield lineno, None, NOT_UTF8
                    continue
                yield lineno, text.rstrip("\r\n"), None
    except (OSError, EOFError, zlib.error) as exc:
        raise CorpusError(_MSG_READ_FAILED.format(reason=exc), path=path, line=lineno + 1) from exc


def good_lines(path: str, opener: Opener, tally: Tally, *, keep_empty: bool = False) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, text)`` for usable lines, counting the others in ``tally``."""
    for lineno, text, reason in iter_lines(path, opener):
        if text is None:
            tally.skip(reason or NOT_UTF8, f"{path}:{lineno}")
        elif not keep_empty and not text.strip():
            tally.skip(EMPTY_LINE, f"{path}:{lineno}")
        else:
            yield lineno, text


def _one_turn(text: str) -> str:
    """A plain text as one turn: a turn separator or role mark in it (U+001E, U+0011, U+0012) becomes a space, stripped.

    Only a conversation (JSONL ``messages``) makes a multi-turn context; a control character in
    a text line, cell or value is no turn boundary (:func:`fairtalk.records.join_turns`).
    """
    return join_turns([text]).strip()


def _context(path: str, lineno: int, text: str, response: str | None = None, cluster: str | None = None) -> Context:
    return Context(id=f"{Path(path).name}:{lineno}", text=text, origin=f"{path}:{lineno}", response=response, cluster=cluster)


def read_text(tally: Tally, *, path: str, opener: Opener) -> Iterator[Context]:
    """Plain text: one context per line."""
    for lineno, text in good_lines(path, opener, tally):
        tally.emit()
        yield _context(path, lineno, _one_turn(text))


def read_tsv(tally: Tally, *, path: str, opener: Opener, column: str | None) -> Iterator[Context]:
    """Tab-separated values (no quoting): one column per row."""
    rows = ((lineno, text.split("\t")) for lineno, text in good_lines(path, opener, tally))
    return _column_contexts(rows, column=column, path=path, tally=tally)


def read_csv(tally: Tally, *, path: str, opener: Opener, column: str | None) -> Iterator[Context]:
    """Comma-separated values (RFC 4180 quoting): one column per row; locations name a record's last line.

    A malformed record (a quote never closed, text after a closing quote) is skipped as
    ``malformed CSV`` at the line it began on; when it spanned several lines, the lines after
    its first are read again, so one stray quote costs one record, not the rest of the file.
    """
    csv.field_size_limit(max(csv.field_size_limit(), MAX_LINE_BYTES))
    return _column_contexts(_csv_rows(tally, path=path, opener=opener), column=column, path=path, tally=tally)


class _CsvFeed:
    """The lines csv.reader reads: the file's usable lines after any to read again; keeps the current record's lines."""

    def __init__(self, source: Iterator[tuple[int, str]]) -> None:
        self.source = source
        self.again: deque[tuple[int, str]] = deque()
        self.record: list[tuple[int, str]] = []
        self.n_again = 0

    def __iter__(self) -> _CsvFeed:
        return self

    def __next__(self) -> str:
        item = self.again.popleft() if self.again else next(self.source)
        self.record.append(item)
        return item[1] + "\n"

    def read_again(self, *, path: str) -> None:
        """Queue the current record's lines after its first to be read again (its first is skipped)."""
        rest = self.record[1:]
        self.n_again += len(rest)
        if self.n_again > _MAX_CSV_REREAD:
            raise CorpusError(_MSG_QUOTE_OPEN.format(line=self.record[0][0]), path=path, line=self.record[0][0])
        self.again.extendleft(reversed(rest))


def _csv_rows(tally: Tally, *, path: str, opener: Opener) -> Iterator[tuple[int, list[str]]]:
    """``(last line, cells)`` per CSV record, malformed ones counted (and the lines after their first read again)."""
    feed = _CsvFeed(good_lines(path, opener, tally, keep_empty=True))
    reader = csv.reader(feed, strict=True)
    while True:
        feed.record = []
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error:
            tally.skip(BAD_CSV, f"{path}:{feed.record[0][0] if feed.record else '?'}")
            if len(feed.record) > 1:
                feed.read_again(path=path)
                reader = csv.reader(feed, strict=True)
            continue
        lineno = feed.record[-1][0]
        if not any(cell.strip() for cell in row):
            tally.skip(EMPTY_LINE, f"{path}:{lineno}")
            continue
        yield lineno, row


def _resolve_column(cells: list[str], column: str | None, *, path: str, lineno: int) -> tuple[int, bool]:
    """From the first row, return (column index, whether that row is a header)."""
    names = [cell.strip().lower() for cell in cells]
    is_header = any(name in _HEADER_NAMES for name in names)
    if column is None:
        default = next((names.index(name) for name in _HEADER_NAMES if name in names), 0)
        return default, is_header
    if column.isdigit():
        index = int(column)
        if index >= len(cells):
            raise CorpusError(_MSG_COLUMN_RANGE.format(column=index, n=len(cells)), path=path, line=lineno)
        return index, is_header
    wanted = column.strip().lower()
    if wanted not in names:
        columns = ", ".join(cell.strip() for cell in cells)
        raise CorpusError(_MSG_NO_COLUMN.format(column=column, columns=columns), path=path, line=lineno)
    return names.index(wanted), True


def _column_contexts(rows: Iterable[tuple[int, list[str]]], *, column: str | None, path: str, tally: Tally) -> Iterator[Context]:
    """Pick one column of each row (after header detection on the first row)."""
    index: int | None = None
    width = 0
    for lineno, cells in rows:
        if index is None:
            index, is_header = _resolve_column(cells, column, path=path, lineno=lineno)
            width = max(len(cells), index + 1)
            if is_header:
                continue
        where = f"{path}:{lineno}"
        if index >= len(cells):
            tally.skip(FEW_COLUMNS, where)
            continue
        if any(cell.strip() for cell in cells[width:]):
            tally.skip(MANY_COLUMNS, where)
            continue
        text = _one_turn(cells[index])
        if not text:
            tally.skip(EMPTY_VALUE, where)
            continue
        tally.emit()
        yield _context(path, lineno, text)


def read_jsonl(tally: Tally, *, path: str, opener: Opener, field: str | None) -> Iterator[Context]:
    """JSON Lines: one object per line; ``field`` (default context, else text); string ``response`` kept.

    Without ``field``, an object may hold a conversation instead: ``messages``, a list of
    ``{"role", "content"}`` (user and assistant turns, oldest first; system messages are left
    out (a model that takes a system prompt gets one as an option): each conversation kept without them is counted under
    :data:`SYSTEM_MESSAGES`). Its turns up to the last user message become one
    multi-turn context, each turn with its role (empty ones left out); the reply after it the response.
    A ``cluster`` (or ``dialogue_id``, ``conversation_id``) field names the context's dialogue.
    """
    for lineno, line in good_lines(path, opener, tally):
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            tally.skip(BAD_JSON, where)
            continue
        if not isinstance(obj, dict):
            tally.skip(NOT_OBJECT, where)
            continue
        key = field if field is not None else next((k for k in _HEADER_NAMES if k in obj), None)
        conversation = _conversation(obj.get("messages")) if field is None and "messages" in obj else None
        n_system = 0
        if conversation is not None:
            value, trailing, n_system = conversation
            obj = {**obj, "response": obj.get("response", trailing)}
        elif key is None or key not in obj:
            tally.skip(BAD_MESSAGES if field is None and "messages" in obj else MISSING_FIELD, where)
            continue
        else:
            value = obj[key]
        if not isinstance(value, str):
            tally.skip(NOT_STRING, where)
            continue
        if not value.strip():
            tally.skip(EMPTY_VALUE, where)
            continue
        if replace_surrogates(value)[1]:
            tally.skip(SURROGATE, where)
            continue
        response = obj.get("response")
        if isinstance(response, str):
            response = replace_surrogates(response)[0]
        cluster = _cluster(obj, tally, where)
        _count_system(tally, n_system, where)
        tally.emit()
        yield _context(
            path,
            lineno,
            value.strip(),
            response if isinstance(response, str) else None,
            cluster,
        )


def _cluster(obj: dict[str, object], tally: Tally, where: str) -> str | None:
    """The record's dialogue: its first usable cluster field as text (``12.0`` is ``"12"``), else None.

    A record whose cluster fields are all unusable is its own dialogue, counted under :data:`BAD_DIALOGUE`.
    """
    given = [obj[k] for k in _CLUSTER_FIELDS if k in obj]
    for value in given:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
            return str(value)
    if given:
        tally.skip(BAD_DIALOGUE, where, record=False)
    return None


def _count_system(tally: Tally, n_system: int, where: str) -> None:
    """Count a conversation that is kept without its system messages."""
    if n_system:
        tally.skip(SYSTEM_MESSAGES, where, record=False)


def _conversation(messages: object) -> tuple[str, str | None, int] | None:
    """A ``messages`` list as one multi-turn context, the assistant reply after it and the system messages left out.

    None when malformed. Each turn keeps its role; an empty turn is left out, never shifting
    another's role. The context ends with the last user turn that has text ("" when none has:
    an empty value).
    """
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and isinstance(m.get("content"), str) and m.get("role") in _ROLES for m in messages
    ):
        return None
    turns = [(m["role"], m["content"].strip()) for m in messages if m["role"] != "system"]
    n_system = len(messages) - len(turns)
    said = [(role, text) for role, text in turns if text]
    last_user = max((i for i, (role, _) in enumerate(said) if role == "user"), default=None)
    if last_user is None:
        return ("", None, n_system) if any(role == "user" for role, _ in turns) else None
    roles, texts = zip(*said[: last_user + 1])
    after = said[last_user + 1 :]
    return join_turns(texts, roles), (after[0][1] if after else None), n_system


def read_twitter(tally: Tally, *, path: str, opener: Opener) -> Iterator[Context]:
    """Alternating lines: odd lines are contexts, the even line after each is its reply."""
    pending: tuple[int, str] | None = None
    for lineno, text, reason in iter_lines(path, opener):
        where = f"{path}:{lineno}"
        if lineno % 2 == 1:
            pending = None
            if text is None or not text.strip():
                tally.skip(reason or EMPTY_LINE, where)
            else:
                pending = (lineno, _one_turn(text))
            continue
        if pending is None:
            continue
        reply = None if text is None else text.strip()
        if not reply:
            tally.skip(REPLY_PREFIX + (reason or EMPTY_LINE), where, record=False)
        tally.emit()
        yield _context(path, pending[0], pending[1], reply or None)
        pending = None
    if pending is not None:
        tally.skip(NO_REPLY, f"{path}:{pending[0]}", record=False)
        tally.emit()
        yield _context(path, pending[0], pending[1])


def _parlai_unescape(value: str) -> str:
    return value.replace("\\t", "\t").replace("\\n", "\n").replace("__PIPE__", "|")


def read_parlai(tally: Tally, *, path: str, opener: Opener) -> Iterator[Context]:
    """ParlAI text format: ``text:`` is the context, the first of ``labels:``/``eval_labels:`` the reply."""
    for lineno, line in good_lines(path, opener, tally):
        fields: dict[str, str] = {}
        for part in line.split("\t"):
            key, sep, value = part.partition(":")
            if sep:
                fields.setdefault(key, value)
        where = f"{path}:{lineno}"
        if "text" not in fields:
            tally.skip(NO_TEXT, where)
            continue
        text = _one_turn(_parlai_unescape(fields["text"]))
        if not text:
            tally.skip(EMPTY_VALUE, where)
            continue
        labels = fields.get("labels", fields.get("eval_labels"))
        response = None if labels is None else _parlai_unescape(labels.split("|")[0]).strip()
        tally.emit()
        yield _context(path, lineno, text, response or None)


def _parquet_column(names: list[str], column: str | None, path: str) -> str:
    if not names:
        raise CorpusError(_MSG_PARQUET_EMPTY, path=path)
    lowered = [name.lower() for name in names]
    if column is None:
        return next((names[lowered.index(n)] for n in _HEADER_NAMES if n in lowered), names[0])
    if column.isdigit() and int(column) < len(names):
        return names[int(column)]
    if column.lower() in lowered:
        return names[lowered.index(column.lower())]
    raise CorpusError(_MSG_PARQUET_NO_COLUMN.format(column=column, columns=", ".join(names)), path=path)


def read_parquet(tally: Tally, *, path: Path, column: str | None) -> Iterator[Context]:
    """Parquet: one string column, read record batch by record batch; locations name the row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    where_file = str(path)
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise CorpusError(_MSG_NOT_PARQUET.format(reason=exc), path=where_file) from exc
    row = 0
    try:
        names = list(pf.schema_arrow.names)
        name = _parquet_column(names, column, where_file)
        kind = pf.schema_arrow.field(name).type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)):
            raise CorpusError(_MSG_PARQUET_TYPE.format(column=name, type=kind), path=where_file)
        for batch in pf.iter_batches(batch_size=_PARQUET_BATCH, columns=[name]):
            for value in _parquet_texts(batch.column(0)):
                row += 1
                if isinstance(value, bytes):
                    tally.skip(NOT_UTF8, f"{where_file}:{row}")
                    continue
                text = _one_turn(value or "")
                if not text:
                    tally.skip(EMPTY_VALUE, f"{where_file}:{row}")
                    continue
                tally.emit()
                yield _context(where_file, row, text)
    except (pa.ArrowException, OSError) as exc:
        raise CorpusError(_MSG_NOT_PARQUET.format(reason=exc), path=where_file, line=row + 1) from exc
    finally:
        pf.close()


def _parquet_texts(values: pa.Array) -> list[str | bytes | None]:
    """A string column's values; a value that is not UTF-8 stays bytes (the others are decoded)."""
    try:
        return cast(list[str | bytes | None], values.to_pylist())
    except UnicodeDecodeError:
        pass
    import pyarrow as pa

    texts: list[str | bytes | None] = []
    for raw in values.cast(pa.large_binary()).to_pylist():
        try:
            texts.append(None if raw is None else raw.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append(raw)
    return texts
