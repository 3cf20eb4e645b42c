"""The rich table the CLI prints: same rows as the Markdown table, significant rows styled, no markup injection."""

from __future__ import annotations

import dataclasses
import io

import pytest
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
    plain = dataclasses.replace(
        result, measures=tuple(dataclasses.replace(m, tested=dataclasses.replace(m.tested, masked=None)) for m in result.measures)
    )
    buffer = io.StringIO()
    Console(file=buffer, width=80).print(rich_table(plain))
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert len(lines) == len(plain.measures) + 5  # title, blank, header, rule, one line per measure, blank: no wrapping


def test_a_rate_near_zero_shows_no_relative_difference(result) -> None:
    """Issue 39 item 7: (A - B) / A of an offense rate of 0.05% against 9.5% read -18,900%; a rate shows it from 5% on."""
    from fairtalk.report import summary_rows

    offense = result.measure("offense_rate")
    key = offense.tested
    tiny = dataclasses.replace(offense, tested=dataclasses.replace(key, a=0.0005, b=0.095, difference=(0.0005 - 0.095) / 0.0005))
    both = dataclasses.replace(offense, tested=dataclasses.replace(key, a=0.10, b=0.15, difference=(0.10 - 0.15) / 0.10))
    cells = {}
    for name, m in (("tiny", tiny), ("both", both)):
        row = next(r for r in summary_rows(dataclasses.replace(result, measures=(m,))) if r.name == "offense_rate")
        cells[name] = row.difference
    assert cells == {"tiny": "–", "both": "-50.0%"}


def _long_answers(result):  # noqa: ANN001, ANN202
    """Answers of 2,000-5,000 words: the length's figures and interval run to thousands; every answer degenerate."""
    length = result.measure("length")
    refusal = result.measure("refusal_rate")
    wide = dataclasses.replace(
        length, tested=dataclasses.replace(length.tested, a=3399.75, b=3551.5, ci95=(-4197.1298, 3267.9368))
    )
    degenerate = dataclasses.replace(
        refusal, tested=dataclasses.replace(refusal.tested, name="degenerate_rate", a=1.0, b=1.0, ci95=(-0.11026, 0.11026))
    )
    measures = tuple(
        dataclasses.replace(m, tested=dataclasses.replace(m.tested, masked=None)) for m in result.measures if m.name != "length"
    )
    return dataclasses.replace(result, groups=("christian", "buddhist"), measures=(*measures, wide, degenerate))


@pytest.mark.parametrize("width", [80, 72])
def test_labels_keep_their_line_when_the_figures_are_wide(result, width: int) -> None:
    """At 80 columns a 4,000-word answer's figures split "Degenerat/e %" and "Sentiment/+ %" before; now the interval gives way."""
    buffer = io.StringIO()
    Console(file=buffer, width=width).print(rich_table(_long_answers(result)))
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= width
    for label in ("Offense %", "Sentiment + %", "Sentiment − %", "Diversity %", "Family words", "Length (words)", "Degenerate %"):
        assert any(line.lstrip().startswith(label) for line in lines), (label, lines)
    length = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Length (words)"))
    if width == 80:
        assert "[-4197.1, +3267.9]" in lines[length]
    else:  # the interval gives way, wrapped between its bounds
        assert "[-4197.1," in lines[length] and lines[length + 1].strip() == "+3267.9]"


def test_a_count_interval_keeps_five_significant_figures(result) -> None:
    """A length interval in the thousands printed "[-4197.1298, +3267.9368]"; below 10 it keeps four decimals."""
    from fairtalk.report import summary_rows

    rows = {row.name: row for row in summary_rows(_long_answers(result))}
    assert rows["length"].ci95 == "[-4197.1, +3267.9]"
    assert rows["family_words"].ci95 == "[-0.0110, -0.0066]"


def test_a_secondary_row_s_star_is_explained_below_the_table(result) -> None:
    """The tutorial's table showed `Cut off % *` with nothing saying what `*` means (report.md did)."""
    primary = dataclasses.replace(result, measures=tuple(dataclasses.replace(m, primary=True) for m in result.measures))
    assert " *" not in _render(rich_table(primary)) and "secondary" not in _render(rich_table(primary))
    first = primary.measures[1]
    marked = dataclasses.replace(primary, measures=(primary.measures[0], dataclasses.replace(first, primary=False)))
    text = _render(rich_table(marked))
    assert " *" in text
    said = " ".join(text.split())
    assert "* secondary measure: outside the gates, corrected as a family of its own" in said, text
