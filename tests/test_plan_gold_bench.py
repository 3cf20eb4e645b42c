"""bench/plan_gold.py at a tiny size: it plans as ``plan --gold`` does and prints one row per gap and target."""

from __future__ import annotations

import math
import re

import pytest

from bench_scripts import load_bench
from fairtalk.stats import labels_needed


def test_the_planned_labels_are_the_librarys_and_the_table_prints(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("plan_gold")
    design = bench.ppi.Design(n_pairs=400, n_labels=100)
    pilot = bench.pilot(design, seed=7)
    assert pilot.n_labels == 100 and 0 < pilot.floor < 0.05 and 0.1 < pilot.error_sd < 1
    expected = labels_needed(math.sqrt(0.06**2 - pilot.floor**2), pilot.error_sd, alpha=0.05)
    assert bench.planned_labels(0.06, pilot) == expected
    assert bench.planned_labels(pilot.floor * 1.0001 + 10, pilot) == 2  # a wide target: plan's least, 2 labels

    rows = list(bench.rows([0.06, pilot.floor / 2], runs=3, pilot_labels=100, pairs=400))
    assert len(rows) == 4  # two true gaps, two targets
    assert "below the floor" in rows[1] and "below the floor" in rows[3]
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[1] == "±0.06" and int(cells[4].replace(",", "")) == bench.planned_labels(0.06, pilot)
    assert re.fullmatch(r"±0\.\d{4} \([+-]\d+%\)", cells[5]) and 0 <= float(cells[7]) <= 1
    spread = list(bench.pilot_rows([0.06], pilots=3, pilot_labels=100, pairs=400))
    assert len(spread) == 2 and all(row.startswith("| ") and "±0.06" in row for row in spread)
