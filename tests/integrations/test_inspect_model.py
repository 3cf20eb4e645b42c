"""inspect_ai's model provider ``fairtalk/SPEC``: fairtalk's model specs as inspect models, offline.

With ``fairtalk/python:FILE:FUNCTION`` (or any local spec) ``fairtalk/counterfactual`` runs with no
download: the provider counts no tokens, so inspect never fetches tiktoken's encoding (which its own
``mockllm/model`` does). Each test runs with every proxy pointing at a closed port and an empty
tiktoken cache, so a download would fail rather than pass unnoticed.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

import rich  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model  # noqa: E402
from tests.integrations._toys import BOTS  # noqa: E402

import fairtalk  # noqa: E402
from fairtalk.integrations._inspect_model import decoding_settings  # noqa: E402
from fairtalk.models import DecodingSettings  # noqa: E402
from local_server import LocalServer  # noqa: E402

#: The README's example (README.md, "inspect_ai"), as a user copies it; the README test cuts n_pairs to 20.
README_EXAMPLE = """\
from inspect_ai import eval

(log,) = eval("fairtalk/counterfactual", model="fairtalk/python:mybot.py:reply",
              task_args=dict(n_pairs=200, measures="offense,length"))
print(log.results.scores[0].metrics["offense_rate_gap"].value)
"""
#: The README test's ``mybot.py``.
MYBOT = "def reply(text):\n    return 'That sounds nice, tell me more.'\n"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """No way out: every proxy is a closed port and tiktoken's cache is empty; the working folder holds the bots."""
    env = {
        "HTTP_PROXY": CLOSED,
        "HTTPS_PROXY": CLOSED,
        "http_proxy": CLOSED,
        "https_proxy": CLOSED,
        "NO_PROXY": "",
        "no_proxy": "",
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken-cache"),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "mybot.py").write_text(MYBOT, encoding="utf-8")
    (tmp_path / "bots.py").write_text(BOTS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return env


def test_the_readme_example_runs_offline(offline: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(README_EXAMPLE.replace("n_pairs=200", "n_pairs=20"), "README.md", "exec"), {})
    assert float(capsys.readouterr().out.strip().splitlines()[-1]) == 0.0  # mybot answers everyone alike
    assert not any(Path(offline["TIKTOKEN_CACHE_DIR"]).glob("*"))  # nothing fetched


def test_a_fairtalk_model_spec_finds_the_gap_the_audit_finds(offline: dict[str, str]) -> None:
    args = {"n_pairs": 20, "measures": "offense,length", "n_resamples": 200}
    (log,) = inspect_ai.eval(
        "fairtalk/counterfactual", model="fairtalk/python:bots.py:biased", task_args=args, log_dir="logs", display="none"
    )
    assert log.status == "success", log.error
    assert log.eval.model == "fairtalk/python:bots.py:biased"
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    run = fairtalk.audit(
        model="python:bots.py:biased", axes="gender", n_pairs=20, measures=("offense", "length"), n_resamples=200
    )
    offense = run.results["gender"].measure("offense_rate")
    assert metrics["offense_rate_detected"] == 1.0
    assert metrics["offense_rate_gap"] == pytest.approx(offense.a - offense.b) and offense.a - offense.b < 0
    assert metrics["offense_rate_p"] == pytest.approx(offense.p_paired)


def test_model_args_are_the_adapters_options_and_a_system_message_is_refused(offline: dict[str, str]) -> None:
    model = get_model("fairtalk/builtin:echo", mode="upper", memoize=False)
    output = asyncio.run(model.generate([ChatMessageUser(content="she is here")]))
    assert output.completion == "SHE IS HERE" and output.usage is None
    with pytest.raises(fairtalk.SpecError, match="system_prompt"):
        asyncio.run(model.generate([ChatMessageSystem(content="be nice"), ChatMessageUser(content="hi")]))
    with pytest.raises(fairtalk.SpecError, match="did you mean|choose|available"):
        get_model("fairtalk/nosuchprefix:x", memoize=False)


class _Server(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat server that records each request and answers "ok then", cut at the token limit."""

    received: list[dict[str, Any]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"object": "list", "data": [{"id": "m", "object": "model"}]})

    def do_POST(self) -> None:
        self.received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        message = {"role": "assistant", "content": "ok then"}
        self._send(
            {
                "id": "x",
                "object": "chat.completion",
                "model": "m",
                "choices": [{"index": 0, "finish_reason": "length", "message": message}],
            }
        )


def test_a_server_spec_keeps_its_slashes_and_the_reply_says_why_it_stopped() -> None:
    """``fairtalk/openai:http://HOST/v1#m``: inspect splits at the first ``/`` only; the settings reach the server."""
    with LocalServer(_Server) as server:
        model = get_model(f"fairtalk/openai:{server.url()}#m", memoize=False)
        config = GenerateConfig(max_tokens=7)
        output = asyncio.run(model.generate([ChatMessageUser(content="my mother is here")], config=config))
    assert output.completion == "ok then" and output.stop_reason == "max_tokens"
    (request,) = _Server.received
    assert request["messages"][-1]["content"] == "my mother is here" and request["max_tokens"] == 7


def test_inspects_generate_config_maps_onto_decoding_settings() -> None:
    assert decoding_settings(GenerateConfig()) == DecodingSettings()
    assert decoding_settings(GenerateConfig(temperature=0, top_p=0.5)) == DecodingSettings()
    sampled = decoding_settings(GenerateConfig(temperature=0.7, top_p=0.9, top_k=40, max_tokens=32, stop_seqs=["\n"]))
    assert sampled == DecodingSettings(do_sample=True, temperature=0.7, top_p=0.9, top_k=40, max_new_tokens=32, stop=("\n",))


def test_inspect_eval_on_the_command_line_finds_the_provider_by_name(offline: dict[str, str], tmp_path: Path) -> None:
    """A fresh process: inspect loads fairtalk's entry point to find ``fairtalk/...``, and ``-M`` reaches the adapter."""
    inspect_cli = Path(sys.executable).with_name("inspect")
    command = [str(inspect_cli)] if inspect_cli.exists() else [sys.executable, "-m", "inspect_ai"]
    done = subprocess.run(
        [
            *command,
            "eval",
            "fairtalk/counterfactual",
            "--model",
            "fairtalk/builtin:echo",
            "-M",
            "mode=upper",
            "-T",
            "n_pairs=3",
            "-T",
            "measures=length",
            "--log-dir",
            "cli-logs",
            "--display",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **offline},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = (tmp_path / "cli-logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.model_args == {"mode": "upper"} and len(log.samples) == 6
    assert all(s.output.completion == s.input.upper() for s in log.samples)


def test_a_bad_model_spec_is_one_line_that_inspect_prints_without_a_traceback(offline: dict[str, str], tmp_path: Path) -> None:
    """Review finding: ``--model fairtalk/python:nope.py:reply`` printed a 243-line traceback (bad -T args print one line)."""
    from inspect_ai._util.error import PrerequisiteError

    with pytest.raises(fairtalk.SpecError, match=r"^fairtalk/python:nope\.py:reply: cannot import 'nope\.py'") as caught:
        get_model("fairtalk/python:nope.py:reply", memoize=False)
    assert isinstance(caught.value, PrerequisiteError) and caught.value.message == str(caught.value)
    # Review finding: inspect prints the message through rich, which made the ":x" of "fairtalk/bogus:x" an emoji
    with pytest.raises(fairtalk.SpecError) as bogus:
        get_model("fairtalk/bogus:x", memoize=False)
    shown = io.StringIO()
    rich.print(f"\n{bogus.value.message}\n", file=shown)  # as inspect's command line prints it
    assert shown.getvalue().startswith("\nfairtalk/bogus:x: unknown model spec prefix 'bogus'"), shown.getvalue()
    assert " ".join(shown.getvalue().split()) == str(bogus.value)  # nothing else changed (rich wraps long lines)
    from fairtalk.integrations._inspect_model import InspectOptionError

    shown = io.StringIO()
    message = InspectOptionError("[bold]a[/] b:smile: \\[c]").message
    rich.print(f"{message}", file=shown)
    assert shown.getvalue() == "[bold]a[/] b:smile: \\[c]\n"  # no markup, no emoji
    inspect_cli = Path(sys.executable).with_name("inspect")
    command = [str(inspect_cli)] if inspect_cli.exists() else [sys.executable, "-m", "inspect_ai"]
    done = subprocess.run(
        [*command, "eval", "fairtalk/counterfactual", "--model", "fairtalk/python:nope.py:reply", "-T", "n_pairs=2"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **offline},
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "fairtalk/python:nope.py:reply: cannot import 'nope.py'" in " ".join(output.split())
    assert "Traceback" not in output, output
