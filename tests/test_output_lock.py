"""Two commands given one output: the second stops before any work while the first writes it (the output's lock).

The first command runs in a process of its own with a ``python:`` model that waits, on its first
answer, until the test creates a file: the test knows the first holds the output, with no sleep
standing in for timing. A holder killed with SIGKILL leaves its lock file, which blocks nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import fairtalk
from fairtalk.cli import app
from fairtalk.files import WRITTEN, output_lock_path

runner = CliRunner()
#: The first command's model: says it started, then waits until the test says go.
WAITING = """
import time
from pathlib import Path

def reply(text):
    Path({started!r}).touch()
    while not Path({go!r}).exists():
        time.sleep(0.02)
    return "ok " + text
"""
#: The second command's model: must never be asked.
CALLED = """
from pathlib import Path

def reply(text):
    Path({called!r}).touch()
    return "no"
"""


@pytest.fixture()
def toys(tmp_path: Path) -> tuple[Path, Path]:
    from audit_toys import write_corpus

    corpus = write_corpus(tmp_path)
    pairs = tmp_path / "pairs.jsonl"
    made = runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(pairs)])
    assert made.exit_code == 0, made.output
    return corpus, pairs


class First:
    """The first command, in a process of its own, its model waiting on the test's go."""

    def __init__(self, tmp_path: Path) -> None:
        self.started, self.go = tmp_path / "started", tmp_path / "go"
        self.models = tmp_path / "waiting.py"
        self.models.write_text(WAITING.format(started=str(self.started), go=str(self.go)))
        self.spec = f"python:{self.models}:reply"
        self.process: subprocess.Popen[str] | None = None

    def start(self, *argv: str) -> subprocess.Popen[str]:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(Path(fairtalk.__file__).parents[1]), os.environ.get("PYTHONPATH")) if p
            ),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fairtalk.cli", *argv, "-q"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        while not self.started.exists():  # its model answers: its checks (and its lock) are behind it
            if self.process.poll() is not None:
                pytest.fail(f"the first command ended first: {self.process.communicate()}")
            time.sleep(0.02)
        return self.process

    def finish(self) -> tuple[int, str]:
        assert self.process is not None
        self.go.touch()
        _, err = self.process.communicate(timeout=300)
        return self.process.returncode, err

    def stop(self) -> None:
        self.go.touch()
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture()
def first(tmp_path: Path) -> Iterator[First]:
    holder = First(tmp_path)
    try:
        yield holder
    finally:
        holder.stop()


def _second_model(tmp_path: Path) -> tuple[str, Path]:
    called = tmp_path / "called"
    path = tmp_path / "second.py"
    path.write_text(CALLED.format(called=str(called)))
    return f"python:{path}:reply", called


def _refused(result: Result, out: Path, pid: int, option: str = "-o") -> None:
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert f"error: {out} is being written by another fairtalk run (pid {pid}); wait for it or give another {option}" in said


def test_a_second_audit_into_the_folder_a_first_is_writing_stops_before_any_work(
    toys: tuple[Path, Path], tmp_path: Path, first: First
) -> None:
    corpus, _ = toys
    out = tmp_path / "m1"
    common = ["audit", "--corpus", str(corpus), "--resamples", "200", "--no-scorer-check", "-o", str(out)]
    process = first.start(*common, "--axis", "gender", "--model", first.spec, "--store", str(tmp_path / "a.sqlite"))
    spec, called = _second_model(tmp_path)
    second = runner.invoke(app, [*common, "--axis", "race", "--model", spec, "--store", str(tmp_path / "b.sqlite")])
    _refused(second, out, process.pid)
    assert not called.exists() and not (tmp_path / "b.sqlite").exists()  # refused before the model or the store
    code, err = first.finish()
    assert code == 0, err
    run = json.loads((out / "run.json").read_text())
    assert list(run["axes"]) == ["gender"] and (out / "gender" / "results.json").is_file() and not (out / "race").exists()
    listed = json.loads((out / WRITTEN).read_text())["files"]
    assert {name.split("/")[0] for name in listed} == {"gender", "index.html", "run.json"}
    assert not output_lock_path(out).exists()  # the first let go of it, and removed its lock file


