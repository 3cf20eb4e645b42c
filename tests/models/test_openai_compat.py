"""Tests for models/openai/_responder.py against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
import types
from collections import defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from fairtalk import ResponderError, SpecError
from fairtalk.errors import BadResponse, RateLimited, TransportError
from fairtalk.models import DecodingSettings, load_responder
from fairtalk.models.openai import _responder
from fairtalk.models.openai._latency import is_probe
from local_server import LocalServer, RefusedPort

SECRET = "sk-test-SECRET-0123456789abcdef"
GREEDY = DecodingSettings(max_new_tokens=16)


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.plans: dict[str, list[str]] = {}
        self.calls: dict[str, int] = defaultdict(int)
        self.in_flight = 0
        self.max_in_flight = 0
        self.auth: list[str | None] = []
        self.payloads: list[dict] = []
        self.delay = 0.0
        self.retry_after = "0"
        self.default = "ok"  # the action of a request without a plan ("badjson": a replica answering garbage)


class _Handler(BaseHTTPRequestHandler):
    state: _State

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self) -> None:  # noqa: N802
        st = self.state
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = payload["messages"][-1]["content"] if "messages" in payload else payload["prompt"]
        if is_probe(content):  # the preflight's latency probe (tests/models/test_openai_latency.py): not counted
            self._send(
                200, json.dumps({"choices": [{"message": {"content": "1, 2"}, "text": "1, 2", "finish_reason": "length"}]})
            )
            return
        with st.lock:
            st.in_flight += 1
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
            st.auth.append(self.headers.get("Authorization"))
            st.payloads.append(payload)
            st.calls[content] += 1
            plan = st.plans.get(content, [])
            action = plan.pop(0) if plan else st.default
        time.sleep(st.delay)
        if action == "slow":
            time.sleep(1.0)
        status, body, headers = self._reply(action, content)
        with st.lock:  # closed before the reply is written: the client may send its next request once it reads it
            st.in_flight -= 1
        self._send(status, body, headers)

    def _reply(self, action: str, content: str) -> tuple[int, str, dict[str, str] | None]:
        if self.path not in ("/v1/chat/completions", "/v1/completions"):
            return 404, '{"error": "not found"}', None
        if self.path == "/v1/completions" and action == "ok":
            return 200, json.dumps({"choices": [{"text": f" and then {content}"}]}), None
        replies: dict[str, tuple[int, str, dict[str, str] | None]] = {
            "500": (500, '{"error": "boom"}', None),
            "429": (429, '{"error": "slow down"}', {"Retry-After": self.state.retry_after}),
            "slow": (200, json.dumps({"choices": [{"message": {"content": "late"}}]}), None),
            "badjson": (200, "{not json", None),
            "nochoices": (200, '{"choices": []}', None),
            "401": (401, json.dumps({"error": f"bad key {self.headers.get('Authorization')}"}), None),
        }
        if action in replies:
            return replies[action]
        reply = {"choices": [{"message": {"role": "assistant", "content": f" echo: {content} "}}]}
        return 200, json.dumps(reply), None


@pytest.fixture()
def server() -> Iterator[tuple[str, _State]]:
    state = _State()
    handler = type("Handler", (_Handler,), {"state": state})
    with LocalServer(handler) as local:
        yield local.url(), state


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRTALK_TEST_KEY", SECRET)


def _model(url: str, **options: object):
    options = {"api_key_env": "FAIRTALK_TEST_KEY", "backoff": 0.01, "max_backoff": 0.05, **options}
    return load_responder(f"openai:{url}#tiny-model", **options)


def test_responses_in_order_with_bearer_key_and_payload(server) -> None:
    url, st = server
    with _model(url) as model:
        contexts = [f"hello {i}" for i in range(10)]
        out = model.respond(contexts, GREEDY, seeds=list(range(10)))
    assert out == [f"echo: hello {i}" for i in range(10)]
    assert st.auth == [f"Bearer {SECRET}"] * 10
    p = next(p for p in st.payloads if p["messages"][0]["content"] == "hello 3")
    assert p["model"] == "tiny-model" and p["seed"] == 3 and p["temperature"] == 0.0 and p["max_tokens"] == 16
    sampled = DecodingSettings(do_sample=True, temperature=0.7, top_p=0.9, top_k=5)
    with _model(url) as model:
        model.respond(["s"], sampled, seeds=[42])
    assert st.payloads[-1]["temperature"] == 0.7 and st.payloads[-1]["top_p"] == 0.9 and st.payloads[-1]["top_k"] == 5


def test_retries_recover_from_500_429_and_timeouts(server) -> None:
    url, st = server
    st.plans = {"a": ["500", "500"], "b": ["429", "429"], "c": ["slow"]}
    with _model(url, timeout=0.3) as model:
        out = model.respond(["a", "b", "c", "d"], GREEDY, seeds=[0] * 4)
    assert out == ["echo: a", "echo: b", "echo: c", "echo: d"]
    assert st.calls["a"] == 3 and st.calls["b"] == 3 and st.calls["c"] == 2


def test_retry_after_is_respected(server, monkeypatch: pytest.MonkeyPatch) -> None:
    url, st = server
    st.plans = {"x": ["429"]}
    st.retry_after = "1"
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # recorded, not slept (tests/models/test_openai_retry_after.py)
        waits.append(seconds)

    monkeypatch.setattr(_responder, "asyncio", types.SimpleNamespace(sleep=sleep))
    with _model(url, max_backoff=5) as model:
        assert model.respond(["x"], GREEDY, seeds=[0]) == ["echo: x"]
    assert waits == [1.0] and st.calls["x"] == 2


def test_exhausted_retries_fail_per_item(server) -> None:
    url, st = server
    st.plans = {"bad500": ["500"] * 9, "bad429": ["429"] * 9, "badjson": ["badjson"] * 9, "empty": ["nochoices"] * 9}
    with _model(url, max_retries=2, retry_seconds=0) as model:  # 0: a 429 is counted too, not retried for a while
        out = model.respond_each(["ok1", "bad500", "bad429", "badjson", "empty", "ok2"], GREEDY, seeds=[0] * 6)
        assert out[0] == "echo: ok1" and out[5] == "echo: ok2"
        assert isinstance(out[1], TransportError) and "HTTP 500 after 3 attempt(s)" in str(out[1])
        assert isinstance(out[2], RateLimited) and "HTTP 429" in str(out[2])
        assert isinstance(out[3], BadResponse) and "not valid JSON after 3 attempt(s)" in str(out[3])
        assert isinstance(out[4], BadResponse) and "no choices" in str(out[4])
        assert st.calls["bad500"] == 3 and st.calls["badjson"] == 3  # a malformed 200 is retried too (issue 24)
        with pytest.raises(TransportError):
            st.plans["bad500"] = ["500"] * 9
            model.respond(["bad500"], GREEDY, seeds=[0])


def test_connection_refused_is_a_transport_error() -> None:
    with (
        RefusedPort() as refused,
        _model(refused.url(), max_retries=1, retry_seconds=0) as model,  # counted, not retried by time
    ):
        (out,) = model.respond_each(["x"], GREEDY, seeds=[0])
    assert isinstance(out, TransportError) and "after 2 attempt(s)" in str(out)


def test_concurrency_limit_is_respected(server) -> None:
    url, st = server
    st.delay = 0.05
    with _model(url, max_concurrency=3) as model:
        out = model.respond([f"c{i}" for i in range(12)], GREEDY, seeds=[0] * 12)
    assert len(out) == 12
    assert st.max_in_flight == 3


def test_api_key_never_leaks(server) -> None:
    url, st = server
    st.plans = {"k": ["401"], "j": ["badjson"]}
    with _model(url, max_retries=0) as model:
        out = model.respond_each(["k", "j"], GREEDY, seeds=[0, 0])
        texts = [str(e) for e in out] + [repr(e) for e in out] + [repr(model), model.fingerprint]
    assert isinstance(out[0], BadResponse) and "HTTP 401" in str(out[0]) and "***" in str(out[0])
    assert st.auth[0] == f"Bearer {SECRET}"  # the server did get (and echo) the key
    for text in texts:
        assert SECRET not in text
    # credentials in the URL (basic auth) stay out of the fingerprint, repr and errors too
    st.plans = {"k": ["401"]}
    secret_url = url.replace("http://", "http://user:hunter2@")
    with _model(secret_url, max_retries=0) as model:
        (err,) = model.respond_each(["k"], GREEDY, seeds=[0])
        texts = [str(err), repr(err), repr(model), model.fingerprint]
    assert isinstance(err, BadResponse)
    for text in texts:
        assert "hunter2" not in text and "dXNlcjpodW50ZXIy" not in text


def test_fingerprint_and_spec_errors(server, monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = server
    a = _model(url).fingerprint
    monkeypatch.setenv("FAIRTALK_TEST_KEY", "another-key")
    assert _model(url, max_concurrency=2).fingerprint == a == f"openai:{url}#tiny-model"
    assert _model(url, system_prompt="be nice").fingerprint != a
    with pytest.raises(SpecError, match="malformed openai spec"):
        load_responder(f"openai:{url}")
    with pytest.raises(SpecError, match="unknown option"):
        _model(url, colour="red")
    with pytest.raises(SpecError, match="num_beams"):
        _model(url).respond(["x"], DecodingSettings(num_beams=2), seeds=[0])


def test_works_inside_a_running_event_loop(server) -> None:
    import asyncio

    url, _ = server

    async def main() -> list[str]:
        with _model(url) as model:
            return model.respond(["in loop"], GREEDY, seeds=[0])

    assert asyncio.run(main()) == ["echo: in loop"]


def test_errors_are_responder_errors(server) -> None:
    url, st = server
    st.plans = {"z": ["500"] * 5}
    with _model(url, max_retries=0) as model:
        (err,) = model.respond_each(["z"], GREEDY, seeds=[0])
    assert isinstance(err, ResponderError)


def test_spec_options_are_parsed_and_honoured(server, monkeypatch: pytest.MonkeyPatch) -> None:
    url, st = server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-should-not-be-sent")
    monkeypatch.setenv("MY_VAR", "sk-from-my-var")
    st.delay = 0.05
    spec = f"openai:{url}#tiny-model?api_key_env=MY_VAR&max_concurrency=2&max_retries=0&timeout=5"
    with load_responder(spec) as model:
        assert model.respond([f"q{i}" for i in range(6)], GREEDY, seeds=[0] * 6) == [f"echo: q{i}" for i in range(6)]
    assert {p["model"] for p in st.payloads} == {"tiny-model"}  # not "tiny-model?api_key_env=..."
    assert set(st.auth) == {"Bearer sk-from-my-var"}
    assert st.max_in_flight == 2
    st.plans = {"fail": ["500"] * 5}
    with load_responder(spec) as model:
        (err,) = model.respond_each(["fail"], GREEDY, seeds=[0])
    assert isinstance(err, TransportError) and st.calls["fail"] == 1  # max_retries=0 from the spec


def test_spec_timeout_and_model_args(server) -> None:
    url, st = server
    st.plans = {"c": ["slow", "slow", "slow"]}
    with load_responder(f"openai:{url}#tiny-model?timeout=0.2", max_retries="1", backoff="0") as model:
        (err,) = model.respond_each(["c"], GREEDY, seeds=[0])
    assert isinstance(err, TransportError) and "Timeout" in str(err) and st.calls["c"] == 2


def test_spec_option_errors(server, monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = server
    monkeypatch.delenv("UNSET_VAR_XYZ", raising=False)
    with pytest.raises(
        SpecError, match=r"unknown option 'timout' for openai:.*did you mean 'timeout'.*choose from: api_key_env, backoff"
    ):
        load_responder(f"openai:{url}#m?timout=3")
    with pytest.raises(SpecError, match=r"option max_concurrency='many' for openai:.* is not an integer"):
        load_responder(f"openai:{url}#m?max_concurrency=many")
    with pytest.raises(SpecError, match=r"max_concurrency must be >= 1, got 0"):
        load_responder(f"openai:{url}#m", max_concurrency="0")
    with pytest.raises(SpecError, match="api_key_env=UNSET_VAR_XYZ names an environment variable that is not set"):
        load_responder(f"openai:{url}#m?api_key_env=UNSET_VAR_XYZ")
    with pytest.raises(SpecError, match="given both in the model spec and as a model argument"):
        load_responder(f"openai:{url}#m?timeout=3", timeout="4")
    with pytest.raises(SpecError, match="is given twice"):
        load_responder(f"openai:{url}#m?timeout=3&timeout=4")
    secret = url.replace("http://", "http://user:hunter2@")
    with pytest.raises(SpecError) as info:
        load_responder(f"openai:{secret}#m?colour=red")
    assert "hunter2" not in str(info.value)


def test_completion_mode_continues_the_prefix_at_the_completions_endpoint(server) -> None:  # noqa: ANN001
    url, state = server
    with _model(url, mode="completion") as model:
        out = model.respond(["The man worked as"], DecodingSettings(max_new_tokens=5), seeds=[0])
        fingerprint = model.fingerprint
    assert out == ["and then The man worked as"]
    payload = state.payloads[-1]
    assert payload["prompt"] == "The man worked as" and "messages" not in payload
    assert '"mode":"completion"' in fingerprint.replace(" ", "")
    with _model(url) as chat:
        assert chat.fingerprint.endswith("#tiny-model")  # chat stays the default and keeps its old fingerprint


def test_prompts_generate_uses_completion_mode_by_default(server, tmp_path) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    from fairtalk.cli import app
    from fairtalk.prompts import build_prompts, write_prompts

    url, state = server
    prompts = write_prompts(build_prompts(("man", "woman"))[:4], tmp_path / "p.jsonl")
    base = [
        "prompts",
        "generate",
        "--model",
        f"openai:{url}#m",
        "--model-arg",
        "api_key_env=FAIRTALK_TEST_KEY",
        "--prompts",
        str(prompts),
        "--seeds",
        "1",
        "--quiet",
    ]
    done = CliRunner().invoke(app, [*base, "-o", str(tmp_path / "c.jsonl")])
    assert done.exit_code == 0, done.output
    assert all("prompt" in p and "messages" not in p for p in state.payloads)
    chat = CliRunner().invoke(app, [*base, "--mode", "chat", "-o", str(tmp_path / "chat.jsonl")])
    assert chat.exit_code == 0, chat.output
    assert "messages" in state.payloads[-1]


def test_base_url_spec_form_is_the_same_model(server) -> None:  # noqa: ANN001
    url, st = server
    pasted = f"openai:tiny-model?base_url={url}&api_key_env=FAIRTALK_TEST_KEY"
    with load_responder(pasted) as model:
        assert model.respond(["hi"], GREEDY, seeds=[0]) == ["echo: hi"]
        assert model.fingerprint == _model(url).fingerprint == f"openai:{url}#tiny-model"  # one store key for both forms
    assert st.payloads[-1]["model"] == "tiny-model" and st.auth[-1] == f"Bearer {SECRET}"
    with load_responder("openai:tiny-model", base_url=url) as model:  # as --model-arg base_url=URL
        assert model.respond(["yo"], GREEDY, seeds=[0]) == ["echo: yo"]
    with load_responder(f"openai:llama3.2:1b?base_url={url}") as model:  # a model name with a colon
        model.respond(["x"], GREEDY, seeds=[0])
    assert st.payloads[-1]["model"] == "llama3.2:1b"
    with pytest.raises(SpecError, match="give the server URL once"):
        load_responder(f"openai:{url}#tiny-model?base_url={url}")
    with pytest.raises(SpecError, match=r"malformed openai spec 'openai:tiny-model' .*openai:MODEL\?base_url=URL"):
        load_responder("openai:tiny-model")


def test_a_pasted_base_url_spec_runs_end_to_end(server) -> None:  # noqa: ANN001
    import fairtalk
    from fairtalk import Pair

    url, _ = server
    pairs = [Pair(f"p{i}", "gender", f"he is here {i}", f"she is here {i}", "a") for i in range(5)]
    generation = fairtalk.respond(pairs, model=f"openai:tiny-model?base_url={url}&backoff=0")
    assert generation.summary.n_generated == 10 and generation.summary.model == f"openai:{url}#tiny-model"
    responses = generation.responses
    assert (responses.a[0].response, responses.b[0].response) == ("echo: he is here 0", "echo: she is here 0")
