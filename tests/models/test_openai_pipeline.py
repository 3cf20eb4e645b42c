"""The openai: adapter's continuous pipeline (issue 15): requests always in flight, answers stored as they arrive, replicas."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import fairtalk
from fairtalk import DecodingSettings
from fairtalk.models import load_responder
from fairtalk.models._streaming import Endpoints


class _Server(BaseHTTPRequestHandler):
    """Answers after ``delay`` seconds (``slow_delay`` for a context holding "slow"); counts requests in flight."""

    state: dict

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._send(200, {"data": [{"id": "stub"}]})

    def do_POST(self) -> None:  # noqa: N802
        state = self.state
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = payload["messages"][-1]["content"]
        with state["lock"]:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            state["n"] += 1
        try:
            if state.get("fail"):
                self._send(500, {"error": "down"})
                return
            time.sleep(state["slow_delay"] if "slow" in text else state["delay"])
            self._send(200, {"choices": [{"message": {"content": f"re: {text}"}, "finish_reason": "stop"}]})
        finally:
            with state["lock"]:
                state["now"] -= 1

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _start(**state: object) -> tuple[str, dict, ThreadingHTTPServer]:
    full = {"lock": threading.Lock(), "now": 0, "most": 0, "n": 0, "delay": 0.02, "slow_delay": 0.02, **state}
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
    return [fairtalk.Pair(f"p{i}", "gender", a=f"he said {'slow' if i == slow else i}", b=f"she said {i}",
                          original_side="a") for i in range(n)]  # fmt: skip


def test_requests_stay_in_flight_beyond_the_batch_size(servers) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.05))
    url, state, _ = servers[0]
    generation = fairtalk.respond(_pairs(40), model=f"openai:{url}#stub?max_concurrency=8", batch_size=2)
    assert generation.responses.n_pairs == 40
    assert generation.summary.max_in_flight == 8 and generation.summary.max_concurrency == 8
    assert state["most"] > 2  # batches of 2 would never have had more than 2 in flight (the server may accept more slowly)
    assert generation.summary.to_dict()["max_in_flight"] == 8


def test_answers_are_stored_as_they_arrive_while_a_slow_one_is_in_flight(servers, tmp_path) -> None:  # noqa: ANN001
    servers.append(_start(delay=0.01, slow_delay=3.0))
    url, _, _ = servers[0]
    store = tmp_path / "store.sqlite"
    done = threading.Event()
    thread = threading.Thread(target=lambda: (fairtalk.respond(_pairs(30, slow=0), model=f"openai:{url}#stub?max_concurrency=4",
                                                               store=str(store), batch_size=64), done.set()))  # fmt: skip
    thread.start()
    time.sleep(1.5)
    assert not done.is_set()  # the slow answer is still in flight
    with sqlite3.connect(store) as db:
        n_stored = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    assert n_stored == 59  # every other answer is already committed
    thread.join(timeout=10)
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
    with pytest.raises(fairtalk.TransportError, match="127.0.0.1:9"):
        fairtalk.models.preflight(two)


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
