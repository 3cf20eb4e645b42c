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


def test_train_refuses_an_lr_that_is_not_a_finite_positive_number(tmp_path) -> None:
    for value in ("nan", "-1", "inf", "0"):
        out = tmp_path / f"lr{value}"
        result = runner.invoke(app, ["train", "seq2seq", "--corpus", _corpus(tmp_path), "--lr", value, "-o", str(out)])
        assert result.exit_code == 2, (value, result.output)
        assert "error: --lr must be a finite number > 0" in result.stderr and "internal error" not in result.stderr
        assert not out.exists()


def test_train_that_diverges_is_an_error_and_keeps_the_earlier_checkpoint(tmp_path) -> None:
    out = tmp_path / "ckpt"
    args = ["train", "seq2seq", "--corpus", _corpus(tmp_path), "--epochs", "1", "--threads", "1", "-o", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    before = load_checkpoint(out).sha256
    result = runner.invoke(app, [*args, "--lr", "1e30"])  # finite, but the weights blow up: loss nan, float16 inf
    assert result.exit_code == 2, result.output
    flat = " ".join(result.stderr.split())
    assert "error: training diverged in epoch 1: not finite:" in flat and "no checkpoint was written for it" in flat
    assert "wrote" not in result.stdout
    assert load_checkpoint(out).sha256 == before  # the good checkpoint is left as it was
