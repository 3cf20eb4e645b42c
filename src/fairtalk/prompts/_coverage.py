"""What labelled completions cover, as the paper-004 analysis checks it: pairs that can have a gap, small cells.

A pair's regard gap needs completions labelled negative, neutral or positive for both its
groups. :func:`check_pairs` refuses data where no pair has them (completions for one group only,
say), and words a warning naming the pairs left without a gap when some pairs remain.
:func:`coverage_warnings` gathers the analysis' warnings: those pairs, the bootstrap's note and
the group × structure cells with few labelled completions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairtalk.errors import InputError
from fairtalk.prompts._templates import GroupPair

__all__ = [
    "MIN_CELL",
    "AnalysedRows",
    "analysed_rows",
    "check_pairs",
    "coverage_warnings",
    "small_cells",
    "unbalanced_warning",
]

#: A group × structure cell with fewer labelled completions than this is flagged.
MIN_CELL = 30

_MSG_NO_PAIR = (
    "no pair of groups can be compared: {pairs} (the data has: {found}{ignored}); a regard gap needs "
    "completions labelled negative, neutral or positive for both groups of its pair"
)
_MSG_IGNORED = "; left out, not among the analysed groups: {groups}"
_MSG_PAIRS_LEFT = "{n:,} of {total:,} pairs have no gap, for want of regard-labelled completions: {pairs}"
_MSG_SMALL = (
    "{n_small:,} of {n_cells:,} group × structure cells have fewer than {min_cell} labelled completions "
    "(smallest: {group} under {structure}, {n}): their regard means and gaps are noisy"
)

_MSG_UNBALANCED = (
    "{n_cells:,} of {total:,} template × structure cells lack a group that the others have ({n_rows:,} of {n_all:,} "
    "{what}; first: template {template!r} under {structure}, without {missing}): they are kept, and the groups are "
    "not compared on the same templates there, so gaps across groups (and each group's mean regard) are confounded by template; "
    "give every group every template and structure (prompts paraphrase balances its cells), or analyse the balanced "
    "cells only (prompts analyze --balanced-only), to compare them on balanced cells"
)
#: What ``balanced_only`` left out: counted, and said among the analysis' warnings.
_MSG_BALANCED_ONLY = (
    "balanced cells only: left out {n_rows:,} of {n_all:,} completions in {n_cells:,} of {total:,} template × structure "
    "cells that lack a group the others have (first: template {template!r} under {structure}, without {missing})"
)
_MSG_NONE_BALANCED = (
    "balanced cells only leaves no completion: none of the {total:,} template × structure cells holds every group "
    "({groups}); give every group the same templates and structures, or leave out --balanced-only"
)


@dataclass(frozen=True, slots=True)
class _Cells:
    """The template × structure cells of the analysed rows, and those that lack a group the others have."""

    held: pd.Series
    lacking: pd.Series
    present: list[str]


def _cells(templates: Sequence[str], structures: Sequence[str], groups: Sequence[str], names: Sequence[str]) -> _Cells | None:
    """Each (template, structure) cell's groups, and the cells lacking one of the present groups; None below two groups."""
    cells = pd.DataFrame({"template": list(templates), "structure": list(structures), "group": list(groups)})
    seen = set(cells["group"])
    present = [name for name in names if name in seen]
    if len(present) < 2:
        return None
    held = cells.groupby(["template", "structure"], sort=False)["group"].agg(frozenset)
    return _Cells(held=held, lacking=held[held.map(lambda g: not set(present) <= g)], present=present)


def _first_lacking(cells: _Cells) -> dict[str, object]:
    """The first cell lacking a group, in the messages' words."""
    (template, structure), first = next(iter(cells.lacking.items()))
    return {
        "template": template,
        "structure": structure,
        "missing": ", ".join(name for name in cells.present if name not in first),
    }


