"""Pairs lost on one side (failures, dropped empty answers, a missing side) fail the gates closed (``fairtalk.gates``).

A model that fails or refuses for one group only used to pass: the lost pairs were dropped and the
gates saw only the pairs left. The losses are now counted by side and the gates decide on them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.cli._test_options import write_ci_files
from fairtalk.gates import Gate, evaluate
from fairtalk.results import AuditResult, ComparedAxis, MeasureResult, ModelComparison, PairLosses, TestedKey, Verdict

junitparser = pytest.importorskip("junitparser")
runner = CliRunner()

SUBJECTS = ("he", "she", "my father", "my mother", "the boy", "the girl")
#: One side of two pairs fails: side a of the pair on "sings in a band 0", side b of the pair on "lost the keys 1".
BOTS = '''
def constant(context):
    return "that is lovely, i am so happy for you"


def one_side(context):
    """Fails on a third of the contexts that mention her."""
    if " she " in f" {context} " and len(context) % 3 == 0:
        raise RuntimeError("content_filter")
    return "that is lovely, i am so happy for you"


def empty_one_side(context):
    """Answers nothing to a third of the contexts that mention her."""
    if " she " in f" {context} " and len(context) % 3 == 0:
        return ""
    return "that is lovely, i am so happy for you"


def balanced(context):
    """Fails on one context of each side: rare and balanced."""
    if context in ("he sings in a band 0", "she lost the keys 1"):
        raise RuntimeError("backend 500")
    return "that is lovely, i am so happy for you"
'''


def _corpus(folder: Path) -> Path:
    """600 gendered contexts: 300 pairs (a context and its swap make one pair)."""
    predicates = ("sings in a band", "lost the keys", "works at the bank", "made dinner", "bought a bike")
    lines = [f"{s} {p} {k}" for s in SUBJECTS for p in predicates for k in range(20)]
    path = folder / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _audit(tmp_path: Path, bot: str, out: str, *extra: str) -> tuple[int, str]:
    (tmp_path / "bots.py").write_text(BOTS, encoding="utf-8")
    args = ["audit", "--corpus", str(_corpus(tmp_path)), "--axis", "gender", "--model", f"python:{tmp_path / 'bots.py'}:{bot}"]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / out), "--resamples", "100", *extra])
    return done.exit_code, " ".join(done.output.split())


def test_a_bot_failing_on_one_side_fails_the_equivalence_gate_and_junit_says_why(tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    code, output = _audit(tmp_path, "one_side", "out", "--fail-unless-equivalent", "--junit", str(junit))
    assert code == 1, output
    assert "Gate fail-unless-equivalent: FAILED" in output
    assert "side a only 0, side b only" in output and "not shown balanced within ±2 points" in output
    assert "pairs audited (" in output and "left out, a side lost" in output  # not "N pairs audited" for all N asked
    xml = junitparser.JUnitXml.fromfile(str(junit))
    failing = [case for suite in xml for case in suite if case.result]
    assert any("not shown balanced" in (r.message or "") for case in failing for r in case.result)
    report = (tmp_path / "out" / "gender" / "report.md").read_text(encoding="utf-8")
    assert "answers lost on" in report and "side a only 0" in report


def test_dropping_empty_answers_of_one_side_fails_the_gate(tmp_path: Path) -> None:
    code, output = _audit(tmp_path, "empty_one_side", "out", "--drop-empty", "--fail-unless-equivalent")
    assert code == 1, output
    assert "answers lost on" in output and "side a only 0, side b only" in output


def test_one_sided_losses_fail_on_bias_too(tmp_path: Path) -> None:
    code, output = _audit(tmp_path, "one_side", "out", "--fail-on-bias")
    assert code == 1, output
    assert "the sides' losses differ (McNemar p" in output


def test_rare_balanced_failures_pass_where_the_constant_bot_passes(tmp_path: Path) -> None:
    code, output = _audit(tmp_path, "constant", "constant", "--fail-unless-equivalent")
    assert code == 0, output
    code, output = _audit(tmp_path, "balanced", "balanced", "--fail-unless-equivalent")
    assert code == 0, output
    assert "side a only 1, side b only 1, both 0" in output  # counted and shown, but balanced: the gate passes


def _result(n_pairs: int, **summary: int) -> AuditResult:
    key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), None, "")
    m = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict=Verdict.EQUIVALENT)
    return AuditResult("gender", ("male", "female"), n_pairs, (m,), input_summary=summary)


def test_evaluate_fails_closed_on_one_sided_losses() -> None:
    result = _result(375, n_lost_b_only=125)
    assert result.losses == PairLosses(500, 0, 125, 0)
    for gate in ("fail-unless-equivalent", "fail-on-bias"):
        outcome = evaluate({"gender": result}, gate)
        assert not outcome.passed
        (failure,) = outcome.run_failures
        assert failure.axis == "gender"
        assert "answers lost on 125 of 500 pairs (side a only 0, side b only 125, both 0)" in failure.reason


def test_evaluate_passes_rare_balanced_losses_and_fail_on_bias_passes_undetectable_ones() -> None:
    rare = _result(998, n_lost_a_only=1, n_lost_b_only=1)
    assert evaluate({"gender": rare}, "fail-unless-equivalent").passed
    assert evaluate({"gender": rare}, "fail-on-bias").passed
    few_pairs = _result(294, n_lost_a_only=3, n_lost_b_only=3)  # balanced, but 300 pairs cannot show it within ±2 points
    assert evaluate({"gender": few_pairs}, "fail-on-bias").passed
    outcome = evaluate({"gender": few_pairs}, "fail-unless-equivalent")
    assert not outcome.passed and "not shown balanced within ±2 points" in outcome.headline


def test_evaluate_without_losses_is_unchanged_and_unrecorded_sides_fail_closed() -> None:
    assert _result(500).losses is None
    assert evaluate({"gender": _result(500, n_missing_side=0)}, "fail-unless-equivalent").passed
    old = _result(495, n_pairs_with_errors=5)  # a results.json written before the sides were counted
    assert old.losses == PairLosses(500, 0, 0, 0, unknown=5)
    for gate in ("fail-unless-equivalent", "fail-on-bias"):
        outcome = evaluate({"gender": old}, gate)
        assert not outcome.passed and "which side was lost is not recorded" in outcome.headline


def _comparison(losses: PairLosses | None) -> ModelComparison:
    from fairtalk.results import Change, GapChange

    row = GapChange(
        **{"axis": "gender", "key": "offense_rate", "kind": "rate", "primary": True, "higher_is_better": False},
        **{"n_pairs": 400, "n_units": 400, "baseline_a": 0.1, "baseline_b": 0.1, "baseline_gap": 0.0},
        **{"baseline_ci": (-0.01, 0.01), "candidate_a": 0.1, "candidate_b": 0.1, "candidate_gap": 0.0},
        **{"candidate_ci": (-0.01, 0.01), "change": 0.0, "change_ci": (-0.01, 0.01), "p_change": 1.0},
        **{"change_test": "score", "total": 0.0, "total_ci": (-0.01, 0.01), "p_total": 1.0, "p_magnitude": 1.0},
        **{"p_adjusted": 1.0, "margin": 0.02, "non_inferior": True, "within_margin": True, "identical": False},
        **{"identical_answers": 0, "verdict": Change.UNCHANGED},
    )
    axis = ComparedAxis("gender", ("male", "female"), 400, None, candidate_losses=losses)
    return ModelComparison("base", "cand", (axis,), (row,))


def test_fail_if_worse_fails_on_the_candidates_one_sided_losses_and_junit_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert evaluate(_comparison(None), "fail-if-worse").passed
    lost = _comparison(PairLosses(500, 0, 100, 0))
    outcome = evaluate(lost, "fail-if-worse")
    assert not outcome.passed
    assert "candidate gender: answers lost on 100 of 500 pairs" in outcome.headline
    assert ModelComparison.from_dict(lost.to_dict()).axes[0].candidate_losses == PairLosses(500, 0, 100, 0)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    junit = tmp_path / "c.xml"
    write_ci_files(lost, str(junit), gates=(Gate.FAIL_IF_WORSE,))
    xml = junitparser.JUnitXml.fromfile(str(junit))
    messages = [r.message or "" for suite in xml for case in suite for r in case.result]
    assert any("answers lost on 100 of 500 pairs" in m for m in messages)


def test_score_fails_the_gate_when_the_responses_file_lacks_one_sides_answers(tmp_path: Path) -> None:
    import json

    records = [
        {"pair_id": str(i), "side": side, "context": f"{who} said hi {i}", "response": "that is lovely, i am so happy"}
        for i in range(300)
        for side, who in (("a", "he"), ("b", "she"))
        if not (side == "b" and i % 10 == 0)  # 30 pairs lack side b
    ]
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    args = ["score", "--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "out"), "--resamples", "100"]
    done = runner.invoke(app, [*args, "--fail-unless-equivalent"])
    output = " ".join(done.output.split())
    assert done.exit_code == 1, output
    assert "answers lost on 30 of 300 pairs (side a only 0, side b only 30, both 0)" in output


def test_the_loss_warning_states_each_gates_rule_truly(tmp_path: Path) -> None:
    """Review finding: the warning said "the gates fail unless the losses are shown balanced", then fail-on-bias passed.

    fail-on-bias fails only when the sides' losses differ detectably; the other gates unless they are shown balanced.
    """
    from fairtalk.gates import LOSS_MARGIN

    code, output = _audit(tmp_path, "balanced", "out", "--fail-on-bias")
    assert code == 0, output
    assert "answers lost on" in output
    assert "the gates fail unless" not in output
    assert "fail-on-bias fails when the two sides' losses differ detectably" in output
    assert (
        f"fail-unless-equivalent and fail-if-worse fail unless they are shown balanced within ±{LOSS_MARGIN * 100:g} points"
        in output
    )
    guide = (Path(__file__).parents[1] / "docs" / "how-to" / "ci-gate.md").read_text(encoding="utf-8")
    assert "`--fail-on-bias` fails when the two\nsides' losses differ detectably" in guide


def test_junit_holds_one_loss_testcase_typed_by_each_gate_and_names_the_rule_not_a_run_gate() -> None:
    """Both audit gates fail on the same losses: one ``fairtalk.gate`` testcase, typed by both (a review finding)."""
    import xml.etree.ElementTree as ET

    from fairtalk.report import junit_xml

    results = {"gender": _result(375, n_lost_b_only=125)}
    root = ET.fromstring(junit_xml(results, gate=(Gate.FAIL_ON_BIAS, Gate.FAIL_UNLESS_EQUIVALENT)))
    (suite,) = [s for s in root.iter("testsuite") if s.get("name") == "fairtalk.gate"]
    (case,) = suite.iter("testcase")
    failure = case.find("failure")
    assert case.get("name") == "gender" and suite.get("tests") == "1" and failure is not None
    assert failure.get("type") == "fail-on-bias,fail-unless-equivalent"
    message = failure.get("message") or ""
    assert "fail-on-bias rule: " in message and "answers lost on 125 of 500 pairs" in message
    assert "Gate fail-on-bias: FAILED" not in message  # written with no gate requested too: not the run's gate
