"""Tests for cli/_audit.py and cli/_respond.py: `fairtalk audit` and `fairtalk respond`, incl. kill -9 and resume."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus, write_models
from fairtalk.cli import app

runner = CliRunner()
FAST = ["--resamples", "200", "--quiet"]


@pytest.fixture()
def toys(tmp_path: Path) -> tuple[Path, Path]:
    return write_corpus(tmp_path), write_models(tmp_path)


def _flat(text: str) -> str:
    """Click's boxed error messages as one line (the box wraps them)."""
    return " ".join(text.replace("│", " ").split())


def _audit(corpus: Path, model: str, out: Path, *extra: str) -> list[str]:
    return ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", model, "-o", str(out), *FAST, *extra]


def test_fail_on_bias_exits_1_for_a_biased_model_and_0_for_a_fair_one(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    out = tmp_path / "biased"
    result = runner.invoke(app, _audit(corpus, f"python:{models}:biased", out, "--fail-on-bias"))
    assert result.exit_code == 1, result.output
    assert "gender: difference detected (adjusted p < 0.05):" in result.output and "offense_rate" in result.output
    assert "gender: 80 generated, 0 from the store, 0 failed" in result.output
    said = _flat(result.output)  # the toy corpus holds each context's counterfactual twin: 40 duplicates
    assert "gender: 82 contexts read, 80 mention a group (40 duplicate contexts dropped), 40 pairs audited" in said
    assert "asked for" not in said  # --pairs left at its default: the corpus falls short of nothing asked
    for name in (
        "index.html",
        "run.json",
        "store.sqlite",
        "gender/results.json",
        "gender/report.html",
        "gender/responses.jsonl",
        "gender/pairs.jsonl",
    ):
        assert (out / name).is_file(), name
    # the same command again resumes from OUTPUT/store.sqlite: nothing is generated
    again = runner.invoke(app, _audit(corpus, f"python:{models}:biased", out))
    assert again.exit_code == 0, again.output
    assert "gender: 0 generated, 80 from the store, 0 failed" in again.output

    fair = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "fair", "--fail-on-bias"))
    assert fair.exit_code == 0, fair.output
    assert "no difference detected on any axis" in fair.output


