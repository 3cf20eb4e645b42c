"""`fairtalk similarity` stopped by Ctrl-C says what is kept and how to resume, as `respond` and `audit` do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app

runner = CliRunner()


def _pairs(tmp_path: Path) -> Path:
    contexts = [f"yesterday he told me about trip number {i}" for i in range(20)]
    pairs = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(list(fairtalk.build_pairs(contexts, fairtalk.load_lexicon("gender"))), pairs)
    return pairs


def _stopped_after(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """``fairtalk.<name>`` does its work (its answers stored), then Ctrl-C arrives before it returns."""
    real = getattr(fairtalk, name)

    def stopped(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(fairtalk, name, stopped)


@pytest.mark.parametrize("stored", [True, False])
def test_ctrl_c_during_similarity_says_where_the_answers_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stored: bool
) -> None:
    pairs = _pairs(tmp_path)
    store = tmp_path / "s.db"
    _stopped_after(monkeypatch, "similarity_test")
    args = ["similarity", "--pairs", str(pairs), "--model", "builtin:echo"]
    done = runner.invoke(app, [*args, *(["--store", str(store)] if stored else [])])
    said = " ".join(done.stderr.split())
    assert done.exit_code == 130, done.output
    if stored:
        assert f"interrupted; the answers so far are kept in {store}: re-run the same command to resume" in said
        assert store.is_file()
    else:
        assert "interrupted; the answers so far were not kept (no run store file: give --store FILE to keep them" in said
    _stopped_after(monkeypatch, "respond")  # respond says the same, word for word
    responded = runner.invoke(
        app,
        [
            "respond",
            "--pairs",
            str(pairs),
            "--model",
            "builtin:echo",
            "-o",
            str(tmp_path / "r.jsonl"),
            *(["--store", str(tmp_path / "r.db")] if stored else []),
        ],
    )
    assert responded.exit_code == 130, responded.output
    assert " ".join(responded.stderr.split()) == said.replace(str(store), str(tmp_path / "r.db"))


def test_ctrl_c_once_the_similarity_result_is_written_says_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = _pairs(tmp_path)
    out = tmp_path / "sim.json"
    import fairtalk.cli._similarity as command

    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # while the table is printed

    monkeypatch.setattr(command, "_similarity_table", stopped)
    done = runner.invoke(app, ["similarity", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(out)])
    assert done.exit_code == 130, done.output
    assert f"interrupted after {out} was written" in " ".join(done.stderr.split())
    assert out.is_file()
