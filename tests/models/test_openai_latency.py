"""Tests for models/openai/_latency.py: the ``openai:`` preflight measures a slow server and adapts to it.

The stub server answers one request at a time (a lock), as ``transformers serve`` on a CPU does,
each after ``delay`` seconds; the default timeout is forced tiny, so that the defaults would fail.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.errors import TransportError
from fairtalk.models import DecodingSettings, load_responder
from fairtalk.models.openai import _responder as openai_compat
from fairtalk.models.openai._latency import Latency, is_probe, tune
from local_server import LocalServer

SETTINGS = DecodingSettings(max_new_tokens=16)


class _Serial(BaseHTTPRequestHandler):
    """One request at a time; a probe takes ``delay`` seconds, any other request ``answer_delay`` (default: the same)."""

    state: dict

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        st = self.state
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = payload["messages"][-1]["content"]
        delay = st["delay"] if is_probe(content) else st.get("answer_delay", st["delay"])
        with st["lock"]:  # the server answers one request at a time
            st["contents"].append(content)
            time.sleep(delay)
        tokens = payload["max_tokens"]
        body = json.dumps(
            {
                "choices": [{"message": {"content": f"echo: {content}"}, "finish_reason": "length"}],
                "usage": {"completion_tokens": tokens},
            }
        ).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timed out)
            pass


@pytest.fixture()
def serial() -> Iterator[tuple[str, dict]]:
    state: dict = {"lock": threading.Lock(), "contents": [], "delay": 0.2}
    handler = type("Handler", (_Serial,), {"state": state})
    with LocalServer(handler) as server:
        yield server.url(), state


@pytest.fixture()
def tiny_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """A default timeout the serialising server cannot meet with 8 requests in flight (like 30 s on a CPU server)."""
    monkeypatch.setattr(openai_compat, "DEFAULT_TIMEOUT", 0.3)


def _pairs(n: int) -> list[fairtalk.Pair]:
    return [fairtalk.Pair(f"p{i}", "gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(n)]


def test_a_serialising_server_gets_fewer_requests_in_flight_and_a_longer_timeout_and_no_failure(
    serial, tiny_default, caplog
) -> None:  # noqa: ANN001
    url, state = serial
    spec = f"openai:{url}#tiny-model?backoff=0"
    fingerprint = load_responder(spec).fingerprint
    with caplog.at_level(logging.INFO, logger="fairtalk"):
        generation = fairtalk.respond(_pairs(6), model=spec, settings=SETTINGS)
    assert generation.summary.n_errors == 0 and generation.responses.n_pairs == 6
    assert generation.summary.max_concurrency == 2  # one answering, one waiting: not 8
    assert generation.summary.model == fingerprint  # measured values never reach the store's key
    recorded = generation.summary.to_dict()["tuning"]  # run.json keeps what was measured and chosen, per axis
    assert recorded["max_concurrency"] == 2 and recorded["timeout"] > 0.3 and recorded["measured"]["parallel"] == 1
    assert sum(map(is_probe, state["contents"])) == 5  # two alone (the first may load the model), three at once
    said = " ".join(r.getMessage() for r in caplog.records)
    assert re.search(
        r"answers a 16-token request in 0\.2\d s alone, 3 at once in 0\.[5-9]\d s "
        r"\(it runs about 1 at a time\); for answers of up to 16 tokens: timeout 1\.\d s, "
        r"max_concurrency 2 \(timeout measured, max_concurrency measured\)",
        said,
    ), said


def test_what_was_measured_and_chosen_is_recorded_and_the_fingerprint_is_the_same(serial, tiny_default) -> None:  # noqa: ANN001
    url, _ = serial
    with load_responder(f"openai:{url}#tiny-model?backoff=0") as model:
        before = model.fingerprint
        model.preflight()
        assert model.respond(["hi"], SETTINGS, seeds=[0]) == ["echo: hi"]
        assert model.fingerprint == before
        record = dict(model.tuning)
    assert (
        record["max_new_tokens"] == 16 and record["max_concurrency"] == 2 and record["chosen"] == ["timeout", "max_concurrency"]
    )
    assert record["timeout"] == model.timeout > 0.3
    assert record["measured"]["n_tokens"] == 16 and record["measured"]["parallel"] == 1
    json.dumps(record)  # JSON-ready


def test_an_explicit_timeout_is_kept_with_a_warning_naming_the_option_to_raise(serial, tiny_default, caplog) -> None:  # noqa: ANN001
    url, state = serial
    with load_responder(f"openai:{url}#tiny-model?backoff=0&timeout=0.25") as model:
        with caplog.at_level(logging.INFO, logger="fairtalk"):
            model.preflight()
            model.respond(["hi"], SETTINGS, seeds=[0])
        assert model.timeout == 0.25 and model.max_concurrency == 2 and model.tuning["chosen"] == ["max_concurrency"]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("requests will likely time out" in m and "timeout=0.25 s: raise timeout=" in m for m in warned), warned
    state["contents"].clear()
    with load_responder(f"openai:{url}#tiny-model?timeout=0.25&max_concurrency=8") as model:  # both set: no probe
        model.preflight()
        assert model.timeout == 0.25 and model.max_concurrency == 8 and model.latency is None
    assert not any(map(is_probe, state["contents"]))


def test_a_fast_server_costs_two_probes_and_keeps_the_defaults(serial) -> None:  # noqa: ANN001
    url, state = serial
    state["delay"] = 0.0
    with load_responder(f"openai:{url}#tiny-model") as model:
        model.preflight()
        model.respond(["hi"], SETTINGS, seeds=[0])
        assert sum(map(is_probe, state["contents"])) == 2  # no need to send any at once
        assert model.timeout == 30 and model.max_concurrency == 8 and model.latency.parallel is None


def test_a_server_too_slow_even_for_the_measured_timeout_stops_with_exit_2_saying_what_to_raise(
    serial, tiny_default, tmp_path
) -> None:  # noqa: ANN001
    url, state = serial
    state["delay"], state["answer_delay"] = 0.05, 1.0  # the probes are quick, real answers 20 times slower
    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(_pairs(20), pairs)
    started = time.monotonic()
    done = CliRunner().invoke(
        app,
        [
            "respond",
            "--pairs",
            str(pairs),
            "-o",
            str(tmp_path / "r.jsonl"),
            "--store",
            str(tmp_path / "s.sqlite"),
            "--max-new-tokens",
            "16",
            "--model",
            f"openai:{url}#tiny-model?backoff=0&max_retries=1",
        ],
    )
    assert done.exit_code == 2, done.output
    assert time.monotonic() - started < 30  # the circuit breaker stops it: no Ctrl-C
    stderr = " ".join(done.stderr.split())
    assert "stopped after 5 consecutive failures of one kind" in stderr and "Timeout" in stderr
    # each item was sent twice, the retry waiting twice as long: the message names both waits
    found = re.search(
        r"its 2 tries that timed out waited (0\.\d+), (0\.\d+) s \(timeout=(0\.\d+) s, doubled on each retry\): "
        r"raise timeout= \(measured latency 0\.0\d s an answer alone\) or lower max_concurrency",
        stderr,
    )
    assert found, stderr
    first, second, timeout = (float(found[i]) for i in (1, 2, 3))
    assert first == timeout and second == 2 * timeout


def test_a_spent_retry_budget_on_timeouts_says_which_option_to_raise(serial, caplog) -> None:  # noqa: ANN001
    url, state = serial
    state["delay"] = 0.4
    with load_responder(f"openai:{url}#tiny-model?backoff=0&timeout=0.1&max_retries=3&retry_budget=1") as model:
        with caplog.at_level(logging.WARNING, logger="fairtalk"):
            out = model.respond_each(["a", "b", "c"], SETTINGS, seeds=[0, 0, 0])
    assert all(isinstance(item, TransportError) for item in out)
    spent = [str(item) for item in out if "retry budget" in str(item)]
    assert spent and all("raise timeout= or lower max_concurrency" in m for m in spent), spent
    # the one item retried (retry_budget=1) waited 0.1 s, then 0.2 s: its message says both, not "time out after 0.1 s"
    retried = [m for m in spent if "after 2 attempt(s)" in m]
    assert (
        len(retried) == 1 and "its 2 tries that timed out waited 0.1, 0.2 s (timeout=0.1 s, doubled on each retry)" in retried[0]
    )
    assert all("requests time out after 0.1 s" in m for m in spent if "after 1 attempt(s)" in m)
    assert any("retry budget" in r.getMessage() and "raise timeout=" in r.getMessage() for r in caplog.records)


def test_tune_lowers_the_concurrency_only_when_requests_would_queue_past_the_timeout() -> None:
    fast_serial = Latency(seconds=0.01, n_tokens=16, seconds_at_once=0.03)
    kept = tune(
        fast_serial,
        max_new_tokens=64,
        timeout=None,
        max_concurrency=None,
        n_replicas=1,
        default_timeout=30,
        default_concurrency=8,
    )
    assert (kept.max_concurrency, kept.timeout) == (8, 30)  # a fast server: the defaults stand, even if it serialises
    parallel = Latency(seconds=2.0, n_tokens=16, seconds_at_once=2.2)
    wide = tune(
        parallel, max_new_tokens=256, timeout=None, max_concurrency=None, n_replicas=2, default_timeout=30, default_concurrency=8
    )
    assert wide.max_concurrency == 8 and wide.timeout == 3 * 32 * 2  # 32 s an answer, 4 a replica of which 3 at once
    serial = Latency(seconds=2.0, n_tokens=16, seconds_at_once=6.1)
    two = tune(
        serial, max_new_tokens=256, timeout=None, max_concurrency=None, n_replicas=2, default_timeout=30, default_concurrency=8
    )
    assert two.max_concurrency == 4 and two.timeout == 3 * 32 * 2  # two a replica: one answering, one waiting


class _Caching(BaseHTTPRequestHandler):
    """A caching gateway before a slow server: a request seen before is answered at once, any other after ``delay`` s."""

    state: dict

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        st = self.state
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        key = json.dumps(payload, sort_keys=True)  # what a gateway caches by: the request, whatever its key order
        with st["lock"]:
            hit = key in st["seen"]
            st["seen"].add(key)
            if is_probe(payload["messages"][-1]["content"]):
                st["probes"].append(key)
                st["probe_hits"] += hit
        if not hit:
            time.sleep(st["delay"])  # the server behind the gateway works for it
        body = json.dumps(
            {"choices": [{"message": {"content": "1, 2, 3"}, "finish_reason": "length"}], "usage": {"completion_tokens": 16}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_caching_gateway_answers_no_probe_so_the_latency_measured_is_the_servers() -> None:
    state: dict = {"lock": threading.Lock(), "seen": set(), "probes": [], "probe_hits": 0, "delay": 0.2}
    with LocalServer(type("Handler", (_Caching,), {"state": state})) as server:
        for _ in range(2):  # two runs, the second after the first's probes went through the gateway
            with load_responder(f"openai:{server.url()}#tiny-model") as model:
                model.preflight()
                assert model.latency is not None
                assert model.latency.seconds >= state["delay"]  # the server's time, never a cached answer's
    assert len(state["probes"]) >= 4 and state["probe_hits"] == 0  # every probe was new to the gateway
    assert len(set(state["probes"])) == len(state["probes"])
