"""Issue 38 item 16: an ``openai:`` server that restarts loses no item, and a run the breaker stops keeps what it counted.

The stub server answers until its ``n_before``-th chat request, then cannot take requests (it
closes each connection without an answer, or answers 503) for ``down_for`` seconds, or for good
(None); then it answers again. Each test owns its server (a free port of 127.0.0.1) and its store.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

import fairtalk
from fairtalk.errors import ResponderAborted, TransportError
from fairtalk.models import DecodingSettings, load_responder
from fairtalk.models._streaming import Outage
from fairtalk.progress import ProgressEvent
from local_server import LocalServer, RefusedPort, send_json

#: Both given: the preflight measures no latency, so every POST is one of the run's requests.
FIXED = "timeout=5&max_concurrency=4"


class _Restarting(BaseHTTPRequestHandler):
    """Answers ``re: TEXT``, but cannot take requests from the ``n_before``-th on, for ``down_for`` s (None: for good)."""

    state: dict

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the preflight's model list
        send_json(self, 200, {"data": [{"id": "stub"}]})

    def do_POST(self) -> None:  # noqa: N802
        st = self.state
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        with st["lock"]:
            st["n"] += 1
            if st["n"] == st["n_before"]:
                st["down_since"] = time.monotonic()  # the restart begins
            since, down_for = st["down_since"], st["down_for"]
            down = since is not None and (down_for is None or time.monotonic() - since < down_for)
            st["refused"] += down
        if not down:
            send_json(self, 200, {"choices": [{"message": {"content": f"re: {text}"}, "finish_reason": "stop"}]})
        elif st["how"] == "503":
            send_json(self, 503, {"error": "restarting"})
        else:  # a proxy that restarts: the connection is closed without an answer
            self.close_connection = True


@pytest.fixture()
def restarting() -> Iterator[tuple[str, dict]]:
    state = {
        "lock": threading.Lock(),
        "n": 0,
        "n_before": 10**9,
        "down_for": None,
        "down_since": None,
        "refused": 0,
        "how": "close",
    }
    with LocalServer(type("Handler", (_Restarting,), {"state": state})) as server:
        yield server.url(), state


def _pairs(n: int) -> list[fairtalk.Pair]:
    return [fairtalk.Pair(f"p{i}", "gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(n)]


def _stored(store: Path) -> tuple[int, int]:
    """Answers and failures in the store (0, 0 before it exists); read-only, so that it never creates the file."""
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            n_ok, n_failed = db.execute("SELECT COUNT(response), COUNT(error) FROM responses").fetchone()
    except sqlite3.OperationalError:  # not there yet
        return 0, 0
    return int(n_ok), int(n_failed)


class _NowAndThen429(_Restarting):
    """Answers ``re: TEXT``, but every fourth chat request gets a 429 (Retry-After: 0)."""

    def do_POST(self) -> None:  # noqa: N802
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        with self.state["lock"]:
            self.state["n"] += 1
            limited = self.state["n"] % 4 == 0
            self.state["refused"] += limited
        if limited:
            self.send_response(429)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            send_json(self, 200, {"choices": [{"message": {"content": f"re: {text}"}, "finish_reason": "stop"}]})


def test_a_server_rate_limiting_now_and_then_is_warned_of_once_and_its_retries_are_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Review finding: each answer ended the outage, so the warning came once per 429 (20 times), and the summary said 0 retries."""
    state = {"lock": threading.Lock(), "n": 0, "refused": 0}
    with LocalServer(type("Handler", (_NowAndThen429,), {"state": state})) as server:
        model = f"openai:{server.url()}#stub?{FIXED}&backoff=0.01&max_backoff=0.05"
        with caplog.at_level("WARNING", logger="fairtalk.models.openai._responder"):
            generation = fairtalk.respond(_pairs(20), model=model, store=tmp_path / "store.sqlite")
    assert state["refused"] >= 5 and generation.summary.n_errors == 0  # many outages, each ended by an answer
    said = [r.getMessage() for r in caplog.records if "cannot take requests" in r.getMessage()]
    assert len(said) == 1 and "(HTTP 429)" in said[0] and "said once a run" in said[0], said
    assert generation.summary.n_retries_waited == state["refused"] and generation.summary.n_retries == 0


