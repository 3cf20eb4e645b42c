"""Tests for fairtalk.training._decoding through the builtin responders (path= a toy checkpoint)."""

from __future__ import annotations

import pytest

from fairtalk import (
    DecodingSettings,
    InputError,
    TrainConfig,
    load_responder,
    train_model,
)

from .conftest import TINY_RANKER, TINY_SEQ2SEQ, toy_dialogues

CONTEXTS = ["is he a doctor 3?", "how are you 2", "something else entirely", ""]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("ck")
    common = {"epochs": 4, "batch_size": 16, "lr": 1e-2, "min_count": 1, "val_size": 20, "pool_size": 40, "threads": 1}
    train_model(toy_dialogues(), TrainConfig(model="seq2seq", sizes=TINY_SEQ2SEQ, **common), root / "s2s")
    train_model(toy_dialogues(), TrainConfig(model="retrieval", sizes=TINY_RANKER, **common), root / "ret")
    return root


def test_retrieval_returns_pool_candidates_batched_equals_one_by_one(checkpoints) -> None:
    model = load_responder(f"builtin:retrieval?path={checkpoints / 'ret'}")
    pool = set(model.candidates)
    greedy = DecodingSettings()
    batched = model.respond(CONTEXTS, greedy, seeds=[0] * 4)
    assert all(r in pool for r in batched)
    assert batched == [model.respond([c], greedy, seeds=[0])[0] for c in CONTEXTS]
    assert model.fingerprint.startswith("retrieval:builtin-transformer") and "transformer-" in model.fingerprint
    sampled = DecodingSettings(do_sample=True, top_k=5)
    assert model.respond(CONTEXTS, sampled, seeds=[1, 2, 3, 4]) == model.respond(CONTEXTS, sampled, seeds=[1, 2, 3, 4])


def test_retrieval_stored_pool_vectors_match_fresh_encodings(checkpoints, tmp_path) -> None:
    model = load_responder(f"builtin:retrieval?path={checkpoints / 'ret'}")
    pool_file = tmp_path / "pool.txt"
    pool_file.write_text("\n".join(model.candidates) + "\n")
    fresh = load_responder(f"builtin:retrieval?path={checkpoints / 'ret'}&pool={pool_file}")
    assert fresh.respond(CONTEXTS, DecodingSettings(), seeds=[0] * 4) == model.respond(
        CONTEXTS, DecodingSettings(), seeds=[0] * 4
    )


def test_seq2seq_greedy_beam_sample_batched_equals_one_by_one(checkpoints) -> None:
    model = load_responder("builtin:seq2seq", path=str(checkpoints / "s2s"), batch_size=2)
    for settings in (DecodingSettings(max_new_tokens=8), DecodingSettings(num_beams=3, max_new_tokens=8)):
        batched = model.respond(CONTEXTS, settings, seeds=[0] * 4)
        assert batched == [model.respond([c], settings, seeds=[0])[0] for c in CONTEXTS]
    assert model.respond(["is he a doctor 3?"], DecodingSettings(), seeds=[0])[0].startswith("yes he is a doctor")
    sampled = DecodingSettings(do_sample=True, temperature=1.5, max_new_tokens=8)
    first = model.respond(CONTEXTS, sampled, seeds=[5, 6, 7, 8])
    assert first == [model.respond([c], sampled, seeds=[s])[0] for c, s in zip(CONTEXTS, [5, 6, 7, 8])]
    assert model.fingerprint.startswith("builtin:seq2seq ") and '"checkpoint":' in model.fingerprint


def test_wrong_kind_and_missing_checkpoint(checkpoints, tmp_path) -> None:
    with pytest.raises(InputError, match="holds a retrieval checkpoint, not a seq2seq one"):
        load_responder(f"builtin:seq2seq?path={checkpoints / 'ret'}")
    with pytest.raises(InputError, match="checkpoint directory not found"):
        load_responder(f"builtin:retrieval?path={tmp_path / 'none'}")
