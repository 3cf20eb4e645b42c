"""``--help`` that cuts no option's name and breaks no word, at any terminal width (80 columns in a CI log).

typer draws each panel of options as a ``rich`` table of six columns (option names, short names,
negative names, negative short names, types, help) whose columns it leaves to ``rich``'s defaults.
At 80 columns ``rich`` then shrank the names as much as the help text and cut them with an ellipsis
(``--max-consecutive-failu…``); with the names kept whole, a panel holding ``--scorer-check
--no-scorer-check`` and ``<float in [0, 1]>`` left 14 columns to the help, which broke its words
(``Comma-separate`` / ``d``). typer has no setting for these columns, so while fairtalk's command
line runs, :func:`help_layout` has typer build its tables as :class:`OptionsTable`: one column holds
an option's names and, beside them or on the next line, the value it takes, never wrapped; the help
takes the rest of the width. It also has a flag (``--fail-on-bias``, ``--help``, ``-v``) show no value:
typer 0.29 showed each as ``<bool>``, a value the flag refuses. ``tests/test_cli_output.py`` checks
that typer still builds its options table this way, and every command's ``--help`` at 80 columns.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import typer.core
import typer.rich_utils
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

__all__ = ["OptionsTable", "help_layout", "swapped_in_typer"]

#: The cells typer gives each row of its options table: four of names, the types, the help.
_ROW = 6
#: The fewest columns the help keeps beside an option's names and value on one line; else the value goes below them.
_MIN_HELP = 40
#: How far the value an option takes is indented when it goes on the line below the option's names.
_VALUE_INDENT = "  "
#: The name under which ``typer.rich_utils`` finds the ``rich`` Table class it builds its help tables with.
_TYPER_TABLE = "Table"


class OptionsTable(Table):
    """A ``rich`` Table that, filled as typer fills its options table, draws an option's names whole.

    A table whose columns were declared (typer's commands table) is left as it is. In one whose
    columns come from its rows (the options table) each row's four cells of names become one cell
    (``--scorer-check --no-scorer-check``), the value the option takes follows them (beside them
    when that leaves the help :data:`_MIN_HELP` columns, else on the next line, indented, where it
    does not fit beside the widest names of the panel), and that column is never wrapped; the help
    column takes the rest of the width and folds a word too wide for it.
    """

    _declared = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._options: list[tuple[Any, ...]] = []

    def add_column(self, *args: Any, **kwargs: Any) -> None:
        self._declared = True
        super().add_column(*args, **kwargs)

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        if self._declared or len(renderables) < _ROW or kwargs:
            super().add_row(*renderables, **kwargs)
        else:
            self._options.append(renderables)

    def _lay_out(self, max_width: int) -> None:
        """Build the columns and rows from the rows typer gave, for a table ``max_width`` wide (once: when first drawn)."""
        rows, self._options = self._options, []
        if not rows:
            return
        starred = len(rows[0]) > _ROW  # typer's first column: the star of a required option
        names = [Text(" ").join(cell for cell in row[-6:-2] if cell.plain) for row in rows]
        values: list[Text] = [row[-2] for row in rows]
        beside = max(n.cell_len + (1 + v.cell_len if v.plain else 0) for n, v in zip(names, values))
        below = max(max(n.cell_len, len(_VALUE_INDENT) + v.cell_len if v.plain else 0) for n, v in zip(names, values))
        # typer's padding: a column each side of every column but the table's edges; the star's column is 1 wide
        room = max_width - 2 - (2 if starred else 0)
        width = beside if room - beside >= _MIN_HELP else below
        if starred:
            Table.add_column(self, no_wrap=True)
        Table.add_column(self, no_wrap=True)
        Table.add_column(self, ratio=1, overflow="fold")
        for row, name, value in zip(rows, names, values):
            label = name.copy()
            if value.plain:
                label.append(" " if name.cell_len + 1 + value.cell_len <= width else "\n" + _VALUE_INDENT)
                label.append_text(value)
            help_cell = row[-1]
            for part in getattr(help_cell, "renderables", ()):  # typer's help cell: a rich Columns of texts
                if isinstance(part, Text):
                    part.overflow = "fold"
            Table.add_row(self, *(row[:1] if starred else ()), label, help_cell)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self._lay_out(options.max_width)
        yield from super().__rich_console__(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        self._lay_out(options.max_width)
        return super().__rich_measure__(console, options)


#: The method of typer's options that gives the value an option's ``--help`` row shows.
_TYPER_VALUE_METHOD = "display_type_rich"
#: typer's own: every option's value, a flag's included (``<bool>``).
_TYPER_VALUE = typer.core.TyperOption.display_type_rich


def _shown_value(option: typer.core.TyperOption, ctx: Any) -> str | None:
    """The value ``option`` takes, as its ``--help`` row shows it; none for a flag (``--help``, ``-v``)."""
    if option.is_flag or option.count:
        return None
    return _TYPER_VALUE(option, ctx)


@contextlib.contextmanager
def swapped_in_typer(name: str, value: object) -> Iterator[None]:
    """While the block runs, ``typer.rich_utils.<name>`` is ``value`` (typer looks it up when it draws)."""
    saved = getattr(typer.rich_utils, name)
    setattr(typer.rich_utils, name, value)
    try:
        yield
    finally:
        setattr(typer.rich_utils, name, saved)


@contextlib.contextmanager
def help_layout() -> Iterator[None]:
    """While the block runs, typer builds the tables of ``--help`` as :class:`OptionsTable`, and shows no flag's value."""
    setattr(typer.core.TyperOption, _TYPER_VALUE_METHOD, _shown_value)
    try:
        with swapped_in_typer(_TYPER_TABLE, OptionsTable):
            yield
    finally:
        setattr(typer.core.TyperOption, _TYPER_VALUE_METHOD, _TYPER_VALUE)
