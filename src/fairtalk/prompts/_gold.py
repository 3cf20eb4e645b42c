"""Paper 004's regard corrected by human labels (``prompts analyze --gold``): prediction-powered group rates and pair gaps.

A gold file of completions (``fairtalk label --measure regard`` on a completions JSONL) labels a
sample of completions by id (the ``id`` of :func:`~fairtalk.prompts._completions.read_completions`).
The analysis' labels are the scorer's; a person's labels of a random sample correct them by
prediction-powered inference (:func:`fairtalk.stats._ppi.ppi_mean`, PPI++).

A group's mean regard is a ratio: the mean of ``label`` over the completions that are not
"other". Both the scorer's and the person's "other" move it, so it is estimated as the root
``θ`` of ``E[r − θ p] = 0`` (``r`` the regard, 0 for "other"; ``p`` 1 unless "other"), the
prediction-powered mean of ``r − θ p`` is driven to 0 and its standard error, divided by the
prediction-powered share ``p``, is ``θ``'s (the delta method). A label's share among the
counted completions is the same ratio with ``r`` the label's indicator. Several annotators of one
completion count as the share of them that gave each label.

**Clusters: templates.** Completions of one template (``"worked as"``, all its structures and
seeds) share their phrasing, and the analysis' own intervals resample whole templates
(:mod:`fairtalk.prompts._bootstrap`); the labelled estimates do likewise, with cluster-total
(CR0-type) variances by template and intervals on Student's t with ``G − 1`` degrees of freedom
(``G`` the templates the labelled completions span: ten in the paper, too few for the normal). A
pair's gap ``θ_a − θ_b`` takes its variance from both groups' influence values summed within each
template, so a template that moves both groups alike is not counted twice; its ``lam`` is the
mean of the two groups'. With a single template, completions are the units (and the normal).

**When the scorer's error is rare** (issue 39), the rule of :func:`~fairtalk.stats.ppi_mean`:
an estimate whose labelled units (templates, or completions with a single template) hold fewer
than :data:`~fairtalk.stats.MIN_DISAGREEMENTS` that disagree with the scorer (a unit disagrees
when one of its labelled completions was labelled otherwise than the scorer did; for a gap, in
either group) is the labels' alone: the labels-only ratio with its interval (the same delta-method
standard error by template, on t(G − 1); a label share's is Korn-Graubard's, below), ``lam`` 0,
``method`` saying so and no effective-labels figure (NaN); :attr:`GoldRegard.warnings` says once which estimates and how many disagreements.
With 10 or more it is PPI++ as above. Each estimate (a group's regard, a label share, a gap)
counts its own; a gap with enough uses the groups' PPI++ fits even where a group alone has too
few. With fewer than 10 templates labelled, every estimate is therefore the labels'.

**Never more than the labels alone give** (the other rule of :func:`~fairtalk.stats.ppi_mean`):
an estimate with enough disagreements keeps PPI++'s only where its interval, cut to the measure's
range as it is shown, is narrower than the labels-only one (likewise cut; a share's is
Korn-Graubard's), and PPI++ buys at least one label over the labels' own delta-method t interval
on the same templates (like against like). Else it is the labels' alone, with no effective-labels
figure and one warning; ``method`` says why: "labels only (PPI++'s interval was no narrower: W
wide against the labels' L; …)", or, with weight 0 on the scorer (its estimate is then the
labels' own, worth exactly their number), "… no narrower: weight 0 on the scorer, …", or, with a
weight near 0, "… no narrower by one label than the labels' delta-method t interval on the same
templates: weight λ on the scorer, W wide against L, worth N of n labels; …". The effective-labels
figure is ``n (se_labels / se)^2`` of the two delta-method standard errors, at least ``n + 1``,
so "worth N labels" is always more than the ``n`` labels.

**A label's share near 0 or 1** (issue 39). The delta method takes a share's standard error from
the labelled completions that hold the label; with none it is 0 (or rounding's 1e-16: the
interval was a point at 0), and with one or two it is a Wald interval that reaches below 0 and
under-covers. So a share's labels-only interval is **Korn and Graubard's** (1998, *Survey
Methodology* 24:193; R's ``survey::svyciprop(method = "beta")``): the exact Clopper-Pearson
interval (:func:`statsmodels.stats.proportion.proportion_confint`, ``"beta"``) on the effective
sample size ``n / deff``, ``n`` the counted labelled completions and ``deff`` the clustered delta
variance over the binomial ``θ (1 − θ) / n``, at least 1 (and 1 at a share of 0 or 1, where no
spread can measure it), times ``(t_{n−1} / t_{G−1})²`` for the G templates. It lies in [0, 1] and
is never a point: with no labelled completion holding the label it is ``[0, 1 − 0.025^(1/n_eff)]``.
Its ``p`` of "the share is 0" is exact: 1 when no labelled completion holds the label, else 0.
PPI++'s share estimate and interval are cut to [0, 1] (the labels' own where nothing is left).
When the labels hold no spread (a share of 0 or 1, or every counted completion of one regard),
PPI++'s weight on the scorer is 0 (but for rounding), so its estimate is the labels' own and takes
their interval (``method`` "labels only (PPI++'s interval was no narrower: weight 0 on the scorer,
…)", the rule below); a mean regard whose labels hold no spread gets the exact bound: each completion that
could differ (Clopper-Pearson's upper bound on their share, none seen) moves it at most to -1 or 1.
``method`` names the interval. Mean regard and gaps keep the delta-method t interval otherwise.
Figures: ``bench/README.md``, "ppi_prompts" (rare shares).

**A handful of labels** (a review of issue 39 item 1). Each interval's p is its own test's: the
t test of the delta-method interval; for the exact bound, the level at which the bound first
leaves 0 out (:func:`_no_spread_p`; the t test of its half-width gave p 0.042 beside an interval
holding 0); a share's, exact. A mean regard's intervals are cut to [−1, 1] and a gap's to
[−2, 2] (t(1) with two templates reached ±6.9; the p is unchanged, 0 lying inside): ``method``
ends "cut to [...]". A group whose labelled completions all lie in one template (with more than
one analysed) has no interval: its estimates and its pairs' gaps are :func:`not_estimable` (NaN
interval and p, null in results.json, ``method`` saying why; it was ±inf), with one warning.

The sample must be uniform within each group (``fairtalk label`` draws it so). Ids the
analysed completions do not hold and labels outside regard's four are counted in warnings;
a file with no label left (all outside, or none on an analysed completion) is an error
(:func:`check_usable`), as an empty one is. Labels of fairtalk's own annotator (``fairtalk
regard label`` wrote them) are refused (:func:`refuse_machine_labels`): a scorer's labels are no
gold. A gold row stores the text it labelled (``"text"``): where a joined id's
completion holds another text (the labels were given on another completions file, whose line
numbers are ids too), :func:`gold_regard` refuses the labels, naming how many and the first: labels
of other texts must not correct a gap (:meth:`fairtalk.gold.Gold.texts` reads them from a gold file).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from fairtalk.errors import InputError
from fairtalk.prompts._tables import LABELS, Rows, code_rows
from fairtalk.prompts._templates import GroupPair
from fairtalk.stats import MIN_DISAGREEMENTS, PPIEstimate, disagreeing_units, ppi_mean

__all__ = [
    "CLUSTERS",
    "AnnotatedLabels",
    "GoldFile",
    "GoldInput",
    "GoldRegard",
    "gold_input",
    "gold_regard",
    "refuse_machine_labels",
]

#: What the labelled estimates cluster by.
CLUSTERS = "template"
_VALUES = (-1, 0, 1, 2)
_MSG_NO_IDS = "--gold joins labels to completions by id: give a completions file (--completions), whose ids are kept"
MSG_OTHER_TEXTS = (
    "{n:,} labelled id(s) hold another text than the analysed completion of that id (first: id {id}, labelled "
    "{labelled!r}, the completion {completion!r}): the labels were given on another completions file; label the file "
    "you analyse"
)
#: Gold rows of fairtalk's own labels (``fairtalk regard label``): a scorer's labels correct no scorer.
MSG_MACHINE_LABELS = (
    "{n:,} gold label(s) are a scorer's, not a person's (annotator {annotator!r}, first: id {id}): fairtalk regard label "
    "wrote them, and a machine's labels are no gold; give human labels (fairtalk label --measure regard), or check "
    "the scorer's labels against them with fairtalk regard check --predicted"
)
#: A gold file none of whose labels joins an analysed completion with one of regard's four labels.
MSG_NO_USABLE = "the gold file holds no usable label: {reasons}; nothing is left to correct the gaps by"
_NO_USABLE_VALUES = "{n:,} label(s) outside regard's -1, 0, 1, 2 (first: {first!r} of id {id})"
_NO_USABLE_IDS = "{n:,} labelled id(s) not among the analysed completions (first: {first})"
WARN_UNKNOWN = "gold: {n:,} labelled id(s) are not among the analysed completions (first: {first}): left out"
WARN_VALUES = "gold: {n:,} label(s) outside regard's -1, 0, 1, 2 (first: {first!r} of id {id}): left out"
WARN_FEW = (
    "gold: group {group} has {n} labelled completion(s): no labelled estimate (it needs at least 2, and a label "
    "other than 'other' from both the scorer and the person)"
)
WARN_PAIR = "gold: no labelled gap for {pair}: a group of it has no labelled estimate"
WARN_FEW_DISAGREEMENTS = (
    "gold: too few labelled {units} disagree with the scorer to estimate its error (fewer than {minimum}) for {which}: "
    "those estimates and intervals are the labels' alone, with no effective-labels figure"
)
WARN_NO_NARROWER = (
    "gold: PPI++'s interval was no narrower than the labels' alone for {which}: those estimates and intervals are the "
    "labels' alone, with no effective-labels figure"
)
WARN_ONE_UNIT = (
    "gold: group {group}'s {n} labelled completion(s) all lie in one {unit}: its estimates (and its pairs' gaps) have "
    "no interval (not estimable: the labels cannot tell one {unit} from another)"
)
#: The range of a group's mean regard and of a pair's gap of two of them.
REGARD_RANGE = (-1.0, 1.0)
GAP_RANGE = (-2.0, 2.0)
#: ``method`` of an estimate whose labels cannot estimate an interval (they lie in one template).
METHOD_NOT_ESTIMABLE = "not estimable ({n} labels, {whose}all in one {unit}): no interval"
#: Appended to ``method`` when an interval was cut to the measure's range.
CUT = "; cut to [{low:+g}, {high:+g}]"
#: ``method`` of a labelled estimate whose labels estimate the scorer's error.
METHOD_PPI = "PPI++ (delta method, t interval on {units})"
#: ``method`` of one whose labels hold too few disagreements: the labels-only ratio with its interval.
METHOD_LABELS_ONLY = (
    "labels only ({k} {disagreements} < {minimum}: {k} of {n} labelled {units} disagree with the scorer, too few to "
    "estimate its error), {interval}"
)
#: ``method`` of one whose PPI++ interval (cut to the range) was no narrower than the labels-only one: the labels alone.
#: It begins as :func:`fairtalk.stats.ppi_mean`'s does, so :attr:`~fairtalk.stats.PPIEstimate.no_narrower` reads it.
METHOD_NO_NARROWER = (
    "labels only (PPI++'s interval was no narrower: {ppi:.4g} wide against the labels' {labels:.4g}; {k} of {n} "
    "labelled {units} disagree with the scorer), {interval}"
)
#: ``method`` of one where PPI++ bought less than one label over the labels' own delta-method t interval on the same
#: units (weight 0 on the scorer, or nearly): the labels alone. It begins as :data:`METHOD_NO_NARROWER` does.
METHOD_NO_GAIN = (
    "labels only (PPI++'s interval was no narrower by one label than the labels' delta-method t interval on the same "
    "{units}: weight {lam:.3g} on the scorer, {ppi:.4g} wide against {labels:.4g}, worth {worth:.4g} of {n_labels} "
    "labels; {k} of {n} labelled {units} disagree with the scorer), {interval}"
)
#: ``method`` of one whose PPI++ weight on the scorer was 0: the labels' own estimate (:func:`_weightless`), worth
#: exactly their number: the labels alone, with their interval.
METHOD_NO_WEIGHT = (
    "labels only (PPI++'s interval was no narrower: weight 0 on the scorer, so its estimate is the labels' own, worth "
    "their {n_labels} labels; {k} of {n} labelled {units} disagree with the scorer), {interval}"
)
#: The labels-only intervals: a group's mean regard and a gap; the same when the labels hold no spread; a label's share.
INTERVAL_DELTA = "delta-method t interval on {units}"
INTERVAL_NO_SPREAD = "exact bound (every labelled completion counted alike: Clopper-Pearson on the share that could differ)"
INTERVAL_SHARE = "Korn-Graubard interval (Clopper-Pearson on the effective sample size{df})"
_SHARE_DF = ", degrees of freedom by {units}"


@dataclass(frozen=True, slots=True)
class GoldRegard:
    """The labelled estimates: each group's mean regard and label shares, each pair's gap, and what was left out."""

    regard: Mapping[str, PPIEstimate]
    rates: Mapping[str, Mapping[str, PPIEstimate]]
    gaps: Mapping[str, PPIEstimate]
    n_labels: int
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Fit:
    """One group's ratio fit: the estimate shown, PPI++'s, and the influence values of PPI++ and the labels-only ratio, per row.

    ``estimate`` is ``ppi`` or, with too few disagreements, the labels' alone; ``disagree`` marks the
    labelled rows whose label differs from the scorer's.
    """

    estimate: PPIEstimate
    ppi: PPIEstimate
    disagree: np.ndarray
    lab: np.ndarray
    unlabelled: np.ndarray
    labelled: np.ndarray
    labels_only: np.ndarray
    labels_se: float


@dataclass(frozen=True, slots=True)
class _Alone:
    """The labels' own estimate: its interval, standard error (half-width over the quantile), p of "it is 0", and the interval's name."""

    estimate: float
    ci: tuple[float, float]
    se: float
    p: float
    interval: str


def _delta_alone(theta: float, se: float, n_clusters: int | None, units: str) -> _Alone:
    """The delta-method t interval (on t(G − 1) by template) of an estimate with a spread (``se > 0``; 0: p is 1 at 0, else 0)."""
    reference = _reference(n_clusters)
    q = float(reference.ppf(0.975))
    p = float(2 * reference.sf(abs(theta) / se)) if se else float(theta == 0)
    return _Alone(theta, (theta - q * se, theta + q * se), se, p, INTERVAL_DELTA.format(units=units))


def _effective_n(n: float, n_labelled: int, n_clusters: int | None, share: float, se: float) -> float:
    """Korn and Graubard's effective sample size: ``n`` over the design effect (at least 1), scaled by ``(t_{n−1} / t_{G−1})²``.

    The design effect is the clustered variance over the binomial ``share (1 − share) / n``; it is 1
    where that is 0 (a share of 0 or 1: no spread to measure it from).
    """
    from scipy.stats import t

    binomial = share * (1 - share) / n
    n_eff = n if binomial <= 0 or se <= 0 else min(n, n * binomial / se**2)
    if n_clusters is not None and n_clusters >= 2 and n_labelled >= 2:
        n_eff *= (float(t(n_labelled - 1).ppf(0.975)) / float(t(n_clusters - 1).ppf(0.975))) ** 2
    return n_eff


def _clopper_pearson(share: float, n_eff: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95% interval of a share of ``share * n_eff`` events among ``n_eff`` (not whole numbers)."""
    from statsmodels.stats.proportion import proportion_confint

    if not n_eff > 0:  # no counted labelled completion: nothing is known of the share
        return 0.0, 1.0
    low, high = proportion_confint(share * n_eff, n_eff, alpha=0.05, method="beta")
    return max(0.0, float(low)), min(1.0, float(high))


