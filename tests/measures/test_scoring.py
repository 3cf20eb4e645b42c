"""Tests for measures/scoring.py: score_unique scores each distinct text once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from fairtalk.measures import (
    AttributeWords,
    Diversity,
    Length,
    Offense,
    Refusal,
    Sentiment,
    score_unique,
)

TEXTS = [
    "I love this, it is wonderful and amazing!",
    "I don't know",
    "you are a fucking idiot",
    "I love this, it is wonderful and amazing!",
    "",
    "I don't know",
    "my wife is an engineer",
    "I don't know",
]


class Counting:
    """Wraps a measure and records every batch it is asked to score."""

    def __init__(self, measure) -> None:
        self.measure = measure
        self.name = measure.name
        self.keys = measure.keys
        self.kind = measure.kind
        self.version = measure.version
        self.higher_is_better = measure.higher_is_better
        self.calls: list[list[str]] = []

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        self.calls.append(list(texts))
        return self.measure.score(texts)


@pytest.mark.parametrize(
    "measure",
    [Offense(), Sentiment(), AttributeWords({"career": ["engineer"], "family": ["wife"]}), Length(), Refusal()],
    ids=lambda m: m.name,
)
def test_score_unique_equals_direct_scoring_and_scores_uniques_once(measure) -> None:
    counting = Counting(measure)
    result = score_unique(counting, TEXTS)
    direct = measure.score(TEXTS)
    assert list(result) == list(measure.keys)
    for key in measure.keys:
        np.testing.assert_array_equal(result[key], direct[key])
        assert result[key].dtype == np.float64 and result[key].shape == (len(TEXTS),)
    assert len(counting.calls) == 1
    assert sorted(counting.calls[0]) == sorted(set(TEXTS))


def test_empty_input() -> None:
    assert score_unique(Length(), [])["length"].shape == (0,)


def test_corpus_measures_and_misbehaving_measures_are_rejected() -> None:
    with pytest.raises(TypeError, match="corpus-level measure"):
        score_unique(Diversity(), TEXTS)  # type: ignore[arg-type]

    class Short(Counting):
        def score(self, texts):
            return {"length": np.zeros(1)}

    with pytest.raises(ValueError, match="returned"):
        score_unique(Short(Length()), ["a", "b"])

    class WrongKey(Counting):
        def score(self, texts):
            return {"other": np.zeros(len(texts))}

    with pytest.raises(ValueError, match="returned keys"):
        score_unique(WrongKey(Length()), ["a"])
