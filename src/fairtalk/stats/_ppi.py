"""Prediction-powered inference: a scorer's gap corrected by a few hundred human labels, with an interval that holds whatever the scorer's error.

A scorer (an offense classifier, a regard model, a judge) scores every item; a person labels a
random subset. The scorer's mean alone is biased by its error, and that error may differ by
group, which is exactly what would fake or hide a gap. Prediction-powered inference
(Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, *Science* 382, 2023) estimates the mean of
the human label as the scorer's mean over all items plus the scorer's mean error measured on the
labelled ones (the *rectifier*); PPI++ (Angelopoulos, Duchi and Zrnic, 2023) weighs the scorer
by ``λ`` chosen to minimise the variance (``λ = 0`` is the labels alone), and gains the most when the
scorer is good::

    θ̂ = λ · mean_unlabelled(f) + mean_labelled(y − λ f)
    Var(θ̂) = λ² Var(f) / N + Var(y − λ f) / n

For a paired gap, ``f`` and ``y`` are per-pair differences (side a − side b): the pair is the
unit, so both sides of a labelled pair must be labelled. With clusters (the dialogue a pair came
from), each term's variance is that of cluster totals (the labelled subset must then be drawn
by whole clusters or uniformly over pairs; either keeps the estimate unbiased).

The labelled items must be a uniform random sample of the items (``fairtalk label`` draws one);
a sample chosen by the scorer's output would bias the rectifier.

**When the scorer's error is rare.** The rectifier's variance is estimated from the labelled
items on which label and scorer disagree. With few of them (a scorer wrong on 1% of one group's
answers gives about one disagreement in 100 labels) that estimate is near 0, and a plain PPI++
interval shrinks to the scorer's own width around the scorer's biased gap: it covered the true
gap only 73% of the time at 50 labels (``bench/ppi.py``, scenario ``rare``). So the rule is:
**with fewer than** :data:`MIN_DISAGREEMENTS` **labelled units (items, or clusters) that disagree
with the scorer, the estimate is the labels' alone** (``lam = 0``), with the labels-only interval
below; ``method`` says so and ``effective_labels`` is NaN (no "worth N labels" figure the labels
cannot support). An earlier rule kept PPI++ and floored the rectifier's variance at the exact
(Clopper-Pearson) bound on the disagreement share: it over-covered, 0.99-1.00 where 0.95 was
asked. With :data:`MIN_DISAGREEMENTS` or more, it is PPI++ with a t interval on ``n - 1`` degrees
of freedom (``n`` labelled units), not a normal one.

**Never more than the labels alone give.** PPI++'s ``λ`` minimises an estimated variance, but its
t interval and the labels-only interval below are built differently (a score interval on -1, 0, 1
is not a t interval), so with few labels PPI++'s can come out wider than the labels' own (20
labelled pairs, 14 disagreeing: 0.478 against 0.442). So the one rule: **the interval shown is
never wider than the labels-only interval shown beside it, and "worth N labels" never claims
more than the labels give.** Two checks, each making the estimate the labels' alone as under
the rule above (``lam`` 0, ``ci95`` is ``labels_ci95``, ``effective_labels`` NaN, ``method``
"labels only (PPI++'s interval was no narrower…", saying which and by how much):

- PPI++'s interval is not narrower than ``labels_ci95``, as shown: "no narrower: W wide against
  the labels' L";
- PPI++'s t interval is not narrower, by at least one label's worth, than **the labels' own t
  interval on the same labelled units** (the standard error of their mean, by cluster totals with
  clusters, on the same t quantile; the exact bound's where they do not vary): "no narrower by
  one label than the labels' t interval on the same units: weight λ on the scorer, W wide against
  L, worth N of n labels". This is like against like: the scorer given weight 0 gives exactly the
  labels' t interval, worth exactly ``n``, so a scorer PPI++ gives (about) no weight never counts.
  Comparing PPI++'s t interval with the labels' *score* interval instead measured the t-versus-score
  difference, not the scorer: a constant scorer (``λ`` 0, 80 labelled pairs in 44 dialogues) was
  "worth 85 labels". With ``λ`` 0 this check comes first: "no narrower: weight 0 on the scorer, so
  its estimate and t interval are the labels' own, worth their n labels".

Else ``effective_labels`` is ``n * (se_labels / se)^2``, ``se_labels`` and ``se`` the standard
errors of the labels' t interval and of PPI++'s (the ratio of the two t intervals' widths): the
labels a labels-only t interval as narrow as PPI++'s would need (its width taken as falling with
the square root of the labels), at least ``n + 1``, so the figure printed is always above the
labels given.

**The labels-only interval** (``labels_ci95``, and the estimate's own under the rule above):
labels that are whole numbers from ``-s`` to ``s`` with ``s`` at most 2 (``s`` the largest size
among the scores and labels, at least 1: a rate's per-pair differences -1, 0, 1, a sentiment's
-2 to 2) get the score interval of their mean on those values
(:func:`fairtalk.stats.score_interval`, Tango's for paired proportions; counts over the design
effect with clusters) and the score test of 0 it inverts, which holds where events are rare; a
Wald or t interval does not (0.93 at 50 labels and 3% rates; 0.91 at 200 labels and discordant
shares of 0.5% and 1%). Other labels get the t interval on the labelled units (cluster totals with
clusters), or, when they do not vary, the exact bound on the share that could differ. **Over few
units** (at most :data:`EXACT_UNITS` labelled items, or dialogues with clusters) those asymptotic
intervals claim more than the units allow (5 agreeing pairs: score p 0.025 where the exact test's
is 0.0625; the pairs of one dialogue: an interval that leaves out 0), so there the interval is
never narrower, nor its p smaller, than the exact sign-flip test's over the units (the hull of the
two; :data:`INTERVAL_EXACT` says so): one unit, or up to five, cannot leave out 0.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from fairtalk.stats._score import score_interval, score_test

__all__ = ["MIN_DISAGREEMENTS", "PPIEstimate", "labels_needed", "ppi_mean"]

MIN_DISAGREEMENTS = 10
"""Fewer labelled units than this on which label and scorer disagree cannot estimate the scorer's error: the
estimate is then the labels' alone, and no "worth N labels" figure is given."""
#: ``method`` of an estimate whose labels estimate the scorer's error.
METHOD_PPI = "PPI++ (t interval)"
#: ``method`` of one whose labels hold too few disagreements: the labels alone, with their interval.
METHOD_LABELS_ONLY = (
    "labels only ({k} {disagreements} < {minimum}: {k} of {n} labelled units disagree with the scorer, too few to "
    "estimate its error), {interval}"
)
#: ``method`` of one whose PPI++ interval was no narrower than the labels-only one: the labels alone, with theirs.
METHOD_NO_NARROWER = (
    "labels only (PPI++'s interval was no narrower: {ppi:.4g} wide against the labels' {labels:.4g}; {k} of {n} "
    "labelled units disagree with the scorer), {interval}"
)
#: ``method`` of one whose PPI++ t interval was not narrower, by one label's worth, than the labels' own t interval on
#: the same units (the scorer got (about) no weight, or too little to buy a label): the labels alone, with theirs.
METHOD_NO_GAIN = (
    "labels only (PPI++'s interval was no narrower by one label than the labels' t interval on the same units: weight "
    "{lam:.3g} on the scorer, {ppi:.4g} wide against {labels:.4g}, worth {worth:.4g} of {n_labels} labels; {k} of {n} "
    "labelled units disagree with the scorer), {interval}"
)
#: ``method`` of one whose PPI++ weight on the scorer was 0: its estimate and t interval are the labels' own, worth
#: exactly their number (no figure): the labels alone, with their interval.
METHOD_NO_WEIGHT = (
    "labels only (PPI++'s interval was no narrower: weight 0 on the scorer, so its estimate and t interval are the "
    "labels' own, worth their {n_labels} labels; {k} of {n} labelled units disagree with the scorer), {interval}"
)
#: How :data:`METHOD_NO_NARROWER`, :data:`METHOD_NO_GAIN` and :data:`METHOD_NO_WEIGHT` (and ``prompts analyze --gold``'s like them) begin.
NO_NARROWER = "labels only (PPI++'s interval was no narrower"
#: The labels-only intervals: on whole-number labels from -2 to 2 at most, and on any others.
INTERVAL_SCORE = "score interval"
INTERVAL_T = "t interval"
#: The labels-only interval where its units are few: the exact sign-flip one over them, the score or t one being narrower.
INTERVAL_EXACT = "exact sign-flip interval over {n} {units} (the {interval} claimed more than its {n} {units} can show)"
#: Where the labelled units are no more than this, the labels-only interval and p are never narrower (smaller) than
#: the exact sign-flip test's over them: with few units the score and t intervals' asymptotics claim too much
#: (5 agreeing pairs: score p 0.025, exact 0.0625; one dialogue: an interval that leaves out 0).
EXACT_UNITS = 16
_MAX_SCORE_SIZE = 2

