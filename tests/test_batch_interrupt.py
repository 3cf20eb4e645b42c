"""Answers that came back inside an unfinished batch survive an interrupt: the rerun asks only for the missing ones.

A batched model (``python:`` given a list, a model with the default ``respond_each``) that fails on a
batch is asked again by halves; the halves it answered were held until the whole batch was done, so
a Ctrl-C (or the model stopping the run) during a later half lost them, and the rerun paid for them
again. The ``openai:`` adapter stores each answer as it reaches the caller; the answers still on
their way from its requests' thread when the run stopped (Ctrl-C, an error budget spent) were lost.

Each interrupt is raised at a fixed point (the model or the stub server calls
``_thread.interrupt_main()`` when the side that hangs is asked for), never after a delay.
"""

from __future__ import annotations

import _thread
import asyncio
import json
import signal
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.errors import ResponderAborted, ResponderError
from fairtalk.models import DecodingSettings, Responder, batched, respond_each_checked
from fairtalk.models import _streaming as streaming
from local_server import LocalServer, send_json

runner = CliRunner()

#: Ten pairs, twenty pair sides; with one batch of 20, the side "he said 7" (index 14) fails its batches.
N_PAIRS = 10
BAD = "he said 7"
#: What the halves answer before the bad side is asked alone: [0, 10) ok, then [10, 12), [12], [13].
N_BEFORE = 14


