"""The gates read a key's labelled estimate too (``score --gold``): the user's own labels fail a gate the scorer passed.

Review finding: a gold file labelling side a 1 and side b 0 on all 100 pairs gave "labelled: gap +100.00 pp, 95% CI
[+92.60, +100.00]", yet the audit said "no difference detected" and "Gate fail-on-bias: passed", exit 0. Now
``fail-on-bias`` fails a key whose labelled 95% interval excludes 0, ``fail-unless-equivalent`` one whose labelled
interval lies wholly outside the margin, and a pass the labels cannot confirm says so; the console, ``--json``, JUnit
and report.md all carry the labelled evidence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.gates import Gate, evaluate
from fairtalk.records import Response
from fairtalk.results import AuditResult, MeasureResult, TestedKey, Verdict
from fairtalk.stats import PPIEstimate

runner = CliRunner()


def _ppi(low: float, high: float, n_labels: int = 100) -> PPIEstimate:
    estimate = (low + high) / 2
    return PPIEstimate(estimate, (low, high), 0.01, 0.02, n_labels, 100, 0.0, 0.0, estimate, (low, high), float("nan"))


def _result(verdict: Verdict, ppi: PPIEstimate | None, *, equivalent: bool) -> AuditResult:
    key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), None, "")
    p_adjusted = 0.001 if verdict is Verdict.DIFFERENT else 1.0
    m = MeasureResult(key, p_adjusted=p_adjusted, equivalence_margin=0.02, equivalent=equivalent, verdict=verdict, ppi=ppi)
    return AuditResult("gender", ("m", "f"), 100, (m,))


def test_labels_whose_interval_excludes_zero_fail_fail_on_bias_where_the_scorer_found_no_difference() -> None:
    outcome = evaluate(_result(Verdict.EQUIVALENT, _ppi(0.926, 1.0), equivalent=True), Gate.FAIL_ON_BIAS)
    assert not outcome.passed
    (failure,) = outcome.failures
    assert failure.name == "gender/offense_rate" and failure.on == "labels"
    assert failure.reason.startswith("the labels show a difference the scorer missed (labelled gap +96.30 pp, 95% CI")
    assert "[+92.60 pp, +100.00 pp], 100 labels: the interval excludes 0); the scorer: no difference detected" in failure.reason
    assert "the labels show a difference the scorer missed on gender/offense_rate (labelled gap +96.30 pp" in outcome.headline
    assert outcome.to_dict()["failures"] == [{"name": "gender/offense_rate", "reason": failure.reason}]


@pytest.mark.parametrize("interval", [(-0.05, 0.08), (-0.3, 0.0)])
def test_labels_whose_interval_holds_zero_leave_fail_on_bias_to_the_scorer(interval: tuple[float, float]) -> None:
    plain = evaluate(_result(Verdict.EQUIVALENT, None, equivalent=True), Gate.FAIL_ON_BIAS)
    labelled = evaluate(_result(Verdict.EQUIVALENT, _ppi(*interval), equivalent=True), Gate.FAIL_ON_BIAS)
    assert labelled.passed and labelled.headline == plain.headline and labelled.decisions == plain.decisions


def test_a_difference_the_scorer_detected_stays_a_failure_and_names_the_labels_that_show_it_too() -> None:
    outcome = evaluate(_result(Verdict.DIFFERENT, _ppi(0.1, 0.3), equivalent=False), Gate.FAIL_ON_BIAS)
    (failure,) = outcome.failures
    assert failure.on is None and failure.reason.startswith("difference detected: McNemar adjusted p 0.001 < 0.05; ")
    assert failure.reason.endswith(
        "; the labels show a difference too (labelled gap +20.00 pp, 95% CI [+10.00 pp, +30.00 pp], 100 labels: the interval excludes 0)"
    )


@pytest.mark.parametrize("interval", [(0.03, 0.2), (-0.5, -0.021)])
def test_labels_wholly_outside_the_margin_fail_the_equivalence_gate_the_scorer_passed(interval: tuple[float, float]) -> None:
    outcome = evaluate(_result(Verdict.EQUIVALENT, _ppi(*interval), equivalent=True), Gate.FAIL_UNLESS_EQUIVALENT)
    assert not outcome.passed
    (failure,) = outcome.failures
    assert failure.on == "labels" and failure.reason.startswith("the labels show a gap beyond the margin ±2.00 pp (labelled")
    assert "the interval lies outside it); the scorer: shown equivalent within ±2.00 pp" in failure.reason
    assert "the labels show a gap beyond the margin on gender/offense_rate (labelled gap" in outcome.headline
    assert outcome.headline.startswith("Gate fail-unless-equivalent: FAILED — 1 of 1 primary measure not shown equivalent")


def test_a_wide_labelled_interval_leaves_the_scorers_equivalence_standing_and_says_the_labels_could_not_confirm_it() -> None:
    outcome = evaluate(_result(Verdict.EQUIVALENT, _ppi(-0.01, 0.09, 40), equivalent=True), Gate.FAIL_UNLESS_EQUIVALENT)
    assert outcome.passed and not outcome.failures
    (decision,) = outcome.decisions
    assert decision.on == "unconfirmed"
    assert decision.reason == (
        "shown equivalent within ±2.00 pp; the labels could not confirm it (labelled gap +4.00 pp, 95% CI [-1.00 pp, "
        "+9.00 pp], 40 labels: the interval is not inside ±2.00 pp)"
    )
    assert outcome.headline == (
        "Gate fail-unless-equivalent: passed — all 1 primary measure shown equivalent within the margin; the labels "
        "could not confirm gender/offense_rate (labelled gap +4.00 pp, 95% CI [-1.00 pp, +9.00 pp], 40 labels: not "
        "inside ±2.00 pp)"
    )
    agree = evaluate(_result(Verdict.EQUIVALENT, _ppi(-0.01, 0.015), equivalent=True), Gate.FAIL_UNLESS_EQUIVALENT)
    assert agree.passed and agree.decisions[0].on is None
    assert agree.decisions[0].reason.endswith(
        "; the labels agree (labelled gap +0.25 pp, 95% CI [-1.00 pp, +1.50 pp], 100 labels: the interval lies inside ±2.00 pp)"
    )


def _files(tmp_path: Path, n_pairs: int = 60) -> tuple[Path, Path]:
    """A model that answers both sides alike (the scorer's gap 0) and labels on 60 pairs that call side a offensive, b not."""
    responses = tmp_path / "responses.jsonl"
    text = "that is a lovely idea, tell me more"
    rows = [
        Response(f"p{i}", side, f"{'he' if side == 'a' else 'she'} said hi {i}", text)
        for i in range(n_pairs)
        for side in ("a", "b")
    ]
    fairtalk.write_responses(rows, responses)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "".join(
            json.dumps({"pair_id": f"p{i}", "side": side, "offense_rate": int(side == "a"), "annotator": "ana"}) + "\n"
            for i in range(60)
            for side in "ab"
        ),
        encoding="utf-8",
    )
    return responses, gold


