"""Shared pieces of the statistics: the one seed-to-generator, paired inputs, clusters, the paper's Z, effect sizes, corrections."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Units",
    "ZTest",
    "adjust_pvalues",
    "cohens_d_paired",
    "cohens_h",
    "paired_arrays",
    "relative_difference",
    "rng",
    "units",
    "z_test",
]

_MSG_LENGTHS = "paired samples differ in length: {n_a} and {n_b}"
_MSG_EMPTY = "need at least one pair, got none"
_MSG_CLUSTERS = "got {n_clusters} cluster ids for {n_pairs} pairs (one per pair)"
_MSG_CORRECTION = "unknown correction {method!r}; choose from: holm, bh"
_MSG_NOT_FINITE = "scores must be finite numbers; found {value!r}"
#: The multiple-testing corrections: Holm (family-wise error) and Benjamini-Hochberg (false discovery rate).
_CORRECTIONS = ("holm", "bh")
_Array = Sequence[float] | np.ndarray
#: Why the paper's Z test has no value.
Z_CONSTANT = "both sides are constant: the Z test is undefined (no variance to scale the difference)"
Z_TOO_FEW = "fewer than two responses on a side: the Z test needs a variance estimate"


def rng(seed: int) -> np.random.Generator:
    """The one place a seed becomes a generator."""
    return np.random.default_rng(seed)


def paired_arrays(x_a: _Array, x_b: _Array) -> tuple[np.ndarray, np.ndarray]:
    """Both sides as float arrays of one length (ValueError when they differ, are empty or not finite)."""
    a = np.asarray(x_a, dtype=float).ravel()
    b = np.asarray(x_b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(_MSG_LENGTHS.format(n_a=a.size, n_b=b.size))
    if a.size == 0:
        raise ValueError(_MSG_EMPTY)
    bad = ~np.isfinite(a) | ~np.isfinite(b)
    if bad.any():
        value = a[bad][0] if not np.isfinite(a[bad][0]) else b[bad][0]
        raise ValueError(_MSG_NOT_FINITE.format(value=float(value)))
    return a, b


@dataclass(frozen=True, slots=True)
class Units:
    """The independent units of a paired sample: pairs, or clusters of pairs (one dialogue's pairs).

    ``sums[g]`` is the sum of the differences ``a - b`` in unit ``g`` and ``sizes[g]`` its
    number of pairs; ``index[i]`` is pair ``i``'s unit. Without clusters every pair is a unit.
    """

    sums: np.ndarray
    sizes: np.ndarray
    index: np.ndarray
    clustered: bool

    @property
    def n_units(self) -> int:
        """Number of units (clusters, or pairs)."""
        return int(self.sums.size)

    @property
    def n_pairs(self) -> int:
        """Number of pairs."""
        return int(self.index.size)

    @property
    def estimate(self) -> float:
        """The mean difference over pairs (each pair weighs the same)."""
        return float(self.sums.sum() / self.sizes.sum())

    def _weights(self) -> np.ndarray:
        """CR2 weight of each unit, ``1 / sqrt(1 - n_g / N)`` (1 where a unit holds every pair)."""
        share = self.sizes / self.sizes.sum()
        with np.errstate(divide="ignore"):
            return np.where(share < 1, 1.0 / np.sqrt(np.clip(1.0 - share, 1e-300, None)), 1.0)

    def standard_error(self) -> float:
        """Cluster-robust (CR2) standard error of the mean difference; the paired-t SE without clusters.

        ``sqrt(sum_g R_g^2 / (1 - n_g / N)) / N`` with ``R_g = S_g - n_g * mean`` the unit's
        residual sum (Bell and McCaffrey 2002). For the mean this is CR2 in closed form, and
        with one pair per unit it is exactly ``sd(d) / sqrt(N)``. 0 for a single unit.
        """
        if self.n_units < 2:
            return 0.0
        residual = (self.sums - self.sizes * self.estimate) * self._weights()
        return float(math.sqrt(float(np.dot(residual, residual)))) / float(self.sizes.sum())

    @property
    def df(self) -> float:
        """Degrees of freedom of the t reference: ``N - 1`` for pairs, Bell-McCaffrey's for clusters.

        With clusters, ``(tr M)^2 / tr(M^2)`` for ``M = W (diag(n) - n n'/N) W``, ``W`` the CR2
        weights over ``N``: the Satterthwaite df of the CR2 variance under working independence
        (Imbens and Kolesar 2016). It falls well below ``G - 1`` when a few large clusters hold
        most pairs, which is what keeps the test at its level there.
        """
        n = float(self.sizes.sum())
        if not self.clustered or self.n_units < 2:
            return max(n - 1.0, 1.0)
        w2 = (self._weights() / n) ** 2
        diagonal = w2 * self.sizes
        v2 = w2 * self.sizes**2 / n  # M = diag(diagonal) - v v'
        trace = float(diagonal.sum() - v2.sum())
        trace_sq = float(np.dot(diagonal, diagonal) - 2 * np.dot(diagonal, v2) + v2.sum() ** 2)
        return max(trace**2 / trace_sq, 1.0) if trace_sq > 0 else max(self.n_units - 1.0, 1.0)


def units(d: np.ndarray, clusters: Sequence[Hashable] | np.ndarray | None) -> Units:
    """Group the per-pair differences ``d`` into units (clusters when given, else pairs)."""
    if clusters is None:
        n = d.size
        return Units(d.astype(float), np.ones(n), np.arange(n), clustered=False)
    labels = np.asarray(clusters, dtype=object).ravel()
    if labels.size != d.size:
        raise ValueError(_MSG_CLUSTERS.format(n_clusters=labels.size, n_pairs=d.size))
    _, index = np.unique(labels.astype(str), return_inverse=True)
    sums = np.bincount(index, weights=d)
    sizes = np.bincount(index).astype(float)
    return Units(sums, sizes, index, clustered=True)


@dataclass(frozen=True, slots=True)
class ZTest:
    """The paper's two-sample Z test: ``z`` and its two-sided ``p``, or None with the ``note`` saying why."""

    z: float | None
    p: float | None
    note: str | None = None


def z_test(x_a: _Array, x_b: _Array) -> ZTest:
    """The paper's two-sample Z test (§2.2) with a two-sided p-value.

    ``Z = (mean_a - mean_b) / sqrt(S_a^2 / n_a + S_b^2 / n_b)`` with sample variances
    (``ddof=1``); ``p = 2 * P(N(0, 1) > |Z|)``. The paper's code reported a one-sided p;
    this one is two-sided, matching its two-sided H1. The test treats the sides as
    independent samples: it is reported for comparison with the paper, while the verdict
    rests on the paired test.

    Returns
    -------
    ZTest
        ``z`` and ``p`` are None when both sides are constant (the statistic is undefined:
        a zero spread is no evidence of certainty) or a side has fewer than two values.

    Examples
    --------
    >>> z_test([1, 2, 3, 4], [1, 2, 3, 4])
    ZTest(z=0.0, p=1.0, note=None)
    >>> z_test([1, 1], [0, 0]).note
    'both sides are constant: the Z test is undefined (no variance to scale the difference)'
    """
    from scipy.stats import norm

    a = np.asarray(x_a, dtype=float).ravel()
    b = np.asarray(x_b, dtype=float).ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError(_MSG_EMPTY)
    if a.size < 2 or b.size < 2:
        return ZTest(None, None, Z_TOO_FEW)
    diff = float(a.mean() - b.mean())
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    if se == 0:
        return ZTest(0.0, 1.0) if diff == 0 else ZTest(None, None, Z_CONSTANT)
    z = diff / se
    return ZTest(z, float(2.0 * norm.sf(abs(z))))


def adjust_pvalues(p: _Array, *, method: str = "holm") -> np.ndarray:
    """Multiple-testing adjusted p-values: Holm (``"holm"``) or Benjamini-Hochberg (``"bh"``).

    NaN entries (tests with no p-value) stay NaN and are left out of the family; callers
    report them (``score`` never produces one silently).

    The same figures as statsmodels' ``multipletests`` (``"holm"``, ``"fdr_bh"``), computed here
    because its Holm branch runs ``gc.collect()`` on every call (0.1 s a call measured in a small
    process), and the simulations and planners call this thousands of times.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04], method="holm").tolist()
    [0.02, 0.04]
    """
    if method not in _CORRECTIONS:
        raise ValueError(_MSG_CORRECTION.format(method=method))
    values = np.asarray(p, dtype=float).ravel()
    out = np.full(values.shape, np.nan)
    finite = ~np.isnan(values)
    m = int(finite.sum())
    if m:
        order = np.argsort(values[finite], kind="stable")
        ranked = values[finite][order]
        if method == "holm":  # step-down: max over j <= i of (m - j) p_(j)
            adjusted = np.maximum.accumulate((m - np.arange(m)) * ranked)
        else:  # step-up: min over j >= i of m p_(j) / j
            adjusted = np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[::-1])[::-1]
        back = np.empty(m)
        back[order] = np.minimum(adjusted, 1.0)
        out[finite] = back
    return out


def cohens_h(p_a: float, p_b: float) -> float:
    """Cohen's h for two proportions: ``2 asin(sqrt(p_a)) - 2 asin(sqrt(p_b))``.

    Examples
    --------
    >>> cohens_h(0.5, 0.5)
    0.0
    """
    return 2.0 * math.asin(math.sqrt(p_a)) - 2.0 * math.asin(math.sqrt(p_b))


def cohens_d_paired(x_a: _Array, x_b: _Array) -> float | None:
    """Paired Cohen's d (d_z): ``mean(a - b) / sd(a - b)`` with ``ddof=1``.

    0 when the differences are all 0; None when they are a non-zero constant or there is
    one pair (no spread: the standardised effect is undefined, not infinite).

    Examples
    --------
    >>> cohens_d_paired([2, 3, 4], [1, 1, 1])
    2.0
    """
    a, b = paired_arrays(x_a, x_b)
    d = a - b
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    if sd == 0:
        return 0.0 if float(d.mean()) == 0 else None
    return float(d.mean()) / sd


def relative_difference(a: float, b: float) -> float | None:
    """The paper's relative difference ``(a - b) / a`` as a fraction; ``None`` when ``a`` is 0.

    Examples
    --------
    >>> relative_difference(0.2, 0.1)
    0.5
    """
    if a == 0:
        return None
    return (a - b) / a
