"""Power from each test's own reference distribution: the minimum detectable effect and the pairs the equivalence gate needs.

The minimum detectable effect (MDE) is the smallest true difference A - B that the audit's
test, at its level, detects with the given power at this sample. It is computed from what the
test actually uses, so that injecting an effect of exactly the MDE is detected at the stated
power (checked by simulation in ``tests/test_stats_power.py`` and ``bench/stats_mde.py``):

- **counts** (the mean test): the noncentral t with the test's degrees of freedom (``n - 1``,
  or Bell-McCaffrey's with clusters) and its (CR2) standard error; the effect shifts the
  differences and keeps their spread.
- **rates** without clusters (McNemar): exact binomial power on the discordant pairs, whose
  number grows with the effect (Connor 1987): the observed discordance ``psi`` is split evenly
  between the two directions, and an effect ``delta`` adds ``delta`` to one of them. Power sums
  the exact test's rejection probability over the binomial number of discordant pairs.
- **rates** with clusters (the cluster mean test): the noncentral t of the CR2 standard error,
  grown by the variance the new discordant pairs add, ``delta (1 - delta / c) / N`` with ``c``
  the concordant share.

The old formula, ``(z_{1-α/2} + z_power) × SE`` with the standard error of the *observed*
discordance, gave 50-73% power at the printed MDE on a real audit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["PowerBasis", "mde", "pairs_for_equivalence", "power_mean", "power_mcnemar"]

_MSG_BASIS = "unknown power basis {test!r}; choose from: mean, mcnemar_exact, mcnemar_midp, rate_mean"
_BISECTIONS = 60
_MSG_TOO_MANY = "the pairs needed (sd {sd:g} of the differences against a margin of {margin:g}) exceed any number"


@dataclass(frozen=True, slots=True)
class PowerBasis:
    """What a key's test uses, for its power: ``test`` (``mean``, ``mcnemar_exact``, ``mcnemar_midp``, ``rate_mean``).

    ``se`` and ``df`` are the mean test's standard error and degrees of freedom (``mean``,
    ``rate_mean``); ``n`` the pairs; ``discordance`` the observed share of discordant pairs (rates).
    """

    test: str
    n: int
    se: float | None = None
    df: float | None = None
    discordance: float = 0.0


def power_mean(ncp: float, df: float, alpha: float) -> float:
    """Two-sided power of a t test at ``alpha`` with ``df`` degrees of freedom when the effect is ``ncp`` standard errors."""
    from scipy.stats import nct
    from scipy.stats import t as student_t

    critical = float(student_t.ppf(1 - alpha / 2, df))
    value = float(nct.sf(critical, df, ncp) + nct.cdf(-critical, df, ncp))
    if math.isfinite(value):
        return value
    from scipy.stats import norm  # far tails where scipy's noncentral t gives NaN: its normal limit

    return float(norm.sf(critical - ncp) + norm.cdf(-critical - ncp))


def _mcnemar_critical(n_discordant: np.ndarray, alpha: float, midp: bool) -> np.ndarray:
    """Largest count ``c`` of the rarer direction at which McNemar's test rejects (-1: never), per number of discordant pairs."""
    from scipy.stats import binom

    first = np.asarray(binom.ppf(alpha / 2, n_discordant, 0.5), dtype=float) - 1  # largest c with P(X <= c) < α/2
    exact: np.ndarray = np.where(2 * binom.cdf(first, n_discordant, 0.5) < alpha, first, first - 1)
    if not midp:
        return exact
    nxt = exact + 1  # mid-p rejects at most one count further (its p lies between the exact p's of c and c - 1)
    p_next = 2 * binom.cdf(nxt, n_discordant, 0.5) - binom.pmf(nxt, n_discordant, 0.5)
    out: np.ndarray = np.where((p_next < alpha) & (nxt < n_discordant / 2), nxt, exact)
    return out


def power_mcnemar(n: int, p_ab: float, p_ba: float, alpha: float, *, midp: bool = False) -> float:
    """Exact power of McNemar's test on ``n`` pairs with discordance ``p_ab`` (A only) and ``p_ba`` (B only)."""
    from scipy.stats import binom

    psi = min(1.0, p_ab + p_ba)
    if psi <= 0:
        return 0.0
    low = int(binom.ppf(1e-12, n, psi))
    high = int(binom.isf(1e-12, n, psi)) + 1
    counts = np.arange(max(low, 1), min(high, n) + 1)
    critical = _mcnemar_critical(counts, alpha, midp)
    share = p_ab / psi
    reject = binom.cdf(critical, counts, share) + binom.sf(counts - critical - 1, counts, share)
    reject = np.where(critical >= 0, reject, 0.0)
    return float(np.dot(binom.pmf(counts, n, psi), reject))


