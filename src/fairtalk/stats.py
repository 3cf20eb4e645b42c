"""Paired statistics for an audit: the paper's Z test, paired tests, bootstrap CIs, corrections, effect sizes.

Every function is pure: arrays in, numbers or frozen records out. Randomness enters only
as an explicit ``seed``, turned into a generator by :func:`_rng`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

__all__ = [
    "CorpusBootstrap",
    "PairedTest",
    "adjust_pvalues",
    "cohens_d_paired",
    "cohens_h",
    "corpus_bootstrap",
    "paired_bootstrap_ci",
    "paired_test",
    "relative_difference",
    "z_test",
]

_MSG_LENGTHS = "paired samples differ in length: {n_a} and {n_b}"
_MSG_EMPTY = "need at least one pair, got none"
_MSG_NOT_BINARY = "a rate measure must be 0 or 1 for every response; found {value!r}"
_MSG_METHOD = "unknown paired-test method {method!r} for kind {kind!r}; choose from: {choices}"
_MSG_KIND = "unknown measure kind {kind!r}; choose from: rate, count"
_MSG_CORRECTION = "unknown correction {method!r}; choose from: holm, bh"
_MSG_LEVEL = "confidence level must be in (0, 1), got {level!r}"
_MSG_SHARED_INDEX = "both sides must index one shared set of prepared texts; got {n_a} and {n_b} texts"
_MSG_RESAMPLES = "n_resamples must be at least 1, got {n!r}"

#: Paired-test methods per measure kind; the first is the default.
PAIRED_METHODS: Mapping[str, tuple[str, ...]] = {
    "rate": ("mcnemar_midp", "mcnemar_exact"),
    "count": ("wilcoxon", "ttest"),
}
#: statsmodels names of the multiple-testing corrections.
_CORRECTIONS = {"holm": "holm", "bh": "fdr_bh"}
_Array = Sequence[float] | np.ndarray
#: Upper bound on the elements of one bootstrap chunk (keeps memory near 32 MB).
_CHUNK_ELEMENTS = 1 << 22


@dataclass(frozen=True, slots=True)
class PairedTest:
    """The outcome of one paired test: its name, statistic and two-sided p-value."""

    name: str
    statistic: float
    p: float


class CorpusBootstrap(NamedTuple):
    """Bootstrap CI of the difference A - B of a corpus-level statistic, and its two-sided p-value."""

    ci: tuple[float, float]
    p: float


def _rng(seed: int) -> np.random.Generator:
    """The one place a seed becomes a generator."""
    return np.random.default_rng(seed)


def _paired(x_a: _Array, x_b: _Array) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x_a, dtype=float).ravel()
    b = np.asarray(x_b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(_MSG_LENGTHS.format(n_a=a.size, n_b=b.size))
    if a.size == 0:
        raise ValueError(_MSG_EMPTY)
    return a, b


def _degenerate(mean_diff: float) -> tuple[float, float]:
    """Statistic and p when the spread is zero: no evidence if the means agree, certainty if not."""
    if mean_diff == 0:
        return 0.0, 1.0
    return math.copysign(math.inf, mean_diff), 0.0


def z_test(x_a: _Array, x_b: _Array) -> tuple[float, float]:
    """The paper's two-sample Z test (§2.2) with a two-sided p-value.

    ``Z = (mean_a - mean_b) / sqrt(S_a^2 / n_a + S_b^2 / n_b)`` with sample variances
    (``ddof=1``); ``p = 2 * P(N(0, 1) > |Z|)``. The paper's code reported a one-sided p;
    this one is two-sided, matching its two-sided H1.

    Parameters
    ----------
    x_a, x_b : array-like
        Per-response scores of each side (the paper has ``n_a == n_b == n``).

    Returns
    -------
    (z, p) : tuple of float
        When both variances are 0: ``(0, 1)`` if the means are equal, else ``(±inf, 0)``.
        ``(nan, nan)`` when a side has fewer than two values (no variance estimate).

    Examples
    --------
    >>> z_test([1, 2, 3, 4], [1, 2, 3, 4])
    (0.0, 1.0)
    """
    from scipy.stats import norm

    a = np.asarray(x_a, dtype=float).ravel()
    b = np.asarray(x_b, dtype=float).ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError(_MSG_EMPTY)
    if a.size < 2 or b.size < 2:
        return math.nan, math.nan
    diff = float(a.mean() - b.mean())
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    if se == 0:
        return _degenerate(diff)
    z = diff / se
    return z, float(2.0 * norm.sf(abs(z)))


def _mcnemar_midp(n_ab: int, n_ba: int) -> float:
    """Mid-p McNemar: the exact binomial p minus the probability of the observed count."""
    from scipy.stats import binom

    n = n_ab + n_ba
    if n == 0:
        return 1.0
    k = min(n_ab, n_ba)
    p = 2.0 * binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5)
    return float(min(1.0, max(0.0, p)))


def paired_test(x_a: _Array, x_b: _Array, *, kind: Literal["rate", "count"], method: str | None = None) -> PairedTest:
    """A two-sided paired test of ``E[a] == E[b]``.

    Parameters
    ----------
    x_a, x_b : array-like
        Per-pair scores, aligned (``x_a[i]`` and ``x_b[i]`` answer the same pair).
    kind : {"rate", "count"}
        ``rate`` scores are 0/1; ``count`` scores are any numbers.
    method : str, optional
        For rates ``"mcnemar_midp"`` (default; the exact binomial test on the discordant
        pairs with the mid-p correction, less conservative than exact) or
        ``"mcnemar_exact"`` (statsmodels). For counts ``"wilcoxon"`` (default; signed-rank,
        zeros handled by Pratt's method, normal approximation with tie correction) or
        ``"ttest"`` (paired t-test).

    Returns
    -------
    PairedTest
        ``statistic`` is the smaller discordant count for McNemar, the signed-rank
        statistic for Wilcoxon and t for the t-test. All-zero differences give ``p = 1``;
        a non-zero constant difference gives the t-test ``t = ±inf, p = 0``.

    Examples
    --------
    >>> paired_test([1, 1, 0, 1], [1, 0, 0, 1], kind="rate").name
    'mcnemar_midp'
    """
    if kind not in PAIRED_METHODS:
        raise ValueError(_MSG_KIND.format(kind=kind))
    choices = PAIRED_METHODS[kind]
    method = choices[0] if method is None else method
    if method not in choices:
        raise ValueError(_MSG_METHOD.format(method=method, kind=kind, choices=", ".join(choices)))
    a, b = _paired(x_a, x_b)
    if kind == "rate":
        bad = np.setdiff1d(np.unique(np.concatenate([a, b])), [0.0, 1.0])
        if bad.size:
            raise ValueError(_MSG_NOT_BINARY.format(value=float(bad[0])))
        n_ab = int(np.count_nonzero((a == 1) & (b == 0)))
        n_ba = int(np.count_nonzero((a == 0) & (b == 1)))
        if method == "mcnemar_midp":
            return PairedTest(method, float(min(n_ab, n_ba)), _mcnemar_midp(n_ab, n_ba))
        if n_ab + n_ba == 0:
            return PairedTest(method, 0.0, 1.0)
        from statsmodels.stats.contingency_tables import mcnemar

        table = [[0, n_ab], [n_ba, 0]]
        res = mcnemar(table, exact=True)
        return PairedTest(method, float(res.statistic), float(min(1.0, res.pvalue)))
    d = a - b
    if method == "ttest":
        sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
        if sd == 0:
            t, p = _degenerate(float(d.mean()))
            return PairedTest(method, t, p)
        from scipy.stats import ttest_rel

        res = ttest_rel(a, b)
        return PairedTest(method, float(res.statistic), float(res.pvalue))
    if not np.any(d):
        return PairedTest(method, 0.0, 1.0)
    from scipy.stats import wilcoxon

    res = wilcoxon(d, zero_method="pratt", method="approx")
    return PairedTest(method, float(res.statistic), float(res.pvalue))


def _resampled_means(d: np.ndarray, rng: np.random.Generator, n_resamples: int) -> np.ndarray:
    """Means of ``n_resamples`` with-replacement resamples of ``d``.

    When ``d`` has few distinct values (rates, counts), the number of times each value
    is drawn is multinomial, so a resample costs one multinomial draw over the distinct
    values instead of ``len(d)`` index draws; both give the same distribution.
    """
    n = d.size
    values, counts = np.unique(d, return_counts=True)
    out = np.empty(n_resamples)
    if values.size * 16 <= n:
        probs = counts / n
        rows = max(1, _CHUNK_ELEMENTS // values.size)
        for start in range(0, n_resamples, rows):
            stop = min(n_resamples, start + rows)
            drawn = rng.multinomial(n, probs, size=stop - start)
            out[start:stop] = drawn @ values / n
        return out
    rows = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = d[idx].mean(axis=1)
    return out


def _check_bootstrap(n_resamples: int, level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(_MSG_LEVEL.format(level=level))
    if n_resamples < 1:
        raise ValueError(_MSG_RESAMPLES.format(n=n_resamples))


def _percentile_ci(samples: np.ndarray, level: float) -> tuple[float, float]:
    low, high = np.quantile(samples, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def paired_bootstrap_ci(
    x_a: _Array, x_b: _Array, *, seed: int, n_resamples: int = 2000, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``mean(a - b)``, resampling pairs with replacement.

    Deterministic given ``seed``. Rates and counts (few distinct differences) cost one
    multinomial draw per resample, so 300k pairs x 2000 resamples takes well under a second.

    Examples
    --------
    >>> paired_bootstrap_ci([1, 2, 3], [1, 2, 3], seed=0)
    (0.0, 0.0)
    """
    _check_bootstrap(n_resamples, level)
    a, b = _paired(x_a, x_b)
    return _percentile_ci(_resampled_means(a - b, _rng(seed), n_resamples), level)


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
) -> dict[str, CorpusBootstrap]:
    """Paired resampling inference for a corpus-level statistic (distinct-n): CI and p of A - B per key.

    Side A's statistic is evaluated with ``weights = bincount(index_a, minlength=n_texts_a)``
    (how often each prepared text occurs), likewise side B. ``index_a[i]`` is the
    prepared-text index of pair ``i``'s A response, so a statistic prepared once over the
    union of unique texts serves both sides (usually one object passed as ``stat_a`` and
    ``stat_b``). Both sides must index that one shared set (``n_texts_a == n_texts_b``).

    Each resample is a *paired permutation*: within every pair, the two responses swap
    sides with probability 1/2. Resampling pairs with replacement (the ordinary bootstrap)
    is not used here: its duplicated responses shrink distinct-n, biasing the resampled
    differences and understating their spread by about 40% in simulation, so its
    intervals miss the observed value and its tests reject far too often.

    - ``p`` is the Monte Carlo permutation p-value ``(1 + #{|d*| >= |d|}) / (B + 1)``,
      valid under the paired null that the two sides are exchangeable.
    - ``ci`` assumes a location shift: ``(d - q_hi, d - q_lo)`` with ``q`` the
      ``(1 -+ level) / 2`` quantiles of the permutation differences ``d*``.

    Returns ``{key: CorpusBootstrap(ci=(low, high), p=p)}``.
    """
    _check_bootstrap(n_resamples, level)
    keys = tuple(keys)
    ia = np.asarray(index_a, dtype=np.int64).ravel()
    ib = np.asarray(index_b, dtype=np.int64).ravel()
    if ia.shape != ib.shape:
        raise ValueError(_MSG_LENGTHS.format(n_a=ia.size, n_b=ib.size))
    if ia.size == 0:
        raise ValueError(_MSG_EMPTY)
    if n_texts_a != n_texts_b:  # a swap moves a text to the other side, so both must share one index
        raise ValueError(_MSG_SHARED_INDEX.format(n_a=n_texts_a, n_b=n_texts_b))

    total = np.bincount(ia, minlength=n_texts_a) + np.bincount(ib, minlength=n_texts_a)

    def difference(side_a: np.ndarray) -> list[float]:
        weights_a = np.bincount(side_a, minlength=n_texts_a)
        value_a, value_b = stat_a(weights_a), stat_b(total - weights_a)  # swaps keep the union fixed
        return [value_a[key] - value_b[key] for key in keys]

    observed = difference(ia)
    rng = _rng(seed)
    diffs = np.empty((len(keys), n_resamples))
    for r in range(n_resamples):
        diffs[:, r] = difference(np.where(rng.random(ia.size) < 0.5, ib, ia))
    out = {}
    for k, key in enumerate(keys):
        q_low, q_high = np.quantile(diffs[k], [(1 - level) / 2, (1 + level) / 2])
        p = (1 + np.count_nonzero(np.abs(diffs[k]) >= abs(observed[k]) - 1e-12)) / (n_resamples + 1)
        out[key] = CorpusBootstrap((float(observed[k] - q_high), float(observed[k] - q_low)), float(min(1.0, p)))
    return out