@pytest.mark.parametrize("how", ["close", "503"])
def test_a_server_that_restarts_for_a_second_and_a_half_loses_no_item(restarting, tmp_path: Path, how: str) -> None:  # noqa: ANN001
    url, state = restarting
    state.update(n_before=7, down_for=1.5, how=how)  # six answers, then 1.5 s of a restart: more than a count of retries spans
    model = f"openai:{url}#stub?{FIXED}&backoff=0.05&max_backoff=0.2"  # the default retry_seconds (60 s)
    generation = fairtalk.respond(_pairs(20), model=model, store=tmp_path / "store.sqlite")
    assert state["refused"] > 0  # the server did go away
    assert generation.summary.n_errors == 0 and generation.responses.n_pairs == 20  # and every item was answered
    assert generation.summary.n_retries == 0  # none of the retries of the restart was drawn on the retry budget
    assert _stored(tmp_path / "store.sqlite") == (40, 0)


def test_a_server_that_restarts_is_retried_from_a_bare_responder_too(restarting) -> None:  # noqa: ANN001
    url, state = restarting
    state.update(n_before=3, down_for=1.0, how="close")
    with load_responder(f"openai:{url}#stub?{FIXED}&backoff=0.05&max_backoff=0.2&retry_budget=0") as responder:
        out = responder.respond([f"c{i}" for i in range(12)], DecodingSettings(), seeds=[0] * 12)
        assert out == [f"re: c{i}" for i in range(12)]  # no retry budget at all, yet nothing failed
        assert responder.outage.n_retries > 0 and responder.retries.n_used == 0


def test_a_run_stopped_by_the_breaker_keeps_every_answer_it_counted_as_done(restarting, tmp_path: Path) -> None:  # noqa: ANN001
    url, state = restarting
    state.update(n_before=8)  # seven answers, then down for good
    store = tmp_path / "store.sqlite"
    model = f"openai:{url}#stub?{FIXED}&backoff=0.01&max_backoff=0.05&retry_seconds=0.3&retry_budget=0"
    counted_unstored: list[tuple[int, int]] = []
    last_done = [0]

    def check(event: ProgressEvent) -> None:  # at every step of the progress line: is what it counts as done stored?
        if event.stage == "responses":
            last_done[0] = event.done
            if sum(_stored(store)) < event.done:
                counted_unstored.append((event.done, sum(_stored(store))))

    with pytest.raises(ResponderAborted) as info:
        fairtalk.respond(_pairs(20), model=model, store=store, progress=check)
    message = str(info.value)
    assert "5 consecutive failures of one kind (server error, or the connection failed or timed out: TransportError)" in message
    assert "past retry_seconds=0.3" in message and "retry_budget=0" in message
    assert f"7 answers of this run are kept in {store}; re-run to resume" in message
    assert "the 5 pair side(s) that failed are stored as failures, sent again by a re-run" in message
    assert counted_unstored == []  # never an item counted as done before it was stored
    assert _stored(store) == (7, 5) and last_done[0] <= 12
    state["down_since"] = None  # the server is back
    state["n_before"] = 10**9
    resumed = fairtalk.respond(_pairs(20), model=model, store=store)
    assert (resumed.summary.n_cached, resumed.summary.n_generated, resumed.summary.n_errors) == (7, 33, 0)


def test_a_server_down_for_good_is_retried_for_retry_seconds_then_counted() -> None:
    outage = Outage(0.5)
    assert outage.since is None and not outage.allows(first=0.0, now=0.0)  # nothing failed: no outage to wait out
    assert outage.failed(now=10.0) == 10.0 and outage.failed(now=11.0) == 10.0  # the outage began at the first failure
    assert outage.allows(first=10.0, now=10.4) and not outage.allows(first=10.0, now=10.6)  # the item's own window
    assert not outage.allows(first=10.45, now=10.55)  # a new item, but the server has been down for longer
    assert outage.n_retries == 1
    assert outage.answered() and not outage.answered()  # an answer ends the outage (once)
    with pytest.raises(
        fairtalk.SpecError, match=r"retry_seconds must be a finite number of seconds >= 0 \(0: count every retry\)"
    ):
        load_responder("openai:http://127.0.0.1:9/v1#stub?retry_seconds=-1")
    with pytest.raises(
        fairtalk.SpecError, match=r"retry_seconds must be a finite number of seconds >= 0 \(0: count every retry\)"
    ):
        load_responder("openai:http://127.0.0.1:9/v1#stub?retry_seconds=inf")


def test_retry_seconds_zero_counts_a_refused_connection_like_any_failure() -> None:
    with (
        RefusedPort() as refused,
        load_responder(f"openai:{refused.url()}#stub?backoff=0&retry_seconds=0&retry_budget=2") as responder,
    ):
        out = responder.respond_each(["a", "b", "c"], DecodingSettings(), seeds=[0] * 3)
    assert all(isinstance(item, TransportError) for item in out)
    assert responder.retries.n_used == 2 and responder.outage.n_retries == 0
    assert any("past retry_seconds=0, and the retry budget of this call (retry_budget=2) is spent" in str(e) for e in out)
