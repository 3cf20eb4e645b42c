"""``--help`` whose option names are never cut short, at any terminal width.

typer draws each panel of options as a ``rich`` table of six columns (option names, short names,
negative names, negative short names, types, help) whose columns it leaves to ``rich``'s defaults;
at 80 columns ``rich`` then shrank the names as much as the help text and cut them with an ellipsis
(``--max-consecutive-failu…``). typer has no setting for these columns, so while fairtalk's command
line runs, :func:`uncut_option_names` has typer build its tables as :class:`OptionsTable`: the name
columns never shrink (``no_wrap``), and the types and help columns wrap (a help word wider than its
column folds onto the next line rather than being cut). ``tests/test_cli_output.py`` checks that
typer still builds its options table this way, and every command's ``--help`` at 80 columns.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import typer.rich_utils
from rich.table import Column, Table
from rich.text import Text

__all__ = ["OptionsTable", "swapped_in_typer", "uncut_option_names"]

#: The columns of typer's options table after the names: the types and the help.
_AFTER_NAMES = 2
#: The name under which ``typer.rich_utils`` finds the ``rich`` Table class it builds its help tables with.
_TYPER_TABLE = "Table"


class OptionsTable(Table):
    """A ``rich`` Table that, built as typer builds its options table, never cuts an option's name.

    A table whose columns were declared (typer's commands table) is left as it is; in one whose
    columns come from its rows (the options table) every column but the last two (types, help)
    holds names and is ``no_wrap``, and the help column folds a word too wide for it.
    """

    _declared = False

    def add_column(self, *args: Any, **kwargs: Any) -> None:
        self._declared = True
        super().add_column(*args, **kwargs)

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        super().add_row(*renderables, **kwargs)
        if self._declared or len(self.columns) <= _AFTER_NAMES:
            return
        names: list[Column] = self.columns[:-_AFTER_NAMES]
        for column in names:
            column.no_wrap = True
        self.columns[-1].overflow = "fold"
        for part in getattr(renderables[-1], "renderables", ()):  # typer's help cell: a rich Columns of texts
            if isinstance(part, Text):
                part.overflow = "fold"


@contextlib.contextmanager
def swapped_in_typer(name: str, value: object) -> Iterator[None]:
    """While the block runs, ``typer.rich_utils.<name>`` is ``value`` (typer looks it up when it draws)."""
    saved = getattr(typer.rich_utils, name)
    setattr(typer.rich_utils, name, value)
    try:
        yield
    finally:
        setattr(typer.rich_utils, name, saved)


def uncut_option_names() -> contextlib.AbstractContextManager[None]:
    """While the block runs, typer builds the tables of ``--help`` as :class:`OptionsTable`."""
    return swapped_in_typer(_TYPER_TABLE, OptionsTable)
