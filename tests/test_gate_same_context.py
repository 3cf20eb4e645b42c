"""Pairs with the same context on both sides are left out of the tests, and the gates fail closed on them.

Review findings: a pairs file with ``b`` equal to ``a`` on all 800 pairs, answered by ``builtin:echo``,
passed ``score --fail-unless-equivalent`` although its own warning said the pairs "are not
counterfactual pairs"; then, with their count in ``input_summary`` (``n_same_context``) and every gate
failing an axis on which fewer than two pairs differ, 799 such pairs and 2 real ones still passed
(with a note): kept in the tests, pairs that ask both groups the same pull every gap toward 0 and
make equivalence easier. Scoring now leaves them out, as ``--exclude-truncated`` leaves out cut-off
pairs: counted (``n_same_context_dropped``; ``n_pairs`` counts the pairs kept), said in a warning and
the gate's headline, and refused (exit 2) where fewer than two pairs remain. The intermediate count
(``n_same_context``) was never in a released result: it is not read.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.gates import evaluate
from fairtalk.report import render_markdown
from fairtalk.results import AuditResult, MeasureResult, TestedKey, Verdict

runner = CliRunner()
FAST = ["--resamples", "200", "--measures", "length"]


def _result(n_pairs: int, summary: dict[str, int]) -> AuditResult:
    key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), None, "")
    m = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict=Verdict.EQUIVALENT)
    return AuditResult("gender", ("m", "f"), n_pairs, (m,), input_summary=summary)


@pytest.mark.parametrize("gate", ["fail-on-bias", "fail-unless-equivalent"])
def test_the_intermediate_count_of_pairs_kept_is_not_read(gate: str) -> None:
    """``n_same_context`` was written only by intermediate code, before such pairs were left out: no released result holds
    it, so it is not read (it made every gate fail an axis and the headline and report speak of pairs kept)."""
    result = _result(800, {"n_same_context": 800})
    assert (result.same_context, result.same_context_left_out) == (None, False)
    outcome = evaluate(result, gate)
    assert outcome.passed and not outcome.run_failures and "same context" not in outcome.headline
    assert "same context" not in render_markdown(result)


def test_a_result_that_left_them_out_decides_on_the_pairs_kept_with_the_headline_saying_so() -> None:
    result = _result(100, {"n_same_context_dropped": 700})
    assert (result.same_context, result.same_context_left_out) == (700, True)
    outcome = evaluate(result, "fail-unless-equivalent")
    assert outcome.passed and not outcome.run_failures  # 100 pairs differ: under the old rule 100 - 700 failed
    assert "gender: 700 of 800 pairs have the same context on both sides" in outcome.headline
    assert "left out of the tests (the decision rests on the 100 pairs whose sides differ)" in outcome.headline
    said = "700 of 800 pairs were left out because both sides were asked the same context"
    assert said in " ".join(render_markdown(result).split())


@pytest.mark.parametrize("kept", [0, 1])
def test_a_result_left_with_fewer_than_two_pairs_fails_every_gate(kept: int) -> None:
    """Scoring refuses it; a results.json written otherwise (by hand, another tool) fails closed."""
    outcome = evaluate(_result(kept, {"n_same_context_dropped": 799}), "fail-unless-equivalent")
    (failure,) = outcome.run_failures
    assert not outcome.passed and failure.on == "context"
    assert f"gender: 799 of {799 + kept} pairs have the same context on both sides" in failure.reason


def test_a_result_without_the_count_keeps_its_decision() -> None:
    """A results.json written before the pairs were counted has none: the gate cannot know, and decides as before."""
    outcome = evaluate(_result(800, {}), "fail-unless-equivalent")
    assert outcome.passed and "same context" not in outcome.headline
    assert _result(800, {}).same_context is None and not _result(800, {}).same_context_left_out


def _write(path: Path, real: int, same: int, *, echo: bool = True) -> Path:
    """``real`` counterfactual pairs (he/she), then ``same`` pairs asking both sides "he"; ``echo``: answers repeat the context."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(real + same):
            a, b = f"he said {i}", (f"she said {i}" if i < real else f"he said {i}")
            answers = (a, b) if echo else ("ok " * (1 + i % 3), "ok " * (1 + i % 2))
            for side, context, answer in (("a", a, answers[0]), ("b", b, answers[1])):
                f.write(json.dumps({"pair_id": f"p{i}", "side": side, "context": context, "response": answer}) + "\n")
    return path


def _score(tmp_path: Path, responses: Path, name: str, *extra: str) -> Any:
    out = tmp_path / name
    return runner.invoke(app, ["score", "--responses", str(responses), "--axis", "gender", "-o", str(out), *FAST, *extra])


def test_799_pairs_with_the_same_context_and_2_real_never_pass_the_equivalence_gate(tmp_path: Path) -> None:
    done = _score(tmp_path, _write(tmp_path / "r.jsonl", 2, 799), "out", "--fail-unless-equivalent")
    assert done.exit_code in (1, 2), done.output  # they passed with a note while kept in the tests
    shown = " ".join(done.output.split())
    assert "799 of 801 pairs have the same context on both sides" in shown and "left out of the tests" in shown
    data = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert data["n_pairs"] == 2 and data["input_summary"]["n_same_context_dropped"] == 799
    assert "n_same_context" not in data["input_summary"]
    assert not evaluate(AuditResult.from_dict(data), "fail-unless-equivalent").passed


