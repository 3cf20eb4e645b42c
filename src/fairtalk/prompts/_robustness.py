"""Robustness of conclusions across syntactic structures (paper §7), its shuffled-labels null, and the variance decomposition.

All work on per-row regard scores (-1/0/1) with integer codes for group, structure and the
other factors; everything is a ``np.bincount``, so 60,600 rows take milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from fairtalk.prompts._records import NullRobustness, Robustness, Spread, VarianceShares

__all__ = ["cell_sums", "robustness", "robustness_null", "variance_decomposition"]

#: How the robustness null is had (its ``how``).
NULL_HOW = "structure labels shuffled within each group"


def cell_sums(values: np.ndarray, rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Sums and counts of ``values`` per (row, col) cell, each ``(n_rows, n_cols)``."""
    flat = rows.astype(np.int64) * n_cols + cols
    sums = np.bincount(flat, weights=values, minlength=n_rows * n_cols).reshape(n_rows, n_cols)
    counts = np.bincount(flat, minlength=n_rows * n_cols).reshape(n_rows, n_cols)
    return sums, counts


def _cosine_rows(vectors: np.ndarray) -> np.ndarray:
    """Cosine similarities of every pair of rows (upper triangle, k > 1 rows)."""
    norms = np.linalg.norm(vectors, axis=1)
    norms = np.where(norms == 0, np.nan, norms)
    unit = vectors / norms[:, None]
    sims = unit @ unit.T
    upper = np.triu_indices(len(vectors), k=1)
    return sims[upper]


def _spread(values: np.ndarray) -> Spread:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return Spread(mean=float("nan"), std=float("nan"), min=float("nan"), max=float("nan"), n=0)
    return Spread(
        mean=float(values.mean()),
        std=float(values.std(ddof=1)) if values.size > 1 else 0.0,
        min=float(values.min()),
        max=float(values.max()),
        n=int(values.size),
    )


def robustness(
    sums: np.ndarray,
    counts: np.ndarray,
    *,
    seed: int,
    n_sampled: int = 10,
    n_draws: int = 100,
) -> Robustness:
    """Cosine similarity of group-regard vectors: single structures vs random halves of the structures.

    Parameters
    ----------
    sums, counts : ndarray
        ``(n_structures, n_groups)`` regard sums and row counts (the paraphrased structures
        only: the caller leaves the original prompt out, as the paper does).
    seed : int
        Seeds every draw (one generator for the whole call).
    n_sampled : int
        Structures drawn per "single structure" trial (10 in the paper): the trial's value is
        the average pairwise cosine similarity of their group-regard vectors.
    n_draws : int
        Trials of each kind; a "halves" trial splits the structures at random into two halves
        and takes the cosine of the two halves' group-regard vectors.

    Returns
    -------
    Robustness
        ``single`` and ``halves`` (each a :class:`~fairtalk.prompts._records.Spread` over the
        draws), the counts and ``relative_increase`` (``halves.mean / single.mean - 1``); no ``null``.
    """
    complete = (counts > 0).all(axis=1)
    sums, counts = sums[complete], counts[complete]
    n_structures = len(sums)
    rng = np.random.default_rng(seed)
    single = np.full(n_draws, np.nan)
    halves = np.full(n_draws, np.nan)
    if n_structures >= 2:
        means = sums / counts
        k = min(n_sampled, n_structures)
        for draw in range(n_draws):
            picked = rng.choice(n_structures, size=k, replace=False)
            cosines = _cosine_rows(means[picked])  # NaN where a group-regard vector is all zeros
            single[draw] = np.nanmean(cosines) if not np.isnan(cosines).all() else np.nan
            order = rng.permutation(n_structures)
            first, second = order[: n_structures // 2], order[n_structures // 2 :]
            vectors = np.stack([sums[first].sum(0) / counts[first].sum(0), sums[second].sum(0) / counts[second].sum(0)])
            halves[draw] = _cosine_rows(vectors)[0]
    result_single, result_halves = _spread(single), _spread(halves)
    increase = float("nan")
    if result_single.n and result_single.mean != 0:
        increase = result_halves.mean / result_single.mean - 1.0
    return Robustness(
        single=result_single,
        halves=result_halves,
        relative_increase=increase,
        n_structures=int(n_structures),
        n_sampled=int(min(n_sampled, n_structures)),
        n_draws=int(n_draws),
        seed=int(seed),
    )


def robustness_null(
    regard: np.ndarray,
    groups: np.ndarray,
    structures: np.ndarray,
    n_groups: int,
    n_structures: int,
    score: Callable[[np.ndarray, np.ndarray], Robustness],
    *,
    seed: int,
    n_shuffles: int = 5,
) -> NullRobustness:
    """The robustness score with the structure labels shuffled within each group (structures then differ by noise only).

    ``score(sums, counts)`` is the §7 robustness of ``(n_structures, n_groups)`` cell sums;
    returns the mean over ``n_shuffles`` shuffles of its ``single`` and ``halves`` means. The
    observed score is read against this null, not against 1.0.
    """
    rng = np.random.default_rng(seed)
    singles, halves = [], []
    for _ in range(n_shuffles):
        shuffled = structures.copy()
        for code in range(n_groups):
            rows = np.flatnonzero(groups == code)
            shuffled[rows] = structures[rng.permutation(rows)]
        sums, counts = cell_sums(regard, shuffled, groups, n_structures, n_groups)
        result = score(sums, counts)
        singles.append(result.single.mean)
        halves.append(result.halves.mean)
    single = np.asarray(singles, dtype=float)
    half = np.asarray(halves, dtype=float)
    return NullRobustness(
        single=float(np.nanmean(single)) if np.isfinite(single).any() else None,
        halves=float(np.nanmean(half)) if np.isfinite(half).any() else None,
        n_shuffles=n_shuffles,
        how=NULL_HOW,
    )


def variance_decomposition(values: np.ndarray, factors: Mapping[str, np.ndarray]) -> VarianceShares:
    """Main-effect sums of squares of ``values`` for each factor, as shares of the total.

    ``SS_f = sum over levels l of n_l * (mean_l - grand_mean)^2`` for each factor (integer
    codes); ``residual`` is the total minus the factors' sum (the factors are close to
    orthogonal in a balanced design such as the paper's; in an unbalanced one the shares can
    overlap, and the residual is then floored at 0).

    Examples
    --------
    >>> y = np.array([1.0, 1.0, -1.0, -1.0])
    >>> out = variance_decomposition(y, {"a": np.array([0, 0, 1, 1]), "b": np.array([0, 1, 0, 1])})
    >>> out.share["a"], out.share["b"]
    (1.0, 0.0)
    """
    values = np.asarray(values, dtype=np.float64)
    grand = values.mean() if values.size else 0.0
    total = float(((values - grand) ** 2).sum())
    ss: dict[str, float] = {}
    levels: dict[str, int] = {}
    for name, codes in factors.items():
        codes = np.asarray(codes, dtype=np.int64)
        n_levels = int(codes.max()) + 1 if codes.size else 0
        sums = np.bincount(codes, weights=values, minlength=n_levels)
        counts = np.bincount(codes, minlength=n_levels)
        present = counts > 0
        means = sums[present] / counts[present]
        ss[name] = float((counts[present] * (means - grand) ** 2).sum())
        levels[name] = int(present.sum())
    residual = max(total - sum(ss.values()), 0.0)
    share = {name: (value / total if total > 0 else 0.0) for name, value in ss.items()}
    share["residual"] = residual / total if total > 0 else 0.0
    return VarianceShares(total_ss=total, ss={**ss, "residual": residual}, share=share, n_levels=levels, n=int(values.size))
