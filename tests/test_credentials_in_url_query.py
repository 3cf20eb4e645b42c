"""Review finding: a key in the query of a server URL (``?api-key=...``) reached run.json, and the requests went astray.

Only a URL's ``user:password@`` was masked. A server that takes its key in the query
(``openai:m?base_url=http://host/v1?api-key=KEY``, or ``--model-arg base_url=...``) had the key
written as given to run.json, and ``openai:URL?api-key=KEY#MODEL`` echoed it in its error. The
path was also appended after the query (``/v1?api-key=KEY/chat/completions``), so the server got
the key mangled. Now the key reaches the server on every request, in the query, and no output
(files, stdout, stderr, error messages) holds it: the value is masked (``api-key=***``), the
parameter's name and the rest of the URL are kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.config import AuditConfig
from fairtalk.errors import BadResponse
from fairtalk.models import DecodingSettings, hide_credentials, load_responder
from local_server import LocalServer, RefusedPort, send_chat_answer, send_json

SECRET = "QKEYzz81"
runner = CliRunner()


class _Chat(BaseHTTPRequestHandler):
    """Answers each chat request; records the path and query of every request; ``/bad`` echoes the URL in a 400."""

    seen: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.seen.append(self.path)
        send_json(self, 200, {"data": [{"id": "m"}]})

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append(self.path)
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        if self.path.startswith("/bad/"):
            send_json(self, 400, {"error": f"no such route: {self.path}"})
        else:
            send_chat_answer(self, f"well, {text[:30]}")


@pytest.fixture()
def server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Chat", (_Chat,), {"seen": seen})
    with LocalServer(handler) as local:
        yield local.url(), seen


def _outputs(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()]


def _assert_secret_sent(seen: list[str], name: str) -> None:
    assert seen, "no request reached the server"
    for path in seen:  # the path comes first, then the query with the key, unchanged
        parts = urlsplit(path)
        assert parts.path in ("/v1/models", "/v1/chat/completions"), path
        assert parse_qs(parts.query)[name] == [SECRET], path


@pytest.mark.parametrize("name", ["api-key", "api_key", "API-Key", "key", "token", "access_token", "Access_Token"])
def test_a_credential_in_the_query_of_a_server_url_is_recorded_masked(name: str) -> None:
    url = f"http://127.0.0.1:9/v1?model=x&{name}={SECRET}"
    by_arg = AuditConfig(model="openai:m", model_args={"base_url": url, "timeout": 5}).to_dict()
    assert by_arg["model_args"] == {"base_url": f"http://127.0.0.1:9/v1?model=x&{name}=***", "timeout": "5"}
    in_spec = AuditConfig(model=f"openai:m?base_url={url.replace('&', '%26')}&timeout=5").to_dict()
    assert SECRET not in json.dumps(in_spec) and f"%26{name}=***&timeout=5" in in_spec["model"]
    assert hide_credentials(f"openai:{url}#m") == f"openai:http://127.0.0.1:9/v1?model=x&{name}=***#m"
    judged = AuditConfig(score={"measures": f"length,judge:openai:m?base_url={url.replace('&', '%26')}"}).to_dict()
    assert judged["score"]["measures"] == ["length", f"judge:openai:m?base_url=http://127.0.0.1:9/v1?model=x%26{name}=***"]


def test_other_query_parameters_are_kept_as_written() -> None:
    url = "http://127.0.0.1:9/v1?monkey=1&tokens=5&keys=a&api-version=2024-06"
    assert hide_credentials(url) == url


@pytest.mark.parametrize(("form", "name"), [("spec", "api-key"), ("model-arg", "access_token")])
def test_no_output_of_an_audit_holds_the_key_in_the_server_url(
    server: tuple[str, list[str]], tmp_path: Path, form: str, name: str
) -> None:
    url, seen = server
    keyed = f"{url}?{name}={SECRET}"
    out, junit = tmp_path / "audit", tmp_path / "junit.xml"
    if form == "spec":
        model = [f"openai:m?base_url={keyed}&timeout=5&max_concurrency=2"]
    else:
        model = ["openai:m?timeout=5&max_concurrency=2", "--model-arg", f"base_url={keyed}"]
    measures = f"length,judge:openai:m?base_url={keyed}"  # a judge on the same server: its spec names the URL too
    args = ["audit", "-vv", "--corpus", "builtin:chitchat", "--axis", "gender", "--pairs", "8", "--measures", measures]
    done = runner.invoke(app, [*args, "--model", *model, "-o", str(out), "--junit", str(junit), "--json"])
    assert done.exit_code == 0, done.output
    _assert_secret_sent(seen, name)
    files = [junit, *_outputs(out)]
    assert {"run.json", "results.json", "report.md", "report.html", "index.html", "store.sqlite"} <= {p.name for p in files}
    for path in files:  # the store too, read as bytes
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in done.stdout and SECRET not in done.stderr
    config = json.loads((out / "run.json").read_text())["config"]
    recorded = config["model_args"]["base_url"] if form == "model-arg" else config["model"]
    assert f"{url}?{name}=***" in recorded  # the URL is kept, less the key's value


def _pairs(folder: Path) -> Path:
    pairs = folder / "pairs.jsonl"
    pair = {"id": "p1", "axis": "gender", "a": "he called", "b": "she called", "original_side": "a", "swaps": []}
    pairs.write_text(json.dumps(pair) + "\n")
    return pairs


def test_no_output_of_respond_holds_the_key_in_the_server_url(server: tuple[str, list[str]], tmp_path: Path) -> None:
    url, seen = server
    pairs, out = _pairs(tmp_path), tmp_path / "out"
    out.mkdir()
    model = ["--model", "openai:m", "--model-arg", f"base_url={url}?token={SECRET}"]
    done = runner.invoke(app, ["respond", "-vv", "--pairs", str(pairs), *model, "-o", str(out / "responses.jsonl")])
    assert done.exit_code == 0, done.output
    _assert_secret_sent(seen, "token")
    assert any(p.name == "responses.jsonl" for p in _outputs(out))
    for path in _outputs(out):
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in done.stdout and SECRET not in done.stderr


def test_a_key_in_the_query_before_hash_model_is_not_echoed_by_the_spec_error(tmp_path: Path) -> None:
    spec = f"openai:http://127.0.0.1:9/v1?api-key={SECRET}#m"
    done = runner.invoke(app, ["audit", "--corpus", "builtin:chitchat", "--model", spec, "-o", str(tmp_path / "a")])
    assert done.exit_code == 2, done.output
    assert "error: malformed options" in done.stderr and "api-key=***" in done.stderr and "base_url" in done.stderr
    assert SECRET not in done.stdout and SECRET not in done.stderr


def test_errors_of_a_server_url_with_a_key_in_its_query_never_hold_the_key(server: tuple[str, list[str]], tmp_path: Path) -> None:
    url, seen = server
    bad = url.replace("/v1", "/bad/v1")
    with load_responder("openai:m", base_url=f"{bad}?key={SECRET}", max_retries=0, timeout=5) as model:
        (echoed,) = model.respond_each(["hello"], DecodingSettings(max_new_tokens=4), seeds=[0])
        texts = [str(echoed), repr(echoed), repr(model), model.fingerprint]
    assert isinstance(echoed, BadResponse) and "HTTP 400" in str(echoed) and "key=***" in str(echoed)
    assert f"key={SECRET}" in seen[-1]  # the server got the key (and echoed it in its error)
    with RefusedPort() as refused:
        down = runner.invoke(
            app,
            [
                "respond",
                "--pairs",
                str(_pairs(tmp_path)),
                "--model",
                "openai:m?timeout=1&retry_seconds=0",
                "--model-arg",
                f"base_url={refused.url()}?api_key={SECRET}",
                "-o",
                str(tmp_path / "responses.jsonl"),
            ],
        )
    texts += [down.stdout, down.stderr]
    assert down.exit_code != 0
    for text in texts:
        assert SECRET not in text
