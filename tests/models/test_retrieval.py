"""Tests for models/_retrieval.py: TF-IDF / bag-of-words retrieval over a candidate pool."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fairtalk import InputError, SpecError
from fairtalk.models import DecodingSettings, RetrievalResponder, load_responder

POOL = [
    "i love to cook pasta at home",
    "the doctor said i should rest",
    "football is my favourite sport",
    "my cat sleeps all day",
]


@pytest.fixture()
def pool_file(tmp_path: Path) -> Path:
    path = tmp_path / "pool.txt"
    path.write_text("\n".join(POOL[:2]) + "\n\n" + "\n".join(POOL[2:]) + "\n")
    return path


def test_greedy_returns_best_candidate(pool_file: Path) -> None:
    with load_responder(f"retrieval:{pool_file}") as model:
        out = model.respond(["what does your cat do", "did you see the doctor", "zzz"], DecodingSettings(), seeds=[0] * 3)
    assert out == [POOL[3], POOL[1], POOL[0]]  # no overlap: first candidate


def test_sampling_is_seeded_per_item(pool_file: Path) -> None:
    model = load_responder(f"retrieval:{pool_file}?encoder=bow")
    s = DecodingSettings(do_sample=True, temperature=0.5, top_k=3)
    a = model.respond(["cat", "doctor", "sport"], s, seeds=[1, 2, 3])
    assert a[1:] == model.respond(["doctor", "sport"], s, seeds=[2, 3])
    assert all(x in POOL for x in a)
    samples = {model.respond(["cat"], s, seeds=[i])[0] for i in range(30)}
    assert POOL[3] in samples and len(samples) > 1


def test_jsonl_pool_fingerprint_and_custom_encoder(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    path.write_text("\n".join(json.dumps({"response": p}) for p in POOL) + "\n")
    model = load_responder(f"retrieval:{path}")
    assert model.candidates == tuple(POOL)
    assert '"encoder":"tfidf"' in model.fingerprint and '"pool":' in model.fingerprint

    class Dense:
        fingerprint = "dense-test"

        def fit(self, pool):
            return self

        def encode(self, texts):
            return np.array([[len(t), 1.0] for t in texts]) / 100

    custom = RetrievalResponder(POOL, encoder=Dense())
    assert custom.respond(["x" * 200], DecodingSettings(), seeds=[0]) == [max(POOL, key=len)]
    assert "dense-test" in custom.fingerprint


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="candidate pool not found"):
        load_responder(f"retrieval:{tmp_path / 'x.txt'}")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(InputError, match="no candidates"):
        load_responder(f"retrieval:{empty}")
    with pytest.raises(SpecError, match="unknown retrieval encoder 'bert'"):
        RetrievalResponder(POOL, encoder="bert")


def test_the_run_store_hands_all_misses_in_one_call_and_gets_every_answer_back(pool_file: Path) -> None:
    from fairtalk.store import CachingResponder, RunStore

    class Counting(RetrievalResponder):
        calls: list[list[str]] = []

        def respond(self, contexts, settings, *, seeds):
            self.calls.append(list(contexts))
            return super().respond(contexts, settings, seeds=seeds)

    contexts = ["did you see the doctor", "what does your cat do", "zzz", "sport", "what does your cat do"] * 30
    seeds = list(range(len(contexts)))
    plain = RetrievalResponder(pool_file).respond(contexts, DecodingSettings(), seeds=seeds)
    model = Counting(pool_file)
    assert model.supports_stream
    streamed = dict(model.respond_stream(contexts, DecodingSettings(), seeds=seeds))
    assert sorted(streamed) == list(range(len(contexts))) and [streamed[i] for i in seeds] == plain
    assert len(model.calls) == 1 and [len(c) for c in model.calls[0]] == sorted(map(len, contexts), reverse=True)  # longest first
    model.calls.clear()
    with RunStore(":memory:") as store:
        cached = CachingResponder(model, store, batch_size=8)
        assert cached.respond(contexts, DecodingSettings(), seeds=seeds) == plain
    assert len(model.calls) == 1  # not one call per batch of 8
    sampled = DecodingSettings(do_sample=True, temperature=0.5, top_k=3)
    streamed = dict(model.respond_stream(contexts, sampled, seeds=seeds))
    assert [streamed[i] for i in seeds] == model.respond(contexts, sampled, seeds=seeds)  # seeded per item, in any order
