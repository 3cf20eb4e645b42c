"""Distinct-1, distinct-2 and their mean (the paper's diversity score, §2.4.1), over a whole side.

Two definitions, named by ``definition``:

``"paper"`` (default)
    distinct-n = (number of distinct n-grams) / (total number of words), for n = 1 and 2,
    exactly as the paper states it.
``"standard"``
    distinct-n = (number of distinct n-grams) / (total number of n-grams), the usual
    definition of Li et al. (2016): distinct-1 is unchanged, distinct-2 divides by the
    number of bigrams (``n_words - 1`` per response).

Texts are tokenised with :func:`fairtalk.measures.tokenize`; bigrams never cross a
response boundary. ``diversity`` is the mean of ``distinct_1`` and ``distinct_2``. All three
are fractions (the paper prints percentages). A corpus with no words (or no bigrams)
scores 0.0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from fairtalk.errors import SpecError
from fairtalk.measures._text import check_texts, dedupe, tokenize

__all__ = ["DEFINITIONS", "Diversity", "DistinctStatistic"]

#: The two accepted definitions of distinct-n.
DEFINITIONS = ("paper", "standard")
_MSG_DEFINITION = "unknown distinct definition {given!r}"
_VERSION = "1"
_KEYS = ("distinct_1", "distinct_2", "diversity")


class DistinctStatistic:
    """Distinct-n of a prepared corpus, re-evaluated cheaply for any multiplicity vector.

    Built by :meth:`Diversity.prepare`. Holds, for each distinct text, its word count and
    the ids of the distinct unigrams and bigrams it contains (CSR-style, sorted by n-gram
    id), so a call costs a few vectorised passes over those arrays.
    """

    __slots__ = ("_bi", "_inverse", "_n_texts", "_n_unique", "_n_words", "_uni", "definition")

    def __init__(
        self,
        definition: str,
        inverse: np.ndarray,
        n_words: np.ndarray,
        unigrams: tuple[np.ndarray, np.ndarray],
        bigrams: tuple[np.ndarray, np.ndarray],
    ) -> None:
        self.definition = definition
        self._inverse = inverse
        self._n_texts = len(inverse)
        self._n_unique = len(n_words)
        self._n_words = n_words
        self._uni = unigrams
        self._bi = bigrams

    @staticmethod
    def _distinct(present: np.ndarray, owners: np.ndarray, starts: np.ndarray) -> int:
        """How many n-gram ids occur in at least one present text."""
        if len(owners) == 0:
            return 0
        hits = present[owners].view(np.int8)
        return int(np.count_nonzero(np.maximum.reduceat(hits, starts)))

    def __call__(self, weights: np.ndarray | None = None) -> Mapping[str, float]:
        """``{distinct_1, distinct_2, diversity}`` for the corpus where text ``i`` occurs ``weights[i]`` times.

        ``weights=None`` means every text once.
        """
        if weights is None:
            w_unique = np.bincount(self._inverse, minlength=self._n_unique).astype(np.float64)
        else:
            weights = np.asarray(weights, dtype=np.float64)
            if weights.shape != (self._n_texts,):
                raise ValueError(f"weights must have shape ({self._n_texts},), got {weights.shape}")
            w_unique = np.bincount(self._inverse, weights=weights, minlength=self._n_unique)
        present = w_unique > 0
        n_words = float(w_unique @ self._n_words)
        distinct_1 = self._distinct(present, *self._uni)
        distinct_2 = self._distinct(present, *self._bi)
        if self.definition == "paper":
            total_1 = total_2 = n_words
        else:
            total_1 = n_words
            total_2 = float(w_unique @ np.maximum(self._n_words - 1, 0))
        d1 = distinct_1 / total_1 if total_1 > 0 else 0.0
        d2 = distinct_2 / total_2 if total_2 > 0 else 0.0
        return {"distinct_1": d1, "distinct_2": d2, "diversity": (d1 + d2) / 2}


def _csr(ids_per_text: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(owners sorted by n-gram id, start offset of each id's run) from per-text distinct ids."""
    if not ids_per_text:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    lengths = np.fromiter((len(ids) for ids in ids_per_text), dtype=np.intp, count=len(ids_per_text))
    ids = np.concatenate(ids_per_text) if lengths.sum() else np.zeros(0, dtype=np.intp)
    owners = np.repeat(np.arange(len(ids_per_text), dtype=np.intp), lengths)
    order = np.argsort(ids, kind="stable")
    ids, owners = ids[order], owners[order]
    if len(ids) == 0:
        return owners, np.zeros(0, dtype=np.intp)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return owners, starts


class Diversity:
    """The paper's diversity measure: distinct-1, distinct-2 and their mean over one side's responses.

    Parameters
    ----------
    definition : {"paper", "standard"}
        ``"paper"`` divides both distinct counts by the total number of words;
        ``"standard"`` divides by the total number of n-grams (see the module docstring).

    Examples
    --------
    >>> Diversity().compute(["a b a", "a c"])      # 3 distinct unigrams and bigrams, 5 words
    {'distinct_1': 0.6, 'distinct_2': 0.6, 'diversity': 0.6}
    >>> Diversity(definition="standard").compute(["a b a", "a c"])["distinct_2"]
    1.0
    """

    name = "diversity"
    keys = _KEYS
    kind: Literal["corpus"] = "corpus"
    version = _VERSION
    higher_is_better: Mapping[str, bool | None] = MappingProxyType({key: True for key in _KEYS})

    def __init__(self, *, definition: str = "paper") -> None:
        if definition not in DEFINITIONS:
            raise SpecError(_MSG_DEFINITION.format(given=definition), choices=DEFINITIONS, given=definition)
        self.definition = definition

    @property
    def config(self) -> Mapping[str, Any]:
        """Settings for the manifest."""
        return {"definition": self.definition, "tokenizer": "lowercase, punctuation stripped"}

    def __repr__(self) -> str:
        return f"Diversity(definition={self.definition!r})"

    def prepare(self, texts: Sequence[str]) -> DistinctStatistic:
        """Tokenise each distinct text once and index its n-grams; returns the statistic."""
        uniques, inverse = dedupe(check_texts(texts))
        vocab_1: dict[str, int] = {}
        vocab_2: dict[tuple[str, str], int] = {}
        uni_ids: list[np.ndarray] = []
        bi_ids: list[np.ndarray] = []
        n_words = np.zeros(len(uniques), dtype=np.float64)
        get_1, get_2 = vocab_1.setdefault, vocab_2.setdefault
        for i, text in enumerate(uniques):
            tokens = tokenize(text)
            n_words[i] = len(tokens)
            uni_ids.append(np.fromiter({get_1(t, len(vocab_1)) for t in tokens}, dtype=np.intp))
            bi_ids.append(np.fromiter({get_2(b, len(vocab_2)) for b in zip(tokens, tokens[1:])}, dtype=np.intp))
        return DistinctStatistic(self.definition, inverse, n_words, _csr(uni_ids), _csr(bi_ids))

    def compute(self, texts: Sequence[str]) -> dict[str, float]:
        """Distinct-1, distinct-2 and diversity of ``texts`` taken once each (with their repeats)."""
        return dict(self.prepare(texts)())
