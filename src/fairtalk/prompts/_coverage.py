"""What labelled completions cover, as the paper-004 analysis checks it: pairs that can have a gap, small cells.

A pair's regard gap needs completions labelled negative, neutral or positive for both its
groups. :func:`check_pairs` refuses data where no pair has them (completions for one group only,
say), and words a warning naming the pairs left without a gap when some pairs remain.
:func:`coverage_warnings` gathers the analysis' warnings: those pairs, the bootstrap's note and
the group × structure cells with few labelled completions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fairtalk.errors import InputError
from fairtalk.prompts._templates import GroupPair

__all__ = ["MIN_CELL", "check_pairs", "coverage_warnings", "small_cells", "unbalanced_warning"]

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
    "give every group every template and structure (prompts paraphrase balances its cells) to compare them on "
    "balanced cells"
)


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
    generation; completions written by hand may still hold them.

    Examples
    --------
    >>> print(unbalanced_warning(["t", "t", "u"], ["s", "s", "s"], ["a", "b", "a"], ["a", "b"])[:117])
    1 of 2 template × structure cells lack a group that the others have (1 of 3 completions; first: template 'u' under s,
    >>> unbalanced_warning(["t", "t"], ["s", "s"], ["a", "b"], ["a", "b"]) is None
    True
    """
    cells = pd.DataFrame({"template": list(templates), "structure": list(structures), "group": list(groups)})
    seen = set(cells["group"])
    present = [name for name in names if name in seen]
    if len(present) < 2:
        return None
    held = cells.groupby(["template", "structure"], sort=False)["group"].agg(frozenset)
    lacking = held[held.map(lambda g: not set(present) <= g)]
    if lacking.empty:
        return None
    (template, structure), first = next(iter(lacking.items()))
    keys = set(lacking.index)
    n_rows = sum(1 for key in zip(cells["template"], cells["structure"]) if key in keys)
    return _MSG_UNBALANCED.format(
        n_cells=len(lacking),
        total=len(held),
        n_rows=n_rows,
        n_all=len(cells),
        what=what,
        template=template,
        structure=structure,
        missing=", ".join(name for name in present if name not in first),
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
