"""Confidence intervals of a paired difference A - B: the score interval for rates, t for counts, Hodges-Lehmann for Wilcoxon.

- **rates**: with the score test (the default), the score interval that test inverts
  (Tango's for paired proportions, :func:`fairtalk.stats.score_interval` on ``−1, 0, 1``), so
  the two agree about 0; with any other rate test, Newcombe's hybrid score interval for paired
  proportions (Newcombe 1998, as in Altman et al., *Statistics with Confidence*), built from
  Wilson intervals. Both stay inside [-1, 1] and are not degenerate when no pair is
  discordant. With clusters the table is shrunk to its effective size (counts divided by the
  design effect, :func:`fairtalk.stats._score.rate_design_effect`).
- **counts**: the t interval of the mean difference on the independent units (pairs, or
  clusters with the cluster-robust standard error), the interval of the mean test; a
  bootstrap percentile interval under-covers at small n (0.91 at n = 20), and in simulation
  BCa did too (0.91 at 60 clustered pairs) where the t interval held 0.93-0.94.
- **wilcoxon**: the Hodges-Lehmann estimate (median of the Walsh averages) and its
  distribution-free interval, so the interval speaks of what the signed-rank test tests.

An interval that cannot be computed (no variation in the differences, too many distinct
values for Hodges-Lehmann) is ``(None, None)`` with a note, never a zero-width certainty; so is a
Hodges-Lehmann interval whose two ends fall on one tied value (85 of 100 differences 0: ``[0, 0]``).
Where zero differences hold an end of that interval at 0 its note says how many: they count in the
interval, but not in the signs of Wilcoxon's test (Pratt's zeros), so the two can disagree about 0.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from fairtalk.stats._core import Units, _Array, paired_arrays, units
from fairtalk.stats._paired import DEFAULT_METHODS
from fairtalk.stats._score import RATE_SUPPORT, rate_design_effect, score_interval

__all__ = ["Interval", "design_effect", "difference_interval", "hodges_lehmann", "newcombe_interval", "t_interval"]

_MSG_LEVEL = "confidence level must be in (0, 1), got {level!r}"
NOTE_NO_VARIATION = "no variation in the differences: the interval is undefined (a zero spread is not certainty)"
NOTE_HL_TOO_MANY = "more than {n:,} distinct differences: the Hodges-Lehmann interval is not computed"
#: A Hodges-Lehmann interval of zero width: ties at one value, not certainty (:func:`hodges_lehmann`).
NOTE_HL_TIES = (
    "{k:,} of {n:,} differences are {v:g}: the Hodges-Lehmann interval would be [{v:g}, {v:g}], a zero width from "
    "these ties, not certainty, so none is given"
)
#: What the signed-rank test makes of zero differences, in the notes of :func:`hodges_lehmann`.
_PRATT = "Wilcoxon's test (Pratt's zeros) takes its signs only from the {rest:,} that differ"
#: Where zero differences hold an end of the Hodges-Lehmann interval at 0: why it and the signed-rank test can disagree.
NOTE_HL_ZEROS = (
    "{k:,} of {n:,} differences are 0: the Hodges-Lehmann estimate and interval count them, while "
    + _PRATT
    + ", so the interval can reach 0 where the test finds a shift"
)
#: The words every note of :data:`NOTE_HL_ZEROS` holds, by which a report finds it among a key's notes.
HL_ZEROS_MARK = "Pratt's zeros"
_HL_MAX_DISTINCT = 4000


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval ``(low, high)`` of A - B, the ``method`` that made it, and a ``note`` when it has no value."""

    low: float | None
    high: float | None
    method: str
    note: str | None = None

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        """``(low, high)``."""
        return self.low, self.high


def _check(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(_MSG_LEVEL.format(level=level))


@functools.lru_cache(maxsize=64)
def _z(level: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2))


