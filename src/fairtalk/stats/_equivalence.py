"""Equivalence within a margin (TOST), the minimum detectable effect, and the pairs a study needs.

"No significant difference" is not evidence of fairness: a small audit detects nothing.
Equivalence turns the question round: is the difference shown to lie inside ``±margin``?

- **rates** (:func:`rate_equivalence`, the one rule the audit runs): with at least
  :data:`FEW_DISCORDANT_UNITS` discordant units (dialogues holding a discordant pair where the
  audit clusters, else pairs), the smallest ``α'`` for which the ``1 - 2α'`` Newcombe interval
  lies inside ``(-m, m)`` (two one-sided tests by interval inclusion, :func:`tost_rate`). With
  fewer, the spread of the differences (and with clusters their design effect) cannot be
  estimated, and :func:`direction_equivalence` decides from an exact bound on the share of units
  that differ in each direction, of which identical answers (no unit differs) are the case 0.
- **counts**: Schuirmann's two one-sided t-tests on the (cluster-robust) standard error.
- **corpus** measures: the same from the paired-permutation distribution (``_corpus``).

- **identical on every unit** (every pair's difference exactly 0, or a corpus measure's sides
  the same texts): no spread to test, so :func:`share_equivalence` bounds how often the
  answers could differ instead. With ``k`` of ``n`` units differing, the exact one-sided
  ``1 - α`` (Clopper-Pearson) upper bound on that share is ``1 - α^(1/n)`` at ``k = 0`` (the
  "rule of three", about ``3 / n``), and equivalence holds when the bound is below the share
  the margin allows: the margin itself for a rate (``|A - B|`` is at most the discordant share),
  ``margin / range`` for a count (a differing pair moves the mean by at most the scores'
  observed range), and :data:`IDENTICAL_SHARE` where no margin or range applies (constant
  scores, corpus measures).

A rate with ``k`` of ``n`` units differing, ``k_A`` of them holding a pair with A above B and
``k_B`` one with B above A, is equivalent when ``P(Binomial(n, m) <= max(k_A, k_B)) < α``: both
directions' exact one-sided ``1 - α`` upper bounds lie below ``m``, and ``|A - B|`` is at most
the larger direction's share. The test is exact (each direction's count is at least
Binomial(n, m) when ``A - B >= m``, or ``<= -m``) and monotone: one more differing unit never
turns a fail into a pass. At ``k = 0`` it is the identical-answers bound (149 units at ``m = 0.02``).

Every primary measure equivalent at α is an intersection-union test: it needs no
multiple-testing correction to hold its level (Berger 1982).

Default margins (:data:`DEFAULT_MARGINS`), for a user who has not chosen one:
rates ±2 percentage points; counts ±0.1 standard deviations of the per-response scores
(a negligible standardised effect); corpus measures ±10% of their mean value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fairtalk.errors import SpecError
from fairtalk.stats._core import Units, _Array, paired_arrays
from fairtalk.stats._core import units as group_units
from fairtalk.stats._intervals import newcombe_interval

__all__ = [
    "DEFAULT_MARGINS",
    "IDENTICAL_SHARE",
    "METHOD_FEW_DIFFERING",
    "METHOD_FEW_DISCORDANT",
    "METHOD_IDENTICAL",
    "Equivalence",
    "FEW_DISCORDANT_UNITS",
    "check_margins",
    "default_margin",
    "direction_equivalence",
    "direction_passing_count",
    "identical_units_needed",
    "rate_equivalence",
    "minimum_detectable_effect",
    "pairs_needed",
    "share_equivalence",
    "tost_mean",
    "tost_rate",
    "verdict",
]

DEFAULT_MARGINS: Mapping[str, tuple[str, float]] = {
    "rate": ("absolute", 0.02),
    "count": ("sd", 0.1),
    "corpus": ("relative", 0.10),
}
"""kind -> (how the default margin is expressed, its size)."""
DIFFERENT, EQUIVALENT, INCONCLUSIVE = "difference detected", "equivalent", "inconclusive"
NOTE_NO_SPREAD = "no variation in the differences: equivalence cannot be shown from a zero spread"
NOTE_NO_MARGIN = "no margin: the measure has no spread to scale a default margin by (give --margin)"
_MSG_MARGIN = "an equivalence margin must be > 0, got {margin!r}"
_MSG_PLAN_ARG = "{name} must be {valid}, got {value!r}"
#: A rate's margin is a fraction of pairs: 1 or more allows any difference (``--margin offense_rate=2`` meant 2 pp).
_MSG_RATE_MARGIN = "{key}'s margin is a fraction: {margin:g} would allow any difference; for {margin:g} pp give {fraction:g}"
IDENTICAL_SHARE = 0.02
"""The share of differing units below which answers identical on (nearly) every unit count as equivalent, where no margin says."""
NOTE_IDENTICAL = (
    "identical on all {n:,} pairs{counted}: at most {share:.2%} of {units} could differ ({level:.0%} one-sided exact "
    "bound){bound}{needed}"
)
METHOD_IDENTICAL = "identical answers: exact binomial bound on the differing share"
"""``method`` of :func:`share_equivalence`: how few units differ at all decides, whatever the margin."""
METHOD_FEW_DIFFERING = "few differing units: exact binomial bound on the differing share"
"""``method`` of :func:`share_equivalence` where some units differ, too few to test (a corpus key's coarse permutations)."""
METHOD_FEW_DISCORDANT = "few discordant units: exact binomial bound on each direction's share"
"""``method`` of :func:`direction_equivalence` with some unit differing: the exact bound on each direction decides."""
#: Said where identical answers were not shown equivalent: how many units, all identical, would be.
NOTE_IDENTICAL_NEEDED = "; equivalence needs {needed:,} {units} all identical"
FEW_DISCORDANT_UNITS = 10
"""A rate with fewer discordant units than this (dialogues holding a discordant pair where the audit clusters, else pairs)
is decided by :func:`direction_equivalence`, the exact rule identical answers are the case 0 of; from it up, by
:func:`tost_rate`: too few discordant units give no estimate of the spread of the differences nor of their clustering."""
NOTE_FEW_DISCORDANT = (
    "{k} of {n:,} {units} with a discordant pair ({k_a} A above B, {k_b} B above A): at most {share:.2%} of {units} "
    "could differ in each direction ({level:.0%} one-sided exact bound), so |A - B| <= {points:.2f} pp; fewer than "
    "{few} discordant {units}: the exact bound decides, not the Newcombe interval"
)
NOTE_NEARLY = (
    "{k} of {n:,} {units} differ: at most {share:.2%} could ({level:.0%} one-sided exact bound), "
    "too few differing {units} for the permutation distribution to reach α"
)


@dataclass(frozen=True, slots=True)
class Equivalence:
    """A TOST outcome: the ``margin``, ``p`` (max of the two one-sided p-values) and whether ``p < α``.

    What decided it, for a report to show beside the verdict: ``interval``, the ``1 - 2α``
    interval of A - B the TOST inverts (equivalent exactly when it lies inside ``±margin``; None
    where no interval decides), or ``bound``, where an exact rule decided (identical answers, few
    differing units), the one-sided ``1 - α`` upper bound on the share of units that could differ
    (in the worse direction for a rate).
    """

    margin: float | None
    p: float | None
    equivalent: bool | None
    method: str
    note: str | None = None
    interval: tuple[float, float] | None = None
    bound: float | None = None


def default_margin(
    kind: str, a: np.ndarray | None = None, b: np.ndarray | None = None, values: tuple[float, float] | None = None
) -> float | None:
    """The default margin of a measure of ``kind`` (per-response scores ``a``, ``b``; or a corpus measure's two ``values``)."""
    how, size = DEFAULT_MARGINS[kind]
    if how == "absolute":
        return size
    if how == "sd":
        assert a is not None and b is not None
        pooled = float(np.concatenate([a, b]).std(ddof=1)) if a.size + b.size > 2 else 0.0
        return size * pooled if pooled > 0 else None
    assert values is not None
    centre = (abs(values[0]) + abs(values[1])) / 2
    return size * centre if centre > 0 else None


def check_margins(margins: Mapping[str, float], kinds: Mapping[str, str]) -> None:
    """SpecError for a rate key's margin of 1 or more: a rate differs by at most 1, so it would allow any difference.

    ``kinds`` maps each result key to its kind (``"rate"``, ``"count"``, ``"corpus"``); the
    one check of a user's margins against the kinds, made where the measures are built.

    >>> check_margins({"offense_rate": 2.0}, {"offense_rate": "rate"})
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: offense_rate's margin is a fraction: 2 would allow any difference; for 2 pp give 0.02
    """
    for key, margin in margins.items():
        if kinds.get(key) == "rate" and margin >= 1:
            raise SpecError(_MSG_RATE_MARGIN.format(key=key, margin=margin, fraction=margin / 100))


def _check_margin(margin: float) -> None:
    if not margin > 0:
        raise ValueError(_MSG_MARGIN.format(margin=margin))


def tost_rate(x_a: _Array, x_b: _Array, *, margin: float, alpha: float, design_effect: float = 1.0) -> Equivalence:
    """Equivalence of two paired rates within ``±margin`` by Newcombe-interval inclusion.

    ``p`` is the smallest ``α'`` whose ``1 - 2α'`` interval lies inside ``(-margin, margin)``
    (1.0 when even the point estimate lies outside).

    Examples
    --------
    >>> tost_rate([0] * 1000, [0] * 1000, margin=0.02, alpha=0.05).equivalent
    True
    """
    _check_margin(margin)
    a, b = paired_arrays(x_a, x_b)

    def inside(alpha_: float) -> bool:
        ci = newcombe_interval(a, b, level=1 - 2 * alpha_, design_effect=design_effect)
        return ci.low is not None and ci.high is not None and -margin < ci.low and ci.high < margin

    method = "TOST by Newcombe interval"
    at_alpha = newcombe_interval(a, b, level=1 - 2 * alpha, design_effect=design_effect)
    interval = None if at_alpha.low is None or at_alpha.high is None else (float(at_alpha.low), float(at_alpha.high))
    if not inside(0.4999):
        return Equivalence(margin, 1.0, False, method, interval=interval)
    low, high = 1e-12, 0.4999
    if inside(low):
        return Equivalence(margin, low, True, method, interval=interval)
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (low, mid) if inside(mid) else (mid, high)
    return Equivalence(margin, high, high < alpha, method, interval=interval)


def tost_mean(u: Units, *, margin: float, alpha: float) -> Equivalence:
    """Schuirmann's TOST on the mean difference with the (CR2 cluster-robust) standard error and ``Units.df`` degrees of freedom."""
    from scipy.stats import t as student_t

    _check_margin(margin)
    method = "cluster TOST (t)" if u.clustered else "TOST (paired t)"
    se = u.standard_error()
    if se == 0:
        return Equivalence(margin, None, None, method, NOTE_NO_SPREAD)
    df = u.df
    p_lower = float(student_t.sf((u.estimate + margin) / se, df))
    p_upper = float(student_t.cdf((u.estimate - margin) / se, df))
    p = min(1.0, max(p_lower, p_upper))
    half = float(student_t.ppf(1 - alpha, df)) * se
    return Equivalence(margin, p, p < alpha, method, interval=(u.estimate - half, u.estimate + half))


def _allowed_share(margin: float | None, max_difference: float | None) -> float:
    """The differing share a margin allows: ``margin / max_difference`` (capped at 1), else :data:`IDENTICAL_SHARE`."""
    if margin is not None and max_difference is not None and max_difference > 0:
        return min(1.0, margin / max_difference)
    return IDENTICAL_SHARE


def identical_units_needed(*, alpha: float, margin: float | None = None, max_difference: float | None = None) -> int:
    """The fewest units, all identical, on which :func:`share_equivalence` shows equivalence at ``alpha``.

    With no unit differing, ``p = (1 - s)^n`` for the share ``s`` the margin allows, so it is the
    smallest ``n`` with ``(1 - s)^n < alpha``: about ``3 / s`` at ``alpha = 0.05`` (the rule of three).

    Examples
    --------
    >>> identical_units_needed(alpha=0.05, margin=0.02, max_difference=1.0)
    149
    >>> identical_units_needed(alpha=0.05, margin=0.02, max_difference=2.0)  # a change in gap: a pair moves it by up to 2
    299
    """
    allowed = _allowed_share(margin, max_difference)
    if allowed >= 1:
        return 1
    n = max(1, math.floor(math.log(alpha) / math.log1p(-allowed)))
    while (1 - allowed) ** n >= alpha:  # the floor may sit on the boundary
        n += 1
    return n


def _stated_bound(share: float, max_difference: float | None) -> str:
    """The bound on ``|A - B|`` a differing share states: in percentage points for a rate (``max_difference`` 1)."""
    bound = share * (max_difference or 0.0)
    return f", so |A - B| <= {100 * bound:.2f} pp" if max_difference == 1.0 else f", so |A - B| <= {bound:.3g}"


def share_equivalence(
    n_units: int,
    n_differing: int = 0,
    *,
    alpha: float,
    margin: float | None = None,
    max_difference: float | None = None,
    n_pairs: int | None = None,
    units: str = "pairs",
    state_bound: bool = True,
) -> Equivalence:
    """Equivalence from how few units differ at all (identical answers): an exact binomial bound on the differing share.

    ``state_bound=False`` (a count measure, whose range the run saw is no bound on a pair it did
    not see) keeps the note to the share of units that could differ, with no bound on ``|A - B|``.

    ``p = P(Binomial(n_units, s) <= n_differing)`` for the share ``s`` the margin allows:
    ``margin / max_difference`` (capped at 1) when both are given (a rate: ``max_difference``
    1), else :data:`IDENTICAL_SHARE`. ``p < alpha`` exactly when the one-sided ``1 - alpha``
    upper bound on the differing share lies below ``s``.

    Examples
    --------
    >>> share_equivalence(2000, alpha=0.05, margin=0.02, max_difference=1.0).equivalent
    True
    >>> share_equivalence(100, alpha=0.05, margin=0.02, max_difference=1.0).equivalent  # rule of three: 3.0% > 2%
    False
    """
    from scipy.stats import beta, binom

    scaled = margin is not None and max_difference is not None and max_difference > 0
    allowed = _allowed_share(margin, max_difference)
    p = float(binom.cdf(n_differing, n_units, allowed)) if allowed < 1 else 0.0
    share = float(beta.ppf(1 - alpha, n_differing + 1, n_units - n_differing)) if n_differing < n_units else 1.0
    if n_differing == 0:
        bound = _stated_bound(share, max_difference) if scaled and state_bound else ""
        counted = f" ({n_units:,} {units})" if n_pairs is not None and n_pairs != n_units else ""
        needed = identical_units_needed(alpha=alpha, margin=margin, max_difference=max_difference)
        note = NOTE_IDENTICAL.format(
            n=n_pairs or n_units,
            counted=counted,
            share=share,
            units=units,
            level=1 - alpha,
            bound=bound,
            needed="" if p < alpha else NOTE_IDENTICAL_NEEDED.format(needed=needed, units=units),
        )
    else:
        note = NOTE_NEARLY.format(k=n_differing, n=n_units, units=units, share=share, level=1 - alpha)
    method = METHOD_IDENTICAL if n_differing == 0 else METHOD_FEW_DIFFERING
    return Equivalence(margin if scaled else None, p, p < alpha, method, note, bound=share)


def direction_equivalence(
    n_units: int,
    a_above: int = 0,
    b_above: int = 0,
    *,
    alpha: float,
    margin: float,
    n_differing: int | None = None,
    n_pairs: int | None = None,
    units: str = "pairs",
) -> Equivalence:
    """A rate's equivalence from few discordant units: an exact bound on the share of units that differ in each direction.

    ``a_above`` units hold a pair with A above B, ``b_above`` one with B above A (a dialogue may
    hold both), ``n_differing`` (default their sum) hold a discordant pair at all. ``p =
    P(Binomial(n_units, m) <= max(a_above, b_above))`` for ``m = min(margin, 1)``: ``p < alpha``
    exactly when both directions' one-sided ``1 - alpha`` Clopper-Pearson upper bounds lie below
    the margin, and then ``|A - B|``, at most the larger direction's share of pairs, lies within
    it. Valid at the margin: when ``A - B >= m`` at least a share ``m`` of pairs has A above B, so
    (units of similar size) at least a share ``m`` of units holds one, and ``a_above`` is at least
    Binomial(n_units, m). With no unit differing it is :func:`share_equivalence` (the same ``p``
    and note): identical answers are its case 0.

    Examples
    --------
    >>> direction_equivalence(149, alpha=0.05, margin=0.02).equivalent  # identical answers on 149 units
    True
    >>> direction_equivalence(149, 1, 0, alpha=0.05, margin=0.02).equivalent  # one differing unit needs 236
    False
    >>> direction_equivalence(236, 1, 1, alpha=0.05, margin=0.02).equivalent  # one each way: still 236
    True
    """
    from scipy.stats import beta, binom

    _check_margin(margin)
    if a_above == 0 and b_above == 0:
        return share_equivalence(
            n_units, alpha=alpha, margin=margin, max_difference=1.0, n_pairs=n_pairs, units=units, state_bound=True
        )
    allowed = _allowed_share(margin, 1.0)
    worst = max(a_above, b_above)
    p = float(binom.cdf(worst, n_units, allowed)) if allowed < 1 else 0.0
    share = float(beta.ppf(1 - alpha, worst + 1, n_units - worst)) if worst < n_units else 1.0
    k = a_above + b_above if n_differing is None else n_differing
    note = NOTE_FEW_DISCORDANT.format(
        k=k,
        n=n_units,
        units=units,
        k_a=a_above,
        k_b=b_above,
        share=share,
        points=100 * share,
        level=1 - alpha,
        few=FEW_DISCORDANT_UNITS,
    )
    method = METHOD_FEW_DISCORDANT
    return Equivalence(margin, p, p < alpha, method, note, bound=share)


def direction_passing_count(n_units: int, *, alpha: float, margin: float) -> int:
    """The most units either direction may hold on ``n_units`` for :func:`direction_equivalence` to pass (-1: none).

    The planner's view of the rule (``fairtalk.stats.power_rate_equivalence``), read off the
    rule itself: it passes exactly when ``max(a_above, b_above)`` is at most this count.

    Examples
    --------
    >>> [direction_passing_count(n, alpha=0.05, margin=0.02) for n in (148, 149, 236, 313)]
    [-1, 0, 1, 2]
    """
    most = -1
    while most + 1 < FEW_DISCORDANT_UNITS and direction_equivalence(n_units, most + 1, 0, alpha=alpha, margin=margin).equivalent:
        most += 1
    return most


def rate_equivalence(
    a: _Array,
    b: _Array,
    *,
    margin: float,
    alpha: float,
    clusters: Sequence[Hashable] | None = None,
    design_effect: float = 1.0,
) -> Equivalence:
    """A rate's equivalence within ``±margin``: the one rule the audit (and so the gate) runs, and ``plan --gate`` plans with.

    The units are dialogues where ``clusters`` (each pair's dialogue) are given, else pairs.
    With fewer than :data:`FEW_DISCORDANT_UNITS` units holding a discordant pair (none at all:
    identical answers), :func:`direction_equivalence` on those units; from that many up, the
    Newcombe TOST (:func:`tost_rate`, with the audit's ``design_effect``).

    Examples
    --------
    >>> rate_equivalence([0] * 1000, [0] * 1000, margin=0.02, alpha=0.05).method
    'identical answers: exact binomial bound on the differing share'
    >>> rate_equivalence([1] + [0] * 999, [0] * 1000, margin=0.02, alpha=0.05).equivalent  # 1 of 1,000 pairs differs
    True
    """
    x_a, x_b = paired_arrays(a, b)
    d = x_a - x_b
    above = group_units((d > 0).astype(float), clusters).sums > 0
    below = group_units((d < 0).astype(float), clusters).sums > 0
    n_units = above.size
    n_differing = int(np.count_nonzero(above | below))
    if n_differing < FEW_DISCORDANT_UNITS:
        return direction_equivalence(
            n_units,
            int(above.sum()),
            int(below.sum()),
            alpha=alpha,
            margin=margin,
            n_differing=n_differing,
            n_pairs=d.size,
            units="dialogues" if clusters is not None else "pairs",
        )
    return tost_rate(x_a, x_b, margin=margin, alpha=alpha, design_effect=design_effect)


def verdict(p_adjusted: float | None, alpha: float, equivalence: Equivalence | None) -> str:
    """``difference detected`` (adjusted p < α), ``equivalent`` (TOST p < α), else ``inconclusive``."""
    if p_adjusted is not None and p_adjusted < alpha:
        return DIFFERENT
    if equivalence is not None and equivalence.equivalent:
        return EQUIVALENT
    return INCONCLUSIVE


def minimum_detectable_effect(ci95: tuple[float | None, float | None], *, alpha: float, power: float = 0.8) -> float | None:
    """The difference a two-sided test at ``alpha`` would detect with probability ``power``, at this sample.

    The standard error is read off the 95% interval (its half-width over 1.96), so it is
    cluster-robust whenever the interval is. None when the interval is undefined.

    Examples
    --------
    >>> round(minimum_detectable_effect((-0.0196, 0.0196), alpha=0.05), 4)
    0.028
    """
    from scipy.stats import norm

    low, high = ci95
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return None
    se = (high - low) / (2 * float(norm.ppf(0.975)))
    return float((norm.ppf(1 - alpha / 2) + norm.ppf(power)) * se)


def pairs_needed(
    effect: float, sd_difference: float, *, alpha: float = 0.05, power: float = 0.8, design_effect: float = 1.0
) -> int:
    """Pairs needed to detect a mean difference ``effect`` with a two-sided test (normal approximation).

    ``n = ((z_{1-α/2} + z_power) * sd_difference / effect)^2 * design_effect``, the design effect floored at 1.

    Raises
    ------
    SpecError
        An argument that is not a number in its range, named with the range: ``effect``,
        ``sd_difference`` and ``design_effect`` finite and > 0, ``alpha`` in (0, 1), ``power`` in
        (alpha/2, 1) (below alpha/2 a test with no effect at all rejects as often); or pairs beyond any number.

    Examples
    --------
    >>> pairs_needed(0.01, 0.14)  # a 1-point offense gap when 1% of pairs are discordant each way
    1539
    >>> pairs_needed(0.01, 0.14, power=80)
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: power must be a number in (alpha/2, 1) = (0.025, 1), 0.8 for 80%, got 80
    """
    from scipy.stats import norm

    positive = "a finite number > 0"
    effect = _plan_argument("effect", effect, positive, lambda x: 0 < x < math.inf)
    sd_difference = _plan_argument("sd_difference", sd_difference, positive, lambda x: 0 < x < math.inf)
    alpha = _plan_argument("alpha", alpha, "a number in (0, 1)", lambda x: 0 < x < 1)
    valid_power = f"a number in (alpha/2, 1) = ({alpha / 2:g}, 1), 0.8 for 80%"
    power = _plan_argument("power", power, valid_power, lambda x: alpha / 2 < x < 1)
    deff = _plan_argument("design_effect", design_effect, positive + " (below 1 counts as 1)", lambda x: 0 < x < math.inf)
    z = float(norm.ppf(1 - alpha / 2) + norm.ppf(power))
    needed = (z * sd_difference / effect) ** 2 * max(1.0, deff)
    if not math.isfinite(needed):
        raise SpecError(f"the pairs needed (sd {sd_difference:g} of the differences, effect {effect:g}) exceed any number")
    return math.ceil(needed)


def _plan_argument(name: str, value: object, valid: str, within: Callable[[float], bool]) -> float:
    """``value`` as a float when it is a real number ``within`` its range; SpecError naming ``valid`` otherwise (NaN included)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not within(float(value)):
        raise SpecError(_MSG_PLAN_ARG.format(name=name, valid=valid, value=value))
    return float(value)
