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

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from fairtalk.errors import SpecError
from fairtalk.measures._base import CorpusMeasure
from fairtalk.measures._text import check_texts, dedupe, tokenize

__all__ = ["DEFINITIONS", "DistinctStatistic", "Diversity"]

DEFINITIONS = ("paper", "standard")
"""The two accepted definitions of distinct-n."""
_MSG_DEFINITION = "unknown distinct definition {given!r}"
_VERSION = "1"
_KEYS = ("distinct_1", "distinct_2", "diversity")


class DistinctStatistic:
    """Distinct-n of a prepared corpus, re-evaluated cheaply for any multiplicity vector.

    Built by :meth:`Diversity.prepare`. Holds, for each distinct text, its word count and
    which unigrams and bigrams it contains (an n-gram of one text only is just counted per
    text; shared n-grams are indexed CSR-style), so a call costs a few vectorised passes
    over arrays sized by the number of distinct texts and shared n-gram occurrences.
    """

    __slots__ = ("_bi", "_inverse", "_n_bigrams", "_n_texts", "_n_unique", "_n_words", "_uni", "definition")

    def __init__(
        self,
        definition: str,
        inverse: np.ndarray,
        n_words: np.ndarray,
        unigrams: _NgramIndex,
        bigrams: _NgramIndex,
    ) -> None:
        self.definition = definition
        self._inverse = inverse
        self._n_texts = len(inverse)
        self._n_unique = len(n_words)
        self._n_words = n_words
        self._n_bigrams = np.maximum(n_words - 1, 0)
        self._uni = unigrams
        self._bi = bigrams

    @staticmethod
    def _distinct(present: np.ndarray, index: _NgramIndex) -> int:
        """How many n-gram ids occur in at least one present text."""
        n_single = int(index.n_single[present].sum())
        if len(index.owners) == 0:
            return n_single
        hits = present[index.owners].view(np.int8)
        return n_single + int(np.count_nonzero(np.maximum.reduceat(hits, index.starts)))

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
            w_unique = np.bincount(self._inverse, weights=weights, minlength=self._n_unique).astype(np.float64)
        present = w_unique > 0
        # elementwise sums, not `@`: a BLAS call costs milliseconds on a busy multi-threaded OpenBLAS
        n_words = float(np.sum(w_unique * self._n_words))
        distinct_1 = self._distinct(present, self._uni)
        distinct_2 = self._distinct(present, self._bi)
        if self.definition == "paper":
            total_1 = total_2 = n_words
        else:
            total_1 = n_words
            total_2 = float(np.sum(w_unique * self._n_bigrams))
        d1 = distinct_1 / total_1 if total_1 > 0 else 0.0
        d2 = distinct_2 / total_2 if total_2 > 0 else 0.0
        return {"distinct_1": d1, "distinct_2": d2, "diversity": (d1 + d2) / 2}


@dataclass(frozen=True, slots=True)
class _NgramIndex:
    """Which distinct texts hold which n-grams.

    An n-gram found in one distinct text only is counted in ``n_single[text]``; the others
    are stored CSR-style: ``owners`` lists their texts sorted by n-gram id, and ``starts``
    is where each n-gram's run begins.
    """

    n_single: np.ndarray
    owners: np.ndarray
    starts: np.ndarray


#: Texts whose positions are or-ed into the packed occurrences at a time (bounds the temporary array).
_BLOCK = 1 << 16


def _index(taken: list[array[int]], lengths: np.ndarray) -> _NgramIndex:
    """Build the :class:`_NgramIndex` from each distinct text's distinct n-gram ids, concatenated (``lengths`` per text).

    ``taken`` holds the one C-int array of ids, which this call takes out (and frees once
    copied). Each occurrence is one int64, the n-gram id in the high 32 bits and its text in
    the low 32, sorted in place: the order of a stable sort by n-gram id (texts ascending
    within one), with no per-text arrays and no argsort index beside it. The arrays are
    shifted, or-ed and narrowed in place or in blocks: at most 8 bytes an occurrence beside
    the result.
    """
    n_texts = len(lengths)
    ids = taken.pop()
    if len(ids) == 0:
        empty = np.zeros(0, dtype=np.intp)
        return _NgramIndex(np.zeros(n_texts, dtype=np.intp), empty, empty)
    packed = np.empty(len(ids), dtype=np.int64)
    packed[:] = np.frombuffer(ids, dtype=np.intc)
    del ids  # the only reference: its 4 bytes an occurrence are freed
    packed <<= 32
    ends = np.cumsum(lengths, dtype=np.int64)
    for first in range(0, n_texts, _BLOCK):
        last = min(first + _BLOCK, n_texts)
        start = int(ends[first - 1]) if first else 0
        packed[start : int(ends[last - 1])] |= np.repeat(np.arange(first, last, dtype=np.int64), lengths[first:last])
    packed.sort()
    owners = packed.astype(np.int32)  # the low 32 bits: the texts (they fit a C int, as the ids do)
    packed >>= 32  # the n-gram ids, sorted
    starts = np.flatnonzero(np.r_[True, packed[1:] != packed[:-1]])
    del packed
    sizes = np.diff(np.r_[starts, len(owners)])
    single = np.repeat(sizes == 1, sizes)
    n_single = np.bincount(owners[single], minlength=n_texts)
    owners = owners[~single]
    kept_sizes = sizes[sizes > 1]
    starts = np.r_[0, np.cumsum(kept_sizes)[:-1]].astype(np.intp) if len(kept_sizes) else np.zeros(0, np.intp)
    return _NgramIndex(n_single, owners, starts)


class Diversity(CorpusMeasure):
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
        vocab_2: dict[int, int] = {}  # a bigram as its words' ids, first << 32 | second
        uni_ids, bi_ids = array("i"), array("i")  # every text's distinct ids, flat (a C int each)
        uni_lengths, bi_lengths = array("i"), array("i")
        n_words = np.zeros(len(uniques), dtype=np.float64)
        get_1, get_2 = vocab_1.setdefault, vocab_2.setdefault
        for i, text in enumerate(uniques):
            words = [get_1(t, len(vocab_1)) for t in tokenize(text)]
            n_words[i] = len(words)
            unigrams = set(words)
            bigrams = {get_2(first << 32 | second, len(vocab_2)) for first, second in pairwise(words)}
            uni_ids.extend(unigrams)
            bi_ids.extend(bigrams)
            uni_lengths.append(len(unigrams))
            bi_lengths.append(len(bigrams))
        del vocab_1, vocab_2
        uni_taken, bi_taken = [uni_ids], [bi_ids]  # _index takes each out and frees it once copied
        del uni_ids, bi_ids
        return DistinctStatistic(
            self.definition,
            inverse,
            n_words,
            _index(uni_taken, np.frombuffer(uni_lengths, dtype=np.intc)),
            _index(bi_taken, np.frombuffer(bi_lengths, dtype=np.intc)),
        )

    def compute(self, texts: Sequence[str]) -> dict[str, float]:
        """Distinct-1, distinct-2 and diversity of ``texts`` taken once each (with their repeats)."""
        return dict(self.prepare(texts)())
