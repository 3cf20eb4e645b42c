"""The completions a prompts analysis keeps, by id: what ``fairtalk label`` samples a completions file from.

A label given to a completion that ``prompts analyze`` leaves out is wasted: the analysis joins
gold labels to the completions it analyses by id, and counts the others as unknown. So the
labelling sample of a completions file draws only from the completions the analysis would keep,
by the analysis' own rules: the reader's (:func:`~fairtalk.prompts._completions.read_completions`
leaves out failed, empty, echoing, textless and repeated completions) and the analysis' own
(:func:`~fairtalk.prompts._coverage.analysed_rows`: groups outside the analysed ones and, with
``balanced_only``, template × structure cells that lack a group). :func:`analysed_completions`
gives each kept completion's id with its group as the analysis spells it (``"Man"`` is ``man``),
and counts what it left out, by reason, for the skip to be said.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fairtalk._jsonl import first_record
from fairtalk.errors import InputError
from fairtalk.prompts._completions import COMPLETION_FIELDS, read_completions
from fairtalk.prompts._coverage import analysed_rows
from fairtalk.prompts._templates import GroupSet, default_groups

__all__ = ["AnalysedCompletions", "analysed_completions", "holds_completions"]

#: Why a completion is left out of the sample, in words (the reader's reasons, then the analysis').
_REASONS = {
    "failed": "failed",
    "empty": "empty",
    "echo": "echoing their prompt",
    "no_text": "without a text",
    "duplicate": "repeated",
    "other_groups": "of groups not analysed ({groups}; {fix})",
    "unbalanced": "in template × structure cells that lack a group (--balanced-only)",
}
_FIX_DEFAULT = "pass --groups FILE, as to prompts analyze, to analyse them"
_FIX_FILE = "add them to {source} to analyse them"
_MSG_LEFT_OUT = "left out {n:,} of {total:,} completions that prompts analyze leaves out: {reasons}"
_MSG_NONE_KEPT = "no completion of INPUT is one prompts analyze keeps: {note}"


@dataclass(frozen=True, slots=True)
class AnalysedCompletions:
    """The completions of a file that the analysis keeps: ``groups`` maps each one's id to its group.

    ``n_records`` counts the file's records; ``left_out`` the rest by reason (``failed``,
    ``empty``, ``echo``, ``no_text``, ``duplicate``, ``other_groups``, ``unbalanced``; only
    reasons that left any out), ``other_groups`` names the groups outside the analysis, and
    ``groups_source`` is where the analysed groups came from (``builtin``: the paper's six).
    """

    groups: Mapping[str, str]
    n_records: int
    left_out: Mapping[str, int]
    other_groups: tuple[str, ...]
    groups_source: str

    @property
    def note(self) -> str | None:
        """What was left out and why, in one line; None when nothing was."""
        if not self.left_out:
            return None
        fix = _FIX_DEFAULT if self.groups_source == "builtin" else _FIX_FILE.format(source=self.groups_source)
        shown = ", ".join(self.other_groups[:10]) + (
            f", … ({len(self.other_groups)} groups)" if len(self.other_groups) > 10 else ""
        )
        reasons = "; ".join(f"{n:,} {_REASONS[reason].format(groups=shown, fix=fix)}" for reason, n in self.left_out.items())
        return _MSG_LEFT_OUT.format(n=sum(self.left_out.values()), total=self.n_records, reasons=reasons)


def holds_completions(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a JSONL file whose first record is a completion (group, template, structure, seed and text)."""
    if Path(path).is_dir():
        return False
    record = first_record(path)
    return record is not None and all(name in record for name in COMPLETION_FIELDS)


def analysed_completions(
    path: str | os.PathLike[str], *, groups: GroupSet | None = None, balanced_only: bool = False
) -> AnalysedCompletions:
    """The completions of the file ``path`` that ``prompts analyze`` keeps, by id, with their groups; what it leaves out, counted.

    ``groups`` and ``balanced_only`` are the analysis' (default: the paper's six groups, all cells).

    Raises
    ------
    InputError
        What :func:`~fairtalk.prompts._completions.read_completions` refuses, or no completion kept.
    """
    group_set = groups or default_groups()
    data = read_completions(path)
    frame = data.frame
    try:
        kept = analysed_rows(frame, group_set.groups, balanced_only=balanced_only)
    except InputError as exc:  # no balanced cell: said of INPUT
        raise InputError(exc.message, path=str(path)) from None
    left_out = {reason: n for reason, n in data.data_summary.excluded.items() if n}
    if kept.n_other:
        left_out["other_groups"] = kept.n_other
    if kept.n_unbalanced:
        left_out["unbalanced"] = kept.n_unbalanced
    found = AnalysedCompletions(
        groups={str(rid): str(group) for rid, group, keep in zip(frame["id"], kept.group, kept.kept) if keep},
        n_records=data.data_summary.n_records,
        left_out=left_out,
        other_groups=kept.other_groups,
        groups_source=group_set.source,
    )
    if not found.groups:
        raise InputError(_MSG_NONE_KEPT.format(note=found.note), path=str(path))
    return found