def test_fewer_than_two_pairs_left_is_an_error_in_the_junit_file(tmp_path: Path) -> None:
    responses, junit = _write(tmp_path / "r.jsonl", 1, 800), tmp_path / "j.xml"
    done = _score(tmp_path, responses, "out", "--fail-unless-equivalent", "--junit", str(junit))
    assert done.exit_code == 2, done.output  # every gate failed (exit 1) while they were kept
    message = " ".join(done.stderr.split())
    assert message.startswith("error: ") and "need at least 2 complete pairs to compare the sides, got 1" in message
    assert "800 pairs with the same context on both sides were left out: they are not counterfactual pairs" in message
    root = ET.parse(junit).getroot()
    assert (root.get("failures"), root.get("errors")) == ("0", "1")
    (error,) = root.iter("error")
    assert "800 pairs with the same context on both sides were left out" in (error.get("message") or "")


def _tested(data: dict[str, Any]) -> dict[str, Any]:
    """A results.json's statistics: what the pairs tested decide (not the warnings, sources or the counts of the input)."""
    return {k: data[k] for k in ("n_pairs", "n_distinct_responses", "family_size", "measures", "divergent_pairs")}


def test_pairs_with_the_same_context_leave_the_statistics_of_the_real_pairs_alone(tmp_path: Path) -> None:
    mixed = _score(tmp_path, _write(tmp_path / "mixed.jsonl", 100, 20, echo=False), "mixed")
    alone = _score(tmp_path, _write(tmp_path / "alone.jsonl", 100, 0, echo=False), "alone")
    assert mixed.exit_code == alone.exit_code == 0, (mixed.output, alone.output)
    expected = "20 of 120 pairs have the same context on both sides: they are not counterfactual pairs"
    assert f"warning: {expected}" in " ".join(mixed.output.split())
    assert "the tests compare the 100 pairs whose sides differ" in " ".join(mixed.output.split())
    both = {name: json.loads((tmp_path / name / "results.json").read_text(encoding="utf-8")) for name in ("mixed", "alone")}
    assert both["mixed"]["input_summary"]["n_same_context_dropped"] == 20
    assert both["mixed"]["input_summary"]["n_pairs"] == 100 and "n_same_context_dropped" not in both["alone"]["input_summary"]
    assert [w for w in both["mixed"]["warnings"] if w.startswith(expected)]
    assert both["alone"]["measures"]["length"]["p"] is not None
    assert _tested(both["mixed"]) == _tested(both["alone"])  # kept in the tests, they pulled every gap toward 0


def test_the_pairs_left_out_are_written_with_the_responses_and_left_out_again(tmp_path: Path) -> None:
    from fairtalk import read_responses, write_responses
    from fairtalk.run._score import _same_context

    kept, _ = _same_context(read_responses(_write(tmp_path / "r.jsonl", 5, 3)))
    assert (kept.n_pairs, len(kept.left_out)) == (5, 6)
    again, warnings = _same_context(read_responses(write_responses(kept, tmp_path / "again.jsonl")))
    assert again.pair_ids == kept.pair_ids and again.summary["n_same_context_dropped"] == 3
    assert warnings == (
        "3 of 8 pairs have the same context on both sides: they are not counterfactual pairs (they ask "
        "both groups the same, so they would pull every gap toward 0 and make equivalence easier to "
        "show), and were left out of the tests: the tests compare the 5 pairs whose sides differ",
    )


def test_score_passes_counterfactual_pairs_without_a_count(tmp_path: Path) -> None:
    done = _score(tmp_path, _write(tmp_path / "fine.jsonl", 60, 0), "out", "--fail-on-bias")
    assert done.exit_code == 0, done.output
    summary = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["input_summary"]
    assert "n_same_context" not in summary and "n_same_context_dropped" not in summary


def test_the_pairs_left_out_are_no_losses_in_the_dialogues_tally() -> None:
    """A left-out pair with both sides answered was counted lost on side b, so the tally no longer added up."""
    from fairtalk import Response, score

    def pair(i: int, b_context: str, b: str | None, dialogue: str) -> list[Response]:
        extra = (("cluster", dialogue),)
        side_b = [] if b is None else [Response(f"p{i}", "b", b_context, b, extra)]
        return [Response(f"p{i}", "a", f"he said {i}", "ok " * (1 + i % 3), extra), *side_b]

    real = [r for i in range(40) for r in pair(i, f"she said {i}", "ok " * (1 + i % 2), f"d{i // 4}")]
    lost = [r for i in range(40, 44) for r in pair(i, f"she said {i}", None, f"d{i}")]  # side b lost
    same = [r for i in range(44, 50) for r in pair(i, f"he said {i}", "ok", f"d{i // 4}")]
    result = score([*real, *lost, *same], axis="gender", measures=["length"], n_resamples=50)
    assert (result.n_pairs, result.same_context, result.losses.b_only) == (40, 6, 4)
    alone = score([*real, *lost], axis="gender", measures=["length"], n_resamples=50)
    assert result.lost_by_dialogue and result.lost_by_dialogue == alone.lost_by_dialogue
