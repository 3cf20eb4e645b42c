"""Multi-way axes: one lexicon file with a column per group, read as the two-group lexicon of any pair.

A multi-way file has ``# groups:`` with three or more names and one TAB-separated column a group
(``-``: no counterpart). :func:`pair_lexicon` writes the two chosen columns as an ordinary
two-group lexicon and parses it, so every check of the two-group format applies: rows with a
``-`` or the same word on both sides are left out, and their words become the markers of their
group (``# markers-a:``/``# markers-b:``) for the validity check.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from fairtalk.errors import LexiconError, SpecError
from fairtalk.lexicons._format import Lexicon, normalize, parse_lexicon

__all__ = ["MultiwayLexicon", "is_multiway", "pair_lexicon", "parse_multiway"]

_MSG_COLUMNS = "a multi-way lexicon has one column a group ({n} groups), found {got}"
_MSG_GROUP = "{axis!r} has no group {given!r}"
_MSG_SAME = "a pair of groups needs two different groups, got {given!r} twice"
_SHARED_KEYS = ("keep", "needs-determiner", "attributes")


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
    """Parse a multi-way file (its rows are checked for the number of columns)."""
    text = data.decode("utf-8-sig")
    axis, groups = stem, tuple[str, ...]()
    header: list[str] = []
    rows: list[tuple[str | None, ...]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            key, _, value = stripped.lstrip("#").strip().partition(":")
            key = key.strip().lower()
            if key == "axis" and value.strip():
                axis = value.strip()
            elif key == "groups":
                groups = tuple(value.split())
            elif key in _SHARED_KEYS:
                header.append(stripped)
            continue
        cells = [cell.strip() for cell in line.split("\t")]
        if len(cells) != len(groups):
            message = _MSG_COLUMNS.format(n=len(groups), got=len(cells))
            raise LexiconError(message, path=source, line=number)
        rows.append(tuple(None if cell in ("", "-") else cell for cell in cells))
    return MultiwayLexicon(axis, groups, tuple(rows), tuple(header), source, hashlib.sha256(data).hexdigest())


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
