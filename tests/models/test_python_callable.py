"""Tests for models/python/_responder.py: single and batched user callables."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairtalk import ResponderError, SpecError
from fairtalk.errors import BadResponse
from fairtalk.models import DecodingSettings, load_responder

S = DecodingSettings()
MODULE = """
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
"""


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
    with pytest.raises(BadResponse, match="returned int for the context 'a'; responses must be strings"):
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


def _package(tmp_path: Path) -> Path:
    """A model file importing a helper module, a helper package and (lazily) another module."""
    (tmp_path / "helper.py").write_text("GREETING = 'hello'\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("")
    (tmp_path / "tools" / "shout.py").write_text("def shout(t):\n    return t.upper()\n")
    (tmp_path / "lazy.py").write_text("SUFFIX = '!'\n")
    (tmp_path / "unrelated.py").write_text("X = 1\n")
    model = tmp_path / "bot.py"
    model.write_text(
        "from helper import GREETING\n"
        "from tools.shout import shout\n"
        "def reply(text):\n"
        "    import lazy\n"
        "    return shout(GREETING + ' ' + text) + lazy.SUFFIX\n"
    )
    return model


def test_fingerprint_covers_the_user_modules_the_model_imports(tmp_path: Path) -> None:
    model = _package(tmp_path)
    first = load_responder(f"python:{model}:reply")
    assert first.respond(["x"], S, seeds=[0]) == ["HELLO X!"]
    names = {Path(p).name for p in first.input_paths}
    assert names == {"bot.py", "helper.py", "__init__.py", "shout.py", "lazy.py"}  # not unrelated.py, not stdlib
    (tmp_path / "unrelated.py").write_text("X = 2\n")
    assert load_responder(f"python:{model}:reply").fingerprint == first.fingerprint
    for name, edit, answer in (
        ("helper.py", "GREETING = 'hi'\n", "HI X!"),
        ("tools/shout.py", "def shout(t):\n    return t\n", "hi x!"),
        ("lazy.py", "SUFFIX = '?'\n", "hi x?"),
    ):
        before = load_responder(f"python:{model}:reply").fingerprint
        (tmp_path / name).write_text(edit)
        after = load_responder(f"python:{model}:reply")
        assert after.fingerprint != before, name
        assert after.respond(["x"], S, seeds=[0]) == [answer]  # the edited code is what runs


def test_module_spec_fingerprint_covers_its_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "mybots"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rules.py").write_text("WORD = 'a'\n")
    (package / "bot.py").write_text("from .rules import WORD\ndef reply(t):\n    return WORD + t\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = load_responder("python:mybots.bot:reply").fingerprint
    (package / "rules.py").write_text("WORD = 'b'\n")
    assert load_responder("python:mybots.bot:reply").fingerprint != before


EXITS = """
import sys

def exits(text):
    sys.exit(3)

def interrupts(text):
    raise KeyboardInterrupt

def hangs_once(text):
    import time
    if text == "hang":
        time.sleep(30)
    return text
"""


def test_sys_exit_and_keyboard_interrupt_stop_the_run_with_a_message(tmp_path: Path) -> None:
    from fairtalk.errors import ResponderAborted

    path = tmp_path / "exits.py"
    path.write_text(EXITS)
    with pytest.raises(ResponderAborted, match=r"exits called sys.exit\(3\) while answering; the run stopped"):
        load_responder(f"python:{path}:exits").respond_each(["a", "b"], S, seeds=[0, 0])
    with pytest.raises(ResponderAborted, match="interrupts raised KeyboardInterrupt while answering"):
        load_responder(f"python:{path}:interrupts?batched=true").respond_each(["a", "b"], S, seeds=[0, 0])
    (tmp_path / "exit_on_import.py").write_text("import sys\nsys.exit(1)\ndef f(t):\n    return t\n")
    with pytest.raises(SpecError, match=r"importing .*exit_on_import.py.* called sys.exit\(1\)"):
        load_responder(f"python:{tmp_path / 'exit_on_import.py'}:f")


def test_a_batched_call_that_times_out_fails_whole_without_bisection(tmp_path: Path) -> None:
    from fairtalk.errors import ResponderTimeout

    path = tmp_path / "slow_batch.py"
    path.write_text(
        "import time\ncalls = []\ndef f(texts):\n    calls.append(len(texts))\n    time.sleep(5)\n"
        "    return texts\nf.batched = True\n"
    )
    model = load_responder(f"python:{path}:f?timeout=0.2")
    out = model.respond_each(["a", "b", "c", "d"], S, seeds=[0] * 4)
    assert all(isinstance(item, ResponderTimeout) for item in out)
    import sys as _sys

    module = next(m for name, m in _sys.modules.items() if name.startswith("_fairtalk_user_slow_batch"))
    assert module.calls == [4]  # one call, not 4 + 2 + 2 + 1 + 1 + 1 + 1


def test_a_single_function_streams_item_by_item_and_a_batched_one_does_not(tmp_path: Path) -> None:
    path = tmp_path / "counted.py"
    path.write_text(
        "calls = []\ndef f(text):\n    calls.append(text)\n    if text == 'bad':\n        raise ValueError('no')\n"
        "    return text * 2\ndef g(texts):\n    return texts\ng.batched = True\n"
    )
    single = load_responder(f"python:{path}:f")
    stream = single.respond_stream(["a", "bad", "c", "d"], S, seeds=[0] * 4)
    assert next(stream) == (0, "aa")
    index, error = next(stream)
    assert index == 1 and isinstance(error, ResponderError) and "raised ValueError: no" in str(error)
    stream.close()  # the store stops reading (a breaker tripped): no further call is made
    import sys as _sys

    module = next(m for name, m in _sys.modules.items() if name.startswith("_fairtalk_user_counted"))
    assert module.calls == ["a", "bad"]
    assert single.respond_each(["x", "bad"], S, seeds=[0, 0])[0] == "xx"
    assert not load_responder(f"python:{path}:g").supports_stream  # a batched function answers per batch


def test_what_a_model_prints_follows_a_redirect_of_stdout(tmp_path: Path) -> None:
    import contextlib
    import io

    path = tmp_path / "chatty.py"
    path.write_text("def f(text):\n    print('thinking about', text)\n    return text\n")
    caught = io.StringIO()
    model = load_responder(f"python:{path}:f")
    with contextlib.redirect_stdout(caught):  # what the CLI does under --json: the call runs on a worker thread
        assert model.respond(["hi"], S, seeds=[0]) == ["hi"]
    assert caught.getvalue() == "thinking about hi\n"


_LOAD_FROM_HERE = """
import sys
sys.path[:] = [p for p in sys.path if p not in ('', '.')]  # as the fairtalk console script runs: cwd not on sys.path
from fairtalk.errors import SpecError
from fairtalk.models.python._loading import load_callable
try:
    print(load_callable(sys.argv[1]).fn('hi'))
