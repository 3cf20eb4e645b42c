"""The CLI as a careful user tries it: inputs never overwritten, folders never mixed, every failure explained.

Each test is a regression test for an example of issue 9, reproduced first against the old code.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus, write_models
from fairtalk.cli import app

runner = CliRunner()
FAST = ["--resamples", "200", "--quiet"]
ESC = "\x1b"

MODELS = """
import sys
import time


def exits(context):
    sys.exit(3)


def hangs_on_football(context):
    if "football" in context:
        time.sleep(30)
    return "that is nice"


def surrogate(context):
    return "nice \\ud800 one" if "football" in context else "nice one"


def hostile(context):
    raise RuntimeError("server said \\x1b]0;pwned\\x07\\x1b[31mboom\\x1b[0m")
"""


@pytest.fixture()
def toys(tmp_path: Path) -> tuple[Path, Path, Path]:
    extra = tmp_path / "extra_models.py"
    extra.write_text(MODELS, encoding="utf-8")
    return write_corpus(tmp_path), write_models(tmp_path), extra


def _audit(corpus: Path, model: str, out: Path, *extra: str) -> list[str]:
    return ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", model, "-o", str(out), *FAST, *extra]


def _run_id(out: Path) -> str:
    return json.loads((out / "run.json").read_text())["run_id"]


# --- never overwrite an input ------------------------------------------------------------------------------


def test_respond_refuses_to_overwrite_its_pairs(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    pairs = tmp_path / "pairs.jsonl"
    assert runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(pairs)]).exit_code == 0
    before = pairs.read_bytes()
    base = ["respond", "--pairs", str(pairs), "--model", f"python:{models}:fair"]
    for extra, message in (
        (["-o", str(pairs)], "is also the input --pairs"),
        (["-o", str(tmp_path / "." / "pairs.jsonl")], "is also the input --pairs"),
        (["-o", str(tmp_path / "r.jsonl"), "--store", str(pairs)], "--store .* is also the input --pairs"),
        (["-o", str(tmp_path / "s.sqlite"), "--store", str(tmp_path / "s.sqlite")], "is also the input --store"),
    ):
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: ")
        assert re.search(message, result.stderr), result.stderr
    assert pairs.read_bytes() == before


def test_audit_refuses_inputs_inside_the_folders_it_replaces(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    out = tmp_path / "report"
    assert runner.invoke(app, _audit(corpus, f"python:{models}:fair", out)).exit_code == 0
    replay = out / "gender" / "responses.jsonl"
    before = replay.read_bytes()
    # replaying the previous run's responses into the same folder would delete the file being replayed
    result = runner.invoke(app, _audit(corpus, f"replay:{replay}", out))
    assert result.exit_code == 2 and "the model file" in result.stderr and "which this run replaces" in result.stderr
    inside = out / "gender" / "corpus.txt"
    inside.write_text(corpus.read_text())
    result = runner.invoke(app, _audit(inside, f"python:{models}:fair", out))
    assert result.exit_code == 2 and "the corpus" in result.stderr
    result = runner.invoke(app, _audit(corpus, f"python:{models}:fair", out, "--store", str(out / "gender" / "s.sqlite")))
    assert result.exit_code == 2 and "the run store" in result.stderr
    assert replay.read_bytes() == before and inside.is_file()


# --- never a mixed or half-written output folder ----------------------------------------------------------


def test_a_crash_while_writing_leaves_the_previous_run_whole(
    toys: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, models, _ = toys
    out = tmp_path / "report"
    assert runner.invoke(app, _audit(corpus, f"python:{models}:fair", out)).exit_code == 0
    old_id = _run_id(out)
    old_files = {
        p.relative_to(out): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and p.name != "store.sqlite" and not p.name.startswith("store.sqlite")
    }

    import fairtalk.report._html as html

    def killed(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt  # what a kill or Ctrl-C does midway through writing

    monkeypatch.setattr(html, "render_html", killed)
    result = runner.invoke(app, _audit(corpus, f"python:{models}:biased", out))
    assert result.exit_code == 130 and "interrupted" in result.stderr
    now = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and not p.name.startswith("store.sqlite")}
    assert now == old_files  # every file is the old run's, none truncated, none of the new run
    assert json.loads((out / "gender" / "results.json").read_text())["manifest"]["audit"]["run_id"] == old_id
    assert not [p for p in out.iterdir() if p.name.startswith(".fairtalk-")]


def _lexicon_copy(tmp_path: Path, axis: str) -> Path:
    """The built-in gender lexicon under another axis name."""
    gender = (Path(__file__).resolve().parents[1] / "src" / "fairtalk" / "lexicons" / "gender.tsv").read_text()
    body = "\n".join(line for line in gender.splitlines() if not line.startswith("# axis:"))
    path = tmp_path / f"{axis.replace('/', '_')}.tsv"
    path.write_text(f"# axis: {axis}\n{body}\n")
    return path


def test_a_new_run_replaces_every_entry_of_the_old_one(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    out = tmp_path / "report"
    second_axis = _lexicon_copy(tmp_path, "gender2")
    args = _audit(corpus, f"python:{models}:fair", out)
    args[args.index("--axis") + 1] = f"gender,{second_axis}"  # --axis given once
    two = runner.invoke(app, args)
    assert two.exit_code == 0, two.output
    assert (out / "gender2" / "results.json").is_file()
    (out / "notes.txt").write_text("mine")
    first = _run_id(out)
    one = runner.invoke(app, _audit(corpus, f"python:{models}:biased", out))
    assert one.exit_code == 0, one.output
    second = _run_id(out)
    assert second != first
    assert not (out / "gender2").exists()  # the old run's axis folder does not linger beside the new index
    assert json.loads((out / "gender" / "results.json").read_text())["manifest"]["audit"]["run_id"] == second
    assert second in (out / "index.html").read_text()
    assert (out / "notes.txt").read_text() == "mine"  # files the run does not own are left alone


def test_axes_that_would_share_a_folder_are_refused(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    for name in ("foo+bar", "foo_bar", "index.html", "run.json"):
        _lexicon_copy(tmp_path, name)
    out = tmp_path / "report"
    args = _audit(corpus, "builtin:echo", out)
    args[args.index("--axis") + 1] = f"{tmp_path / 'foo+bar.tsv'},{tmp_path / 'foo_bar.tsv'}"  # --axis given once
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "would share the report folder 'foo_bar'" in result.stderr
    for name in ("index.html", "run.json"):
        args[args.index("--axis") + 1] = str(tmp_path / f"{name}.tsv")
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and "a name the audit uses itself" in result.stderr, result.output
    assert not (out / "store.sqlite").exists()  # refused before any work: no store, no generation


def test_a_full_disk_is_a_clear_error_and_the_store_survives(
    toys: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, models, _ = toys
    out = tmp_path / "report"

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    result = runner.invoke(app, _audit(corpus, f"python:{models}:biased", out))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and "No space left on device" in result.stderr
    assert "Traceback" not in result.output
    assert not list(out.glob("*/results.json")) and not list(out.glob(".fairtalk-*"))
    monkeypatch.undo()
    again = runner.invoke(app, _audit(corpus, f"python:{models}:biased", out))
    assert again.exit_code == 0 and "gender: 0 generated, 80 from the store, 0 failed" in again.output
    score = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(out / "gender" / "responses.jsonl"),
            "--axis",
            "gender",
            "-o",
            str(tmp_path / "s"),
            "--resamples",
            "100",
        ],
    )
    assert score.exit_code == 0
    monkeypatch.setattr(os, "fsync", full)
    score = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(out / "gender" / "responses.jsonl"),
            "--axis",
            "gender",
            "-o",
            str(tmp_path / "s"),
            "--resamples",
            "100",
        ],
    )
    assert score.exit_code == 2 and "No space left on device" in score.stderr
    assert json.loads((tmp_path / "s" / "results.json").read_text())["n_pairs"] == 40  # the old report is whole


# --- failures are explained ---------------------------------------------------------------------------------


def test_when_every_item_fails_the_models_own_error_is_shown(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, _, extra = toys
    result = runner.invoke(app, _audit(corpus, f"python:{extra}:hostile", tmp_path / "r"))
    assert result.exit_code == 2
    assert "stopped after 5 consecutive failures of one kind (the model failed: ResponderError)" in result.stderr
    assert "hostile raised RuntimeError: server said" in result.stderr and "boom" in result.stderr
    assert ESC not in result.output and "\x07" not in result.output  # a server cannot drive the terminal


def test_pairs_left_out_are_reported_beside_the_table(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    out = tmp_path / "r"
    result = runner.invoke(app, _audit(corpus, f"python:{models}:broken", out))
    assert result.exit_code == 0, result.output
    assert "failures by kind: ResponderError 8" in result.output and "backend unavailable" in result.output
    note = "4 of 40 pairs (10.0%) are left out of this table because the model failed on 8 of their sides"
    assert note in (out / "gender" / "report.md").read_text()
    assert note in (out / "gender" / "report.html").read_text()


def test_a_hanging_python_model_times_out_per_item(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, _, extra = toys
    result = runner.invoke(app, _audit(corpus, f"python:{extra}:hangs_on_football", tmp_path / "r", "--model-arg", "timeout=0.2"))
    assert result.exit_code == 0, result.output
    assert "8 failed (4 pairs left out" in result.output and "ResponderTimeout 8" in result.output


def test_sys_exit_in_a_model_says_what_happened(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, _, extra = toys
    result = runner.invoke(app, _audit(corpus, f"python:{extra}:exits", tmp_path / "r"))
    assert result.exit_code == 2
    assert "exits called sys.exit(3) while answering; the run stopped" in result.stderr
    assert "re-run to resume" in result.stderr


def test_unencodable_text_of_a_python_model_is_a_counted_bad_response(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """A python: model's answer with a lone surrogate is no text: a bad response, counted as a failure of its side
    (as a non-string is), never stored altered (it was replaced by U+FFFD, counted only on the console)."""
    corpus, _, extra = toys
    out = tmp_path / "r"
    result = runner.invoke(app, _audit(corpus, f"python:{extra}:surrogate", out))
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    assert "failures by kind: BadResponse 8" in shown and "returned a string holding a lone surrogate (U+D800" in shown
    text = (out / "gender" / "responses.jsonl").read_bytes().decode("utf-8")  # valid UTF-8
    assert "\ufffd" not in text and text.count("lone surrogate") == 8


def test_skipped_corpus_lines_are_printed(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    with corpus.open("ab") as handle:
        handle.write(b"he said \xff\xfe broken\n")
    result = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "r"))
    assert result.exit_code == 0
    assert "gender: skipped 1 corpus line(s): not UTF-8 (first at" in result.output


# --- the run store never serves another model's answers -------------------------------------------------


def test_editing_a_helper_module_is_a_new_model(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path)
    (tmp_path / "wording.py").write_text("ANSWER = 'that is lovely'\n")
    model = tmp_path / "bot.py"
    model.write_text("from wording import ANSWER\ndef reply(context):\n    return ANSWER\n")
    out = tmp_path / "r"
    first = runner.invoke(app, _audit(corpus, f"python:{model}:reply", out))
    assert first.exit_code == 0 and "80 generated, 0 from the store" in first.output
    (tmp_path / "wording.py").write_text("ANSWER = 'shut up you stupid idiot'\n")
    second = runner.invoke(app, _audit(corpus, f"python:{model}:reply", out))
    assert second.exit_code == 0 and "80 generated, 0 from the store" in second.output
    assert "shut up" in (out / "gender" / "responses.jsonl").read_text()
    said = " ".join((first.output + second.output).split())  # the console wraps the model line at 80 columns
    fingerprints = re.findall(r"model (python:\S+ \{.*?\}) · ", said)  # the model and its fingerprint
    assert len(fingerprints) == 2 and len(set(fingerprints)) == 2 and all('"code":' in f for f in fingerprints)


def test_model_version_is_part_of_the_cache_key(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    out = tmp_path / "r"
    v1 = runner.invoke(app, _audit(corpus, f"python:{models}:fair", out, "--model-version", "deploy-1"))
    assert v1.exit_code == 0 and "version=deploy-1" in v1.output
    v2 = runner.invoke(app, _audit(corpus, f"python:{models}:fair", out, "--model-version", "deploy-2"))
    assert v2.exit_code == 0 and "80 generated, 0 from the store" in v2.output
    v1_again = runner.invoke(app, _audit(corpus, f"python:{models}:fair", out, "--model-version", "deploy-1"))
    assert "0 generated, 80 from the store" in v1_again.output
    bad = runner.invoke(app, _audit(corpus, f"python:{models}:fair", out, "--model-version", "two\nlines"))
    assert bad.exit_code == 2 and "model_version must be a non-empty line" in bad.stderr


def test_model_args_reach_the_adapter(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    result = runner.invoke(app, _audit(corpus, "builtin:echo", tmp_path / "r", "--model-arg", "mode=upper"))
    assert result.exit_code == 0 and 'builtin:echo {"mode":"upper"}' in result.output
    bad = runner.invoke(app, _audit(corpus, "builtin:echo", tmp_path / "r", "--model-arg", "colour=red"))
    assert bad.exit_code == 2 and "unknown option 'colour' for builtin:echo (choose from: mode)" in bad.stderr
    both = runner.invoke(app, _audit(corpus, "builtin:echo?mode=upper", tmp_path / "r", "--model-arg", "mode=identity"))
    assert both.exit_code == 2 and "given both in the model spec and as a model argument" in both.stderr
    default = runner.invoke(
        app, ["audit", "--corpus", str(corpus), "--axis", "gender", "--model-arg", "timeout=3", "-o", str(tmp_path / "d"), *FAST]
    )
    assert default.exit_code == 2 and "need a model spec (--model SPEC)" in default.stderr


# --- small ones ------------------------------------------------------------------------------------------


def test_negative_seeds_and_a_file_as_report_folder_are_clear_errors(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    out = tmp_path / "r"
    assert runner.invoke(app, _audit(corpus, f"python:{models}:fair", out)).exit_code == 0
    responses = str(out / "gender" / "responses.jsonl")
    for argv in (
        _audit(corpus, f"python:{models}:fair", out, "--seed", "-1"),
        ["score", "--responses", responses, "--axis", "gender", "--seed", "-1"],
    ):
        result = runner.invoke(app, argv)
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert "error: --seed must be an integer >= 0, got -1" in result.stderr
    existing = tmp_path / "existing.txt"
    existing.write_text("keep me")
    result = runner.invoke(app, ["score", "--responses", responses, "--axis", "gender", "-o", str(existing)])
    assert result.exit_code == 2 and "existing.txt: is a file, not a folder" in result.stderr
    assert existing.read_text() == "keep me"
    from fairtalk import SpecError, score

    with pytest.raises(SpecError, match="seed must be an integer >= 0, got -1"):
        score(responses, axis="gender", seed=-1)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    commands = (
        ["score", "--responses", str(fifo), "--axis", "gender", "-o", str(tmp_path / "s")],
        ["respond", "--pairs", str(fifo), "--model", "builtin:echo", "-o", str(tmp_path / "r.jsonl")],
        ["prompts", "analyze", "--completions", str(fifo), "-o", str(tmp_path / "p")],
    )
    for argv in commands:
        done = subprocess.run([sys.executable, "-m", "fairtalk.cli", *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert "is not a regular file (a pipe, a device or a socket)" in done.stderr


def test_an_oversized_record_is_a_clear_error(tmp_path: Path) -> None:
    from fairtalk._jsonl import MAX_RECORD_BYTES

    path = tmp_path / "huge.jsonl"
    big = "x" * (MAX_RECORD_BYTES + 10)
    with path.open("w") as handle:
        handle.write(json.dumps({"pair_id": "1", "side": "a", "context": "he", "response": "ok"}) + "\n")
        handle.write(json.dumps({"pair_id": "1", "side": "b", "context": "she", "response": big}) + "\n")
    result = runner.invoke(app, ["score", "--responses", str(path), "--axis", "gender", "-o", str(tmp_path / "s")])
    assert result.exit_code == 2 and "huge.jsonl:2: record is longer than 8 MiB" in result.stderr


def test_the_store_is_readable_after_a_run(toys: tuple[Path, Path, Path], tmp_path: Path) -> None:
    corpus, models, _ = toys
    out = tmp_path / "r"
    assert runner.invoke(app, _audit(corpus, f"python:{models}:fair", out)).exit_code == 0
    with sqlite3.connect(out / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses WHERE error IS NULL").fetchone()[0] == 80
