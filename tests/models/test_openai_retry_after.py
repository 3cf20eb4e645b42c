"""Review finding: how long the ``openai:`` adapter waits before it sends a rate-limited (429) request again.

``Retry-After: 0``, ``nan`` or a date past made the retry go at once (2,510 requests in 15 s to a
rate-limiting server), and a ``Retry-After`` longer than ``max_backoff`` was cut to it without a
word. Now a retry waits at least its backoff, and the server's wait when that is longer, up to the
longer of ``max_backoff`` and ``retry_seconds`` (cut with a warning naming the server's wait).

The stub server answers 429 with the ``Retry-After`` its state holds to the first requests of each
context, then answers; it counts the requests. The adapter's sleep is recorded, not slept: no test
here waits, and none times anything.
"""

from __future__ import annotations

import asyncio
import json
import threading
import types
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from fairtalk.models import DecodingSettings, load_responder
from fairtalk.models.openai import _responder
from local_server import LocalServer, send_chat_answer

GREEDY = DecodingSettings(max_new_tokens=8)
#: Both given: no latency preflight; backoff 0.2 s (0.1 s at least, with the jitter), doubling to 1 s.
FIXED = {"timeout": 5, "max_concurrency": 2, "backoff": 0.2, "max_backoff": 1.0}


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.n_limited = 3  # the first requests of each context that get a 429
        self.retry_after: str | None = "0"


class _RateLimiting(BaseHTTPRequestHandler):
    state: _State

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        with self.state.lock:
            self.state.calls[text] += 1
            limited = self.state.calls[text] <= self.state.n_limited
        if not limited:
            send_chat_answer(self, f"re: {text}")
            return
        body = b'{"error": "rate limited"}'
        self.send_response(429)
        if self.state.retry_after is not None:
            self.send_header("Retry-After", self.state.retry_after)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def server() -> Iterator[tuple[str, _State]]:
    state = _State()
    with LocalServer(type("Handler", (_RateLimiting,), {"state": state})) as local:
        yield local.url(), state


@pytest.fixture()
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The seconds the adapter asks to sleep before each retry (it sleeps none of them)."""
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        asked.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(_responder, "asyncio", types.SimpleNamespace(sleep=sleep))
    return asked


def _answers(url: str, contexts: list[str], **options: object) -> list[object]:
    with load_responder(f"openai:{url}#stub", **{**FIXED, **options}) as model:
        return list(model.respond_each(contexts, GREEDY, seeds=[0] * len(contexts)))


@pytest.mark.parametrize("header", ["0", "0.0", "nan", "inf", "-3", "Wed, 21 Oct 2015 07:28:00 GMT", None])
def test_a_retry_after_of_nothing_still_waits_the_backoff(server, waits: list[float], header: str | None) -> None:  # noqa: ANN001
    url, state = server
    state.retry_after = header
    assert _answers(url, ["a", "b"]) == ["re: a", "re: b"]
    assert state.calls == {"a": 4, "b": 4}  # three 429s each, then the answer: every item retried, none lost
    assert len(waits) == 6 and min(waits) >= 0.1, waits  # backoff 0.2 s times a jitter of 0.5 at least, never 0


def test_a_retry_after_longer_than_max_backoff_is_waited(server, waits: list[float]) -> None:  # noqa: ANN001
    url, state = server
    state.retry_after, state.n_limited = "120", 1
    assert _answers(url, ["a"], retry_seconds=300) == ["re: a"]
    assert waits == [120.0] and state.calls == {"a": 2}  # the server's wait, not max_backoff's 1 s


def test_a_retry_after_past_the_longest_wait_is_cut_with_a_warning(
    server,  # noqa: ANN001
    waits: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    url, state = server
    state.retry_after, state.n_limited = "120", 1
    with caplog.at_level("WARNING", logger="fairtalk.models.openai._responder"):
        assert _answers(url, ["a", "b"]) == ["re: a", "re: b"]  # the default retry_seconds: 60 s
    assert waits == [60.0, 60.0]  # the longer of max_backoff (1 s) and retry_seconds (60 s)
    said = [r.getMessage() for r in caplog.records if "Retry-After" in r.getMessage()]
    assert len(said) == 1, said  # once a run, not once per retry
    assert "asks to wait 120 s" in said[0] and "waits 60 s at most" in said[0] and "raise retry_seconds" in said[0]


def test_a_short_retry_after_is_waited_when_longer_than_the_backoff(server, waits: list[float]) -> None:  # noqa: ANN001
    url, state = server
    state.retry_after, state.n_limited = "0.75", 2
    assert _answers(url, ["a"]) == ["re: a"]
    assert waits == [0.75, 0.75]  # above the backoff's 0.3 s at most (0.2 s times 1.5), below max_backoff
