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


def _handler(served: str, asked: list[int] | None = None) -> type[BaseHTTPRequestHandler]:
    """Replies naming ``served`` as the model that answered; each request is counted in ``asked`` (one item)."""

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
            if asked is not None:
                asked[0] += 1
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
    """Review finding: the warning was on the console only; results.json, run.json and index.html said nothing."""
    said, generation = _audit(tmp_path, served="qwen2.5-0.5b-instruct", asked="llama-3.1-8b-instruct")
    assert generation["served_models"] == {"qwen2.5-0.5b-instruct": 20}
    warning = (
        "20 of 20 answers came from a model the server names 'qwen2.5-0.5b-instruct' (20 answers), not the model asked "
        "for ('llama-3.1-8b-instruct')"
    )
    assert said.count(warning) == 1 and f"gender: warning: {warning}" in said, said
    out = tmp_path / "qwen2.5-0.5b-instruct"
    results = json.loads((out / "gender" / "results.json").read_text(encoding="utf-8"))
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    for warnings in (results["warnings"], run["axes"]["gender"]["result"]["warnings"]):
        assert sum(w.startswith(warning) for w in warnings) == 1, warnings
    index = (out / "index.html").read_text(encoding="utf-8")
    assert '<li data-axis="gender"><span class="badge warn">gender</span> ' + warning.replace("'", "&#39;") in index
    assert f"**Warning:** {warning}" in (out / "gender" / "report.md").read_text(encoding="utf-8")


def test_the_model_asked_for_or_its_dated_version_is_recorded_without_a_warning(tmp_path: Path) -> None:
    for served in ("llama-3.1-8b-instruct", "llama-3.1-8b-instruct-2024-07-23"):
        said, generation = _audit(tmp_path, served=served, asked="llama-3.1-8b-instruct")
        assert generation["served_models"] == {served: 20} and "not the model asked for" not in said, said


def test_a_rerun_served_from_the_store_reports_the_served_models_of_the_first_run(tmp_path: Path) -> None:
    """Review finding: the served names were counted from the server's replies alone, so a rerun the store served said none.

    The store keeps each answer's served name: the rerun (no request sent) counts what the first
    run did, warns again, and its report.md, report.html and console name the served model.
    """
    asked = [0]
    store = tmp_path / "store.sqlite"
    runs = []
    with LocalServer(_handler("qwen2.5-0.5b-instruct", asked)) as server:
        spec = f"openai:{server.url()}#llama-3.1-8b-instruct?timeout=10&max_concurrency=4"
        for out in (tmp_path / "first", tmp_path / "rerun"):
            args = ["audit", "--model", spec, "--axis", "gender", "--pairs", "10", "--measures", "length", "--resamples", "100"]
            done = runner.invoke(app, [*args, "--no-scorer-check", "--store", str(store), "-o", str(out)])
            assert done.exit_code == 0, done.output
            run = json.loads((out / "run.json").read_text(encoding="utf-8"))
            runs.append((" ".join(done.output.split()), run["axes"]["gender"]["generation"], out / "gender"))
    (said, first, _), (said_again, rerun, folder) = runs
    assert asked == [20] and (rerun["n_cached"], rerun["n_generated"]) == (20, 0)  # the rerun asked the server nothing
    assert rerun["served_models"] == first["served_models"] == {"qwen2.5-0.5b-instruct": 20}
    assert rerun["n_served_unknown"] == first["n_served_unknown"] == 0
    line = "served model 'qwen2.5-0.5b-instruct' (20 answers): not the model asked for ('llama-3.1-8b-instruct')"
    assert f"**{line}.**" in (folder / "report.md").read_text(encoding="utf-8").splitlines()
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert '<span class="badge warn">served model</span> ' + line.replace("'", "&#39;") + "." in html, html
    for output in (said, said_again):
        assert f"gender: {line}" in output and "20 of 20 answers came from a model the server names" in output, output


def test_the_report_names_the_served_model_asked_for_without_a_flag_and_nothing_for_a_model_that_does_not_say(
    tmp_path: Path,
) -> None:
    said, _ = _audit(tmp_path, served="llama-3.1-8b-instruct-2024-07-23", asked="llama-3.1-8b-instruct")
    report = (tmp_path / "llama-3.1-8b-instruct-2024-07-23" / "gender" / "report.md").read_text(encoding="utf-8")
    assert "served model 'llama-3.1-8b-instruct-2024-07-23' (20 answers)." in report.splitlines()
    assert "gender: served model 'llama-3.1-8b-instruct-2024-07-23' (20 answers)" in said
    args = ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "10", "--measures", "length", "--resamples", "100"]
    done = runner.invoke(app, [*args, "--no-scorer-check", "-o", str(tmp_path / "echo")])
    assert done.exit_code == 0, done.output
    assert "served model" not in (tmp_path / "echo" / "gender" / "report.md").read_text(encoding="utf-8")
    assert "served model" not in done.output
    run = json.loads((tmp_path / "echo" / "run.json").read_text(encoding="utf-8"))
    assert run["axes"]["gender"]["generation"]["served_models"] is None
    assert "served" not in run["axes"]["gender"]["result"]["manifest"]["audit"]
