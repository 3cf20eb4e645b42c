"""Replicas of one openai: deployment (issue 24): a replica down at the start is skipped, garbage answers are retried.

Each test starts its own stub servers on free 127.0.0.1 ports (the stub of
``test_openai_compat.py``) and a "down" replica on a port that was bound and closed again
(connection refused), and shuts them down at the end.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk import ResponderError, SpecError
from fairtalk.cli import app
from fairtalk.errors import BadResponse, TransportError
from fairtalk.models import DecodingSettings, load_responder
from local_server import LocalServer, RefusedPort

from .test_openai_compat import _Handler, _State

GREEDY = DecodingSettings(max_new_tokens=16)
Start = Callable[..., tuple[str, _State]]


@pytest.fixture()
def start() -> Iterator[Start]:
    """Start a stub server (``default``: what it answers to every request, e.g. "badjson"); all are shut down after."""
    started: list[ThreadingHTTPServer] = []

    def run(default: str = "ok", serves: str | None = None) -> tuple[str, _State]:
        state = _State()
        state.default = default
        handler = type("Handler", (_Handler,), {"state": state})
        if serves is not None:  # GET /models lists this one model
            handler.do_GET = lambda self: self._send(200, json.dumps({"data": [{"id": serves}]}))  # type: ignore[attr-defined]
        server = LocalServer(handler)
        started.append(server)
        return server.url(), state

    yield run
    for server in started:
        server.close()


@pytest.fixture()
def down() -> Iterator[Callable[[], str]]:
    """Make URLs of replicas that are down: ports held bound and not listening until the test ends (refused)."""
    held: list[RefusedPort] = []

    def make() -> str:
        held.append(RefusedPort())
        return held[-1].url()

    yield make
    for port in held:
        port.close()


def _pairs(n: int) -> list[fairtalk.Pair]:
    return [fairtalk.Pair(f"p{i}", "gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(n)]


def _respond(tmp_path, spec: str) -> object:  # noqa: ANN001
    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(_pairs(12), pairs)
    args = ["respond", "--pairs", str(pairs), "-o", str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "s.sqlite")]
    return CliRunner().invoke(app, [*args, "--model", spec])


def test_a_replica_down_at_the_start_is_skipped_and_reported_and_the_healthy_one_answers_every_item(
    start, down, tmp_path, caplog
) -> None:  # noqa: ANN001
    url = down()
    healthy, state = start()
    done = _respond(tmp_path, f"openai:{url},{healthy}#tiny-model?backoff=0&max_concurrency=4")
    assert done.exit_code == 0, done.output
    assert sum(state.calls.values()) == 24 and all(n == 1 for n in state.calls.values())  # every item, once
    assert fairtalk.read_responses(tmp_path / "r.jsonl").n_pairs == 12
    stderr = " ".join(done.stderr.split())
    assert "warning:" in stderr and url in stderr and "cannot reach the server" in stderr  # the skipped replica
    assert "24 generated, 0 from the store, 0 failed" in stderr
    # the library says the same: a logged warning, and the skipped replicas with their reasons on the model
    model = load_responder(f"openai:{url},{healthy}#tiny-model")
    with caplog.at_level(logging.WARNING, logger="fairtalk"):
        model.preflight()
    assert list(model.skipped_replicas) == [url] and "cannot reach the server" in model.skipped_replicas[url]
    assert any(url in r.getMessage() and "1 of 2 replicas" in r.getMessage() for r in caplog.records)
    with model:
        assert model.respond(["x"], GREEDY, seeds=[0]) == ["echo: x"]


def test_every_replica_down_is_exit_2_naming_each_reason(down, tmp_path) -> None:  # noqa: ANN001
    first, second = down(), down()
    done = _respond(tmp_path, f"openai:{first},{second}#tiny-model")
    assert done.exit_code == 2, done.output
    stderr = " ".join(done.stderr.split())
    assert stderr.startswith("error: ") and "Traceback" not in done.output
    assert f"{first}: cannot reach the server" in stderr and f"{second}: cannot reach the server" in stderr
    with pytest.raises(TransportError, match="none of the 2 replicas") as info:
        load_responder(f"openai:{first},{second}#tiny-model").preflight()
    assert first in str(info.value) and second in str(info.value)
    with pytest.raises(TransportError, match=r"^http://127\.0\.0\.1:\d+/v1: cannot reach the server"):  # one: as before
        load_responder(f"openai:{first}#tiny-model").preflight()


def test_garbage_answers_are_retried_on_the_healthy_replica_and_every_item_succeeds(start) -> None:  # noqa: ANN001
    garbage, bad = start("badjson")
    healthy, good = start()
    contexts = [f"q{i}" for i in range(24)]
    with load_responder(f"openai:{garbage},{healthy}#tiny-model?backoff=0&max_concurrency=8") as model:
        model.preflight()  # the garbage replica answers the preflight (it does not list models): it is not skipped
        out = model.respond_each(contexts, GREEDY, seeds=[0] * 24)
    assert out == [f"echo: {c}" for c in contexts]
    assert sum(bad.calls.values()) >= 1  # the garbage replica was asked, and its answers were retried elsewhere
    assert set(good.calls) == set(contexts)


def test_a_reply_without_choices_is_retried_on_the_healthy_replica(start) -> None:  # noqa: ANN001
    empty, _ = start("nochoices")
    healthy, _ = start()
    with load_responder(f"openai:{empty},{healthy}#tiny-model?backoff=0&max_concurrency=4") as model:
        out = model.respond_each([f"q{i}" for i in range(12)], GREEDY, seeds=[0] * 12)
    assert out == [f"echo: q{i}" for i in range(12)]


def test_a_malformed_answer_of_a_single_server_is_retried_within_the_budget(start) -> None:  # noqa: ANN001
    url, state = start()
    state.plans = {"once": ["badjson"], "always": ["badjson"] * 9, "empty": ["nochoices"] * 9}
    with load_responder(f"openai:{url}#tiny-model?backoff=0&max_retries=2") as model:
        out = model.respond_each(["once", "always", "empty"], GREEDY, seeds=[0] * 3)
    assert out[0] == "echo: once" and state.calls["once"] == 2
    assert isinstance(out[1], BadResponse) and "not valid JSON after 3 attempt(s)" in str(out[1])
    assert isinstance(out[2], BadResponse) and "no choices" in str(out[2]) and "after 3 attempt(s)" in str(out[2])
    assert state.calls["always"] == 3
    state.plans = {"spent": ["badjson"] * 9}
    with load_responder(f"openai:{url}#tiny-model?backoff=0&max_retries=5&retry_budget=1") as model:
        (err,) = model.respond_each(["spent"], GREEDY, seeds=[0])
    assert isinstance(err, BadResponse) and "not valid JSON" in str(err) and "retry budget" in str(err)
    assert state.calls["spent"] == 2  # one retry, then the budget is spent


def test_a_replica_serving_another_model_is_skipped_and_one_refusing_every_way_fails(start, down) -> None:  # noqa: ANN001
    other, _ = start(serves="another-model")
    healthy, state = start(serves="tiny-model")
    model = load_responder(f"openai:{other},{healthy}#tiny-model?backoff=0")
    model.preflight()
    assert "does not serve a model named 'tiny-model'" in model.skipped_replicas[other]
    with model:
        assert model.respond(["x", "y"], GREEDY, seeds=[0, 0]) == ["echo: x", "echo: y"]
    assert sum(state.calls.values()) == 2
    with pytest.raises(SpecError, match="none of the 2 replicas can be used: .*another-model"):
        load_responder(f"openai:{other},{other}#tiny-model").preflight()
    with pytest.raises(ResponderError, match="none of the 2 replicas") as info:  # a mix of kinds: their common base
        load_responder(f"openai:{other},{down()}#tiny-model").preflight()
    assert not isinstance(info.value, TransportError) and "cannot reach the server" in str(info.value)
