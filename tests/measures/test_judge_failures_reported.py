"""A judge that fails on some responses is said among the run's warnings (results.json, report.md), not only logged.

Before, ``the judge failed on 57 of the 117 distinct responses …`` reached the console alone:
``results.json`` had ``"warnings": []`` and the report never said it, while the judge's unparsed
answers were reported there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.measures import Judge
from fairtalk.models.openai._latency import is_probe
from fairtalk.report import md_escape
from local_server import LocalServer, send_chat_answer

runner = CliRunner()


class _HalfDown(BaseHTTPRequestHandler):
    """Answers "Yes." to every rubric, except a 500 for a response that holds "flaky" (the preflight's probe: answered)."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        last = payload["messages"][-1]["content"]
        if "flaky" in last and not is_probe(last):
            self.send_error(500, "judge overloaded")
            return
        send_chat_answer(self, "Yes.")


@pytest.fixture()
def half_down() -> Iterator[str]:
    """The judge server on a free port of 127.0.0.1, stopped after the test: its URL."""
    with LocalServer(_HalfDown) as server:
        yield server.url()


def test_the_judge_failure_count_is_kept_for_the_run_to_report() -> None:
    down = {"flaky 1", "flaky 2", "back 1"}

    def ask(prompts: list[str]) -> list[str | BaseException]:
        return [ConnectionError("down") if any(f'"{t}"' in p for t in down) else "no" for p in prompts]

    judge = Judge(ask)
    assert judge.failure_warning is None
    judge.score(["fine 1", "flaky 1", "flaky 1", "fine 2", "back 1"])
    assert judge.failure_warning is not None and "failed on 2 of the 4 distinct" in judge.failure_warning
    down.discard("back 1")
    judge.score(["flaky 2", "fine 1", "flaky 1", "back 1"])  # asked again (the scorer check, the masked scores): once;
    # "back 1" failed, then was answered: it counts as answered
    assert judge.error_counts == {"ConnectionError": 4}  # every failed answer, as the manifest counts them
    assert judge.failure_warning == (
        "judge_error: the judge failed on 2 of the 5 distinct responses it was asked about (ConnectionError 2); "
        "those pairs leave its tests"
    )


def test_a_judge_failing_on_half_the_responses_is_in_results_json_and_the_report(half_down: str, tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("def reply(text):\n    return 'ok: ' + text[:30] + (' flaky' if len(text) % 2 else '')\n")
    out = tmp_path / "report"
    judge = f"judge:openai:{half_down}#judge?retry_seconds=0&max_retries=1"
    done = runner.invoke(
        app,
        ["audit", "--model", f"python:{bot}:reply", "--axis", "gender", "--pairs", "30", "--max-consecutive-failures", "0"]
        + ["--measures", f"length,{judge}", "--resamples", "200", "--quiet", "-o", str(out)],
    )
    assert done.exit_code == 0, done.output
    said = re.compile(
        r"judge_error: the judge failed on (\d+) of the (\d+) distinct responses it was asked about \(TransportError \1\)"
    )
    results = json.loads((out / "gender" / "results.json").read_text(encoding="utf-8"))
    found = [m for w in results["warnings"] if (m := said.match(w))]
    assert found and 0 < int(found[0][1]) < int(found[0][2]), results["warnings"]
    assert md_escape(found[0][0]) in " ".join((out / "gender" / "report.md").read_text(encoding="utf-8").split())
