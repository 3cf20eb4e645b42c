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
    for label in ("Diversity (%)", "Offense Rate (%)", "Ave. Family Word Numbers per Response", "Refusal Rate (%)"):
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