def test_a_second_respond_into_the_file_a_first_is_writing_stops_before_any_work(
    toys: tuple[Path, Path], tmp_path: Path, first: First
) -> None:
    _, pairs = toys
    out = tmp_path / "same.jsonl"
    process = first.start("respond", "--pairs", str(pairs), "--model", first.spec, "-o", str(out))
    spec, called = _second_model(tmp_path)
    second = runner.invoke(app, ["respond", "--pairs", str(pairs), "--model", spec, "-o", str(out)])
    _refused(second, out, process.pid)
    assert not called.exists()
    code, err = first.finish()
    assert code == 0, err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 80 and all(r["response"].startswith("ok ") for r in records)  # the first's answers, whole


def test_a_junit_file_a_first_command_is_writing_is_refused_naming_its_option(
    toys: tuple[Path, Path], tmp_path: Path, first: First
) -> None:
    corpus, _ = toys
    junit = tmp_path / "junit.xml"
    argv = ["audit", "--corpus", str(corpus), "--axis", "gender", "--resamples", "200", "--no-scorer-check"]
    process = first.start(*argv, "--model", first.spec, "-o", str(tmp_path / "r1"), "--junit", str(junit))
    spec, called = _second_model(tmp_path)
    second = runner.invoke(app, [*argv, "--model", spec, "-o", str(tmp_path / "r2"), "--junit", str(junit)])
    _refused(second, junit, process.pid, "--junit")
    assert not called.exists() and not (tmp_path / "r2").exists()
    assert first.finish()[0] == 0


def test_a_holder_killed_with_sigkill_does_not_block_the_next_command(
    toys: tuple[Path, Path], tmp_path: Path, first: First
) -> None:
    _, pairs = toys
    out = tmp_path / "same.jsonl"
    process = first.start("respond", "--pairs", str(pairs), "--model", first.spec, "-o", str(out))
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert output_lock_path(out).exists()  # a kill leaves its lock file: the kernel let go of the lock itself
    second = runner.invoke(app, ["respond", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(out)])
    assert second.exit_code == 0, second.output
    assert len(out.read_text().splitlines()) == 80
    assert not output_lock_path(out).exists()