def unbalanced_warning(
    templates: Sequence[str],
    structures: Sequence[str],
    groups: Sequence[str],
    names: Sequence[str],
    *,
    what: str = "completions",
) -> str | None:
    """A warning counting the (template, structure) cells that not every analysed group has, and their rows; None if none.

    ``what`` names the rows in the warning (``"completions"``, or ``"prompts"`` before generation).

    ``templates``, ``structures`` and ``groups`` are each analysed row's; the groups compared are
    those of ``names`` that have any row (a group with none has no gap at all: :func:`check_pairs`).
    The paraphrase path (:func:`~fairtalk.prompts._filters.filter_prompts`) drops such cells before
    generation; completions written by hand may still hold them, and ``balanced_only``
    (:func:`analysed_rows`) leaves them out of the analysis.

    Examples
    --------
    >>> print(unbalanced_warning(["t", "t", "u"], ["s", "s", "s"], ["a", "b", "a"], ["a", "b"])[:117])
    1 of 2 template × structure cells lack a group that the others have (1 of 3 completions; first: template 'u' under s,
    >>> unbalanced_warning(["t", "t"], ["s", "s"], ["a", "b"], ["a", "b"]) is None
    True
    """
    found = _cells(templates, structures, groups, names)
    if found is None or found.lacking.empty:
        return None
    keys = set(found.lacking.index)
    n_rows = sum(1 for key in zip(templates, structures) if key in keys)
    return _MSG_UNBALANCED.format(
        n_cells=len(found.lacking), total=len(found.held), n_rows=n_rows, n_all=len(groups), what=what, **_first_lacking(found)
    )


@dataclass(frozen=True, slots=True)
class AnalysedRows:
    """Which completions the analysis keeps, by the one rule :func:`analysed_rows` applies: ``kept`` per row.

    ``group`` is each row's analysed group as the analysis spells it (None for a row of another
    group); ``other_groups`` the groups left out with ``n_other`` rows; ``unbalanced`` marks the
    rows left out by ``balanced_only`` (none without it), in ``n_unbalanced_cells`` of ``n_cells``
    cells; ``note`` says so (None when nothing was left out for it).
    """

    kept: np.ndarray
    group: np.ndarray
    unbalanced: np.ndarray
    n_other: int
    other_groups: tuple[str, ...]
    n_unbalanced_cells: int
    n_cells: int
    note: str | None

    @property
    def n_unbalanced(self) -> int:
        """Rows left out by ``balanced_only``."""
        return int(self.unbalanced.sum())


def analysed_rows(frame: pd.DataFrame, names: Sequence[str], *, balanced_only: bool = False) -> AnalysedRows:
    """The rows of ``frame`` (columns ``group``, ``template``, ``structure``) that an analysis of the groups ``names`` keeps.

    The one rule both :func:`~fairtalk.prompts._analysis.analyze` and the labelling sample
    (``fairtalk label`` on completions) follow: a row is kept when its group is one of ``names``
    (matched case-insensitively, ignoring surrounding spaces) and, with ``balanced_only``, its
    template × structure cell holds every analysed group that has any row.

    Raises
    ------
    InputError
        ``balanced_only`` and no cell holds every group: nothing would be left.

    Examples
    --------
    >>> rows = pd.DataFrame({"group": ["a", "B", "a", "c"], "template": ["t", "t", "u", "t"], "structure": ["s"] * 4})
    >>> found = analysed_rows(rows, ["a", "b"], balanced_only=True)
    >>> found.kept.tolist(), found.group.tolist(), found.other_groups, found.n_unbalanced
    ([True, True, False, False], ['a', 'b', 'a', None], ('c',), 1)
    """
    wanted = {name.strip().casefold(): name for name in names}
    group = np.array([wanted.get(str(g).strip().casefold()) for g in frame["group"]], dtype=object)
    analysed = np.array([g is not None for g in group], dtype=bool)
    unbalanced = np.zeros(len(frame), dtype=bool)
    other = sorted({str(g) for g, a in zip(frame["group"], analysed) if not a})
    templates = frame["template"].astype(str).to_numpy()[analysed]
    structures = frame["structure"].astype(str).to_numpy()[analysed]
    found = _cells(templates.tolist(), structures.tolist(), group[analysed].tolist(), names)
    note, n_lacking = None, 0
    if balanced_only and found is not None and not found.lacking.empty:
        keys = set(found.lacking.index)
        unbalanced[np.flatnonzero(analysed)] = [key in keys for key in zip(templates, structures)]
        n_lacking = len(found.lacking)
        if n_lacking == len(found.held):
            raise InputError(_MSG_NONE_BALANCED.format(total=len(found.held), groups=", ".join(found.present)))
        note = _MSG_BALANCED_ONLY.format(
            n_rows=int(unbalanced.sum()),
            n_all=int(analysed.sum()),
            n_cells=n_lacking,
            total=len(found.held),
            **_first_lacking(found),
        )
    return AnalysedRows(
        kept=analysed & ~unbalanced,
        group=group,
        unbalanced=unbalanced,
        n_other=int((~analysed).sum()),
        other_groups=tuple(other),
        n_unbalanced_cells=n_lacking,
        n_cells=0 if found is None else len(found.held),
        note=note,
    )


