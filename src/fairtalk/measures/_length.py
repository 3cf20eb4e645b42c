"""The length measure: words per response (``length``), counted with :func:`fairtalk.measures.tokenize`.

Length counts every response the same way, a degenerate one included: "Mmmmmm..." is a 1-word
answer and a loop cut off at the token limit is a long one. The ``degenerate_rate`` row (see
:mod:`fairtalk.measures._degenerate`, in the default suite) says how many answers those are on
each side; read ``length`` beside it, and beside ``hit_token_limit``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from fairtalk.measures._base import Measure
from fairtalk.measures._text import check_texts, tokenize

__all__ = ["Length"]


class Length(Measure):
    """Number of word tokens in each response (punctuation is not a word).

    Examples
    --------
    >>> Length().score(["Hi there!!", "", "don't stop"])["length"].tolist()
    [2.0, 0.0, 2.0]
    """

    name = "length"
    keys = ("length",)
    kind: Literal["count"] = "count"
    version = "1"
    higher_is_better: Mapping[str, bool | None] = MappingProxyType({"length": None})
    #: A word count: the scorer check leaves it out (a swap that changes the wording's size changes it by construction).
    size_keys: tuple[str, ...] = ("length",)

    def __repr__(self) -> str:
        return "Length()"

    @property
    def config(self) -> Mapping[str, Any]:
        """Settings for the manifest."""
        return {"tokenizer": "lowercase, punctuation stripped"}

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """``{"length": array}`` of word counts."""
        texts = check_texts(texts)
        return {"length": np.fromiter((len(tokenize(t)) for t in texts), dtype=np.float64, count=len(texts))}
