"""The measure protocols: per-response measures, corpus-level measures, and the optional raw score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

__all__ = ["CorpusMeasure", "CorpusStatistic", "Measure", "MeasureKind", "RawScored", "key_kind", "may_leave_unscored"]

MeasureKind = Literal["rate", "count", "corpus"]


@runtime_checkable
class Measure(Protocol):
    """Maps response texts to per-response scores.

    ``kind`` is ``"rate"`` (each score is 0 or 1) or ``"count"`` (any non-negative number).
    One measure may produce several result keys (``sentiment`` gives
    ``sentiment_positive`` and ``sentiment_negative``); ``score`` returns one float
    array of ``len(texts)`` per key, in the order of ``keys``.

    A measure may also declare a continuous raw score behind its keys (see :class:`RawScored`);
    its most divergent pairs are then reported, ranked by that score.

    Two optional attributes: ``kinds``, a mapping of key to kind where the keys differ (an
    ordinal judge's score is a count, its unparsed answers a rate; see :func:`key_kind`); and
    ``unscored_keys``, the keys whose score is NaN for a response the measure could not score
    (that pair leaves the key's test; see :func:`may_leave_unscored`).
    """

    name: str
    keys: tuple[str, ...]
    kind: MeasureKind
    version: str
    higher_is_better: Mapping[str, bool | None]

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """One array of per-text scores per key, in the order of ``texts``."""
        ...


class CorpusStatistic(Protocol):
    """A corpus-level statistic over prepared texts, evaluated for a multiplicity vector.

    ``weights[i]`` is how many times text ``i`` occurs in the (re)sampled corpus;
    texts with weight 0 are absent. Returns one value per key.
    """

    def __call__(self, weights: np.ndarray) -> Mapping[str, float]:
        """The statistic of the corpus that ``weights`` describes, one value per key."""
        ...


@runtime_checkable
class CorpusMeasure(Protocol):
    """A measure defined over a whole side's responses, such as distinct-n.

    ``prepare`` does the per-text work once (tokenising, n-gram ids), so that a
    paired bootstrap can re-evaluate the statistic cheaply for each resample.
    """

    name: str
    keys: tuple[str, ...]
    kind: MeasureKind  # always "corpus"
    version: str
    higher_is_better: Mapping[str, bool | None]

    def prepare(self, texts: Sequence[str]) -> CorpusStatistic:
        """Do the per-text work once; the statistic then evaluates any multiplicity vector."""
        ...


@runtime_checkable
class RawScored(Protocol):
    """Optional for a :class:`Measure`: the continuous score its keys threshold (offense probability, VADER compound).

    ``score()`` reports the ``n_divergent`` pairs whose two responses differ most on
    ``raw_scores`` for every measure that has the method; measures without it get none.
    """

    def raw_scores(self, texts: Sequence[str]) -> np.ndarray:
        """The continuous score of each text, in the order of ``texts``."""
        ...


def key_kind(measure: Any, key: str) -> MeasureKind:
    """The kind of one result key: the measure's ``kinds[key]`` where it declares per-key kinds, else its ``kind``."""
    kinds = getattr(measure, "kinds", None) or {}
    kind: MeasureKind = kinds.get(key, measure.kind)
    return kind


def may_leave_unscored(measure: Any, key: str) -> bool:
    """Whether ``key``'s per-response score may be NaN (no score for that response): the measure lists it in ``unscored_keys``."""
    return key in (getattr(measure, "unscored_keys", None) or ())