except SpecError as exc:
    print('SpecError:', exc)
"""


def test_a_module_spec_finds_a_module_in_the_current_folder(tmp_path) -> None:  # noqa: ANN001
    """``python:mybot:reply`` finds ./mybot.py from the ``fairtalk`` command, as ``python -m`` would; a missing one still fails clearly."""
    import subprocess
    import sys

    (tmp_path / "mybot_here.py").write_text("def reply(text):\n    return 'bot: ' + text\n", encoding="utf-8")

    def load(target: str) -> str:
        out = subprocess.run(
            [sys.executable, "-c", _LOAD_FROM_HERE, target], cwd=tmp_path, capture_output=True, text=True, check=True
        )
        return out.stdout.strip()

    assert load("mybot_here:reply") == "bot: hi"
    assert load("no_such_bot_module:reply") == (
        "SpecError: cannot import 'no_such_bot_module' for 'python:no_such_bot_module:reply': "
        "No module named 'no_such_bot_module'"
    )
    assert load("json:dumps") == '"hi"'  # an installed module is found as before


def test_a_lone_surrogate_is_a_bad_response_not_stored_altered(tmp_path: Path) -> None:
    """Review finding: a python: model returning "a\\ud800b" had it replaced by U+FFFD in responses.jsonl, with no
    count under -q. Like a non-string, it is now a bad response: a failure of its side, counted by kind."""
    bot = tmp_path / "surrogate_bot.py"
    bot.write_text(
        "def reply(text):\n    return 'a\\ud800b' if text == 'bad' else 'fine é'\n\n\n"
        "def many(texts):\n    return ['x\\udcff' if t == 'bad' else 'fine' for t in texts]\n\n\nmany.batched = True\n",
        encoding="utf-8",
    )
    model = load_responder(f"python:{bot}:reply")
    assert model.respond(["good"], S, seeds=[0]) == ["fine é"]
    with pytest.raises(BadResponse, match=r"returned a string holding a lone surrogate \(U\+D800 at character 1\)"):
        model.respond(["bad"], S, seeds=[0])
    found = load_responder(f"python:{bot}:many").respond_each(["good", "bad"], S, seeds=[0, 0])
    assert found[0] == "fine" and isinstance(found[1], BadResponse) and "U+DCFF at character 1" in str(found[1])


MULTILINE = """
def reply(text):
    raise ValueError("first line of the error\\n  second line of it")


def listed(texts):
    return [t.upper() for t in texts]


def tupled(text):
    return (text,)


def numbered(text):
    return 3
"""


def test_a_raised_error_s_lines_are_one_line_in_the_failure(tmp_path: Path) -> None:
    """An `error:` line is one line: a user's multi-line exception text was carried into it with its line breaks."""
    path = tmp_path / "multiline.py"
    path.write_text(MULTILINE)
    (out,) = load_responder(f"python:{path}:reply").respond_each(["a"], S, seeds=[0])
    assert isinstance(out, ResponderError)
    assert "\n" not in str(out) and "raised ValueError: first line of the error second line of it" in str(out)
    (tmp_path / "breaks_on_import.py").write_text("raise ImportError('no such thing\\nsee the docs')\n")
    with pytest.raises(SpecError) as caught:
        load_responder(f"python:{tmp_path / 'breaks_on_import.py'}:f")
    assert "\n" not in str(caught.value) and "no such thing see the docs" in str(caught.value)


def test_a_list_returned_for_one_context_hints_at_batched(tmp_path: Path) -> None:
    """A batched function given without ?batched=true failed "returned list … responses must be strings", no hint."""
    path = tmp_path / "batched_bot.py"
    path.write_text(MULTILINE)
    hint = "(a batched function? add ?batched=true to the spec)"
    for name, kind in (("listed", "list"), ("tupled", "tuple")):
        (out,) = load_responder(f"python:{path}:{name}").respond_each(["hi"], S, seeds=[0])
        assert isinstance(out, BadResponse) and f"returned {kind} for the context" in str(out), out
        assert str(out).endswith("responses must be strings " + hint), out
    (out,) = load_responder(f"python:{path}:numbered").respond_each(["hi"], S, seeds=[0])
    assert isinstance(out, BadResponse) and str(out).endswith("responses must be strings"), out
    assert load_responder(f"python:{path}:listed?batched=true").respond(["hi"], S, seeds=[0]) == ["HI"]
