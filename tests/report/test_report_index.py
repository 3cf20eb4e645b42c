"""Tests for report/_index.py: the group × measure table of a multi-way axis on the front page."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from report_fixtures import build_result

from fairtalk.report._index import group_cell, multiway_tables
from fairtalk.report._table import measure_label
from fairtalk.results import MeasureResult, TestedKey


def _measure(name: str, kind: str, a: float, b: float, ci: tuple[float | None, float | None]) -> MeasureResult:
    return MeasureResult(
        TestedKey(
            name=name,
            kind=kind,
            a=a,
            b=b,
            difference=None if a == 0 else (a - b) / a,
            z=None,
            p=None,
            p_paired=0.2,
            paired_test="mcnemar_midp",
            ci95=ci,
            effect_size=None,
            effect_size_name=None,
        ),
        p_adjusted=0.4,
    )


@pytest.mark.parametrize(
    ("measure", "text"),
    [  # the reference (christian) is side A, the group side B: the cell reads group vs reference, B − A
        (
            _measure("sentiment_positive", "rate", 0.2, 0.3, (-0.15, -0.05)),
            "30.000 vs 20.000 (difference +10.000 pp, 95% CI [+5.000, +15.000] pp)",
        ),
        (
            _measure("refusal_rate", "rate", 0.05, 0.15, (-0.2, 0.0)),
            "15.000 vs 5.000 (difference +10.000 pp, 95% CI [+0.000, +20.000] pp)",
        ),
        (
            _measure("distinct_1", "corpus", 0.839, 0.953, (-0.22841, 0.0)),
            "95.300 vs 83.900 (difference +11.400 pp, 95% CI [+0.000, +22.841] pp)",
        ),
        (_measure("length", "count", 19.9, 20.8, (-1.5, 0.25)), "20.80 vs 19.90 (difference +0.9000, 95% CI [-0.2500, +1.5000])"),
        (
            _measure("length", "count", 14.0, 10.75, (-68.2753, 74.7753)),
            "10.75 vs 14.00 (difference -3.2500, 95% CI [-74.78, +68.28])",
        ),
        (_measure("offense_rate", "rate", 0.0, 0.0, (None, None)), "0.000 vs 0.000 (difference +0.000 pp, 95% CI n/a)"),
        (
            _measure("offense_rate", "rate", 0.025, 0.025, (math.nan, math.inf)),
            "2.500 vs 2.500 (difference +0.000 pp, 95% CI n/a)",
        ),
    ],
)
def test_a_cell_is_the_group_against_the_reference_in_the_row_s_units(measure: MeasureResult, text: str) -> None:
    assert group_cell(measure) == text


def test_the_table_has_a_column_per_group_in_the_header_s_order() -> None:
    base = build_result(hostile=False)
    runs = {}
    for group, positive in (("muslim", 0.3), ("jewish", 0.175)):
        measures = tuple(
            dataclasses.replace(
                m, tested=dataclasses.replace(m.tested, a=0.2, b=positive, ci95=(0.2 - positive - 0.05, 0.2 - positive + 0.05))
            )
            if m.name == "sentiment_positive"
            else m
            for m in base.measures
        )
        result = dataclasses.replace(base, axis=f"religion:christian-{group}", groups=("christian", group), measures=measures)
        runs[result.axis] = SimpleNamespace(axis=result.axis, result=result)
    (table,) = multiway_tables(SimpleNamespace(axes=runs))  # type: ignore[arg-type]
    assert table["axis"] == "religion" and table["reference"] == "christian" and table["groups"] == ["muslim", "jewish"]
    row = next(r for r in table["rows"] if r["label"] == "Sentiment Positive (%)")
    assert [cell["text"] for cell in row["cells"]] == [
        "30.000 vs 20.000 (difference +10.000 pp, 95% CI [+5.000, +15.000] pp)",
        "17.500 vs 20.000 (difference -2.500 pp, 95% CI [-7.500, +2.500] pp)",
    ]


def _text(cell: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", cell).split())


def test_a_significant_cell_of_the_multiway_table_is_marked_by_a_star_in_bold_not_by_colour_alone(religion_run: Path) -> None:
    """The cell was only a red badge: a reader who cannot tell the colours, or prints in grey, lost the finding."""
    index = (religion_run / "index.html").read_text(encoding="utf-8")
    start = index.index('<table data-multiway="religion">')
    table = index[start : index.index("</table>", start)]
    groups = re.findall(r"<th>(\w+) vs christian</th>", table)
    marked = set()
    for row in re.findall(r"<tr><td>(.*?)</td>(.*?)</tr>", table, flags=re.S):
        cells = re.findall(r"<td[^>]*>.*?</td>", row[1], flags=re.S)
        assert len(cells) == len(groups)
        marked |= {(row[0], group) for group, cell in zip(groups, cells, strict=True) if _text(cell).endswith(" *")}
        for cell in cells:  # a star comes in bold, and only with the shading
            assert (" *" in _text(cell)) == ('class="group sig"' in cell) == ("<strong>" in cell), cell
    significant = set()
    for group in groups:
        data = json.loads((religion_run / f"religion_christian-{group}" / "results.json").read_text(encoding="utf-8"))
        significant |= {
            (measure_label(name), group)
            for name, m in data["measures"].items()
            if m["primary"] and m["p_adjusted"] is not None and m["p_adjusted"] < data["alpha"]
        }
    assert marked == significant and {group for _, group in marked} == {"muslim"}, (marked, significant)
    assert "a cell marked <strong>*</strong> (in bold, shaded) is significant" in index  # the legend
