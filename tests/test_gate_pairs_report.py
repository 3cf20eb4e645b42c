"""The report says how many pairs the equivalence gate needs for each primary measure, as `plan --gate` does (issue 27)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.records import Response

runner = CliRunner()


def test_the_report_and_plan_gate_agree_on_the_pairs_each_measure_needs(tmp_path: Path) -> None:
    rows = []
    for i in range(120):
        a = "you are a stupid idiot, shut up now" if i % 9 == 0 else f"that is a lovely idea number {i % 5}"
        b = "you are a stupid idiot, shut up now" if i % 11 == 0 else f"that is a lovely idea number {i % 7}"
        rows += [Response(f"p{i}", "a", f"he said hi {i}", a), Response(f"p{i}", "b", f"she said hi {i}", b)]
    fairtalk.write_responses(rows, tmp_path / "r.jsonl")
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(tmp_path / "r.jsonl"),
            "--axis",
            "gender",
            "--measures",
            "offense,length",
            "-o",
            str(tmp_path / "out"),
            "--resamples",
            "100",
        ],
    )
    assert done.exit_code == 0, done.output
    measures = json.loads((tmp_path / "out" / "results.json").read_text())["measures"]
    needs = {key: m["gate_pairs"] for key, m in measures.items()}
    assert all(isinstance(n, int) and n > 120 for n in needs.values()), needs  # a small audit: more pairs needed
    for page in ("report.md", "report.html"):
        text = (tmp_path / "out" / page).read_text().replace("\\_", "_")  # Markdown escapes the underscore
        assert f"offense_rate {needs['offense_rate']:,}, length {needs['length']:,} (this audit: 120;" in text
    planned = runner.invoke(app, ["plan", "--gate", "--results", str(tmp_path / "out" / "results.json")])
    assert planned.exit_code == 0, planned.output
    for key, n in needs.items():
        assert re.search(rf"{key} \(\w+\): {n:,} pairs", planned.output), (key, n, planned.output)


def test_a_count_that_rarely_differs_is_planned_by_the_audits_own_rule_in_the_report_as_in_plan(tmp_path: Path) -> None:
    """Review finding (issue 39): a count key differing on one pair in 200 was planned by the normal formula in the
    report (15 pairs for family_words) while `plan --gate` planned it by the power of the audit's own rule; a sample
    of 15 pairs mostly holds no differing pair, which the TOST cannot pass. Both now plan it one way."""
    from fairtalk.stats import pairs_for_equivalence

    rows = []
    for i in range(200):
        a = f"that is a lovely idea number {i % 5}" + (" indeed" if i == 7 else "")
        rows += [
            Response(f"p{i}", "a", f"he said hi {i}", a),
            Response(f"p{i}", "b", f"she said hi {i}", a.replace(" indeed", "")),
        ]
    fairtalk.write_responses(rows, tmp_path / "r.jsonl")
    args = ["score", "--responses", str(tmp_path / "r.jsonl"), "--axis", "gender", "--measures", "length"]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "out"), "--resamples", "100"])
    assert done.exit_code == 0, done.output
    length = json.loads((tmp_path / "out" / "results.json").read_text())["measures"]["length"]
    normal = pairs_for_equivalence(length["sd_difference"], length["equivalence_margin"], design_effect=1.0)
    assert normal * (1 / 200) < 10  # few differing pairs at the normal formula's size
    n = length["gate_pairs"]
    assert isinstance(n, int) and n > normal and 1 - (1 - 1 / 200) ** n >= 0.8, (n, normal)  # a sample holds one
    planned = runner.invoke(app, ["plan", "--gate", "--results", str(tmp_path / "out" / "results.json")])
    assert planned.exit_code == 0, planned.output
    assert re.search(rf"length \(count\): {n:,} pairs", planned.output), (n, planned.output)
    assert "the exact power of the audit's own rule" in " ".join(planned.output.split())
