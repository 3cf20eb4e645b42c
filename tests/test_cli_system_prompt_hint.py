"""The audit hints at ``--system-prompt`` for a corpus' system messages only where the model takes a system prompt.

Review finding: a JSONL corpus with system messages said "system messages (left out; give one with
--system-prompt)" whatever the model, but ``python:`` and ``builtin:echo`` models refuse the option
("unknown option 'system_prompt' for python:bot.py:reply"). The corpus reader says "(left out)"; the
audit adds the hint for a model the option is for (``openai:``, ``hf:``, ``vllm:``, ``builtin:smollm2``),
given none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from local_server import LocalServer, send_chat_answer

runner = CliRunner()

_KEPT = "gender: kept 12 corpus line(s) without a part: system messages (left out) (first at"
_HINT = "; give the model one with --system-prompt"


class _Chat(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat server that answers "ok"."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        send_chat_answer(self, "ok")


@pytest.fixture()
def chat_server() -> Iterator[str]:
    with LocalServer(_Chat) as server:
        yield server.url()


def _chats(folder: Path) -> Path:
    path = folder / "chats.jsonl"
    rows = [
        {"messages": [{"role": "system", "content": "be nice"}, {"role": "user", "content": f"my brother is {i} today"}]}
        for i in range(12)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _said(folder: Path, model: str, *extra: str) -> str:
    argv = ["audit", "--corpus", f"jsonl:{_chats(folder)}", "--model", model, "--axis", "gender", "--pairs", "6"]
    done = runner.invoke(app, [*argv, "--measures", "length", "-o", str(folder / "out"), *extra], env={"COLUMNS": "400"})
    assert done.exit_code == 0, done.output
    return " ".join(done.output.split())


def test_the_reader_names_the_system_messages_left_out_without_a_hint(tmp_path: Path) -> None:
    corpus = fairtalk.read_corpus(_chats(tmp_path))
    assert len(list(corpus)) == 12  # every conversation kept, without its system message
    summary = corpus.summary
    assert summary.count("system messages (left out)") == 12
    assert "--system-prompt" not in " ".join(summary.skip_lines())


def test_a_model_that_takes_a_system_prompt_is_told_to_give_one(tmp_path: Path, chat_server: str) -> None:
    said = _said(tmp_path, f"openai:{chat_server}#bot")
    assert f"{_KEPT} {_chats(tmp_path)}:1){_HINT}" in said, said


def test_a_model_given_a_system_prompt_is_not_told_to_give_one(tmp_path: Path, chat_server: str) -> None:
    said = _said(tmp_path, f"openai:{chat_server}#bot", "--system-prompt", "be brief")
    assert _KEPT in said and "--system-prompt" not in said, said


@pytest.mark.parametrize("model", ["builtin:echo", "python:PATH:reply"])
def test_a_model_that_takes_no_system_prompt_is_not_told_to_give_one(tmp_path: Path, model: str) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("def reply(text):\n    return text\n")
    said = _said(tmp_path, model.replace("PATH", str(bot)))
    assert _KEPT in said and "--system-prompt" not in said, said
