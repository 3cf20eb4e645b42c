"""Ctrl-C in `score` or `audit` whose output folder holds an earlier run's report: the message says that report is not this run's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_corpus, write_models
from fairtalk.cli import app

runner = CliRunner()
_EARLIER = "{out} still holds an earlier run's report: its results and gate outcomes are not this run's"


def _ctrl_c(*args: Any, **kwargs: Any) -> Any:
    raise KeyboardInterrupt


def _said(result: Any) -> str:
    return " ".join(result.stderr.split())


def test_ctrl_c_in_score_names_the_earlier_passing_report_left_in_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding: "the report was not written", while the earlier run's passing results.json stayed, unnamed."""
    responses = tmp_path / "r.jsonl"
    with responses.open("w", encoding="utf-8") as f:
        for i in range(30):
            for side in "ab":
                f.write(
                    json.dumps(
                        {
                            "pair_id": f"p{i}",
                            "side": side,
                            "context": f"{'he' if side == 'a' else 'she'} said {i}",
                            "response": "ok then",
                        }
                    )
                    + "\n"
                )
    out, junit = tmp_path / "out", tmp_path / "j.xml"
    args = ["score", "--responses", str(responses), "--axis", "gender", "-o", str(out), "--junit", str(junit)]
    args += ["--resamples", "200", "--measures", "length", "--fail-on-bias"]
    monkeypatch.setattr(fairtalk, "score", _ctrl_c)
    first = runner.invoke(app, [*args, "-o", str(tmp_path / "fresh")])  # no earlier report: none named
    assert first.exit_code == 130 and "earlier run" not in _said(first)
    monkeypatch.undo()
    assert runner.invoke(app, args).exit_code == 0 and (out / "results.json").is_file()
    monkeypatch.setattr(fairtalk, "score", _ctrl_c)
    stopped = runner.invoke(app, args)
    assert stopped.exit_code == 130, stopped.output
    said = _said(stopped)
    assert "interrupted; the report was not written" in said and _EARLIER.format(out=out) in said
    assert _EARLIER.format(out=out) in " ".join(junit.read_text().split())  # the JUnit file records the same line


def test_ctrl_c_in_audit_names_the_earlier_run_left_in_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As score says it: the audit's folder keeps the earlier run whole (written atomically), which is not this run."""
    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    out = tmp_path / "out"
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", f"python:{models}:fair", "-o", str(out)]
    args += ["--pairs", "20", "--resamples", "200"]
    assert runner.invoke(app, args).exit_code == 0
    monkeypatch.setattr(fairtalk, "audit", _ctrl_c)
    stopped = runner.invoke(app, args)
    assert stopped.exit_code == 130, stopped.output
    assert _EARLIER.format(out=out) in _said(stopped) and (out / "run.json").is_file()
