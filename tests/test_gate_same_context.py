"""Pairs with the same context on both sides fail the gates closed (``fairtalk.gates``).

Review finding: a pairs file with ``b`` equal to ``a`` on all 800 pairs, answered by ``builtin:echo``,
passed ``score --fail-unless-equivalent`` although its own warning said the pairs "are not
counterfactual pairs". The count now goes to ``input_summary`` (``n_same_context``), and every gate
fails an axis on which fewer than two pairs differ in context; where more do, the headline says how
many did not.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.gates import evaluate
from fairtalk.results import AuditResult, MeasureResult, TestedKey, Verdict

runner = CliRunner()


def _result(n_pairs: int, same: int | None) -> AuditResult:
    key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), None, "")
    m = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict=Verdict.EQUIVALENT)
    summary = {} if same is None else {"n_same_context": same}
    return AuditResult("gender", ("m", "f"), n_pairs, (m,), input_summary=summary)


@pytest.mark.parametrize("gate", ["fail-on-bias", "fail-unless-equivalent"])
@pytest.mark.parametrize("same", [800, 799])
def test_an_axis_whose_pairs_all_but_one_ask_the_same_context_fails_every_gate(gate: str, same: int) -> None:
    outcome = evaluate(_result(800, same), gate)
    assert not outcome.passed
    (failure,) = outcome.run_failures
    assert (failure.axis, failure.key, failure.on) == ("gender", None, "context")
    assert f"gender: {same} of 800 pairs have the same context on both sides" in failure.reason
    assert "not counterfactual" in failure.reason and failure.reason in outcome.headline
    assert outcome.to_dict()["failures"] == [{"name": "gender", "reason": failure.reason}]


def test_some_pairs_with_the_same_context_pass_with_the_headline_saying_so() -> None:
    outcome = evaluate(_result(800, 700), "fail-unless-equivalent")
    assert outcome.passed
    assert "gender: 700 of 800 pairs have the same context on both sides" in outcome.headline
    assert "100 of them counterfactual" in outcome.headline


def test_a_result_without_the_count_keeps_its_decision() -> None:
    """A results.json written before the pairs were counted has none: the gate cannot know, and decides as before."""
    outcome = evaluate(_result(800, None), "fail-unless-equivalent")
    assert outcome.passed and "same context" not in outcome.headline
    assert _result(800, None).same_context is None


def _write(path: Path, n: int, same: int) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            b = f"he said {i}" if i < same else f"she said {i}"
            f.write(json.dumps({"pair_id": f"p{i}", "side": "a", "context": f"he said {i}", "response": "ok"}) + "\n")
            f.write(json.dumps({"pair_id": f"p{i}", "side": "b", "context": b, "response": "ok"}) + "\n")
    return path


def test_score_fails_the_gate_on_pairs_with_the_same_context_in_every_output(tmp_path: Path) -> None:
    responses = _write(tmp_path / "same.jsonl", 60, 60)
    out, junit = tmp_path / "out", tmp_path / "j.xml"
    args = ["score", "--responses", str(responses), "--axis", "gender", "-o", str(out), "--measures", "length"]
    done = runner.invoke(app, [*args, "--fail-on-bias", "--junit", str(junit), "--resamples", "200"])
    assert done.exit_code == 1, done.output  # identical answers on every pair: it passed on them before
    shown = " ".join(done.output.split())
    assert "Gate fail-on-bias: FAILED — gender: 60 of 60 pairs have the same context on both sides" in shown
    assert "every gate fails on this axis" in shown  # the warning says what the gate will do
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["input_summary"]["n_same_context"] == 60
    assert not evaluate(AuditResult.from_dict(data), "fail-unless-equivalent").passed  # read back, the count decides
    failures = [f.get("message", "") for f in ET.parse(junit).iter("failure")]
    assert any("60 of 60 pairs have the same context on both sides" in m for m in failures), failures


def test_score_passes_counterfactual_pairs_without_a_count(tmp_path: Path) -> None:
    responses = _write(tmp_path / "fine.jsonl", 60, 0)
    out = tmp_path / "out"
    args = ["score", "--responses", str(responses), "--axis", "gender", "-o", str(out), "--measures", "length"]
    done = runner.invoke(app, [*args, "--fail-on-bias", "--resamples", "200"])
    assert done.exit_code == 0, done.output
    assert "n_same_context" not in json.loads((out / "results.json").read_text(encoding="utf-8"))["input_summary"]