@pytest.fixture(autouse=True)
def _sigint_handled() -> Iterator[None]:
    """Python's own Ctrl-C handler while the test runs: ``interrupt_main()`` does nothing where SIGINT is ignored.

    A shell starts a background job (``make test &``, a CI runner's) with SIGINT ignored, and Python keeps it so.
    """
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _pairs(n: int = N_PAIRS) -> list[fairtalk.Pair]:
    return [fairtalk.Pair(f"p{i}", "gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(n)]


def _write_pairs(path: Path) -> Path:
    fairtalk.write_pairs(_pairs(), path)
    return path


def _stored(store: Path) -> tuple[int, int]:
    """Answers and failures in the store ((0, 0) when there is none); read-only, so that it never creates the file."""
    if not store.exists():
        return 0, 0
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        n_ok, n_failed = db.execute("SELECT COUNT(response), COUNT(error) FROM responses").fetchone()
    return int(n_ok), int(n_failed)


_BOT = """\
import _thread
import asyncio
import json
from pathlib import Path

from fairtalk.models import batched

FLAG = Path({flag!r})
CALLS = Path({calls!r})


@batched
def reply(texts):
    with CALLS.open("a") as log:
        log.write(json.dumps(texts) + "\\n")
    if FLAG.exists() and texts == [{bad!r}]:
        _thread.interrupt_main()  # the user presses Ctrl-C while this side is generated
        return ["never stored"]
    if FLAG.exists() and {bad!r} in texts:
        raise ValueError("the batch holds a side the model fails on")
    return ["re: " + text for text in texts]
"""


def _asked(calls: Path) -> list[str]:
    return [text for line in calls.read_text().splitlines() for text in json.loads(line)]


def test_ctrl_c_inside_a_batch_asked_by_halves_keeps_the_halves_answered_and_the_rerun_asks_the_rest(tmp_path: Path) -> None:
    flag, calls, store = tmp_path / "bad.flag", tmp_path / "calls.jsonl", tmp_path / "store.sqlite"
    bot = tmp_path / "bot.py"
    bot.write_text(_BOT.format(flag=str(flag), calls=str(calls), bad=BAD))
    pairs = _write_pairs(tmp_path / "pairs.jsonl")
    command = ["respond", "--pairs", str(pairs), "--model", f"python:{bot}:reply", "--batch-size", "20"]
    command += ["--store", str(store), "-o", str(tmp_path / "r.jsonl")]
    flag.touch()
    result = runner.invoke(app, command)
    assert result.exit_code == 130, result.output
    assert f"the answers so far are kept in {store}" in " ".join(result.stderr.split())  # the interrupt message
    assert len(_asked(calls)) == 20 + 10 + 10 + 5 + 2 + 3 + 1 + 2 + 1 + 1  # the batch, its halves, the bad side alone
    assert _stored(store) == (N_BEFORE, 0)  # every side a half answered (main: none, and the store was removed)

    flag.unlink()
    calls.unlink()
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    asked = _asked(calls)
    assert len(asked) == 20 - N_BEFORE and BAD in asked  # only the sides not answered yet
    assert _stored(store) == (20, 0) and len(fairtalk.read_responses(tmp_path / "r.jsonl")) == N_PAIRS


_SAYS: dict[str, bool] = {"stop": True}
_ASKED: list[str] = []


@batched
def _stopping(texts: list[str]) -> list[str]:
    """Fails on a batch holding the bad side, and stops the run (KeyboardInterrupt) when asked for it alone."""
    _ASKED.extend(texts)
    if _SAYS["stop"] and texts == [BAD]:
        raise KeyboardInterrupt
    if _SAYS["stop"] and BAD in texts:
        raise ValueError("the batch holds a side the model fails on")
    return [f"re: {text}" for text in texts]


def test_a_batched_function_stopping_the_run_midway_keeps_what_its_halves_answered(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    _SAYS["stop"] = True
    _ASKED.clear()
    with pytest.raises(ResponderAborted, match=f"{N_BEFORE} answers of this run are kept in "):
        fairtalk.respond(_pairs(), model=_stopping, store=store, batch_size=20)
    assert _stored(store) == (N_BEFORE, 0)
    _SAYS["stop"] = False
    _ASKED.clear()
    generation = fairtalk.respond(_pairs(), model=_stopping, store=store, batch_size=20)
    assert len(_ASKED) == 20 - N_BEFORE and generation.summary.n_cached == N_BEFORE
    assert generation.responses.n_pairs == N_PAIRS


class _Halves(Responder):
    """Answers ``re: TEXT``; a batch holding ``bad`` fails, and ``bad`` asked alone is a Ctrl-C."""

    @property
    def fingerprint(self) -> str:
        return "test:halves"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        if list(contexts) == ["bad"]:
            raise KeyboardInterrupt
        if "bad" in contexts:
            raise ResponderError("a bad item in the batch")
        return [f"re: {c}" for c in contexts]


class _Wrapper(Responder):
    """Another model over :class:`_Halves`: it rewrites the inner model's answers (they are not its own)."""

    def __init__(self) -> None:
        self.inner = _Halves()

    @property
    def fingerprint(self) -> str:
        return "test:wrapper"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        return [f"wrapped {answer}" for answer in self.inner.respond_each(contexts, settings, seeds=seeds)]


def test_what_a_stopped_call_answered_is_its_own_and_never_an_inner_models() -> None:
    contexts, seeds, settings = ["a", "b", "c", "bad"], [1, 2, 3, 4], DecodingSettings()
    answered: dict[int, object] = {}
    with pytest.raises(KeyboardInterrupt):
        respond_each_checked(_Halves(), contexts, settings, seeds=seeds, answered=answered)  # type: ignore[arg-type]
    assert answered == {0: "re: a", 1: "re: b", 2: "re: c"}  # [a, b] and [c] answered, then [bad] alone
    outer: dict[int, object] = {}
    with pytest.raises(KeyboardInterrupt):
        respond_each_checked(_Wrapper(), contexts, settings, seeds=seeds, answered=outer)  # type: ignore[arg-type]
    assert outer == {}  # the inner model's answers are not the wrapper's: asked again, never stored as its own


class _Stub(BaseHTTPRequestHandler):
    """Answers ``re: TEXT`` at once; holds the request for ``hold`` and interrupts the test's main thread (Ctrl-C
    while it is out); refuses the one for ``refuse`` (HTTP 400: a failure not retried)."""

    state: dict

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the preflight's model list
        send_json(self, 200, {"data": [{"id": "stub"}]})

    def do_POST(self) -> None:  # noqa: N802
        st = self.state
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        with st["lock"]:
            st["asked"].append(text)
        if text == st["hold"]:
            _thread.interrupt_main()  # Ctrl-C while this request is out
            st["release"].wait(30)
        elif text == st["refuse"]:
            send_json(self, 400, {"error": "refused"})
        else:
            send_json(self, 200, {"choices": [{"message": {"content": f"re: {text}"}, "finish_reason": "stop"}]})


@pytest.fixture()
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, dict]]:
    """A stub server (its own port) answering one request at a time, in the order of the pair sides.

    The answers cross from the requests' thread to the caller only when the stream ends (``HAND_OVER``
    raised from 10 ms): whatever stops the run finds them all on their way, not yet handed on.
    """
    monkeypatch.setattr(streaming, "HAND_OVER", 60.0)
    state = {"lock": threading.Lock(), "asked": [], "hold": None, "refuse": None, "release": threading.Event()}
    try:
        with LocalServer(type("Handler", (_Stub,), {"state": state})) as server:
            yield f"openai:{server.url()}#stub?timeout=60&max_concurrency=1", state
    finally:
        state["release"].set()


def test_ctrl_c_keeps_the_openai_answers_back_but_not_yet_handed_on_and_the_rerun_sends_only_the_missing_request(
    stub: tuple[str, dict], tmp_path: Path
) -> None:
    model, state = stub
    store = tmp_path / "store.sqlite"
    state["hold"] = "she said 9"  # the last side: every other one has come back when it is asked
    with pytest.raises(KeyboardInterrupt):
        fairtalk.respond(_pairs(), model=model, store=store)
    assert len(state["asked"]) == 20 and _stored(store) == (19, 0)  # main: none (and no store file)
    state.update(asked=[], hold=None)
    generation = fairtalk.respond(_pairs(), model=model, store=store)
    assert state["asked"] == ["she said 9"] and generation.summary.n_cached == 19


def test_a_run_stopped_by_its_error_budget_keeps_the_openai_answers_already_back(stub: tuple[str, dict], tmp_path: Path) -> None:
    model, state = stub
    store = tmp_path / "store.sqlite"
    state["refuse"] = "she said 2"  # the sixth side: max_errors=0 stops the run there, the 14 after it back too
    with pytest.raises(ResponderError, match="max_errors=0"):
        fairtalk.respond(_pairs(), model=model, store=store, max_errors=0)
    assert len(state["asked"]) == 20 and _stored(store) == (19, 1)  # main: (5, 1)
    state.update(asked=[], refuse=None)
    generation = fairtalk.respond(_pairs(), model=model, store=store)
    assert state["asked"] == ["she said 2"] and generation.summary.n_cached == 19  # the failure is asked again


_ASYNC_ASKED: list[str] = []
_ASYNC_STOPS = {"she said 9": True}


async def _async_reply(text: str) -> str:
    """An async ``python:`` model: answers at once, but presses Ctrl-C (and then waits) for the last side."""
    _ASYNC_ASKED.append(text)
    if _ASYNC_STOPS.get(text):
        _thread.interrupt_main()  # Ctrl-C while this side is out
        await asyncio.sleep(30)
    return f"re: {text}"


def test_ctrl_c_keeps_a_python_async_models_answers_back_but_not_yet_handed_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(streaming, "HAND_OVER", 60.0)  # every answer is still on its way when the run stops
    _ASYNC_ASKED.clear()
    store = tmp_path / "store.sqlite"
    with pytest.raises(KeyboardInterrupt):
        fairtalk.respond(_pairs(), model=_async_reply, store=store)
    assert len(_ASYNC_ASKED) == 20 and _stored(store) == (19, 0)  # before the fix: none, and no store file
    monkeypatch.setattr(streaming, "HAND_OVER", 0.01)
    monkeypatch.setitem(_ASYNC_STOPS, "she said 9", False)
    _ASYNC_ASKED.clear()
    generation = fairtalk.respond(_pairs(), model=_async_reply, store=store)
    assert generation.summary.n_cached == 19 and _ASYNC_ASKED == ["she said 9"]