_MSG_SHAPES = "scores and labels must have one value per item, got {n_f} scores and {n_y} labels"
_MSG_FEW = "prediction-powered inference needs at least 2 labelled items, got {n}"
_MSG_FINITE = "scores must be finite numbers, and labels finite or NaN (no label)"


@dataclass(frozen=True, slots=True)
class PPIEstimate:
    """The corrected mean (or paired gap) of the human label, with its interval and what the labels bought.

    ``estimate`` is the prediction-powered estimate with ``ci95`` and the two-sided ``p`` of
    "the mean is 0"; ``scorer_estimate`` the scorer's mean alone; ``labels_estimate`` and
    ``labels_ci95`` the labels alone. ``lam`` is the PPI++ weight on the scorer (0: the scorer
    did not help; 1: classic PPI). ``effective_labels`` is how many labels alone would give a t
    interval as narrow as PPI++'s ``ci95`` (``n_labels * (se_labels / se)^2``, ``se_labels`` the
    standard error of the labels' own t interval on the same units: at least ``n_labels + 1``);
    NaN when the estimate is the labels' alone: fewer than :data:`MIN_DISAGREEMENTS` labelled
    units disagree with the scorer, or PPI++'s interval was no narrower than ``labels_ci95``, or
    not narrower by one label's worth than the labels' t interval (``lam`` 0, ``ci95`` is
    ``labels_ci95``, ``se`` its half-width over ``z_{1-α/2}``; :attr:`labels_alone`).
    ``n_disagreements`` is that number (None where it was not counted); ``method`` says how the
    interval was made.
    ``se_labelled`` and ``se_scorer`` split ``se``: the labelled pairs' term (the rectifier's,
    which more labels shrink) and the scorer-on-every-pair term (which they do not), with
    ``se² = se_labelled² + se_scorer²``.
    """

    estimate: float
    ci95: tuple[float, float]
    p: float
    se: float
    n_labels: int
    n_items: int
    lam: float
    scorer_estimate: float
    labels_estimate: float
    labels_ci95: tuple[float, float]
    effective_labels: float
    n_disagreements: int | None = None
    method: str = METHOD_PPI
    se_labelled: float | None = None
    se_scorer: float | None = None

    @staticmethod
    def labels_worth(n_labels: int, labels_se: float, se: float) -> float:
        """The labels alone whose interval would have standard error ``se``, when ``n_labels`` give ``labels_se``.

        ``n_labels * (labels_se / se)^2``: the interval's width taken as falling with the square root of
        the labels. Compare like with like (two t intervals on the same units). NaN where ``se`` is not
        a positive number.
        """
        return float(n_labels * (labels_se / se) ** 2) if se > 0 and math.isfinite(se) else math.nan

    @staticmethod
    def shown_worth(n_labels: int, worth: float) -> float:
        """The ``effective_labels`` figure for ``worth`` labels' worth: ``worth`` when at least ``n_labels + 1``, else NaN.

        "Worth N labels" never claims what the labels cannot support: a scorer that buys less than one
        label (weight 0 on it, or nearly) gets no figure, and its estimate is the labels' alone.
        """
        return worth if worth >= n_labels + 1 else math.nan

    @property
    def too_few_disagreements(self) -> bool:
        """Whether the labels hold too few disagreements with the scorer to estimate its error."""
        return self.n_disagreements is not None and self.n_disagreements < MIN_DISAGREEMENTS

    @property
    def no_narrower(self) -> bool:
        """Whether PPI++'s interval was no narrower than the labels' alone (as shown, or by one label than their t interval).

        The estimate is then theirs; ``method`` says which and by how much.
        """
        return self.method.startswith(NO_NARROWER)

    @property
    def labels_alone(self) -> bool:
        """Whether the estimate is the labels' alone by either rule (too few disagreements, or PPI++ no narrower)."""
        return self.too_few_disagreements or self.no_narrower


