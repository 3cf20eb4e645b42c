"""Tests for fairtalk.training._checkpoints: round trip, dtype, hashes, clear errors."""

from __future__ import annotations

import json

import pytest
import torch

from fairtalk import InputError
from fairtalk.training import Seq2Seq, Vocab, load_checkpoint, save_checkpoint

from .conftest import TINY_SEQ2SEQ


def _save(path, dtype="float32", **kw):
    torch.manual_seed(0)
    vocab = Vocab.build(["he is here", "she is there"], min_count=1)
    net = Seq2Seq(len(vocab), **TINY_SEQ2SEQ)
    config = {"model": "seq2seq", "architecture": {**TINY_SEQ2SEQ, "vocab_size": len(vocab)}, "seed": 3}
    save_checkpoint(path, config={**config, **kw.pop("config", {})}, vocab=vocab, state=net.state_dict(), dtype=dtype, **kw)
    return net, vocab


def test_round_trip_float32_and_float16(tmp_path) -> None:
    net, vocab = _save(tmp_path / "a")
    ck = load_checkpoint(tmp_path / "a")
    assert ck.kind == "seq2seq" and ck.vocab == vocab and ck.config["seed"] == 3 and ck.pool is None
    assert all(torch.equal(ck.state[k], v) for k, v in net.state_dict().items())
    _save(tmp_path / "h", dtype="float16")
    half = load_checkpoint(tmp_path / "h")
    assert half.state["embedding.weight"].dtype == torch.float32
    assert torch.allclose(half.state["embedding.weight"], net.embedding.weight, atol=1e-2)
    assert (tmp_path / "h" / "model.safetensors").stat().st_size < (tmp_path / "a" / "model.safetensors").stat().st_size
    assert ck.sha256 != half.sha256 and ck.sha256 == load_checkpoint(tmp_path / "a").sha256


def test_retrieval_pool_round_trip(tmp_path) -> None:
    vectors = torch.nn.functional.normalize(torch.randn(2, 4), dim=-1)
    _save(tmp_path / "r", config={"model": "retrieval"}, pool=["hi there", "bye"], pool_vectors=vectors)
    ck = load_checkpoint(tmp_path / "r")
    assert ck.pool == ("hi there", "bye") and torch.allclose(ck.pool_vectors, vectors, atol=1e-3)


def test_missing_and_corrupt_files_raise_input_errors(tmp_path) -> None:
    with pytest.raises(InputError, match="checkpoint directory not found"):
        load_checkpoint(tmp_path / "nowhere")
    _save(tmp_path / "c")
    (tmp_path / "c" / "model.safetensors").write_bytes(b"\x00\x01garbage")
    with pytest.raises(InputError, match=r"model.safetensors: corrupt checkpoint weights"):
        load_checkpoint(tmp_path / "c")
    (tmp_path / "c" / "vocab.json").unlink()
    with pytest.raises(InputError, match=r"vocab.json: checkpoint file missing"):
        load_checkpoint(tmp_path / "c")
    (tmp_path / "c" / "config.json").write_text("{")
    with pytest.raises(InputError, match="corrupt checkpoint config"):
        load_checkpoint(tmp_path / "c")
    (tmp_path / "c" / "config.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputError, match="not a fairtalk-checkpoint config"):
        load_checkpoint(tmp_path / "c")
    _save(tmp_path / "p", config={"model": "retrieval"}, pool=["x"])
    (tmp_path / "p" / "pool.json").write_text("[]")
    with pytest.raises(InputError, match="corrupt candidate pool"):
        load_checkpoint(tmp_path / "p")
