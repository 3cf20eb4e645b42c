"""An axis' findings worked out once, as the gates decide them (``fairtalk.report.axis_findings``), and every surface reading them.

Review finding: answers identical on both sides of 200 pairs, and a gold file labelling side a offensive and side b
not. ``score --gold gold.jsonl --fail-unless-equivalent`` exited 1 (the labels show a gap beyond the margin), yet
report.html's headline showed a green "no significant difference" and "1 shown equivalent: Offense Rate": it
re-decided the verdicts from the scorer's alone, while the paragraph under it, index.html and the console read the labels.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from report_fixtures import build_result, build_run
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.gates import Gate, evaluate
from fairtalk.records import Response
from fairtalk.report import axis_findings, plain_summary, render_html, render_index
from fairtalk.results import AuditResult, PairLosses, Verdict
from fairtalk.stats import PPIEstimate

runner = CliRunner()
N_PAIRS = 200


def _score(tmp_path: Path, *, side_a_offensive: bool) -> tuple[int, str, AuditResult, Path]:
    """``score --gold --fail-unless-equivalent`` on answers alike on both sides, labelled with a gap or without one.

    Returns the exit code, the console's output on one line per finding, the result and the output folder.
    """
    responses, gold, out = tmp_path / "responses.jsonl", tmp_path / "gold.jsonl", tmp_path / "out"
    text = "that is a lovely idea, tell me more"
    rows = [
        Response(f"p{i}", side, f"{'he' if side == 'a' else 'she'} said hi {i}", text) for i in range(N_PAIRS) for side in "ab"
    ]
    fairtalk.write_responses(rows, responses)
    labels = (
        {"pair_id": f"p{i}", "side": side, "offense_rate": int(side_a_offensive and side == "a"), "annotator": "ana"}
        for i in range(N_PAIRS)
        for side in "ab"
    )
    gold.write_text("".join(json.dumps(label) + "\n" for label in labels), encoding="utf-8")
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--gold", str(gold)]
    done = runner.invoke(app, [*args, "-o", str(out), "--resamples", "100", "--fail-unless-equivalent"])
    console = re.sub(r"\n +", " ", done.output)  # a line the console wrapped, whole again
    return done.exit_code, console, AuditResult.read_json(out / "results.json"), out


def _headline(page: str) -> str:
    """report.html's headline paragraph: the badges of what the axis shows."""
    found = re.search(
        r'<p><span class="badge \w+">(?:\d+ significant differences?|no significant difference)</span>.*?</p>', page, re.S
    )
    assert found is not None
    return " ".join(found.group(0).split())


def _index_cell(result: AuditResult) -> str:
    cell = re.search(r'<td class="verdict">(.*?)</td>', render_index(build_run(result)), re.S)
    assert cell is not None
    return " ".join(cell.group(1).split())


def test_labels_overruling_the_scorers_equivalence_fail_the_gate_and_no_surface_calls_the_key_equivalent(tmp_path: Path) -> None:
    code, console, result, out = _score(tmp_path, side_a_offensive=True)
    assert code == 1
    outcome = evaluate(result, Gate.FAIL_UNLESS_EQUIVALENT)
    assert not outcome.passed and outcome.failures[0].on == "labels"
    (scorer,) = result.measures
    assert scorer.verdict is Verdict.EQUIVALENT  # the scorer alone calls it equivalent: the labels overrule it
    found = axis_findings(result)
    assert (found.detected, found.by_labels, found.beyond) == ((), ("offense_rate",), ("offense_rate",))
    assert (found.equivalent, found.inconclusive, found.all_equivalent) == ((), (), False)
    headline = _headline((out / "report.html").read_text(encoding="utf-8"))
    assert headline.startswith(
        '<p><span class="badge bias">1 significant difference</span> Offense Rate (%) (shown by the labels)'
    )
    assert '<span class="badge bias">not shown equivalent on the labels</span> Offense Rate (%)' in headline
    assert "no significant difference" not in headline and "shown equivalent</span>" not in headline
    assert "badge ok" not in headline
    cell = _index_cell(result)
    assert '<span class="badge bias">1 of 1</span> Offense Rate (%) (shown by the labels)' in cell
    assert "not shown equivalent on the labels</span> Offense Rate (%)" in cell and "badge ok" not in cell
    assert "gender: not shown equivalent: offense_rate (on the labels, above)" in console
    assert "shown equivalent within the margin: offense_rate" not in console
    assert "no difference detected on any axis" not in console
    plain = " ".join(plain_summary(result))
    assert "Offense Rate is not shown equivalent: the scorer shows it so, but the labels show a gap beyond" in plain
    assert "Shown equivalent" not in plain and "Inconclusive" not in plain


