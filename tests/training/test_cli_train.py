"""`fairtalk train` through typer's CliRunner, on a tiny JSONL corpus."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.training import load_checkpoint

from .conftest import toy_dialogues

runner = CliRunner()


def _corpus(tmp_path):
    path = tmp_path / "dialogues.jsonl"
    rows = [{"context": d.text, "response": d.response} for d in toy_dialogues(60)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return f"jsonl:{path}"


def test_train_retrieval_writes_a_checkpoint(tmp_path) -> None:
    out = tmp_path / "ret"
    result = runner.invoke(
        app,
        [
            "train",
            "retrieval",
            "--corpus",
            _corpus(tmp_path),
            "--epochs",
            "1",
            "--pool-size",
            "10",
            "--batch-size",
            "16",
            "--threads",
            "1",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "epoch 1/1" in result.output and "recall@1" in result.output
    assert f"wrote{out}" in "".join(result.output.split())  # a long path (pytest-xdist's temp dirs) wraps at 80 columns
    checkpoint = load_checkpoint(out)
    assert checkpoint.kind == "retrieval" and len(checkpoint.pool) == 10
    assert checkpoint.config["corpus"].startswith("jsonl:") and checkpoint.config["training"]["pool_size"] == 10


def test_train_rejects_unknown_model_and_debias(tmp_path) -> None:
    result = runner.invoke(app, ["train", "gpt", "-o", str(tmp_path / "x")])
    flat = " ".join(result.stderr.replace("│", " ").split())  # click's boxed errors wrap
    assert result.exit_code == 2 and "'gpt' is not one of 'seq2seq', 'retrieval'" in flat
    result = runner.invoke(
        app, ["train", "seq2seq", "--debias", "magic", "--corpus", _corpus(tmp_path), "-o", str(tmp_path / "x")]
    )
    flat = " ".join(result.stderr.replace("│", " ").split())
    assert result.exit_code == 2 and "'magic' is not one of 'none', 'cda', 'wer'" in flat