def _share_alone(share: float, se: float, n: float, n_labelled: int, n_clusters: int | None, units: str) -> _Alone:
    """A label share's labels-only interval: Korn-Graubard (Clopper-Pearson on the effective sample size), inside [0, 1].

    p of "the share is 0" is exact: 1 when no labelled completion has the label, 0 when one has
    (a share of 0 could not give one).
    """
    low, high = _clopper_pearson(share, _effective_n(n, n_labelled, n_clusters, share, se))
    q = float(_reference(n_clusters).ppf(0.975))
    df = "" if n_clusters is None else _SHARE_DF.format(units=units)
    return _Alone(share, (low, high), (high - low) / (2 * q), 1.0 if share == 0 else 0.0, INTERVAL_SHARE.format(df=df))


def _no_spread_alone(theta: float, n: int, n_clusters: int | None, low: float, high: float) -> _Alone:
    """A ratio whose labelled counted completions all hold one value ``theta`` in ``[low, high]``: the exact bound.

    With none of ``n`` differing, the share of completions that could differ is at most
    Clopper-Pearson's upper bound (``1 − 0.025^(1/n)``, the design effect 1, ``n`` scaled as
    :func:`_effective_n` does), and each moves the ratio by at most its distance to ``low`` or ``high``.
    """
    n_eff = _effective_n(float(n), n, n_clusters, 0.0, 0.0)
    bound = _clopper_pearson(0.0, n_eff)[1]
    ci = (theta - bound * (theta - low), theta + bound * (high - theta))
    q = float(_reference(n_clusters).ppf(0.975))
    se = (ci[1] - ci[0]) / (2 * q)
    return _Alone(theta, ci, se, _no_spread_p(theta, n_eff, low, high), INTERVAL_NO_SPREAD)


