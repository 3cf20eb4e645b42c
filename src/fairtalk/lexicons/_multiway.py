"""Multi-way axes: one lexicon file with a column per group, read as the two-group lexicon of any pair.

A multi-way file has ``# groups:`` with three or more names and one TAB-separated column a group
(``-``: no counterpart). :func:`pair_lexicon` writes the two chosen columns as an ordinary
two-group lexicon and parses it, so every check of the two-group format applies: rows with a
``-`` or the same word on both sides are left out, and their words become the markers of their
group (``# markers-a:``/``# markers-b:``) for the validity check.

Its ``#`` lines follow the two-group format's rules (:class:`~fairtalk.lexicons._format._Header`):
the settings ``axis``, ``groups`` (once each), ``variant``, and ``keep``, ``needs-determiner``,
``attributes`` (shared by every pair) go before the first row; one after it, one that looks like a
misspelt setting, or a setting of the two-group format only (``both-sides``, ``needs-cue``,
``markers-a``, ``markers-b``) is an error. Other ``#`` lines are comments.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from fairtalk.errors import LexiconError, SpecError
from fairtalk.lexicons._format import (
    _LEXICON_SETTINGS,
    _METADATA_KEYS,
    Lexicon,
    _axis,
    _decode,
    _Header,
    _lines,
    _Settings,
    normalize,
    parse_lexicon,
)

__all__ = ["MultiwayLexicon", "is_multiway", "pair_lexicon", "parse_multiway"]

_MSG_COLUMNS = "a multi-way lexicon has one column a group ({n} groups), found {got}"
_MSG_GROUP = "{axis!r} has no group {given!r}"
_MSG_SAME = "a pair of groups needs two different groups, got {given!r} twice"
_MSG_BAD_GROUPS = "'# groups:' of a multi-way lexicon needs three or more distinct names without '-', separated by spaces"
_MSG_NO_GROUPS = "a row of words before the '# groups:' line: a multi-way lexicon names its groups first"
_MSG_EMPTY_CELL = "empty cell: no word for group {group!r} (write '-' for no counterpart)"
_MSG_NO_WORD = "a row with no word ('-' in every column)"
_MSG_NO_ROWS = "no rows of words in the file"
#: Settings every pair of groups shares; ``axis``, ``groups`` and ``variant`` are the file's own.
_SHARED_KEYS = ("keep", "needs-determiner", "attributes")
#: The two-group format's rules, with the settings a multi-way file reads; its other ones are errors here.
_MULTIWAY_SETTINGS = _Settings(
    ("axis", "groups", "variant", *_SHARED_KEYS),
    "row",
    kind="multi-way lexicon",
    unread=tuple(key for key in _METADATA_KEYS if key not in ("axis", "groups", "variant", *_SHARED_KEYS)),
    once=_LEXICON_SETTINGS.once,
)


@dataclass(frozen=True, slots=True)
class MultiwayLexicon:
    """A multi-way file: its groups, rows (None: no counterpart), shared header lines and hash."""

    axis: str
    groups: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]
    header: tuple[str, ...]
    source: str
    sha256: str


def is_multiway(data: bytes) -> bool:
    """True when the file's ``# groups:`` line names three or more groups."""
    for line in data.decode("utf-8-sig", "replace").splitlines():
        body = line.strip().lstrip("#").strip()
        if line.strip().startswith("#") and body.lower().startswith("groups:"):
            return len(body.partition(":")[2].split()) > 2
        if line.strip() and not line.strip().startswith("#"):
            return False
    return False


def parse_multiway(data: bytes, *, source: str, stem: str) -> MultiwayLexicon:
    """Parse a multi-way file: its ``#`` lines by the two-group format's rules, then one row of words a line.

    Raises
    ------
    LexiconError
        Not UTF-8; a setting after the first row, misspelt, of the two-group format only, or
        ``# axis:``/``# groups:`` given twice; fewer than three distinct groups; a row before
        ``# groups:``, with another number of columns, an empty cell or no word; no rows.
    """
    text = _decode(data, source)
    axis, groups = stem, tuple[str, ...]()
    header = _Header(_MULTIWAY_SETTINGS, source)
    shared: list[str] = []
    rows: list[tuple[str | None, ...]] = []
    for number, line in _lines(text, source):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            meta = header.setting(stripped, number=number, started=bool(rows))
            if meta is None:
                continue
            key, value = meta
            if key == "axis":
                axis = _axis(value, source=source, number=number)
            elif key == "groups":
                groups = _groups(value, source=source, number=number)
            elif key in _SHARED_KEYS:
                shared.append(stripped)
            continue
        rows.append(_row(line, groups, source=source, number=number))
    if not rows:
        raise LexiconError(_MSG_NO_ROWS, path=source)
    return MultiwayLexicon(axis, groups, tuple(rows), tuple(shared), source, hashlib.sha256(data).hexdigest())


def _groups(value: str, *, source: str, number: int) -> tuple[str, ...]:
    """The names of a ``# groups:`` line: three or more, distinct, none with the ``-`` of ``AXIS:A-B``."""
    names = tuple(value.split())
    if len(names) < 3 or len(set(names)) != len(names) or any("-" in name for name in names):
        raise LexiconError(_MSG_BAD_GROUPS, path=source, line=number)
    return names


def _row(line: str, groups: tuple[str, ...], *, source: str, number: int) -> tuple[str | None, ...]:
    """One row of words, a cell a group (None for ``-``: no counterpart)."""
    if not groups:
        raise LexiconError(_MSG_NO_GROUPS, path=source, line=number)
    cells = [cell.strip() for cell in line.split("\t")]
    if len(cells) != len(groups):
        raise LexiconError(_MSG_COLUMNS.format(n=len(groups), got=len(cells)), path=source, line=number)
    for cell, group in zip(cells, groups, strict=True):
        if not cell:
            raise LexiconError(_MSG_EMPTY_CELL.format(group=group), path=source, line=number)
    if all(cell == "-" for cell in cells):
        raise LexiconError(_MSG_NO_WORD, path=source, line=number)
    return tuple(None if cell == "-" else cell for cell in cells)


def pair_lexicon(multi: MultiwayLexicon, group_a: str, group_b: str, *, variant: str) -> Lexicon:
    """The two-group lexicon of ``group_a`` (side a) and ``group_b`` (side b), axis ``AXIS:A-B``."""
    for given in (group_a, group_b):
        if given not in multi.groups:
            raise SpecError(_MSG_GROUP.format(axis=multi.axis, given=given), choices=multi.groups, given=given)
    if group_a == group_b:
        raise SpecError(_MSG_SAME.format(given=group_a))
    i, j = multi.groups.index(group_a), multi.groups.index(group_b)
    pairs, markers_a, markers_b = [], [], []
    for row in multi.rows:
        a, b = row[i], row[j]
        if a and b and normalize(a) != normalize(b):
            pairs.append(f"{a}\t{b}")
        else:
            markers_a += [a] if a else []
            markers_b += [b] if b else []
    lines = [
        f"# axis: {multi.axis}:{group_a}-{group_b}",
        f"# groups: {group_a} {group_b}",
        *multi.header,
        f"# source: {multi.source} ({multi.sha256})",
    ]
    if markers_a:
        lines.append("# markers-a: " + ", ".join(markers_a))
    if markers_b:
        lines.append("# markers-b: " + ", ".join(markers_b))
    data = "\n".join([*lines, *pairs]).encode("utf-8") + b"\n"
    return parse_lexicon(data, source=f"{multi.source}:{group_a}-{group_b}", stem=multi.axis, variant=variant)
