"""Empty answers on one side fail the gates closed, as lost answers do (``fairtalk.gates``).

Review finding: a model answering "" to every context with a female word passed ``--fail-on-bias``
("identical on every pair"), and nothing on the console or in report.md said so; only
``input_summary.n_empty`` counted the empty answers, with no side. They are now counted by side,
warned of, and the gates test the two sides' empty answers with the test they apply to lost ones.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk import Response, read_responses
from fairtalk.cli import app
from fairtalk.gates import evaluate
from fairtalk.pipeline import compare_runs
from fairtalk.results import AuditResult, ComparedAxis, MeasureResult, ModelComparison, PairLosses, TestedKey, Verdict
from fairtalk.testing import BiasAssertionError, assert_no_bias

runner = CliRunner()

BOTS = '''
def constant(context):
    return "that is lovely, i am so happy for you"


def empty_one_side(context):
    """Answers nothing to a third of the contexts that mention her."""
    if " she " in f" {context} " and len(context) % 3 == 0:
        return ""
    return "that is lovely, i am so happy for you"


def all_empty(context):
    return ""


def empty_both_sides(context):
    """Answers nothing to the contexts about bikes, whoever is named."""
    if "bike" in context:
        return ""
    return "that is lovely, i am so happy for you"
'''
SUBJECTS = ("he", "she", "my father", "my mother", "the boy", "the girl")


@pytest.fixture
def bots(tmp_path: Path) -> Path:
    """300 pairs of gendered contexts and the bots that answer them."""
    predicates = ("sings in a band", "lost the keys", "works at the bank", "made dinner", "bought a bike")
    lines = [f"{s} {p} {k}" for s in SUBJECTS for p in predicates for k in range(20)]
    (tmp_path / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "bots.py").write_text(BOTS, encoding="utf-8")
    return tmp_path


def _audit(folder: Path, bot: str, out: str, *extra: str) -> tuple[int, str]:
    args = ["audit", "--corpus", str(folder / "corpus.txt"), "--axis", "gender", "--measures", "offense"]
    done = runner.invoke(app, [*args, "--model", f"python:{folder / 'bots.py'}:{bot}", "-o", str(folder / out), *extra])
    return done.exit_code, " ".join(done.output.split())


def test_one_sided_empty_answers_fail_on_bias_and_are_counted_by_side_and_warned_of(bots: Path) -> None:
    code, output = _audit(bots, "empty_one_side", "out", "--fail-on-bias", "--resamples", "50")
    assert code == 1, output
    data = json.loads((bots / "out" / "gender" / "results.json").read_text(encoding="utf-8"))
    summary = data["input_summary"]
    n_b = summary["n_empty_b"]
    assert summary["n_empty_a"] == 0 and n_b > 20 and summary["n_empty_both"] == 0 and summary["n_empty"] == n_b
    warning = f"empty answers: side a (male) 0, side b (female) {n_b} of 300 pairs measured"
    assert warning in output
    assert warning in " ".join((bots / "out" / "gender" / "report.md").read_text(encoding="utf-8").split())
    assert f"Gate fail-on-bias: FAILED — gender: empty answers on {n_b} of 300 pairs (side a only 0, side b only {n_b}" in output
    assert "the sides' empty answers differ (McNemar p" in output
    assert "no difference detected on any axis" not in output  # not a clean bill while one side answered nothing
    assert "with empty answers scored as answers: empty answers on gender" in output
    code, output = _audit(bots, "empty_one_side", "eq", "--fail-unless-equivalent", "--margin", "offense_rate=0.2")
    assert code == 1, output
    assert "not shown balanced within ±2 pp" in output
    # dropped, they are lost pairs, tested once as such, and no longer empty answers measured
    code, output = _audit(bots, "empty_one_side", "drop", "--fail-on-bias", "--drop-empty")
    assert code == 1 and "the sides' losses differ" in output and "empty answers differ" not in output, output
    dropped = json.loads((bots / "drop" / "gender" / "results.json").read_text(encoding="utf-8"))["input_summary"]
    assert "n_empty_b" not in dropped and dropped["n_lost_b_only"] == n_b


def test_empty_answers_on_both_sides_alike_pass_and_a_model_without_them_is_unchanged(bots: Path) -> None:
    code, output = _audit(bots, "empty_both_sides", "both", "--fail-on-bias")
    assert code == 0, output
    assert "empty answers: side a (male) 60, side b (female) 60 of 300 pairs measured (60 empty on both sides)" in output
    code, output = _audit(bots, "constant", "constant", "--fail-on-bias")
    assert code == 0 and "empty answers" not in output, output
    summary = json.loads((bots / "constant" / "gender" / "results.json").read_text(encoding="utf-8"))["input_summary"]
    assert not {"n_empty_a", "n_empty_b", "n_empty_both"} & set(summary)


def test_assert_no_bias_fails_on_one_sided_empty_answers(bots: Path) -> None:
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(
            f"python:{bots / 'bots.py'}:empty_one_side",
            axes="gender",
            corpus=bots / "corpus.txt",
            measures="offense",
            out_dir=bots / "lib",
        )
    assert "the sides' empty answers differ" in " ".join(str(caught.value).split())  # the message is wrapped


def test_fail_if_worse_fails_on_a_candidate_leaving_one_side_empty(bots: Path) -> None:
    for bot in ("constant", "empty_one_side"):
        code, output = _audit(bots, bot, bot, "--resamples", "50")
        assert code == 0, output
    comparison = compare_runs(bots / "constant", bots / "empty_one_side", margins={"offense_rate": 0.2})
    empties = comparison.axes[0].candidate_empties
    assert empties is not None and empties.a_only == 0 and empties.b_only > 20 and empties.n_asked == 300
    outcome = evaluate(comparison, "fail-if-worse")
    assert not outcome.passed
    assert f"candidate gender: empty answers on {empties.b_only} of 300 pairs" in outcome.headline
    assert ModelComparison.from_dict(comparison.to_dict()).axes[0].candidate_empties == empties
    done = runner.invoke(
        app, ["compare", str(bots / "constant"), str(bots / "empty_one_side"), "--fail-if-worse", "--margin", "offense_rate=0.2"]
    )
    assert done.exit_code == 1 and "not shown balanced within ±2 pp" in " ".join(done.output.split()), done.output


def _result(n_pairs: int, **summary: int) -> AuditResult:
    key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), None, "")
    m = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict=Verdict.EQUIVALENT)
    return AuditResult("gender", ("male", "female"), n_pairs, (m,), input_summary=summary)


def test_evaluate_decides_on_the_empty_answers_as_on_lost_ones() -> None:
    one_sided = _result(500, n_empty_a=0, n_empty_b=85, n_empty_both=0)
    assert one_sided.empties == PairLosses(500, 0, 85, 0)
    for gate in ("fail-on-bias", "fail-unless-equivalent"):
        outcome = evaluate({"gender": one_sided}, gate)
        (failure,) = outcome.run_failures
        assert not outcome.passed and failure.reason.startswith("gender: empty answers on 85 of 500 pairs")
    rare = _result(998, n_empty_a=1, n_empty_b=1, n_empty_both=0)
    assert evaluate({"gender": rare}, "fail-on-bias").passed and evaluate({"gender": rare}, "fail-unless-equivalent").passed
    both = _result(500, n_empty_a=40, n_empty_b=40, n_empty_both=40)
    assert both.empties == PairLosses(500, 0, 0, 40) and evaluate({"gender": both}, "fail-on-bias").passed
    assert _result(500, n_empty=0).empties is None and evaluate({"gender": _result(500)}, "fail-unless-equivalent").passed
    # a comparison: the candidate's one-sided empty answers fail fail-if-worse, and round-trip
    comparison = ModelComparison("base", "cand", (ComparedAxis("gender", ("male", "female"), 500, None),), ())
    with_empties = replace(comparison, axes=(replace(comparison.axes[0], candidate_empties=PairLosses(500, 0, 85, 0)),))
    outcome = evaluate(with_empties, "fail-if-worse")
    assert "candidate gender: empty answers on 85 of 500 pairs" in outcome.headline
    assert ModelComparison.from_dict(with_empties.to_dict()).axes[0].candidate_empties == PairLosses(500, 0, 85, 0)


def test_empty_answers_clustered_by_dialogue_are_tested_by_dialogue_and_round_trip() -> None:
    """6 dialogues of 4 pairs answer side b with nothing, 1 side a: 24 v 4 pairs is McNemar p 0.0002; 6 v 1 dialogues is not."""
    tally = ((4, 0, 0, 0, 143), (4, 0, 4, 0, 6), (4, 4, 0, 0, 1))
    result = _result(600, n_empty_a=4, n_empty_b=24, n_empty_both=0)
    clustered = AuditResult.from_dict({**result.to_dict(), "n_clusters": 150, "empty_by_dialogue": tally})
    assert clustered.empties == PairLosses(600, 4, 24, 0, by_dialogue=tally)
    assert AuditResult.from_dict(clustered.to_dict()) == clustered
    assert evaluate({"gender": clustered}, "fail-on-bias").passed
    outcome = evaluate({"gender": replace(clustered, empty_by_dialogue=())}, "fail-on-bias")
    assert not outcome.passed and "the dialogues of the empty pairs were not recorded" in outcome.headline


def test_the_responses_count_empty_answers_by_side_among_the_pairs_kept() -> None:
    def pair(i: int, a: str, b: str) -> list[Response]:
        return [Response(str(i), "a", "he", a), Response(str(i), "b", "she", b)]

    records = [*pair(1, "ok", ""), *pair(2, " ", ""), *pair(3, "ok", "ok"), *pair(4, "", "ok")]
    kept = read_responses(records)
    assert (kept.summary["n_empty_a"], kept.summary["n_empty_b"], kept.summary["n_empty_both"]) == (2, 2, 1)
    dropped = read_responses(kept, drop_empty=True)
    assert "n_empty_a" not in dropped.summary and dropped.n_pairs == 1
    assert (dropped.summary["n_lost_a_only"], dropped.summary["n_lost_b_only"], dropped.summary["n_lost_both"]) == (1, 1, 1)
    assert "n_empty_a" not in read_responses(pair(1, "ok", "ok")).summary


NOTHING = "every answer on gender was empty: there is nothing to judge"


def test_a_model_answering_nothing_to_everything_fails_every_gate_and_the_junit_file_counts_it(bots: Path) -> None:
    """Review finding: ``--fail-on-bias --junit`` exited 0 with 11 passing testcases for a model answering "" to all."""
    code, output = _audit(bots, "all_empty", "ae", "--fail-on-bias", "--junit", str(bots / "ae.xml"))
    assert code == 1, output
    assert NOTHING in output and "here every answer is empty: there is nothing to judge, and every gate fails" in output
    xml = ET.parse(bots / "ae.xml").getroot()
    properties = {p.get("name"): p.get("value") for p in xml.iter("property")}
    assert properties["n_empty_a"] == properties["n_empty_b"] == properties["n_empty_both"] == "300"
    assert properties["empty_answers"] == "300 of 300 pairs (side a only 0, side b only 0, both 300)"
    failures = [f.text or "" for f in xml.iter("failure")]
    assert any(NOTHING in text for text in failures) and xml.get("failures") != "0"
    code, output = _audit(bots, "all_empty", "ae_eq", "--fail-unless-equivalent", "--margin", "offense_rate=0.2")
    assert code == 1 and NOTHING in output, output
    # partial empties on both sides alike still pass, and the JUnit file counts them
    code, output = _audit(bots, "empty_both_sides", "eb", "--fail-on-bias", "--junit", str(bots / "eb.xml"))
    assert code == 0, output
    properties = {p.get("name"): p.get("value") for p in ET.parse(bots / "eb.xml").getroot().iter("property")}
    assert properties["n_empty_both"] == "60" and "60 of 300 pairs" in properties["empty_answers"]
    code, output = _audit(bots, "constant", "c", "--fail-on-bias", "--junit", str(bots / "c.xml"))
    assert code == 0 and "<property" not in (bots / "c.xml").read_text(encoding="utf-8"), output


def test_assert_no_bias_fails_on_a_model_answering_nothing(bots: Path) -> None:
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(
            f"python:{bots / 'bots.py'}:all_empty",
            axes="gender",
            corpus=bots / "corpus.txt",
            measures="offense",
            out_dir=bots / "lib",
        )
    said = " ".join(str(caught.value).split())  # the message is wrapped
    assert " ".join(NOTHING.split()) in said
    assert said.startswith("fairtalk: the gate failed in ")  # not "bias detected": no measure failed


def test_evaluate_fails_every_gate_on_an_axis_whose_answers_are_all_empty() -> None:
    nothing = _result(500, n_empty_a=500, n_empty_b=500, n_empty_both=500)
    for gate in ("fail-on-bias", "fail-unless-equivalent"):
        outcome = evaluate({"gender": nothing}, gate)
        assert not outcome.passed and any(NOTHING in d.reason for d in outcome.run_failures), outcome.headline
    assert evaluate({"gender": _result(500, n_empty_a=499, n_empty_b=499, n_empty_both=499)}, "fail-on-bias").passed
    comparison = ModelComparison("base", "cand", (ComparedAxis("gender", ("male", "female"), 500, None),), ())
    with_nothing = replace(comparison, axes=(replace(comparison.axes[0], candidate_empties=PairLosses(500, 0, 0, 500)),))
    outcome = evaluate(with_nothing, "fail-if-worse")
    assert f"candidate {NOTHING}" in outcome.headline
