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

``--help`` shows each option's short help, the first sentence of its help (:func:`short_help`), so
that a command of sixty options reads in a screen or two; ``--help-full`` prints the same help with
every option's whole text (:func:`add_help_full`), as the CLI reference page of the docs does. An
option's help is declared once, as one string: the short help is cut from it, never written apart,
so its first sentence names what a reader needs at a glance: the values of an option that takes a
fixed set of them (``--axis``'s axes, ``--methods``'), never "these methods" with the list cut off.
A group's ``--help-full`` prints its help and names ``COMMAND --help-full``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import typer
import typer.core
import typer.main
import typer.rich_utils
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

__all__ = ["HELP_FULL", "HelpCell", "OptionsTable", "add_help_full", "help_layout", "short_help", "swapped_in_typer"]

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
            Table.add_row(self, *(row[:1] if starred else ()), label, _help_cell(row[-1]))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self._lay_out(options.max_width)
        yield from super().__rich_console__(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        self._lay_out(options.max_width)
        return super().__rich_measure__(console, options)


def _help_cell(cell: Any) -> Any:
    """The help cell typer built (rich Columns of the help, its default, "required"): a :class:`HelpCell` when all are texts."""
    parts = list(getattr(cell, "renderables", ()))
    if not parts or not all(isinstance(part, Text) for part in parts):
        return cell
    for part in parts:
        part.overflow = "fold"
    return HelpCell(parts[0], parts[1:])


class HelpCell:
    """An option's help, then its notes (``[default: 0.05]``, ``[required]``): on its last line where they fit, else below.

    typer lays them out as rich Columns, which puts the notes on a line of their own whenever the
    help wraps: a line per option, a third of an options table of two-line helps.
    """

    def __init__(self, text: Text, notes: list[Text]) -> None:
        self.text = text
        self.notes = Text(" ").join(notes) if notes else None

    def _joined(self, console: Console, width: int) -> Text:
        if self.notes is None:
            return self.text
        if not self.text.plain:
            return self.notes
        last = self.text.wrap(console, width)[-1]
        beside = last.cell_len + 1 + self.notes.cell_len <= width
        joined = Text.assemble(self.text, " " if beside else "\n", self.notes)
        joined.overflow = "fold"
        return joined

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._joined(console, options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self._joined(console, options.max_width))


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


#: Where an option's short help ends: the first full stop followed by a space ("e.g. " and "i.e. " end no sentence).
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.\s")
#: The flag that prints a command's help with each option's full text.
HELP_FULL = "--help-full"
#: Where a command's context records that its help is to show every option's full text.
_FULL_KEY = "fairtalk.help_full"
#: What a command's ``--help`` ends with when it shortened an option's help.
_MSG_SHORTENED = "Each option's full help: {command} --help-full"
_HELP_FULL_HELP = "Show this message with every option's full help and exit."
#: What a group's ``--help-full`` ends with: its own options are not shortened, its commands' are.
_MSG_GROUP_FULL = "Each command's full help: {command} COMMAND --help-full"


def short_help(text: str) -> str:
    """An option's help as ``--help`` shows it: its first sentence, up to the first full stop followed by a space.

    So the first sentence of every option's help is written to stand alone (what the option does,
    in a line or two); the sentences after it tell the details, which ``--help-full`` and the
    docs' CLI reference show.

    Examples
    --------
    >>> short_help("Bootstrap resamples.")
    'Bootstrap resamples.'
    >>> short_help("A scale, e.g. 1-5, for the judge. An answer with no number counts as unparsed.")
    'A scale, e.g. 1-5, for the judge.'
    """
    end = _SENTENCE_END.search(text)
    return text if end is None else text[: end.start() + 1]


def _print_full_help(ctx: typer.Context, value: bool) -> None:
    """``--help-full``: print the command's help with every option's full text, and exit."""
    if not value or ctx.resilient_parsing:
        return
    ctx.meta[_FULL_KEY] = True
    typer.echo(ctx.get_help(), color=ctx.color)  # typer's rich help prints itself and returns ""
    if getattr(ctx.command, "commands", None) is not None:  # a group: its commands' options are where the text is cut
        typer.echo(_MSG_GROUP_FULL.format(command=ctx.command_path), color=ctx.color)
    ctx.exit()


def _help_full_param() -> Any:
    """A fresh ``--help-full`` parameter (eager and hidden, as ``--help``'s sibling), built by typer itself."""
    builder = typer.Typer(add_completion=False)

    @builder.command()
    def options(
        help_full: bool = typer.Option(
            False, HELP_FULL, is_eager=True, expose_value=False, hidden=True, callback=_print_full_help, help=_HELP_FULL_HELP
        ),
    ) -> None:
        """Only its parameter is used."""

    return typer.main.get_command(builder).params[0]


def add_help_full(command: Any) -> None:
    """Give ``command`` (every command of a group) short option helps in ``--help`` and a ``--help-full``. Idempotent.

    A group gets a ``--help-full`` too: its help (a group has no option to shorten) and a line naming
    ``COMMAND --help-full``, where its commands' options are shown whole.

    While ``--help`` draws, each option's help is its :func:`short_help` (put back after), and
    the help ends saying that ``--help-full`` shows the rest; ``--help-full`` draws the help as
    declared. Nothing else reads a shortened help: the docs' reference and error messages see the
    declared text.
    """
    subcommands = getattr(command, "commands", None)
    if subcommands is not None:  # a group (typer brings its own click, so no isinstance check)
        if not getattr(command, "_fairtalk_help_full", False):  # its --help-full: its help, naming its commands'
            command.params.append(_help_full_param())
            command._fairtalk_help_full = True
        for sub in subcommands.values():
            add_help_full(sub)
        return
    if getattr(command, "_fairtalk_help_full", False):
        return
    command.params.append(_help_full_param())
    format_help = command.format_help

    def format_short_help(ctx: Any, formatter: Any) -> None:
        if ctx.meta.get(_FULL_KEY):
            format_help(ctx, formatter)
            return
        declared = [(param, getattr(param, "help", None)) for param in command.params]
        epilog = command.epilog
        try:
            for param, text in declared:
                if text and short_help(text) != text:
                    param.help = short_help(text)
            if any(getattr(param, "help", None) != text for param, text in declared):
                note = _MSG_SHORTENED.format(command=ctx.command_path)
                command.epilog = f"{epilog}\n\n{note}" if epilog else note
            format_help(ctx, formatter)
        finally:
            for param, text in declared:
                param.help = text
            command.epilog = epilog

    command.format_help = format_short_help
    command._fairtalk_help_full = True
