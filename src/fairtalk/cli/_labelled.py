"""The labelled estimate's console lines (``--gold``), shared by ``score`` and ``audit``."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from fairtalk.cli._console import say

if TYPE_CHECKING:
    from fairtalk.results import AuditResult

__all__ = ["say_labelled"]

#: The console width the lines are wrapped to.
WIDTH = 80


def say_labelled(result: AuditResult, *, prefix: str = "") -> None:
    """Print each key's labelled estimate (``labelled: …``, with its labels-only warning), wrapped to 80 columns.

    ``prefix`` begins each (``"gender: "`` in an audit of several axes); the continuation lines are indented.
    """
    from fairtalk.report import labelled_lines

    for line in labelled_lines(result):
        say(
            textwrap.fill(
                f"{prefix}labelled: {line}", width=WIDTH, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
            )
        )
