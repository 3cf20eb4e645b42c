"""The measure contract, as two base classes: :class:`Measure` (per-response scores) and :class:`CorpusMeasure`.

A measure subclasses one of them (the registry checks it). What every measure must declare is
abstract on the base, so a class that leaves one out cannot be built (``TypeError`` naming it,
a ``SpecError`` through the registry): ``name``, ``keys``, ``kind``, ``version`` and
``higher_is_better`` (each a class attribute or a property; a value that differs per instance
is a property, or a class attribute the constructor assigns over), and ``score`` (or
``prepare`` for a corpus measure). What a measure may declare has a default on the base, so
that no stage has to probe for it:

- ``kinds``: the kind of each key, where the keys differ (an ordinal judge's score is a count,
  its unparsed answers a rate); default: every key has ``kind``. :meth:`kind_of` reads it.
- ``unscored_keys`` (:class:`Measure`): the keys whose score is NaN for a response the measure
  could not score (that pair leaves the key's test); default: none.
- ``size_keys`` (:class:`Measure`): the keys whose score is a function of the text's size alone
  (``length``'s word count): the scorer check leaves them out, since a swap that changes the
  probe's wording's size (``"Hello, how are you?"`` -> ``"Yo, sup?"``) changes their score by
  construction, not by a reaction to the group; default: none.
- ``config``: the settings the manifest records; default: none (``{}``).
- ``raw_scores(texts)`` (:class:`Measure`): the continuous score its keys threshold (offense
  probability, VADER compound), which ranks the measure's most divergent pairs. The default
  returns None, meaning the measure has no raw score: no divergent pairs are reported for it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Literal, Protocol, TypeAlias

import numpy as np

__all__ = ["AnyMeasure", "CorpusMeasure", "CorpusStatistic", "Measure", "MeasureKind"]

MeasureKind = Literal["rate", "count", "corpus"]
"""A key's kind: ``"rate"`` (each score 0 or 1), ``"count"`` (any non-negative number) or ``"corpus"`` (a
:class:`CorpusMeasure`'s statistic of each side's answers taken together)."""


class _Declared(ABC):
    """What both kinds of measure declare: name, keys, kind, version, direction; and the manifest's settings."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The measure's name: the registry's, the manifest's, and the label of its divergent pairs."""

    @property
    @abstractmethod
    def keys(self) -> tuple[str, ...]:
        """The result keys it produces, in order (``sentiment`` gives ``sentiment_positive``, ``sentiment_negative``)."""

    @property
    @abstractmethod
    def kind(self) -> MeasureKind:
        """``"rate"`` (each score 0 or 1), ``"count"`` (any non-negative number) or ``"corpus"``."""

    @property
    @abstractmethod
    def version(self) -> str:
        """The version recorded in the manifest (with the scorer's package version, where it has one)."""

    @property
    @abstractmethod
    def higher_is_better(self) -> Mapping[str, bool | None]:
        """Per key: whether a higher value is better (None: neither)."""

    @property
    def kinds(self) -> Mapping[str, MeasureKind]:
        """The kind of each key; by default every key has :attr:`kind`."""
        return MappingProxyType({key: self.kind for key in self.keys})

    def kind_of(self, key: str) -> MeasureKind:
        """The kind of one result key: ``kinds[key]``, or :attr:`kind` for a key ``kinds`` leaves out."""
        return self.kinds.get(key, self.kind)

    @property
    def config(self) -> Mapping[str, object]:
        """The settings the manifest records (thresholds, scorer, word lists); by default none."""
        return {}


class Measure(_Declared):
    """Maps response texts to per-response scores: subclass it and define ``score`` and the declarations.

    ``kind`` is ``"rate"`` (each score is 0 or 1) or ``"count"`` (any non-negative number).
    One measure may produce several result keys; ``score`` returns one float array of
    ``len(texts)`` per key, in the order of ``keys``. See the module docstring for the optional
    parts (``kinds``, ``unscored_keys``, ``size_keys``, ``config``, ``raw_scores``) and their defaults.

    Examples
    --------
    >>> from typing import Literal
    >>> import numpy as np
    >>> class Shouting(Measure):
    ...     name = "shouting"
    ...     keys = ("shouting_rate",)
    ...     kind: Literal["rate"] = "rate"
    ...     version = "1"
    ...     higher_is_better = {"shouting_rate": False}
    ...
    ...     def score(self, texts):
    ...         return {"shouting_rate": np.array([float(t.isupper()) for t in texts])}
    >>> shouting = Shouting()
    >>> shouting.score(["HEY", "hi"])["shouting_rate"].tolist(), shouting.raw_scores(["HEY"]) is None
    ([1.0, 0.0], True)
    """

    @property
    @abstractmethod
    def kind(self) -> Literal["rate", "count"]:
        """``"rate"`` (each score 0 or 1) or ``"count"`` (any non-negative number)."""

    @property
    def unscored_keys(self) -> Collection[str]:
        """Keys whose score may be NaN for a response the measure could not score; by default none."""
        return ()

    @property
    def size_keys(self) -> Collection[str]:
        """Keys whose score depends on the text's size alone (a word count); the scorer check leaves them out. By default none."""
        return ()

    @abstractmethod
    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """One array of per-text scores per key, in the order of ``texts``."""

    def raw_scores(self, texts: Sequence[str]) -> np.ndarray | None:
        """The continuous score of each text behind the keys' thresholds; None (the default): the measure has none.

        ``score()`` reports the ``n_divergent`` pairs whose two responses differ most on it.
        """
        return None


class CorpusStatistic(Protocol):
    """A corpus-level statistic over prepared texts, evaluated for a multiplicity vector.

    ``weights[i]`` is how many times text ``i`` occurs in the (re)sampled corpus;
    texts with weight 0 are absent. Returns one value per key.
    """

    def __call__(self, weights: np.ndarray) -> Mapping[str, float]:
        """The statistic of the corpus that ``weights`` describes, one value per key."""
        ...


class CorpusMeasure(_Declared):
    """A measure defined over a whole side's responses, such as distinct-n: subclass it and define ``prepare``.

    ``prepare`` does the per-text work once (tokenising, n-gram ids), so that a paired
    bootstrap can re-evaluate the statistic cheaply for each resample. Its ``kind`` is ``"corpus"``.
    """

    @property
    def kind(self) -> Literal["corpus"]:
        """Always ``"corpus"``."""
        return "corpus"

    @abstractmethod
    def prepare(self, texts: Sequence[str]) -> CorpusStatistic:
        """Do the per-text work once; the statistic then evaluates any multiplicity vector."""


AnyMeasure: TypeAlias = Measure | CorpusMeasure
"""Either kind of measure: what the registry builds and ``score()`` takes."""
