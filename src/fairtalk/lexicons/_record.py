"""What a run folder records of the lexicon an audit swapped with, and that lexicon rebuilt from it without opening a path.

A result file's ``manifest.lexicon`` names the lexicon: a built-in or registered axis by its
name and variant, or a user's file (variant ``custom``) by its path and sha256. A run folder is
often read where it was not written (a baseline downloaded from CI, a colleague's audit), so
readers (``compare``, ``label``) never open the path it names: the record of a custom lexicon
carries the lexicon itself, as ``text`` (the lexicon file format, :func:`lexicon_text`) with its
``text_sha256``, and :func:`recorded_lexicon` rebuilds it from that copy, or a built-in one by
name (:func:`lexicon_by_name`, which never reads a file).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

from fairtalk.errors import InputError, LexiconError, SpecError
from fairtalk.lexicons._format import Lexicon, lexicon_text, parse_lexicon
from fairtalk.lexicons._load import builtin_attribute_lists, lexicon_by_name

__all__ = ["lexicon_record", "recorded_lexicon"]

FIELD = "manifest.lexicon"
_MSG_NOT_OBJECT = "field {field!r} must be an object, got {got}"
_MSG_NOT_STRING = "field {field!r} must be a string, got {got}"
_MSG_NO_COPY = (
    "the audit read its lexicon from a file ({source!r}), and field {field!r} holds no copy of it (written by an "
    "earlier fairtalk); fairtalk opens no path a result file names: {hint}"
)
_MSG_HASH = "field {field!r} does not match its sha256 ({field}_sha256): the file was edited; rerun the audit"
_MSG_TEXT = "field {field}: {reason}"
_MSG_NAME = "field {field!r}: {reason}"
_MSG_ATTRIBUTE_FILE = (
    "field {field!r} names the attribute list {name!r}, a file; fairtalk opens no path a result file names: "
    "give the lexicon's attributes as built-in lists ({builtin})"
)
#: How much of a recorded path an error shows.
_SHOWN = 120
#: What a reader says when a run of a custom lexicon was written before the copy was kept.
HINT_RERUN = "rerun the audit with this fairtalk"


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def lexicon_record(lexicon: Lexicon) -> dict[str, Any]:
    """The manifest's ``lexicon``: axis, groups, variant, source, sha256, size and lists, and for a custom one its copy.

    The copy (``text``, ``text_sha256``) is kept for every lexicon that is no built-in or
    registered axis (variant ``custom``) and that the file format can hold exactly (a
    lexicon built in Python whose names hold spaces cannot be written: then there is none, and
    a reader asks for a rerun).

    Examples
    --------
    >>> from fairtalk.lexicons import load_lexicon
    >>> record = lexicon_record(load_lexicon("gender"))
    >>> record["source"], "text" in record
    ('builtin:gender', False)
    """
    record: dict[str, Any] = {
        "axis": lexicon.axis,
        "groups": list(lexicon.groups),
        "variant": lexicon.variant,
        "source": lexicon.source,
        "sha256": lexicon.sha256,
        "n_pairs": len(lexicon.pairs),
        "attributes": list(lexicon.attributes),
    }
    if lexicon.variant == "custom":
        text = lexicon_text(lexicon)
        if _same(lexicon, text):
            record["text"] = text
            record["text_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return record


def _same(lexicon: Lexicon, text: str) -> bool:
    """Whether ``text`` parses back to ``lexicon``'s groups, pairs and settings."""
    try:
        back = parse_lexicon(text.encode("utf-8"), source="", stem=lexicon.axis, variant=lexicon.variant)
    except LexiconError:
        return False
    fields = ("pairs", "keep", "needs_determiner", "markers", "needs_cue", "attributes", "groups")
    pairs = [(p.a, p.b, p.direction) for p in lexicon.pairs] == [(p.a, p.b, p.direction) for p in back.pairs]
    return pairs and all(getattr(back, name) == getattr(lexicon, name) for name in fields if name != "pairs")


def _string(record: Mapping[str, Any], key: str, path: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(_MSG_NOT_STRING.format(field=f"{FIELD}.{key}", got=_kind(value)), path=path)
    return value


def recorded_lexicon(record: object, *, axis: str, path: str, hint: str = HINT_RERUN, attributes: bool = True) -> Lexicon:
    """The lexicon a result file's ``manifest.lexicon`` names, as axis ``axis``: its copy, or a built-in one by name.

    Never opens a path the record names. A custom lexicon is rebuilt from its ``text`` (checked
    against ``text_sha256`` and parsed as a lexicon file); its ``source`` and ``sha256`` are
    those of the file the audit read. Any other is loaded by its axis name and variant.

    Parameters
    ----------
    record
        The parsed ``manifest.lexicon`` (None: the built-in or registered lexicon named ``axis``).
    axis
        The result's axis (the lexicon's axis, and its name when the record names none).
    path
        The result file, named in every error.
    hint
        What the user can do when a custom lexicon has no copy (a file written before the copy
        was kept): :data:`HINT_RERUN`, or the reader's option that names the lexicon.
    attributes
        Whether a custom lexicon's attribute lists are used: then each must be a built-in list
        (a file name in a record is never opened); else they are left out.

    Raises
    ------
    InputError
        A record of the wrong shape, a custom lexicon without its copy, a copy that does not
        match its hash or does not parse, an axis name this installation does not know, or (with
        ``attributes``) an attribute list that is a file; each names ``path`` and the field.
    """
    if record is None:
        record = {}
    if not isinstance(record, Mapping):
        raise InputError(_MSG_NOT_OBJECT.format(field=FIELD, got=_kind(record)), path=path)
    variant = _string(record, "variant", path) or "default"
    if variant != "custom":
        name = _string(record, "axis", path) or axis
        try:
            return lexicon_by_name(name, variant=variant)
        except SpecError as exc:
            raise InputError(_MSG_NAME.format(field=FIELD, reason=exc), path=path) from None
    lexicon = _from_copy(record, axis, path, hint)
    builtin = builtin_attribute_lists()
    for name in lexicon.attributes if attributes else ():
        if name.removeprefix("builtin:") not in builtin:
            message = _MSG_ATTRIBUTE_FILE.format(field=f"{FIELD}.text", name=name, builtin=", ".join(builtin))
            raise InputError(message, path=path)
    return lexicon if attributes else dataclasses.replace(lexicon, attributes=())


def _from_copy(record: Mapping[str, Any], axis: str, path: str, hint: str) -> Lexicon:
    """A custom lexicon rebuilt from the record's ``text``, its hash checked."""
    text = _string(record, "text", path)
    digest = _string(record, "text_sha256", path)
    source = _string(record, "source", path) or ""
    if text is None:
        shown = source if len(source) <= _SHOWN else source[:_SHOWN] + "..."  # a name from the file, never its content
        raise InputError(_MSG_NO_COPY.format(source=shown, field=f"{FIELD}.text", hint=hint), path=path)
    data = text.encode("utf-8", "surrogatepass")
    if digest != hashlib.sha256(data).hexdigest():
        raise InputError(_MSG_HASH.format(field=f"{FIELD}.text"), path=path)
    try:
        lexicon = parse_lexicon(data, source=path, stem=axis, variant="custom")
    except LexiconError as exc:
        where = f"{FIELD}.text" if exc.line is None else f"{FIELD}.text, line {exc.line}"
        raise InputError(_MSG_TEXT.format(field=where, reason=exc.message), path=path) from None
    recorded = _string(record, "sha256", path)
    return dataclasses.replace(lexicon, axis=axis, source=source, sha256=recorded or lexicon.sha256)
