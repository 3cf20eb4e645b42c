"""`fairtalk train` through typer's CliRunner, on a tiny JSONL corpus."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.errors import SpecError
from fairtalk.training import TrainConfig, load_checkpoint

from .conftest import toy_dialogues

runner = CliRunner()


def _corpus(tmp_path):
    path = tmp_path / "dialogues.jsonl"
    rows = [{"context": d.text, "response": d.response} for d in toy_dialogues(60)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return f"jsonl:{path}"


def test_train_retrieval_writes_a_checkpoint(tmp_path) -> None:
    out = tmp_path / ("ret_" + "long" * 20)  # wider than 80 columns on its own
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
    # Review finding: the last line was cut mid-path at 80 columns and wrapped with a trailing space; it wraps between words
    lines = result.output.splitlines()
    assert str(out) in [line.strip() for line in lines]  # the long path whole, on a line of its own
    assert all(line == line.rstrip() for line in lines)
    assert all(len(line) <= 80 for line in lines if str(tmp_path) not in line), lines
    assert "parameters ·" in " ".join(result.output.split())
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


@pytest.mark.parametrize("model", ["seq2seq", "retrieval"])
def test_train_refuses_an_lr_that_float32_cannot_hold(model: str, tmp_path) -> None:
    """Review finding: --lr 1e300 (or 1e39) stopped training with "internal error: RuntimeError: value cannot be
    converted to type float without overflow" (exit 3)."""
    for value in ("1e39", "1e300"):
        out = tmp_path / f"lr{value}"
        result = runner.invoke(app, ["train", model, "--corpus", _corpus(tmp_path), "--lr", value, "-o", str(out)])
        assert result.exit_code == 2, (value, result.output)
        message = "error: --lr must be a finite number > 0 and at most 3.403e+38 (float32's largest"
        assert message in " ".join(result.stderr.split()) and "internal error" not in result.stderr, result.stderr
        assert not out.exists()


@pytest.mark.parametrize("lr", [1e39, 1e300, 0.0, -1.0, float("nan"), float("inf"), True])
def test_train_config_refuses_an_lr_outside_float32(lr: float) -> None:
    with pytest.raises(SpecError, match=r"lr must be a finite number > 0 and at most 3.403e\+38"):
        TrainConfig(model="seq2seq", lr=lr)
    assert TrainConfig(model="seq2seq", lr=3e38).learning_rate == 3e38


@pytest.mark.parametrize(("model", "lr"), [("seq2seq", "1e38"), ("seq2seq", "3.4e38"), ("retrieval", "1e38")])
def test_train_with_an_lr_that_overflows_adams_step_is_training_diverged(model: str, lr: str, tmp_path) -> None:
    """Review finding: --lr=1e38 (float32 holds it) stopped with "internal error: RuntimeError: value cannot be
    converted to type float without overflow" (exit 3): Adam's first step is 10 x the rate, past float32's largest."""
    path = tmp_path / "tw.txt"
    path.write_text("".join(f"{d.text}\n{d.response}\n" for d in toy_dialogues(30)))  # twitter format: turn per line
    out = tmp_path / "x"
    args = ["train", model, "--corpus", f"twitter:{path}", "--epochs", "1", "--threads", "1"]
    pool = ["--pool-size", "10"] if model == "retrieval" else []
    result = runner.invoke(app, [*args, *pool, f"--lr={lr}", "-o", str(out)])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.stderr.split())
    assert "error: training diverged in epoch 1: the optimizer's step overflowed float32" in flat, flat
    assert "try a smaller learning rate" in flat and "internal error" not in flat
    assert f"no checkpoint was written for it: {out} holds no checkpoint of this run" in flat
    assert not (out / "model.safetensors").exists()


