"""The openai: adapter's continuous pipeline (issue 15): requests always in flight, answers stored as they arrive, replicas."""

from __future__ import annotations

import asyncio
import json
import logging
import select
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk import DecodingSettings
from fairtalk.cli import app
from fairtalk.errors import TransportError
from fairtalk.models import Responder, load_responder
from fairtalk.models._streaming import Endpoints, RetryBudget, stream_results
from fairtalk.models.openai._latency import is_probe
from fairtalk.progress import ProgressReporter
from fairtalk.results import GenerationSummary
from fairtalk.run._generate import cached_model, generate
from fairtalk.store import CachingResponder, RunStore


class _Server(BaseHTTPRequestHandler):
    """Answers after ``delay`` seconds (``slow_delay`` for "slow"; 400 at once for "bad"; "hold": ``hold`` s or a hang-up).

    A text with "flaky" gets a 500 the first time it comes, and an answer after. Counts requests
    in flight, the ``stream`` flag of each payload, and the held requests whose client hung up
    before the answer (``dropped``).
    """

    state: dict

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._send(200, {"data": [{"id": "stub"}]})

    def do_POST(self) -> None:  # noqa: N802
        state = self.state
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = payload["messages"][-1]["content"]
        if is_probe(text):  # the preflight's latency probe (issue 25): not one of the run's requests
            self._send(200, {"choices": [{"message": {"content": "1, 2"}, "finish_reason": "length"}]})
            return
        with state["lock"]:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            state["n"] += 1
            state["streams"].append(payload.get("stream", "absent"))
        try:
            with state["lock"]:
                first_time = text not in state["seen"]
                state["seen"].add(text)
            if state.get("fail") or ("flaky" in text and first_time):
                self._send(500, {"error": "down"})
                return
            if "bad" in text:
                self._send(400, {"error": "bad request"})
                return
            if "hold" in text and self._hung_up(state["hold"]):
                with state["lock"]:
                    state["dropped"] += 1
                return
            time.sleep(state["slow_delay"] if "slow" in text else state["delay"])
            self._send(200, {"choices": [{"message": {"content": f"re: {text}"}, "finish_reason": "stop"}]})
        finally:
            with state["lock"]:
                state["now"] -= 1

    def _hung_up(self, seconds: float) -> bool:
        """Wait up to ``seconds``; True as soon as the client closes the connection."""
        ready, _, _ = select.select([self.connection], [], [], seconds)
        try:
            return bool(ready) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except ConnectionResetError:
            return True

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _start(**state: object) -> tuple[str, dict, ThreadingHTTPServer]:
    full = {
        "lock": threading.Lock(),
        "now": 0,
        "most": 0,
        "n": 0,
        "delay": 0.02,
        "slow_delay": 0.02,
        "hold": 10.0,
        "dropped": 0,
        "streams": [],
        "seen": set(),
        **state,
    }
    server = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 64})  # no connection waits in the backlog
    httpd = server(("127.0.0.1", 0), type("Handler", (_Server,), {"state": full}))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/v1", full, httpd


@pytest.fixture()
def servers() -> Iterator[list]:
    started: list = []
    yield started
    for _, _, httpd in started:
        httpd.shutdown()
        httpd.server_close()


def _pairs(n: int, slow: int | None = None) -> list[fairtalk.Pair]:
    return [
        fairtalk.Pair(f"p{i}", "gender", a=f"he said {'slow' if i == slow else i}", b=f"she said {i}", original_side="a")
        for i in range(n)
    ]


def test_requests_stay_in_flight_beyond_the_batch_size(servers) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.05))
    url, state, _ = servers[0]
    generation = fairtalk.respond(_pairs(40), model=f"openai:{url}#stub?max_concurrency=8", batch_size=2)
    assert generation.responses.n_pairs == 40
    assert generation.summary.max_in_flight == 8 and generation.summary.max_concurrency == 8
    assert state["most"] > 2  # batches of 2 would never have had more than 2 in flight (the server may accept more slowly)
    assert generation.summary.to_dict()["max_in_flight"] == 8


def test_answers_are_stored_as_they_arrive_while_a_slow_one_is_in_flight(servers, tmp_path) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.01, slow_delay=5.0))
    url, _, _ = servers[0]
    store = tmp_path / "store.sqlite"
    done = threading.Event()
    thread = threading.Thread(
        target=lambda: (
            fairtalk.respond(_pairs(30, slow=0), model=f"openai:{url}#stub?max_concurrency=4", store=str(store), batch_size=64),
            done.set(),
        )
    )

    def n_stored() -> int:
        try:
            with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:  # read-only: never creates the file
                return int(db.execute("SELECT count(*) FROM responses").fetchone()[0])
        except sqlite3.OperationalError:  # not there yet
            return 0

    thread.start()
    assert _wait_for(lambda: n_stored() == 59, seconds=4.0)  # every other answer is already committed
    assert not done.is_set()  # while the slow answer is still in flight
    thread.join(timeout=15)
    assert done.is_set()


