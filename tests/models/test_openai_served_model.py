"""The model a server says answered (each reply's ``model``): recorded in run.json, and warned of when it is not the one asked for.

Review finding: a vLLM or llama.cpp server serving another model than ``--model`` names answered
under the requested name, and nothing said so. The run store stays keyed by the model asked for
(its fingerprint is known before any answer); the served names are counted per axis in run.json
(``generation.served_models``) and a name other than the one asked for is a counted warning.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fairtalk.cli import app
from local_server import LocalServer

runner = CliRunner()


def _handler(served: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def _send(self, status: int, body: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802  # no model list: the preflight leaves the check to the answers
            self._send(404, json.dumps({"error": "not found"}))

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            reply = {"model": served, "choices": [{"message": {"content": "sure, tell me more"}, "finish_reason": "stop"}]}
            self._send(200, json.dumps(reply))

    return Handler


def _audit(tmp_path: Path, served: str, asked: str) -> tuple[str, dict[str, Any]]:
    out = tmp_path / served
    with LocalServer(_handler(served)) as server:
        spec = f"openai:{server.url()}#{asked}?timeout=10&max_concurrency=4"
        args = ["audit", "--model", spec, "--axis", "gender", "--pairs", "10", "--measures", "length", "--resamples", "100"]
        done = runner.invoke(app, [*args, "--no-scorer-check", "-o", str(out)])
    assert done.exit_code == 0, done.output
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return " ".join(done.output.split()), run["axes"]["gender"]["generation"]


def test_another_served_model_is_recorded_and_warned_of_once_counted(tmp_path: Path) -> None:
    said, generation = _audit(tmp_path, served="qwen2.5-0.5b-instruct", asked="llama-3.1-8b-instruct")
    assert generation["served_models"] == {"qwen2.5-0.5b-instruct": 20}
    warning = (
        "gender: responses: 20 of 20 answers came from a model the server names 'qwen2.5-0.5b-instruct' (20 answers), not the model asked "
        "for ('llama-3.1-8b-instruct')"
    )
    assert said.count(warning) == 1, said


def test_the_model_asked_for_or_its_dated_version_is_recorded_without_a_warning(tmp_path: Path) -> None:
    for served in ("llama-3.1-8b-instruct", "llama-3.1-8b-instruct-2024-07-23"):
        said, generation = _audit(tmp_path, served=served, asked="llama-3.1-8b-instruct")
        assert generation["served_models"] == {served: 20} and "not the model asked for" not in said, said