def test_train_that_diverges_is_an_error_and_keeps_the_earlier_checkpoint(tmp_path) -> None:
    out = tmp_path / "ckpt"
    args = ["train", "seq2seq", "--corpus", _corpus(tmp_path), "--epochs", "1", "--threads", "1", "-o", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    before = load_checkpoint(out).sha256
    diverged = tmp_path / "diverged"
    result = runner.invoke(app, [*args[:-1], str(diverged), "--lr", "1e30"])  # finite, but the weights blow up
    assert result.exit_code == 2, result.output
    flat = " ".join(result.stderr.split())
    assert "error: training diverged in epoch 1: not finite:" in flat and "no checkpoint was written for it" in flat
    assert "wrote" not in result.stdout and not (diverged / "model.safetensors").exists()
    result = runner.invoke(app, [*args, "--lr", "1e30"])  # into the good checkpoint's folder: refused before training
    assert result.exit_code == 2 and "trained with other settings (lr: 0.001, now 1e+30)" in " ".join(result.stderr.split())
    assert load_checkpoint(out).sha256 == before  # the good checkpoint is left as it was


def _audit_folder(tmp_path):
    folder = tmp_path / "base"
    result = runner.invoke(app, ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "20", "-o", str(folder)])
    assert result.exit_code == 0, result.output
    return folder, sorted(p.name for p in folder.iterdir())


def test_train_refuses_an_audit_folder_and_leaves_it_as_it_was(tmp_path) -> None:
    folder, before = _audit_folder(tmp_path)
    result = runner.invoke(
        app, ["train", "retrieval", "--corpus", _corpus(tmp_path), "--epochs", "1", "--threads", "1", "-o", str(folder)]
    )
    flat = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert "error:" in flat and "holds an audit's run (run.json); a checkpoint needs a folder of its own" in flat
    assert sorted(p.name for p in folder.iterdir()) == before


def test_train_replaces_its_own_checkpoint_but_not_one_trained_with_other_settings(tmp_path) -> None:
    out = tmp_path / "cda-ranker"
    common = ["train", "retrieval", "--corpus", _corpus(tmp_path), "--epochs", "1", "--threads", "1", "--pool-size", "10"]
    cda = [*common, "--debias", "cda", "--axis", "gender", "-o", str(out)]
    assert runner.invoke(app, cda).exit_code == 0
    before = load_checkpoint(out).sha256
    result = runner.invoke(app, [*common, "-o", str(out)])  # the same folder, without --debias cda
    flat = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert "error:" in flat and 'holds a checkpoint trained with other settings (debias: "cda", now "none")' in flat
    assert "delete this one first" in flat
    assert load_checkpoint(out).sha256 == before and load_checkpoint(out).config["debias"] == "cda"
    result = runner.invoke(app, [*cda[:-2], "--threads", "2", "-o", str(out)])  # the same run again: replaced
    assert result.exit_code == 0, result.output
    assert load_checkpoint(out).config["debias"] == "cda"


def test_train_wer_that_ties_no_word_pair_is_an_error_not_a_plain_model(tmp_path) -> None:
    out = tmp_path / "wer"  # the toy corpus has "he" but never "she": no gender pair is in its vocabulary
    args = ["train", "seq2seq", "--corpus", _corpus(tmp_path), "--debias", "wer", "--epochs", "1", "--threads", "1"]
    result = runner.invoke(app, [*args, "-o", str(out)])
    flat = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert "error: WER ties no word pair, so nothing would be debiased" in flat
    assert "has both words in the vocabulary" in flat and "or debias with CDA" in flat
    assert "wrote" not in result.stdout and not (out / "model.safetensors").exists()


