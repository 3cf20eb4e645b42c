"""Regression tests for model specs from the review of issue 9: each failed against the code before its fix."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from fairtalk import DecodingSettings, SpecError, load_responder

MODEL = "import time\n\ndef reply(context):\n    return context.upper()\n\n\ndef sleepy(context):\n    time.sleep(0.3)\n    return 'late'\n"


@pytest.fixture()
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "bot.py"
    path.write_text(MODEL)
    return path


# --- 2. an empty or "none" option is an error, never a silent default ----------------------------------------


@pytest.mark.parametrize("value", ["", "none", "null", "NONE", " "])
def test_an_empty_or_none_api_key_env_is_an_error_not_the_default_key(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-never-be-sent")
    with pytest.raises(SpecError, match="api_key_env"):
        load_responder(f"openai:http://127.0.0.1:9/v1#m?api_key_env={value}")
    with pytest.raises(SpecError, match="api_key_env"):
        load_responder("openai:http://127.0.0.1:9/v1#m", api_key_env=value)


def test_a_named_api_key_env_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-mine")
    assert load_responder("openai:http://127.0.0.1:9/v1#m?api_key_env=MY_KEY").api_key_env == "MY_KEY"


@pytest.mark.parametrize(
    "spec", ["openai:http://127.0.0.1:9/v1#m?timeout=", "python:{model}:reply?timeout=", "python:{model}:reply?batched="]
)
def test_an_empty_timeout_is_an_error_that_says_what_is_accepted(model_file: Path, spec: str) -> None:
    with pytest.raises(SpecError, match=r"is empty; give (a number|true or false)"):
        load_responder(spec.format(model=model_file))


def test_none_still_means_no_limit_for_a_python_timeout(model_file: Path) -> None:
    assert load_responder(f"python:{model_file}:reply?timeout=none").timeout is None
    assert load_responder(f"python:{model_file}:reply?timeout=60").timeout == 60.0


# --- 6. a huge or infinite python timeout means no limit, not an OverflowError ---------------------------------


@pytest.mark.parametrize("timeout", ["inf", "1e10", "1e300", str(threading.TIMEOUT_MAX)])
def test_an_infinite_or_huge_python_timeout_means_no_limit(model_file: Path, timeout: str) -> None:
    responder = load_responder(f"python:{model_file}:reply?timeout={timeout}")
    assert responder.timeout is None
    assert responder.respond(["hi"], DecodingSettings(), seeds=[0]) == ["HI"]


def test_a_long_python_timeout_below_the_cap_is_kept_and_works(model_file: Path) -> None:
    responder = load_responder(f"python:{model_file}:sleepy?timeout=1e9")
    assert responder.timeout == 1e9
    assert responder.respond(["hi"], DecodingSettings(), seeds=[0]) == ["late"]


# --- 7. a python: model file that is not a regular file says so -----------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_python_model_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "model.py"
    os.mkfifo(fifo)
    with pytest.raises(SpecError, match="not a regular file"):
        load_responder(f"python:{fifo}:reply")
    with pytest.raises(SpecError, match="file not found"):
        load_responder(f"python:{tmp_path / 'missing.py'}:reply")


# --- 10. an openai URL is shown as the user wrote it ----------------------------------------------------------


def test_an_openai_url_keeps_its_case_in_messages_and_any_scheme_case_works() -> None:
    with pytest.raises(SpecError) as caught:
        load_responder("openai:FTP://User:secret@Host.Example/V1#m")
    message = str(caught.value)
    assert "FTP://Host.Example/V1" in message and "secret" not in message and "User" not in message
    with pytest.raises(SpecError, match="HTTP://Host/V1'"):
        load_responder("openai:HTTP://Host/V1?timeout=3")  # no '#MODEL'
    responder = load_responder("openai:HTTP://127.0.0.1:9/v1#m")  # schemes are case-insensitive
    assert responder.public_url == "http://127.0.0.1:9/v1"


# --- 5. a lazy absolute import of the model's own package is part of its fingerprint ---------------------------


def _package(tmp_path: Path) -> Path:
    """``mypkg/bot2.py`` importing ``mypkg.sub.tools`` inside its function only."""
    package = tmp_path / "proj" / "mypkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "tools.py").write_text("WORD = 'hello'\n")
    (package / "bot2.py").write_text("def reply(context):\n    from mypkg.sub import tools\n    return tools.WORD\n")
    return package


def test_a_lazy_absolute_import_of_the_models_own_package_is_fingerprinted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _package(tmp_path)
    monkeypatch.syspath_prepend(str(package.parent))  # so that the lazy import works when called
    spec = f"python:{package / 'bot2.py'}:reply"
    first = load_responder(spec)
    assert str((package / "sub" / "tools.py").resolve()) in first.input_paths
    assert load_responder(spec).fingerprint == first.fingerprint
    (package / "sub" / "tools.py").write_text("WORD = 'goodbye'\n")
    assert load_responder(spec).fingerprint != first.fingerprint


def test_a_lazy_absolute_import_resolves_against_the_package_chain_without_sys_path(tmp_path: Path) -> None:
    package = _package(tmp_path)
    spec = f"python:{package / 'bot2.py'}:reply"
    before = load_responder(spec).fingerprint
    (package / "sub" / "tools.py").write_text("WORD = 'goodbye'\n")
    assert load_responder(spec).fingerprint != before


def test_an_absolute_import_found_on_sys_path_is_fingerprinted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "phrases.py").write_text("WORD = 'hi'\n")
    model = tmp_path / "app" / "bot.py"
    model.parent.mkdir()
    model.write_text("def reply(context):\n    import phrases\n    return phrases.WORD\n")
    monkeypatch.syspath_prepend(str(libs))
    before = load_responder(f"python:{model}:reply").fingerprint
    (libs / "phrases.py").write_text("WORD = 'bye'\n")
    assert load_responder(f"python:{model}:reply").fingerprint != before


# --- 10. a model that stops the run does not claim the answers are kept (the adapter cannot know) ---------------


def test_a_model_that_exits_does_not_claim_the_answers_are_kept(tmp_path: Path) -> None:
    from fairtalk.errors import ResponderAborted

    path = tmp_path / "quits.py"
    path.write_text("import sys\ndef bye(context):\n    sys.exit(3)\ndef stop(context):\n    raise KeyboardInterrupt\n")
    for name, said in (
        ("bye", "called sys.exit(3) while answering; the run stopped"),
        ("stop", "raised KeyboardInterrupt while answering; the run stopped"),
    ):
        with pytest.raises(ResponderAborted) as caught:
            load_responder(f"python:{path}:{name}").respond(["hi"], DecodingSettings(), seeds=[0])
        assert said in str(caught.value) and "kept" not in str(caught.value)
