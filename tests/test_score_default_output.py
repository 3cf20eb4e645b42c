"""``fairtalk score`` without ``-o`` writes a folder of its own, not ``fairtalk audit``'s default.

Review finding: both commands defaulted to ``fairtalk-report``, and each refuses a folder holding
another command's report, so ``fairtalk audit`` then ``fairtalk score responses.jsonl`` (no ``-o``)
stopped with an error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus
from fairtalk.cli import app
from fairtalk.cli._schema import DEFAULT_SCORE_OUTPUT

runner = CliRunner()
#: ``fairtalk audit``'s output folder when ``-o`` is not given.
AUDIT_OUTPUT = "fairtalk-report"


def test_audit_then_score_with_no_output_each_write_their_own_folder_which_compare_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = write_corpus(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    cheap = ["--axis", "gender", "--measures", "length", "--resamples", "100"]
    audit = ["audit", "--corpus", str(corpus), "--model", "builtin:echo", *cheap]
    first = runner.invoke(app, audit)
    assert first.exit_code == 0, first.output
    assert (work / AUDIT_OUTPUT / "run.json").is_file()
    score = ["score", "--responses", f"{AUDIT_OUTPUT}/gender/responses.jsonl", *cheap]
    scored = runner.invoke(app, score)
    assert scored.exit_code == 0, scored.output
    assert DEFAULT_SCORE_OUTPUT == "fairtalk-score"
    assert {"results.json", "report.md"} <= {p.name for p in (work / DEFAULT_SCORE_OUTPUT).iterdir()}
    assert runner.invoke(app, score).exit_code == 0  # a rerun replaces its own folder
    assert not (work / AUDIT_OUTPUT / "results.json").exists(), "the audit's folder is left as it was"
    compared = runner.invoke(app, ["compare", AUDIT_OUTPUT, DEFAULT_SCORE_OUTPUT, "-o", "compared"])
    assert compared.exit_code == 0, compared.output
    assert (work / "compared" / "results.json").is_file()


def test_score_help_names_its_own_default_folder() -> None:
    result = runner.invoke(app, ["score", "--help-full"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0
    line = " ".join(next(text for text in result.output.splitlines() if "--output" in text).split())
    assert f"[default: {DEFAULT_SCORE_OUTPUT}]" in line and "not an audit's output" in line, line
