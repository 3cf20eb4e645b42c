"""The labelled estimate's console lines (``--gold``), shared by ``score`` and ``audit``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairtalk.cli._console import say

if TYPE_CHECKING:
    from fairtalk.results import AuditResult

__all__ = ["say_labelled"]

#: How far a labelled line's wrapped lines are indented: past the ``gender: `` of a finding's own two columns.
INDENT = "    "


def say_labelled(result: AuditResult, *, prefix: str = "") -> None:
    """Print each key's labelled estimate (``labelled: …``, with its labels-only warning), wrapped at the console's width.

    ``prefix`` begins each (``"gender: "`` in an audit of several axes); the wrapped lines are indented four columns.
    """
    from fairtalk.report import labelled_lines

    for line in labelled_lines(result):
        say(f"{prefix}labelled: {line}", indent=INDENT)
