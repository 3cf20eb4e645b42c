"""Paired tests of ``A == B``: the score test for rates, the mean test for counts (exact sign-flip or t), and others on request.

Which test, and why (``docs/statistics.md`` has the long form):

- **rates** (0/1 per response): the score test of a zero mean difference (``score``, the
  default; ``cluster_score`` with clusters): the test whose inversion is the score interval
  the audit prints beside it (:func:`fairtalk.stats.score_interval` on ``−1, 0, 1``,
  :func:`fairtalk.stats.difference_interval` with ``test="score"``), so its verdict and its
  interval never disagree about 0. Without clusters it is McNemar's asymptotic test
  ``(b − c) / sqrt(b + c)``, which Fagerland, Lydersen and Laake (2013) recommend over the
  exact conditional test (too conservative); with clusters the counts are divided by the
  design effect by dialogue (``bench/rate_one_test.py`` has its level). On request:
  McNemar's exact binomial test on the discordant pairs (``mcnemar_exact``: its level never
  exceeds α), its mid-p variant (``mcnemar_midp``), or the mean test below (``mean``); their
  intervals are not their inversions. McNemar ignores clusters (a note says so).
- **counts** (any number per response): the *mean test* (``mean``, the default), a test of
  ``E[a - b] == 0``: the paired t-test on the independent units (pairs; or, with clusters,
  the CR2 cluster-robust t with Bell-McCaffrey degrees of freedom, see ``Units``). When the
  differences are few, tied or discrete (``_signflip.randomization_applies``: at most 50
  differing units, or at most 10 distinct non-zero sizes) its reference is the studentized
  sign-flip randomization distribution instead of t: exact where the patterns can be counted
  (``signflip_exact``), else 10,000 seeded random flips (``signflip_mc``); whole clusters flip.
  ``wilcoxon`` (signed-rank) is an option: it tests whether the differences are symmetric
  about 0, not the mean, so it is reported with the Hodges-Lehmann estimate and interval;
  it is exact up to :data:`WILCOXON_EXACT_MAX` non-zero differences.
- A constant non-zero difference never gives ``p = 0``: its exact sign-flip p is ``2^(1-m)``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fairtalk.stats._core import Units, _Array, paired_arrays, units
from fairtalk.stats._score import RATE_SUPPORT, rate_design_effect, score_test, score_z
from fairtalk.stats._signflip import EXACT_MAX_UNITS, randomization_applies, signflip_test

__all__ = [
    "DEFAULT_METHODS",
    "EXACT_MAX_UNITS",
    "PAIRED_METHODS",
    "WILCOXON_EXACT_MAX",
    "PairedTest",
    "exact_signflip_p",
    "paired_test",
]

WILCOXON_EXACT_MAX = 20
"""Wilcoxon's signed-rank p is exact up to this many non-zero differences, normal above."""
PAIRED_METHODS: Mapping[str, tuple[str, ...]] = {
    "rate": ("score", "mcnemar_exact", "mcnemar_midp", "mean"),
    "count": ("mean", "wilcoxon"),
}
"""Paired-test methods per measure kind."""
DEFAULT_METHODS: Mapping[str, str] = {"rate": "score", "count": "mean"}
"""The default method per kind."""

_MSG_METHOD = "unknown paired-test method {method!r} for kind {kind!r}; choose from: {choices}"
_MSG_KIND = "unknown measure kind {kind!r}; choose from: rate, count"
_MSG_NOT_BINARY = "a rate measure must be 0 or 1 for every response; found {value!r}"
_NOTE_CONSTANT = "every unit differs by the same amount: p is the exact sign-flip probability 2^(1-m)"
_NOTE_INDEPENDENT = "treats pairs as independent although clusters were given"


@dataclass(frozen=True, slots=True)
class PairedTest:
    """The outcome of one paired test: the test that ran, its statistic and two-sided p-value.

    ``name`` says which test actually ran (``mcnemar_exact``, ``signflip_exact``,
    ``cluster_t``, ...); ``note`` says why a fallback was taken or a value is missing.
    """

    name: str
    statistic: float | None
    p: float | None
    note: str | None = None


def exact_signflip_p(values: np.ndarray) -> float:
    """Two-sided p of ``sum(values)`` under random sign flips, over all ``2^len(values)`` patterns.

    Examples
    --------
    >>> exact_signflip_p(np.array([1.0, 1.0, 1.0, 1.0]))  # four pairs all +1: 2 of 16 patterns
    0.125
    """
    sums = np.zeros(1)
    for v in values:
        sums = np.concatenate([sums + v, sums - v])
    observed = abs(float(values.sum()))
    tolerance = 1e-9 * max(1.0, float(np.abs(values).sum()))
    return float(np.count_nonzero(np.abs(sums) >= observed - tolerance) / sums.size)


def _mean_test(u: Units, seed: int) -> PairedTest:
    prefix = "cluster_" if u.clustered else ""
    nonzero = u.sums[u.sums != 0]
    m = int(nonzero.size)
    if m == 0:
        return PairedTest(f"{prefix}signflip_exact", 0.0, 1.0)
    se = u.standard_error()
    if se == 0:  # every unit's mean difference is the same non-zero value: only the two uniform patterns reach it
        note = _NOTE_CONSTANT if m > EXACT_MAX_UNITS else None
        return PairedTest(f"{prefix}signflip_exact", float(nonzero.sum()), min(1.0, 2.0 * 0.5**m), note)
    if randomization_applies(u):
        flipped = signflip_test(u, seed=seed)
        name = f"{prefix}signflip_exact" if flipped.exact else f"{prefix}signflip_mc"
        return PairedTest(name, flipped.statistic, flipped.p)
    from scipy.stats import t as student_t

    statistic = u.estimate / se
    p = float(2.0 * student_t.sf(abs(statistic), u.df))
    return PairedTest("cluster_t" if u.clustered else "paired_t", statistic, p)


