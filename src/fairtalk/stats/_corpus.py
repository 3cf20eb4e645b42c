"""Paired-permutation inference for corpus-level statistics (distinct-n): CI, p and equivalence of A - B.

A corpus statistic (the diversity of all of a side's responses) has no per-pair score, so
it is tested by *paired permutation*: within every pair (or, with clusters, within every
whole cluster) the two responses swap sides with probability 1/2. Resampling pairs with
replacement (the ordinary bootstrap) is not used: its duplicated responses shrink distinct-n,
biasing the resampled differences and understating their spread by about 40% in
simulation, so its intervals miss the observed value and its tests reject far too often.

A permutation distribution has at most ``2^m`` patterns, ``m`` the units (pairs, or clusters)
whose two sides differ at all: swapping identical texts changes nothing. So no p-value is
smaller than ``2^(1-m)`` (two-sided) or ``2^(-m)`` (each one-sided test of the TOST), however
many resamples are drawn: with 2 differing pairs, or identical responses (``m = 0``), the
Monte Carlo shift test used to call a corpus statistic "equivalent" from a distribution of one
or four points. ``n_differing`` and ``n_units`` let the caller see such a degenerate distribution
(``fairtalk.pipeline`` then bounds the differing share instead: ``share_equivalence``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from fairtalk.options import MAX_PERMUTATIONS, least_resamples, permutations_for
from fairtalk.stats._core import rng

__all__ = ["MAX_PERMUTATIONS", "CorpusBootstrap", "corpus_bootstrap", "least_resamples", "permutations_for"]


_MSG_LENGTHS = "paired samples differ in length: {n_a} and {n_b}"
_MSG_EMPTY = "need at least one pair, got none"
_MSG_SHARED_INDEX = "both sides must index one shared set of prepared texts; got {n_a} and {n_b} texts"
_MSG_LEVEL = "confidence level must be in (0, 1), got {level!r}"
_MSG_RESAMPLES = "n_resamples must be at least 1, got {n!r}"


class CorpusBootstrap(NamedTuple):
    """Permutation CI of the difference A - B of a corpus statistic, its two-sided p, and the TOST p for a margin.

    ``n_units`` counts the units (pairs, or clusters) and ``n_differing`` those whose two sides
    differ: the permutation distribution has at most ``2^n_differing`` patterns.
    """

    ci: tuple[float, float]
    p: float
    p_equivalence: float | None = None
    n_units: int | None = None
    n_differing: int | None = None


def corpus_bootstrap(
    stat_a: Callable[[np.ndarray], Mapping[str, float]],
    stat_b: Callable[[np.ndarray], Mapping[str, float]],
    index_a: Sequence[int] | np.ndarray,
    index_b: Sequence[int] | np.ndarray,
    n_texts_a: int,
    n_texts_b: int,
    *,
    keys: Iterable[str],
    seed: int,
    n_resamples: int = 1000,
    level: float = 0.95,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    margins: Mapping[str, float] | None = None,
) -> dict[str, CorpusBootstrap]:
    """Paired-permutation inference for a corpus-level statistic: CI, p and (with ``margins``) TOST p of A - B per key.

    Side A's statistic is evaluated with ``weights = bincount(index_a, minlength=n_texts_a)``
    (how often each prepared text occurs), likewise side B. ``index_a[i]`` is the
    prepared-text index of pair ``i``'s A response, so a statistic prepared once over the
    union of unique texts serves both sides. Both sides must index that one shared set.

    - ``p`` is the Monte Carlo permutation p-value ``(1 + #{|d*| >= |d|}) / (B + 1)``.
    - ``ci`` assumes a location shift: ``(d - q_hi, d - q_lo)`` with ``q`` the
      ``(1 -+ level) / 2`` quantiles of the permutation differences ``d*``.
    - ``p_equivalence`` (for a key in ``margins``) is
      ``max(#{d* >= d + m}, #{d* <= d - m}) + 1) / (B + 1)``: the shifted permutation
      distribution's mass beyond the margins, the duality of the interval above.
    - With ``clusters`` (one id per pair), whole clusters swap together.
    """
    _check_settings(level, n_resamples)
    keys = tuple(keys)
    ia, ib = _paired_indices(index_a, index_b, n_texts_a, n_texts_b)
    group = _cluster_codes(clusters)
    total = np.bincount(ia, minlength=n_texts_a) + np.bincount(ib, minlength=n_texts_a)
    n_units, n_differing = _unit_counts(ia, ib, group)
    floor_two, floor_one = min(1.0, 2.0 ** (1 - n_differing)), 2.0**-n_differing  # the smallest exact p-values

    def difference(side_a: np.ndarray) -> list[float]:
        weights_a = np.bincount(side_a, minlength=n_texts_a)
        value_a, value_b = stat_a(weights_a), stat_b(total - weights_a)  # swaps keep the union fixed
        return [value_a[key] - value_b[key] for key in keys]

    observed = difference(ia)
    generator = rng(seed)
    diffs = np.empty((len(keys), n_resamples))
    for r in range(n_resamples):
        if group is None:
            swap = generator.random(ia.size) < 0.5
        else:
            swap = (generator.random(int(group.max()) + 1) < 0.5)[group]
        diffs[:, r] = difference(np.where(swap, ib, ia))
    out = {}
    for k, key in enumerate(keys):
        q_low, q_high = np.quantile(diffs[k], [(1 - level) / 2, (1 + level) / 2])
        p = max(floor_two, (1 + np.count_nonzero(np.abs(diffs[k]) >= abs(observed[k]) - 1e-12)) / (n_resamples + 1))
        p_eq = _p_equivalence(diffs[k], observed[k], (margins or {}).get(key), floor_one)
        ci = (float(observed[k] - q_high), float(observed[k] - q_low))
        out[key] = CorpusBootstrap(ci, float(min(1.0, p)), p_eq, n_units, n_differing)
    return out


def _check_settings(level: float, n_resamples: int) -> None:
    """Raise ValueError for a confidence level outside (0, 1) or fewer than one resample."""
    if not 0 < level < 1:
        raise ValueError(_MSG_LEVEL.format(level=level))
    if n_resamples < 1:
        raise ValueError(_MSG_RESAMPLES.format(n=n_resamples))


def _paired_indices(
    index_a: Sequence[int] | np.ndarray, index_b: Sequence[int] | np.ndarray, n_texts_a: int, n_texts_b: int
) -> tuple[np.ndarray, np.ndarray]:
    """Both sides' text indices as flat int64 arrays: equally long, not empty, over one shared set of texts."""
    ia = np.asarray(index_a, dtype=np.int64).ravel()
    ib = np.asarray(index_b, dtype=np.int64).ravel()
    if ia.shape != ib.shape:
        raise ValueError(_MSG_LENGTHS.format(n_a=ia.size, n_b=ib.size))
    if ia.size == 0:
        raise ValueError(_MSG_EMPTY)
    if n_texts_a != n_texts_b:  # a swap moves a text to the other side, so both must share one index
        raise ValueError(_MSG_SHARED_INDEX.format(n_a=n_texts_a, n_b=n_texts_b))
    return ia, ib


def _cluster_codes(clusters: Sequence[Hashable] | np.ndarray | None) -> np.ndarray | None:
    """Each pair's cluster as a code ``0 .. n_clusters - 1`` (ids compared as strings), or None without clusters."""
    if clusters is None:
        return None
    _, group = np.unique(np.asarray(clusters, dtype=object).astype(str).ravel(), return_inverse=True)
    return group


def _unit_counts(ia: np.ndarray, ib: np.ndarray, group: np.ndarray | None) -> tuple[int, int]:
    """The units that swap (pairs, or clusters) and how many of them have two sides that differ."""
    differs = ia != ib
    if group is None:
        return int(ia.size), int(np.count_nonzero(differs))
    return int(group.max()) + 1, int(np.unique(group[differs]).size)


def _p_equivalence(diffs: np.ndarray, observed: float, margin: float | None, floor: float) -> float | None:
    """The TOST p of the shifted permutation distribution for a positive margin, else None."""
    if margin is None or not margin > 0:
        return None
    beyond = max(np.count_nonzero(diffs >= observed + margin), np.count_nonzero(diffs <= observed - margin))
    return float(min(1.0, max(floor, (1 + beyond) / (diffs.size + 1))))
