"""Crash safety under a second run and a kill: regression tests for the crash-safety review (each failed on main)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import fairtalk
from fairtalk.errors import ResponderAborted
from fairtalk.records import Pair
from fairtalk.store import RunStore

PAIRS = [Pair(id=f"p{i}", axis="gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(3)]
#: Run B: generates into the shared store; its model waits (on its first call) until the test says go.
RUN_B = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    import fairtalk
    from fairtalk.records import Pair

    store, started, go = (Path(p) for p in sys.argv[1:4])
    pairs = [Pair(id=f"p{i}", axis="gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(3)]

    def reply(text):
        started.touch()
        while not go.exists():
            time.sleep(0.02)
        return "ok " + text

    generation = fairtalk.respond(pairs, model=reply, store=store)
    print(generation.summary.n_generated)
    """
)


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    """Until ``path`` exists (the process's signal that it got there); fails when the process ends first."""
    while not path.exists():
        if process.poll() is not None:
            pytest.fail(f"run B ended first: {process.communicate()}")
        time.sleep(0.02)


def test_a_run_that_stops_with_nothing_stored_keeps_a_new_store_another_run_has_open(tmp_path: Path) -> None:
    """Two runs given one new --store: the one that created it and stops first must not delete the other's answers."""
    store, started, go = tmp_path / "shared.sqlite", tmp_path / "started", tmp_path / "go"
    script = tmp_path / "run_b.py"
    script.write_text(RUN_B)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(Path(fairtalk.__file__).parents[1]), os.environ.get("PYTHONPATH")) if p),
    }
    processes: list[subprocess.Popen[str]] = []

    def interrupted(text: str) -> str:  # run A: created the store, then is stopped before storing any answer
        if not processes:
            processes.append(
                subprocess.Popen(
                    [sys.executable, str(script), str(store), str(started), str(go)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                )
            )
            _wait_for(started, processes[0])  # run B has the store open and is answering
        raise KeyboardInterrupt

    try:
        with pytest.raises(ResponderAborted):
            fairtalk.respond(PAIRS, model=interrupted, store=store)
        assert store.exists()  # main: run A deleted the file run B has open
        go.touch()
        out, err = processes[0].communicate(timeout=120)
        assert processes[0].returncode == 0, err
        assert out.split() == ["6"]
        with RunStore(store) as kept:
            assert kept.count() == 6  # run B's answers are in the file, not in a deleted one
    finally:
        go.touch()
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_a_run_alone_still_removes_the_new_store_it_stored_nothing_in(tmp_path: Path) -> None:
    store = tmp_path / "new" / "alone.sqlite"

    def interrupted(text: str) -> str:
        raise KeyboardInterrupt

    with pytest.raises(ResponderAborted):
        fairtalk.respond(PAIRS, model=interrupted, store=store)
    assert not store.exists() and not store.parent.exists()


# --- Ctrl-C says what was written, in every command -------------------------------------------------------------


def _raise_interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    from audit_toys import write_corpus

    return write_corpus(tmp_path)


def test_ctrl_c_after_the_audit_is_written_says_so_and_what_may_be_missing(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from fairtalk.cli import app

    monkeypatch.setattr("fairtalk.cli._audit.write_ci_files", _raise_interrupt)  # while writing the JUnit file
    out, junit, store = tmp_path / "out", tmp_path / "audit.xml", tmp_path / "s.sqlite"
    argv = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "--resamples", "200", "-q"]
    result = CliRunner().invoke(app, [*argv, "-o", str(out), "--junit", str(junit), "--store", str(store)])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 130, result.output
    assert f"interrupted after the run was written in {out}" in said and "may be missing" not in said, said
    assert (out / "run.json").exists()
    # the JUnit file records the interruption (not missing, not a pass): its testcase is in error
    recorded = junit.read_text(encoding="utf-8")
    assert "<error" in recorded and "interrupted after the run was written" in recorded, recorded


def test_ctrl_c_early_in_audit_names_the_store_it_was_given(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from fairtalk.cli import app

    monkeypatch.setattr("fairtalk.cli._audit._config", _raise_interrupt)  # while the options are read
    store = tmp_path / "given.sqlite"
    argv = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(tmp_path / "o")]
    result = CliRunner().invoke(app, [*argv, "--store", str(store)])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 130 and "interrupted; no answer had been generated yet" in said, said
    assert "give --store" not in said
    store.write_bytes(b"")  # a store of an earlier run
    said = " ".join(CliRunner().invoke(app, [*argv, "--store", str(store)]).stderr.split())
    assert f"the answers so far are kept in {store}" in said, said
    said = " ".join(CliRunner().invoke(app, argv).stderr.split())  # no --store: its default is not known yet
    assert "interrupted; no answer had been generated yet" in said, said


@pytest.mark.parametrize("where", ["before", "after"])
def test_ctrl_c_in_augment_says_whether_the_file_was_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    from typer.testing import CliRunner

    from fairtalk.cli import app

    target = "fairtalk.augment" if where == "before" else "fairtalk.cli._debias._print_augmentation"
    monkeypatch.setattr(target, _raise_interrupt)
    dialogues = tmp_path / "dialogues.jsonl"
    dialogues.write_text('{"context": "my mother is late", "response": "she will come"}\n')
    output = tmp_path / "aug.jsonl"
    result = CliRunner().invoke(app, ["augment", "--corpus", f"jsonl:{dialogues}", "--axis", "gender", "-o", str(output)])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 130, result.output
    if where == "before":
        assert f"interrupted; {output} was not written" in said and not output.exists(), said
    else:
        assert f"interrupted after {output} was written" in said and output.exists(), said


@pytest.mark.parametrize("command", ["score", "compare"])
def test_ctrl_c_in_score_and_compare_does_not_offer_a_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    from typer.testing import CliRunner

    from fairtalk.cli import app

    monkeypatch.setattr(
        "fairtalk.read_responses" if command == "score" else "fairtalk.pipeline.is_prompt_analysis", _raise_interrupt
    )
    responses = tmp_path / "r.jsonl"
    responses.write_text("")
    argv = (
        ["score", "--responses", str(responses), "--axis", "gender", "-o", str(tmp_path / "rep")]
        if command == "score"
        else ["compare", str(tmp_path / "a"), str(tmp_path / "b")]
    )
    result = CliRunner().invoke(app, argv)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 130, result.output
    assert "--store" not in said and "was not written" in said, said


def test_ctrl_c_after_score_wrote_its_report_says_so_and_what_may_be_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding: score exited 130 silently when Ctrl-C came after its report was written."""
    from typer.testing import CliRunner

    from audit_toys import write_responses
    from fairtalk.cli import app

    monkeypatch.setattr("fairtalk.cli._score.write_ci_files", _raise_interrupt)  # while writing the JUnit file
    responses, out, junit = write_responses(tmp_path / "r.jsonl", 40), tmp_path / "rep", tmp_path / "score.xml"
    argv = ["score", "--responses", str(responses), "--axis", "gender", "-o", str(out), "--junit", str(junit)]
    result = CliRunner().invoke(app, [*argv, "--resamples", "200", "-q"])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 130, result.output
    assert f"interrupted after the report was written in {out}" in said and "may be missing" not in said, said
    assert (out / "results.json").exists()
    recorded = junit.read_text(encoding="utf-8")
    assert "<error" in recorded and "interrupted after the report was written" in recorded, recorded


# --- a killed writer's temporary file is removed by the next write of its target -----------------------------


def test_the_next_write_removes_the_temporary_files_a_killed_writer_left(tmp_path: Path) -> None:
    from fairtalk.files import write_text_atomic

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    pid = int(dead.stdout)  # a process that has ended
    target = tmp_path / "aug.jsonl.gz"
    killed = tmp_path / f".aug.jsonl.gz.{pid}-evkv8t9c.tmp"  # what a killed writer leaves
    older = tmp_path / ".aug.jsonl.gz.abcd1234.tmp"  # an older fairtalk's, without a pid, untouched for two hours
    live = tmp_path / f".aug.jsonl.gz.{os.getpid()}-qwer5678.tmp"  # a writer that still runs
    recent = tmp_path / ".aug.jsonl.gz.zxcv0987.tmp"  # without a pid, just written: maybe a writer's
    other = tmp_path / f".aug.jsonl.{pid}-evkv8t9c.tmp"  # another target's
    for path in (killed, older, live, recent, other):
        path.write_bytes(b"partial")
    os.utime(older, (time.time() - 7200, time.time() - 7200))
    write_text_atomic(target, "done\n")
    assert target.read_text() == "done\n"
    assert not killed.exists() and not older.exists()
    assert live.exists() and recent.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == sorted(
        p.name for p in (live, recent, other)
    )  # the write left no temporary file of its own


# --- an output folder that cannot be written is refused before any answer --------------------------------------


def test_an_unwritable_output_folder_is_refused_before_any_answer(corpus: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fairtalk.cli import app

    (tmp_path / "afile").write_text("x")
    out, store, called = tmp_path / "afile" / "report", tmp_path / "s.sqlite", tmp_path / "called"
    models = tmp_path / "m.py"
    models.write_text(f"from pathlib import Path\ndef reply(text):\n    Path({str(called)!r}).touch()\n    return 'ok'\n")
    argv = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", f"python:{models}:reply", "--resamples", "200"]
    result = CliRunner().invoke(app, [*argv, "-o", str(out), "--store", str(store)])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "error:" in said and "afile is not a folder" in said, result.output
    assert not called.exists() and not store.exists()  # refused before the model answered anything