def _totals(values: np.ndarray, clusters: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Per-unit values: the items themselves, or each cluster's sum (with the number of units)."""
    if clusters is None:
        return values, values.size
    _, inverse = np.unique(clusters, return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    return sums, sums.size


def _variance_of_mean(values: np.ndarray, clusters: np.ndarray | None) -> float:
    """The variance of ``values.mean()``: ``s² / n`` over items, or the cluster-total (CR0-type) variance with clusters."""
    n = values.size
    if n < 2:
        return float("inf")
    if clusters is None:
        return float(values.var(ddof=1) / n)
    centred = values - values.mean()
    totals, g = _totals(centred, clusters)
    if g < 2:
        return float("inf")
    return float((g / (g - 1)) * np.sum(totals**2) / n**2)


def _no_spread_variance(n: int, scale: float, alpha: float, z: float) -> float:
    """The variance of a mean whose ``n`` items all agreed: that of the exact bound on the share that could differ.

    With no item differing in ``n``, the share of items that could differ is below
    ``1 - (α/2)^(1/n)`` (the "rule of three"); an item differs by at most ``scale``. The bound
    becomes a standard error whose ``z`` interval is exactly that wide.
    """
    share = 1 - (alpha / 2) ** (1 / n)
    return float((scale * share / z) ** 2)


def _disagreements(disagree: np.ndarray, clusters: np.ndarray | None) -> tuple[int, int]:
    """``(k, n)``: ``k`` of the ``n`` labelled units (items, or clusters) hold a disagreement of label and scorer."""
    if clusters is None:
        return int(np.count_nonzero(disagree)), int(disagree.size)
    _, inverse = np.unique(clusters, return_inverse=True)
    per_cluster = np.bincount(inverse, weights=disagree.astype(float))
    return int(np.count_nonzero(per_cluster)), int(per_cluster.size)


@dataclass(frozen=True, slots=True)
class _LabelsOnly:
    """The labels alone: their mean, ``1 - α`` interval, p of "the mean is 0", standard error, interval's name and count.

    ``t_se`` is their t interval's standard error on the labelled units (the exact bound's where they do not vary),
    whichever interval is shown: what PPI++'s t interval is compared with for ``effective_labels``.
    """

    mean: float
    ci: tuple[float, float]
    p: float
    se: float
    interval: str
    n: int
    t_se: float


def _score_support(y: np.ndarray, scale: float) -> tuple[float, ...] | None:
    """The values ``-s..s`` of whole-number labels (``s = ceil(scale)`` at most 2), for the score interval; None: not such labels."""
    size = math.ceil(scale)
    if size > _MAX_SCORE_SIZE or not np.array_equal(y, np.round(y)):
        return None
    return tuple(float(v) for v in range(-size, size + 1))


def _sign_flip_p(flipped: tuple[np.ndarray, np.ndarray], mu0: float) -> float:
    """The exact two-sided p of "the mean is ``mu0``": the share of the units' sign flips whose |sum| reaches the observed one.

    ``flipped`` holds, per sign flip, the flipped sum of the unit totals and of their sizes (the first
    flip is the identity), so a unit's total less ``mu0`` times its size sums to ``totals - mu0 * sizes``.
    """
    totals, sizes = flipped
    sums = np.abs(totals - mu0 * sizes)
    observed = float(sums[0])
    return float(np.mean(sums >= observed - 1e-9 * max(1.0, observed)))


def _sign_flip_interval(
    y: np.ndarray, clusters: np.ndarray | None, scale: float, alpha: float
) -> tuple[tuple[float, float], float]:
    """The exact sign-flip ``1 - α`` interval of the labels' mean over their units (items, or cluster totals), and p of 0.

    Each unit's total less ``μ0`` times its items is as likely positive as negative under "the mean
    is ``μ0``" (the sides of a counterfactual pair are exchangeable under no gap), so the share of
    the ``2^G`` sign flips of the ``G`` units whose sum is as far from 0 is an exact p; the interval
    holds each ``μ0`` it does not reject (``p > α``), found by bisection from the mean to ``±scale``.
    With one unit, or too few for any flip to reach ``α`` (five: ``2/2^5 = 0.0625``), it is the whole range.
    """
    if clusters is None:
        totals, sizes = y, np.ones_like(y)
    else:
        _, inverse = np.unique(clusters, return_inverse=True)
        totals, sizes = np.bincount(inverse, weights=y), np.bincount(inverse).astype(np.float64)
    g = totals.size
    signs = 1.0 - 2.0 * ((np.arange(2**g)[:, None] >> np.arange(g)) & 1)  # row 0: no unit flipped
    flipped = (signs @ totals, signs @ sizes)
    mean = float(y.mean())

    def edge(bound: float) -> float:
        if _sign_flip_p(flipped, bound) > alpha:
            return bound
        inside, outside = mean, bound
        for _ in range(50):
            mid = (inside + outside) / 2
            inside, outside = (mid, outside) if _sign_flip_p(flipped, mid) > alpha else (inside, mid)
        return outside

    return (edge(-scale), edge(scale)), _sign_flip_p(flipped, 0.0)


def _labels_only(y: np.ndarray, clusters: np.ndarray | None, n_units: int, scale: float, alpha: float) -> _LabelsOnly:
    """The labels-only interval (module docstring): the score interval on whole-number labels, else a t interval.

    With at most :data:`EXACT_UNITS` labelled units it is never narrower, nor its p smaller, than the
    exact sign-flip interval over them (:data:`INTERVAL_EXACT` where that one is wider).
    """
    alone = _asymptotic_labels_only(y, clusters, n_units, scale, alpha)
    if n_units > EXACT_UNITS:
        return alone
    (low, high), p = _sign_flip_interval(y, clusters, scale, alpha)
    if low >= alone.ci[0] and high <= alone.ci[1] and p <= alone.p:
        return alone
    from scipy.stats import norm

    ci = (min(low, alone.ci[0]), max(high, alone.ci[1]))
    units = ("dialogue" if n_units == 1 else "dialogues") if clusters is not None else ("pair" if n_units == 1 else "pairs")
    interval = INTERVAL_EXACT.format(n=n_units, units=units, interval=alone.interval)
    se = (ci[1] - ci[0]) / (2 * float(norm.ppf(1 - alpha / 2)))
    return _LabelsOnly(alone.mean, ci, max(p, alone.p), se, interval, alone.n, alone.t_se)


def _asymptotic_labels_only(y: np.ndarray, clusters: np.ndarray | None, n_units: int, scale: float, alpha: float) -> _LabelsOnly:
    """The score interval on whole-number labels, else a t interval (their asymptotic labels-only interval)."""
    from scipy.stats import norm
    from scipy.stats import t as student_t

    z = float(norm.ppf(1 - alpha / 2))
    mean = float(y.mean())
    variance = _variance_of_mean(y, clusters)
    # every label the same: a zero spread is not certainty; the z interval is exactly the bound on the share
    t_se = math.sqrt(variance if variance > 0 else _no_spread_variance(y.size, scale, alpha, z))
    support = _score_support(y, scale)
    if support is not None:
        low, high = score_interval(y, alpha=alpha, clusters=clusters, support=support)
        p = score_test(y, clusters=clusters, support=support)
        if low is not None and high is not None and p is not None:
            return _LabelsOnly(mean, (low, high), p, (high - low) / (2 * z), INTERVAL_SCORE, y.size, t_se)
    reference = student_t(max(n_units - 1, 1)) if variance > 0 else norm
    q = float(reference.ppf(1 - alpha / 2))
    ci = (mean - q * t_se, mean + q * t_se)
    return _LabelsOnly(mean, ci, float(2 * reference.sf(abs(mean) / t_se)), t_se, INTERVAL_T, y.size, t_se)


def ppi_mean(
    scores: Sequence[float] | np.ndarray,
    labels: Sequence[float] | np.ndarray,
    *,
    alpha: float = 0.05,
    power_tuned: bool = True,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    min_disagreements: int = MIN_DISAGREEMENTS,
) -> PPIEstimate:
    """The prediction-powered mean of the human label (PPI++), its ``1 - alpha`` interval and p.

    Parameters
    ----------
    scores : array-like
        The scorer's value on every item, length ``N + n``.
    labels : array-like
        The human label of each item, NaN where it has none (``n`` labelled). For a paired gap,
        pass per-pair differences (side a − side b) of both, NaN where the pair is unlabelled.
    alpha : float
        One minus the interval's level.
    power_tuned : bool
        PPI++'s variance-minimising ``λ`` (default); False for classic PPI (``λ = 1``).
    clusters : sequence, optional
        The cluster of each item: variances are then those of cluster totals.
    min_disagreements : int
        With fewer labelled units that disagree with the scorer, the labels alone
        (:data:`MIN_DISAGREEMENTS` by default; 0: always PPI++, by neither rule, for a caller that
        only wants ``lam`` and builds its own interval).

    Returns
    -------
    PPIEstimate
        PPI++ with a t interval on the labelled units; with fewer than ``min_disagreements``
        labelled units that disagree with the scorer, the labels alone (``lam`` 0) with the
        labels-only interval (the score interval on whole-number labels from -2 to 2 at most,
        else t), as ``method`` says; the same when PPI++'s interval is not narrower than that
        labels-only interval, or not narrower by one label's worth than the labels' t interval on
        the same units (the interval and "worth N labels" never claim more than the labels alone
        give: ``effective_labels`` is NaN or more than ``n``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.binomial(1, 0.3, 5000).astype(float)
    >>> f = np.where(rng.random(5000) < 0.9, y, 1 - y)  # a scorer right 90% of the time
    >>> est = ppi_mean(f, np.where(np.arange(5000) < 300, y, np.nan))
    >>> bool(est.ci95[0] < 0.3 < est.ci95[1]), est.n_labels
    (True, 300)
    """
    f = np.asarray(scores, dtype=np.float64)
    y_all = np.asarray(labels, dtype=np.float64)
    if f.shape != y_all.shape:
        raise ValueError(_MSG_SHAPES.format(n_f=f.size, n_y=y_all.size))
    if not np.isfinite(f).all() or np.isinf(y_all).any():
        raise ValueError(_MSG_FINITE)
    labelled = ~np.isnan(y_all)
    y, f_lab = y_all[labelled], f[labelled]
    if y.size < 2:
        raise ValueError(_MSG_FEW.format(n=y.size))
    c = None if clusters is None else np.asarray(clusters)
    c_lab = None if c is None else c[labelled]
    scale = max(1.0, float(np.abs(f).max()), float(np.abs(y).max()))  # the largest difference an item can show
    k, n_units = _disagreements(y != f_lab, c_lab)
    alone = _labels_only(y, c_lab, n_units, scale, alpha)
    if k < min_disagreements:  # too few disagreements to estimate the scorer's error: the labels alone
        said = "disagreement" if k == 1 else "disagreements"
        method = METHOD_LABELS_ONLY.format(k=k, disagreements=said, minimum=min_disagreements, n=n_units, interval=alone.interval)
        return _alone_estimate(alone, f, k, method)
    ppi = _ppi_plus(f, y_all, c, alone, scale=scale, alpha=alpha, power_tuned=power_tuned, units=(k, n_units))
    return _never_more(ppi, alone, f, n_units) if min_disagreements else ppi


def _never_more(ppi: PPIEstimate, alone: _LabelsOnly, f: np.ndarray, n_units: int) -> PPIEstimate:
    """PPI++'s estimate, or the labels' alone where it is no narrower or buys less than one label (module docstring)."""
    k = ppi.n_disagreements or 0
    width, labels_width = ppi.ci95[1] - ppi.ci95[0], alone.ci[1] - alone.ci[0]
    weightless = not ppi.lam  # the labels' own estimate and t interval: it buys no label, whatever the widths shown
    if not weightless and not width < labels_width:  # no narrower than the labels' interval shown beside it: theirs
        method = METHOD_NO_NARROWER.format(ppi=width, labels=labels_width, k=k, n=n_units, interval=alone.interval)
        return _alone_estimate(alone, f, k, method)
    if weightless:
        method = METHOD_NO_WEIGHT.format(n_labels=ppi.n_labels, k=k, n=n_units, interval=alone.interval)
        return _alone_estimate(alone, f, k, method)
    if not math.isfinite(ppi.effective_labels):  # less than one label over the labels' own t interval: theirs
        method = METHOD_NO_GAIN.format(
            lam=ppi.lam,
            ppi=width,
            labels=width * alone.t_se / ppi.se,  # the labels' t interval on the same t quantile
            worth=PPIEstimate.labels_worth(ppi.n_labels, alone.t_se, ppi.se),
            n_labels=ppi.n_labels,
            k=k,
            n=n_units,
            interval=alone.interval,
        )
        return _alone_estimate(alone, f, k, method)
    return ppi


def _alone_estimate(alone: _LabelsOnly, f: np.ndarray, k: int, method: str) -> PPIEstimate:
    """The labels' alone as the estimate (``lam`` 0, their interval, no effective-labels figure), ``method`` saying why."""
    return PPIEstimate(
        estimate=alone.mean,
        ci95=alone.ci,
        p=alone.p,
        se=alone.se,
        n_labels=alone.n,
        n_items=f.size,
        lam=0.0,
        scorer_estimate=float(f.mean()),
        labels_estimate=alone.mean,
        labels_ci95=alone.ci,
        effective_labels=math.nan,  # the singleton: a result read back (None -> math.nan) compares equal
        n_disagreements=k,
        method=method,
        se_labelled=alone.se,
        se_scorer=0.0,
    )


def _ppi_plus(
    f: np.ndarray,
    y_all: np.ndarray,
    c: np.ndarray | None,
    alone: _LabelsOnly,
    *,
    scale: float,
    alpha: float,
    power_tuned: bool,
    units: tuple[int, int],
) -> PPIEstimate:
    """PPI++ with a t interval on the labelled units, once ``units = (k, n)``: ``k`` of the ``n`` disagree, enough."""
    from scipy.stats import norm
    from scipy.stats import t as student_t

    labelled = ~np.isnan(y_all)
    y, f_lab, f_un = y_all[labelled], f[labelled], f[~labelled]
    n, big_n = y.size, f_un.size
    c_lab = None if c is None else c[labelled]
    c_un = None if c is None else c[~labelled]
    lam = 1.0 if big_n else 0.0
    if power_tuned and big_n:
        var_lab_f = float(f_lab.var(ddof=1))
        cov = float(np.cov(y, f_lab, ddof=1)[0, 1])
        constant = bool(np.all(f_lab == f_lab[0]))  # a scorer that says one thing: its variance is rounding's, not 0
        lam = 0.0 if constant or var_lab_f == 0 else min(1.0, max(0.0, cov / ((1 + n / big_n) * var_lab_f)))
    rectified = y - lam * f_lab
    estimate = float(lam * (float(f_un.mean()) if big_n else 0.0) + rectified.mean())
    z = float(norm.ppf(1 - alpha / 2))
    rectified_variance = _variance_of_mean(rectified, c_lab)
    if rectified_variance == 0:  # every rectified value the same: a zero spread is not certainty
        rectified_variance = _no_spread_variance(n, scale, alpha, z)
    scorer_variance = lam**2 * _variance_of_mean(f_un, c_un) if lam and big_n >= 2 else 0.0
    se = math.sqrt(scorer_variance + rectified_variance)
    reference = student_t(max(units[1] - 1, 1))  # a small labelled sample: t on the labelled units, not z
    q = float(reference.ppf(1 - alpha / 2))
    return PPIEstimate(
        estimate=estimate,
        ci95=(estimate - q * se, estimate + q * se),
        p=float(2 * reference.sf(abs(estimate) / se)),
        se=se,
        n_labels=n,
        n_items=n + big_n,
        lam=lam,
        scorer_estimate=float(f.mean()),
        labels_estimate=alone.mean,
        labels_ci95=alone.ci,
        effective_labels=PPIEstimate.shown_worth(n, PPIEstimate.labels_worth(n, alone.t_se, se)),
        n_disagreements=units[0],
        se_labelled=math.sqrt(rectified_variance),
        se_scorer=math.sqrt(scorer_variance),
        method=METHOD_PPI,
    )


def labels_needed(half_width: float, error_sd: float, *, alpha: float = 0.05) -> int:
    """Labels a PPI interval needs for ``±half_width``, when the scorer's per-item error ``y - f`` has spread ``error_sd``.

    With many more scored items than labels the interval's width is set by the rectifier:
    ``n = (z_{1-α/2} · error_sd / half_width)^2``. ``error_sd`` comes from a pilot of labels (or,
    for a 0/1 scorer that is wrong on a share ``e`` of items, roughly ``sqrt(e)``).

    Examples
    --------
    >>> labels_needed(0.05, 0.3)  # ±5 points when the scorer's error has sd 0.3
    139
    """
    from scipy.stats import norm

    if not half_width > 0 or not error_sd > 0:
        raise ValueError("half_width and error_sd must be > 0")
    z = float(norm.ppf(1 - alpha / 2))
    needed = (z * error_sd / half_width) ** 2
    if not math.isfinite(needed):
        raise ValueError(f"the labels needed (error sd {error_sd:g}, half-width {half_width:g}) exceed any number")
    return math.ceil(needed)