def _wilson(successes: float, n: float, z: float) -> tuple[float, float]:
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_interval(x_a: _Array, x_b: _Array, *, level: float = 0.95, design_effect: float = 1.0) -> Interval:
    """Newcombe's hybrid score interval for a paired difference of proportions (counts divided by ``design_effect``).

    Examples
    --------
    >>> ci = newcombe_interval([0] * 100, [0] * 100)  # no discordant pair among 100: not [0, 0]
    >>> round(ci.low, 4), round(ci.high, 4)
    (-0.037, 0.037)
    """
    _check(level)
    a, b = paired_arrays(x_a, x_b)
    counts = (
        np.count_nonzero((a == 1) & (b == 1)),
        np.count_nonzero((a == 1) & (b == 0)),
        np.count_nonzero((a == 0) & (b == 1)),
        np.count_nonzero((a == 0) & (b == 0)),
    )
    return newcombe_from_counts(*(int(c) for c in counts), level=level, design_effect=design_effect)


def newcombe_from_counts(n11: int, n10: int, n01: int, n00: int, *, level: float = 0.95, design_effect: float = 1.0) -> Interval:
    """:func:`newcombe_interval` from the paired table's counts (both sides 1, A only, B only, neither).

    Examples
    --------
    >>> ci = newcombe_from_counts(0, 0, 0, 100)  # as newcombe_interval([0] * 100, [0] * 100)
    >>> round(ci.low, 4), round(ci.high, 4)
    (-0.037, 0.037)
    """
    _check(level)
    scale = 1.0 / max(1.0, design_effect)
    c11, c10, c01, c00 = (float(c) * scale for c in (n11, n10, n01, n00))
    n = c11 + c10 + c01 + c00
    z = _z(level)
    p1, p2 = (c11 + c10) / n, (c11 + c01) / n
    l1, u1 = _wilson(c11 + c10, n, z)
    l2, u2 = _wilson(c11 + c01, n, z)
    margins = (c11 + c10) * (c01 + c00) * (c11 + c01) * (c10 + c00)
    phi = 0.0
    if margins > 0:
        cross = c11 * c00 - c10 * c01
        corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
        phi = corrected / math.sqrt(margins)
    diff = p1 - p2
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    epsilon = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    method = "newcombe" if design_effect <= 1 else "newcombe (design-effect adjusted)"
    return Interval(max(-1.0, diff - delta), min(1.0, diff + epsilon), method)


def design_effect(x_a: _Array, x_b: _Array, clusters: Sequence[Hashable] | np.ndarray | None) -> float | None:
    """Variance of the mean difference with clusters over its variance as if pairs were independent.

    1.0 without clusters; None when the differences do not vary.
    """
    a, b = paired_arrays(x_a, x_b)
    d = a - b
    if clusters is None:
        return 1.0
    n = d.size
    naive = float(d.var(ddof=1)) / n if n > 1 else 0.0
    if naive == 0:
        return None
    return units(d, clusters).standard_error() ** 2 / naive


def t_interval(u: Units, *, level: float = 0.95) -> Interval:
    """The t interval of the mean difference: ``mean ± t(df) * SE``, with the CR2 SE and Bell-McCaffrey df when clustered.

    It is the interval of the mean test, and covers well at small n where a bootstrap
    percentile interval is too narrow (``docs/statistics.md`` has the simulation).
    """
    from scipy.stats import t as student_t

    _check(level)
    method = "cluster t interval" if u.clustered else "paired t interval"
    se = u.standard_error()
    if u.n_units < 2 or se == 0:
        return Interval(None, None, method, NOTE_NO_VARIATION)
    half = float(student_t.ppf(0.5 + level / 2, u.df)) * se
    return Interval(u.estimate - half, u.estimate + half, method)