def test_replicas_share_the_load_and_a_failing_one_is_skipped(servers) -> None:  # noqa: ANN001
    for _ in range(2):
        servers.append(_start(delay=0.02))
    (url1, state1, _), (url2, state2, _) = servers
    generation = fairtalk.respond(_pairs(30), model=f"openai:{url1},{url2}#stub?max_concurrency=4&backoff=0")
    assert generation.responses.n_pairs == 30 and state1["n"] > 10 and state2["n"] > 10
    state2["fail"] = True  # the second replica now answers 500 to everything
    before = state2["n"]
    generation = fairtalk.respond(_pairs(30), model=f"openai:{url1},{url2}#stub?max_concurrency=4&backoff=0", seed=1)
    assert generation.summary.n_errors == 0 and generation.responses.n_pairs == 30  # retried on the healthy replica
    assert state2["n"] - before <= 8  # skipped after three failures in a row (per worker at most a few in flight)


def test_the_fingerprint_names_the_first_replica_and_preflight_checks_each(servers) -> None:  # noqa: ANN001
    servers.append(_start())
    url, _, _ = servers[0]
    one = load_responder(f"openai:{url}#stub")
    two = load_responder(f"openai:{url},http://127.0.0.1:9/v1#stub")
    assert one.fingerprint == two.fingerprint
    two.preflight()  # the replica that is down is skipped (issue 24), the run goes on with the other
    assert list(two.skipped_replicas) == ["http://127.0.0.1:9/v1"] and two.in_use == (0,)
    with pytest.raises(TransportError, match="127.0.0.1:9"):  # every replica checked: none answers
        load_responder("openai:http://127.0.0.1:9/v1,http://127.0.0.1:9/v2#stub").preflight()


def test_endpoints_prefer_the_least_busy_healthy_replica() -> None:
    endpoints = Endpoints(["a", "b", "c"], fail_limit=2, cooldown=60)
    assert [endpoints.acquire() for _ in range(3)] == [0, 1, 2]
    endpoints.release(1, ok=True)
    assert endpoints.acquire() == 1
    for _ in range(2):
        endpoints.release(2, ok=False)
        endpoints.outstanding[2] += 1
    assert 2 not in endpoints.healthy()


def test_respond_each_still_returns_every_item_in_order(servers) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.0))
    url, _, _ = servers[0]
    model = load_responder(f"openai:{url}#stub?max_concurrency=3")
    contexts = [f"c{i}" for i in range(25)]
    assert model.respond(contexts, DecodingSettings(), seeds=list(range(25))) == [f"re: c{i}" for i in range(25)]


def _held_pairs(n: int, first: str = "fast") -> list[fairtalk.Pair]:
    """Pairs whose sides the stub holds for ``hold`` seconds, but for the first side (``first``: "fast" or "bad")."""
    return [
        fairtalk.Pair(f"p{i}", "gender", a=f"{first} 0" if i == 0 else f"hold he {i}", b=f"hold she {i}", original_side="a")
        for i in range(n)
    ]


def _wait_for(condition, seconds: float = 3.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_payload_says_stream_false(servers) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.0))
    url, state, _ = servers[0]
    fairtalk.respond(_pairs(3), model=f"openai:{url}#stub")
    assert state["streams"] == [False] * 6


def test_a_retry_budget_caps_the_retries_of_the_whole_call(servers, caplog) -> None:  # noqa: ANN001
    servers.append(_start(fail=True))
    url, state, _ = servers[0]
    model = load_responder(f"openai:{url}#stub?max_concurrency=4&backoff=0&max_retries=5&retry_budget=4")
    with caplog.at_level(logging.WARNING, logger="fairtalk.models.openai._responder"):
        out = model.respond_each([f"c{i}" for i in range(30)], DecodingSettings(), seeds=[0] * 30)
    assert state["n"] == 30 + 4  # not 30 x 6: a failing server is not sent every item again and again
    assert all(isinstance(item, TransportError) for item in out)
    spent = [str(item) for item in out if "retry budget" in str(item)]
    assert len(spent) >= 26 and "HTTP 500" in spent[0]
    assert spent[0].endswith("not retried: the retry budget of this call (retry_budget=4) is spent")
    assert (model.retries.total, model.retries.n_used) == (4, 4)
    assert [r.getMessage() for r in caplog.records].count(
        "openai: the retry budget of this call (retry_budget=4) is spent; failures are no longer retried"
    ) == 1


