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

The pairs the equivalence gate needs for a **rate** (:func:`pairs_for_rate_equivalence`) come
from the exact power of the very rule the gate runs (``fairtalk.stats.rate_equivalence``), not
from the normal formula of :func:`pairs_for_equivalence` (which is kept for counts): at a rare
rate, whose discordant pairs are few, that formula planned 31-193 pairs where the gate passed a
fair model 0-4% of the time. Under a fair model each pair is discordant with the pilot's share
``q``, half each way. The units are dialogues of the pilot's pairs each where the audit clusters,
else pairs. With fewer than ``FEW_DISCORDANT_UNITS`` units holding a discordant pair the gate
decides by the exact bound on each direction's units (``direction_equivalence``; no unit at all:
identical answers), so that part of the power sums the multinomial chance of each count of units
holding an A-above pair, a B-above pair or both. From there up it decides by the Newcombe TOST
(``tost_rate``, with the audit's design effect): the discordant count ``k`` is Binomial(n, q), its
split Binomial(k, ½), and ``k`` pairs hold that many units with the chance of ``k`` draws, uniform
over the units, filling at least ``FEW_DISCORDANT_UNITS`` of them. The pairs needed are the fewest
whose power reaches the target (or, where that size's power jumps past the target by more than
:data:`POWER_TOLERANCE`, the top of the tooth before it when that tooth comes as near below).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fairtalk.stats._equivalence import FEW_DISCORDANT_UNITS, _allowed_share, direction_passing_count
from fairtalk.stats._intervals import newcombe_from_counts

__all__ = [
    "CORPUS_LEAST_PAIRS",
    "CORPUS_LEAST_PAIRS_UNMODELLED",
    "ClusterSizes",
    "corpus_decidable",
    "corpus_least_units",
    "PowerBasis",
    "expected_clusters",
    "mde",
    "pairs_for_corpus_equivalence",
    "pairs_for_equivalence",
    "pairs_for_rate_equivalence",
    "pairs_for_few_differing",
    "plan_few_differing",
    "differing_share_interval",
    "identical_share",
    "FewDifferingPlan",
    "SHARE_CONFIDENCE",
    "FEW_DIFFERING",
    "FEW_DISCORDANT",
    "POWER_TOLERANCE",
    "power_mcnemar",
    "power_corpus_at_size",
    "power_corpus_equivalence",
    "power_few_differing",
    "power_mean",
    "power_rate_equivalence",
    "spanned_dialogues",
    "MAX_DETECT_PAIRS",
    "exact_least_units",
    "pairs_spanning",
    "pairs_to_detect",
    "units_spanned",
]

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


FEW_DIFFERING = 10
"""A count key whose pairs differ so rarely that fewer than this many would differ at the normal formula's size is
planned by the exact power of the audit's own rule on a sample (:func:`pairs_for_few_differing`), not by its spread."""
#: The most pairs :func:`pairs_for_few_differing` searches: beyond, no audit reaches the power.
_FEW_DIFFERING_MOST = 10**6
SHARE_CONFIDENCE = 0.95
"""The two-sided confidence of the interval on a pilot's differing share (:func:`differing_share_interval`) for every
share of which a few-differing plan (:func:`plan_few_differing`) reaches the power."""
#: Shares inside that interval, spaced geometrically, at which the plan checks the power besides its ends.
_SHARE_GRID = 12
_MSG_SHARE_ARGS = "share must be in [0, 1], pilot_pairs >= 1 and confidence in (0, 1); got {share!r}, {n!r}, {level!r}"
_MSG_FEW_TOO_MANY = "the audit's rule does not reach power {power:.2f} on {n:,} pairs"
_MSG_FEW_INTERVAL = (
    "the audit's rule does not reach power {power:.2f} on {n:,} pairs at every differing share in the pilot's "
    "{level:.0%} interval, {low:.3%} to {high:.3%}"
)


def differing_share_interval(
    share: float, pilot_pairs: int, *, confidence: float = SHARE_CONFIDENCE, design_effect: float = 1.0
) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval on the share of pairs that differ, from ``share`` of a pilot's ``pilot_pairs``.

    Where the audit clusters, the pilot's pairs are not independent draws: the interval is then Korn and
    Graubard's (1998), Clopper-Pearson on the effective counts, ``share x n / deff`` differing of ``n / deff``
    (``design_effect`` floored at 1; a count that is not whole goes into the beta quantiles as it is).

    Examples
    --------
    >>> [round(x, 5) for x in differing_share_interval(0.005, 200)]  # 1 pair of 200 differs
    [0.00013, 0.02754]
    >>> [round(x, 4) for x in differing_share_interval(0.05, 200, design_effect=2.0)]  # 5 of 100 effective pairs
    [0.0164, 0.1128]
    """
    from scipy.stats import beta

    if not (0 <= share <= 1 and pilot_pairs >= 1 and 0 < confidence < 1):
        raise ValueError(_MSG_SHARE_ARGS.format(share=share, n=pilot_pairs, level=confidence))
    size = pilot_pairs / max(1.0, design_effect)
    differing = share * size
    tail = (1 - confidence) / 2
    low = float(beta.ppf(tail, differing, size - differing + 1)) if differing > 0 else 0.0
    high = float(beta.ppf(1 - tail, differing + 1, size - differing)) if differing < size else 1.0
    return low, high


def identical_share(margin: float | None, max_difference: float | None) -> float:
    """The share of units that could differ below which the identical-answers rule bounds a key (``share_equivalence``'s).

    ``margin / max_difference`` (capped at 1) where both are given, ``max_difference`` a count's range of scores
    (what one pair can move its mean by at most), else :data:`~fairtalk.stats.IDENTICAL_SHARE`. The rule passes
    identical answers from :func:`~fairtalk.stats.identical_units_needed` of it units (``max_difference`` 1): a
    count whose scores span 7 words at margin ±0.05723 needs 365, not the default's 149.

    Examples
    --------
    >>> round(identical_share(0.05723, 7.0), 5), identical_share(0.05, None)
    (0.00818, 0.02)
    """
    return _allowed_share(margin, max_difference)


def _identical_reach(n: int, identical_pairs: int, identical_units: int | None, cluster_sizes: ClusterSizes) -> float:
    """The chance a sample of ``n`` pairs counts the identical-answers bound's units: those a uniform sample spans, else a step."""
    if cluster_sizes and identical_units is not None:
        return _chance_to_span(n, identical_units, cluster_sizes)
    return 1.0 if n >= identical_pairs else 0.0


def _few_tost_power(n: int, share: float, margin: float, t: float, design_effect: float) -> float:
    """P(some of ``n`` pairs differ, each by ±1 with chance ``share``, and the paired TOST passes them), binomial tails cut."""
    from scipy.special import gammaln
    from scipy.stats import binom

    # No split of more than ``most`` differing pairs passes: |mean| + t SE is concave in |mean|, so least at an even
    # split (t SE, SE = sqrt(k deff / (n (n - 1)))) or all one way (at least k / n), each growing with k.
    se_one = math.sqrt(max(1.0, design_effect) / (n * max(n - 1, 1)))
    most = math.ceil(max((margin / (t * se_one)) ** 2 if t > 0 else math.inf, margin * n))
    low = max(1, int(binom.ppf(_TAIL, n, share)))
    high = min(n, int(binom.isf(_TAIL, n, share)) + 1, most)
    if high < low:
        return 0.0
    k = np.arange(low, high + 1)[:, None]  # pairs that differ; j of them with A above B, within the tails of Binomial(k, ½)
    width = math.ceil(min(3.5 * math.sqrt(high), margin * n / 2)) + 1  # and |2j - k| / n, the |mean|, under the margin
    j = k // 2 + np.arange(-width, width + 1)[None, :]
    inside = (j >= 0) & (j <= k)
    mean = (2 * j - k) / n
    var = np.maximum(k - n * mean**2, 0.0) / max(n - 1, 1)
    se = np.sqrt(var * max(1.0, design_effect) / n)
    passes = inside & (se > 0) & (np.abs(mean) + t * se < margin)
    jj = np.where(passes, j, 0)  # Binomial(k, ½) at the passing splits, from log-gammas (scipy's pmf is slow here)
    split = np.where(passes, np.exp(gammaln(k + 1) - gammaln(jj + 1) - gammaln(k - jj + 1) - k * math.log(2)), 0.0).sum(axis=1)
    return float(binom.pmf(k[:, 0], n, share) @ split)


def power_few_differing(
    n: int,
    share: float,
    margin: float,
    *,
    alpha: float = 0.05,
    design_effect: float = 1.0,
    identical_pairs: int,
    identical_units: int | None = None,
    cluster_sizes: ClusterSizes = (),
) -> tuple[float, float]:
    """The chance the audit's rule passes a fair count key on ``n`` pairs, ``share`` of them differing by ±1 at random.

    With no pair differing (chance ``(1 - share)^n``) the identical-answers bound decides: it passes from
    ``identical_pairs``, or, given the corpus' ``cluster_sizes`` and the bound's ``identical_units`` (dialogues),
    where the sample spans that many (the chance a uniform sample does, :func:`pairs_spanning`'s). With ``k``
    differing, ``j`` of them A above B, the paired TOST (t on ``n - 1`` df, the standard error widened by
    ``design_effect``) passes where ``|mean| + t SE < margin``; it has no interval with no spread. Returns
    (power, the part of it from samples with no differing pair).

    Examples
    --------
    >>> [round(power_few_differing(n, 0.005, 0.05723, identical_pairs=572)[0], 2) for n in (100, 323)]
    [0.39, 0.8]
    >>> round(power_few_differing(600, 0.005, 0.05723, identical_pairs=572)[1], 3)  # no pair differs: the bound passes
    0.049
    """
    from scipy.stats import t as student_t

    t = float(student_t.ppf(1 - alpha, max(n - 1, 1)))
    reach = _identical_reach(n, identical_pairs, identical_units, cluster_sizes)
    identical = float((1 - share) ** n) * reach
    return identical + _few_tost_power(n, share, margin, t, design_effect), identical


@dataclass(frozen=True, slots=True)
class FewDifferingPlan:
    """A count key with few differing pairs planned for every differing share in an interval on the pilot's share.

    ``pairs`` reach the power at each share from ``low`` to ``high`` (the pilot's ``share`` inside, the
    ``confidence`` interval of :func:`differing_share_interval`); ``least`` is the least power found over them, at
    ``least_share``. ``at_low`` and ``at_high`` are :func:`power_few_differing` at the two ends: (power, the part
    from samples with no differing pair). ``at_share`` is the size planned at the pilot's share alone (None: no
    size within :data:`_FEW_DIFFERING_MOST` reaches the power there), and ``at_share_least`` the least power over
    the interval at that size (None with it).
    """

    pairs: int
    share: float
    low: float
    high: float
    confidence: float
    least: float
    least_share: float
    at_low: tuple[float, float]
    at_high: tuple[float, float]
    at_share: int | None
    at_share_least: float | None


class _FewPower:
    """The power of the audit's rule on a fair count key at one size, over a set of differing shares."""

    def __init__(
        self,
        margin: float,
        alpha: float,
        design_effect: float,
        identical: tuple[int, int | None, ClusterSizes],
    ) -> None:
        self.margin, self.alpha, self.design_effect, self.identical = margin, alpha, design_effect, identical

    def at(self, n: int, share: float) -> float:
        identical_pairs, identical_units, sizes = self.identical
        return power_few_differing(
            n,
            share,
            self.margin,
            alpha=self.alpha,
            design_effect=self.design_effect,
            identical_pairs=identical_pairs,
            identical_units=identical_units,
            cluster_sizes=sizes,
        )[0]

    def reaches(self, n: int, shares: tuple[float, ...], power: float) -> bool:
        """Whether the power at ``n`` reaches ``power`` at every one of ``shares`` (checked in order, stopping at a miss)."""
        return all(self.at(n, share) >= power for share in shares)


def _few_search(start: int, reaches: Callable[[int], bool], identical_pairs: int, too_many: str) -> int:
    """The first size from ``start`` that ``reaches``: 2% steps (a step to ``identical_pairs`` when near), then a bisection back.

    The power is not monotone in the pairs (it jumps where the identical-answers bound starts to pass), so the
    answer is a size that reaches the power, not always the fewest that do.
    """
    n, before = start, None
    while not reaches(n):
        if n >= _FEW_DIFFERING_MOST:
            raise ValueError(too_many)
        before = n
        jump = identical_pairs if n < identical_pairs <= n * _SCAN_STEP else 0
        n = min(_FEW_DIFFERING_MOST, max(n + 1, math.ceil(n * _SCAN_STEP), jump))
    low = before if before is not None else n
    while n - low > 1:
        middle = (low + n) // 2
        low, n = (low, middle) if reaches(middle) else (middle, n)
    return n


def _few(share: float, normal: int) -> bool:
    """Whether a count key's differing pairs are few: under :data:`FEW_DIFFERING` of them at the normal formula's size."""
    return 0 < share < 1 and normal * share < FEW_DIFFERING


def plan_few_differing(
    share: float,
    margin: float,
    *,
    normal: int,
    pilot_pairs: int,
    alpha: float = 0.05,
    power: float = 0.8,
    design_effect: float = 1.0,
    identical_pairs: int,
    identical_units: int | None = None,
    cluster_sizes: ClusterSizes = (),
    confidence: float = SHARE_CONFIDENCE,
) -> FewDifferingPlan | None:
    """The pairs a count key with few differing pairs needs for the gate at every share the pilot leaves plausible.

    The pilot's ``share`` of pairs that differ comes from few of its ``pilot_pairs`` (one in 200, say), so the
    share an audit meets may be far from it; and the power is not monotone in the share: fewer differing pairs
    leave a sample with none more often (then only the identical-answers bound passes, from ``identical_pairs``),
    more leave the TOST a wider interval. The plan is the first size from ``normal`` (the normal formula's answer)
    whose :func:`power_few_differing` reaches ``power`` at both ends of the ``confidence`` interval of
    :func:`differing_share_interval` (with ``design_effect``), at the pilot's share, and at
    :data:`_SHARE_GRID` shares between, spaced geometrically. None where the pairs that differ are not few
    (:func:`pairs_for_few_differing`'s rule); ValueError where no size up to a million reaches the power.

    Examples
    --------
    >>> plan = plan_few_differing(0.005, 0.05723, normal=15, pilot_pairs=200, identical_pairs=572)
    >>> plan.pairs, [round(x, 5) for x in (plan.low, plan.high)], plan.at_share  # at the share alone: 322
    (572, [0.00013, 0.02754], 322)
    >>> [round(x, 2) for x in plan.at_low]  # at 0.013%, 0.93 of samples hold no differing pair: the bound passes them
    [1.0, 0.93]
    >>> round(plan.at_share_least, 2)  # 322 pairs, at 0.013%: too few to hold a differing pair, too few for the bound
    0.04
    """
    if not _few(share, normal):
        return None
    _check_sizes(cluster_sizes)
    low, high = differing_share_interval(share, pilot_pairs, confidence=confidence, design_effect=design_effect)
    low, high = max(low, 1e-12), min(high, 1 - 1e-12)
    ratio = (high / low) ** (1 / (_SHARE_GRID + 1))
    between = tuple(low * ratio**i for i in range(1, _SHARE_GRID + 1))
    shares = (low, high, share, *between)
    model = _FewPower(margin, alpha, design_effect, (identical_pairs, identical_units, cluster_sizes))
    too_many = _MSG_FEW_INTERVAL.format(power=power, n=_FEW_DIFFERING_MOST, level=confidence, low=low, high=high)
    n = _few_search(normal, lambda m: model.reaches(m, shares, power), identical_pairs, too_many)
    try:
        at_share: int | None = _few_search(normal, lambda m: model.reaches(m, (share,), power), identical_pairs, too_many)
    except ValueError:
        at_share = None
    least, least_share = min((model.at(n, s), s) for s in shares)
    at_share_least = None if at_share is None else min(model.at(at_share, s) for s in shares)

    def ends(s: float) -> tuple[float, float]:
        return power_few_differing(
            n,
            s,
            margin,
            alpha=alpha,
            design_effect=design_effect,
            identical_pairs=identical_pairs,
            identical_units=identical_units,
            cluster_sizes=cluster_sizes,
        )

    return FewDifferingPlan(n, share, low, high, confidence, least, least_share, ends(low), ends(high), at_share, at_share_least)


def pairs_for_few_differing(
    share: float,
    margin: float,
    *,
    normal: int,
    alpha: float = 0.05,
    power: float = 0.8,
    design_effect: float = 1.0,
    identical_pairs: int,
    pilot_pairs: int | None = None,
    identical_units: int | None = None,
    cluster_sizes: ClusterSizes = (),
    confidence: float = SHARE_CONFIDENCE,
) -> int | None:
    """The pairs a count key with few differing pairs needs for the gate; None where they are not few.

    The normal formula (:func:`pairs_for_equivalence`, whose answer is ``normal``) takes the pilot's spread to
    hold on any sample. Where ``share`` (the pilot's pairs that differ) leaves under :data:`FEW_DIFFERING` at
    that size, a sample may hold none (then only the identical-answers bound, from ``identical_pairs``, can
    pass) or too few for the TOST. Given the pilot's ``pilot_pairs``, the answer is :func:`plan_few_differing`'s:
    a size at which :func:`power_few_differing` reaches ``power`` at every share of the ``confidence`` interval
    on the pilot's; without them, at ``share`` alone, taken as known. ValueError where none up to a million does.

    Examples
    --------
    >>> pairs_for_few_differing(0.005, 0.05723, normal=15, identical_pairs=572, pilot_pairs=200)  # 1 pair of 200
    572
    >>> pairs_for_few_differing(0.005, 0.05723, normal=15, identical_pairs=572)  # the share taken as known
    322
    >>> pairs_for_few_differing(0.3, 0.05723, normal=400, identical_pairs=572) is None  # 120 differ: the spread decides
    True
    """
    if not _few(share, normal):
        return None
    if pilot_pairs is not None:
        plan = plan_few_differing(
            share,
            margin,
            normal=normal,
            pilot_pairs=pilot_pairs,
            alpha=alpha,
            power=power,
            design_effect=design_effect,
            identical_pairs=identical_pairs,
            identical_units=identical_units,
            cluster_sizes=cluster_sizes,
            confidence=confidence,
        )
        assert plan is not None
        return plan.pairs
    model = _FewPower(margin, alpha, design_effect, (identical_pairs, identical_units, cluster_sizes))
    too_many = _MSG_FEW_TOO_MANY.format(power=power, n=_FEW_DIFFERING_MOST)
    return _few_search(normal, lambda m: model.reaches(m, (share,), power), identical_pairs, too_many)


#: Binomial tails left out of the exact sums (each side): far below any power's last printed digit.
_TAIL = 1e-9
#: The step of the upward search for the pairs needed: power jumps where a discordant count starts to pass, and falls between.
_SCAN_STEP = 1.02
FEW_DISCORDANT = 100
"""Discordant pairs expected at the normal formula's answer from which that answer stands (fewer: the exact search)."""
POWER_TOLERANCE = 0.05
"""How far the planned power may stray from the target where it jumps: a jump past ``power + POWER_TOLERANCE`` plans the
top of the tooth before it when that reaches ``power - POWER_TOLERANCE`` (few discordant units: the exact rule's steps)."""
#: How far below the target an upper bound on the power must fall for the search to skip computing it (the bound's
#: sums of probabilities round by less than 1e-12).
_BOUND_SLACK = 1e-6
#: The most pairs :func:`pairs_for_rate_equivalence` searches (beyond it: ValueError, "beyond any audit").
MAX_RATE_PAIRS = 10_000_000
_MSG_RATE_ARGS = "discordance must be in (0, 1), rate in [0, 1] and margin > 0; got {q!r}, {rate!r}, {margin!r}"
_MSG_RATE_TOO_MANY = "a discordant share {q:.3g} against a margin of {margin:g} needs more than {most:,} pairs"


#: The most cells (size classes x the largest dialogue's pairs) the planner draws dialogue sizes over; beyond: ValueError.
MAX_SIZE_CELLS = 2_000_000
_MSG_SIZES_RANGE = "dialogue sizes must be pairs >= 1 in dialogues >= 1, at most {most:,} pairs in all"
_MSG_SIZES = "{classes:,} dialogue sizes up to {largest:,} pairs are more than the planner models (at most {most:,} cells)"


ClusterSizes = tuple[tuple[int, int], ...]
"""A corpus' dialogues by size: ``((pairs in a dialogue, dialogues of that size), ...)``."""


def _check_sizes(sizes: ClusterSizes) -> None:
    """ValueError for dialogue sizes the planner cannot model: not positive, more pairs than any audit, too many cells."""
    if not sizes:
        return
    if any(m < 1 or count < 1 for m, count in sizes) or sum(m * count for m, count in sizes) > MAX_RATE_PAIRS:
        raise ValueError(_MSG_SIZES_RANGE.format(most=MAX_RATE_PAIRS))
    largest = max(m for m, _ in sizes)
    if len(sizes) * (largest + 1) > MAX_SIZE_CELLS:
        raise ValueError(_MSG_SIZES.format(classes=len(sizes), largest=largest, most=MAX_SIZE_CELLS))


def expected_clusters(n: int, sizes: ClusterSizes) -> float:
    """The dialogues a uniform sample of ``n`` pairs spans, on average, from a corpus whose dialogues have ``sizes``.

    A dialogue of ``m`` of the corpus' ``N`` pairs is missed with the hypergeometric chance of
    drawing none of its pairs; beyond ``N`` pairs (more than the corpus gives) the dialogues grow
    as from copies of the corpus: ``n // N`` whole copies and a uniform sample of the rest from one more.

    Raises ValueError for sizes the planner cannot model (not positive, more than
    ``MAX_RATE_PAIRS`` pairs, more than ``MAX_SIZE_CELLS`` classes x largest dialogue).

    Examples
    --------
    >>> expected_clusters(2, ((1, 2),)), expected_clusters(4, ((1, 2),))  # two one-pair dialogues
    (2.0, 4.0)
    >>> round(expected_clusters(2, ((2, 2),)), 3)  # two pairs of four in two dialogues of two: 1 + 2/3 dialogues on average
    1.667
    """
    from scipy.special import gammaln

    _check_sizes(sizes)
    m = np.array([size for size, _ in sizes], dtype=int)
    count = np.array([c for _, c in sizes], dtype=float)
    total = int(m @ count) if m.size else 0
    if n <= 0 or total <= 0:
        return 0.0
    if n > total:  # whole copies of the corpus, and a uniform sample of one more for the rest
        full, rest = divmod(n, total)
        return float(full * count.sum()) + (expected_clusters(rest, sizes) if rest else 0.0)
    drawn = n
    # P(none of a dialogue's m pairs drawn) = C(N - m, n) / C(N, n), from log-gammas (0 where n > N - m)
    log_none = gammaln(total - m + 1) - gammaln(total - m - drawn + 1) - gammaln(total + 1) + gammaln(total - drawn + 1)
    missed = np.where(total - m >= drawn, np.exp(np.where(total - m >= drawn, log_none, 0.0)), 0.0)
    return float(count @ (1.0 - missed))


@functools.lru_cache(maxsize=4096)
def spanned_dialogues(n: int, sizes: ClusterSizes) -> int:
    """The dialogues the planner counts for ``n`` pairs of a corpus with ``sizes``: :func:`expected_clusters`, rounded.

    At least 1 and at most ``n``; kept, since the planner's search asks for the same sizes again and again.

    Examples
    --------
    >>> spanned_dialogues(2, ((2, 2),))  # 1 + 2/3 dialogues on average
    2
    """
    return max(1, min(n, round(expected_clusters(n, sizes))))


@functools.lru_cache(maxsize=256)
def _units_needed(alpha: float, margin: float) -> np.ndarray:
    """:func:`_units_for` of j = 0 ... ``FEW_DISCORDANT_UNITS`` - 1, as floats (read-only: it is shared)."""
    need = np.array([_units_for(j, alpha, margin) for j in range(FEW_DISCORDANT_UNITS)], dtype=float)
    need.setflags(write=False)
    return need


@functools.lru_cache(maxsize=16)
def _size_terms(sizes: ClusterSizes) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]:
    """What :func:`_dialogue_draws` needs of ``sizes`` at every ``n``, computed once per corpus.

    The sizes, their counts, the pairs in all, ``log C(m, k)`` per class (rows) and k = 0 ... the largest size (0
    where k > m), and ``log((N - m)!)`` per class. The log-gammas are those the hypergeometric pmf would take element by element (``gammaln(x + 1)`` of the same
    integers), looked up: the same floats at a fraction of the calls.
    """
    from scipy.special import gammaln

    m = np.array([size for size, _ in sizes])
    count = np.array([c for _, c in sizes])
    total = int(m @ count)
    k = np.arange(int(m.max()) + 1)
    small = gammaln(k + 1)  # log(j!) for j = 0 ... the largest size
    kk, mm = k[None, :], m[:, None]
    own = np.asarray(small[mm] - small[kk] - small[np.maximum(mm - kk, 0)], dtype=float)
    return m, count, total, own, np.asarray(gammaln(total - m + 1), dtype=float)


@functools.lru_cache(maxsize=64)
def _dialogue_draws(n: int, sizes: ClusterSizes) -> tuple[np.ndarray, np.ndarray]:
    """Per size class of ``sizes`` (rows): P(a dialogue gives k = 0, 1, ... of a uniform sample of ``n`` pairs), and how many.

    A uniform sample of ``n`` of the corpus' ``N`` pairs takes a hypergeometric share of each
    dialogue; beyond ``N``, every pair of ``n // N`` whole copies of the corpus (rows of their own)
    and a uniform sample of the rest from one more.
    """
    from scipy.special import gammaln

    m, count, total, own, rest = _size_terms(sizes)
    k = np.arange(own.shape[1])
    full, drawn = divmod(n, total) if n > total else (0, n)
    kk, mm = k[None, :], m[:, None]  # the hypergeometric pmf from log-gammas, all classes at once (scipy's is slow here)
    whole = (kk == mm).astype(float)  # a whole copy's dialogue gives all its pairs
    possible = (kk <= mm) & (drawn - kk >= 0) & (drawn - kk <= total - mm)
    # log C(N - m, drawn - k): log((drawn - k)!) per k, log((N - m - drawn + k)!) per k - m (the largest size each way)
    taken = gammaln(np.maximum(drawn - k, 0) + 1)
    shift = np.arange(-len(taken) + 1, len(taken))
    left = gammaln(np.maximum(total - drawn + shift, 0) + 1)
    other = rest[:, None] - taken[None, :] - left[kk - mm + len(taken) - 1]
    whole_log = gammaln(np.array(total) + 1) - gammaln(np.array(drawn) + 1) - gammaln(np.array(total - drawn) + 1)
    log_pmf = own + other - whole_log
    draws = np.where(possible, np.exp(np.where(possible, log_pmf, 0.0)), 0.0)
    if full:
        draws = np.vstack([whole, draws])
        count = np.concatenate([full * count, count])
    return draws, count


@functools.lru_cache(maxsize=256)
def _units_for(j: int, alpha: float, margin: float) -> int:
    """The fewest units on which the exact rule lets ``j`` units per direction pass (beyond any audit: a huge number)."""
    low, high = 0, 1
    while direction_passing_count(high, alpha=alpha, margin=margin) < j:
        if high > MAX_RATE_PAIRS:
            return 10 * MAX_RATE_PAIRS
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if direction_passing_count(mid, alpha=alpha, margin=margin) >= j else (mid, high)
    return high


@functools.cache
def _few_pairs_within(most: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of :func:`_few_cells` whose right-hand cell holds at most ``most`` units, in the same order.

    A size class of ``c`` dialogues weighs exactly 0 on every cell of more than ``c`` units, so the convolution's other
    pairs add exact zeros: leaving them out gives the same sums, term for term.
    """
    cells, left, right, target = _few_cells()
    keep = cells[right].sum(axis=1) <= most
    return left[keep], right[keep], target[keep]


@functools.cache
def _few_cells() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The counts (x, y, z) with ``x + y + z < FEW_DISCORDANT_UNITS``, and each pair of them whose sum is one (its index)."""
    few = FEW_DISCORDANT_UNITS
    cells = np.array([(x, y, z) for x in range(few) for y in range(few - x) for z in range(few - x - y)])
    index = {tuple(c): i for i, c in enumerate(cells.tolist())}
    pairs = [
        (i, j, index[key])
        for i, a in enumerate(cells.tolist())
        for j, b in enumerate(cells.tolist())
        if (key := (a[0] + b[0], a[1] + b[1], a[2] + b[2])) in index
    ]
    left, right, target = (np.array(column) for column in zip(*pairs))
    return cells, left, right, target


@dataclass(frozen=True, slots=True)
class _RateNull:
    """A fair model of a rate's pairs, and the gate's equivalence test on ``n`` of them.

    ``discordance`` the share of pairs whose two sides differ (half each way, as A = B);
    ``both`` the share of the concordant pairs positive on both sides; ``design_effect`` and
    ``pairs_per_unit`` the audit's clustering (1 without clusters). With ``cluster_sizes`` (the
    corpus' dialogues by size) the dialogues of ``n`` pairs are those a uniform sample spans
    (:func:`expected_clusters`), not ``n / pairs_per_unit``: a sample of a corpus spreads over
    more dialogues, with fewer pairs each, than the whole corpus holds per dialogue.
    """

    discordance: float
    both: float
    margin: float
    alpha: float
    design_effect: float
    pairs_per_unit: float
    cluster_sizes: ClusterSizes = ()

    def inside(self, n: int, n11: int, n10: int, n01: int) -> bool:
        """Whether the gate's test (``tost_rate``: the ``1 - 2α`` Newcombe interval inside ±margin) passes this table."""
        n00 = n - n11 - n10 - n01
        ci = newcombe_from_counts(n11, n10, n01, n00, level=1 - 2 * self.alpha, design_effect=self.design_effect)
        return ci.low is not None and ci.high is not None and -self.margin < ci.low and ci.high < self.margin

    def widest_split(self, n: int, k: int, hint: int) -> int:
        """The largest ``|n10 - n01|`` of ``k`` discordant pairs that still passes (-1: none does), searched from ``hint``.

        The interval only widens as the split grows lopsided, so the passing splits are those
        up to one edge; the edge moves little from one ``k`` to the next, hence the ``hint``.
        """
        n11 = round((n - k) * self.both)  # its expected number: the interval barely moves with it

        def passes(gap: int) -> bool:
            return self.inside(n, n11, (k + gap) // 2, (k - gap) // 2)

        gap = min(max(hint, 0), k)
        gap -= (gap - k) % 2  # |n10 - n01| has k's parity
        if passes(gap):
            while gap + 2 <= k and passes(gap + 2):
                gap += 2
            return gap
        while gap >= 2:
            gap -= 2
            if passes(gap):
                return gap
        return -1

    def units(self, n: int) -> tuple[int, float]:
        """The units the gate counts on ``n`` pairs, and the pairs in each: dialogues where the audit clusters, else pairs."""
        if self.cluster_sizes:
            n_units = spanned_dialogues(n, self.cluster_sizes)
            return n_units, n / n_units
        if self.pairs_per_unit <= 1:
            return n, 1.0
        n_units = max(1, math.floor(n / self.pairs_per_unit))
        return n_units, n / n_units

    def few(self, n: int) -> tuple[float, float]:
        """P(fewer than ``FEW_DISCORDANT_UNITS`` units differ and the exact rule passes), and P(fewer differ).

        Each unit of ``s`` pairs independently holds a pair with A above B only, B above A only,
        both, or neither (``(1 - q/2)^s - (1 - q)^s``, the same, ``1 - 2 (1 - q/2)^s + (1 - q)^s``,
        ``(1 - q)^s``); the rule passes when neither direction's units exceed
        :func:`direction_passing_count`.
        """
        from scipy.stats import multinomial

        if self.cluster_sizes:
            return self._few_by_sizes(n)
        n_units, size = self.units(n)
        q = self.discordance
        none, no_a = (1 - q) ** size, (1 - q / 2) ** size
        one = no_a - none
        probs = [one, one, max(0.0, 1 - 2 * no_a + none), none]
        most = direction_passing_count(n_units, alpha=self.alpha, margin=self.margin)
        few = FEW_DISCORDANT_UNITS - 1
        cells = np.array(
            [(x, y, z, n_units - x - y - z) for x in range(few + 1) for y in range(few + 1 - x) for z in range(few + 1 - x - y)]
        )
        cells = cells[cells[:, 3] >= 0]
        weights = np.asarray(multinomial.pmf(cells, n_units, probs), dtype=float)
        passes = np.maximum(cells[:, 0], cells[:, 1]) + cells[:, 2] <= most
        return float(weights[passes].sum()), float(weights.sum())

    def _few_by_sizes(self, n: int) -> tuple[float, float]:
        """:meth:`few` for dialogues of the corpus' sizes: each dialogue's chance of each kind, summed over its draw.

        Per size class, the counts of its dialogues holding an A-above pair only, a B-above pair
        only and both are multinomial; the classes' counts are convolved, up to
        ``FEW_DISCORDANT_UNITS`` in all. The rule's bound counts the dialogues a sample spans
        (:meth:`units`).
        """
        from scipy.special import gammaln, xlogy

        q = self.discordance
        cells, _, _, _ = _few_cells()
        draws, count = _dialogue_draws(n, self.cluster_sizes)
        k = np.arange(draws.shape[1])
        none, no_a = (1 - q) ** k, (1 - q / 2) ** k
        one, both = draws @ (no_a - none), draws @ np.maximum(0.0, 1 - 2 * no_a + none)
        rest = np.maximum(1e-300, 1.0 - 2 * one - both)
        used = cells.sum(axis=1)
        # each term per class and count j < FEW_DISCORDANT_UNITS, then read off per cell: the same floats, 22x fewer calls
        j = np.arange(FEW_DISCORDANT_UNITS)
        left_over = np.maximum(count[:, None] - j[None, :], 0)
        log_p = (  # the multinomial's log pmf; xlogy: a kind a class never gives weighs 0 where it is not drawn
            gammaln(count + 1)[:, None]
            - gammaln(left_over + 1)[:, used]
            - gammaln(cells + 1).sum(axis=1)[None, :]
            + xlogy(j[None, :], one[:, None])[:, cells[:, 0] + cells[:, 1]]
            + xlogy(j[None, :], both[:, None])[:, cells[:, 2]]
            + xlogy(left_over, rest[:, None])[:, used]
        )
        weights = np.where(count[:, None] >= used[None, :], np.exp(log_p), 0.0)
        table: np.ndarray = np.zeros(len(cells))  # P(x A-only, y B-only, z both) per cell, x + y + z < FEW_DISCORDANT_UNITS
        table[0] = 1.0
        for row, most in zip(weights, np.minimum(count, FEW_DISCORDANT_UNITS - 1).tolist()):  # the truncated convolution
            left, right, target = _few_pairs_within(most)  # a class of c dialogues gives no cell of more than c units
            table = np.asarray(np.bincount(target, weights=table[left] * row[right], minlength=len(cells)), dtype=np.float64)
        worst = np.maximum(cells[:, 0], cells[:, 1]) + cells[:, 2]  # the units the rule's bound must allow per direction
        return float(table @ self._reach(n)[worst]), float(table.sum())

    def _reach(self, n: int) -> np.ndarray:
        """P(a sample of ``n`` pairs spans enough dialogues for the rule to pass ``j`` units per direction), j = 0 ... 9.

        The dialogues a sample spans vary from sample to sample: whole copies of the corpus give theirs,
        and each dialogue of the rest is drawn or not (its hypergeometric chance; a normal approximation
        of their sum, with a continuity correction). The bound's steps are sharp (149, 236, 313 ...
        units at ±2 points), so a planned size where the mean just reaches a step passes about half
        its audits' few-units part, not all of them.
        """
        from scipy.special import ndtr  # norm.sf(z) is ndtr(-z), without scipy.stats' checks of loc and scale

        mean, sd = _spanned_moments(n, self.cluster_sizes)
        need = _units_needed(self.alpha, self.margin)
        if sd > 0:
            return np.asarray(ndtr(-((need - 0.5 - mean) / sd)), dtype=float)
        return (mean >= need - 0.5).astype(float)

    def _effective_units(self, n: int) -> int:
        """The units a pair's dialogue is drawn from, as if equally likely: ``n² / E[Σ k_d²]`` over the sample's dialogues."""
        draws, count = _dialogue_draws(n, self.cluster_sizes)
        second = float(count @ (draws @ np.arange(draws.shape[1]) ** 2))
        spanned = self.units(n)[0]  # never more than the dialogues themselves
        return min(spanned, max(1, round(n * n / second))) if second > 0 else spanned

    def many(self, n: int, ks: np.ndarray) -> np.ndarray:
        """P(at least ``FEW_DISCORDANT_UNITS`` units differ | ``k`` discordant pairs), each pair's unit drawn uniformly.

        With the corpus' dialogue sizes, a pair falls in a large dialogue more often: the units are
        the effective number (:meth:`_effective_units`), fewer than the dialogues.
        """
        n_units = self._effective_units(n) if self.cluster_sizes else self.units(n)[0]
        out = (ks >= FEW_DISCORDANT_UNITS).astype(float)
        if n_units == n or ks.size == 0:
            return out
        occupied = np.zeros(FEW_DISCORDANT_UNITS + 1)  # P(j units hold one of the first k pairs), j < FEW; last: j >= FEW
        occupied[0] = 1.0
        j = np.arange(FEW_DISCORDANT_UNITS)
        reached = np.zeros(int(ks.max()) + 1)
        for k in range(1, reached.size):
            stay, move = occupied[:-1] * j / n_units, occupied[:-1] * (n_units - j) / n_units
            occupied = np.concatenate([stay, [occupied[-1]]])
            occupied[1:] += move
            reached[k] = occupied[-1]
            if 1 - reached[k] < _TAIL * _TAIL:  # every later k holds that many units too
                reached[k:] = 1.0
                break
        out = np.asarray(reached[ks], dtype=float)
        return out

    def steps(self, below: int) -> list[int]:
        """The sizes under ``below`` pairs where the exact rule lets one more unit per direction pass (its power jumps)."""
        out: list[int] = []
        units = 1
        for most in range(FEW_DISCORDANT_UNITS):
            while direction_passing_count(units, alpha=self.alpha, margin=self.margin) < most:
                units = max(units + 1, math.ceil(units * 1.05)) if most == 0 else units + 1
            n = self._pairs_for_units(units)
            if n >= below:
                break
            out.append(n)
        return out

    def _pairs_for_units(self, units: int) -> int:
        """The fewest pairs whose units (:meth:`units`) reach ``units``: the units grow with the pairs, never faster."""
        if self.cluster_sizes:
            low, high = units - 1, units  # units(low) < units <= units(high), searched by doubling then bisection
            while self.units(high)[0] < units:
                low, high = high, high * 2
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (low, mid) if self.units(mid)[0] >= units else (mid, high)
            return high
        n = units if self.pairs_per_unit <= 1 else math.ceil(units * self.pairs_per_unit)
        while self.units(n)[0] < units:
            n += 1
        return n

    def power(self, n: int) -> float:
        """The probability that the gate's equivalence rule (``rate_equivalence``) passes ``n`` pairs of this fair model.

        Fewer than ``FEW_DISCORDANT_UNITS`` discordant units: the exact rule on each direction's
        units (:meth:`few`). From there up: the Newcombe TOST, its table's discordant count ``k``
        Binomial(n, q) and split Binomial(k, ½), weighted by the chance that ``k`` pairs hold that
        many units (:meth:`many`).
        """
        return self._with_few(n, self._many_part(n))

    def power_unless_below(self, n: int, level: float) -> float | None:
        """:meth:`power`, or None where it is surely below ``level`` without the few units' convolution (:meth:`few`).

        With dialogue sizes the few part passes at most the chance that a sample spans the dialogues the rule needs
        for one unit per direction or more (:meth:`_reach`'s largest), so that plus the many part bounds the power from
        above. Below ``level`` by more than :data:`_BOUND_SLACK` (far beyond the sums' rounding), so is the power: the
        planner's search asks only whether a size reaches its target, and most of its sizes are far below it.
        """
        from scipy.special import bdtrc  # binom.sf without scipy.stats' overhead: a bound needs no more

        few = float(np.max(self._reach(n))) if self.cluster_sizes else 1.0
        if few + float(bdtrc(FEW_DISCORDANT_UNITS - 1, n, self.discordance)) < level - _BOUND_SLACK:
            return None  # the many part weighs at most the chance of that many discordant pairs
        many = self._many_part(n)
        if few + (many or 0.0) < level - _BOUND_SLACK:
            return None
        return self._with_few(n, many)

    def _with_few(self, n: int, many: float | None) -> float:
        """The power from the many part (None: no count from ``FEW_DISCORDANT_UNITS`` up within the tails) and :meth:`few`."""
        passed_few, few = self.few(n)
        if many is None:
            return min(1.0, passed_few)
        if self.cluster_sizes:  # the occupancy model of the many part may not claim what the exact count gives the few part
            many = min(many, max(0.0, 1.0 - few))
        return min(1.0, passed_few + many)

    def _many_part(self, n: int) -> float | None:
        """P(the rule passes with ``FEW_DISCORDANT_UNITS`` discordant units or more), before its cap; None: no such count."""
        from scipy.stats import binom

        q = self.discordance
        ks = np.arange(max(FEW_DISCORDANT_UNITS, int(binom.ppf(_TAIL, n, q))), int(binom.isf(_TAIL, n, q)) + 2)
        ks = ks[ks <= n]
        if ks.size == 0:
            return None
        weights = binom.pmf(ks, n, q) * self.many(n, ks)
        gaps = np.full(ks.size, -1)  # the widest passing |n10 - n01| of k discordant pairs (-1: none passes)
        widest = 0
        for i, k in enumerate(ks.tolist()):
            if weights[i] < _TAIL:
                continue
            gaps[i] = widest = self.widest_split(n, k, widest)
            widest = max(widest, 0)
        # n10 - n01 = 2 n10 - k within ±gap: n10 in [(k - gap) / 2, (k + gap) / 2]
        split = binom.cdf((ks + gaps) // 2, ks, 0.5) - binom.cdf((ks - gaps) // 2 - 1, ks, 0.5)
        passing = np.where(gaps >= 0, split, 0.0)
        return float(np.dot(weights, passing))


@dataclass
class _PowerSearch:
    """The powers :func:`pairs_for_rate_equivalence` reads, each computed once; sizes surely below ``target`` go uncomputed."""

    null: _RateNull
    target: float
    known: dict[int, float | None] = field(default_factory=dict)

    def reaches(self, n: int) -> bool:
        """Whether the power at ``n`` pairs reaches the target (settled by :meth:`_RateNull.power_unless_below`)."""
        if n not in self.known:
            self.known[n] = self.null.power_unless_below(n, self.target)
        value = self.known[n]
        return value is not None and value >= self.target

    def power(self, n: int) -> float:
        """The power at ``n`` pairs."""
        value = self.known.get(n)
        if value is None:
            value = self.known[n] = self.null.power(n)
        return value


def _rate_null(
    discordance: float,
    margin: float,
    alpha: float,
    rate: float | None,
    design_effect: float,
    pairs_per_unit: float,
    cluster_sizes: ClusterSizes = (),
) -> _RateNull:
    ok = 0 < discordance < 1 and margin > 0 and (rate is None or 0 <= rate <= 1)
    if not ok:
        raise ValueError(_MSG_RATE_ARGS.format(q=discordance, rate=rate, margin=margin))
    both = 0.0 if rate is None else max(0.0, rate - discordance / 2) / (1 - discordance)
    sizes = tuple((int(m), int(count)) for m, count in cluster_sizes)
    _check_sizes(sizes)
    return _RateNull(discordance, min(1.0, both), margin, alpha, max(1.0, design_effect), max(1.0, pairs_per_unit), sizes)


def power_rate_equivalence(
    n: int,
    discordance: float,
    margin: float,
    *,
    alpha: float = 0.05,
    rate: float | None = None,
    design_effect: float = 1.0,
    pairs_per_unit: float = 1.0,
    cluster_sizes: ClusterSizes = (),
) -> float:
    """Exact power of the gate's equivalence test for a rate on ``n`` pairs of a fair model (A = B).

    ``discordance`` is the share of pairs whose sides differ, ``rate`` each side's rate (for the
    pairs positive on both sides; None: none are), ``design_effect`` the audit's (its test divides
    the counts by it) and ``pairs_per_unit`` the pairs per dialogue where the audit clusters; or,
    where the corpus is known, ``cluster_sizes``, its dialogues by size, from which a uniform
    sample's dialogues follow (:func:`expected_clusters`).

    Examples
    --------
    >>> round(power_rate_equivalence(1000, 0.02, 0.02), 3)  # about 20 discordant pairs, margin ±2 points
    0.989
    """
    null = _rate_null(discordance, margin, alpha, rate, design_effect, pairs_per_unit, cluster_sizes)
    return null.power(max(1, int(n)))


def pairs_for_rate_equivalence(
    discordance: float,
    margin: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    rate: float | None = None,
    design_effect: float = 1.0,
    pairs_per_unit: float = 1.0,
    sd_difference: float | None = None,
    cluster_sizes: ClusterSizes = (),
) -> int:
    """The fewest pairs on which the gate's equivalence test passes a fair model of a rate with ``power``.

    Where the normal formula holds (:func:`pairs_for_equivalence` with ``sd_difference``, by
    default ``sqrt(discordance)``, expects at least :data:`FEW_DISCORDANT` discordant pairs at its
    answer: its power is then 0.79-0.83), its answer stands; fewer, and it is searched as below.

    By :func:`power_rate_equivalence` (the rule's exact power, not the normal formula, which fails
    where discordant pairs are few). Power grows with ``n`` only on the whole: it jumps where one
    more discordant count passes (with few discordant units: at 149, 236, 313, 386, 456 ... units
    at ±2 points, where one more unit per direction passes) and falls between jumps (the counts are
    discrete). So the search steps up by 2% to the first size whose power reaches the target, and
    bisects the last step: the first tooth above the target. Where that tooth jumps past the target
    by more than :data:`POWER_TOLERANCE` and the tooth before it tops within it below the target,
    the top of that earlier tooth is the answer (the size closer to the target power). From half
    the normal formula's answer: the exact test needs more pairs than it, not fewer.

    Examples
    --------
    >>> pairs_for_rate_equivalence(0.005, 0.02)  # half a percent of pairs differ: the normal formula said 136
    236
    >>> [round(power_rate_equivalence(n, 0.005, 0.02), 3) for n in (235, 236, 312, 313)]  # 236: one pair each way passes
    [0.308, 0.777, 0.666, 0.913]
    """
    null = _rate_null(discordance, margin, alpha, rate, design_effect, pairs_per_unit, cluster_sizes)
    sd = math.sqrt(discordance) if sd_difference is None else sd_difference
    guess = pairs_for_equivalence(sd, margin, alpha=alpha, power=power, design_effect=null.design_effect)
    if guess > MAX_RATE_PAIRS:
        raise ValueError(_MSG_RATE_TOO_MANY.format(q=discordance, margin=margin, most=MAX_RATE_PAIRS))
    if guess * discordance >= FEW_DISCORDANT:
        return guess
    search = _PowerSearch(null, power)
    low = max(1, guess // 2)
    while low > 1 and search.reaches(low):
        low //= 2
    high = low
    while True:  # the first step of 2% whose power reaches the target: power rises in teeth, not smoothly
        high = max(low + 1, math.ceil(low * _SCAN_STEP))
        if high > MAX_RATE_PAIRS:
            raise ValueError(_MSG_RATE_TOO_MANY.format(q=discordance, margin=margin, most=MAX_RATE_PAIRS))
        if search.reaches(high):
            break
        low = high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if search.reaches(mid) else (mid, high)
    if search.power(high) <= power + POWER_TOLERANCE:
        return high
    for tooth in reversed(null.steps(high)):  # the jump overshoots: the top of an earlier tooth, if it comes as near
        if search.power(tooth) >= power - POWER_TOLERANCE:
            return tooth
        break
    return high


CORPUS_LEAST_PAIRS = 10
"""The fewest pairs :func:`pairs_for_corpus_equivalence` plans where the pairs' differing share is known (the test's
discreteness is then modelled: :func:`corpus_decidable`): the smallest size its scaling was checked at (10-25 pairs,
``bench/gate_power.py``, 2026-11-29). Below it the ratio's growth was not measured."""
CORPUS_LEAST_PAIRS_UNMODELLED = 25
"""The fewest it plans where that share is not known (a pilot's results.json does not record it): the smallest size
checked before the discreteness was modelled; all of 4,000 samples of 25 of the bare audit's pairs could decide."""
#: Up to this many differing units (2^9 = 512 sign patterns, fewer than the audit's 1,000 permutations) the planner
#: takes the permutation distribution as the lattice of that many equal units (:func:`power_corpus_at_size`); from
#: there on as normal. On few units the lattice's steps cost power that the normal approximation does not see.
CORPUS_LATTICE_UNITS = 9
#: The Gauss-Hermite nodes :func:`power_corpus_equivalence` averages a ratio's spread over.
CORPUS_SPREAD_NODES = 24
#: The most pairs :func:`pairs_for_corpus_equivalence` plans (beyond it: ValueError, "beyond any audit").
MAX_CORPUS_PAIRS = 10_000_000
_MSG_CORPUS_ARGS = "ratio, n_pilot and least must be > 0 and exponent finite; got {ratio!r}, {n!r}, {least!r}, {exponent!r}"
_MSG_CORPUS_TOO_MANY = (
    "a margin {ratio:.3g} standard errors wide at {n:,} pairs, growing as n^{exponent:g}, needs more than {most:,} pairs"
)
_MSG_CORPUS_DECIDE = (
    "the permutation test's power does not reach the target on up to {most:,} pairs (too few of them differ, or the "
    "margin stays too near its standard error)"
)
_MSG_DIFFERING = "the differing share must be in (0, 1] and alpha in (0, 1); got {q!r}, {alpha!r}"


def corpus_least_units(alpha: float = 0.05) -> int:
    """The fewest differing units (dialogues, or pairs) on which a corpus key's permutation TOST can pass at ``alpha``.

    With ``m`` units whose two sides differ the permutation distribution has ``2^m`` patterns; the audit
    (``fairtalk.inference.corpus_row``) calls it degenerate where ``2^(1 - m) >= alpha`` and then bounds the share
    of units that could differ instead, which fails a key whose units differ at all.

    Examples
    --------
    >>> corpus_least_units(0.05), corpus_least_units(0.01)  # 2^-5 = 0.031 < 0.05; 2^-7 = 0.0078 < 0.01
    (6, 8)
    """
    return exact_least_units(alpha)  # the same sign-pattern count as McNemar's exact test


def _differing_units(n: int, differing: float, sizes: ClusterSizes, upto: int) -> np.ndarray:
    """P(exactly j units of a sample of ``n`` pairs hold a differing pair), j = 0 ... ``upto`` (see :func:`corpus_decidable`)."""
    from scipy.stats import binom

    out = np.zeros(upto + 1)
    if not sizes:
        out[:] = binom.pmf(np.arange(upto + 1), n, differing)
        return out
    total, dialogues = sum(m * c for m, c in sizes), sum(c for _, c in sizes)
    out[0] = float(binom.pmf(0, n, differing))
    for k in range(1, n + 1):
        full, rest = divmod(k, total)
        most = full * dialogues + min(rest, dialogues)  # the most dialogues k pairs can span
        collisions = min(float(k - 1), max(0.0, k - expected_clusters(k, sizes)))
        spans = np.zeros(k + 1)  # P(the k differing pairs span j dialogues), j = 0 ... k
        spans[1:] = binom.pmf(k - np.arange(1, k + 1), k - 1, collisions / (k - 1)) if k > 1 else 1.0
        spans[most] += spans[most + 1 :].sum()
        spans[most + 1 :] = 0.0
        out[: min(k, upto) + 1] += float(binom.pmf(k, n, differing)) * spans[: upto + 1]
        if spans[: upto + 1].sum() < _TAIL:  # more differing pairs span more dialogues: the rest all lie beyond upto
            break
    return out


def corpus_decidable(n: int, differing: float, sizes: ClusterSizes = (), *, alpha: float = 0.05) -> float:
    """The chance that a fair audit of ``n`` pairs holds the :func:`corpus_least_units` its permutation TOST needs.

    Each pair's two answers differ with the share ``differing`` (identical answers swap to nothing, so
    the test does not count them): ``K``, the differing pairs, is Binomial(n, differing). Without
    ``sizes`` the units are pairs, ``K`` of them. With the corpus' dialogue sizes the ``K`` differing
    pairs are a uniform sample of its pairs, and the units are the dialogues they span: ``K`` less the
    pairs that fall in a dialogue already drawn. Those collisions (a birthday problem) are taken as
    Binomial over the ``K - 1`` pairs after the first, with their exact mean, ``K -``
    :func:`expected_clusters` (about Poisson while they are rare). A corpus with fewer dialogues than
    the test needs (beyond its pairs: whole copies and one more) never decides. On the bare audit's
    answers (57% of pairs differ) it gave 0.22, 0.50, 0.81 and 0.99 at 8, 10, 13 and 20 pairs, where
    4,000 samples of its pairs gave 0.22, 0.49, 0.81 and 0.99.

    Raises ValueError for ``differing`` outside (0, 1], ``alpha`` outside (0, 1) or sizes the planner cannot model.

    Examples
    --------
    >>> corpus_decidable(5, 1.0), corpus_decidable(6, 1.0)  # 6 differing pairs at α 0.05
    (0.0, 1.0)
    >>> round(corpus_decidable(12, 0.5), 3)  # P(Binomial(12, 0.5) >= 6)
    0.613
    """
    if not (0 < differing <= 1 and 0 < alpha < 1):
        raise ValueError(_MSG_DIFFERING.format(q=differing, alpha=alpha))
    _check_sizes(sizes)
    least = corpus_least_units(alpha)
    if n < least:
        return 0.0
    return float(min(1.0, max(0.0, 1.0 - _differing_units(n, differing, sizes, least - 1).sum())))


@functools.lru_cache(maxsize=4096)
def _lattice_power(units: int, ratio: float, alpha: float) -> float:
    """The permutation TOST's power on ``units`` equal differing units whose margin is ``ratio`` SEs of its interval.

    Their sign flips give ``2B - units``, ``B`` Binomial(units, ½); the interval's SE is read off its
    2.5% and 97.5% points, as the audit reads it off the permutation interval, and the observed
    difference (one of the flips) passes where less than ``alpha`` of the flips lie beyond it ± the margin.
    """
    from scipy.stats import binom

    if 2.0 ** (1 - units) >= alpha:
        return 0.0
    values = 2 * np.arange(units + 1) - units
    chance = binom.pmf(np.arange(units + 1), units, 0.5)
    cdf = np.cumsum(chance)
    low, high = values[np.searchsorted(cdf, 0.025)], values[np.searchsorted(cdf, 0.975)]
    margin = ratio * (high - low) / (2 * 1.959964)
    above = np.array([chance[values >= v + margin - 1e-9].sum() for v in values])
    below = np.array([chance[values <= v - margin + 1e-9].sum() for v in values])
    return float(chance[(above < alpha) & (below < alpha)].sum())


def power_corpus_equivalence(ratio: float, *, alpha: float = 0.05, spread: float = 0.0) -> float:
    """Power of the gate's permutation TOST for a corpus key on a fair model whose margin is ``ratio`` standard errors.

    Under A = B the observed difference is itself a draw from the permutation distribution
    (about normal, sd ``SE``), and the TOST passes when ``|d| < margin - z_{1-α} SE``:
    ``2 Φ(ratio - z_{1-α}) - 1`` (0 where the margin is narrower than ``z_{1-α} SE``).

    With ``spread``, the sd of the log ratio from sample to sample (a sample's margin and SE vary
    with the pairs drawn), the power is averaged over a log-normal ratio of median ``ratio``
    (Gauss-Hermite, :data:`CORPUS_SPREAD_NODES` nodes): near power 0.8 the power is concave in
    the ratio, so a ratio that varies passes less often than its typical value says.

    Examples
    --------
    >>> round(power_corpus_equivalence(2.926), 2)  # z_0.95 + z_0.9: the target of the normal formula
    0.8
    """
    from scipy.stats import norm

    if spread > 0:
        nodes, weights = np.polynomial.hermite_e.hermegauss(CORPUS_SPREAD_NODES)
        ratios = ratio * np.exp(spread * nodes)
        powers = np.maximum(0.0, 2 * norm.cdf(ratios - norm.ppf(1 - alpha)) - 1)
        return float(np.sum(weights * powers) / np.sum(weights))
    return max(0.0, float(2 * norm.cdf(ratio - norm.ppf(1 - alpha)) - 1))


def power_corpus_at_size(
    n: int,
    ratio: float,
    n_pilot: int,
    *,
    exponent: float,
    alpha: float = 0.05,
    differing: float | None = None,
    sizes: ClusterSizes = (),
    spread: float = 0.0,
) -> float:
    """The power :func:`pairs_for_corpus_equivalence` plans with at ``n`` pairs, counting the test's discreteness.

    The margin is ``ratio (n / n_pilot)^exponent`` standard errors at ``n`` pairs. Without the pairs'
    ``differing`` share, the normal power of that ratio (:func:`power_corpus_equivalence`). With it,
    the power sums over the units (dialogues of ``sizes`` where given, else pairs) that hold a
    differing pair (their distribution as :func:`corpus_decidable` draws it): none below
    :func:`corpus_least_units`, where the test cannot pass; up to :data:`CORPUS_LATTICE_UNITS`, the
    lattice of that many equal units; beyond, the normal power (averaged over the ratio's ``spread``
    from sample to sample where given: :func:`power_corpus_equivalence`).

    Examples
    --------
    >>> round(power_corpus_at_size(12, 6.0, 1000, exponent=0.0, differing=0.5), 3)  # P(Binomial(12, ½) >= 6) x 1.0
    0.613
    """
    at = ratio * (n / n_pilot) ** exponent
    reached = power_corpus_equivalence(at, alpha=alpha, spread=spread)
    if differing is None:
        return reached
    if not (0 < differing <= 1 and 0 < alpha < 1):
        raise ValueError(_MSG_DIFFERING.format(q=differing, alpha=alpha))
    _check_sizes(sizes)
    units = _differing_units(n, differing, sizes, CORPUS_LATTICE_UNITS)
    few = sum(float(units[j]) * _lattice_power(j, at, alpha) for j in range(corpus_least_units(alpha), units.size))
    return few + max(0.0, 1.0 - float(units.sum())) * reached


def pairs_for_corpus_equivalence(
    ratio: float,
    n_pilot: int,
    *,
    exponent: float,
    alpha: float = 0.05,
    power: float = 0.8,
    least: int | None = None,
    differing: float | None = None,
    sizes: ClusterSizes = (),
    spread: float = 0.0,
) -> int:
    """The fewest pairs (at least ``least``) on which a corpus key's permutation TOST passes a fair model with ``power``.

    ``ratio`` is the pilot's margin over its permutation interval's standard error at ``n_pilot``
    pairs; on ``n`` pairs it is ``ratio (n / n_pilot)^exponent``. The normal formula
    (:func:`pairs_for_equivalence`) takes ``exponent`` ½ with a fixed margin, which a corpus key
    breaks twice: its default margin (±10% of its value) shrinks as the corpus grows, since distinct
    n-grams grow more slowly than words, and its standard error falls faster or slower than
    ``1 / sqrt(n)``. On the bare audit's answers the ratio grows as ``n^0.24`` for distinct_1 and
    hardly at all for distinct_2 (``bench/gate_power.py``): the normal formula planned 463 and 256
    pairs, where a fair model passed 0.99 and 1.00 of the time.

    With the pairs' ``differing`` share (and the corpus' dialogue ``sizes``), the power also counts the
    test's discreteness (:func:`power_corpus_at_size`): on a few pairs a sample often holds fewer than
    the :func:`corpus_least_units` differing dialogues the permutation test needs, and then it cannot
    pass. ``least`` defaults to :data:`CORPUS_LEAST_PAIRS` there, else to
    :data:`CORPUS_LEAST_PAIRS_UNMODELLED`; where the power already reaches the target at ``least``
    pairs, ``least`` is the answer (its power is above the target). With ``spread`` (the sd of the log
    ratio from sample to sample), the power is averaged over it (:func:`power_corpus_at_size`).

    Examples
    --------
    >>> pairs_for_corpus_equivalence(5.0, 1470, exponent=0.25)  # 5 standard errors at 1,470 pairs: (2.926 / 5)^4 of them
    173
    >>> pairs_for_corpus_equivalence(6.0, 1000, exponent=0.0, differing=0.5)  # P(Binomial(n, ½) >= 6) reaches 0.8 at 15
    15
    """
    from scipy.stats import norm

    floor = least if least is not None else CORPUS_LEAST_PAIRS_UNMODELLED if differing is None else CORPUS_LEAST_PAIRS
    if not (ratio > 0 and n_pilot > 0 and floor > 0 and math.isfinite(exponent)):
        raise ValueError(_MSG_CORPUS_ARGS.format(ratio=ratio, n=n_pilot, least=floor, exponent=exponent))
    target = float(norm.ppf(1 - alpha) + norm.ppf((1 + power) / 2))
    if ratio * (floor / n_pilot) ** exponent >= target:
        n = floor
    elif exponent <= 0:  # the ratio does not grow: no size reaches the target
        raise ValueError(_MSG_CORPUS_TOO_MANY.format(ratio=ratio, n=n_pilot, exponent=exponent, most=MAX_CORPUS_PAIRS))
    else:
        needed = n_pilot * math.pow(target / ratio, 1 / exponent)
        if not needed <= MAX_CORPUS_PAIRS:
            raise ValueError(_MSG_CORPUS_TOO_MANY.format(ratio=ratio, n=n_pilot, exponent=exponent, most=MAX_CORPUS_PAIRS))
        n = max(floor, math.ceil(needed))
    if differing is None and not spread > 0:
        return n
    return _corpus_search(
        n,
        power,
        lambda m: power_corpus_at_size(
            m, ratio, n_pilot, exponent=exponent, alpha=alpha, differing=differing, sizes=sizes, spread=spread
        ),
    )


def _corpus_search(start: int, power: float, power_at: Callable[[int], float]) -> int:
    """The fewest pairs from ``start`` whose ``power_at`` reaches ``power``: doubling steps, then bisection (it rises with n)."""
    # the chance to decide grows with the pairs; the ratio's power already reaches it
    too_many = _MSG_CORPUS_DECIDE.format(most=MAX_CORPUS_PAIRS)
    return _doubling_search(start, start, lambda n: power_at(n) >= power, MAX_CORPUS_PAIRS, too_many)


def _doubling_search(least: int, high: int, reaches: Callable[[int], bool], most: int, too_many: str) -> int:
    """The fewest pairs from ``least`` that ``reaches``: doubling from ``high``, then bisection; ValueError(too_many) past ``most``.

    A ``high`` past ``most`` starts the search at ``most``: a size beyond it is never returned.
    """
    if least > most:
        raise ValueError(too_many)
    if reaches(least):
        return least
    low, high = least, min(high, most)
    while not reaches(high):
        if high >= most:
            raise ValueError(too_many)
        low, high = high, min(most, 2 * high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


MAX_DETECT_PAIRS = 10_000_000
"""The most pairs :func:`pairs_to_detect` and :func:`pairs_spanning` search (beyond it: ValueError, "beyond any audit")."""
#: Where the normal formula asks more pairs than this, :func:`pairs_to_detect` of a mean test answers it (the t is normal).
_NORMAL_ABOVE = 1_000_000
_MSG_DETECT_ARGS = "effect must be > 0, sd_difference > 0 and discordance in [0, 1); got {effect!r}, {sd!r}, {q!r}"
_MSG_DETECT_ROOM = (
    "a difference of {effect:g} is more than a rate can grow by here: the test's power model adds it to the "
    "{q:.3g} of pairs already discordant, and only {room:.3g} are left to turn"
)
_MSG_DETECT_TOO_MANY = "the pairs needed exceed {most:,}: beyond any audit"
_DETECT_TESTS = ("mean", "mcnemar_exact", "mcnemar_midp", "rate_mean")


def units_spanned(n: int, *, pairs_per_unit: float = 1.0, cluster_sizes: ClusterSizes = ()) -> int:
    """The units an audit of ``n`` pairs counts: dialogues a uniform sample spans (``cluster_sizes``), else ``n / pairs_per_unit``.

    Without clusters (``pairs_per_unit`` 1 and no sizes) the units are the pairs.

    Examples
    --------
    >>> units_spanned(10), units_spanned(10, pairs_per_unit=2.5), units_spanned(2, cluster_sizes=((2, 2),))
    (10, 4, 2)
    """
    if cluster_sizes:
        return spanned_dialogues(n, cluster_sizes)
    if pairs_per_unit <= 1:
        return n
    return max(1, math.floor(n / pairs_per_unit))


def exact_least_units(alpha: float) -> int:
    """The fewest differing units on which an exact two-sided sign test (McNemar, exact sign flips) can reject at ``alpha``.

    Its smallest p is ``2^(1 - m)`` with ``m`` units differing, all one way: the fewest ``m`` with ``2^(1 - m) < alpha``.

    Examples
    --------
    >>> exact_least_units(0.05)  # 2^-5 = 0.031 < 0.05; 2^-4 = 0.0625 is not
    6
    """
    return math.floor(1 - math.log2(alpha)) + 1


def _spanned_moments(n: int, sizes: ClusterSizes) -> tuple[float, float]:
    """The mean and standard deviation of the dialogues a uniform sample of ``n`` pairs spans (each drawn or not)."""
    draws, count = _dialogue_draws(n, sizes)
    hit = 1.0 - draws[:, 0]
    return float(count @ hit), math.sqrt(float(count @ (hit * (1.0 - hit))))


def _chance_to_span(n: int, units: int, sizes: ClusterSizes) -> float:
    """P(a uniform sample of ``n`` pairs spans ``units`` dialogues or more), a normal approximation as in ``_RateNull._reach``."""
    from scipy.special import ndtr

    mean, sd = _spanned_moments(n, sizes)
    if sd > 0:
        return float(ndtr((mean - (units - 0.5)) / sd))
    return 1.0 if mean >= units - 0.5 else 0.0


def _fewest(least: int, hint: int, reaches: Callable[[int], bool]) -> int:
    """The fewest pairs from ``least`` that ``reaches`` (doubling from ``hint``, then bisection); ValueError past the most."""
    too_many = _MSG_DETECT_TOO_MANY.format(most=MAX_DETECT_PAIRS)
    return _doubling_search(least, max(least + 1, hint), reaches, MAX_DETECT_PAIRS, too_many)


def pairs_spanning(units: int, *, power: float = 0.8, pairs_per_unit: float = 1.0, cluster_sizes: ClusterSizes = ()) -> int:
    """The fewest pairs whose audit counts ``units`` units or more: with ``cluster_sizes``, with probability ``power``.

    The units are dialogues where the audit clusters, else pairs. With the corpus' dialogue sizes,
    the dialogues a uniform sample spans vary from sample to sample (a normal approximation of their
    sum); with only its pairs per dialogue, ``units x pairs_per_unit``. The identical-answers bound
    counts units: 149 dialogues at ±2 points are about 83 dialogues' worth of pairs too few at 149 pairs.
    Raises ValueError beyond :data:`MAX_DETECT_PAIRS` pairs.

    Examples
    --------
    >>> pairs_spanning(149), pairs_spanning(149, pairs_per_unit=2.0)
    (149, 298)
    """
    _check_sizes(cluster_sizes)
    if cluster_sizes:
        return _fewest(units, units, lambda n: _chance_to_span(n, units, cluster_sizes) >= power)
    n = units if pairs_per_unit <= 1 else math.ceil(units * pairs_per_unit)
    if n > MAX_DETECT_PAIRS:
        raise ValueError(_MSG_DETECT_TOO_MANY.format(most=MAX_DETECT_PAIRS))
    while units_spanned(n, pairs_per_unit=pairs_per_unit) < units:
        n += 1
    return n


def pairs_to_detect(
    effect: float,
    sd_difference: float,
    *,
    test: str,
    alpha: float,
    power: float = 0.8,
    discordance: float = 0.0,
    design_effect: float = 1.0,
    pairs_per_unit: float = 1.0,
    cluster_sizes: ClusterSizes = (),
) -> int:
    """The fewest pairs on which a key's test detects a true difference ``effect`` with ``power``: the inverse of :func:`mde`.

    The power is :func:`mde`'s for ``test`` (a :class:`PowerBasis` test) at each size: the mean
    tests' standard error ``sd_difference x sqrt(design_effect / n)`` (the design effect floored at
    1) on the units' degrees of freedom (dialogues where ``pairs_per_unit`` or ``cluster_sizes`` say
    the audit clusters, else pairs), a rate's grown by the discordant pairs the effect adds;
    McNemar's exact power on the ``discordance`` split evenly with the effect added to one side.
    So an audit of that many pairs, as spread as the pilot, prints an MDE of about ``effect`` (a little above
    it at times: the model's degrees of freedom are the units less one, not the audit's Bell-McCaffrey value).
    No fewer pairs than an exact test can reject on: :func:`exact_least_units` units, and for a
    rate as many discordant pairs expected. Raises ValueError for an effect a rate cannot grow by
    (more than ``1 - discordance``) or beyond :data:`MAX_DETECT_PAIRS` pairs.

    Examples
    --------
    >>> pairs_to_detect(0.5, 1.0, test="mean", alpha=0.05)  # the normal formula says 32; the noncentral t asks more
    34
    >>> pairs_to_detect(0.9, 0.0, test="mcnemar_exact", alpha=0.05)  # McNemar rejects on 6 one-way pairs, no fewer
    7
    """
    from scipy.stats import norm

    if test not in _DETECT_TESTS:
        raise ValueError(_MSG_BASIS.format(test=test))
    if not (effect > 0 and sd_difference >= 0 and 0 <= discordance < 1):
        raise ValueError(_MSG_DETECT_ARGS.format(effect=effect, sd=sd_difference, q=discordance))
    rate = test != "mean"
    if rate and effect > 1 - discordance:
        raise ValueError(_MSG_DETECT_ROOM.format(effect=effect, q=discordance, room=1 - discordance))
    _check_sizes(cluster_sizes)
    deff = max(1.0, design_effect)
    least = exact_least_units(alpha)
    concordant = max(1.0 - discordance, 1e-12)
    spread = sd_difference**2 * deff + (max(0.0, effect * (1 - effect / concordant)) if rate else 0.0)
    if test.startswith("mcnemar"):
        spread = discordance + effect
    normal = (float(norm.ppf(1 - alpha / 2) + norm.ppf(power))) ** 2 * spread / effect**2
    if not math.isfinite(normal):
        raise ValueError(_MSG_DETECT_TOO_MANY.format(most=MAX_DETECT_PAIRS))
    if test == "mean" and normal > _NORMAL_ABOVE:
        if normal > MAX_DETECT_PAIRS:
            raise ValueError(_MSG_DETECT_TOO_MANY.format(most=MAX_DETECT_PAIRS))
        return math.ceil(normal)

    def units(n: int) -> int:
        return units_spanned(n, pairs_per_unit=pairs_per_unit, cluster_sizes=cluster_sizes)

    def reaches(n: int) -> bool:
        if units(n) < least or (rate and n * (discordance + effect) < least):
            return False
        if test.startswith("mcnemar"):
            basis = PowerBasis(test, n=n, discordance=discordance)
        else:
            se = sd_difference * math.sqrt(deff / n)
            basis = PowerBasis(test, n=n, se=se, df=float(max(1, units(n) - 1)), discordance=discordance)
        return _PowerAt(basis, alpha)(effect) >= power

    return _fewest(least, math.ceil(normal), reaches)
