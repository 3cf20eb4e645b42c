"""Review findings: an ``openai:`` server that refuses some prompts for good, and what the breaker says of a 500 or a 401.

The stub server's behaviour is the first segment of its URL's path (``/MODE/v1``): ``refuse_she``
answers 400 to every context with "she" (a content policy refusing one group) and answers the
rest; ``500`` answers 500; ``401chat`` lists its models (the preflight passes) but answers 401 to
each request. Each test owns its server (a free port of 127.0.0.1) and its store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

import fairtalk
from fairtalk.errors import ResponderAborted
from local_server import LocalServer

#: Both given: the preflight measures no latency; no retry waits.
FIXED = "timeout=5&max_concurrency=1&backoff=0&max_retries=0"


class _Modes(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the preflight's model list
        self._send(200, {"data": [{"id": "stub"}]})

    def do_POST(self) -> None:  # noqa: N802
        mode = self.path.strip("/").split("/")[0]
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        if mode == "500":
            self._send(500, {"error": {"message": "boom"}})
        elif mode == "401chat":
            self._send(401, {"error": {"message": "invalid key"}})
        elif mode == "refuse_she" and "she" in text:
            self._send(400, {"error": {"message": "content policy"}})
        else:
            self._send(200, {"choices": [{"message": {"content": f"re: {text}"}, "finish_reason": "stop"}]})

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture()
def server() -> Iterator[LocalServer]:
    with LocalServer(_Modes) as local:
        yield local


def _pairs(n: int) -> list[fairtalk.Pair]:
    return [fairtalk.Pair(f"p{i}", "gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(n)]


def test_a_rerun_against_a_server_that_refuses_one_group_for_good_is_not_stopped(server: LocalServer, tmp_path: Path) -> None:
    model, store = f"openai:{server.url('/refuse_she/v1')}#stub?{FIXED}", tmp_path / "store.sqlite"
    first = fairtalk.respond(_pairs(8), model=model, store=store)  # an answer, a refusal, an answer, ...
    assert (first.summary.n_generated, first.summary.n_errors) == (8, 8)
    again = fairtalk.respond(_pairs(8), model=model, store=store)  # only the 8 refusals are asked again, in a row
    assert (again.summary.n_cached, again.summary.n_generated, again.summary.n_errors) == (8, 0, 8)


def test_the_breaker_says_a_500_is_a_server_error(server: LocalServer, tmp_path: Path) -> None:
    with pytest.raises(ResponderAborted) as info:
        fairtalk.respond(_pairs(4), model=f"openai:{server.url('/500/v1')}#stub?{FIXED}", store=tmp_path / "s.sqlite")
    message = str(info.value)
    assert "5 consecutive failures of one kind (server error, or the connection failed or timed out: TransportError)" in message
    assert "HTTP 500 after 1 attempt(s)" in message


def test_a_401_on_the_requests_says_to_check_the_api_key(
    server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ResponderAborted) as info:
        fairtalk.respond(_pairs(4), model=f"openai:{server.url('/401chat/v1')}#stub?{FIXED}", store=tmp_path / "s.sqlite")
    message = str(info.value)
    assert "5 consecutive failures of one kind (request refused or answer unusable: BadResponse)" in message
    assert "HTTP 401 after 1 attempt(s)" in message
    assert "the server refused the request: check the API key (none was sent: set $OPENAI_API_KEY" in message
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with pytest.raises(ResponderAborted, match=r"check the API key \(the key in \$OPENAI_API_KEY was sent\)"):
        fairtalk.respond(_pairs(4), model=f"openai:{server.url('/401chat/v1')}#stub?{FIXED}", store=tmp_path / "t.sqlite")


class _RefusingInTheField(BaseHTTPRequestHandler):
    """Declines every context with "she" the way OpenAI's models do: ``"content": null`` and a ``"refusal"`` text."""

    asked: list[str]

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        self.asked.append(text)
        if "she" in text:
            message = {"role": "assistant", "content": None, "refusal": "I'm sorry, but I can't help with that."}
        else:
            message = {"role": "assistant", "content": f"re: {text}", "refusal": None}
        body = json.dumps({"model": "stub", "choices": [{"message": message, "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_refusal_with_null_content_is_the_answer_not_a_broken_reply(tmp_path: Path) -> None:
    """Review finding: ``"content": null`` with ``"refusal"`` was retried 3 times as unusable and stopped the run."""
    asked: list[str] = []
    with LocalServer(type("Handler", (_RefusingInTheField,), {"asked": asked})) as local:
        model = f"openai:{local.url()}#stub?timeout=5&max_concurrency=1&backoff=0"
        generation = fairtalk.respond(_pairs(8), model=model, store=tmp_path / "store.sqlite")
    assert generation.summary.n_errors == 0 and generation.responses.n_pairs == 8
    assert len(asked) == 16  # one request per side: a refusal is not retried
    answers = {(r.pair_id, r.side): r.response for pair in generation.responses for r in pair}
    assert answers[("p3", "b")] == "I'm sorry, but I can't help with that." and answers[("p3", "a")] == "re: he said 3"
    scored = fairtalk.score(generation.responses, axis="gender", measures=["refusal"])
    refusals = scored.measure("refusal_rate")
    assert (refusals.a, refusals.b) == (0.0, 1.0)  # every refusal counted, on the side the server declined