def test_labels_that_confirm_the_scorer_leave_every_surface_calling_the_key_equivalent(tmp_path: Path) -> None:
    code, console, result, out = _score(tmp_path, side_a_offensive=False)
    assert code == 0
    found = axis_findings(result)
    assert (found.equivalent, found.different, found.beyond, found.unconfirmed) == (("offense_rate",), (), (), ())
    assert found.all_equivalent and not found.withheld
    headline = _headline((out / "report.html").read_text(encoding="utf-8"))
    assert headline == (
        '<p><span class="badge ok">no significant difference</span> in the primary measures at α = 0.05 after correction '
        '<span class="badge ok">1 shown equivalent</span> Offense Rate (%)</p>'
    )
    assert '<span class="badge ok">none</span> all 1 shown equivalent' in _index_cell(result)
    assert "gender: shown equivalent within the margin: offense_rate" in console
    assert "Gate fail-unless-equivalent: passed" in console


def _labelled(result: AuditResult, name: str, low: float, high: float) -> AuditResult:
    ppi = PPIEstimate((low + high) / 2, (low, high), 0.01, 0.02, 100, 100, 0.0, 0.0, (low + high) / 2, (low, high), float("nan"))
    return dataclasses.replace(
        result, measures=tuple(dataclasses.replace(m, ppi=ppi) if m.name == name else m for m in result.measures)
    )


def _every_key(result: AuditResult, verdict: Verdict) -> AuditResult:
    """``result`` with every key's verdict ``verdict`` (none detected), each with a margin of 0.02."""
    measures = tuple(
        dataclasses.replace(m, verdict=verdict, p_adjusted=0.5, equivalent=verdict is Verdict.EQUIVALENT, equivalence_margin=0.02)
        for m in result.measures
    )
    return dataclasses.replace(result, measures=measures)


def test_a_key_the_scorer_left_inconclusive_and_the_labels_show_different_is_not_called_inconclusive() -> None:
    result = _labelled(_every_key(build_result(hostile=False), Verdict.INCONCLUSIVE), "offense_rate", 0.005, 0.015)
    found = axis_findings(result)
    assert found.by_labels == ("offense_rate",) and "offense_rate" not in found.inconclusive
    assert "offense_rate" in {d.key for d in evaluate(result, Gate.FAIL_ON_BIAS).failures}
    headline = _headline(render_html(result, plots=False))
    assert '<span class="badge bias">1 significant difference</span> Offense Rate (%) (shown by the labels)' in headline
    inconclusive = re.search(r"(\d+) inconclusive</span> ([^<]*)</p>", headline)
    assert inconclusive is not None and "Offense Rate" not in inconclusive.group(2)
    assert int(inconclusive.group(1)) == len(found.primary) - 1
    said = next(s for s in plain_summary(result) if s.startswith("Inconclusive"))
    assert "Offense Rate" not in said


