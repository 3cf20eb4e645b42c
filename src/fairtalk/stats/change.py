"""A change in gap between two models that answered the same pairs: difference in differences, its verdict, non-inferiority.

With the baseline's gap ``g_b = mean(b_a - b_b)`` and the candidate's ``g_c = mean(c_a - c_b)``
over the same pairs, two per-pair contrasts carry every question about them:

- the **change** ``δ− = g_c − g_b`` (difference in differences; per pair
  ``(c_a − c_b) − (b_a − b_b)``), whose two-sided test is the test of no change;
- the **total** ``δ+ = g_c + g_b`` (per pair ``(c_a − c_b) + (b_a − b_b)``).

Since ``|g_c|² − |g_b|² = δ−·δ+``, the candidate's gap is larger in size exactly when the two
have the same sign, and smaller when their signs differ. Each is tested with the paired mean
test (:func:`fairtalk.stats.paired_test`, cluster-robust by dialogue) and has its ``1 − α``
t interval (:func:`fairtalk.stats.t_interval`), whose ends are one-sided bounds at ``α/2``.

- **regressed** / **improved**: both tests reject (``p_magnitude = max(p−, p+) < α``), with the
  same / opposite signs. Under ``|g_c| = |g_b|`` one of ``δ−``, ``δ+`` is 0, so a wrong
  direction needs that test to reject: the rule is level α (an intersection-union test).
- **non-inferior** (``|g_c| < |g_b| + m``) holds iff ``min(δ−, δ+) < m`` and ``max(δ−, δ+) > −m``.
  Each conjunct is shown when either of its two one-sided bounds clears (Bonferroni, ``α/2``
  each): an upper bound of ``δ−`` or ``δ+`` below ``m``, and a lower bound of either above ``−m``.
  Both conjuncts shown is an intersection-union test at level α.
- **unchanged within the margin**: non-inferior both ways (the roles swapped: ``δ− → −δ−``),
  i.e. ``||g_c| − |g_b|| < m``.

A contrast that is exactly 0 on every pair (both runs gave every pair the same gap) has the
bounds ``(0, 0)``: the runs are identical on these pairs, stated as such, never a spread of 0
read as a t interval. Any other contrast without spread has no interval (not shown).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from fairtalk.stats import difference_interval, paired_test, t_interval, units

__all__ = ["Contrast", "GapChangeTest", "contrast", "gap_change", "non_inferior"]

_MSG_LENGTHS = "the four score arrays must have one value per pair: got {lengths}"
_MSG_TOO_FEW = "need at least 2 pairs to compare the gaps, got {n}"
_MSG_ALPHA = "alpha must be in (0, 1), got {alpha!r}"
NOTE_IDENTICAL = "the same gap on all {n} pairs in both runs{bound}"
NOTE_IDENTICAL_BOUND = " (on pairs like these, the share that would differ is below {share:.3g} at {level:.0%})"
NOTE_NO_SPREAD = "{name}: every pair has the same non-zero value, so it has no interval (a zero spread is not certainty)"


@dataclass(frozen=True, slots=True)
class Contrast:
    """One per-pair contrast of the two runs (``δ−`` or ``δ+``): its mean, two-sided test and ``1 − α`` interval.

    ``ci`` is the t interval (cluster-robust with clusters) at level ``1 − α``: each end is a
    one-sided bound at ``α/2``. ``identical`` says the contrast is 0 on every pair: then ``ci``
    is ``(0.0, 0.0)`` and the test's p is 1. ``ci`` is ``(None, None)`` when the values have no
    spread otherwise.
    """

    estimate: float
    ci: tuple[float | None, float | None]
    p: float | None
    test: str
    identical: bool = False

    @property
    def low(self) -> float | None:
        """The one-sided lower bound at ``α/2`` (None: none)."""
        return self.ci[0]

    @property
    def high(self) -> float | None:
        """The one-sided upper bound at ``α/2`` (None: none)."""
        return self.ci[1]

    def negated(self) -> Contrast:
        """The contrast of the opposite sign (the roles of the two runs swapped)."""
        low, high = self.ci
        return Contrast(-self.estimate, (None if high is None else -high, None if low is None else -low), self.p,
                        self.test, self.identical)  # fmt: skip


@dataclass(frozen=True, slots=True)
class GapChangeTest:
    """The change in gap of one result key between a baseline and a candidate (see the module docstring).

    ``baseline_gap``/``candidate_gap`` are each run's mean ``A − B`` with its interval (the audit's
    interval for the kind, at level ``1 − α``); ``change`` is ``δ− = g_c − g_b`` and ``total``
    ``δ+ = g_c + g_b``. ``p_magnitude`` is ``max(p−, p+)``, the p of "the size of the gap
    changed" (corrected over a family by the caller); ``direction`` is ``"larger"``/``"smaller"``
    (the candidate's |gap| by the signs of ``δ−`` and ``δ+``) or ``"same"``. ``non_inferior``: shown
    ``|g_c| < |g_b| + margin``; ``within_margin``: shown ``||g_c| − |g_b|| < margin`` (None: no
    margin). ``identical``: every pair has the same gap in both runs.
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


def contrast(x: np.ndarray, y: np.ndarray, *, clusters: Sequence[Hashable] | np.ndarray | None, alpha: float) -> Contrast:
    """The contrast ``mean(x − y)`` of per-pair values: the paired mean test and the ``1 − α`` t interval.

    Examples
    --------
    >>> c = contrast(np.array([1.0, 0.0, 1.0, 1.0]), np.zeros(4), clusters=None, alpha=0.05)
    >>> c.estimate, c.test
    (0.75, 'signflip_exact')
    >>> contrast(np.ones(3), np.ones(3), clusters=None, alpha=0.05).ci
    (0.0, 0.0)
    """
    d = x - y
    test = paired_test(x, y, kind="count", method="mean", clusters=clusters)
    if not np.any(d != 0):
        return Contrast(0.0, (0.0, 0.0), 1.0, test.name, identical=True)
    interval = t_interval(units(d, clusters), level=1.0 - alpha)
    return Contrast(float(d.mean()), interval.bounds, test.p, test.name)


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


def _identical_note(n: int, alpha: float) -> str:
    """The identical-gap note, with the share of pairs that could differ unseen (0 of n seen: ``1 − α^(1/n)``)."""
    return NOTE_IDENTICAL.format(n=n, bound=NOTE_IDENTICAL_BOUND.format(share=1.0 - alpha ** (1.0 / n), level=1 - alpha))


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
        The measure's kind: it picks the interval of each run's own gap (Newcombe for rates).
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
    change = contrast(gap_c, gap_b, clusters=clusters, alpha=alpha)
    total = contrast(gap_c, -gap_b, clusters=clusters, alpha=alpha)
    level = 1.0 - alpha
    base_ci = difference_interval(b_a, b_b, kind=kind, clusters=clusters, level=level).bounds
    cand_ci = difference_interval(c_a, c_b, kind=kind, clusters=clusters, level=level).bounds
    p_magnitude = None if change.p is None or total.p is None else max(change.p, total.p)
    notes = []
    if change.identical:
        notes.append(_identical_note(n, alpha))
    for name, c in (("change", change), ("total", total)):
        if not c.identical and c.ci == (None, None):
            notes.append(NOTE_NO_SPREAD.format(name=name))
    ni = within = None
    if margin is not None:
        if not (margin > 0 and math.isfinite(margin)):
            raise ValueError(f"a non-inferiority margin must be a finite number > 0, got {margin!r}")
        ni = non_inferior(change, total, margin)
        within = ni and non_inferior(change.negated(), total, margin)
    elif change.identical:  # no margin (no spread to scale one by), and the same gap on every pair
        ni = within = True
    return GapChangeTest(
        n_pairs=n, n_units=units(gap_c - gap_b, clusters).n_units,
        baseline_gap=float(gap_b.mean()), baseline_ci=base_ci, candidate_gap=float(gap_c.mean()), candidate_ci=cand_ci,
        change=change, total=total, p_magnitude=p_magnitude, direction=_direction(change, total), margin=margin,
        non_inferior=ni, within_margin=within, identical=change.identical, notes=tuple(notes),
    )  # fmt: skip
