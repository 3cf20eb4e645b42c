"""Tests for measures/_offense.py: profanity_check scoring, threshold, preprocessing, the hf: adapter."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.measures import Measure, Offense

PROFANE = "You are a fucking idiot, shut the fuck up."
BENIGN = "Have a lovely day with your family."


def test_profane_sentence_is_flagged_and_benign_is_not() -> None:
    offense = Offense()
    assert offense.score([PROFANE, BENIGN])["offense_rate"].tolist() == [1.0, 0.0]


def test_threshold_is_respected_inclusive() -> None:
    texts = [PROFANE, BENIGN, "this is kind of crap"]
    probabilities = Offense().probabilities(texts)
    for threshold in (0.0, 0.3, 0.5, 0.9, 1.0):
        flags = Offense(threshold=threshold).score(texts)["offense_rate"]
        assert flags.tolist() == (probabilities >= threshold).astype(float).tolist()
    middle = float(probabilities[2])
    assert Offense(threshold=middle).score(texts[2:])["offense_rate"].tolist() == [1.0]
    assert Offense(threshold=min(middle + 1e-6, 1.0)).score(texts[2:])["offense_rate"].tolist() == [0.0]


def test_repeated_punctuation_is_collapsed_before_scoring() -> None:
    from profanity_check import predict_prob

    raw = "what the hell!!!!!!!!"
    assert Offense().probabilities([raw])[0] == pytest.approx(predict_prob(["what the hell!"])[0])


def test_empty_input_and_protocol_fields() -> None:
    offense = Offense()
    assert offense.score([])["offense_rate"].shape == (0,)
    assert isinstance(offense, Measure)
    assert offense.keys == ("offense_rate",) and offense.kind == "rate"
    assert dict(offense.higher_is_better) == {"offense_rate": False}
    assert "alt-profanity-check 1" in offense.version
    assert offense.config == {"scorer": "profanity_check", "threshold": 0.5, "preprocess": "collapse repeated punctuation"}


def test_bad_scorer_and_threshold_are_spec_errors() -> None:
    with pytest.raises(SpecError, match="unknown offense scorer 'profanity'; did you mean 'profanity_check'"):
        Offense("profanity")
    with pytest.raises(SpecError, match=r"must be in \[0, 1\]"):
        Offense(threshold=1.5)
    with pytest.raises(SpecError, match="unknown offense scorer 'hf:'"):
        Offense("hf:")


def _tiny_model(
    directory: Path, labels: tuple[str, ...], *, bias: tuple[float, ...] | None = None, multi_label: bool = False
) -> str:
    """Save a randomly initialised 1-layer BERT classifier and a 20-word tokenizer; returns the hf: spec."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    words = [
        "you",
        "are",
        "a",
        "idiot",
        "have",
        "lovely",
        "day",
        "with",
        "your",
        "family",
        "the",
        "cat",
        "sat",
        "on",
        "mat",
        "hello",
    ]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(directory / "vocab.txt"))
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
        problem_type="multi_label_classification" if multi_label else "single_label_classification",
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(config)
    if bias is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return f"hf:{directory}"


def _reference(spec: str, texts: list[str]) -> np.ndarray:
    """Softmax probabilities computed one text at a time, without batching."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = spec.removeprefix("hf:")
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.inference_mode():
        rows = [torch.softmax(model(**tokenizer(t, return_tensors="pt")).logits, -1)[0].numpy() for t in texts]
    return np.array(rows)


def test_hf_adapter_sums_offensive_label_probabilities_in_input_order(tmp_path: Path) -> None:
    spec = _tiny_model(tmp_path / "m", ("clean", "offensive"))
    texts = ["you are a idiot", "hello", "have a lovely day with your family", "", "the cat sat on the mat!!!"]
    offense = Offense(spec, offensive_labels=("OFFENSIVE",), batch_size=2, device="cpu")
    probabilities = offense.probabilities(texts)
    expected = _reference(spec, [t.replace("!!!", "!") for t in texts])[:, 1]
    np.testing.assert_allclose(probabilities, expected, atol=1e-5)
    threshold = float(np.median(probabilities))
    flags = Offense(spec, threshold=threshold, offensive_labels=("offensive",)).score(texts)["offense_rate"]
    assert flags.tolist() == (expected >= threshold).astype(float).tolist()
    assert "transformers" in offense.version and offense.config["offensive_labels"] == ["OFFENSIVE"]


def test_hf_adapter_label_mapping_decides_what_is_offensive(tmp_path: Path) -> None:
    spec = _tiny_model(tmp_path / "m", ("LABEL_0", "LABEL_1"), bias=(0.0, 5.0))
    texts = ["hello", "you are a idiot"]
    assert Offense(spec).score(texts)["offense_rate"].tolist() == [1.0, 1.0]  # LABEL_1 is a default
    assert Offense(spec, offensive_labels=("LABEL_0",)).score(texts)["offense_rate"].tolist() == [0.0, 0.0]
    with pytest.raises(SpecError, match="none of the labels .* is listed in offensive_labels.*LABEL_0, LABEL_1"):
        Offense(spec, offensive_labels=("toxic",)).score(texts)


def test_hf_adapter_multi_label_uses_largest_sigmoid(tmp_path: Path) -> None:
    spec = _tiny_model(tmp_path / "m", ("toxic", "insult", "neutral"), bias=(-3.0, 1.0, 4.0), multi_label=True)
    probabilities = Offense(spec, offensive_labels=("toxic", "insult")).probabilities(["hello"])
    assert probabilities[0] == pytest.approx(1 / (1 + np.exp(-1.0)), abs=1e-6)


def test_hf_adapter_reports_unloadable_models_and_missing_transformers(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("transformers")
    with pytest.raises(SpecError, match="cannot load the Hugging Face classifier"):
        Offense(f"hf:{tmp_path}").score(["hello"])
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(FairtalkError, match=r"pip install 'fairtalk\[hf\]'"):
        Offense("hf:some/model").score(["hello"])


def test_hatesonar_scorer_runs_without_the_en_us_locale() -> None:
    pytest.importorskip("hatesonar")
    offense = Offense("hatesonar")
    probabilities = offense.probabilities(["have a lovely day", "The white person is at the door."])
    assert probabilities.shape == (2,) and ((0 <= probabilities) & (probabilities <= 1.0 + 1e-9)).all()
    assert "hatesonar" in offense.version


def test_hatesonar_missing_is_a_clear_error(monkeypatch) -> None:  # noqa: ANN001
    import builtins

    real_import = builtins.__import__

    def no_sonar(name, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if name == "hatesonar":
            raise ImportError("no hatesonar")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sonar)
    with pytest.raises(FairtalkError, match="pip install hatesonar"):
        Offense("hatesonar")
