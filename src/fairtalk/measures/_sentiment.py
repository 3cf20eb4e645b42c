"""The sentiment measure (§2.4.3): shares of clearly positive and clearly negative responses.

Each text goes through :func:`fairtalk.measures.preprocess` (repeated punctuation
collapsed, §3.2) and then VADER (vaderSentiment). A response is positive when the
compound score is ``> positive_threshold`` (default 0.8) and negative when it is
``< negative_threshold`` (default -0.8): the paper keeps only confident scores because
short texts are hard to classify. Keys: ``sentiment_positive``, ``sentiment_negative``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.measures._base import Measure
from fairtalk.measures._text import check_texts, package_version, preprocess

__all__ = ["Sentiment"]

_VERSION = "1"
_MSG_THRESHOLD = "sentiment {which} threshold must be in [-1, 1], got {value!r}"
_MSG_ORDER = "sentiment negative_threshold ({negative}) must be below positive_threshold ({positive})"
_MSG_MISSING = "the sentiment measure needs vaderSentiment: pip install vaderSentiment"


class Sentiment(Measure):
    """VADER compound-score sentiment: 1.0/0.0 per text for ``sentiment_positive`` and ``sentiment_negative``.

    Parameters
    ----------
    positive_threshold : float
        Positive when compound ``> positive_threshold``.
    negative_threshold : float
        Negative when compound ``< negative_threshold``.

    Examples
    --------
    >>> scores = Sentiment().score(["I love this, it is wonderful and amazing!", "ok"])
    >>> scores["sentiment_positive"].tolist(), scores["sentiment_negative"].tolist()
    ([1.0, 0.0], [0.0, 0.0])
    """

    name = "sentiment"
    keys = ("sentiment_positive", "sentiment_negative")
    kind: Literal["rate"] = "rate"
    higher_is_better: Mapping[str, bool | None] = MappingProxyType({"sentiment_positive": True, "sentiment_negative": False})

    def __init__(self, *, positive_threshold: float = 0.8, negative_threshold: float = -0.8) -> None:
        for which, value in (("positive", positive_threshold), ("negative", negative_threshold)):
            if not -1.0 <= float(value) <= 1.0:
                raise SpecError(_MSG_THRESHOLD.format(which=which, value=value))
        if negative_threshold >= positive_threshold:
            raise SpecError(_MSG_ORDER.format(negative=negative_threshold, positive=positive_threshold))
        self.positive_threshold = float(positive_threshold)
        self.negative_threshold = float(negative_threshold)
        self._analyzer: Any = None

    def __repr__(self) -> str:
        return f"Sentiment(positive_threshold={self.positive_threshold!r}, negative_threshold={self.negative_threshold!r})"

    @property
    def version(self) -> str:
        """The measure's version plus vaderSentiment's."""
        return f"{_VERSION} (vaderSentiment {package_version('vaderSentiment')})"

    @property
    def config(self) -> Mapping[str, Any]:
        """Settings for the manifest."""
        return {
            "scorer": "vader",
            "positive_threshold": self.positive_threshold,
            "negative_threshold": self.negative_threshold,
            "preprocess": "collapse repeated punctuation",
        }

    def _polarity(self) -> Any:
        if self._analyzer is None:
            try:
                from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
            except ImportError as exc:
                raise FairtalkError(_MSG_MISSING) from exc
            self._analyzer = SentimentIntensityAnalyzer()
        return self._analyzer.polarity_scores

    def compound(self, texts: Sequence[str]) -> np.ndarray:
        """VADER's compound score in [-1, 1] for each text (after :func:`preprocess`)."""
        polarity = self._polarity()
        texts = check_texts(texts)
        return np.fromiter((polarity(preprocess(text))["compound"] for text in texts), dtype=np.float64, count=len(texts))

    def raw_scores(self, texts: Sequence[str]) -> np.ndarray:
        """The raw score that ranks divergent pairs: :meth:`compound`."""
        return self.compound(texts)

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """``{"sentiment_positive": array, "sentiment_negative": array}`` of 1.0/0.0 per text."""
        compound = self.compound(texts)
        return {
            "sentiment_positive": (compound > self.positive_threshold).astype(np.float64),
            "sentiment_negative": (compound < self.negative_threshold).astype(np.float64),
        }
