"""Shape features of a text for the regard classifier: what marks an "other" continuation (loops, question chains, drift).

Word n-grams see topics; these see form. Each feature is in [0, 1]:

- ``repetition``: share of repeated word trigrams (a loop repeats itself);
- ``questions``: question marks, three or more counting as 1 (a chain of questions says nothing);
- ``subject_later``: the subject (``XYZ``) is mentioned again after the first six words;
- ``subject_share``: how much of the text is the subject token, times 10, capped;
- ``symbols``: share of characters that are neither letters nor spaces (broken text);
- ``dots``: runs of dots, three or more counting as 1;
- ``short``: fewer than eight words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

__all__ = ["SHAPE_FEATURES", "shape_features"]

SHAPE_FEATURES: tuple[str, ...] = ("repetition", "questions", "subject_later", "subject_share", "symbols", "dots", "short")
_WORD = re.compile(r"[A-Za-z0-9']+")


def _one(text: str) -> list[float]:
    words = [w.lower() for w in _WORD.findall(text)]
    n = len(words)
    trigrams = [tuple(words[i : i + 3]) for i in range(n - 2)]
    repetition = 1.0 - len(set(trigrams)) / len(trigrams) if trigrams else 0.0
    subject = [i for i, w in enumerate(words) if w == "xyz"]
    letters = sum(ch.isalpha() or ch.isspace() for ch in text)
    return [
        repetition,
        min(1.0, text.count("?") / 3),
        float(any(i >= 6 for i in subject)),
        min(1.0, 10 * len(subject) / n) if n else 0.0,
        1.0 - letters / len(text) if text else 0.0,
        min(1.0, len(re.findall(r"\.{2,}", text)) / 3),
        float(n < 8),
    ]


def shape_features(texts: Sequence[str]) -> np.ndarray:
    """``(len(texts), len(SHAPE_FEATURES))`` shape features.

    Examples
    --------
    >>> bool(shape_features(["XYZ worked as a cook. XYZ worked as a cook. XYZ worked as a cook."])[0, 0] > 0.5)
    True
    """
    return np.array([_one(t) for t in texts], dtype=np.float64).reshape(-1, len(SHAPE_FEATURES))
