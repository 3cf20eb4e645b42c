"""Word-pair lexicons (gender, race, or a user's axis) and attribute word lists, loaded and validated.

The built-in data are typed from Appendix A of Liu et al. (COLING 2020), "Does Gender Matter?
Towards Fairness in Dialogue Systems", and ship as package data in two variants:

``paper``
    The lists exactly as printed (``gender-paper.tsv``, ``race-paper.tsv``); only PDF-extraction
    damage is repaired.
``default``
    Cleaned lists (``gender.tsv``, ``race.tsv``); every change is documented in the file header.

File format (shared by the built-in files and users' ``--lexicon my_axis.tsv``)::

    # axis: religion
    # groups: christian muslim
    # attributes: pleasant unpleasant
    church<TAB>mosque
    bible - quran

One pair a line: a group-A word or phrase and its group-B counterpart, separated by a TAB or by
``" - "`` (the format of the DialogueFairness word files). ``#`` lines are comments; ``# key: value``
lines before the first pair are metadata (``axis``, ``groups``, ``attributes``, ``variant``,
``both-sides``). A file without metadata takes its axis from the file name and the groups
``("a", "b")``.

Validation (each error is a :class:`~fairtalk.errors.LexiconError` naming ``file:line``): a
malformed line (no separator, too many columns), an empty side, a duplicate pair, and a word or
phrase on both sides. Comparisons are case-insensitive. A word on both sides leaves a swap no
direction, so it is an error unless the file's ``# both-sides:`` metadata lists it. The printed
race list has two such words (``mad``: "a lot - mad" and "mad - tight"; ``police``: the reversed
"po po - police"); ``race-paper.tsv`` declares them so that it loads exactly as printed, and the
default ``race.tsv`` fixes both. A word may have several counterparts (many-to-many).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from fairtalk.errors import LexiconError, SpecError

__all__ = [
    "AttributeList",
    "Lexicon",
    "WordPair",
    "builtin_attribute_lists",
    "builtin_axes",
    "load_attributes",
    "load_lexicon",
    "terms_on_both_sides",
]

_BUILTIN_AXES: tuple[str, ...] = ("gender", "race")
_VARIANTS: tuple[str, ...] = ("default", "paper")
_BUILTIN_ATTRIBUTES: tuple[str, ...] = ("career", "family", "pleasant", "unpleasant")
_METADATA_KEYS: tuple[str, ...] = ("axis", "groups", "attributes", "variant", "both-sides")
_ATTRIBUTE_KEYS: tuple[str, ...] = ("attribute", "name")

_MSG_UNKNOWN_AXIS = "unknown lexicon axis {given!r} (not a built-in axis nor an existing file)"
_MSG_UNKNOWN_VARIANT = "unknown lexicon variant {given!r}"
_MSG_VARIANT_FOR_FILE = "variant {given!r} applies only to built-in axes, not to a lexicon file"
_MSG_UNKNOWN_ATTRIBUTES = "unknown attribute list {given!r} (not a built-in list nor an existing file)"
_MSG_UNREADABLE = "cannot read lexicon file ({reason})"
_MSG_NOT_UTF8 = "not UTF-8 text (byte {byte:#04x})"
_MSG_NO_SEPARATOR = "malformed line: no TAB or ' - ' between the two sides: {text!r}"
_MSG_TOO_MANY_COLUMNS = "malformed line: {n} columns, expected 2 (group A, group B): {text!r}"
_MSG_EMPTY_SIDE = "empty side: no word for group {group!r}"
_MSG_DUPLICATE_PAIR = "duplicate pair {a!r} - {b!r} (first on line {first})"
_MSG_BOTH_SIDES = (
    "{word!r} is on both sides (group {group_a!r} on line {line_a}, group {group_b!r} on line "
    "{line_b}); a swap could not tell its direction (list it under '# both-sides:' to allow it)"
)
_MSG_BAD_GROUPS = "'# groups:' needs exactly two distinct names, got {value!r}"
_MSG_BAD_AXIS = "'# axis:' needs a name, got {value!r}"
_MSG_NO_PAIRS = "no word pairs in the file"
_MSG_NO_WORDS = "no words in the attribute list"
_MSG_TAB_IN_WORD = "malformed line: an attribute list holds one word or phrase a line, found a TAB: {text!r}"
_MSG_DUPLICATE_WORD = "duplicate word {word!r} (first on line {first})"

_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class WordPair:
    """One lexicon line: ``a`` (a group-A word or phrase) <-> ``b`` (its group-B counterpart)."""

    a: str
    b: str
    line: int


@dataclass(frozen=True, slots=True)
class Lexicon:
    """A validated word-pair lexicon for one axis.

    Attributes
    ----------
    axis : str
        ``"gender"``, ``"race"`` or the user's axis name.
    groups : tuple[str, str]
        Names of group A and group B, e.g. ``("male", "female")``.
    pairs : tuple[WordPair, ...]
        The pairs in file order; a word may occur in several pairs (many-to-many).
    attributes : tuple[str, ...]
        Default attribute lists for this axis, e.g. ``("career", "family")``.
    variant : str
        ``"default"``, ``"paper"`` or ``"custom"`` (a user's file).
    source : str
        The path read, or ``"builtin:gender"`` / ``"builtin:gender-paper"``.
    sha256 : str
        Hex SHA-256 of the file bytes: the lexicon's version for manifests.
    """

    axis: str
    groups: tuple[str, str]
    pairs: tuple[WordPair, ...]
    attributes: tuple[str, ...]
    variant: str
    source: str
    sha256: str


@dataclass(frozen=True, slots=True)
class AttributeList:
    """A named set of attribute words (lowercase), e.g. the paper's career words."""

    name: str
    words: frozenset[str]
    source: str
    sha256: str


def builtin_axes() -> tuple[str, ...]:
    """Return the names of the built-in lexicon axes: ``("gender", "race")``."""
    return _BUILTIN_AXES


def builtin_attribute_lists() -> tuple[str, ...]:
    """Return the names of the built-in attribute lists."""
    return _BUILTIN_ATTRIBUTES


def load_lexicon(axis_or_path: str | os.PathLike[str], *, variant: str = "default") -> Lexicon:
    """Load a built-in lexicon by axis name, or a user's lexicon file by path.

    Parameters
    ----------
    axis_or_path : str or os.PathLike
        ``"gender"`` or ``"race"`` (built-in; ``"builtin:race"`` also works), or the path of a
        lexicon file (TAB- or ``" - "``-separated pairs; see the module docstring). A bare name
        that is not a built-in axis is read as a path when such a file exists.
    variant : {"default", "paper"}
        Built-in variant: the cleaned lists or the lists exactly as printed in the paper.
        A user's file is always variant ``"custom"``; pass the default here.

    Returns
    -------
    Lexicon
        Frozen; built-in loads are cached, so repeated calls return the same object.

    Raises
    ------
    SpecError
        Unknown built-in axis or variant (the message lists the choices).
    LexiconError
        The file cannot be read or fails validation (the message names ``file:line``).

    Examples
    --------
    >>> lexicon = load_lexicon("gender")
    >>> lexicon.groups, len(lexicon.pairs)
    (('male', 'female'), 129)
    >>> pair = load_lexicon("race", variant="paper").pairs[-1]
    >>> pair.a, pair.b
    ('subliminal', 'shade')
    """
    if isinstance(axis_or_path, str):
        name = axis_or_path.removeprefix("builtin:")
        if name in _BUILTIN_AXES:
            if variant not in _VARIANTS:
                raise SpecError(
                    _MSG_UNKNOWN_VARIANT.format(given=variant), choices=_VARIANTS, given=variant
                )
            return _load_builtin(name, variant)
        if axis_or_path.startswith("builtin:") or not _looks_like_path(axis_or_path):
            raise SpecError(
                _MSG_UNKNOWN_AXIS.format(given=axis_or_path), choices=_BUILTIN_AXES, given=name
            )
    if variant != "default":
        raise SpecError(_MSG_VARIANT_FOR_FILE.format(given=variant), choices=("default",))
    path = Path(axis_or_path)
    data = _read_bytes(path)
    return _parse_lexicon(data, source=str(path), stem=path.stem, variant="custom")


def load_attributes(name_or_path: str | os.PathLike[str]) -> AttributeList:
    """Load a built-in attribute word list by name, or a user's list (one word a line) by path.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        ``"career"``, ``"family"``, ``"pleasant"``, ``"unpleasant"``, or a file path. The list's
        name comes from a ``# attribute: NAME`` header line, else from the file name.

    Returns
    -------
    AttributeList
        Words lowercased, whitespace collapsed.

    Raises
    ------
    SpecError
        An unknown name that is not an existing file.
    LexiconError
        The file cannot be read, or has a TAB in a line or a duplicate word (``file:line``).

    Examples
    --------
    >>> words = load_attributes("unpleasant").words
    >>> "kill" in words and "lie" in words and "kill lie" not in words
    True
    """
    if isinstance(name_or_path, str):
        name = name_or_path.removeprefix("builtin:")
        if name in _BUILTIN_ATTRIBUTES:
            return _load_builtin_attributes(name)
        if name_or_path.startswith("builtin:") or not _looks_like_path(name_or_path):
            raise SpecError(
                _MSG_UNKNOWN_ATTRIBUTES.format(given=name_or_path),
                choices=_BUILTIN_ATTRIBUTES,
                given=name,
            )
    path = Path(name_or_path)
    return _parse_attributes(_read_bytes(path), source=str(path), stem=path.stem)


def terms_on_both_sides(lexicon: Lexicon) -> frozenset[str]:
    """Return the (lowercased) words or phrases that occur on both sides of ``lexicon``.

    Empty for every validated file except those that declare ``# both-sides:`` (the paper's race
    list: ``mad`` and ``police``). A swapper should treat these as ambiguous.
    """
    side_a = {_key(pair.a) for pair in lexicon.pairs}
    return frozenset(side_a & {_key(pair.b) for pair in lexicon.pairs})


# --------------------------------------------------------------------------------------------
# internals


def _looks_like_path(text: str) -> bool:
    return os.sep in text or "/" in text or Path(text).suffix != "" or Path(text).exists()


def _key(text: str) -> str:
    """Normalise a word or phrase for comparisons: casefolded, whitespace collapsed."""
    return _WS.sub(" ", text).strip().casefold()


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise LexiconError(_MSG_UNREADABLE.format(reason=reason), path=str(path)) from exc


def _builtin_bytes(filename: str) -> bytes:
    return resources.files(__name__).joinpath(filename).read_bytes()


@lru_cache(maxsize=None)
def _load_builtin(axis: str, variant: str) -> Lexicon:
    stem = axis if variant == "default" else f"{axis}-{variant}"
    return _parse_lexicon(
        _builtin_bytes(f"{stem}.tsv"), source=f"builtin:{stem}", stem=axis, variant=variant
    )


@lru_cache(maxsize=None)
def _load_builtin_attributes(name: str) -> AttributeList:
    return _parse_attributes(_builtin_bytes(f"{name}.tsv"), source=f"builtin:{name}", stem=name)


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        message = _MSG_NOT_UTF8.format(byte=data[exc.start])
        raise LexiconError(message, path=source, line=line) from exc


def _lines(text: str) -> list[tuple[int, str]]:
    """Split text into (1-based line number, line without its terminator)."""
    return list(enumerate(text.splitlines(), start=1))


def _metadata(line: str) -> tuple[str, str] | None:
    """Parse a ``# key: value`` comment line; None for other comments."""
    body = line.lstrip().lstrip("#").strip()
    key, sep, value = body.partition(":")
    key = key.strip().lower()
    if not sep:
        return None
    return key, value.strip()


def _split_pair(line: str, *, source: str, number: int) -> tuple[str, str]:
    if "\t" in line:
        columns = line.split("\t")
    else:
        columns = line.split(" - ")
        if len(columns) == 1:
            raise LexiconError(
                _MSG_NO_SEPARATOR.format(text=line.strip()), path=source, line=number
            )
    if len(columns) != 2:
        message = _MSG_TOO_MANY_COLUMNS.format(n=len(columns), text=line.strip())
        raise LexiconError(message, path=source, line=number)
    return _WS.sub(" ", columns[0]).strip(), _WS.sub(" ", columns[1]).strip()


def _parse_lexicon(data: bytes, *, source: str, stem: str, variant: str) -> Lexicon:
    """Parse and validate lexicon file bytes into a Lexicon."""
    text = _decode(data, source)
    axis, groups, attributes = stem, ("a", "b"), ()
    allowed: set[str] = set()
    pairs: list[WordPair] = []
    seen_pairs: dict[tuple[str, str], int] = {}
    first_a: dict[str, int] = {}
    first_b: dict[str, int] = {}
    for number, line in _lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            meta = _metadata(stripped) if not pairs else None
            if meta is None or meta[0] not in _METADATA_KEYS:
                continue
            key, value = meta
            if key == "axis":
                if not value or len(value.split()) != 1:
                    raise LexiconError(_MSG_BAD_AXIS.format(value=value), path=source, line=number)
                axis = value
            elif key == "groups":
                names = value.split()
                if len(names) != 2 or names[0] == names[1]:
                    raise LexiconError(_MSG_BAD_GROUPS.format(value=value), path=source, line=number)
                groups = (names[0], names[1])
            elif key == "attributes":
                attributes = tuple(value.split())
            elif key == "both-sides":
                allowed.update(_key(word) for word in value.split(",") if word.strip())
            continue
        a, b = _split_pair(line, source=source, number=number)
        for side, group in ((a, groups[0]), (b, groups[1])):
            if not side:
                raise LexiconError(_MSG_EMPTY_SIDE.format(group=group), path=source, line=number)
        key_a, key_b = _key(a), _key(b)
        first = seen_pairs.setdefault((key_a, key_b), number)
        if first != number:
            message = _MSG_DUPLICATE_PAIR.format(a=a, b=b, first=first)
            raise LexiconError(message, path=source, line=number)
        first_a.setdefault(key_a, number)
        first_b.setdefault(key_b, number)
        for word in (key_a, key_b):
            if word in first_a and word in first_b and word not in allowed:
                message = _MSG_BOTH_SIDES.format(
                    word=word,
                    group_a=groups[0],
                    line_a=first_a[word],
                    group_b=groups[1],
                    line_b=first_b[word],
                )
                raise LexiconError(message, path=source, line=number)
        pairs.append(WordPair(a=a, b=b, line=number))
    if not pairs:
        raise LexiconError(_MSG_NO_PAIRS, path=source)
    return Lexicon(
        axis=axis,
        groups=groups,
        pairs=tuple(pairs),
        attributes=attributes,
        variant=variant,
        source=source,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def _parse_attributes(data: bytes, *, source: str, stem: str) -> AttributeList:
    """Parse and validate attribute list bytes (one word or phrase a line)."""
    text = _decode(data, source)
    name = stem
    first_seen: dict[str, int] = {}
    for number, line in _lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            meta = _metadata(stripped) if not first_seen else None
            if meta is not None and meta[0] in _ATTRIBUTE_KEYS and meta[1]:
                name = meta[1]
            continue
        if "\t" in stripped:
            raise LexiconError(_MSG_TAB_IN_WORD.format(text=stripped), path=source, line=number)
        word = _key(stripped)
        first = first_seen.setdefault(word, number)
        if first != number:
            message = _MSG_DUPLICATE_WORD.format(word=word, first=first)
            raise LexiconError(message, path=source, line=number)
    if not first_seen:
        raise LexiconError(_MSG_NO_WORDS, path=source)
    return AttributeList(
        name=name,
        words=frozenset(first_seen),
        source=source,
        sha256=hashlib.sha256(data).hexdigest(),
    )
