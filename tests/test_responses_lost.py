"""A responses file keeps every pair asked: a failed side is a record that says so, and re-scoring sees the losses.

``respond`` and an audit's ``responses.jsonl`` used to leave out both sides of a pair that lost one
side (and, with ``--drop-empty``, the dropped pairs), so ``score --fail-on-bias`` on the file passed
where the audit failed: the evidence of a model that fails for one group only was not in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk import Response, read_responses, write_responses
from fairtalk.cli import app

runner = CliRunner()

SUBJECTS = ("he", "she", "my father", "my mother", "the boy", "the girl")
BOTS = '''
import os


def one_side(context):
    """Fails on a third of the contexts that mention her (all of them while FLAKY names a file that exists)."""
    if " she " in f" {context} " and (len(context) % 3 == 0 or os.path.exists(os.environ.get("FLAKY", "-"))):
        raise RuntimeError("content_filter")
    return "that is lovely, i am so happy for you"


def empty_one_side(context):
    """Answers nothing to a third of the contexts that mention her."""
    if " she " in f" {context} " and len(context) % 3 == 0:
        return ""
    return "that is lovely, i am so happy for you"
'''


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    """600 gendered contexts (300 pairs) and the bots."""
    predicates = ("sings in a band", "lost the keys", "works at the bank", "made dinner", "bought a bike")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"{s} {p} {k}" for s in SUBJECTS for p in predicates for k in range(20)) + "\n", "utf-8")
    bots = tmp_path / "bots.py"
    bots.write_text(BOTS, encoding="utf-8")
    return corpus, bots


def _cli(*args: str) -> tuple[int, str]:
    done = runner.invoke(app, list(args))
    return done.exit_code, " ".join(done.output.split())


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _losses(results: Path) -> tuple[int, ...]:
    summary = json.loads(results.read_text(encoding="utf-8"))["input_summary"]
    return tuple(int(summary.get(k) or 0) for k in ("n_lost_a_only", "n_lost_b_only", "n_lost_both"))


def _respond(tmp_path: Path, *extra: str) -> tuple[int, str, Path]:
    corpus, bots = _setup(tmp_path)
    pairs = tmp_path / "pairs.jsonl"
    code, output = _cli("pairs", "--corpus", str(corpus), "--axis", "gender", "--limit", "200", "-o", str(pairs))
    assert code == 0, output
    out = tmp_path / "responses.jsonl"
    code, output = _cli("respond", "--pairs", str(pairs), "--model", f"python:{bots}:one_side", "-o", str(out), *extra)
    return code, output, out


def test_respond_keeps_the_failed_sides_and_score_fails_both_gates(tmp_path: Path) -> None:
    code, output, out = _respond(tmp_path)
    assert code == 0, output
    records = _records(out)
    assert len(records) == 400  # every pair asked, both sides
    failed = [r for r in records if r["response"] is None]
    assert failed and all(r["side"] == "b" and str(r["error"]).startswith("ResponderError: ") for r in failed)
    assert f"and {len(failed)} left out" in output
    read = read_responses(out)
    assert read.n_pairs == 200 - len(failed)
    assert (read.summary["n_errors"], read.summary["n_pairs_with_errors"]) == (len(failed), len(failed))
    assert (read.summary.get("n_lost_a_only", 0), read.summary["n_lost_b_only"], read.summary["n_missing_side"]) == (
        0,
        len(failed),
        0,
    )
    for gate in ("--fail-on-bias", "--fail-unless-equivalent"):
        code, output = _cli(
            "score", "--responses", str(out), "--axis", "gender", "-o", str(tmp_path / gate), "--resamples", "100", gate
        )
        assert code == 1, output
        assert f"Gate {gate[2:]}: FAILED" in output and f"side a only 0, side b only {len(failed)}, both 0" in output


def test_a_failure_record_without_a_gate_gives_the_warning(tmp_path: Path) -> None:
    code, output, out = _respond(tmp_path)
    assert code == 0, output
    code, output = _cli("score", "--responses", str(out), "--axis", "gender", "-o", str(tmp_path / "s"), "--resamples", "100")
    assert code == 0, output
    assert "warning: answers lost on" in output and "left out:" in output


def test_a_failed_side_is_asked_again_from_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flaky = tmp_path / "flaky"
    flaky.touch()
    monkeypatch.setenv("FLAKY", str(flaky))
    store = str(tmp_path / "store.sqlite")
    code, output, out = _respond(tmp_path, "--store", store, "--max-consecutive-failures", "0")
    assert code == 0, output
    n_failed = sum(r["response"] is None for r in _records(out))
    flaky.unlink()
    code, output, out = _respond(tmp_path, "--store", store, "--max-consecutive-failures", "0")
    assert code == 0, output
    n_still = sum(r["response"] is None for r in _records(out))
    assert n_failed > n_still > 0  # the failures were not stored as answers: asked again, most now answered
    assert f"{n_failed - n_still:,} generated" in output


def _audit(tmp_path: Path, bot: str, out: str, *extra: str) -> tuple[int, str]:
    corpus, bots = _setup(tmp_path)
    return _cli(
        "audit",
        "--corpus",
        str(corpus),
        "--axis",
        "gender",
        "--pairs",
        "200",
        "--model",
        f"python:{bots}:{bot}",
        "-o",
        str(tmp_path / out),
        "--resamples",
        "100",
        *extra,
    )


def test_rescoring_an_audit_responses_file_fails_the_gate_with_the_same_losses(tmp_path: Path) -> None:
    code, output = _audit(tmp_path, "one_side", "audit", "--fail-on-bias")
    assert code == 1, output
    saved = tmp_path / "audit" / "gender" / "responses.jsonl"
    assert len(_records(saved)) == 400
    code, output = _cli(
        "score",
        "--responses",
        str(saved),
        "--axis",
        "gender",
        "-o",
        str(tmp_path / "again"),
        "--resamples",
        "100",
        "--fail-on-bias",
    )
    assert code == 1, output
    assert "Gate fail-on-bias: FAILED" in output and "the sides' losses differ" in output
    lost = _losses(tmp_path / "audit" / "gender" / "results.json")
    assert lost[1] > 0 and _losses(tmp_path / "again" / "results.json") == lost


def test_drop_empty_round_trip_keeps_the_dropped_pairs_as_empty_answers(tmp_path: Path) -> None:
    code, output = _audit(tmp_path, "empty_one_side", "audit", "--drop-empty", "--fail-on-bias")
    assert code == 1, output
    saved = tmp_path / "audit" / "gender" / "responses.jsonl"
    records = _records(saved)
    assert len(records) == 400 and not any(r["response"] is None for r in records)
    n_empty = sum(r["response"] == "" for r in records)
    assert n_empty > 0 and read_responses(saved).n_pairs == 200  # the empty answers as they were
    dropped = read_responses(saved, drop_empty=True)
    assert dropped.n_pairs == 200 - n_empty and dropped.summary["n_empty_dropped"] == n_empty
    code, output = _cli(
        "score",
        "--responses",
        str(saved),
        "--axis",
        "gender",
        "-o",
        str(tmp_path / "again"),
        "--resamples",
        "100",
        "--drop-empty",
        "--fail-on-bias",
    )
    assert code == 1, output
    assert _losses(tmp_path / "again" / "results.json") == _losses(tmp_path / "audit" / "gender" / "results.json")


def test_the_reader_counts_a_failed_side_as_lost_and_writes_it_back(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rows = [
        {"pair_id": "1", "side": "a", "response": "ok"},
        {"pair_id": "1", "side": "b", "response": "fine"},
        {"pair_id": "2", "side": "a", "response": "ok"},
        {"pair_id": "2", "side": "b", "response": None, "error": "ResponderTimeout: 30 s"},
        {"pair_id": "3", "side": "a", "response": None, "error": "RuntimeError: boom"},
        {"pair_id": "3", "side": "b", "response": None, "error": "RuntimeError: boom"},
        {"pair_id": "4", "side": "a", "response": "ok"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read = read_responses(path)
    assert read.pair_ids == ("1",)
    s = read.summary
    assert (s["n_errors"], s["n_pairs_with_errors"], s["n_missing_side"]) == (3, 2, 1)
    assert (s.get("n_lost_a_only", 0), s["n_lost_b_only"], s["n_lost_both"]) == (0, 2, 1)
    assert len(read.left_out) == 5
    again = tmp_path / "again.jsonl"
    write_responses(read, again)
    written = sorted(json.dumps(r, sort_keys=True) for r in _records(again))
    assert written == sorted(json.dumps({**r, "context": ""}, sort_keys=True) for r in rows)
    assert read_responses(again).summary == s
    old = read_responses([Response("1", "a", "", "ok"), Response("1", "b", "", "ok"), Response("2", "a", "", "ok")])
    assert "n_errors" not in old.summary and old.summary["n_missing_side"] == 1  # a file without failures: as before


def test_an_answer_stands_in_for_an_earlier_failure_of_its_side(tmp_path: Path) -> None:
    failed = {"pair_id": "1", "side": "b", "response": None, "error": "RuntimeError: boom"}
    rows = [{"pair_id": "1", "side": "a", "response": "ok"}, failed, {"pair_id": "1", "side": "b", "response": "fine"}, failed]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read = read_responses(path)
    assert read.pair_ids == ("1",) and read.b[0].response == "fine" and "n_errors" not in read.summary


def test_an_empty_answer_beside_a_failed_side_is_lost_too_where_empty_answers_are_dropped(tmp_path: Path) -> None:
    """Side a empty and side b failed: with drop_empty both sides are lost, not side b only (a review finding)."""
    rows = [
        {"pair_id": "1", "side": "a", "response": "ok"},
        {"pair_id": "1", "side": "b", "response": "fine"},
        {"pair_id": "2", "side": "a", "response": " "},
        {"pair_id": "2", "side": "b", "response": None, "error": "RuntimeError: boom"},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dropped = read_responses(path, drop_empty=True).summary
    assert (dropped.get("n_lost_a_only", 0), dropped.get("n_lost_b_only", 0), dropped["n_lost_both"]) == (0, 0, 1)
    kept = read_responses(path).summary  # without drop_empty the empty answer is an answer: side b only
    assert (kept.get("n_lost_a_only", 0), kept["n_lost_b_only"], kept.get("n_lost_both", 0)) == (0, 1, 0)
