"""Exit codes: 1 is only ever a gate's verdict; a bug exits 3 with a one-line message, never a bare traceback."""

from __future__ import annotations

import sys

import pytest

import fairtalk
from fairtalk.cli import EXIT_INTERNAL, main


def test_an_unexpected_error_exits_3_with_a_message(monkeypatch, capsys) -> None:  # noqa: ANN001
    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(fairtalk, "pairs_needed", broken, raising=False)
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
