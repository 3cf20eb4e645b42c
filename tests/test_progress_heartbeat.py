"""A model slow to load or to answer still gets a progress line every ``FAIRTALK_PROGRESS_SECONDS`` in a log (issue 25).

The command runs in a subprocess whose stderr is a pipe (not a terminal: plain lines, as in CI),
read line by line as it comes, each line stamped with the time it arrived. Before the fix the
first line came only when a batch finished (637 s into an in-process SmolLM2 run).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import fairtalk
from fairtalk.progress import ProgressEvent, ProgressReporter

SLOW_MODEL = """
import time

time.sleep({load})  # a model that takes a while to load (import)


def reply(text):
    time.sleep({answer})  # and a while to answer
    return "ok " + text
"""


def _run(tmp_path: Path, *, load: float, answer: float, n_pairs: int = 1) -> list[tuple[float, str]]:
    """``fairtalk respond`` with the slow model; its stderr lines with the seconds since the start at which each came."""
    model = tmp_path / "slow_bot.py"
    model.write_text(SLOW_MODEL.format(load=load, answer=answer))
    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(
        [fairtalk.Pair(f"p{i}", "gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(n_pairs)], pairs
    )
    env = {**os.environ, "FAIRTALK_PROGRESS_SECONDS": "1", "COLUMNS": "200"}
    command = [
        sys.executable,
        "-m",
        "fairtalk.cli",
        "respond",
        "--pairs",
        str(pairs),
        "-o",
        str(tmp_path / "r.jsonl"),
        "--model",
        f"python:{model}:reply",
        "--batch-size",
        "64",
    ]
    lines: list[tuple[float, str]] = []
    started = time.monotonic()
    with subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env, cwd=tmp_path
    ) as process:
        assert process.stderr is not None

        def read() -> None:
            for line in process.stderr:  # type: ignore[union-attr]
                lines.append((time.monotonic() - started, line.rstrip()))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            assert process.wait(timeout=120) == 0, lines
        finally:
            if process.poll() is None:
                process.kill()
        reader.join(timeout=10)
    return lines


def _gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in zip(times, times[1:])]


def test_a_model_slow_to_load_and_to_answer_prints_a_line_every_second_before_any_answer(tmp_path: Path) -> None:
    lines = _run(tmp_path, load=3.5, answer=3.5)  # one pair: two answers, the first 3.5 s into generation
    loading = [(t, line) for t, line in lines if line.startswith("loading model python:") and not line.endswith("done")]
    waiting = [(t, line) for t, line in lines if "responses: 0/2 responses (0%)" in line]
    answered = [t for t, line in lines if "responses: 1/2" in line or "responses: 2/2" in line]
    assert len(loading) >= 2, lines  # about one a second while the import sleeps
    assert all("slow_bot.py:reply… " in line and line.endswith(" s") for _, line in loading), loading
    assert len(waiting) >= 2, lines  # and while the first answer is awaited: no batch has finished
    assert answered and max(t for t, _ in waiting) < min(answered), lines  # the heartbeat came before any answer
    for times in ([t for t, _ in loading], [t for t, _ in waiting]):
        assert all(0.5 < gap < 2.5 for gap in _gaps(times)), lines  # every ~1 s (FAIRTALK_PROGRESS_SECONDS=1)
    seconds = [int(line.rsplit(" ", 2)[-2]) for _, line in waiting]
    assert seconds == sorted(seconds) and seconds[-1] >= 2, waiting  # the stage's own clock, counting up


def test_a_quick_model_prints_no_heartbeat(tmp_path: Path) -> None:
    lines = _run(tmp_path, load=0, answer=0, n_pairs=2)
    assert not [line for _, line in lines if "loading model" in line or "responses:" in line], lines


def test_the_loading_stage_is_reported_by_the_library_and_left_open_when_loading_fails(tmp_path: Path) -> None:
    seen: list[ProgressEvent] = []
    pairs = [fairtalk.Pair("p0", "gender", a="he said", b="she said", original_side="a")]
    fairtalk.respond(pairs, model="builtin:echo", progress=seen.append)
    assert [(e.stage, e.finished) for e in seen[:2]] == [
        ("loading model builtin:echo", False),
        ("loading model builtin:echo", True),
    ]
    seen.clear()
    with pytest.raises(fairtalk.FairtalkError):
        fairtalk.respond(pairs, model="openai:http://user:secret@127.0.0.1:9/v1#m?timeout=1", progress=seen.append)
    assert [(e.stage, e.finished) for e in seen] == [("loading model openai:http://127.0.0.1:9/v1#m", False)]  # no secret


def test_the_stage_helper_finishes_only_a_block_that_succeeds() -> None:
    seen: list[ProgressEvent] = []
    reporter = ProgressReporter(seen.append)
    with pytest.raises(RuntimeError), reporter.stage("loading model x"):
        raise RuntimeError("no")
    assert [e.finished for e in seen] == [False]


def test_the_log_lines_repeat_a_stage_without_events_on_a_timer_and_stop_with_it(capsys) -> None:  # noqa: ANN001
    from fairtalk.cli import _output

    lines = _output._Lines(0.2)
    lines.heartbeat()
    try:
        lines(ProgressEvent("loading model builtin:smollm2", 0))
        time.sleep(0.75)
        lines(ProgressEvent("loading model builtin:smollm2", 0, finished=True))
        lines(ProgressEvent("gender: responses", 0, 160, unit="responses"))
        time.sleep(0.5)
    finally:
        lines.stop()
    said = capsys.readouterr().err.splitlines()
    loading = [line for line in said if line.startswith("loading model builtin:smollm2… ")]
    waiting = [line for line in said if line.startswith("gender: responses: 0/160 responses (0%), ")]
    assert len(loading) >= 3 and loading[-1].endswith("· done") and len(waiting) >= 1, said
    time.sleep(0.4)
    assert capsys.readouterr().err == ""  # stopped: no more lines