def test_the_headline_and_index_are_not_green_where_the_gates_fail_the_axis_on_answers_lost_on_one_side() -> None:
    result = dataclasses.replace(_every_key(build_result(hostile=False), Verdict.EQUIVALENT), input_summary={})
    assert 'class="badge ok">no significant difference' in _headline(render_html(result, plots=False))
    lost = dataclasses.replace(result, input_summary={"n_lost_b_only": result.n_pairs // 4})  # side b lost on 1 pair in 5
    assert lost.losses == PairLosses(result.n_pairs + result.n_pairs // 4, 0, result.n_pairs // 4, 0)
    found = axis_findings(lost)
    assert found.all_equivalent and found.withheld
    assert {d.on for d in found.withheld} == {"lost"} and not evaluate(lost, Gate.FAIL_UNLESS_EQUIVALENT).passed
    assert 'class="badge note">no significant difference' in _headline(render_html(lost, plots=False))
    assert '<span class="badge ok">none</span> all 8 shown equivalent' in _index_cell(result)
    assert '<span class="badge note">none</span> all 8 shown equivalent' in _index_cell(lost)


def test_a_key_shown_equivalent_that_the_labels_could_not_confirm_is_marked_in_the_headline() -> None:
    """Review finding: labels whose interval excludes 0 but is not inside the margin (a difference the scorer missed, yet
    no gap beyond the margin) left report.html's headline reading a red "Offense Rate (%) (shown by the labels)" beside a
    green "shown equivalent: Offense Rate (%)", unmarked, while the console and the plain summary said the labels could
    not confirm it."""
    every = dataclasses.replace(_every_key(build_result(hostile=False), Verdict.EQUIVALENT), input_summary={})  # no losses
    result = _labelled(every, "offense_rate", 0.005, 0.03)  # excludes 0; not inside ±0.02, not wholly outside it
    found = axis_findings(result)
    assert (found.by_labels, found.unconfirmed, found.beyond) == (("offense_rate",), ("offense_rate",), ())
    assert "offense_rate" in found.equivalent and evaluate(result, Gate.FAIL_UNLESS_EQUIVALENT).passed
    headline = _headline(render_html(result, plots=False))
    assert '<span class="badge bias">1 significant difference</span> Offense Rate (%) (shown by the labels)' in headline
    shown = re.search(r'<span class="badge ok">(\d+) shown equivalent</span> ([^<]*)', headline)
    assert shown is not None and int(shown.group(1)) == len(found.primary)
    assert "Offense Rate (%) (the labels could not confirm it)" in shown.group(2)
    assert shown.group(2).count("the labels could not confirm it") == 1  # the other keys have no labels
    holds_zero = _headline(render_html(_labelled(every, "offense_rate", -0.01, 0.03), plots=False))
    assert holds_zero.startswith('<p><span class="badge ok">no significant difference</span>')
    assert "Offense Rate (%) (the labels could not confirm it)" in holds_zero
    confirmed = _headline(render_html(_labelled(every, "offense_rate", -0.01, 0.01), plots=False))
    assert "Offense Rate (%)" in confirmed and "could not confirm" not in confirmed


def _within_margin(result: AuditResult, name: str) -> AuditResult:
    """``result`` with ``name``'s verdict a difference detected whose whole interval lies inside its margin (equivalent)."""
    measures = tuple(
        dataclasses.replace(m, verdict=Verdict.DIFFERENT, p_adjusted=0.001, equivalent=True) if m.name == name else m
        for m in result.measures
    )
    return dataclasses.replace(result, measures=measures)


def test_a_difference_within_the_margin_that_the_labels_could_not_confirm_is_marked_in_the_red_list() -> None:
    """Review finding: a key whose difference lies within its margin (the equivalence gate passes it) and whose labels
    could not confirm that stood in report.html's red list unmarked, while the gate's headline and the console said the
    labels could not confirm it: the headline marked only the keys shown equivalent."""
    every = dataclasses.replace(_every_key(build_result(hostile=False), Verdict.EQUIVALENT), input_summary={})  # no losses
    within = _within_margin(every, "offense_rate")
    result = _labelled(within, "offense_rate", -0.01, 0.03)  # holds 0; not inside ±0.02, not wholly outside it
    found = axis_findings(result)
    assert (found.detected, found.within_margin, found.unconfirmed) == (("offense_rate",), ("offense_rate",), ("offense_rate",))
    decision = evaluate(result, Gate.FAIL_UNLESS_EQUIVALENT).decision("gender", "offense_rate")
    assert decision is not None and decision.passed and decision.on == "unconfirmed"
    headline = _headline(render_html(result, plots=False))
    red = re.search(r'<span class="badge bias">1 significant difference</span> ([^<]*)', headline)
    assert red is not None
    assert red.group(1).strip() == "Offense Rate (%) (within the margin; the labels could not confirm it)"
    assert '<span class="badge bias">1 of 8</span> Offense Rate (%) (within the margin; the labels could not confirm it)' in (
        _index_cell(result)
    )
    for unmarked in (within, _labelled(within, "offense_rate", -0.01, 0.01)):  # no labels; labels inside the margin
        assert not axis_findings(unmarked).unconfirmed
        plain = re.search(
            r'<span class="badge bias">1 significant difference</span> ([^<]*)', _headline(render_html(unmarked, plots=False))
        )
        assert plain is not None and plain.group(1).strip() == "Offense Rate (%)"
        assert "could not confirm" not in _index_cell(unmarked)


def test_the_plain_summary_marks_a_difference_within_the_margin_that_the_labels_could_not_confirm() -> None:
    """The plain summary (report.md, JUnit, the job summary and report.html's "In plain words") said "Offense Rate is
    higher for ..." with no word that the equivalence gate passes it on the scorer's interval alone while the labels
    could not confirm it, as the red list and the console say."""
    every = dataclasses.replace(_every_key(build_result(hostile=False), Verdict.EQUIVALENT), input_summary={})  # no losses
    within = _within_margin(every, "offense_rate")
    said = [s for s in plain_summary(_labelled(within, "offense_rate", -0.01, 0.03)) if s.startswith("Offense Rate is")]
    assert len(said) == 1 and said[0].endswith("; within its margin, but the labels could not confirm that.")
    for unmarked in (within, _labelled(within, "offense_rate", -0.01, 0.01)):  # no labels; labels inside the margin
        said = [s for s in plain_summary(unmarked) if s.startswith("Offense Rate is")]
        assert len(said) == 1 and "could not confirm" not in said[0]
