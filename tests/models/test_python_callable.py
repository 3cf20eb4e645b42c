"""Tests for models/python_callable.py: single and batched user callables."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairtalk import BadResponse, ResponderError, SpecError
from fairtalk.models import DecodingSettings, load_responder

S = DecodingSettings()
MODULE = '''
def single(text):
    if text == "boom":
        raise ValueError("cannot answer boom")
    return text.upper()

def seeded(text, seed, settings):
    return f"{text}|{seed}|{settings.max_new_tokens}"

def batch(texts):
    return [t[::-1] for t in texts]
batch.batched = True

def wrong_length(texts):
    return texts[:-1]

def not_strings(text):
    return 42
'''


@pytest.fixture()
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "user_model.py"
    path.write_text(MODULE)
    return path


def test_single_callable_from_file(model_file: Path) -> None:
    with load_responder(f"python:{model_file}:single") as model:
        assert model.respond(["hi", "yo"], S, seeds=[0, 0]) == ["HI", "YO"]
        out = model.respond_each(["a", "boom", "b"], S, seeds=[0, 0, 0])
        assert out[0] == "A" and out[2] == "B"
        assert isinstance(out[1], ResponderError) and "raised ValueError: cannot answer boom" in str(out[1])
        assert model.fingerprint.startswith(f"python:{model_file}:single ")
        assert '"code":' in model.fingerprint


def test_seed_and_settings_are_passed(model_file: Path) -> None:
    model = load_responder(f"python:{model_file}:seeded")
    assert model.respond(["x", "y"], DecodingSettings(max_new_tokens=3), seeds=[5, 6]) == ["x|5|3", "y|6|3"]


def test_batched_by_attribute_or_option(model_file: Path) -> None:
    assert load_responder(f"python:{model_file}:batch").batched
    assert load_responder(f"python:{model_file}:batch").respond(["ab", "cd"], S, seeds=[0, 0]) == ["ba", "dc"]
    model = load_responder(f"python:{model_file}:wrong_length", batched="true")
    with pytest.raises(BadResponse, match="returned 1 responses for 2 contexts"):
        model.respond(["a", "b"], S, seeds=[0, 0])
    with pytest.raises(BadResponse, match="returned int for item 0"):
        load_responder(f"python:{model_file}:not_strings").respond(["a"], S, seeds=[0])


def test_module_path_spec() -> None:
    model = load_responder("python:textwrap:dedent")
    assert model.respond(["  x"], S, seeds=[0]) == ["x"]
    assert model.fingerprint.startswith("python:textwrap:dedent")


def test_spec_errors(model_file: Path) -> None:
    with pytest.raises(SpecError, match="malformed python spec"):
        load_responder("python:nocolon")
    with pytest.raises(SpecError, match="cannot import 'no_such_module_xyz'"):
        load_responder("python:no_such_module_xyz:f")
    with pytest.raises(SpecError, match="has no callable 'nope'"):
        load_responder(f"python:{model_file}:nope")
    with pytest.raises(SpecError, match="file not found"):
        load_responder("python:missing/file.py:f")
