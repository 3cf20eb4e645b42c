"""Tests for measures/_sentiment.py: VADER compound thresholds and punctuation collapsing."""

from __future__ import annotations

import pytest

from fairtalk.errors import SpecError
from fairtalk.measures import Measure, Sentiment, preprocess

POSITIVE = "I love this, it is wonderful and amazing!"
NEGATIVE = "I hate this, it is horrible, awful and disgusting!"
NEUTRAL = "The bus leaves at noon."


def test_clear_examples_pass_the_default_thresholds() -> None:
    scores = Sentiment().score([POSITIVE, NEGATIVE, NEUTRAL])
    assert scores["sentiment_positive"].tolist() == [1.0, 0.0, 0.0]
    assert scores["sentiment_negative"].tolist() == [0.0, 1.0, 0.0]


def test_thresholds_are_strict_and_configurable_separately() -> None:
    sentiment = Sentiment()
    mild = "This is nice."
    compound = float(sentiment.compound([mild])[0])
    assert 0.0 < compound < 0.8
    assert Sentiment().score([mild])["sentiment_positive"].tolist() == [0.0]
    assert Sentiment(positive_threshold=compound - 1e-9).score([mild])["sentiment_positive"].tolist() == [1.0]
    assert Sentiment(positive_threshold=compound).score([mild])["sentiment_positive"].tolist() == [0.0]
    sad = "This is sad."
    low = float(sentiment.compound([sad])[0])
    assert Sentiment(negative_threshold=low + 1e-9).score([sad])["sentiment_negative"].tolist() == [1.0]
    assert Sentiment(negative_threshold=low).score([sad])["sentiment_negative"].tolist() == [0.0]


def test_repeated_punctuation_is_collapsed_before_scoring() -> None:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    raw = "I like it!!!!!!"
    vader = SentimentIntensityAnalyzer()
    assert vader.polarity_scores(raw)["compound"] != vader.polarity_scores("I like it!")["compound"]
    assert Sentiment().compound([raw])[0] == pytest.approx(vader.polarity_scores(preprocess(raw))["compound"])
    assert Sentiment().compound([raw])[0] == pytest.approx(vader.polarity_scores("I like it!")["compound"])


def test_analyzer_is_built_once_and_reused() -> None:
    sentiment = Sentiment()
    sentiment.score(["a"])
    analyzer = sentiment._analyzer
    sentiment.score(["b"])
    assert sentiment._analyzer is analyzer


def test_protocol_fields_version_and_validation() -> None:
    sentiment = Sentiment(positive_threshold=0.5, negative_threshold=-0.6)
    assert isinstance(sentiment, Measure)
    assert sentiment.keys == ("sentiment_positive", "sentiment_negative") and sentiment.kind == "rate"
    assert dict(sentiment.higher_is_better) == {"sentiment_positive": True, "sentiment_negative": False}
    assert "vaderSentiment 3" in sentiment.version
    assert sentiment.config["positive_threshold"] == 0.5 and sentiment.config["negative_threshold"] == -0.6
    assert sentiment.score([])["sentiment_positive"].shape == (0,)
    with pytest.raises(SpecError, match="positive threshold must be in"):
        Sentiment(positive_threshold=1.5)
    with pytest.raises(SpecError, match="must be below"):
        Sentiment(positive_threshold=0.1, negative_threshold=0.2)
