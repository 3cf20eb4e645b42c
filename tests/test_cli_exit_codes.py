"""Exit codes: 1 is only ever a gate's verdict; a bug exits 3 with a one-line message, never a bare traceback."""

from __future__ import annotations

import sys

import pytest

import fairtalk
import fairtalk.stats
from fairtalk.cli import EXIT_INTERNAL, main


def test_an_unexpected_error_exits_3_with_a_message(monkeypatch, capsys) -> None:  # noqa: ANN001
    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(fairtalk.stats, "pairs_to_detect", broken)  # what `plan --measure` sizes with
    monkeypatch.setattr(sys, "argv", ["fairtalk", "plan", "--measure", "x", "--effect", "0.1", "--sd", "1"])
    monkeypatch.delenv("FAIRTALK_DEBUG", raising=False)
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == EXIT_INTERNAL == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: something nobody expected" in err and "Traceback" not in err
    monkeypatch.setenv("FAIRTALK_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main()


def test_help_documents_the_exit_codes(monkeypatch, capsys) -> None:  # noqa: ANN001
    monkeypatch.setattr(sys, "argv", ["fairtalk", "--help"])
    with pytest.raises(SystemExit):
        main()
    out = " ".join(capsys.readouterr().out.split())
    assert "Exit codes: 0 done; 1 a gate failed" in out and "3 an internal error" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["label", "X", "--port", "99999"], "error: Invalid value for '--port': Input should be less than or equal to 65535"),
        (["label", "X", "--n", "abc"], "error: Invalid value for '--n': Input should be a valid integer"),
        (
            ["prompts", "generate", "--seeds", "0"],
            "error: Invalid value for '--seeds': Input should be greater than or equal to 1",
        ),
        (["prompts", "generate", "--mode", "bogus"], "error: Invalid value for '--mode':"),
        (["train", "foo", "-o", "x"], "error: Invalid value for 'model':"),
        (["audit", "--no-such-option"], "error: No such option: --no-such-option"),
        (["no-such-command"], "error: No such command 'no-such-command'."),
        (["audit", "--pairs"], "error: Option '--pairs' requires an argument."),
    ],
)
def test_a_usage_error_is_one_plain_error_line_with_the_usage_hint(monkeypatch, capsys, args, message) -> None:  # noqa: ANN001
    monkeypatch.setattr(sys, "argv", ["fairtalk", *args])
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line for line in lines if line.startswith("error: ")] == [lines[-1]]  # one error line, the last
    assert lines[-1].startswith(message), lines
    assert not any(frame in line for line in lines for frame in "╭╰│─")  # no framed box
    if args[0] != "audit" or args[-1] != "--pairs":  # typer gives no usage for an option missing its value
        assert lines[0].startswith("Usage: ") and lines[1].startswith("Try '") and lines[1].endswith(" --help' for help.")
