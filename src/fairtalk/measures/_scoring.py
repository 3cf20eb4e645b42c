"""Score each distinct response once and broadcast the scores back: retrieval and Seq2Seq models repeat a lot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from fairtalk.measures._base import CorpusMeasure, Measure
from fairtalk.measures._text import check_texts, dedupe

__all__ = ["score_unique"]

_MSG_CORPUS = "{name!r} is a corpus-level measure: use its prepare(texts) instead of score_unique"
_MSG_NOT_MEASURE = "score_unique takes a Measure (a subclass of fairtalk.measures.Measure), got {type}"
_MSG_KEYS = "measure {name!r} returned keys {got!r}, expected {expected!r}"
_MSG_LENGTH = "measure {name!r} returned {got} scores for key {key!r}, expected {expected}"


def score_unique(measure: Measure, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Score ``texts`` with ``measure``, calling it once, on the distinct texts only.

    Parameters
    ----------
    measure : Measure
        A per-response measure (not a corpus measure).
    texts : sequence of str
        The responses, repeats allowed. To share the work between both sides of an audit,
        pass them concatenated and split the result.

    Returns
    -------
    dict of str to numpy.ndarray
        One float array of ``len(texts)`` per key of ``measure``, in ``measure.keys`` order,
        equal to ``measure.score(texts)``.

    Raises
    ------
    TypeError
        ``measure`` is a corpus measure, or not a :class:`Measure`.
    ValueError
        The measure returned other keys, or arrays of the wrong length.

    Examples
    --------
    >>> from fairtalk.measures import Length
    >>> score_unique(Length(), ["a b", "c", "a b"])["length"].tolist()
    [2.0, 1.0, 2.0]
    """
    if isinstance(measure, CorpusMeasure):
        raise TypeError(_MSG_CORPUS.format(name=measure.name))
    if not isinstance(measure, Measure):
        raise TypeError(_MSG_NOT_MEASURE.format(type=type(measure).__name__))
    name = measure.name
    uniques, inverse = dedupe(check_texts(texts))
    scores: Mapping[str, np.ndarray] = measure.score(uniques)
    if set(scores) != set(measure.keys):
        raise ValueError(_MSG_KEYS.format(name=name, got=tuple(scores), expected=tuple(measure.keys)))
    out: dict[str, np.ndarray] = {}
    for key in measure.keys:
        values = np.asarray(scores[key], dtype=np.float64)
        if values.shape != (len(uniques),):
            raise ValueError(_MSG_LENGTH.format(name=name, got=values.shape, key=key, expected=len(uniques)))
        out[key] = values[inverse]
    return out