def test_max_errors_exceeded_exits_2_and_keeps_the_store(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    out = tmp_path / "r"
    result = runner.invoke(app, _audit(corpus, f"python:{models}:broken", out, "--max-errors", "1", "--batch-size", "4"))
    assert result.exit_code == 2
    assert "error:" in result.output and "more than max_errors=1" in result.output
    assert "re-run to resume" in result.output
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses WHERE error IS NULL").fetchone()[0] > 0
    # without --max-errors the failures are counted and reported, and the run completes
    counted = runner.invoke(app, _audit(corpus, f"python:{models}:broken", out))
    assert counted.exit_code == 0, counted.output
    assert "8 failed (4 pairs left out" in counted.output
    summary = json.loads((out / "gender" / "results.json").read_text())["input_summary"]
    assert (summary["n_errors"], summary["n_pairs_with_errors"]) == (8, 4)


def test_bad_options_exit_2(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    for extra, message in (
        (["--pairs", "0"], "--pairs must be a whole number ≥ 2 (two pairs are the fewest a test compares), got 0"),
        (["--pairs", "-5"], "--pairs must be a whole number ≥ 2 (two pairs are the fewest a test compares), got -5"),
        (["--pairs", "1"], "--pairs must be a whole number ≥ 2 (two pairs are the fewest a test compares), got 1"),
        (["--max-new-tokens", "0"], "max_new_tokens"),
        (["--max-errors", "-1"], "--max-errors must be 0 or more"),
    ):
        result = runner.invoke(app, _audit(corpus, "builtin:echo", tmp_path / "x", *extra))
        assert result.exit_code == 2, (extra, result.output)
        assert "error:" in result.output and message in result.output
    for extra, choices in (
        (["--correction", "nope"], "'nope' is not one of 'holm', 'bh'"),
        (["--correction-scope", "world"], "'world' is not one of 'axis', 'run'"),
        (["--mixed", "sometimes"], "'sometimes' is not one of 'drop', 'keep'"),
        (["--binary-test", "fisher"], "'fisher' is not one of 'score', 'exact', 'midp'"),
    ):
        result = runner.invoke(app, _audit(corpus, "builtin:echo", tmp_path / "x", *extra))
        assert result.exit_code == 2, (extra, result.output)
        assert f"Invalid value for '{extra[0]}'" in result.stderr and choices in _flat(result.stderr)
        assert "Traceback" not in result.output
    result = runner.invoke(app, _audit(corpus, "nope:model", tmp_path / "x"))
    assert result.exit_code == 2 and "unknown model spec prefix" in result.output


def test_a_bad_margin_or_primary_exits_2_before_the_model_is_asked(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    asked = tmp_path / "asked.txt"
    bot = tmp_path / "recording_bot.py"
    bot.write_text(
        f"def reply(context):\n    with open({str(asked)!r}, 'a') as f:\n        f.write(context + '\\n')\n    return 'ok'\n"
    )
    for extra, message in (
        (
            ["--margin", "offense_rate=2"],
            "offense_rate's margin is a fraction: 2 would allow any difference; for 2 pp give 0.02",
        ),
        (["--margin", "ofense_rate=0.01"], "unknown margin measure key 'ofense_rate'"),
        (["--primary", "nope"], "unknown primary measure key 'nope'"),
    ):
        out = tmp_path / "x"
        result = runner.invoke(app, _audit(corpus, f"python:{bot}:reply", out, *extra))
        assert result.exit_code == 2, (extra, result.output)
        assert "error:" in result.output and message in _flat(result.output), (extra, result.output)
        assert "Traceback" not in result.output
        assert not asked.exists(), extra  # the bot was never called
        assert not (out / "store.sqlite").exists()
    fine = runner.invoke(app, _audit(corpus, f"python:{bot}:reply", tmp_path / "ok", "--margin", "offense_rate=0.02"))
    assert fine.exit_code == 0, fine.output
    assert asked.exists()


def test_a_plugin_measure_is_selectable_and_an_unknown_one_fails_before_generation(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fairtalk.measures._registry as registry
    from audit_toys import Shouting

    monkeypatch.setattr(registry, "MEASURES", registry.MEASURES.fresh())
    registry.register_measure("shouting", Shouting)
    corpus, models = toys
    typo = runner.invoke(app, _audit(corpus, f"python:{models}:biased", tmp_path / "typo", "--measures", "shoutin"))
    assert typo.exit_code == 2 and "unknown measure 'shoutin'; did you mean 'shouting'?" in typo.output
    assert not (tmp_path / "typo" / "store.sqlite").exists()  # nothing was generated
    out = tmp_path / "run"
    result = runner.invoke(app, _audit(corpus, f"python:{models}:biased", out, "--measures", "shouting,length"))
    assert result.exit_code == 0, result.output
    data = json.loads((out / "gender" / "results.json").read_text(encoding="utf-8"))
    assert set(data["measures"]) == {"shouting_rate", "length"}


def test_respond_writes_what_score_reads(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    pairs = tmp_path / "pairs.jsonl"
    assert runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(pairs)]).exit_code == 0
    out = tmp_path / "out" / "responses.jsonl"
    store = tmp_path / "store.sqlite"
    args = ["respond", "--pairs", str(pairs), "--model", f"python:{models}:biased", "-o", str(out), "--store", str(store)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "80 generated, 0 from the store, 0 failed" in result.output and "wrote 40 pairs" in result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 80 and {r["side"] for r in records} == {"a", "b"}
    assert "0 generated, 80 from the store" in runner.invoke(app, args).output
    scored = runner.invoke(
        app,
        ["score", "--responses", str(out), "--axis", "gender", "-o", str(tmp_path / "s"), "--resamples", "200", "--fail-on-bias"],
    )
    assert scored.exit_code == 1, scored.output


def test_respond_with_every_pair_failed_exits_2_and_writes_nothing(toys: tuple[Path, Path], tmp_path: Path) -> None:
    """No complete pair left: an error naming the failures (as audit's), not exit 0 and an empty responses file."""
    corpus, _ = toys
    dead = tmp_path / "dead.py"
    dead.write_text("def down(context):\n    raise RuntimeError('backend down')\n", encoding="utf-8")
    pairs = tmp_path / "pairs.jsonl"
    assert runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(pairs)]).exit_code == 0
    out = tmp_path / "responses.jsonl"
    args = ["respond", "--pairs", str(pairs), "--model", f"python:{dead}:down", "-o", str(out), "--max-consecutive-failures", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    flat = _flat(result.stderr)
    assert "error: no complete pair left of 40: the model failed on 80 pair side(s)" in flat
    assert "first error:" in flat and f"nothing was written to {out}" in flat and "Traceback" not in result.output
    assert not out.exists()


def test_a_corpus_of_invalid_lines_says_what_was_skipped(tmp_path: Path) -> None:
    """Audit's "gave 0 pair(s)" lists the reader's skips, as `fairtalk pairs` does."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('[1, 2]\n"text"\n{"other": "he is here"}\n', encoding="utf-8")
    result = runner.invoke(app, _audit(corpus, "builtin:echo", tmp_path / "out"))
    assert result.exit_code == 2, result.output
    flat = _flat(result.stderr)
    assert "gave 0 pair(s) (0 contexts read, 0 mention a group; 2 skipped: JSON line is not an object (first at" in flat
    assert "c.jsonl:1); 1 skipped: missing field (first at" in flat and "need at least 2" in flat


# --- THE CRASH TEST: kill -9 `fairtalk audit` midway, re-run, compare with an uninterrupted run ------------


def _rows(store: Path) -> int:
    try:
        with sqlite3.connect(store, timeout=0.2) as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_kill_9_midway_then_rerun_equals_an_uninterrupted_run(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    model = f"python:{models}:slow"
    killed = tmp_path / "killed"
    command = [sys.executable, "-m", "fairtalk.cli", *_audit(corpus, model, killed, "--batch-size", "2")]
    env = {**os.environ, "SLOW_SECONDS": "0.05"}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    store = killed / "store.sqlite"
    deadline = time.monotonic() + 20
    while _rows(store) < 10 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read().decode()}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    n_before = _rows(store)
    assert 10 <= n_before < 80
    assert not (killed / "gender" / "results.json").exists()

    resumed = runner.invoke(app, _audit(corpus, model, killed))  # SLOW_SECONDS unset: same model, fast
    assert resumed.exit_code == 0, resumed.output
    assert f"gender: {80 - n_before} generated, {n_before} from the store, 0 failed" in resumed.output
    with sqlite3.connect(store) as db:
        n_rows, n_keys = db.execute(
            "SELECT COUNT(*), COUNT(DISTINCT hex(context_hash) || ':' || seed) FROM responses WHERE error IS NULL"
        ).fetchone()
    assert n_rows == n_keys == 80  # no gaps, no duplicates

    clean = tmp_path / "clean"
    assert runner.invoke(app, _audit(corpus, model, clean)).exit_code == 0
    lines = (killed / "gender" / "responses.jsonl").read_text().splitlines()
    assert lines == (clean / "gender" / "responses.jsonl").read_text().splitlines()
    assert len({(json.loads(line)["pair_id"], json.loads(line)["side"]) for line in lines}) == 80
    assert _without_timings(killed) == _without_timings(clean)


def test_ctrl_c_pressed_again_and_again_still_says_where_the_answers_are(toys: tuple[Path, Path], tmp_path: Path) -> None:
    """Review: two to five SIGINTs a few ms apart exited without a word, or with a traceback from threading's shutdown.

    The first Ctrl-C stops the run; later ones within a second of it, sent here for half a second, are ignored.
    """
    corpus, models = toys
    out = tmp_path / "out"
    command = [sys.executable, "-m", "fairtalk.cli", *_audit(corpus, f"python:{models}:slow", out, "--batch-size", "2")]
    proc = subprocess.Popen(
        command,
        env={**os.environ, "SLOW_SECONDS": "0.05"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job's ignored SIGINT: undone
    )
    store = out / "store.sqlite"
    deadline = time.monotonic() + 60  # upper bounds on a loaded machine, not timings
    while _rows(store) < 10 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, f"the run ended before it could be interrupted: {proc.communicate()[1]}"
    n_sent, burst = 0, time.monotonic() + 0.5
    while proc.poll() is None and time.monotonic() < burst:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
            n_sent += 1
        time.sleep(0.002)
    try:
        err = proc.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        err = proc.communicate()[1]
    assert n_sent >= 2 and proc.returncode == 130, (n_sent, proc.returncode, err)
    assert f"interrupted; the answers so far are kept in {store}: re-run the same command to resume" in _flat(err), err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert _rows(store) >= 10


def test_ctrl_c_pressed_again_after_a_second_stops_a_hanging_stop_at_once(tmp_path: Path) -> None:
    """A stop that hangs (a model call that never returns) is ended by Ctrl-C pressed again a second or more later:
    exit 130 at once, saying the stored answers are kept, where a burst within the first second is ignored."""
    script = tmp_path / "hang.py"
    script.write_text(
        "import os, signal, sys, time\n"
        "from fairtalk.cli._app import _stop_on_signals\n"
        "_stop_on_signals()\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(5)\n"
        "except KeyboardInterrupt:\n"
        "    os.kill(os.getpid(), signal.SIGINT)  # within the first second: ignored\n"
        "    print('stopping', flush=True)\n"
        "    time.sleep(1.2)\n"
        "    os.kill(os.getpid(), signal.SIGINT)  # a second later: stops at once\n"
        "    time.sleep(30)\n"
        "    print('not stopped', flush=True)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job's ignored SIGINT: undone
    )
    assert done.returncode == 130 and done.stdout == "stopping\n", (done.returncode, done.stdout, done.stderr)
    assert "interrupted again: stopping now" in done.stderr and "answers already stored are kept" in done.stderr


def _without_timings(out: Path) -> dict:
    """results.json minus anything that varies between runs: no timings (asserted), and the run id (removed)."""
    results = json.loads((out / "gender" / "results.json").read_text())
    assert "seconds" not in json.dumps(results)
    run_id = results["manifest"]["audit"].pop("run_id")
    assert run_id == json.loads((out / "run.json").read_text())["run_id"]  # every file names its run
    return results


def test_correction_scope_is_recorded_and_shown_in_the_index(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    per_axis = tmp_path / "axis"
    assert runner.invoke(app, _audit(corpus, f"python:{models}:fair", per_axis)).exit_code == 0
    assert json.loads((per_axis / "gender" / "results.json").read_text())["correction_scope"] == "axis"
    assert "correction: Holm within each axis" in (per_axis / "index.html").read_text()
    whole = tmp_path / "run"
    done = runner.invoke(app, _audit(corpus, f"python:{models}:fair", whole, "--correction-scope", "run"))
    assert done.exit_code == 0, done.output
    assert json.loads((whole / "gender" / "results.json").read_text())["correction_scope"] == "run"
    assert "correction: Holm over every axis together" in (whole / "index.html").read_text()
    bad = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "bad", "--correction-scope", "world"))
    assert bad.exit_code == 2 and "world" in bad.output and "Traceback" not in bad.output


def test_audit_exposes_the_scoring_and_pairing_options(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    out = tmp_path / "run"
    done = runner.invoke(
        app,
        _audit(
            corpus,
            f"python:{models}:fair",
            out,
            "--measures",
            "offense,sentiment",
            "--offense-threshold",
            "0.9",
            "--sentiment-threshold",
            "0.5",
            "--drop-empty",
            "--mixed",
            "keep",
        ),
    )
    assert done.exit_code == 0, done.output
    results = json.loads((out / "gender" / "results.json").read_text())
    assert set(results["measures"]) == {"offense_rate", "sentiment_positive", "sentiment_negative"}
    options = results["manifest"]["options"]
    assert options["offense_threshold"] == 0.9 and options["sentiment_threshold"] == 0.5
    assert results["manifest"]["drop_empty"] is True and results["manifest"]["audit"]["mixed"] == "keep"
    bad = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "bad", "--mixed", "sometimes"))
    assert bad.exit_code == 2 and "sometimes" in bad.output and "Traceback" not in bad.output


def test_config_file_values_are_defaults_and_flags_override_them(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    config = tmp_path / "audit.toml"
    config.write_text(
        f'corpus = "{corpus}"\naxes = "gender"\nmodel = "python:{models}:fair"\nn_pairs = 30\n'
        f'out_dir = "{tmp_path / "from-file"}"\n\n[score]\nn_resamples = 150\nalpha = 0.01\n',
        encoding="utf-8",
    )
    result = runner.invoke(app, ["audit", "--config", str(config), "--quiet", "--pairs", "20"])
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "from-file" / "run.json").read_text())
    assert run["config"]["n_pairs"] == 20  # the flag overrides the file
    assert run["config"]["score"]["n_resamples"] == 150 and run["config"]["score"]["alpha"] == 0.01  # the file's
    assert run["config"]["store"] == str(tmp_path / "from-file" / "store.sqlite")
    assert json.loads((tmp_path / "from-file" / "gender" / "results.json").read_text())["n_pairs"] == 20
    config.write_text("n_pair = 30\n", encoding="utf-8")
    bad = runner.invoke(app, ["audit", "--config", str(config), "-o", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "unknown audit option 'n_pair'; did you mean 'n_pairs'?" in bad.output


def test_score_reads_its_options_from_a_config_file(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    out = tmp_path / "run"
    assert runner.invoke(app, _audit(corpus, f"python:{models}:fair", out)).exit_code == 0
    config = tmp_path / "score.toml"
    config.write_text('measures = ["length"]\nn_resamples = 100\nseed = 4\n', encoding="utf-8")
    args = ["score", "--responses", str(out / "gender" / "responses.jsonl"), "--axis", "gender", "--config", str(config)]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "s"), "--seed", "5"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "s" / "results.json").read_text())["manifest"]
    assert (manifest["seed"], manifest["n_resamples"], [m["name"] for m in manifest["measures"]]) == (5, 100, ["length"])
    config.write_text("alpha = 2\n", encoding="utf-8")
    bad = runner.invoke(app, [*args, "-o", str(tmp_path / "t")])
    assert bad.exit_code == 2 and "score.toml: alpha must be between 0 and 1" in bad.output


def test_fail_on_bias_over_several_axes_corrects_them_together_unless_told_otherwise(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    """The gate reads every axis, so by default the correction spans the run: its family-wise error holds α (issue 27)."""
    corpus, models = toys
    with corpus.open("a", encoding="utf-8") as more:  # contexts for the race axis too ("going" -> "goin")
        more.write("".join(f"i am going to the game number {i} tonight\n" for i in range(40)))
    scopes = {}
    for name, extra in (("gated", ["--fail-on-bias"]), ("axis", ["--fail-on-bias", "--correction-scope", "axis"]), ("plain", [])):
        args = _audit(corpus, f"python:{models}:fair", tmp_path / name, *extra)
        args[args.index("--axis") + 1] = "gender,race"
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        run = json.loads((tmp_path / name / "run.json").read_text())
        scopes[name] = {axis["result"]["correction_scope"] for axis in run["axes"].values()}
        assert ("Holm corrects all axes of the run together" in _flat(done.output)) == (name == "gated")
    assert scopes == {"gated": {"run"}, "axis": {"axis"}, "plain": {"axis"}}


def test_a_run_wide_correction_states_the_run_wide_family_on_every_page(toys: tuple[Path, Path], tmp_path: Path) -> None:
    """Each axis of a run-wide correction states the family its p-values were adjusted over: every axis' tests."""
    corpus, models = toys
    with corpus.open("a", encoding="utf-8") as more:  # contexts for the race axis too ("going" -> "goin")
        more.write("".join(f"i am going to the game number {i} tonight\n" for i in range(40)))
    sizes = {}
    for scope in ("axis", "run"):
        args = _audit(corpus, f"python:{models}:slow", tmp_path / scope, "--correction-scope", scope)
        args[args.index("--axis") + 1] = "gender,race"
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        sizes[scope] = {
            a: json.loads((tmp_path / scope / a / "results.json").read_text())["family_size"] for a in ("gender", "race")
        }
    assert min(sizes["axis"].values()) > 0
    whole = sum(sizes["axis"].values())
    assert sizes["run"] == {"gender": whole, "race": whole}  # not each axis' own part of it
    assert f"Holm over every axis together ({whole} tests in the primary family)" in (tmp_path / "run" / "index.html").read_text()
    for axis in ("gender", "race"):
        report = (tmp_path / "run" / axis / "report.md").read_text(encoding="utf-8")
        assert f"Holm correction over {whole} primary key(s) of all axes of the run together" in report


def test_a_gated_audit_states_the_gate_on_its_pages(toys: tuple[Path, Path], tmp_path: Path) -> None:
    """The gate is stated in the run's one write (``fairtalk.audit(gates=)``), not by writing the pages again."""
    corpus, models = toys
    out = tmp_path / "gated"
    result = runner.invoke(app, _audit(corpus, f"python:{models}:biased", out, "--fail-unless-equivalent"))
    assert result.exit_code == 1, result.output
    for page in ("gender/report.html", "index.html"):
        assert 'data-gate="fail-unless-equivalent"' in (out / page).read_text(encoding="utf-8"), page
    assert "fail-unless-equivalent" in (out / "gender" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("gates", "message"),
    [(["nope"], "unknown gate 'nope'"), (["fail-if-worse"], "fail-if-worse decides a comparison"), ([3], "unknown gate 3")],
)
def test_audit_refuses_a_gate_it_cannot_state_before_any_work(
    toys: tuple[Path, Path], tmp_path: Path, gates: list[object], message: str
) -> None:
    import fairtalk

    corpus, models = toys
    out = tmp_path / "run"
    with pytest.raises(fairtalk.SpecError, match=message):
        fairtalk.audit(corpus=corpus, axes="gender", model=f"python:{models}:fair", out_dir=out, gates=gates)  # type: ignore[arg-type]
    assert not out.exists()


def test_audit_states_the_gates_it_is_given_and_they_do_not_raise(toys: tuple[Path, Path], tmp_path: Path) -> None:
    import fairtalk
    from fairtalk.gates import evaluate

    corpus, models = toys
    out = tmp_path / "run"
    run = fairtalk.audit(
        corpus=corpus, axes="gender", model=f"python:{models}:biased", out_dir=out, n_resamples=200, gates="fail-on-bias"
    )
    assert not evaluate(run, "fail-on-bias").passed  # the biased bot fails it; audit() itself did not raise
    page = (out / "gender" / "report.html").read_text(encoding="utf-8")
    assert 'data-gate="fail-on-bias"' in page and 'data-gate="fail-unless-equivalent"' not in page