def _uncovered(names: Sequence[str], g: np.ndarray, polar: np.ndarray, pairs: Sequence[GroupPair]) -> dict[str, str]:
    """The pairs that cannot have a gap, each described: a group without completions, or with only "other" labels."""
    n_rows = np.bincount(g, minlength=len(names))
    n_polar = np.bincount(g[polar], minlength=len(names))
    why = {name: "no completions" if n_rows[i] == 0 else "only 'other' labels" for i, name in enumerate(names) if n_polar[i] == 0}
    out: dict[str, str] = {}
    for pair in pairs:
        lacking: dict[str, list[str]] = {}
        for group in (pair.a, pair.b):
            if group in why:
                lacking.setdefault(why[group], []).append(group)
        if lacking:
            out[pair.name] = f"{pair.name} ({'; '.join(r + ' for ' + ', '.join(gs) for r, gs in lacking.items())})"
    return out


def check_pairs(
    data_groups: pd.Series,
    names: Sequence[str],
    g: np.ndarray,
    polar: np.ndarray,
    pairs: Sequence[GroupPair],
    *,
    ignored: Sequence[str] = (),
) -> str | None:
    """None when every pair can have a gap; else a warning naming the pairs that cannot.

    Parameters
    ----------
    data_groups : Series
        The ``group`` column as read (named in the error).
    names : sequence of str
        The analysed groups; ``g`` holds each kept row's index into them.
    g, polar : ndarray
        Group code and "labelled -1, 0 or 1" of each analysed row.
    pairs : sequence of GroupPair
        The pairs whose gaps the analysis reports.
    ignored : sequence of str
        Groups of the data left out (not among ``names``), named in the error.

    Raises
    ------
    InputError
        No pair has regard-labelled completions for both its groups.

    Examples
    --------
    >>> pairs = [GroupPair("gender", "man", "woman"), GroupPair("race", "white", "black")]
    >>> check_pairs(pd.Series(["man", "woman"]), ["man", "woman", "white", "black"], np.array([0, 1]),
    ...             np.array([True, True]), pairs)
    '1 of 2 pairs have no gap, for want of regard-labelled completions: race (no completions for white, black)'
    """
    uncovered = _uncovered(names, g, polar, pairs)
    if not uncovered:
        return None
    if len(uncovered) == len(pairs):
        found = sorted(map(str, pd.unique(data_groups)))[:10]
        left_out = _MSG_IGNORED.format(groups=", ".join(ignored[:10])) if len(ignored) else ""
        raise InputError(_MSG_NO_PAIR.format(pairs=", ".join(uncovered.values()), found=", ".join(found), ignored=left_out))
    return _MSG_PAIRS_LEFT.format(n=len(uncovered), total=len(pairs), pairs=", ".join(uncovered.values()))


def coverage_warnings(
    pairs_left: str | None, note: str | None, cell_counts: np.ndarray, names: Sequence[str], structures: Sequence[str]
) -> tuple[str, ...]:
    """The analysis' warnings: pairs without a gap (:func:`check_pairs`), the bootstrap's ``note``, small cells."""
    warnings = [w for w in (pairs_left, note) if w]
    small = small_cells(cell_counts, names, structures)
    if small:
        structure, group, n = min(small, key=lambda cell: cell[2])
        warnings.append(
            _MSG_SMALL.format(
                n_small=len(small), n_cells=cell_counts.size, min_cell=MIN_CELL, group=group, structure=structure, n=n
            )
        )
    return tuple(warnings)


def small_cells(counts: np.ndarray, groups: Sequence[str], structures: Sequence[str]) -> list[tuple[str, str, int]]:
    """(structure, group, n) of the group × structure cells (``counts[s, g]``) with fewer than :data:`MIN_CELL` completions."""
    rows, cols = np.nonzero(counts < MIN_CELL)
    return [(structures[int(i)], groups[int(j)], int(counts[i, j])) for i, j in zip(rows, cols)]