def _no_spread_p(theta: float, n_eff: float, low: float, high: float) -> float:
    """The p of "it is 0" of the exact bound: the level at which the bound first leaves 0 out (the interval's own test).

    To reach 0 from ``theta`` a share ``s = |theta| / (distance to the far end)`` of the completions
    must differ; with none of ``n_eff`` seen differing, Clopper-Pearson's ``1 − α`` upper bound
    ``1 − (α/2)^(1/n_eff)`` reaches ``s`` at ``α = 2 (1 − s)^n_eff``.
    """
    if theta == 0 or not n_eff > 0:
        return 1.0
    share = theta / (theta - low) if theta > 0 else -theta / (high - theta)
    return float(min(1.0, 2 * (1 - share) ** n_eff))


def _variance(psi: np.ndarray, clusters: np.ndarray | None, used: np.ndarray) -> float:
    """The (cluster-total, CR0-type) variance of a sum of the centred influence values ``psi[used]``, as :func:`ppi_mean` takes it."""
    if clusters is None:
        g, totals = int(used.sum()), psi[used]
    else:
        _, inverse = np.unique(clusters[used], return_inverse=True)
        totals = np.bincount(inverse, weights=psi[used])
        g = totals.size
    return math.inf if g < 2 else float(g / (g - 1) * np.sum(totals**2))


