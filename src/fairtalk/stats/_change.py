"""A change in gap between two models that answered the same pairs: difference in differences, its verdict, non-inferiority.

With the baseline's gap ``g_b = mean(b_a - b_b)`` and the candidate's ``g_c = mean(c_a - c_b)``
over the same pairs, two per-pair contrasts carry every question about them:

- the **change** ``δ− = g_c − g_b`` (difference in differences; per pair
  ``(c_a − c_b) − (b_a − b_b)``), whose two-sided test is the test of no change;
- the **total** ``δ+ = g_c + g_b`` (per pair ``(c_a − c_b) + (b_a − b_b)``).

Since ``|g_c|² − |g_b|² = δ−·δ+``, the candidate's gap is larger in size exactly when the two
have the same sign, and smaller when their signs differ. Each has a ``1 − α`` interval whose
ends are one-sided bounds at ``α/2``, and its two-sided test of 0 is the test that interval
inverts (cluster-robust by dialogue), so ``p < α`` exactly when the interval excludes 0 and a
verdict never stands beside an interval that holds 0:

- **counts**: the t interval (:func:`fairtalk.stats.t_interval`, CR2 and Bell–McCaffrey df) and
  the t test on the same units;
- **rates**: the score interval of :func:`score_interval` and the score test of 0
  (:func:`score_test`). The sign-flip p of the audit's paired mean test was used before, beside
  the score interval: on rare events the two disagreed (7 events of one sign among 300 pairs:
  sign-flip p 0.016, score interval (−0.002, 0.048)). A rate contrast is a mean of rare
  ``0, ±1, ±2`` events; the t bound estimates its standard error from the same few events, so a
  low count gives both a low mean and a narrow bound (the Wald problem of rare proportions):
  non-inferiority at the margin was shown 6.4% of the time at n = 1,000 and 9% in a 0.2%
  base-rate design at n = 300, for α = 5%. The score bound inverts a test whose variance is
  evaluated under the null mean ``μ0`` (the restricted maximum-likelihood distribution of the
  five values with mean ``μ0``), not at the estimate: Tango's score interval for paired
  proportions (Tango 1998, *Stat Med* 17:891; Miettinen and Nurminen 1985), extended to the
  five-point contrast. A studentized bootstrap (bootstrap-t) was tried and ran above α too
  (``bench/compare_null.py``, 0.062–0.065 at n = 300 on the rare keys).
- a contrast with no interval (every unit the same non-zero value, or a single unit) keeps the
  exact sign-flip p of :func:`fairtalk.stats.paired_test`. Where that p is below α the test shows
  the contrast's sign, one-sided at ``α/2`` as each end of an interval: its bound on that side is
  0 (``Contrast.shown_sign``), and non-inferiority reads it like any other bound. So the verdict
  and the gate rest on one test: an *improved* key (both contrasts shown non-zero, opposite signs)
  is non-inferior at any margin, a *regressed* one is not shown non-inferior by these bounds.

- **regressed** / **improved**: both tests reject (``p_magnitude = max(p−, p+) < α``), with the
  same / opposite signs. Under ``|g_c| = |g_b|`` one of ``δ−``, ``δ+`` is 0, so a wrong
  direction needs that test to reject: the rule is level α (an intersection-union test). A
  corrected p is never below the raw one, so either verdict has both intervals excluding 0; an
  interval excluding 0 may still be no verdict (δ+ holds 0, or the family's correction).
- **non-inferior** (``|g_c| < |g_b| + m``) holds iff ``min(δ−, δ+) < m`` and ``max(δ−, δ+) > −m``.
  Each conjunct is shown when either of its two one-sided bounds clears (Bonferroni, ``α/2``
  each): an upper bound of ``δ−`` or ``δ+`` below ``m``, and a lower bound of either above ``−m``.
  Both conjuncts shown is an intersection-union test at level α.
- **unchanged within the margin**: non-inferior both ways (the roles swapped: ``δ− → −δ−``),
  i.e. ``||g_c| − |g_b|| < m``.

A contrast that is exactly 0 on every pair (both runs gave every pair the same gap) has the
bounds ``(0, 0)``: the runs are identical on these pairs, stated as such, never a spread of 0
read as a t interval. Any other contrast without spread has no interval (not shown). Whether such
identical gaps show non-inferiority (and the change within the margin) is then decided by the
audit's identical-answers rule, :func:`fairtalk.stats.share_equivalence`, on the same units (the
dialogues when clustered): an exact binomial bound on the share of units whose gap could differ
unseen must lie below ``margin / range``, where ``range`` is the most one unit can move the
change (2 for a rate, twice the scores' observed range for a count). With fewer units than
that bound needs (:func:`fairtalk.stats.identical_units_needed`: 299 pairs for a rate at the
0.02 margin and α = 0.05), identical gaps show nothing, and ``units_needed`` says how many.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from fairtalk.stats._core import units
from fairtalk.stats._equivalence import identical_units_needed, share_equivalence
from fairtalk.stats._intervals import difference_interval, t_interval
from fairtalk.stats._paired import paired_test
from fairtalk.stats._score import score_interval, score_test

__all__ = ["Contrast", "GapChangeTest", "contrast", "gap_change", "non_inferior", "score_interval", "score_test"]

_RATE_RANGE = 2.0

_MSG_LENGTHS = "the four score arrays must have one value per pair: got {lengths}"
_MSG_TOO_FEW = "need at least 2 pairs to compare the gaps, got {n}"
_MSG_ALPHA = "alpha must be in (0, 1), got {alpha!r}"
NOTE_IDENTICAL = (
    "the same gap on all {counted} in both runs: at most {share}% of {units} could differ ({level:.0%} one-sided exact bound)"
)
NOTE_TOO_FEW = "; too few {units} for that bound to show non-inferiority: identical gaps need {needed:,} {units} ({more:,} more)"
NOTE_NO_SPREAD = "{name}: every pair has the same non-zero value, so it has no interval (a zero spread is not certainty)"
NOTE_SIGN_SHOWN = "; its exact sign-flip test shows it {side} 0 (p {p:.2g}), which bounds it by 0 on that side"


@dataclass(frozen=True, slots=True)
class Contrast:
    """One per-pair contrast of the two runs (``δ−`` or ``δ+``): its mean, two-sided test and ``1 − α`` interval.

    ``ci`` is the interval at level ``1 − α`` named by ``interval`` (``"t"`` for counts,
    ``"score"`` for rates; cluster-robust with clusters): each end is a one-sided bound at ``α/2``. ``identical`` says the contrast is 0 on every pair: then ``ci``
    is ``(0.0, 0.0)`` and the test's p is 1. ``ci`` is ``(None, None)`` when the values have no
    spread otherwise; ``shown_sign`` is then the sign (+1, −1) its exact sign-flip test shows at
    ``α`` (two-sided, so ``α/2`` one-sided, as each end of an interval), 0 when it shows none:
    such a contrast is bounded by 0 on that side (:attr:`low`, :attr:`high`), the one conclusion
    of the test its verdict reads, and no more (a zero spread is not certainty about its size).
    """

    estimate: float
    ci: tuple[float | None, float | None]
    p: float | None
    test: str
    identical: bool = False
    interval: str = "t"
    shown_sign: int = 0

    @property
    def low(self) -> float | None:
        """The one-sided lower bound at ``α/2`` (None: none); 0 for a contrast without an interval shown positive."""
        if self.ci[0] is None and self.shown_sign > 0:
            return 0.0
        return self.ci[0]

    @property
    def high(self) -> float | None:
        """The one-sided upper bound at ``α/2`` (None: none); 0 for a contrast without an interval shown negative."""
        if self.ci[1] is None and self.shown_sign < 0:
            return 0.0
        return self.ci[1]

    def negated(self) -> Contrast:
        """The contrast of the opposite sign (the roles of the two runs swapped)."""
        low, high = self.ci
        return Contrast(
            -self.estimate,
            (None if high is None else -high, None if low is None else -low),
            self.p,
            self.test,
            self.identical,
            self.interval,
            -self.shown_sign,
        )


@dataclass(frozen=True, slots=True)
class GapChangeTest:
    """The change in gap of one result key between a baseline and a candidate (see the module docstring).

    ``baseline_gap``/``candidate_gap`` are each run's mean ``A − B`` with its interval (the audit's
    interval for the kind, at level ``1 − α``); ``change`` is ``δ− = g_c − g_b`` and ``total``
    ``δ+ = g_c + g_b``. ``p_magnitude`` is ``max(p−, p+)``, the p of "the size of the gap
    changed" (corrected over a family by the caller); ``direction`` is ``"larger"``/``"smaller"``
    (the candidate's |gap| by the signs of ``δ−`` and ``δ+``) or ``"same"``. ``non_inferior``: shown
    ``|g_c| < |g_b| + margin``; ``within_margin``: shown ``||g_c| − |g_b|| < margin`` (None: no
    margin). ``identical``: every pair has the same gap in both runs; ``units_needed``: then, when
    these units are too few for the exact bound to show non-inferiority, how many it needs.
    """

    n_pairs: int
    n_units: int
    baseline_gap: float
    baseline_ci: tuple[float | None, float | None]
    candidate_gap: float
    candidate_ci: tuple[float | None, float | None]
    change: Contrast
    total: Contrast
    p_magnitude: float | None
    direction: str
    margin: float | None
    non_inferior: bool | None
    within_margin: bool | None
    identical: bool
    notes: tuple[str, ...] = ()
    units_needed: int | None = None


def contrast(
    x: np.ndarray, y: np.ndarray, *, clusters: Sequence[Hashable] | np.ndarray | None, alpha: float, kind: str = "count"
) -> Contrast:
    """The contrast ``mean(x − y)`` of per-pair values: its ``1 − α`` interval and the two-sided test that interval inverts.

    ``kind="rate"``: the score interval (:func:`score_interval`) and the score test of 0
    (:func:`score_test`; test ``score``, ``cluster_score`` with clusters); ``kind="count"`` (or a
    rate whose values are not 0/1): the t interval and the t test of 0 on the same units (CR2 and
    Bell–McCaffrey df with clusters; ``paired_t``, ``cluster_t``). So ``p < α`` exactly when the
    interval excludes 0. A contrast with no interval (every unit the same non-zero value, or one
    unit) keeps the paired mean test's exact sign-flip p (``2^(1−m)`` for ``m`` units), and where
    that p is below ``alpha`` the sign it shows (``shown_sign``: a one-sided bound of 0 at ``α/2``,
    what a verdict resting on that p concludes); one that is 0 on every pair has p 1 (test
    ``identical``).

    Examples
    --------
    >>> c = contrast(np.array([1.0, 0.0, 1.0, 2.0]), np.zeros(4), clusters=None, alpha=0.05)
    >>> c.estimate, c.test, round(c.p, 3)
    (1.0, 'paired_t', 0.092)
    >>> contrast(np.ones(3), np.ones(3), clusters=None, alpha=0.05).ci
    (0.0, 0.0)
    >>> same = contrast(np.ones(20), np.zeros(20), clusters=None, alpha=0.05)  # +1 on every pair: no interval
    >>> same.ci, same.test, same.shown_sign, same.low, same.high
    ((None, None), 'signflip_exact', 1, 0.0, None)
    """
    from scipy.stats import t as student_t

    d = x - y
    if not np.any(d != 0):
        return Contrast(0.0, (0.0, 0.0), 1.0, "identical", identical=True, interval="identical")
    if kind == "rate" and (p := score_test(d, clusters=clusters)) is not None:
        name = "cluster_score" if clusters is not None else "score"
        return Contrast(float(d.mean()), score_interval(d, alpha=alpha, clusters=clusters), p, name, interval="score")
    u = units(d, clusters)
    interval = t_interval(u, level=1.0 - alpha)
    if interval.bounds == (None, None):  # no spread: no t, the exact sign-flip p of the paired mean test
        test = paired_test(x, y, kind="count", method="mean", clusters=clusters)
        shown = int(np.sign(d.mean())) if test.p is not None and test.p < alpha else 0
        return Contrast(float(d.mean()), interval.bounds, test.p, test.name, shown_sign=shown)
    p_t = float(2.0 * student_t.sf(abs(u.estimate / u.standard_error()), u.df))
    return Contrast(float(d.mean()), interval.bounds, p_t, "cluster_t" if u.clustered else "paired_t")


def _below(value: float | None, bound: float) -> bool:
    return value is not None and value < bound


def _above(value: float | None, bound: float) -> bool:
    return value is not None and value > bound


def non_inferior(change: Contrast, total: Contrast, margin: float) -> bool:
    """Whether ``|g_c| < |g_b| + margin`` is shown: ``min(δ−, δ+) < m`` and ``max(δ−, δ+) > −m``, each by either bound.

    Examples
    --------
    >>> zero = Contrast(0.0, (-0.01, 0.01), 1.0, "paired_t")
    >>> non_inferior(zero, zero, 0.02), non_inferior(zero, zero, 0.005)
    (True, False)
    """
    below = _below(change.high, margin) or _below(total.high, margin)
    above = _above(change.low, -margin) or _above(total.low, -margin)
    return below and above


def _direction(change: Contrast, total: Contrast) -> str:
    product = change.estimate * total.estimate
    return "larger" if product > 0 else "smaller" if product < 0 else "same"


def _max_change(kind: str, arrays: Sequence[np.ndarray]) -> float | None:
    """The most one pair can move the change in gap: 2 for a rate, twice the scores' range for a count (None: no range)."""
    if kind == "rate":
        return _RATE_RANGE
    scores = np.concatenate(arrays)
    spread = float(scores.max() - scores.min()) if scores.size else 0.0
    return 2 * spread if spread > 0 and math.isfinite(spread) else None


def _identical(
    n: int, n_units: int, *, clustered: bool, margin: float | None, max_change: float | None, alpha: float
) -> tuple[bool, str, int | None]:
    """Identical gaps: non-inferior by the audit's identical-answers bound? Its note, and the units it needs when too few.

    ``p = (1 - s)^n_units`` for the share ``s = margin / max_change`` (:func:`share_equivalence`).
    """
    unit = "dialogues" if clustered else "pairs"
    shown = share_equivalence(n_units, alpha=alpha, margin=margin, max_difference=max_change, units=unit)
    share = f"{100 * (1.0 - alpha ** (1.0 / n_units)):.3g}"  # 0 of n_units seen: the exact bound 1 − α^(1/n)
    counted = f"{n_units:,} {unit}" + (f" ({n:,} pairs)" if clustered else "")  # the unit of the bound, as the gate says
    note = NOTE_IDENTICAL.format(counted=counted, share=share, units=unit, level=1 - alpha)
    if shown.equivalent:
        return True, note, None
    needed = identical_units_needed(alpha=alpha, margin=margin, max_difference=max_change)
    return False, note + NOTE_TOO_FEW.format(units=unit, needed=needed, more=needed - n_units), needed


def gap_change(
    baseline_a: np.ndarray,
    baseline_b: np.ndarray,
    candidate_a: np.ndarray,
    candidate_b: np.ndarray,
    *,
    kind: str,
    margin: float | None,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    alpha: float = 0.05,
) -> GapChangeTest:
    """Test the change in one key's gap between two runs over the same pairs (``x[i]`` answers pair ``i`` in every array).

    Parameters
    ----------
    baseline_a, baseline_b, candidate_a, candidate_b : numpy.ndarray
        Per-pair scores of each run's side A and side B, aligned by pair.
    kind : {"rate", "count"}
        The measure's kind: it picks the interval of each run's own gap (Newcombe for rates) and
        of the two contrasts (the score interval for rates, t for counts).
    margin : float or None
        The non-inferiority margin in the key's units (None: non-inferiority is not tested).
    clusters : sequence, optional
        One cluster id per pair (its dialogue): clusters are then the units of every test and interval.
    alpha : float
        Level of the tests; the intervals are ``1 − α``.

    Returns
    -------
    GapChangeTest

    Raises
    ------
    ValueError
        Arrays of different lengths, fewer than 2 pairs, or ``alpha`` outside (0, 1).

    Examples
    --------
    >>> base_a, base_b = np.r_[np.ones(30), np.zeros(170)], np.zeros(200)  # a 15-point gap
    >>> cand = np.zeros(200)
    >>> t = gap_change(base_a, base_b, cand, cand, kind="rate", margin=0.02)
    >>> t.direction, t.p_magnitude < 0.05, t.non_inferior
    ('smaller', True, True)
    """
    arrays = [np.asarray(x, dtype=float).ravel() for x in (baseline_a, baseline_b, candidate_a, candidate_b)]
    if len({x.size for x in arrays}) != 1:
        raise ValueError(_MSG_LENGTHS.format(lengths=[x.size for x in arrays]))
    if not 0 < alpha < 1:
        raise ValueError(_MSG_ALPHA.format(alpha=alpha))
    b_a, b_b, c_a, c_b = arrays
    n = b_a.size
    if n < 2:
        raise ValueError(_MSG_TOO_FEW.format(n=n))
    gap_b, gap_c = b_a - b_b, c_a - c_b
    change = contrast(gap_c, gap_b, clusters=clusters, alpha=alpha, kind=kind)
    total = contrast(gap_c, -gap_b, clusters=clusters, alpha=alpha, kind=kind)
    level = 1.0 - alpha
    base_ci = difference_interval(b_a, b_b, kind=kind, clusters=clusters, level=level).bounds
    cand_ci = difference_interval(c_a, c_b, kind=kind, clusters=clusters, level=level).bounds
    p_magnitude = None if change.p is None or total.p is None else max(change.p, total.p)
    if margin is not None and not (margin > 0 and math.isfinite(margin)):
        raise ValueError(f"a non-inferiority margin must be a finite number > 0, got {margin!r}")
    n_units = units(gap_c - gap_b, clusters).n_units
    notes = []
    ni = within = None
    needed = None
    if change.identical:  # no spread: the audit's identical-answers bound on these units decides
        ni, note, needed = _identical(
            n, n_units, clustered=clusters is not None, margin=margin, max_change=_max_change(kind, arrays), alpha=alpha
        )
        within = ni
        notes.append(note)
    elif margin is not None:
        ni = non_inferior(change, total, margin)
        within = ni and non_inferior(change.negated(), total, margin)
    for name, c in (("change", change), ("total", total)):
        if not c.identical and c.ci == (None, None):
            shown = "" if not c.shown_sign else NOTE_SIGN_SHOWN.format(side="above" if c.shown_sign > 0 else "below", p=c.p)
            notes.append(NOTE_NO_SPREAD.format(name=name) + shown)
    return GapChangeTest(
        n_pairs=n,
        n_units=n_units,
        baseline_gap=float(gap_b.mean()),
        baseline_ci=base_ci,
        candidate_gap=float(gap_c.mean()),
        candidate_ci=cand_ci,
        change=change,
        total=total,
        p_magnitude=p_magnitude,
        direction=_direction(change, total),
        margin=margin,
        non_inferior=ni,
        within_margin=within,
        identical=change.identical,
        notes=tuple(notes),
        units_needed=needed,
    )