def _bisect(power_at: _PowerAt, target: float, high: float) -> float | None:
    """The smallest effect in ``(0, high]`` whose power reaches ``target`` (None when even ``high`` does not)."""
    if power_at(high) < target:
        return None
    low = 0.0
    for _ in range(_BISECTIONS):
        mid = (low + high) / 2
        low, high = (mid, high) if power_at(mid) < target else (low, mid)
    return high


class _PowerAt:
    """Power of a basis' test at an effect, as a callable for the bisection."""

    def __init__(self, basis: PowerBasis, alpha: float) -> None:
        self.basis, self.alpha = basis, alpha

    def __call__(self, effect: float) -> float:
        b = self.basis
        if b.test in ("mcnemar_exact", "mcnemar_midp"):
            half = b.discordance / 2
            return power_mcnemar(b.n, half + effect, half, self.alpha, midp=b.test == "mcnemar_midp")
        assert b.se is not None and b.df is not None
        se = b.se
        if b.test == "rate_mean":  # the new discordant pairs add their own variance
            concordant = max(1.0 - b.discordance, 1e-12)
            se = math.sqrt(b.se**2 + max(0.0, effect * (1 - effect / concordant)) / b.n)
        return power_mean(effect / se, b.df, self.alpha) if se > 0 else 1.0


def mde(basis: PowerBasis, *, alpha: float, power: float = 0.8) -> float | None:
    """The minimum detectable effect of a key's test at ``alpha`` with ``power`` (None where it has no spread to scale by).

    None also for a rate whose every pair is discordant (no concordant pair for an effect to
    turn), or where no effect within the rate's range reaches the power.

    Examples
    --------
    >>> round(mde(PowerBasis("mean", n=1000, se=0.1, df=999), alpha=0.05), 3)  # about (1.962 + 0.842) x SE
    0.28
    >>> round(mde(PowerBasis("mcnemar_exact", n=1000, discordance=0.0), alpha=0.05), 4)  # 6 one-way pairs needed
    0.0079
    """
    if basis.test not in ("mean", "mcnemar_exact", "mcnemar_midp", "rate_mean"):
        raise ValueError(_MSG_BASIS.format(test=basis.test))
    power_at = _PowerAt(basis, alpha)
    if basis.test == "mean":
        if basis.se is None or basis.df is None or not basis.se > 0:
            return None
        from scipy.optimize import brentq

        df, high = basis.df, 8.0
        if power_mean(0.0, df, alpha) >= power:  # a power at or below alpha: no effect at all already reaches it
            return 0.0
        while power_mean(high, df, alpha) < power and high < 1e6:
            high *= 2
        ncp = brentq(lambda x: power_mean(x, df, alpha) - power, 0.0, high)
        return float(ncp * basis.se)
    if basis.test == "rate_mean" and (basis.se is None or basis.df is None):
        return None
    room = 1.0 - basis.discordance  # the concordant share an effect can turn discordant
    return _bisect(power_at, power, room) if room > 0 else None


def pairs_for_equivalence(
    sd_difference: float, margin: float, *, alpha: float = 0.05, power: float = 0.8, design_effect: float = 1.0
) -> int:
    """Pairs the equivalence test (TOST at ``alpha``) needs to show ``|A - B| < margin`` with ``power`` when A = B.

    Both one-sided t tests must reject: ``margin / SE >= t_{1-α} + t_{(1+power)/2}``, with
    ``SE = sd_difference * sqrt(design_effect / n)`` and ``n - 1`` degrees of freedom
    (Chow, Shao and Wang 2008, §3.2). For a rate, ``sd_difference`` is about
    ``sqrt(discordance)``.

    Examples
    --------
    >>> pairs_for_equivalence(1.0, 0.1)  # a tenth of the differences' sd
    859
    """
    from scipy.stats import norm
    from scipy.stats import t as student_t

    if not sd_difference > 0 or not margin > 0:
        raise ValueError("sd_difference and margin must be > 0")
    deff = max(1.0, design_effect)

    def pairs(needed: float) -> int:
        if not math.isfinite(needed * deff):
            raise ValueError(_MSG_TOO_MANY.format(sd=sd_difference, margin=margin))
        return max(2, math.ceil(needed * deff))

    # from the normal approximation, whose answer the t's only raises a little: no jump from df 1 to an astronomic n
    n = pairs((float(norm.ppf(1 - alpha) + norm.ppf((1 + power) / 2)) * sd_difference / margin) ** 2)
    for _ in range(50):
        df = float(max(n - 1, 1))
        nxt = pairs((float(student_t.ppf(1 - alpha, df) + student_t.ppf((1 + power) / 2, df)) * sd_difference / margin) ** 2)
        if nxt == n:
            break
        n = nxt
    return n