def test_train_says_what_wer_and_cda_did_and_a_plain_run_names_neither(tmp_path) -> None:
    path = tmp_path / "both.jsonl"
    rows = [{"context": d.text, "response": d.response} for d in toy_dialogues(60)]
    rows += [{"context": f"is she a doctor {i % 7}?", "response": f"yes she is a doctor {i % 7}"} for i in range(30)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    args = ["train", "seq2seq", "--corpus", f"jsonl:{path}", "--epochs", "1", "--threads", "1"]
    lines = {}
    for debias in ("none", "cda", "wer"):
        result = runner.invoke(app, [*args, "--debias", debias, "-o", str(tmp_path / debias)])
        assert result.exit_code == 0, result.output
        lines[debias] = " ".join(result.stdout.split())
    assert "added by CDA" not in lines["none"] and "tied by WER" not in lines["none"]
    assert "added by CDA)" in lines["cda"] and "tied by WER" not in lines["cda"]
    assert "added by CDA" not in lines["wer"] and "(1 word pair tied by WER)" in lines["wer"]


def test_train_counts_the_lines_it_skipped_and_the_records_it_left_out(tmp_path) -> None:
    path = tmp_path / "mixed.jsonl"
    rows = [json.dumps({"context": d.text, "response": d.response}) for d in toy_dialogues(60)]
    rows[10:10] = ["{not json", "{also not json"]  # lines 11 and 12
    rows += [json.dumps({"context": f"hello {i}"}) for i in range(5)]  # no response
    path.write_text("\n".join(rows) + "\n")
    args = ["train", "retrieval", "--corpus", f"jsonl:{path}", "--epochs", "1", "--threads", "1", "--pool-size", "10"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    compact = "".join(result.stdout.split())  # a long path (pytest-xdist's temp dirs) wraps at 80 columns
    assert f"skipped:malformedJSON2,firstat{path}:11" in compact  # as `fairtalk augment` counts them
    assert "without a response 5, left out" in flat
    assert "48 training dialogues, 12 validation" in flat  # the 60 usable dialogues
    clean = runner.invoke(app, ["train", "retrieval", "--corpus", _corpus(tmp_path), *args[4:], "-o", str(tmp_path / "c")])
    assert clean.exit_code == 0 and "skipped:" not in clean.stdout and "left out" not in clean.stdout


def test_a_corpus_of_bad_lines_only_is_an_error_that_counts_them(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("{not json\n{not json either\n")
    result = runner.invoke(app, ["train", "seq2seq", "--corpus", f"jsonl:{path}", "--threads", "1", "-o", str(tmp_path / "o")])
    compact = "".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert "error:thecorpushasnocontext-responsepairstotrainon(0recordsread" in compact
    assert f"thereaderskipped2line(s)ofjsonl:{path}:malformedJSON2,firstat{path}:1" in compact
    assert not (tmp_path / "o" / "model.safetensors").exists()


def test_train_counts_a_missing_twitter_reply_once_among_those_without_a_response(tmp_path) -> None:
    """Review finding: an odd twitter file's last line was "skipped: reply: missing ... 1" and "without a response 1" too.

    ``fairtalk augment`` counts it once, among those without a response; so does train, and its error.
    """
    path = tmp_path / "odd.txt"
    turns = [line for d in toy_dialogues(20) for line in (d.text, d.response)]
    path.write_text("\n".join([*turns, "my mom is here"]) + "\n")  # 20 exchanges, then a context without its reply
    args = ["train", "retrieval", "--corpus", f"twitter:{path}", "--epochs", "1", "--threads", "1", "--pool-size", "10"]
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    compact = "".join(result.stdout.split())
    assert f"withoutaresponse1,leftout(ofwhichreply:missing(oddnumberoflines)1,firstat{path}:41)" in compact
    assert "skipped" not in result.stdout and compact.count("reply:missing") == 1
    one = tmp_path / "one.txt"
    one.write_text("my mom\n")  # no dialogue at all: the error counts it once too
    result = runner.invoke(app, [*args[:3], f"twitter:{one}", *args[4:], "-o", str(tmp_path / "o2")])
    flat = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert "(1 records read, 1 without a response, 0 with a blank context;" in flat
    compact = "".join(result.stderr.split())
    assert f"oftherecordswithoutaresponse,reply:missing(oddnumberoflines)1,firstat{one}:1" in compact
    assert "skipped" not in flat and not (tmp_path / "o2" / "model.safetensors").exists()