def test_the_lock_is_released_when_a_command_ends_so_a_rerun_in_the_same_process_writes(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    _, pairs = toys
    out = tmp_path / "new" / "deeper" / "same.jsonl"
    argv = ["respond", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(out)]
    for _ in range(2):
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, result.output
        assert not output_lock_path(out).exists()
    refused = runner.invoke(app, ["respond", "--pairs", str(tmp_path / "missing.jsonl"), "--model", "builtin:echo", "-o"])
    assert refused.exit_code == 2
    gone = tmp_path / "other" / "out.jsonl"
    failed = runner.invoke(
        app, ["respond", "--pairs", str(tmp_path / "missing.jsonl"), "--model", "builtin:echo", "-o", str(gone)]
    )
    assert failed.exit_code == 2 and not (tmp_path / "other").exists()  # the folders made for its lock are removed again


def test_a_run_removes_the_axis_folders_its_folder_s_marker_lists_although_run_json_does_not(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    from audit_toys import PREDICATES

    corpus, _ = toys
    with corpus.open("a", encoding="utf-8") as handle:  # contexts for the age axis too
        handle.writelines(f"{who} {what}\n" for who in ("a young man", "a young woman") for what in PREDICATES)
    out = tmp_path / "m1"

    def audit(axes: str) -> None:
        fairtalk.audit(corpus=f"text:{corpus}", axes=axes, model="builtin:echo", n_resamples=20, out_dir=out)

    audit("gender,age")
    run = json.loads((out / "run.json").read_text())
    del run["axes"]["age"]  # what two runs at once left: run.json of one, the marker and the folders of both
    (out / "run.json").write_text(json.dumps(run))
    (out / "notes.txt").write_text("mine")
    assert (out / "age").is_dir()
    audit("gender")
    assert not (out / "age").exists()  # main: the stale axis folder stayed for good
    assert (out / "notes.txt").read_text() == "mine"  # the user's file is never displaced
    listed = json.loads((out / WRITTEN).read_text())["files"]
    assert not any(name.split("/")[0] == "age" for name in listed)
    assert list(json.loads((out / "run.json").read_text())["axes"]) == ["gender"]


def _nested(result: Result, out: Path, other: Path, pid: int, where: str, option: str = "-o") -> None:
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert (
        f"error: {out} {where} {other}, which another fairtalk run (pid {pid}) is writing; wait for it or give another {option}"
    ) in said


def _audit_argv(corpus: Path, tmp_path: Path, store: str) -> list[str]:
    return [
        "audit",
        "--corpus",
        str(corpus),
        "--axis",
        "gender",
        "--resamples",
        "200",
        "--no-scorer-check",
        "--store",
        str(tmp_path / store),
    ]


def test_a_junit_file_inside_the_folder_a_first_command_is_writing_is_refused_naming_it(
    toys: tuple[Path, Path], tmp_path: Path, first: First
) -> None:
    corpus, _ = toys
    out = tmp_path / "r1"
    process = first.start(*_audit_argv(corpus, tmp_path, "a.sqlite"), "--model", first.spec, "-o", str(out))
    spec, called = _second_model(tmp_path)
    for junit in (out / "index.html", out / "gender" / "junit.xml"):
        argv = [*_audit_argv(corpus, tmp_path, "b.sqlite"), "--model", spec, "-o", str(tmp_path / "r2")]
        second = runner.invoke(app, [*argv, "--junit", str(junit)])
        _nested(second, junit, out, process.pid, "is inside", "--junit")
    assert not called.exists() and not (tmp_path / "r2").exists()
    code, err = first.finish()
    assert code == 0, err  # main: the first failed on the index.html the second wrote into its folder
    assert sorted(p.name for p in out.iterdir() if p.name != "store.sqlite") == [
        ".written-by-fairtalk.json",
        "gender",
        "index.html",
        "run.json",
    ]
    assert not (out / "gender" / "junit.xml").exists()
    again = runner.invoke(app, [*argv, "--junit", str(out / "index.html")])
    assert again.exit_code == 2 and "is not a JUnit file fairtalk wrote" in again.stderr  # now only: not a JUnit file


def test_an_output_folder_inside_the_folder_a_first_command_is_writing_waits_for_it(
    toys: tuple[Path, Path], tmp_path: Path, first: First
) -> None:
    corpus, _ = toys
    out = tmp_path / "r1"
    process = first.start(*_audit_argv(corpus, tmp_path, "a.sqlite"), "--model", first.spec, "-o", str(out))
    nested = out / "nested"
    argv = [*_audit_argv(corpus, tmp_path, "b.sqlite"), "--model", "builtin:echo", "-o", str(nested)]
    _nested(runner.invoke(app, argv), nested, out, process.pid, "is inside")
    assert not nested.exists()
    code, err = first.finish()
    assert code == 0, err
    after = runner.invoke(app, argv)  # the first ended: nothing blocks
    assert after.exit_code == 0, after.output
    assert (nested / "run.json").is_file()


def test_a_folder_holding_the_output_a_first_command_is_writing_waits_for_it(
    toys: tuple[Path, Path], tmp_path: Path, first: First
) -> None:
    corpus, _ = toys
    out = tmp_path / "r1"
    nested = out / "nested"
    process = first.start(*_audit_argv(corpus, tmp_path, "a.sqlite"), "--model", first.spec, "-o", str(nested))
    spec, called = _second_model(tmp_path)
    argv = [*_audit_argv(corpus, tmp_path, "b.sqlite"), "--model", spec, "-o", str(out)]
    _nested(runner.invoke(app, argv), out, nested, process.pid, "holds")
    assert not called.exists() and not (out / "run.json").exists()
    code, err = first.finish()
    assert code == 0, err
    assert (nested / "run.json").is_file()
    after = runner.invoke(app, [*_audit_argv(corpus, tmp_path, "b.sqlite"), "--model", "builtin:echo", "-o", str(out)])
    assert after.exit_code == 0, after.output
    assert (out / "run.json").is_file() and (nested / "run.json").is_file()


def test_a_holder_killed_with_sigkill_blocks_no_output_inside_its_folder(
    toys: tuple[Path, Path], tmp_path: Path, first: First
) -> None:
    corpus, _ = toys
    out = tmp_path / "top" / "r1"
    process = first.start(*_audit_argv(corpus, tmp_path, "a.sqlite"), "--model", first.spec, "-o", str(out))
    process.send_signal(signal.SIGKILL)
    process.wait()
    argv = [*_audit_argv(corpus, tmp_path, "b.sqlite"), "--model", "builtin:echo"]
    inside = runner.invoke(app, [*argv, "-o", str(out / "nested"), "--junit", str(out / "junit.xml")])
    assert inside.exit_code == 0, inside.output
    holding = runner.invoke(app, [*argv, "-o", str(tmp_path / "top")])
    assert holding.exit_code == 0, holding.output
