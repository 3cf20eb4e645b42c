"""Review finding: a password in a server URL given as ``--model-arg base_url=...`` was written to run.json in plain text.

The same URL inside the model spec was masked (``//***@``); the model options were written as
given. Now every model option is masked as the spec is, and no output of an audit (the run
folder with its store and reports, the JUnit file, ``--json``, the log on stderr) holds the
password. The stub chat server (a free port, its own thread) answers every context.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.config import AuditConfig
from local_server import LocalServer, send_chat_answer

PASSWORD = "BPASSxyz"
runner = CliRunner()


class _Chat(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        send_chat_answer(self, f"well, {text[:30]}")


@pytest.fixture()
def server_url() -> Iterator[str]:
    with LocalServer(_Chat) as server:
        yield server.url().replace("http://", f"http://bob:{PASSWORD}@")


def test_a_model_option_is_recorded_without_the_password_of_its_url() -> None:
    config = AuditConfig(model="openai:m", model_args={"base_url": f"http://bob:{PASSWORD}@127.0.0.1:9/v1", "timeout": 5})
    assert config.to_dict()["model_args"] == {"base_url": "http://***@127.0.0.1:9/v1", "timeout": "5"}


@pytest.mark.parametrize("form", ["model-arg", "spec"])
def test_no_output_of_an_audit_holds_the_password_of_the_server_url(server_url: str, tmp_path: Path, form: str) -> None:
    out, junit = tmp_path / "audit", tmp_path / "junit.xml"
    options = "timeout=5&max_concurrency=2"
    if form == "spec":
        model = [f"openai:m?base_url={server_url}&{options}"]
    else:
        model = [f"openai:m?{options}", "--model-arg", f"base_url={server_url}"]
    args = ["audit", "-vv", "--corpus", "builtin:chitchat", "--axis", "gender", "--pairs", "12", "--measures", "length"]
    done = runner.invoke(app, [*args, "--model", *model, "-o", str(out), "--junit", str(junit), "--json"])
    assert done.exit_code == 0, done.output
    files = [junit, *(path for path in out.rglob("*") if path.is_file())]
    assert {"run.json", "results.json", "report.md", "report.html", "index.html", "store.sqlite"} <= {p.name for p in files}
    for path in files:  # the store too, read as bytes
        assert PASSWORD.encode() not in path.read_bytes(), path
    assert PASSWORD not in done.stdout and PASSWORD not in done.stderr
    config = json.loads((out / "run.json").read_text())["config"]
    recorded = config["model_args"]["base_url"] if form == "model-arg" else config["model"]
    assert "//***@127.0.0.1:" in recorded  # the URL is kept, less its credentials