def test_the_default_retry_budget_is_a_tenth_of_the_items_plus_20(servers) -> None:  # noqa: ANN001
    servers.append(_start(fail=True))
    url, state, _ = servers[0]
    generation = fairtalk.respond(
        _pairs(50), model=f"openai:{url}#stub?max_concurrency=8&backoff=0", max_consecutive_failures=0
    )  # every item fails: the budget, not the breaker, is tested
    assert generation.summary.n_errors == 100 and state["n"] == 100 + 100 // 10 + 20
    assert sum("retry budget of this call (retry_budget=30) is spent" in message for *_, message in generation.errors) >= 94
    with pytest.raises(fairtalk.SpecError, match="retry_budget must be >= 0"):
        load_responder(f"openai:{url}#stub?retry_budget=-1")
    budget = RetryBudget(0)
    assert not budget.take() and budget.spent and budget.n_refused == 1


def test_closing_the_stream_cancels_the_requests_in_flight(servers) -> None:  # noqa: ANN001
    servers.append(_start())
    url, state, _ = servers[0]
    model = load_responder(f"openai:{url}#stub?max_concurrency=4")
    stream = model.respond_stream([f"hold {i}" for i in range(40)], DecodingSettings(), seeds=[0] * 40)
    assert next(stream) is None  # nothing finished: every request is held
    assert _wait_for(lambda: state["now"] == 4)
    started = time.monotonic()
    stream.close()
    assert time.monotonic() - started < 1.0  # not the 10 s the server would hold them
    assert _wait_for(lambda: state["dropped"] == 4)  # the server saw each connection closed
    time.sleep(0.3)
    assert state["n"] == 4 and model.in_flight.now == 0  # and no further request was sent


def test_an_error_budget_spent_stops_the_run_promptly(servers) -> None:  # noqa: ANN001
    servers.append(_start())
    url, state, _ = servers[0]
    started = time.monotonic()
    with pytest.raises(fairtalk.ResponderError, match="max_errors=0"):
        fairtalk.respond(_held_pairs(20, first="bad"), model=f"openai:{url}#stub?max_concurrency=4", max_errors=0)
    assert time.monotonic() - started < 3.0  # not the 10 s the server holds each request
    time.sleep(0.5)  # a request sent before the cancel may reach a busy server late
    assert _wait_for(lambda: state["now"] == 0 and state["dropped"] == state["n"] - 1)  # every held one dropped
    assert state["n"] <= 5  # the first four, and at most the one sent when the failed item finished


def test_ctrl_c_cancels_the_requests_in_flight(servers) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.0))
    url, state, _ = servers[0]

    def interrupt(n_done: int) -> None:
        raise KeyboardInterrupt

    cached = CachingResponder(load_responder(f"openai:{url}#stub?max_concurrency=4"), RunStore(":memory:"), progress=interrupt)
    contexts = ["fast 0"] + [f"hold {i}" for i in range(1, 30)]
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        cached.respond_each(contexts, DecodingSettings(), seeds=[0] * 30)
    assert time.monotonic() - started < 3.0
    time.sleep(0.5)
    assert _wait_for(lambda: state["now"] == 0 and state["dropped"] == state["n"] - 1)
    assert state["n"] <= 5


def test_closing_the_stream_before_its_client_is_open_sends_nothing() -> None:
    started: list[int] = []

    async def setup() -> None:
        await asyncio.sleep(0.4)  # a client slow to open: the caller gives up first

    async def work(index: int) -> int:
        started.append(index)
        await asyncio.sleep(0.05)
        return index

    stream = stream_results(100, work, max_concurrency=2, setup=setup)
    assert next(stream) is None
    begun = time.monotonic()
    stream.close()
    assert time.monotonic() - begun < 1.0 and started == []


def _flaky_pairs(n: int, tag: str = "") -> list[fairtalk.Pair]:
    """Pairs whose side a fails once (HTTP 500) before it is answered; side b is answered at once."""
    return [fairtalk.Pair(f"p{i}", "gender", a=f"flaky{tag} he {i}", b=f"she {tag}{i}", original_side="a") for i in range(n)]


def _retries(summary: GenerationSummary) -> tuple[int | None, int | None, int | None]:
    return summary.retry_budget, summary.n_retries, summary.n_retries_refused