def _ratio(
    r_f: np.ndarray, p_f: np.ndarray, r_y: np.ndarray, p_y: np.ndarray, clusters: np.ndarray | None, *, share: bool = False
) -> _Fit | None:
    """The prediction-powered ``E[r] / E[p]`` of one group (``r_y``, ``p_y`` NaN where unlabelled); None without a denominator.

    ``share``: ``r`` is a label's indicator, so the ratio is a share in [0, 1] (its labels-only
    interval is Korn-Graubard's, and PPI++'s estimate and interval are cut to [0, 1]).
    """
    lab = ~np.isnan(r_y)
    counted = ppi_mean(p_f, p_y, clusters=clusters, min_disagreements=0)  # its lam and estimate: the interval is built here
    if not p_f.sum() > 0 or not np.nansum(p_y) > 0 or not counted.estimate > 0:
        return None
    theta = float(r_f.sum() / p_f.sum())
    fit = ppi_mean(r_f - theta * p_f, r_y - theta * p_y, clusters=clusters, min_disagreements=0)
    for _ in range(50):  # the root of ppi(r - θ p) = 0; λ moves with θ, so a few steps
        step = fit.estimate / counted.estimate
        theta += step
        fit = ppi_mean(r_f - theta * p_f, r_y - theta * p_y, clusters=clusters, min_disagreements=0)
        if abs(step) < 1e-12:
            break
    u_f, u_y = r_f - theta * p_f, r_y - theta * p_y
    big_n, n = int((~lab).sum()), int(lab.sum())
    unlabelled, labelled = np.zeros(r_f.size), np.zeros(r_f.size)
    if big_n and fit.lam:
        unlabelled[~lab] = fit.lam * (u_f[~lab] - u_f[~lab].mean()) / (big_n * counted.estimate)
    rectified = u_y[lab] - fit.lam * u_f[lab]
    labelled[lab] = (rectified - rectified.mean()) / (n * counted.estimate)
    labels_only = _labels_influence(r_y[lab], p_y[lab], lab)
    scorer_part = _variance(unlabelled, clusters, ~lab) if fit.lam and big_n >= 2 else 0.0
    se = math.sqrt(scorer_part + _variance(labelled, clusters, lab))
    if se == 0:  # every labelled completion agreed with the scorer: no spread is not certainty (ppi_mean's bound)
        se = fit.se / counted.estimate
    alone = _ratio_alone(r_y[lab], p_y[lab], labels_only, clusters, lab, share=share)
    estimate = _estimate(theta, se, n, r_f.size, fit.lam, float(r_f.sum() / p_f.sum()), alone, _n_clusters(clusters, lab))
    if not labels_only.any():  # the labels hold no spread (no event of a label): PPI++'s weight is 0 but for rounding
        estimate = replace(estimate, lam=0.0)
    estimate = _weightless(estimate, alone)
    if share:
        estimate = _within(estimate, alone)
    disagree = lab & ((r_y != r_f) | (p_y != p_f))
    delta_se = math.sqrt(_variance(labels_only, clusters, lab))  # the labels' own delta-method t, like PPI++'s
    chosen = _rule(estimate, disagree, (lab, clusters), alone, delta_se, (0.0, 1.0) if share else REGARD_RANGE)
    return _Fit(chosen, estimate, disagree, lab, unlabelled, labelled, labels_only, alone.se)


