r"""Streaming corpus readers chosen by a spec string (``builtin:chitchat``, ``jsonl:PATH``, ...).

Every reader yields :class:`fairtalk.records.Context` one at a time and never holds a whole
file in memory (the built-in chitchat corpus, one 40 MB JSON document, is parsed once per
pass but its contexts are still produced lazily). Files are read in binary and decoded line
by line, so one bad line costs one counted skip, never a traceback. Lines longer than
:data:`MAX_LINE_BYTES` are skipped (``"line too long"``) while reading at most that many bytes
of them at a time.

Specs
-----
``builtin:chitchat``
    The chitchat-dataset PyPI package (offline). Each adjacent pair of turns gives one context
    (the earlier turn; the messages of one turn joined by a space) with the next turn as its
    ``response``. ``split="train"|"heldout"`` selects conversations deterministically by a hash
    of the conversation id (:data:`HELDOUT_PERCENT` percent held out).
``text:PATH``
    One context per line, one turn: a turn separator or role mark in a line (U+001E, U+0011,
    U+0012; see :mod:`fairtalk.records`) becomes a space, as in every format's text but a JSONL
    conversation's.
``tsv:PATH`` / ``csv:PATH``
    One column (``column``: a header name, or a 0-based index). The first row is a header when
    it contains the named column or a cell ``context``/``text`` (that column is then the
    default); otherwise it is data and the default is column 0. TSV is split on tabs with no
    quoting; CSV follows RFC 4180 (quoted fields may span lines).
``jsonl:PATH``
    One JSON object per line; ``field`` names the text (default ``context``, else ``text``).
    Without ``field``, ``messages`` may hold a conversation: each turn keeps its role (see
    :mod:`fairtalk.records`), empty turns are left out.
``parquet:PATH``
    A string column (``column``; default ``context``/``text``, else the first); read by
    record batch. Locations name the 1-based row.
``twitter:PATH``
    Alternating lines: odd lines are contexts, even lines the replies (``response``).
``parlai:PATH``
    ParlAI text format, ``text:...<TAB>labels:...``; ``\n``/``\t``/``__PIPE__`` escapes are
    undone, the first label becomes ``response``, other fields are ignored.
``FORMAT:PATH``
    A format a third party registered (:func:`register_corpus_format`, or the
    ``fairtalk.corpora`` entry-point group); :func:`corpus_formats` lists them all.
``PATH``
    Format by extension: ``.txt``, ``.tsv``, ``.csv``, ``.jsonl``/``.json``/``.ndjson``,
    ``.parquet``. Any line-based file may also be gzip-compressed (``.gz``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import IO

from fairtalk._registry import Registry
from fairtalk.corpora._chitchat import read_chitchat
from fairtalk.corpora._readers import (
    MAX_LINE_BYTES,
    REASONS,
    check_not_utf16,
    open_binary,
    read_csv,
    read_jsonl,
    read_parlai,
    read_parquet,
    read_text,
    read_tsv,
    read_twitter,
)
from fairtalk.corpora._tally import SYSTEM_MESSAGES, ReadSummary, Tally, kept_in_part
from fairtalk.errors import CorpusError, SpecError, path_argument
from fairtalk.records import Context

__all__ = [
    "CORPUS_FORMATS",
    "ENTRY_POINT_GROUP",
    "HELDOUT_PERCENT",
    "MAX_LINE_BYTES",
    "REASONS",
    "SYSTEM_MESSAGES",
    "check_not_utf16",
    "kept_in_part",
    "Corpus",
    "ReadSummary",
    "chitchat_split",
    "corpus_formats",
    "read_corpus",
    "register_corpus_format",
    "split_corpus",
]

#: Percentage of chitchat conversations in the ``heldout`` split.
HELDOUT_PERCENT = 10

#: Entry-point group through which other packages register corpus formats.
ENTRY_POINT_GROUP = "fairtalk.corpora"
#: The built-in schemes (``builtin:`` and the built-in formats); :func:`corpus_formats` adds plugins.
SCHEMES = ("builtin", "csv", "jsonl", "parlai", "parquet", "text", "tsv", "twitter")
BUILTINS = ("chitchat",)
SPLITS = ("all", "heldout", "train")
_EXTENSIONS = {
    ".txt": "text",
    ".tsv": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_COLUMN_FORMATS = ("csv", "parquet", "tsv")


def _read_parquet_file(tally: Tally, *, path: str, opener: Callable[[], IO[bytes]], column: str | None) -> Iterator[Context]:
    """Parquet is read by pyarrow from the path, not through ``opener``."""
    return read_parquet(tally, path=Path(path), column=column)


#: Corpus format -> its reader, ``reader(tally, *, path, opener, **options) -> Iterator[Context]``:
#: ``opener()`` opens the file in binary (gzip undone); the reader calls ``tally.emit()`` per context
#: and ``tally.skip(reason, "file:line")`` per skipped line. Only csv/tsv/parquet get ``column``, only
#: jsonl gets ``field``; a registered format gets neither.
CORPUS_FORMATS: Registry[Callable[..., Iterator[Context]]] = Registry(
    "corpus format",
    group=ENTRY_POINT_GROUP,
    base=Callable,  # type: ignore[arg-type]
    expected="a corpus reader function",
    builtins={
        "text": read_text,
        "tsv": read_tsv,
        "csv": read_csv,
        "jsonl": read_jsonl,
        "parquet": _read_parquet_file,
        "twitter": read_twitter,
        "parlai": read_parlai,
    },
)

_MSG_UNKNOWN_SCHEME = "unknown corpus format {scheme!r} in {spec!r}"
_MSG_UNKNOWN_BUILTIN = "unknown built-in corpus {name!r}"
_MSG_UNKNOWN_EXTENSION = "cannot tell the corpus format from the extension of {path!r}; prefix it with a format, e.g. text:{path}"
_MSG_MISSING = "corpus file not found"
_MSG_NOT_FILE = "corpus path is not a file"
_MSG_UNREADABLE = "cannot read corpus file ({reason})"
_MSG_BAD_SPLIT = "unknown split {split!r}"
_MSG_SPLIT_BUILTIN_ONLY = "split={split!r} is only available for builtin:chitchat"
_MSG_TURNS = "turns must be an int >= 1, got {value!r}"
_MSG_TURNS_BUILTIN_ONLY = (
    'turns={turns} is for builtin:chitchat; a JSONL corpus gives conversations as "messages": [{{"role", "content"}}, ...]'
)
_MSG_OPTION_EMPTY = "{option} is empty ({given!r}): it names no {option}"
_MSG_OPTION_FORMAT = "{option} does not apply to {fmt} corpora (only to {allowed})"


class Corpus:
    """A re-iterable stream of :class:`Context`; ``summary`` describes the latest pass; ``path`` is its file (None: built in)."""

    def __init__(self, source: str, reader: Callable[[Tally], Iterator[Context]], *, path: Path | None = None) -> None:
        self.source = source
        self.path = path
        self._reader = reader
        self._tally = Tally(source)

    def __iter__(self) -> Iterator[Context]:
        """Stream the contexts; each pass re-opens the source and resets :attr:`summary`."""
        self._tally = tally = Tally(self.source)
        return self._reader(tally)

    @property
    def summary(self) -> ReadSummary:
        """Counts of the current (or latest) pass: read, yielded, skipped by reason."""
        return self._tally.summary()

    def __repr__(self) -> str:
        return f"Corpus({self.source!r})"


def corpus_formats() -> tuple[str, ...]:
    """Every format a spec may name before ``:``, plugins included (``builtin`` is the built-in corpora).

    Examples
    --------
    >>> corpus_formats()[:4]
    ('builtin', 'csv', 'jsonl', 'parlai')
    """
    return tuple(sorted({"builtin", *CORPUS_FORMATS.names()}))


def register_corpus_format(name: str, reader: str | Callable[..., Iterator[Context]]) -> None:
    """Register a corpus format: ``FORMAT:PATH`` specs are then read by ``reader`` (or ``"module:function"``).

    Raises
    ------
    SpecError
        ``name`` is already a format (or ``builtin``), or ``reader`` is a malformed string.
    """
    if name == "builtin":
        raise SpecError(f"corpus format {name!r} is reserved for the built-in corpora")
    CORPUS_FORMATS.add(name, reader)


def chitchat_split(conversation_id: str) -> str:
    """Return ``"heldout"`` or ``"train"`` for a chitchat conversation id (stable hash)."""
    digest = hashlib.sha256(conversation_id.encode("utf-8")).digest()
    return "heldout" if int.from_bytes(digest[:8], "big") % 100 < HELDOUT_PERCENT else "train"


def split_corpus(corpus: Corpus, split: str) -> Corpus:
    """The ``train`` or ``heldout`` share of a corpus, split as ``builtin:chitchat`` is (:func:`chitchat_split`).

    Each context goes by a stable hash of its dialogue (its ``cluster``, else its text: one
    context said twice lands on one side), :data:`HELDOUT_PERCENT` percent held out, so that
    models trained on ``train`` are never audited on their training contexts. The summary
    counts the share's records (the skipped lines of the whole file too).

    Examples
    --------
    >>> corpus = Corpus("toy", lambda tally: iter([Context(str(i), f"line {i}") for i in range(100)]))
    >>> n_heldout = len(list(split_corpus(corpus, "heldout")))
    >>> n_heldout + len(list(split_corpus(corpus, "train")))
    100
    """
    if split not in ("train", "heldout"):
        raise SpecError(_MSG_BAD_SPLIT.format(split=split), choices=("heldout", "train"), given=split)
    whole = corpus._reader

    def share(tally: Tally) -> Iterator[Context]:
        for context in whole(tally):
            if chitchat_split(context.cluster or context.text) == split:
                yield context
            else:  # the other share's: not read for this one
                tally.n_read -= 1
                tally.n_yielded -= 1

    return Corpus(corpus.source, share, path=corpus.path)


def read_corpus(
    spec: str | os.PathLike[str],
    *,
    field: str | None = None,
    column: str | None = None,
    split: str = "all",
    turns: int = 1,
) -> Corpus:
    """Open a corpus by spec string for streaming.

    Parameters
    ----------
    spec : str or path
        ``builtin:chitchat``, ``FORMAT:PATH`` (text, tsv, csv, jsonl, parquet, twitter, parlai,
        or a registered format) or a bare path whose extension names the format.
    field : str, optional
        JSONL field holding the context (default ``context``, else ``text``).
    column : str, optional
        TSV/CSV/Parquet column: a header name or a 0-based index.
    split : {"all", "train", "heldout"}
        For ``builtin:chitchat`` only: the deterministic held-out split by conversation.
    turns : int
        For ``builtin:chitchat`` only: each context is the last ``turns`` turns of its dialogue
        (a multi-turn context, see :mod:`fairtalk.records`); 1, the default, is the turn alone.
        A JSONL file gives conversations as ``messages``.

    Returns
    -------
    Corpus
        Iterable of :class:`Context`; its ``summary`` counts skipped lines by reason.

    Raises
    ------
    SpecError
        Unknown format or built-in name, or an option that does not apply to the format.
    CorpusError
        The file is missing or unreadable (raised here), or a named column is absent
        (raised when iteration starts).

    Examples
    --------
    >>> corpus = read_corpus("builtin:chitchat", split="heldout")
    >>> first = next(iter(corpus))
    >>> first.response is not None
    True
    """
    text = path_argument(spec, "read_corpus: spec", what="a corpus spec or a path (a str or os.PathLike)")
    if split not in SPLITS:
        raise SpecError(_MSG_BAD_SPLIT.format(split=split), choices=SPLITS, given=split)
    fmt, target = _parse_spec(text)
    if fmt != "builtin" and split != "all":
        raise SpecError(_MSG_SPLIT_BUILTIN_ONLY.format(split=split))
    _check_options(fmt, field=field, column=column)
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
        raise SpecError(_MSG_TURNS.format(value=turns))
    if fmt != "builtin" and turns != 1:
        raise SpecError(_MSG_TURNS_BUILTIN_ONLY.format(turns=turns))
    if fmt == "builtin":
        return Corpus(text, partial(read_chitchat, split=split, split_of=chitchat_split, turns=turns))
    path = _check_file(target)
    options: dict[str, str | None] = {"column": column} if fmt in _COLUMN_FORMATS else {}
    if fmt == "jsonl":
        options["field"] = field
    reader = CORPUS_FORMATS.get(fmt)
    return Corpus(text, partial(reader, path=target, opener=partial(open_binary, path), **options), path=path)


def _parse_spec(spec: str) -> tuple[str, str]:
    """Split a spec into (format, path-or-builtin-name), validating the scheme."""
    scheme, sep, rest = spec.partition(":")
    if sep and (scheme == "builtin" or scheme in CORPUS_FORMATS):
        if scheme == "builtin" and rest not in BUILTINS:
            raise SpecError(
                _MSG_UNKNOWN_BUILTIN.format(name=rest),
                choices=[f"builtin:{b}" for b in BUILTINS],
                given=spec,
            )
        return scheme, rest
    if sep and len(scheme) > 1 and scheme.isalpha() and not Path(spec).exists():
        raise SpecError(
            _MSG_UNKNOWN_SCHEME.format(scheme=scheme, spec=spec),
            choices=[f"{s}:" for s in corpus_formats()],
            given=f"{scheme}:",
        )
    path = Path(spec)
    if not path.exists():
        raise CorpusError(_MSG_MISSING, path=spec)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    fmt = _EXTENSIONS.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        raise SpecError(
            _MSG_UNKNOWN_EXTENSION.format(path=spec),
            choices=[f"{s}:" for s in CORPUS_FORMATS.names()],
        )
    return fmt, spec


def _check_options(fmt: str, *, field: str | None, column: str | None) -> None:
    """Reject ``field``/``column`` for formats they do not apply to, and an empty one (it would name nothing)."""
    for option, given in (("field", field), ("column", column)):
        if isinstance(given, str) and not given.strip():
            raise SpecError(_MSG_OPTION_EMPTY.format(option=option, given=given))
    if field is not None and fmt != "jsonl":
        raise SpecError(_MSG_OPTION_FORMAT.format(option="field", fmt=fmt, allowed="jsonl"))
    if column is not None and fmt not in _COLUMN_FORMATS:
        allowed = ", ".join(_COLUMN_FORMATS)
        raise SpecError(_MSG_OPTION_FORMAT.format(option="column", fmt=fmt, allowed=allowed))


def _check_file(target: str) -> Path:
    """Return the path if it is a readable regular file, else raise CorpusError naming it."""
    path = Path(target)
    if not path.exists():
        raise CorpusError(_MSG_MISSING, path=target)
    if not path.is_file():
        raise CorpusError(_MSG_NOT_FILE, path=target)
    if not os.access(path, os.R_OK):
        raise CorpusError(_MSG_UNREADABLE.format(reason="permission denied"), path=target)
    return path
