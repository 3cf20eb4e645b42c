"""``plan --gate --results PILOT`` says where the gate fails a model like the pilot at any size (``gates.at_any_size``).

Review finding: a pilot whose every answer was empty (which fails every gate at any size) got "the gate needs at least
572 pairs … the pilot scored 600 pairs" with no warning; a pilot that lost 5% of its answers on side b only got 1,268
pairs "for a fair model" with no word that a model like it fails the loss check at any size, and an audit of 1,268
pairs then failed on the losses. Plan now asks the gates (``fairtalk.gates.at_any_size``) and says so plainly.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.gates import Gate, at_any_size, evaluate
from fairtalk.records import Response
from fairtalk.results import AuditResult, MeasureResult, TestedKey, Verdict
from fairtalk.stats import PPIEstimate

runner = CliRunner()
ANSWER = "that is a lovely idea, tell me more"


def _scored(tmp_path: Path, *, a: str, b_empty_every: int) -> Path:
    """A pilot scored on 120 pairs: side a answers ``a``; side b nothing on every ``b_empty_every``-th pair, else ANSWER."""
    rows = []
    for i in range(120):
        b = "" if i % b_empty_every == 0 else ANSWER
        rows += [Response(f"p{i}", "a", f"he said hi {i}", a), Response(f"p{i}", "b", f"she said hi {i}", b)]
    responses = tmp_path / "responses.jsonl"
    fairtalk.write_responses(rows, responses)
    result = fairtalk.score(responses, axis="gender", measures="length", n_resamples=100)
    path = tmp_path / "results.json"
    path.write_text(result.to_json(), encoding="utf-8")
    return path


def _plan(path: Path) -> str:
    done = runner.invoke(app, ["plan", "--gate", "--results", str(path)])
    assert done.exit_code == 0, done.output
    return " ".join(done.output.split())


def test_a_pilot_whose_every_answer_is_empty_is_said_to_fail_the_gate_at_any_size(tmp_path: Path) -> None:
    pilot = _scored(tmp_path, a="", b_empty_every=1)
    outcome = evaluate(AuditResult.read_json(pilot), Gate.FAIL_UNLESS_EQUIVALENT)
    assert not outcome.passed and "every answer on gender was empty" in outcome.headline  # the gate, at the pilot's size
    flat = _plan(pilot)
    assert "a fair model needs at least" in flat and "the gate needs at least" not in flat
    assert "but a model like the pilot fails the gate at any size" in flat
    assert "so these sizes are for a fair model only: every answer on gender was empty: there is nothing to judge" in flat


def test_a_pilot_empty_on_one_side_is_said_to_fail_the_gate_at_any_size(tmp_path: Path) -> None:
    flat = _plan(_scored(tmp_path, a=ANSWER, b_empty_every=4))
    assert (
        "gender: empty answers on 30 of 120 pairs (side a only 0, side b only 30, both 0): side b was empty on 25.00 pp "
        "more of the pairs than side a, beyond the ±2 pp the gate allows (detected: the sides' empty answers differ"
    ) in flat


def test_a_pilot_that_lost_5_percent_on_one_side_undetectably_is_said_to_fail_the_gate_at_any_size(tmp_path: Path) -> None:
    """5 of 100 pairs lost on side b only: McNemar's p 0.0625 detects nothing, yet 5 points lie beyond the ±2 allowed."""
    length = {"kind": "count", "sd_difference": 10.0, "design_effect": 1.0, "equivalence_margin": 1.0, "primary": True}
    pilot = tmp_path / "results.json"
    pilot.write_text(
        json.dumps({"n_pairs": 95, "alpha": 0.05, "measures": {"length": length}, "input_summary": {"n_lost_b_only": 5}})
    )
    flat = _plan(pilot)
    assert "pairs_lost_by_side (rate):" in flat and "a fair model needs at least" in flat
    assert (
        "so these sizes are for a fair model only: pilot: answers lost on 5 of 100 pairs (side a only 0, side b only 5, "
        "both 0): side b was lost on 5.00 pp more of the pairs than side a, beyond the ±2 pp the gate allows (not "
        "detectably at this size)"
    ) in flat


def test_the_gates_name_what_fails_at_any_size_and_nothing_for_a_fair_audit() -> None:
    key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), None, "")
    fair = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict=Verdict.EQUIVALENT)
    assert at_any_size(AuditResult("gender", ("m", "f"), 100, (fair,))) == ()
    balanced = AuditResult("gender", ("m", "f"), 96, (fair,), input_summary={"n_lost_a_only": 2, "n_lost_b_only": 2})
    assert at_any_size(balanced) == ()
    ppi = PPIEstimate(0.5, (0.4, 0.6), 1e-9, 0.05, 80, 100, 0.0, 0.0, 0.5, (0.4, 0.6), float("nan"))
    labelled = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict=Verdict.EQUIVALENT, ppi=ppi)
    (decision,) = at_any_size(AuditResult("gender", ("m", "f"), 100, (labelled,)))
    assert decision.name == "gender/offense_rate" and decision.on == "labels" and not decision.passed
    assert decision.reason == (
        "the labels show a gap beyond the margin ±2.00 pp (labelled gap +50.00 pp, 95% CI [+40.00 pp, +60.00 pp], 80 labels)"
    )


def test_counts_of_lost_answers_that_do_not_add_up_are_said_so_not_judged_nor_a_crash(tmp_path: Path) -> None:
    """A hand-edited pilot: counts that are no counts, do not add up, or reach a billion pairs (whose 0/1 outcomes no
    memory holds) are said so, and nothing is claimed of them; losses of no recorded side are said to fail every gate."""
    length = {"kind": "count", "sd_difference": 10.0, "design_effect": 1.0, "equivalence_margin": 1.0, "primary": True}
    pilot = tmp_path / "results.json"
    for summary in (
        {"n_lost_b_only": "x"},
        {"n_lost_b_only": -5},
        {"n_empty_a": 5, "n_empty_b": 200, "n_empty_both": 300},
        {"n_lost_b_only": 10**9},
    ):
        pilot.write_text(json.dumps({"n_pairs": 95, "alpha": 0.05, "measures": {"length": length}, "input_summary": summary}))
        flat = _plan(pilot)
        assert "its counts of lost or empty answers (input_summary) do not add up, or exceed 10,000,000 pairs" in flat, summary
        assert "at any size (more pairs" not in flat and "the gate needs at least" in flat
    pilot.write_text(
        json.dumps({"n_pairs": 95, "alpha": 0.05, "measures": {"length": length}, "input_summary": {"n_pairs_with_errors": 3}})
    )
    flat = _plan(pilot)
    assert "its lost pairs do not record which side was lost" in flat and "at any size (more pairs" not in flat
