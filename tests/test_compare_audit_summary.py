"""`audit --baseline-model` appends the comparison to the GitHub job summary, after the candidate's audit."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus, write_models
from fairtalk.cli import app

runner = CliRunner()


def test_the_comparison_is_appended_to_the_job_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    done = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"python:{models}:biased",
            "--baseline-model",
            f"python:{models}:fair",
            "--measures",
            "offense,sentiment",
            "--resamples",
            "50",
            "-o",
            str(tmp_path / "out"),
            "--fail-if-worse",
        ],
    )
    assert done.exit_code == 1, done.output
    text = summary.read_text()
    assert text.startswith("earlier step\n")
    assert text.index("## fairtalk: gender") < text.index("## fairtalk compare: ")
    assert "regressed" in text[text.index("## fairtalk compare: ") :]
