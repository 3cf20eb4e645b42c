"""Tests for models/_registry.py: spec prefixes, lazy loading, errors, entry points."""

from __future__ import annotations

import subprocess
import sys

import pytest

import fairtalk._registry
import fairtalk.models._registry as registry
from fairtalk import SpecError
from fairtalk.models import Responder, load_responder, model_prefixes, register_model


def test_prefixes() -> None:
    assert {"hf", "openai", "python", "replay", "builtin", "retrieval"} <= set(model_prefixes())


def test_unknown_prefix_suggests() -> None:
    with pytest.raises(SpecError, match=r"unknown model spec prefix 'hff'.*did you mean 'hf'\?.*choose from: builtin"):
        load_responder("hff:gpt2")
    with pytest.raises(SpecError, match="malformed model spec 'gpt2'"):
        load_responder("gpt2")


@pytest.mark.parametrize(
    ("spec", "suggested"),
    [
        ("mybot.py:reply", "python:mybot.py:reply"),
        ("bots/mybot.py", "python:bots/mybot.py:FUNCTION"),
        ("mybot.py:reply?batched=true", "python:mybot.py:reply?batched=true"),
    ],
)
def test_malformed_spec_names_the_prefixes_and_python_for_a_file(spec: str, suggested: str) -> None:
    """A spec with no prefix lists the prefixes; a Python file given without ``python:`` gets the spec it meant."""
    with pytest.raises(SpecError) as caught:
        load_responder(spec)
    message = str(caught.value)
    assert f"malformed model spec {spec!r}" in message
    assert "with PREFIX one of: " + ", ".join(model_prefixes()) in message
    assert f"did you mean {suggested!r}?" in message
    with pytest.raises(SpecError) as caught:
        load_responder("gpt2")
    assert "python, replay" in str(caught.value)
    assert "did you mean" not in str(caught.value)


def test_loading_is_lazy() -> None:
    """Loading the echo model imports neither torch nor the hf: adapter (in a fresh interpreter: other tests import torch)."""
    probe = "import sys; from fairtalk import load_responder; load_responder('builtin:echo'); "
    probe += "print('torch' in sys.modules, 'fairtalk.models._hf' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "False"]


def test_register_and_duplicates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "MODELS", registry.MODELS.fresh())
    with pytest.raises(SpecError, match="registered twice"):
        register_model("hf", "x:y")
    register_model("mine", "fairtalk.models._builtin:load_builtin")
    with pytest.raises(SpecError, match="registered twice"):
        register_model("mine", "x:y")
    model = load_responder("mine:echo")
    assert isinstance(model, Responder)
    register_model("broken", "no_such_module_abc:thing")
    with pytest.raises(SpecError, match="cannot load model spec prefix 'broken' from 'no_such_module_abc:thing'"):
        load_responder("broken:x")
    register_model("notamodel", "builtins:str")
    with pytest.raises(SpecError, match="not a Responder"):
        load_responder("notamodel:x")


def test_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    monkeypatch.setattr(registry, "MODELS", registry.MODELS.fresh())
    eps = [EntryPoint("thirdparty", "fairtalk.models._builtin:load_builtin", registry.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(fairtalk._registry, "entry_points", lambda group: eps)
    assert "thirdparty" in model_prefixes()
    assert load_responder("thirdparty:echo").respond(
        ["a b"], __import__("fairtalk.models").models.DecodingSettings(), seeds=[0]
    ) == ["b a"]