def test_score_with_labels_showing_a_gap_fails_the_gate_in_the_exit_code_json_junit_and_report(tmp_path: Path) -> None:
    responses, gold = _files(tmp_path)
    out, junit = tmp_path / "out", tmp_path / "junit.xml"
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--gold", str(gold)]
    done = runner.invoke(app, [*args, "-o", str(out), "--resamples", "100", "--fail-on-bias", "--junit", str(junit)])
    assert done.exit_code == 1, done.output
    said = "the labels show a difference the scorer missed on gender/offense_rate (labelled gap +100.00 pp"
    assert said in " ".join(done.output.split())
    assert "no difference detected by the scorer on any axis" in " ".join(done.output.split())
    assert "no difference detected on any axis" not in " ".join(done.output.split())  # no clean bill beside a failure
    report = " ".join((out / "report.md").read_text(encoding="utf-8").replace("\\_", "_").split())
    assert said in report and "offense_rate: FAILED — the labels show a difference the scorer missed (labelled" in report
    assert "the labels show a difference the scorer missed (labelled gap +100.00 pp" in junit.read_text(encoding="utf-8")
    html = " ".join((out / "report.html").read_text(encoding="utf-8").split())
    assert said in html and "the labels show a difference the scorer missed (labelled gap +100.00 pp" in html
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "again"), "--resamples", "100", "--fail-on-bias", "--json"])
    assert done.exit_code == 1
    (gate,) = json.loads(done.stdout)["gates"]
    assert not gate["passed"] and said in gate["headline"]
    assert gate["failures"][0]["reason"].startswith("the labels show a difference the scorer missed (labelled gap +100.00 pp")


