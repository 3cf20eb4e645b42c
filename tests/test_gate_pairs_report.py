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