def adjust_pvalues(p: _Array, *, method: str = "holm") -> np.ndarray:
    """Multiple-testing adjusted p-values: Holm (``"holm"``) or Benjamini-Hochberg (``"bh"``).

    NaN entries stay NaN and are left out of the family.

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
    if finite.any():
        from statsmodels.stats.multitest import multipletests

        out[finite] = multipletests(values[finite], method=_CORRECTIONS[method])[1]
    return out


def cohens_h(p_a: float, p_b: float) -> float:
    """Cohen's h for two proportions: ``2 asin(sqrt(p_a)) - 2 asin(sqrt(p_b))``.

    Examples
    --------
    >>> cohens_h(0.5, 0.5)
    0.0
    """
    return 2.0 * math.asin(math.sqrt(p_a)) - 2.0 * math.asin(math.sqrt(p_b))


def cohens_d_paired(x_a: _Array, x_b: _Array) -> float:
    """Paired Cohen's d (d_z): ``mean(a - b) / sd(a - b)`` with ``ddof=1``.

    0 when the differences are all 0; ``±inf`` when they are a non-zero constant.

    Examples
    --------
    >>> cohens_d_paired([2, 3, 4], [1, 1, 1])
    2.0
    """
    a, b = _paired(x_a, x_b)
    d = a - b
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    if sd == 0:
        return _degenerate(float(d.mean()))[0]
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
