"""Tests for models/_spec.py: one parser of ``PREFIX:TARGET?key=value``, typed options for every adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairtalk import SpecError
from fairtalk.errors import ResponderTimeout
from fairtalk.models import DecodingSettings, load_responder, parse_model_args, parse_model_spec

S = DecodingSettings()


def test_parse_model_spec() -> None:
    spec = parse_model_spec("python:bots/my.py:reply?batched=true&timeout=2.5")
    assert (spec.prefix, spec.target, dict(spec.options)) == ("python", "bots/my.py:reply", {"batched": "true", "timeout": "2.5"})
    assert parse_model_spec("hf:gpt2").options == {}
    assert dict(parse_model_spec("openai:http://h/v1#m?system_prompt=Be%20brief%3F").options) == {"system_prompt": "Be brief?"}
    for bad in ("nocolon", ":x", "hf:gpt2?novalue", "hf:gpt2?a=1&&", "hf:gpt2?=1", "1x:y"):
        with pytest.raises(SpecError, match="malformed"):
            parse_model_spec(bad)


def test_parse_model_args() -> None:
    assert parse_model_args(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    with pytest.raises(SpecError, match="malformed --model-arg 'oops'"):
        parse_model_args(["oops"])
    with pytest.raises(SpecError, match="'a' is given twice in --model-arg"):
        parse_model_args(["a=1", "a=2"])


@pytest.fixture()
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "bot.py"
    path.write_text(
        "import time\n"
        "def batch(texts):\n    return [t.upper() for t in texts]\n"
        "def sleepy(text):\n    time.sleep(5 if text == 'hang' else 0)\n    return text\n"
    )
    return path


def test_python_options_from_the_spec(model_file: Path) -> None:
    model = load_responder(f"python:{model_file}:batch?batched=true")
    assert model.batched and model.respond(["a", "b"], S, seeds=[0, 0]) == ["A", "B"]
    assert '"batched":true' in model.fingerprint
    assert not load_responder(f"python:{model_file}:batch?batched=0").batched
    with pytest.raises(SpecError, match=r"option batched='maybe' for python:.* is not true or false"):
        load_responder(f"python:{model_file}:batch?batched=maybe")
    with pytest.raises(SpecError, match=r"unknown option 'batch' for python:.*did you mean 'batched'"):
        load_responder(f"python:{model_file}:batch?batch=true")


def test_python_timeout_fails_the_item_and_moves_on(model_file: Path) -> None:
    with load_responder(f"python:{model_file}:sleepy?timeout=0.3") as model:
        out = model.respond_each(["a", "hang", "b"], S, seeds=[0, 0, 0])
    assert out[0] == "a" and out[2] == "b"
    assert isinstance(out[1], ResponderTimeout) and "did not return within timeout=0.3 s" in str(out[1])
    with pytest.raises(SpecError, match="timeout must be > 0"):
        load_responder(f"python:{model_file}:sleepy", timeout="0")
    assert load_responder(f"python:{model_file}:sleepy?timeout=none").timeout is None


def test_replay_and_builtin_options(tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    replay.write_text(json.dumps({"context": "hi", "response": "yo"}) + "\n")
    assert load_responder(f"replay:{replay}").respond(["hi"], S, seeds=[0]) == ["yo"]
    with pytest.raises(SpecError, match=r"replay:.* takes no options, got 'x'"):
        load_responder(f"replay:{replay}?x=1")
    assert load_responder("builtin:echo?mode=upper").respond(["hi there"], S, seeds=[0]) == ["HI THERE"]
    assert load_responder("builtin:echo", mode="identity").respond(["hi there"], S, seeds=[0]) == ["hi there"]
    with pytest.raises(SpecError, match=r"unknown option 'pool' for builtin:echo \(choose from: mode\)"):
        load_responder("builtin:echo?pool=x")
