"""Tests for measures/_scoring.py: score_unique scores each distinct text once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pytest

from fairtalk.measures import (
    AttributeWords,
    Diversity,
    Length,
    Measure,
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


class Counting(Measure):
    """Wraps a measure and records every batch it is asked to score."""

    def __init__(self, measure: Measure) -> None:
        self.measure = measure
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.measure.name

    @property
    def keys(self) -> tuple[str, ...]:
        return self.measure.keys

    @property
    def kind(self) -> Literal["rate", "count"]:
        return self.measure.kind

    @property
    def version(self) -> str:
        return self.measure.version

    @property
    def higher_is_better(self) -> Mapping[str, bool | None]:
        return self.measure.higher_is_better

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
    with pytest.raises(TypeError, match="takes a Measure"):
        score_unique(object(), TEXTS)  # type: ignore[arg-type]

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