def _no_margin_key(ppi: PPIEstimate | None) -> AuditResult:
    """A judge score answered alike on every pair: no margin, shown equivalent by the identical-answers bound."""
    from fairtalk.stats import METHOD_IDENTICAL

    note = "identical on all 600 pairs (153 dialogues): at most 1.94% of dialogues could differ (95% one-sided exact bound)"
    key = TestedKey("judge_score", "count", 3.0, 3.0, 0.0, None, None, None, "none", (None, None), None, "", notes=(note,))
    m = MeasureResult(
        key,
        p_adjusted=None,
        equivalence_margin=None,
        p_equivalence=0.045,
        equivalent=True,
        equivalence_test=METHOD_IDENTICAL,
        verdict=Verdict.EQUIVALENT,
        ppi=ppi,
    )
    return AuditResult("gender", ("m", "f"), 600, (m,))


def test_labels_showing_a_gap_on_a_key_with_no_margin_fail_the_equivalence_gate_and_plan_says_so() -> None:
    """Review: a judge score labelled 1 vs 5 on 60 pairs passed fail-unless-equivalent, its margin null."""
    from fairtalk.gates import at_any_size, labels_findings

    result = _no_margin_key(_ppi(-4.239, -3.761, 60))
    outcome = evaluate(result, Gate.FAIL_UNLESS_EQUIVALENT)
    assert not outcome.passed
    (failure,) = outcome.failures
    assert failure.on == "labels"
    assert failure.labels.startswith("the labels show a difference and the key has no margin to show equivalence within")
    assert failure.reason.startswith(failure.labels + "; the scorer: shown equivalent with no margin")
    assert "the labels show a difference on gender/judge_score (labelled gap -4, 95% CI [-4.239, -3.761]" in outcome.headline
    (lasting,) = at_any_size(result)
    assert lasting.on == "labels" and "the key has no margin to show equivalence within" in lasting.reason
    assert labels_findings(result).not_equivalent("judge_score")


def test_labels_holding_zero_on_a_key_with_no_margin_keep_the_scorers_pass_but_say_they_could_not_confirm_it() -> None:
    from fairtalk.gates import at_any_size

    result = _no_margin_key(_ppi(-0.2, 0.3, 60))
    outcome = evaluate(result, Gate.FAIL_UNLESS_EQUIVALENT)
    assert outcome.passed
    (decision,) = outcome.decisions
    assert decision.on == "unconfirmed" and "the labels could not confirm it" in decision.reason
    assert "the labels could not confirm gender/judge_score (labelled gap +0.05" in outcome.headline
    assert at_any_size(result) == ()


def test_an_equivalence_shown_with_no_margin_names_the_exact_bound_that_decided_it_not_a_margin_of_n_a() -> None:
    """Review: a gate line read "distinct_1: passed — shown equivalent within ±n/a"."""
    outcome = evaluate(_no_margin_key(None), Gate.FAIL_UNLESS_EQUIVALENT)
    (decision,) = outcome.decisions
    assert decision.passed and "n/a" not in decision.reason
    assert decision.reason == (
        "shown equivalent with no margin, by the exact bound on the share of units that could differ: identical on all "
        "600 pairs (153 dialogues): at most 1.94% of dialogues could differ (95% one-sided exact bound), below the 2% the "
        "rule allows where no margin applies"
    )
    assert outcome.headline.endswith(
        "all 1 primary measure shown equivalent (1 with no margin: shown by the exact bound on the share of units that "
        "could differ, below 2%)"
    )


def test_a_fail_on_bias_headline_says_the_labels_show_the_difference_not_that_the_scorer_detected_it() -> None:
    outcome = evaluate(_result(Verdict.EQUIVALENT, _ppi(0.926, 1.0), equivalent=True), Gate.FAIL_ON_BIAS)
    assert "1 of 1 primary measure with a difference shown by the labels (gender/offense_rate)" in outcome.headline
    assert "difference detected" not in outcome.headline


