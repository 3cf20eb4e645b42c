"""Review findings: what ``fairtalk respond`` says of its answers when it has no run store file, and of a folder as @FILE.

Without ``--store`` the answers live in memory: a run stopped by its failures said they were "not
kept" without saying how to keep them (Ctrl-C's message did), and a run that left pairs out for a
failed side said "failures are retried on the next run", although a re-run asks every pair again.
``--system-prompt @FOLDER`` called the folder "a pipe, a device or a socket".

The stub server's behaviour is the first segment of its URL's path (``/MODE/v1``): ``refuse_she``
answers 400 to "she said N" for an odd N and answers the rest; ``down_after_6`` answers the first
six requests and 400 to every later one. Each test owns its server and its temporary folder.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from local_server import LocalServer, send_chat_answer, send_json

runner = CliRunner()
#: Both given: the preflight measures no latency; one request at a time, no retry waits.
FIXED = "timeout=5&max_concurrency=1&backoff=0&max_retries=0"


class _Modes(BaseHTTPRequestHandler):
    lock = threading.Lock()
    n_asked: dict[str, int]

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        mode = self.path.strip("/").split("/")[0]
        try:
            text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
        except (OSError, ValueError, KeyError):  # a request cut off as the run stopped: no traceback in its stderr
            return
        with self.lock:
            self.n_asked[mode] = n = self.n_asked.get(mode, 0) + 1
        if (mode == "refuse_she" and text.startswith("she") and int(text[-1]) % 2) or (mode == "down_after_6" and n > 6):
            send_json(self, 400, {"error": {"message": "no"}})
        else:
            send_chat_answer(self, f"re: {text}")


class _Quiet(ThreadingHTTPServer):
    """Prints nothing of a request the run cut off as it stopped: the tests read the command's stderr."""

    def handle_error(self, request: object, client_address: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[tuple[LocalServer, dict[str, int]]]:
    asked: dict[str, int] = {}
    with LocalServer(type("Handler", (_Modes,), {"n_asked": asked}), server_class=_Quiet) as local:
        yield local, asked


def _pairs_file(folder: Path, n: int) -> Path:
    pairs = [fairtalk.Pair(f"p{i}", "gender", a=f"he said {i}", b=f"she said {i}", original_side="a") for i in range(n)]
    fairtalk.write_pairs(pairs, folder / "pairs.jsonl")
    return folder / "pairs.jsonl"


def _respond(folder: Path, url: str, *extra: str) -> tuple[int, str]:
    args = ["respond", "--pairs", str(_pairs_file(folder, 6)), "--model", f"openai:{url}#stub?{FIXED}"]
    done = runner.invoke(app, [*args, "-o", str(folder / "r.jsonl"), *extra])
    return done.exit_code, " ".join(done.stderr.split())


def test_a_run_stopped_without_a_store_file_says_how_to_keep_its_answers(server, tmp_path: Path) -> None:  # noqa: ANN001
    local, _ = server
    code, said = _respond(tmp_path, local.url("/down_after_6/v1"), "--max-consecutive-failures", "3")
    assert code == 2 and said.startswith("error: "), said
    assert "the 6 answers of this run are not kept; give --store FILE (store=PATH in Python) to keep them and resume" in said
    assert not (tmp_path / "r.jsonl").exists()  # no file that a score could take for the whole run


def test_failures_are_said_to_be_retried_on_the_next_run_only_with_a_store_file(server, tmp_path: Path) -> None:  # noqa: ANN001
    local, asked = server
    url = local.url("/refuse_she/v1")
    code, said = _respond(tmp_path, url)
    assert code == 0, said
    assert "9 generated, 0 from the store, 3 failed (3 pairs left out; no run store file kept" in said
    assert "give --store FILE to keep them" in said and "retried on the next run" not in said
    _respond(tmp_path, url)
    assert asked["refuse_she"] == 24  # the re-run asked all 12 sides again: nothing was kept
    store = str(tmp_path / "store.sqlite")
    code, said = _respond(tmp_path, url, "--store", store)
    assert code == 0 and "(3 pairs left out; failures are retried on the next run)" in said, said
    code, said = _respond(tmp_path, url, "--store", store)
    assert "0 generated, 9 from the store, 3 failed" in said and asked["refuse_she"] == 24 + 12 + 3  # the failures alone


def test_a_folder_as_the_system_prompt_file_is_called_a_folder(tmp_path: Path) -> None:
    pairs = _pairs_file(tmp_path, 2)
    args = ["respond", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(tmp_path / "r.jsonl")]
    done = runner.invoke(app, [*args, "--system-prompt", f"@{tmp_path}"])
    said = " ".join(done.stderr.split())
    assert done.exit_code == 2 and said.startswith("error: "), said
    assert "--system-prompt: a folder, not a file; give @FILE, a file of the text" in said
    assert "a pipe, a device or a socket" not in said


def test_an_audit_with_an_in_memory_store_does_not_promise_a_retry(tmp_path: Path) -> None:
    """`audit --store :memory:` with failed sides: the counts line says how to keep them, not "retried on the next run"."""
    bot = tmp_path / "flaky.py"
    bot.write_text(
        "def reply(context):\n    if 'she' in context.lower().split():\n        raise ValueError('no')\n    return 'ok'\n",
        encoding="utf-8",
    )
    args = ["audit", "--model", f"python:{bot}:reply", "--axis", "gender", "--pairs", "30", "--measures", "length"]
    done = runner.invoke(app, [*args, "--store", ":memory:", "-o", str(tmp_path / "mem"), "--resamples", "50"])
    said = " ".join(done.output.split())
    assert "failed" in said and "no run store file kept this run's answers" in said, done.output
    assert "retried on the next run" not in said
    kept = runner.invoke(app, [*args, "-o", str(tmp_path / "file"), "--resamples", "50"])
    assert "failures are retried on the next run" in " ".join(kept.output.split()), kept.output
