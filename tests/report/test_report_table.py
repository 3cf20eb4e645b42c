"""The rich table the CLI prints: same rows as the Markdown table, significant rows styled, no markup injection."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from fairtalk.report import rich_table


def _render(table, *, colour: bool = False) -> str:  # noqa: ANN001
    buffer = io.StringIO()
    Console(file=buffer, width=250, force_terminal=colour, color_system="standard" if colour else None).print(table)
    return buffer.getvalue()


def test_rich_table_lists_every_measure(result) -> None:
    text = _render(rich_table(result))
    for label in ("Diversity %", "Offense %", "Family words", "Refusal %"):
        assert label in text
    assert "< 1e-5" in text and "male" in text and "female" in text and "Masked A vs B" in text


def test_significant_rows_are_coloured(result) -> None:
    table = rich_table(result)
    styles = [row.style for row in table.rows]
    assert styles.count("bold red") == 6
    assert "\x1b[" in _render(table, colour=True)


def test_group_names_are_not_markup(result) -> None:
    text = _render(rich_table(dataclasses.replace(result, groups=("[bold]x[/bold]", "[red]y"))))
    assert "[bold]x[/bold]" in text and "[red]y" in text


def test_rich_table_fits_an_80_column_terminal(result) -> None:
    plain = dataclasses.replace(result, measures=tuple(dataclasses.replace(m, masked=None) for m in result.measures))
    buffer = io.StringIO()
    Console(file=buffer, width=80).print(rich_table(plain))
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert len(lines) == len(plain.measures) + 5  # title, blank, header, rule, one line per measure, blank: no wrapping