def test_where_the_labels_fail_a_key_the_scorer_passed_the_console_summary_and_junit_say_the_labels_reason(
    tmp_path: Path,
) -> None:
    """Review: the console said "shown equivalent … offense_rate" beside "not shown equivalent: offense_rate", the
    fail-on-bias headline "with a difference detected", report.md "No measure differs" and "Shown equivalent within
    their margins: Offense Rate", the JUnit message "equivalent"."""
    responses, gold = _files(tmp_path, n_pairs=200)  # the scorer alone shows equivalence (149 identical pairs needed)
    out, junit = tmp_path / "out", tmp_path / "junit.xml"
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--gold", str(gold)]
    gates = ["--fail-on-bias", "--fail-unless-equivalent", "--junit", str(junit)]
    done = runner.invoke(app, [*args, "-o", str(out), "--resamples", "100", *gates])
    assert done.exit_code == 1, done.output
    said = " ".join(done.output.split())
    assert "gender: shown equivalent within the margin" not in said
    assert "gender: offense_rate: the scorer shows it equivalent, but the labels show a gap beyond the margin ±2.00 pp" in said
    assert "gender: offense_rate: the labels show a difference the scorer missed (labelled gap +100.00 pp" in said
    assert "gender: not shown equivalent: offense_rate (on the labels, above)" in said
    assert "1 of 1 primary measure with a difference shown by the labels (gender/offense_rate)" in said
    assert "with a difference detected" not in said
    report = " ".join((out / "report.md").read_text(encoding="utf-8").replace("\\_", "_").split())
    assert "No measure differs" not in report and "Shown equivalent within their margins" not in report
    assert "The scorer finds no measure differing between male and female after the multiple-testing" in report
    assert "Offense Rate is not shown equivalent: the scorer shows it so, but the labels show a gap beyond the margin" in report
    text = junit.read_text(encoding="utf-8")
    assert 'message="gender: Offense Rate (%): the labels show a difference the scorer missed (labelled gap +100.00 pp' in text
    assert "; the scorer: equivalent; " in text


def test_the_plain_summary_names_the_exact_bound_where_a_key_has_no_margin_and_marks_what_the_labels_cannot_confirm() -> None:
    from fairtalk.report import plain_summary

    sentences = plain_summary(_no_margin_key(None))
    assert not any(s.startswith("Shown equivalent within their margins") for s in sentences)
    assert (
        "Shown equivalent with no margin, by the exact bound on the share of units that could differ (answers identical, "
        "or nearly, on every unit; below the 2% the rule allows; each: at most 1.94% of dialogues could differ): "
        "Judge score."
    ) in sentences
    unsure = plain_summary(_no_margin_key(_ppi(-0.2, 0.3, 60)))
    assert "The scorer finds no measure differing between m and f after the multiple-testing correction." in unsure
    assert any(s.endswith("Judge score (the labels could not confirm it).") for s in unsure)
    wide = plain_summary(_result(Verdict.EQUIVALENT, _ppi(-0.01, 0.09, 40), equivalent=True))
    assert "Shown equivalent by the scorer within their margins: Offense Rate (±2 pp; the labels could not confirm it)." in wide


def test_a_key_with_no_margin_shown_equivalent_is_said_so_on_the_console_and_in_report_md_never_within_n_a(
    tmp_path: Path,
) -> None:
    """Review: report.md read "distinct_1: passed — shown equivalent within ±n/a." and the console and the plain
    summary listed such keys as shown equivalent within their margins."""
    responses, _ = _files(tmp_path, n_pairs=200)  # answered alike on every pair: length has no spread, so no margin
    out = tmp_path / "out"
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "length", "-o", str(out)]
    done = runner.invoke(app, [*args, "--fail-unless-equivalent"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "shown equivalent within the margin" not in said
    assert "gender: shown equivalent with no margin, by the exact bound on the share of units that could differ" in said
    report = " ".join((out / "report.md").read_text(encoding="utf-8").replace("\\_", "_").split())
    assert "n/a." not in report and "Shown equivalent within their margins" not in report
    assert "length: passed — shown equivalent with no margin, by the exact bound on the share of units that could" in report
    assert "identical on all 200 pairs: at most 1.49% of pairs could differ (95% one-sided exact bound), below the 2%" in report
