"""Where ``train`` may write its checkpoint: a new or empty folder, or one holding a checkpoint; never a folder of the user's files.

Review finding: ``fairtalk train retrieval -o userdir`` wrote the checkpoint beside ``userdir/mine.txt``,
though the help says "a new or empty folder, or one holding a checkpoint of the same settings".
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from fairtalk import OutputError, TrainConfig, train_model
from fairtalk.cli import app
from fairtalk.files import WRITTEN
from fairtalk.training import Vocab, check_checkpoint_folder, save_checkpoint

from .conftest import toy_dialogues

runner = CliRunner()


def _users_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "userdir"
    folder.mkdir()
    (folder / "mine.txt").write_text("hi")
    return folder


def test_train_refuses_a_folder_of_the_users_files_before_reading_the_corpus(tmp_path: Path) -> None:
    folder = _users_folder(tmp_path)
    missing = tmp_path / "never-read.jsonl"  # refused before the corpus is read: no error about it
    result = runner.invoke(app, ["train", "retrieval", "--corpus", f"jsonl:{missing}", "-o", str(folder), "--epochs", "1"])
    flat = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert f"error: {folder}: holds 1 entry of no checkpoint (mine.txt); a checkpoint goes into a new or empty folder" in flat
    assert "training retrieval" not in result.output and "never-read" not in flat
    assert sorted(p.name for p in folder.iterdir()) == ["mine.txt"] and (folder / "mine.txt").read_text() == "hi"


def test_train_model_refuses_it_too_and_names_a_few_of_the_entries(tmp_path: Path) -> None:
    folder = _users_folder(tmp_path)
    for name in ("b.txt", "c.txt", "d"):
        (folder / name).mkdir() if name == "d" else (folder / name).write_text("x")
    with pytest.raises(OutputError, match=r"holds 4 entries of no checkpoint \(b\.txt, c\.txt, d, \.\.\.\)"):
        train_model(toy_dialogues(20), TrainConfig(model="seq2seq", epochs=1), folder)
    assert sorted(p.name for p in folder.iterdir()) == ["b.txt", "c.txt", "d", "mine.txt"]


def test_a_new_an_empty_and_a_checkpoints_folder_are_accepted(tmp_path: Path) -> None:
    check_checkpoint_folder(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    check_checkpoint_folder(tmp_path / "empty")
    ours = tmp_path / "ours"
    save_checkpoint(
        ours, config={"model": "seq2seq", "architecture": {}}, vocab=Vocab.build(["he is"]), state={"w": torch.zeros(2)}
    )
    (ours / "notes.txt").write_text("kept")  # beside a checkpoint, the user's notes stay (save_checkpoint keeps them)
    check_checkpoint_folder(ours)
    for name in ("config.json", "model.safetensors", "vocab.json"):
        (ours / name).unlink()
    assert sorted(p.name for p in ours.iterdir()) == [WRITTEN, "notes.txt"]
    with pytest.raises(OutputError, match=r"holds 1 entry of no checkpoint \(notes\.txt\)"):  # no checkpoint any more
        check_checkpoint_folder(ours)
