"""The score test of a mean of rate differences and the score interval that inverts it (Tango's, extended).

A rate difference per pair takes a few values (``support``): ``−1, 0, 1`` for one audit key's
``a − b``, ``−2 … 2`` for a change in gap between two runs (``fairtalk.stats._change``). The
score statistic ``z(μ0) = (mean − μ0) / sqrt(V0 / n)`` takes its variance ``V0`` from the
restricted maximum-likelihood distribution on the support with mean ``μ0`` (not from the
estimate), which keeps it honest on rare events where a Wald (t) bound is too narrow. With
clusters the counts are divided by the design effect. :func:`score_test` is the two-sided test
of 0 (``2·(1 − Φ(|z(0)|))``) and :func:`score_interval` its inversion: ``p < α`` exactly when the
``1 − α`` interval leaves 0 out.

On ``−1, 0, 1`` without clusters the test of 0 is McNemar's asymptotic test
``(b − c) / sqrt(b + c)`` and the interval Tango's score interval for paired proportions
(Tango 1998, *Stat Med* 17:891), which Fagerland, Lydersen and Laake (2013, *BMC Med Res
Methodol* 13:91) recommend for paired binomial proportions; the audit's rate keys use them
(``paired_test(..., method="score")``, ``difference_interval(..., test="score")``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from fairtalk.stats._core import units

__all__ = ["RATE_SUPPORT", "rate_design_effect", "score_interval", "score_test", "score_z"]

#: A per-pair rate contrast ``(c_a − c_b) ± (b_a − b_b)`` takes these values (the default support).
_SUPPORT = (-2.0, -1.0, 0.0, 1.0, 2.0)
#: One rate key's per-pair difference ``a − b`` takes these values.
RATE_SUPPORT = (-1.0, 0.0, 1.0)
_PSEUDO = 1e-6
_STEPS = 60


def _restricted(counts: Sequence[float], mu0: float, support: Sequence[float] = _SUPPORT) -> list[float]:
    """The distribution on ``support`` (five points by default) of mean ``mu0`` that maximizes ``Σ n_k log p_k`` (the restricted MLE).

    By the empirical-likelihood dual (Owen 2001, §3.14) ``p_k = n_k / (N (1 + λ (v_k − μ0)))``, with
    ``λ`` the root of ``Σ n_k (v_k − μ0) / (1 + λ (v_k − μ0)) = 0`` (decreasing in ``λ``, found by
    bisection). A pseudo-count of ``1e-6`` on every value keeps the root inside when no event of a
    sign was seen, where the MLE puts its mass on the extreme value.
    """
    n = [c + _PSEUDO for c in counts]
    z = [v - mu0 for v in support]
    low, high = -1.0 / max(z) * (1 - 1e-12), -1.0 / min(z) * (1 - 1e-12)
    for _ in range(_STEPS):
        lam = (low + high) / 2
        if sum(nk * zk / (1 + lam * zk) for nk, zk in zip(n, z)) > 0:
            low = lam
        else:
            high = lam
    lam = (low + high) / 2
    p = [nk / (1 + lam * zk) for nk, zk in zip(n, z)]
    total = sum(p)
    return [pk / total for pk in p]


def _score_z(counts: Sequence[float], mean: float, n_eff: float, mu0: float, support: Sequence[float] = _SUPPORT) -> float:
    """The score statistic ``(mean − μ0) / sqrt(V0 / n)``, ``V0`` the variance of the restricted MLE at ``μ0``."""
    p = _restricted(counts, mu0, support)
    variance = sum(pk * (v - mu0) ** 2 for pk, v in zip(p, support))
    return (mean - mu0) / math.sqrt(variance / n_eff)


@dataclass(frozen=True, slots=True)
class _ScoreCounts:
    """A rate contrast as the score statistic sees it: its five counts over the design effect, mean and effective n."""

    counts: list[float]
    mean: float
    n_eff: float
    support: tuple[float, ...] = _SUPPORT

    def z(self, mu0: float) -> float:
        return _score_z(self.counts, self.mean, self.n_eff, mu0, self.support)


def _score_counts(
    d: np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray | None,
    support: tuple[float, ...] = _SUPPORT,
    design_effect: float | None = None,
) -> _ScoreCounts | None:
    """The counts of each value of ``d``, divided by the design effect with clusters (None: ``d`` is no rate contrast).

    The design effect is ``design_effect`` where given (at least 1), else the CR2 variance of the
    mean over its variance as if the pairs were independent, at least 1, as
    :func:`fairtalk.stats.newcombe_interval` uses (1 without clusters or spread).
    """
    counts = [float(np.count_nonzero(d == v)) for v in support]
    if sum(counts) != d.size:
        return None
    n = float(d.size)
    design = 1.0
    naive = float(d.var(ddof=1)) / n if n > 1 else 0.0
    if design_effect is not None:
        design = max(1.0, design_effect)
    elif clusters is not None and naive > 0:
        design = max(1.0, units(d, clusters).standard_error() ** 2 / naive)
    return _ScoreCounts([c / design for c in counts], float(d.mean()), n / design, support)


def rate_design_effect(d: np.ndarray, clusters: Sequence[Hashable] | np.ndarray | None) -> float:
    """The design effect of a rate key's differences ``d`` (at least 1): what its score test and interval divide by.

    1 without clusters; the CR2 variance of the mean over its variance as if the pairs were
    independent where the differences vary. With no discordant pair the clustering cannot be
    estimated, and the differences are alike within every cluster, so each cluster counts once
    (the pairs per cluster, the largest design effect its pairs allow): the interval then counts
    dialogues, as the identical-answers bound does, not pairs.
    """
    if clusters is None:
        return 1.0
    n = d.size
    naive = float(d.var(ddof=1)) / n if n > 1 else 0.0
    if naive > 0:
        return max(1.0, units(d, clusters).standard_error() ** 2 / naive)
    n_clusters = len(set(clusters))
    return max(1.0, n / n_clusters) if n_clusters else 1.0


def score_z(
    d: np.ndarray,
    *,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    support: tuple[float, ...] = _SUPPORT,
    design_effect: float | None = None,
) -> float | None:
    """The score statistic of ``mean = 0`` (see :func:`score_test`); None: ``d`` holds a value outside ``support``."""
    score = _score_counts(d, clusters, support, design_effect)
    return None if score is None else score.z(0.0)


def score_test(
    d: np.ndarray,
    *,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    support: tuple[float, ...] = _SUPPORT,
    design_effect: float | None = None,
) -> float | None:
    """Two-sided p of the score test of ``mean = 0`` for a rate contrast: the test :func:`score_interval` inverts.

    ``2·(1 − Φ(|z(0)|))`` with ``z(μ0)`` the score statistic (variance under ``μ0``, counts over the
    design effect with clusters, or ``design_effect`` where given), so ``p < α`` exactly when the
    ``1 − α`` score interval excludes 0. None: ``d`` holds a value outside ``support`` (default
    ``{−2, −1, 0, 1, 2}``).

    Examples
    --------
    >>> d = np.r_[np.full(6, 2.0), np.full(2, -1.0), np.zeros(292)]
    >>> round(score_test(d), 4)  # the 95% score interval (0.0071, 0.0798) excludes 0
    0.0253
    """
    from scipy.stats import norm

    z = score_z(d, clusters=clusters, support=support, design_effect=design_effect)
    if z is None:
        return None
    return float(2.0 * norm.sf(abs(z)))


def score_interval(
    d: np.ndarray,
    *,
    alpha: float,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    support: tuple[float, ...] = _SUPPORT,
    design_effect: float | None = None,
) -> tuple[float | None, float | None]:
    """The score ``1 − α`` interval of the mean of a rate contrast (values in ``support``, default ``{−2, −1, 0, 1, 2}``); None: not such values.

    Each end is a one-sided bound at ``α/2``: the ``μ0`` where the score statistic (variance under
    ``μ0``, see the module docstring) reaches ``∓z_{1−α/2}``, found by bisection between the support's ends.
    With clusters the counts are divided by the design effect (the CR2 variance of the mean over
    its variance as if the pairs were independent, at least 1), as :func:`fairtalk.stats.newcombe_interval` does,
    or by ``design_effect`` where given. It is the inversion of :func:`score_test` (given the same arguments).

    Examples
    --------
    >>> d = np.r_[np.full(6, 2.0), np.full(2, -1.0), np.zeros(292)]  # 8 rare events among 300 pairs
    >>> low, high = score_interval(d, alpha=0.05)
    >>> round(low, 4), round(float(d.mean()), 4), round(high, 4)
    (0.0071, 0.0333, 0.0798)
    """
    from scipy.stats import norm

    score = _score_counts(d, clusters, support, design_effect)
    if score is None:
        return None, None
    z = float(norm.ppf(1 - alpha / 2))

    def crossing(low: float, high: float, target: float) -> float:
        for _ in range(_STEPS):
            mid = (low + high) / 2
            if score.z(mid) > target:
                low = mid
            else:
                high = mid
        return (low + high) / 2

    low_edge, high_edge = min(support) * (1 - 1e-9), max(support) * (1 - 1e-9)
    return crossing(low_edge, score.mean, z), crossing(score.mean, high_edge, -z)
