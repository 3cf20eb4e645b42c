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