def test_the_summary_counts_the_retries_and_the_failures_refused_one(servers) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.0))
    url, state, _ = servers[0]
    generation = fairtalk.respond(_flaky_pairs(10), model=f"openai:{url}#stub?max_concurrency=4&backoff=0&retry_budget=3")
    assert _retries(generation.summary) == (3, 3, 7)  # 10 first tries failed: 3 retried (and answered), 7 refused
    assert generation.summary.n_errors == 7 and generation.summary.n_generated == 13 and state["n"] == 20 + 3
    assert {k: generation.summary.to_dict()[k] for k in ("retry_budget", "n_retries", "n_retries_refused")} == {
        "retry_budget": 3,
        "n_retries": 3,
        "n_retries_refused": 7,
    }
    generation = fairtalk.respond(_flaky_pairs(10, "x"), model=f"openai:{url}#stub?max_concurrency=4&backoff=0")
    assert _retries(generation.summary) == (20 // 10 + 20, 10, 0) and generation.summary.n_errors == 0
    local = fairtalk.respond(_flaky_pairs(2), model="builtin:echo")
    assert _retries(local.summary) == (None, None, None) and local.summary.to_dict()["n_retries"] is None


class _PerBatch(Responder):
    """The openai: adapter called once per batch (CachingResponder's path for a model that does not stream)."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner, self.retry_counts, self.n_calls = inner, inner.retry_counts, 0

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    @property
    def retries(self) -> RetryBudget:  # the adapter's last call
        return self.inner.retries

    def respond_each(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        self.n_calls += 1
        return self.inner.respond_each(contexts, settings, seeds=seeds)

    def respond(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        return self.inner.respond(contexts, settings, seeds=seeds)


def test_the_retries_of_every_call_of_a_run_are_summed_not_the_last_calls_only(servers) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.0))
    url, _, _ = servers[0]
    model = _PerBatch(load_responder(f"openai:{url}#stub?max_concurrency=4&backoff=0&retry_budget=1"))
    generation = fairtalk.respond(_flaky_pairs(10), model=model, batch_size=4)
    assert model.n_calls == 5  # 20 pair sides, 4 a call; each call has 2 flaky sides and a budget of 1 retry
    assert (model.inner.retries.total, model.inner.retries.n_used, model.inner.retries.n_refused) == (1, 1, 1)  # the last call
    assert _retries(generation.summary) == (5, 5, 5) and generation.summary.n_errors == 5


def test_each_run_on_one_model_counts_its_own_retries(servers) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.0))
    url, _, _ = servers[0]
    with cached_model(f"openai:{url}#stub?max_concurrency=4&backoff=0", None, batch_size=64, max_errors=None) as cached:
        settings, progress = DecodingSettings(), ProgressReporter(None)
        first = generate(cached, _flaky_pairs(5), settings, seed=0, progress=progress)  # an audit's first axis
        second = generate(cached, _flaky_pairs(3, "y"), settings, seed=0, progress=progress)  # and its second
        again = generate(cached, _flaky_pairs(3, "y"), settings, seed=0, progress=progress)  # all from the store
    assert _retries(first.summary) == (10 // 10 + 20, 5, 0)
    assert _retries(second.summary) == (6 // 10 + 20, 3, 0)  # not the model's lifetime (41, 8, 0)
    assert _retries(again.summary) == (0, 0, 0) and again.summary.n_cached == 6


def test_the_respond_command_prints_the_retries_next_to_the_requests_in_flight(servers, tmp_path) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.0))
    url, _, _ = servers[0]
    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(_flaky_pairs(10), pairs)
    runner = CliRunner()
    args = ["respond", "--pairs", str(pairs), "-o", str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "s.sqlite")]
    done = runner.invoke(app, [*args, "--model", f"openai:{url}#stub?max_concurrency=4&backoff=0&retry_budget=3"])
    assert done.exit_code == 0, done.output
    line = " ".join(done.stderr.split())
    assert (
        "13 generated, 0 from the store, 7 failed (7 pairs left out; failures are retried on the next run); up to 4 of "
        "max_concurrency 4 requests in flight; 3 of 3 retries used, 7 failure(s) not retried (retry budget spent)"
    ) in line
    done = runner.invoke(app, [*args, "--model", f"openai:{url}#stub?max_concurrency=4&backoff=0&retry_budget=3"])
    line = " ".join(done.stderr.split())
    assert (
        "7 generated, 13 from the store, 0 failed; up to 4 of max_concurrency 4 requests in flight; 0 of 3 retries used" in line
    )
    assert "not retried" not in line  # the 7 failed sides were sent again, and the server answered them at once
    done = runner.invoke(app, [*args, "--model", f"openai:{url}#stub?max_concurrency=4"])
    line = " ".join(done.stderr.split())
    assert "0 generated, 20 from the store, 0 failed" in line and "retries" not in line and "in flight" not in line
