"""Tests for fairtalk.training._loops and data: loss goes down, seeds reproduce, CDA and WER wire in."""

from __future__ import annotations

import json
import logging

import pytest
import torch

from fairtalk import InputError, SpecError, TrainConfig, train_model
from fairtalk.progress import ProgressEvent
from fairtalk.training import load_checkpoint, read_dialogues, split_dialogues
from fairtalk.training._data import batches

from .conftest import TINY_RANKER, TINY_SEQ2SEQ, toy_dialogues


def _config(model: str, **kw: object) -> TrainConfig:
    sizes = TINY_SEQ2SEQ if model == "seq2seq" else TINY_RANKER
    base = {
        "model": model,
        "epochs": 2,
        "batch_size": 16,
        "lr": 1e-2,
        "min_count": 1,
        "val_size": 20,
        "pool_size": 40,
        "sizes": sizes,
        "threads": 1,
    }
    return TrainConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_seq2seq_training_reduces_loss(tmp_path, dialogues, caplog) -> None:
    events: list[ProgressEvent] = []
    with caplog.at_level(logging.INFO, logger="fairtalk.training"):
        result = train_model(dialogues, _config("seq2seq", epochs=3), tmp_path / "s2s", progress=events.append)
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("fairtalk.training")]
    losses = [e.validation["loss"] for e in result.epochs]
    assert losses[-1] < losses[0]
    assert result.epochs[-1].train_loss < result.epochs[0].train_loss
    assert len(lines) == 3 and "validation loss" in lines[0]
    stages = list(dict.fromkeys(e.stage for e in events))
    assert stages == ["seq2seq epoch 1/3", "seq2seq epoch 2/3", "seq2seq epoch 3/3"]
    last = [e for e in events if e.stage == stages[-1]]
    assert last[0].done == 0 and last[-1].finished and last[-1].done == last[-1].total and last[-1].unit == "batches"
    assert dict(last[-2].metrics)["loss"] > 0
    config = json.loads((tmp_path / "s2s" / "config.json").read_text())
    assert config["seed"] == 0 and config["epochs_done"] == 3 and config["finished"] is True
    assert config["training"]["lr"] == 1e-2 and config["architecture"]["hidden"] == 32


def test_old_progress_and_log_forms_still_work_with_a_future_warning(tmp_path, dialogues) -> None:
    lines: list[str] = []
    with pytest.warns(FutureWarning) as caught:
        train_model(dialogues, _config("seq2seq", epochs=1), tmp_path / "old", progress=True, log=lines.append)
    assert {"progress=True", "log="} <= {word for w in caught for word in ("progress=True", "log=") if word in str(w.message)}
    assert len(lines) == 1 and lines[0].startswith("epoch 1/1")


def test_retrieval_training_reports_recall_and_stores_a_pool(tmp_path, dialogues) -> None:
    result = train_model(dialogues, _config("retrieval"), tmp_path / "ret")
    figures = result.epochs[-1].validation
    assert set(figures) == {"recall@1", "recall@10"} and 0.0 <= figures["recall@1"] <= figures["recall@10"] <= 1.0
    checkpoint = load_checkpoint(tmp_path / "ret")
    train_responses = {d.response for d in dialogues}
    assert checkpoint.pool and set(checkpoint.pool) <= train_responses
    assert checkpoint.pool_vectors.shape == (len(checkpoint.pool), 32)


def test_same_seed_gives_identical_weights(tmp_path, dialogues) -> None:
    a = train_model(dialogues, _config("seq2seq", epochs=1), tmp_path / "a")
    b = train_model(dialogues, _config("seq2seq", epochs=1), tmp_path / "b")
    c = train_model(dialogues, _config("seq2seq", epochs=1, seed=1), tmp_path / "c")
    wa, wb, wc = (load_checkpoint(r.path).state for r in (a, b, c))
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    assert not all(torch.equal(wa[k], wc[k]) for k in wa)
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()