def _labels_influence(r: np.ndarray, p: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """The labels-only ratio's influence values (zero where unlabelled): ``(u − ū) / (n p̄)`` with ``u = r − θ p``."""
    theta = float(r.sum() / p.sum())
    u = r - theta * p
    values = np.zeros(lab.size)
    values[lab] = (u - u.mean()) / (r.size * float(p.mean()))
    return values


def _ratio_alone(
    r: np.ndarray, p: np.ndarray, influence: np.ndarray, clusters: np.ndarray | None, lab: np.ndarray, *, share: bool
) -> _Alone:
    """The labels-only ratio of the labelled ``r``, ``p`` with its interval (delta-method t; Korn-Graubard for a share).

    Labels whose counted completions all hold the same value have no spread to take a standard
    error from: a share gets Korn-Graubard's interval (never a point), the mean regard the exact bound.
    """
    theta = float(r.sum() / p.sum())
    n_clusters = _n_clusters(clusters, lab)
    units = _units(clusters)
    se = math.sqrt(_variance(influence, clusters, lab))
    if share:
        return _share_alone(min(1.0, max(0.0, theta)), se, float(p.sum()), int(np.count_nonzero(p > 0)), n_clusters, units)
    counted = p > 0
    if not np.allclose(r[counted] / p[counted], theta, rtol=0.0, atol=1e-12) or not math.isfinite(se):
        if clusters is not None and se <= 1e-12:  # values that vary but whose template totals cancel: not certainty,
            se = math.sqrt(_variance(influence, None, lab))  # so the spread of the completions themselves
        return _delta_alone(theta, se, n_clusters, units)
    return _no_spread_alone(theta, int(np.count_nonzero(counted)), n_clusters, -1.0, 1.0)


def _weightless(estimate: PPIEstimate, alone: _Alone) -> PPIEstimate:
    """PPI++ with no weight on the scorer (``lam`` 0) is the labels' own estimate: it takes their interval too.

    (Its own standard error would be that of the labels' spread, which is 0 up to rounding when
    they hold no event of a label: a point, not an interval.) It buys no label: no effective-labels
    figure, and :func:`_rule` says the estimate is the labels' alone.
    """
    if estimate.lam:
        return estimate
    return replace(estimate, estimate=alone.estimate, ci95=alone.ci, p=alone.p, se=alone.se, effective_labels=math.nan)


def _within(estimate: PPIEstimate, alone: _Alone) -> PPIEstimate:
    """A share's PPI++ estimate and interval cut to [0, 1]; an interval wholly outside (a point once cut) gives the labels' own."""
    ci = (min(1.0, max(0.0, estimate.ci95[0])), min(1.0, max(0.0, estimate.ci95[1])))
    if not ci[1] > ci[0]:
        return _weightless(replace(estimate, lam=0.0), alone)
    return replace(estimate, estimate=min(1.0, max(0.0, estimate.estimate)), ci95=ci)


def _cut(estimate: PPIEstimate, low: float, high: float) -> PPIEstimate:
    """An estimate and its intervals cut to the measure's range ``[low, high]`` (its p unchanged: 0 lies inside, so the test is the same).

    ``method`` says so when a bound moved.
    """

    def cut(pair: tuple[float, float]) -> tuple[float, float]:
        return (min(high, max(low, pair[0])), min(high, max(low, pair[1])))

    ci, labels_ci = cut(estimate.ci95), cut(estimate.labels_ci95)
    if ci == estimate.ci95 and labels_ci == estimate.labels_ci95 and low <= estimate.estimate <= high:
        return estimate
    return replace(
        estimate,
        estimate=min(high, max(low, estimate.estimate)),
        ci95=ci,
        labels_ci95=labels_ci,
        method=estimate.method + CUT.format(low=low, high=high),
    )


def not_estimable(estimate: PPIEstimate, n: int, whose: str = "", unit: str = CLUSTERS) -> PPIEstimate:
    """The estimate without an interval: its (or ``whose``) labels lie in one ``unit``, which no interval reaches past.

    Its interval, p and standard errors are NaN (null in results.json), and ``method`` says why.
    """
    nan = (math.nan, math.nan)
    return replace(
        estimate,
        ci95=nan,
        labels_ci95=nan,
        p=math.nan,
        se=math.nan,
        effective_labels=math.nan,
        se_labelled=math.nan,
        se_scorer=math.nan,
        method=METHOD_NOT_ESTIMABLE.format(n=n, whose=whose, unit=unit),
    )


def _units(clusters: np.ndarray | None) -> str:
    """What the labelled estimates count as units, in words."""
    return f"{CLUSTERS}s" if clusters is not None else "completions"


def _rule(
    ppi: PPIEstimate,
    disagree: np.ndarray,
    design: tuple[np.ndarray, np.ndarray | None],
    alone: _Alone,
    labels_se: float,
    bounds: tuple[float, float],
) -> PPIEstimate:
    """PPI++'s estimate when its labelled units hold :data:`MIN_DISAGREEMENTS` that disagree, else the labels' alone.

    ``design`` is the labelled mask and the clusters; ``labels_se`` the labels-only estimate's
    delta-method standard error on the same units (whatever interval ``alone`` shows). PPI++'s is
    kept only where it buys at least one label over the labels' own delta-method t interval
    (:func:`fairtalk.stats.ppi_mean`'s rule: with weight 0 on the scorer it buys none) and its
    interval is narrower than the labels' alone, both cut to the measure's range ``bounds`` as they
    are shown; its effective-labels figure is then ``n (labels_se / se)^2``, more than ``n``.
    """
    lab, clusters = design
    k, n_units = disagreeing_units(disagree[lab], None if clusters is None else clusters[lab])
    units = _units(clusters)
    if k < MIN_DISAGREEMENTS:
        method = METHOD_LABELS_ONLY.format(
            k=k,
            disagreements="disagreement" if k == 1 else "disagreements",
            minimum=MIN_DISAGREEMENTS,
            n=n_units,
            units=units,
            interval=alone.interval,
        )
        return _labels_alone(ppi, alone, k, method)
    weightless = not ppi.lam  # the labels' own estimate already (_weightless): it buys no label
    width, labels_width = _width(ppi.ci95, bounds), _width(alone.ci, bounds)
    if not weightless and not width < labels_width:  # never more than the labels alone give
        method = METHOD_NO_NARROWER.format(ppi=width, labels=labels_width, k=k, n=n_units, units=units, interval=alone.interval)
        return _labels_alone(ppi, alone, k, method)
    if weightless:
        method = METHOD_NO_WEIGHT.format(n_labels=ppi.n_labels, k=k, n=n_units, units=units, interval=alone.interval)
        return _labels_alone(ppi, alone, k, method)
    worth = PPIEstimate.labels_worth(ppi.n_labels, labels_se, ppi.se)
    effective = PPIEstimate.shown_worth(ppi.n_labels, worth)
    if not math.isfinite(effective):  # the scorer bought less than one label (a weight near 0 on it): the labels'
        q = 2 * float(_reference(_n_clusters(clusters, lab)).ppf(0.975))  # both delta-method t intervals' widths
        method = METHOD_NO_GAIN.format(
            lam=ppi.lam,
            ppi=q * ppi.se,
            labels=q * labels_se,
            worth=worth,
            n_labels=ppi.n_labels,
            k=k,
            n=n_units,
            units=units,
            interval=alone.interval,
        )
        return _labels_alone(ppi, alone, k, method)
    return replace(ppi, n_disagreements=k, method=METHOD_PPI.format(units=units), effective_labels=effective)


def _width(ci: tuple[float, float], bounds: tuple[float, float]) -> float:
    """The width of an interval as shown: cut to the measure's range ``bounds``."""
    low, high = bounds
    return min(high, max(low, ci[1])) - min(high, max(low, ci[0]))


def _labels_alone(ppi: PPIEstimate, alone: _Alone, k: int, method: str) -> PPIEstimate:
    """The labels' own estimate in place of PPI++'s (``lam`` 0, their interval, no effective-labels figure), ``method`` saying why."""
    return replace(
        ppi,
        estimate=alone.estimate,
        ci95=alone.ci,
        p=alone.p,
        se=alone.se,
        lam=0.0,
        effective_labels=math.nan,
        n_disagreements=k,
        method=method,
        se_labelled=alone.se,
        se_scorer=0.0,
    )


def _n_clusters(clusters: np.ndarray | None, lab: np.ndarray) -> int | None:
    """The templates the labelled completions span (None without clusters): the interval's ``G - 1`` degrees of freedom."""
    return None if clusters is None else int(np.unique(clusters[lab]).size)


def _reference(n_clusters: int | None) -> Any:
    """The intervals' reference distribution: t(G − 1) with G clusters, the normal without (or with one)."""
    from scipy.stats import norm, t

    return norm if n_clusters is None or n_clusters < 2 else t(n_clusters - 1)


def _estimate(
    theta: float,
    se: float,
    n: int,
    n_items: int,
    lam: float,
    scorer: float,
    alone: _Alone,
    n_clusters: int | None,
) -> PPIEstimate:
    """The :class:`PPIEstimate` of PPI++'s estimate and standard error (and the labels alone's), on t(G − 1) with G clusters."""
    reference = _reference(n_clusters)
    q = float(reference.ppf(0.975))
    return PPIEstimate(
        estimate=theta,
        ci95=(theta - q * se, theta + q * se),
        p=float(2 * reference.sf(abs(theta) / se)) if se else float(theta == 0),
        se=se,
        n_labels=n,
        n_items=n_items,
        lam=lam,
        scorer_estimate=scorer,
        labels_estimate=alone.estimate,
        labels_ci95=alone.ci,
        effective_labels=math.nan,  # :func:`_rule` gives the figure
    )


def _human(rows: Rows, labels: Mapping[str, Sequence[object]]) -> tuple[np.ndarray, list[str]]:
    """Per analysed row, the share of its annotators that gave each label (NaN where unlabelled), and the warnings."""
    ids = rows.frame["id"].astype(str).to_numpy()
    where = {rid: i for i, rid in enumerate(ids)}
    shares = np.full((ids.size, len(_VALUES)), np.nan)
    unknown: list[str] = []
    bad: list[tuple[object, str]] = []
    for rid, given in labels.items():
        i = where.get(str(rid))
        if i is None:
            unknown.append(str(rid))
            continue
        valid = [v for v in given if _valid(v)]
        bad += [(v, str(rid)) for v in given if not _valid(v)]
        if valid:
            shares[i] = [valid.count(v) / len(valid) for v in _VALUES]
    warnings = []
    if unknown:
        warnings.append(WARN_UNKNOWN.format(n=len(unknown), first=sorted(unknown)[0]))
    if bad:
        warnings.append(WARN_VALUES.format(n=len(bad), first=bad[0][0], id=bad[0][1]))
    return shares, warnings


def refuse_machine_labels(annotated: Sequence[tuple[str, str]], source: str | None = None) -> None:
    """Refuse gold labels whose annotator is fairtalk's (``fairtalk`` or ``fairtalk:SCORER``): a machine's labels are no gold.

    ``annotated`` is the ``(id, annotator)`` of each gold label, in file order.

    Raises
    ------
    InputError
        Naming how many labels are a scorer's, its annotator and the first id.
    """
    from fairtalk.prompts._regard_check import is_machine_annotator

    machine = [(rid, who) for rid, who in annotated if is_machine_annotator(who)]
    if machine:
        rid, who = machine[0]
        raise InputError(MSG_MACHINE_LABELS.format(n=len(machine), annotator=who, id=rid), path=source)


@runtime_checkable
class AnnotatedLabels(Protocol):
    """Regard labels read from a gold file, which say who gave them (:meth:`fairtalk.gold.Gold.regard_labels`).

    ``annotated`` is the ``(id, annotator)`` of every label of the file, in file order;
    ``labelled_texts`` the ``(id, text)`` they were given on; ``source`` the file.
    """

    @property
    def annotated(self) -> Sequence[tuple[str, str]]: ...

    @property
    def labelled_texts(self) -> Sequence[tuple[str, str]]: ...

    @property
    def source(self) -> str: ...


class GoldFile(Protocol):
    """A gold file as :func:`fairtalk.gold.read_gold` returns it (``Gold``): its regard labels by id, read on demand."""

    def regard_labels(self) -> Mapping[str, Sequence[object]]: ...


@dataclass(frozen=True, slots=True)
class GoldInput:
    """The human regard labels a prompts analysis corrects by: by id, the texts they were given on, and their file."""

    labels: Mapping[str, Sequence[object]]
    texts: tuple[tuple[str, str], ...]
    source: str


def gold_input(
    gold: Mapping[str, Sequence[object]] | GoldFile, *, texts: Sequence[tuple[str, str]] = (), source: str = ""
) -> GoldInput:
    """The labels ``analyze_prompts(gold=...)`` and ``prompts analyze --gold`` correct by; a machine's refused, here only.

    ``gold`` is a gold file read by :func:`fairtalk.gold.read_gold` (``Gold``), its
    ``regard_labels()``, or a plain mapping id -> labels. Labels read from a file carry their
    annotators (:class:`AnnotatedLabels`), and a file holding any of fairtalk's own (``fairtalk
    regard label`` wrote them) is refused (:func:`refuse_machine_labels`); they also carry the
    texts labelled and the file's path, taken where ``texts`` and ``source`` are not given. A
    plain mapping names no annotator: its labels are taken as a person's.

    Raises
    ------
    InputError
        Labels of fairtalk's annotator (:data:`MSG_MACHINE_LABELS`), or a gold file without
        regard labels of completions.
    """
    labels = gold if isinstance(gold, Mapping) else gold.regard_labels()
    if isinstance(labels, AnnotatedLabels):
        source = source or labels.source
        refuse_machine_labels(labels.annotated, source=source or None)
        texts = texts or labels.labelled_texts
    return GoldInput(labels=labels, texts=tuple(texts), source=source)


def check_usable(ids: Sequence[str], labels: Mapping[str, Sequence[object]], source: str | None = None) -> None:
    """Refuse ``labels`` none of which is one of regard's four on one of ``ids`` (the analysed completions'): no gold to use.

    Raises
    ------
    InputError
        Naming what was left out: labels outside regard's four, and ids the completions lack.
    """
    known = set(ids)
    if any(str(rid) in known and any(_valid(v) for v in given) for rid, given in labels.items()):
        return
    reasons = []
    bad = [(v, str(rid)) for rid, given in labels.items() if str(rid) in known for v in given if not _valid(v)]
    if bad:
        reasons.append(_NO_USABLE_VALUES.format(n=len(bad), first=bad[0][0], id=bad[0][1]))
    unknown = sorted(str(rid) for rid in labels if str(rid) not in known)
    if unknown:
        reasons.append(_NO_USABLE_IDS.format(n=len(unknown), first=unknown[0]))
    raise InputError(MSG_NO_USABLE.format(reasons="; ".join(reasons) or "no label"), path=source)


def _valid(value: object) -> bool:
    """Whether ``value`` is one of regard's labels -1, 0, 1, 2 (a bool is not)."""
    return not isinstance(value, bool) and value in _VALUES


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…"


def check_texts(frame: pd.DataFrame, texts: Sequence[tuple[str, str]], source: str | None = None) -> None:
    """Refuse labels whose stored text is not the text of the analysed completion they join to (ids the frame lacks aside).

    Texts are compared with surrounding whitespace stripped, as :func:`~fairtalk.prompts.match_predicted` compares them.

    Raises
    ------
    InputError
        Naming how many labelled rows hold another text, and the first.
    """
    if not texts or "text" not in frame.columns:
        return
    completion = dict(zip(frame["id"].astype(str), frame["text"]))
    # texts compared stripped, as `regard check` compares them: surrounding whitespace is no other text
    other = [(rid, text) for rid, text in texts if rid in completion and str(completion[rid]).strip() != str(text).strip()]
    if other:
        rid, text = other[0]
        raise InputError(
            MSG_OTHER_TEXTS.format(
                n=len({r for r, _ in other}), id=rid, labelled=_shorten(text), completion=_shorten(str(completion[rid]))
            ),
            path=source,
        )


def gold_regard(
    frame: pd.DataFrame,
    labels: Mapping[str, Sequence[object]],
    *,
    groups: Sequence[str],
    pairs: Sequence[GroupPair],
    include_other: bool = False,
    texts: Sequence[tuple[str, str]] = (),
    source: str | None = None,
) -> GoldRegard:
    """Each group's mean regard and label shares, and each pair's gap, corrected by the human ``labels`` of completion ids.

    ``frame`` is the analysed completions (with ``id``, the scorer's ``label`` and ``template``);
    ``labels`` maps a completion's id to the labels its annotators gave (-1, 0, 1, 2); ``texts``
    are the ``(id, text)`` the labels were given on (:meth:`fairtalk.gold.Gold.texts`), checked against the
    completions' (``source`` names the gold file in the error).

    Raises
    ------
    InputError
        The frame has no ``id`` column (published outputs: no ids to join on), a labelled id's
        stored text is not its completion's, or no label is one of regard's four on an analysed
        completion (:func:`check_usable`).
    """
    if "id" not in frame.columns:
        raise InputError(_MSG_NO_IDS)
    check_texts(frame, texts, source)
    rows = code_rows(frame, list(groups), include_other)
    check_usable(rows.frame["id"].astype(str).tolist(), labels, source)
    human, warnings = _human(rows, labels)
    templates = rows.frame["template"].astype(str).to_numpy()
    clusters = templates if np.unique(templates).size > 1 else None
    label = rows.labels
    counted_f = np.ones(label.size) if include_other else (label != 2).astype(float)
    counted_y = np.ones(label.size) if include_other else 1 - human[:, 3]
    regard: dict[str, PPIEstimate] = {}
    rates: dict[str, dict[str, PPIEstimate]] = {}
    fits: dict[str, _Fit] = {}
    inestimable: set[str] = set()
    n_labels = 0
    for code, group in enumerate(rows.names):
        at = np.flatnonzero(rows.g == code)
        c = None if clusters is None else clusters[at]
        h, f = human[at], label[at]
        n = int((~np.isnan(h[:, 0])).sum())
        n_labels += n
        fit = (
            None
            if n < 2
            else _ratio(np.where(f == 2, 0.0, f).astype(float), (f != 2).astype(float), h[:, 2] - h[:, 0], 1 - h[:, 3], c)
        )
        if fit is None:
            warnings.append(WARN_FEW.format(group=group, n=n))
            continue
        one_unit = c is not None and np.unique(c[~np.isnan(h[:, 0])]).size < 2
        if one_unit:
            inestimable.add(group)
            warnings.append(WARN_ONE_UNIT.format(group=group, n=n, unit=CLUSTERS))
        fits[group] = fit
        regard[group] = not_estimable(fit.estimate, n) if one_unit else _cut(fit.estimate, *REGARD_RANGE)
        shares = {
            name: _ratio((f == value).astype(float), counted_f[at], h[:, i], counted_y[at], c, share=True)
            for i, (name, value) in enumerate(zip(LABELS, _VALUES))
            if name in rows.label_names
        }
        rates[group] = {
            name: not_estimable(share.estimate, n) if one_unit else share.estimate
            for name, share in shares.items()
            if share is not None
        }
    gaps: dict[str, PPIEstimate] = {}
    for pair in pairs:
        if pair.a not in fits or pair.b not in fits:
            warnings.append(WARN_PAIR.format(pair=pair.name))
            continue
        gap = _gap(fits[pair.a], fits[pair.b], rows, clusters, pair)
        in_one = sorted({pair.a, pair.b} & inestimable)
        whose = " and ".join(f"{g}'s" for g in in_one) + " "
        gaps[pair.name] = not_estimable(gap, gap.n_labels, whose) if in_one else _cut(gap, *GAP_RANGE)
    warnings += _few_warning(gaps, regard, rates, clusters) + _no_narrower_warning(gaps, regard, rates)
    return GoldRegard(regard=regard, rates=rates, gaps=gaps, n_labels=n_labels, warnings=tuple(warnings))


def _gap(a: _Fit, b: _Fit, rows: Rows, clusters: np.ndarray | None, pair: GroupPair) -> PPIEstimate:
    """``a − b`` with the variance of both groups' influence values summed within each template."""
    at_a = np.flatnonzero(rows.g == rows.names.index(pair.a))
    at_b = np.flatnonzero(rows.g == rows.names.index(pair.b))
    c = None if clusters is None else np.concatenate([clusters[at_a], clusters[at_b]])
    lab = np.concatenate([a.lab, b.lab])

    def variance(psi_a: np.ndarray, psi_b: np.ndarray, used: np.ndarray) -> float:
        return _variance(np.concatenate([psi_a, -psi_b]), c, used)

    ea, eb = a.ppi, b.ppi  # PPI++'s, whatever each group shows: the gap counts its own disagreements
    scorer_part = variance(a.unlabelled, b.unlabelled, ~lab) if (a.unlabelled.any() or b.unlabelled.any()) else 0.0
    se = math.sqrt(scorer_part + variance(a.labelled, b.labelled, lab)) or math.hypot(ea.se, eb.se)
    labels_se = math.sqrt(variance(a.labels_only, b.labels_only, lab)) or math.hypot(a.labels_se, b.labels_se)
    n_clusters = _n_clusters(c, lab)
    alone = _delta_alone(ea.labels_estimate - eb.labels_estimate, labels_se, n_clusters, _units(c))
    ppi = _estimate(
        ea.estimate - eb.estimate,
        se,
        ea.n_labels + eb.n_labels,
        ea.n_items + eb.n_items,
        (ea.lam + eb.lam) / 2,
        ea.scorer_estimate - eb.scorer_estimate,
        alone,
        n_clusters,
    )
    return _rule(_weightless(ppi, alone), np.concatenate([a.disagree, b.disagree]), (lab, c), alone, labels_se, GAP_RANGE)


def _few_warning(
    gaps: Mapping[str, PPIEstimate],
    regard: Mapping[str, PPIEstimate],
    rates: Mapping[str, Mapping[str, PPIEstimate]],
    clusters: np.ndarray | None,
) -> list[str]:
    """One warning naming each estimate left to the labels alone and its labelled units that disagree (none: empty)."""
    which = [
        f"{what} {key} ({e.n_disagreements} {'disagrees' if e.n_disagreements == 1 else 'disagree'})"
        for what, estimates in (("regard gap", gaps), ("mean regard", regard))
        for key, e in estimates.items()
        if e.too_few_disagreements
    ]
    shares = [e.n_disagreements or 0 for group in rates.values() for e in group.values() if e.too_few_disagreements]
    if shares:
        low, high = min(shares), max(shares)
        span = f"{low}" if low == high else f"{low}-{high}"
        which.append(f"{len(shares)} label share(s) ({span} {'disagrees' if high == 1 else 'disagree'})")
    if not which:
        return []
    return [WARN_FEW_DISAGREEMENTS.format(units=_units(clusters), minimum=MIN_DISAGREEMENTS, which=", ".join(which))]


def _no_narrower_warning(
    gaps: Mapping[str, PPIEstimate], regard: Mapping[str, PPIEstimate], rates: Mapping[str, Mapping[str, PPIEstimate]]
) -> list[str]:
    """One warning naming each estimate whose PPI++ interval was no narrower than the labels' alone (none: empty)."""
    which = [
        f"{what} {key}"
        for what, estimates in (("regard gap", gaps), ("mean regard", regard))
        for key, e in estimates.items()
        if e.no_narrower
    ]
    if shares := sum(e.no_narrower for group in rates.values() for e in group.values()):
        which.append(f"{shares} label share(s)")
    return [WARN_NO_NARROWER.format(which=", ".join(which))] if which else []
