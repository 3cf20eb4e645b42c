"""`--count-test wilcoxon`: every output shows the Hodges-Lehmann median shift beside its own interval.

Review finding: 100 pairs, 85 with equal lengths and 15 where side B is two words longer. The
console printed ``4.0000 4.3000 6.1e-05 [+0.0000, +0.0000] ‡``, report.md "a difference of
-0.300, 95% CI [+0.000, +0.000]", the JUnit file "gap -0.3, 95% CI [+0, +0]": the mean difference
beside the Hodges-Lehmann interval, a zero-width interval from ties shown as certainty, and a ‡
footnote blaming "the boundary and few pairs" at p 6e-5 on 100 pairs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.results import AuditResult
from fairtalk.stats import hodges_lehmann
from fairtalk.testing import measure_line


def _responses(path: Path, n_longer: int) -> Path:
    """100 pairs: side B two words longer on the first ``n_longer``, the same answer on the rest."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(100):
            b = "hello there my friend" + (" ok ok" if i < n_longer else "")
            f.write(json.dumps({"pair_id": f"p{i}", "side": "a", "context": f"he said {i}", "response": "hello there my friend"}))
            f.write("\n" + json.dumps({"pair_id": f"p{i}", "side": "b", "context": f"she said {i}", "response": b}) + "\n")
    return path


def _score(tmp: Path, n_longer: int) -> tuple[str, Path, str]:
    """``fairtalk score --count-test wilcoxon`` on length: (console, report folder, JUnit text)."""
    responses, out, junit = _responses(tmp / "r.jsonl", n_longer), tmp / "report", tmp / "junit.xml"
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "length", "--count-test", "wilcoxon"]
    done = CliRunner().invoke(app, [*args, "-o", str(out), "--junit", str(junit)], env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    return " ".join(done.output.split()), out, junit.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def ties(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, str]:
    """85 of 100 differences 0: the Hodges-Lehmann interval would be [0, 0]."""
    return _score(tmp_path_factory.mktemp("ties"), 15)


@pytest.fixture(scope="module")
def zeros(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, str]:
    """70 of 100 differences 0: the interval [-1, 0] holds 0, while the signed-rank test rejects."""
    return _score(tmp_path_factory.mktemp("zeros"), 30)


def test_a_zero_width_hodges_lehmann_interval_is_not_given_and_says_why() -> None:
    d = np.concatenate([np.zeros(85), np.full(15, -2.0)])
    estimate, interval = hodges_lehmann(d, np.zeros(100))
    assert estimate == 0.0 and interval.bounds == (None, None)  # not [0, 0]: ties are not certainty
    assert "85 of 100 differences are 0" in str(interval.note) and "the 15 that differ" in str(interval.note)
    d = np.concatenate([np.zeros(70), np.full(30, -2.0)])
    estimate, interval = hodges_lehmann(d, np.zeros(100))
    assert (estimate, interval.bounds) == (-1.0, (-1.0, 0.0))  # the zeros hold its end at 0: a note says how many
    assert "70 of 100 differences are 0" in str(interval.note)
    estimate, interval = hodges_lehmann(np.random.default_rng(3).normal(1.0, 1.0, 80), np.zeros(80))
    assert interval.note is None  # no ties, no zeros: nothing to say
    estimate, interval = hodges_lehmann(np.ones(50), np.ones(50))  # no spread at all: said as the t interval says it
    assert interval.bounds == (None, None) and str(interval.note).startswith("no variation in the differences")


def test_the_console_shows_the_median_shift_not_a_zero_width_interval(ties: tuple[str, Path, str]) -> None:
    console, _, _ = ties
    assert "HL +0.0000, no CI" in console and "[+0.0000, +0.0000]" not in console
    assert "HL: the median shift (Hodges-Lehmann estimate of A − B)" in console
    assert "85 of 100 differences are 0" in console
    assert "‡" not in console and "near the boundary" not in console


def test_the_pages_and_junit_show_the_median_shift_beside_its_interval(ties: tuple[str, Path, str]) -> None:
    _, out, junit = ties
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "a median shift (HL) of +0 (no 95% CI: see the notes)" in md
    assert "a difference of -0.300" not in md and "[+0.000, +0.000]" not in md and "[+0.0000, +0.0000]" not in md
    assert "| **median shift (HL) +0.0000, no CI** |" in md
    assert "85 of 100 differences are 0: the Hodges-Lehmann interval would be [0, 0]" in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "median shift (HL) +0.0000, no CI" in html and "[+0.0000, +0.0000]" not in html
    assert "mean gap -0.3; median shift (HL) +0, no interval" in junit and "95% CI [+0, +0]" not in junit
    result = AuditResult.read_json(out / "results.json")
    assert "mean gap -0.3, median shift (HL) +0 (no CI)" in measure_line("gender", result.measures[0])


def test_the_mark_says_the_zeros_explain_the_disagreement(zeros: tuple[str, Path, str]) -> None:
    console, out, junit = zeros
    assert "HL -1.0000 [-1.0000," in console and "+0.0000] ‡" in console  # the cell wraps between its bounds
    md = (out / "report.md").read_text(encoding="utf-8")
    mark = next(line for line in md.splitlines() if line.startswith("- ‡"))
    assert "many differences are 0 (the row's note says how many)" in mark and "near the boundary" not in mark
    assert "70 of 100 differences are 0" in md
    assert "a median shift (HL) of -1.00, 95% CI [-1.00, +0.00]" in md and "a difference of -0.6" not in md
    assert re.search(r"mean gap -0\.6; median shift \(HL\) -1, 95% CI \[-1, \+0\]", junit)


def test_the_gate_still_decides_on_the_test_and_the_mean_tost(ties: tuple[str, Path, str]) -> None:
    _, out, _ = ties
    m = AuditResult.read_json(out / "results.json").measures[0]
    assert m.verdict.value == "difference detected" and m.p_adjusted is not None and m.p_adjusted < 0.001
    assert m.equivalence_test == "TOST (paired t)" and m.equivalence_interval is not None
    assert m.equivalence_interval[0] < -0.3 < m.equivalence_interval[1]  # the mean's interval, not the median shift's


def test_the_multiway_cell_and_the_by_turn_row_name_the_median_shift() -> None:
    from fairtalk.report import render_markdown
    from fairtalk.report._index import group_cell
    from fairtalk.results import ByTurnResult, MeasureResult, TestedKey, TurnBucket, TurnGap

    key = TestedKey(
        "length",
        "count",
        4.0,
        4.6,
        None,
        None,
        None,
        1e-6,
        "wilcoxon_approx",
        (-1.0, -0.5),
        None,
        "",
        ci_method="hodges-lehmann",
        estimate=-1.0,
        estimate_name="hodges-lehmann",
    )
    # B − A: the median shift +1 beside its interval [+0.5, +1], not the mean gap +0.6
    m = MeasureResult(key, p_adjusted=1e-6)
    assert group_cell(m).endswith("(median shift (HL) +1.0000, 95% CI [+0.5000, +1.0000])")
    gap = TurnGap("length", "count", 4.0, 4.6, -1.0, (-1.0, -0.5), 1e-6, 1e-6, "wilcoxon_approx", "hodges-lehmann")
    turned = ByTurnResult(("length",), (TurnBucket(1, 100, None, (gap,)),), min_units=10)
    md = render_markdown(AuditResult("gender", ("male", "female"), 100, (m,), by_turn=turned))
    assert "| median shift (HL) -1.0000 | [-1.0000, -0.5000] |" in md  # the by-turn row
