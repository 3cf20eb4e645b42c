"""CDA that adds no counterpart is refused, as WER that ties no word pair is: never a plain copy called debiased.

Review finding: ``augment`` on a corpus without an axis word exited 0 ("counterparts added 0")
writing a plain copy, and ``train --debias cda`` recorded ``"debias": "cda"`` for a model
trained exactly as the baseline. Each refusal comes before any output or training.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.errors import InputError

runner = CliRunner()
_NO_COUNTERPART = "CDA adds no counterpart, so nothing would be debiased"


def _no_words(tmp_path: Path, n: int = 10) -> Path:
    path = tmp_path / "nowords.jsonl"
    rows = [{"context": f"i like pizza number {i}", "response": "me too"} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_augment_refuses_a_corpus_it_adds_no_counterpart_to(tmp_path: Path) -> None:
    corpus = _no_words(tmp_path, 2)
    output = tmp_path / "aug.jsonl"
    result = runner.invoke(app, ["augment", "--axis", "gender", "--corpus", f"jsonl:{corpus}", "-o", str(output)])
    assert result.exit_code == 2, result.output
    said = _flat(result.stderr)
    assert f"error: {_NO_COUNTERPART}: none of the 2 dialogue(s) of jsonl:{corpus} uses a word of the gender axis'" in said
    assert not output.exists()


def test_train_with_cda_refuses_a_corpus_it_adds_no_counterpart_to(tmp_path: Path) -> None:
    corpus = _no_words(tmp_path)
    out = tmp_path / "t"
    args = ["train", "seq2seq", "--corpus", f"jsonl:{corpus}", "--epochs", "1", "--debias", "cda", "--axis", "gender"]
    result = runner.invoke(app, [*args, "-o", str(out)])
    assert result.exit_code == 2, result.output
    said = _flat(result.stderr)
    assert f"error: {_NO_COUNTERPART}: none of the 8 training dialogue(s) of jsonl:{corpus}" in said, said
    assert "epoch 1/1" not in result.output and not out.exists()


def test_reproduce_debias_refuses_it_before_any_training(tmp_path: Path) -> None:
    corpus = _no_words(tmp_path)
    out = tmp_path / "rp"
    with pytest.raises(InputError, match=f"{_NO_COUNTERPART}: none of the 10 training dialogue"):
        fairtalk.reproduce_debias(out_dir=out, quick=True, corpus=f"jsonl:{corpus}", eval_corpus="builtin:chitchat")
    assert not out.exists()  # no baseline trained into the cache first