def _mcnemar(a: np.ndarray, b: np.ndarray, method: str) -> PairedTest:
    from scipy.stats import binom

    n_ab = int(np.count_nonzero((a == 1) & (b == 0)))
    n_ba = int(np.count_nonzero((a == 0) & (b == 1)))
    n, k = n_ab + n_ba, min(n_ab, n_ba)
    if n == 0:
        return PairedTest(method, 0.0, 1.0)
    if method == "mcnemar_exact":
        p = 2.0 * binom.cdf(k, n, 0.5)
    else:  # mid-p: the exact p minus the probability of the observed count
        p = 2.0 * binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5)
    return PairedTest(method, float(k), float(min(1.0, max(0.0, p))))


def _score(d: np.ndarray, clusters: Sequence[Hashable] | np.ndarray | None) -> PairedTest:
    """The score test of a zero mean of the rate differences ``d``: the test the audit's score interval inverts.

    Its design effect is the one that interval takes (:func:`fairtalk.stats._score.rate_design_effect`).
    """
    design = rate_design_effect(d, clusters)
    z = score_z(d, clusters=clusters, support=RATE_SUPPORT, design_effect=design)
    p = score_test(d, clusters=clusters, support=RATE_SUPPORT, design_effect=design)
    assert z is not None and p is not None  # 0/1 sides: every difference is -1, 0 or 1
    return PairedTest("cluster_score" if clusters is not None else "score", z, p)


def _wilcoxon(d: np.ndarray) -> PairedTest:
    """Signed-rank test with Pratt's zeros: exact enumeration for few non-zero differences, else normal."""
    from scipy.stats import rankdata, wilcoxon

    nonzero = d != 0
    m = int(np.count_nonzero(nonzero))
    if m == 0:
        return PairedTest("wilcoxon_exact", 0.0, 1.0)
    ranks = rankdata(np.abs(d))[nonzero]  # Pratt: zeros take part in the ranking, not in the statistic
    signed = np.sign(d[nonzero]) * ranks
    t_plus = float(ranks[signed > 0].sum())
    if m <= WILCOXON_EXACT_MAX:
        return PairedTest("wilcoxon_exact", t_plus, exact_signflip_p(signed))
    res = wilcoxon(d, zero_method="pratt", method="approx")
    return PairedTest("wilcoxon_approx", float(res.statistic), float(res.pvalue))


def paired_test(
    x_a: _Array,
    x_b: _Array,
    *,
    kind: str,
    method: str | None = None,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    seed: int = 0,
) -> PairedTest:
    """A two-sided paired test that A and B do not differ (see the module docstring for which test when).

    Parameters
    ----------
    x_a, x_b : array-like
        Per-pair scores, aligned (``x_a[i]`` and ``x_b[i]`` answer the same pair).
    kind : {"rate", "count"}
        ``rate`` scores are 0/1; ``count`` scores are any finite numbers.
    method : str, optional
        Rates: ``score`` (default), ``mcnemar_exact``, ``mcnemar_midp`` or ``mean``; counts:
        ``mean`` (default) or ``wilcoxon``.
    clusters : sequence, optional
        One cluster id per pair (the dialogue it came from). The mean test then treats
        clusters, not pairs, as the independent units (sign flips and t by cluster); the
        score test divides its counts by the design effect by cluster.
    seed : int
        Seeds the random sign flips of the mean test's Monte Carlo randomization reference
        (used only where exact enumeration is out of reach).

    Returns
    -------
    PairedTest

    Examples
    --------
    >>> paired_test([1, 1, 0, 1], [1, 0, 0, 1], kind="rate").name
    'score'
    >>> paired_test([1, 1, 0, 1], [1, 0, 0, 1], kind="rate", method="mcnemar_exact").p  # one discordant pair
    1.0
    >>> paired_test([2, 2], [1, 1], kind="count").p  # two pairs, both +1: not certainty
    0.5
    """
    if kind not in PAIRED_METHODS:
        raise ValueError(_MSG_KIND.format(kind=kind))
    choices = PAIRED_METHODS[kind]
    if method is None:
        method = DEFAULT_METHODS[kind]
    if method not in choices:
        raise ValueError(_MSG_METHOD.format(method=method, kind=kind, choices=", ".join(choices)))
    a, b = paired_arrays(x_a, x_b)
    if kind == "rate":
        bad = np.setdiff1d(np.unique(np.concatenate([a, b])), [0.0, 1.0])
        if bad.size:
            raise ValueError(_MSG_NOT_BINARY.format(value=float(bad[0])))
    if method == "score":
        return _score(a - b, clusters)
    if method.startswith("mcnemar"):
        test = _mcnemar(a, b, method)
    elif method == "wilcoxon":
        test = _wilcoxon(a - b)
    else:
        return _mean_test(units(a - b, clusters), seed)
    if clusters is not None and test.note is None:
        return PairedTest(test.name, test.statistic, test.p, _NOTE_INDEPENDENT)
    return test