def hodges_lehmann(x_a: _Array, x_b: _Array, *, level: float = 0.95) -> tuple[float, Interval]:
    """The Hodges-Lehmann estimate of A - B (median of the Walsh averages) and its interval.

    The interval takes the Walsh averages of ranks ``K`` and ``W - K + 1`` (``W = n(n+1)/2``),
    with ``K`` from the normal approximation of the signed-rank distribution.

    Examples
    --------
    >>> hodges_lehmann([3, 4, 5, 9], [1, 1, 1, 1])[0]  # differences 2, 3, 4, 8
    3.75
    """
    _check(level)
    a, b = paired_arrays(x_a, x_b)
    d = a - b
    values, counts = np.unique(d, return_counts=True)
    if values.size > _HL_MAX_DISTINCT:
        return float(np.median(d)), Interval(None, None, "hodges-lehmann", NOTE_HL_TOO_MANY.format(n=_HL_MAX_DISTINCT))
    i, j = np.triu_indices(values.size)
    averages = (values[i] + values[j]) / 2
    weights = np.where(i == j, counts[i] * (counts[i] + 1) / 2, counts[i] * counts[j]).astype(float)
    order = np.argsort(averages, kind="stable")
    averages, cumulative = averages[order], np.cumsum(weights[order])
    total = cumulative[-1]
    n = d.size

    def ranked(rank: float) -> float:
        position = int(np.searchsorted(cumulative, min(max(rank, 1.0), total) - 1e-9))
        return float(averages[min(position, averages.size - 1)])

    estimate = (ranked(math.floor((total + 1) / 2)) + ranked(math.ceil((total + 1) / 2))) / 2
    k = math.floor(n * (n + 1) / 4 - _z(level) * math.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    if k < 1:
        return estimate, Interval(None, None, "hodges-lehmann", f"{n} pairs are too few for a {level:.0%} interval")
    return estimate, _hl_interval(ranked(k), ranked(total - k + 1), values, counts)


def _hl_interval(low: float, high: float, values: np.ndarray, counts: np.ndarray) -> Interval:
    """The Hodges-Lehmann interval ``[low, high]``: none where ties give it no width; a note where zeros hold an end at 0."""
    if values.size == 1:  # every difference the same: no spread, as the t interval says it
        return Interval(None, None, "hodges-lehmann", NOTE_NO_VARIATION)
    n = int(counts.sum())
    zeros = int(counts[values == 0].sum())
    at_zero = zeros > 0 and (low == 0 or high == 0)
    if low == high:
        ties = NOTE_HL_TIES.format(k=int(counts[values == low].sum()), n=n, v=low + 0.0)  # + 0.0: never "-0"
        return Interval(None, None, "hodges-lehmann", f"{ties}; {_PRATT.format(rest=n - zeros)}" if at_zero else ties)
    return Interval(low, high, "hodges-lehmann", NOTE_HL_ZEROS.format(k=zeros, n=n, rest=n - zeros) if at_zero else None)


def difference_interval(
    x_a: _Array,
    x_b: _Array,
    *,
    kind: str,
    test: str | None = None,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    level: float = 0.95,
) -> Interval:
    """The interval of A - B that goes with a measure's kind and test (see the module docstring).

    ``test`` is the paired test the interval goes with (None: the kind's default test,
    :data:`fairtalk.stats.DEFAULT_METHODS`). A rate with the score test (the default) gets the
    score interval, that test's inversion (method ``score``, ``score (design-effect adjusted)``
    with a design effect above 1); a rate with any other test Newcombe's.

    Examples
    --------
    >>> a, b = [0, 0, 0, 0, 1], [1, 1, 1, 1, 1]  # four pairs discordant one way: score p 0.0455
    >>> low, high = difference_interval(a, b, kind="rate").bounds
    >>> round(low, 3), round(high, 3)
    (-0.964, -0.018)
    """
    a, b = paired_arrays(x_a, x_b)
    if test is None:
        test = DEFAULT_METHODS.get(kind, "mean")
    if test.startswith("wilcoxon"):
        return hodges_lehmann(a, b, level=level)[1]
    if kind == "rate" and test == "score":
        _check(level)
        d = a - b
        design = rate_design_effect(d, clusters)
        low, high = score_interval(d, alpha=1.0 - level, clusters=clusters, support=RATE_SUPPORT, design_effect=design)
        return Interval(low, high, "score" if design <= 1 else "score (design-effect adjusted)")
    if kind == "rate":
        return newcombe_interval(a, b, level=level, design_effect=rate_design_effect(a - b, clusters))
    return t_interval(units(a - b, clusters), level=level)