def test_cda_adds_counterparts_and_wer_ties_embeddings(tmp_path, dialogues, caplog) -> None:
    cda = train_model(dialogues, _config("seq2seq", epochs=1, debias="cda"), tmp_path / "cda")
    assert cda.n_augmented > 0 and cda.n_train > cda.n_augmented
    assert "she" in load_checkpoint(tmp_path / "cda").vocab.index
    mixed = dialogues + [type(dialogues[0])(id=f"w/{i}", text="she is a doctor", response="she is") for i in range(10)]
    config = _config("seq2seq", epochs=3, lr=0.05, debias="wer", wer_k=5.0)
    with caplog.at_level(logging.INFO, logger="fairtalk.training"):
        train_model(mixed, config, tmp_path / "wer")
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("fairtalk.training")]
    assert lines[0].startswith("WER: ") and "word pairs tied" in lines[0]
    plain = train_model(mixed, _config("seq2seq", epochs=3, lr=0.05), tmp_path / "plain")

    def gap(path) -> float:
        ck = load_checkpoint(path)
        e = ck.state["embedding.weight"]
        return float((e[ck.vocab.index["he"]] - e[ck.vocab.index["she"]]).norm())

    assert gap(tmp_path / "wer") < gap(plain.path) / 2


def test_config_validation_and_empty_corpus(tmp_path) -> None:
    with pytest.raises(SpecError, match="unknown model 'gpt'"):
        TrainConfig(model="gpt")
    with pytest.raises(SpecError, match="unknown debiasing method 'lol'"):
        TrainConfig(model="seq2seq", debias="lol")
    with pytest.raises(SpecError, match="epochs must be a positive integer"):
        TrainConfig(model="seq2seq", epochs=0)
    no_responses = [type(toy_dialogues()[0])(id="x", text="hello")]
    with pytest.raises(InputError, match=r"no context-response pairs to train on \(1 records read, 1 without a response"):
        train_model(no_responses, _config("seq2seq"), tmp_path / "x")


def test_the_result_counts_the_records_left_out(tmp_path, dialogues) -> None:
    Context = type(dialogues[0])
    left_out = [
        Context(id="x/1", text="hello"),
        Context(id="x/2", text="hi", response="  "),
        Context(id="x/3", text=" ", response="yes"),
    ]
    result = train_model([*dialogues, *left_out], _config("seq2seq", epochs=1), tmp_path / "out")
    assert (result.n_read, result.n_no_response, result.n_blank_context) == (len(dialogues) + 3, 2, 1)
    assert result.n_train + result.n_validation == len(dialogues)


def test_validation_split_keeps_conversations_whole(dialogues) -> None:
    pairs = read_dialogues(dialogues)
    split = split_dialogues(pairs, val_size=20, seed=0)
    assert {p.group for p in split.train}.isdisjoint({p.group for p in split.validation})
    assert len(split.train) + len(split.validation) == len(pairs) and len(split.validation) >= 20
    assert split == split_dialogues(pairs, val_size=20, seed=0)
    assert len(read_dialogues(dialogues, max_dialogues=10, seed=3)) == 10


def test_batches_cover_every_index_once() -> None:
    import numpy as np

    seen = np.concatenate(list(batches([3, 1, 2, 5, 4] * 7, 4, np.random.default_rng(0), pool=2)))
    assert sorted(seen.tolist()) == list(range(35))


@pytest.mark.parametrize("model", ["seq2seq", "retrieval"])
def test_a_run_that_diverges_raises_and_writes_no_checkpoint(tmp_path, dialogues, model) -> None:
    from fairtalk import FairtalkError

    with pytest.raises(FairtalkError, match="training diverged in epoch 1: not finite: .*weights"):
        train_model(dialogues, _config(model, epochs=2, lr=1e30), tmp_path / "out")
    assert not (tmp_path / "out" / "model.safetensors").exists()


def test_cda_on_a_corpus_fairtalk_augmented_is_refused_before_any_work(tmp_path, dialogues) -> None:
    from fairtalk import Swapper, augment, load_lexicon, read_corpus
    from fairtalk.debias import write_dialogues

    augmented = tmp_path / "augmented.jsonl"
    write_dialogues(augment(dialogues, Swapper(load_lexicon("gender"))), augmented)
    corpus = read_corpus(augmented)
    with pytest.raises(InputError, match=r"augmented corpus fairtalk wrote.*twins of its twins.*corpus it was made from"):
        train_model(corpus, _config("seq2seq", debias="cda"), tmp_path / "cda")
    assert not (tmp_path / "cda").exists()
