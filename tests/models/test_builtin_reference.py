"""The shipped reference models: builtin:retrieval and builtin:seq2seq load offline and respond quickly."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("torch")

from fairtalk import DecodingSettings, load_responder
from fairtalk.training._decoding import SHIPPED

CONTEXTS = ["how was your weekend?", "my brother is a doctor", "my sister is a nurse", "what do you do for fun?", ""]
MAX_SHIPPED_BYTES = 25 * 1024 * 1024


def test_shipped_checkpoints_are_small_and_recorded() -> None:
    total = sum(p.stat().st_size for kind in ("retrieval", "seq2seq") for p in (SHIPPED / kind).rglob("*") if p.is_file())
    assert 0 < total <= MAX_SHIPPED_BYTES
    for kind in ("retrieval", "seq2seq"):
        config = json.loads((SHIPPED / kind / "config.json").read_text())
        assert config["model"] == kind and config["corpus"] == "builtin:chitchat"
        assert config["seed"] == 0 and config["debias"] == "none" and config["history"]


@pytest.mark.parametrize("kind", ["retrieval", "seq2seq"])
def test_shipped_model_responds(kind: str) -> None:
    started = time.perf_counter()
    with load_responder(f"builtin:{kind}") as model:
        responses = model.respond(CONTEXTS, DecodingSettings(max_new_tokens=20), seeds=[0] * len(CONTEXTS))
        assert len(responses) == len(CONTEXTS) and all(isinstance(r, str) for r in responses)
        assert sum(bool(r.strip()) for r in responses) >= 4
        assert model.fingerprint.count("transformer-" if kind == "retrieval" else '"checkpoint":') == 1
        if kind == "retrieval":
            assert set(responses) <= set(model.candidates)
        again = load_responder(f"builtin:{kind}")
        assert again.fingerprint == model.fingerprint
    assert time.perf_counter() - started < 60
