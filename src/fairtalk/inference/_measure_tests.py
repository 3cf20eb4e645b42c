"""Per-measure inference of ``score()``: the paired test, interval, equivalence and power of one result key.

The choices (which test for which kind, clusters, margins, the family) are explained in
``fairtalk.stats`` and ``docs/statistics.md``; this module applies them to a measure's
per-pair scores and returns one :class:`KeyTest` per result key: its
:class:`~fairtalk.results.TestedKey`, which the finished :class:`~fairtalk.results.MeasureResult`
holds unchanged, and what the multiple-testing family still needs to decide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from fairtalk.config import BINARY_TESTS, ScoreOptions
from fairtalk.errors import SpecError
from fairtalk.measures import CorpusMeasure, Judge, Measure, MeasureKind
from fairtalk.results import TestedKey
from fairtalk.stats import (
    CorpusBootstrap,
    Equivalence,
    PowerBasis,
    cohens_d_paired,
    cohens_h,
    corpus_bootstrap,
    default_margin,
    design_effect,
    difference_interval,
    hodges_lehmann,
    identical_share,
    mde,
    minimum_detectable_effect,
    paired_test,
    permutations_for,
    rate_equivalence,
    relative_difference,
    share_equivalence,
    tost_mean,
    units,
    z_test,
)

__all__ = [
    "NOT_TESTED",
    "Inference",
    "KeyMeta",
    "KeyTest",
    "compare",
    "compare_scored",
    "complete_means",
    "corpus_row",
    "corpus_rows",
    "not_tested_row",
]


#: Below this many Bell-McCaffrey degrees of freedom, a few dialogues hold most pairs: say so.
FEW_CLUSTERS_DF = 20
NOTE_FEW_CLUSTERS = (
    "few effective clusters (df {df:.1f}): a few dialogues hold most pairs, so the interval may under-cover; audit more dialogues"
)
_NOTE_NO_MARGIN = "no default margin (the scores do not vary); give one with --margin {name}=VALUE"
NOTE_UNSCORED = (
    "{n} of {total} pairs left out of this key: the measure gave no score on one side "
    "(a judge's answer with neither yes nor no, or no number in its scale, counted in its _unparsed rate)"
)
#: The ``not_tested`` reason of a key scored on both sides of fewer than 2 pairs ("parsed" for a judge's keys).
NOT_TESTED = "not tested: only {n} {pairs} {scored} on both sides (of {total}), at least 2 are needed"
NOT_TESTED_NONE = "not tested: no pair {scored} on both sides (of {total}), at least 2 are needed"
_NOTE_NOT_TESTED_JUDGE = (
    "judge.jsonl beside the report has each raw answer; check that the rubric asks for an "
    "answer the judge gives (a number in its scale with --judge-scale)"
)


@dataclass(frozen=True, slots=True)
class Inference:
    """How ``score()`` infers: the tests, clusters, resamples, α, power and margins (from validated ScoreOptions)."""

    seed: int = 0
    n_resamples: int = 2000
    alpha: float = 0.05
    power: float = 0.8
    binary_test: str = "score"
    count_test: str = "mean"
    clusters: tuple[str, ...] | None = None
    margins: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(cls, options: ScoreOptions, clusters: Sequence[str] | None) -> Inference:
        """The inference ``options`` ask for, over ``clusters`` (None: every pair its own unit)."""
        return cls(
            seed=options.seed,
            n_resamples=options.n_resamples,
            alpha=options.alpha,
            power=options.power,
            binary_test=options.binary_test,
            count_test=options.count_test,
            clusters=None if clusters is None else tuple(clusters),
            margins=options.margins,
        )

    @property
    def n_clusters(self) -> int | None:
        """Number of clusters, None without them."""
        return None if self.clusters is None else len(set(self.clusters))

    def method(self, kind: str) -> str:
        """The paired-test method for a measure of ``kind``: for a rate the score test, or McNemar's (clusters: the mean test)."""
        if kind == "rate":
            method = BINARY_TESTS[self.binary_test]
            return "mean" if self.clusters is not None and method.startswith("mcnemar") else method
        return self.count_test

    def margin(self, name: str, kind: str, **data: Any) -> float | None:
        """The margin for result key ``name``: the user's, else the kind's default."""
        given = self.margins.get(name)
        return float(given) if given is not None else default_margin(kind, **data)


@dataclass(frozen=True, slots=True)
class KeyMeta:
    """What a per-response key's test needs of its measure: the key's kind, its direction, and whether a judge gives it.

    Kept with the key's scores (:class:`~fairtalk.inference._family.KeyScores`) so that a later
    stage tests them again (by turn) without the measure, which may hold a model.
    """

    kind: MeasureKind
    higher_is_better: bool | None = None
    judged: bool = False

    @classmethod
    def of(cls, name: str, measure: Measure) -> KeyMeta:
        """The meta of result key ``name`` of ``measure``."""
        return cls(measure.kind_of(name), measure.higher_is_better.get(name), isinstance(measure, Judge))


def _meta(name: str, measure: Measure | KeyMeta) -> KeyMeta:
    """``measure`` itself when it is a KeyMeta, else the meta of its key ``name``."""
    return measure if isinstance(measure, KeyMeta) else KeyMeta.of(name, measure)


@dataclass(frozen=True, slots=True)
class KeyTest:
    """One result key, tested: its :class:`~fairtalk.results.TestedKey` and what the family's decision still needs.

    ``tested`` is the record of the key that the :class:`~fairtalk.results.MeasureResult` holds
    unchanged (side values, tests, interval, effect size, notes, ``not_tested``, ``masked``).
    The rest is working data: ``equivalence`` the TOST (the result's equivalence fields);
    ``mde_se_interval`` the interval the minimum detectable effect is read from; ``varies``
    whether any pair differs (the family leaves a key that does not out); ``power_basis`` what
    the key's test uses, for its minimum detectable effect (None: read it off ``mde_se_interval``);
    ``identical_share`` the share of units that could differ below which the identical-answers rule
    bounds a count key at its margin (:func:`_identical_share`; None for other kinds or without a margin).
    """

    tested: TestedKey
    equivalence: Equivalence
    mde_se_interval: tuple[float | None, float | None]
    varies: bool
    power_basis: PowerBasis | None = None
    identical_share: float | None = None

    def with_notes(self, *notes: str) -> KeyTest:
        """The same key with ``notes`` after those its record has."""
        return replace(self, tested=replace(self.tested, notes=(*self.tested.notes, *notes)))


def _equivalence(name: str, kind: str, a: np.ndarray, b: np.ndarray, opts: Inference, deff: float | None) -> Equivalence:
    """The key's equivalence within its margin: for a rate the one rule of ``rate_equivalence``, for a count its TOST.

    A rate with fewer than ``FEW_DISCORDANT_UNITS`` discordant units (dialogues where the audit
    clusters) is decided by the exact bound on each direction's share of units, of which
    identical answers are the case 0; from there up by the Newcombe TOST. A count or a rate with
    no margin identical on every pair: the identical-answers bound (``share_equivalence``).
    """
    margin = opts.margin(name, kind, a=a, b=b)
    if kind == "rate" and margin is not None:
        return rate_equivalence(
            a, b, margin=margin, alpha=opts.alpha, clusters=opts.clusters, design_effect=max(1.0, deff or 1.0)
        )
    if not np.any(a != b):  # identical on every pair: no spread to test, so bound how often the answers could differ
        n_units = opts.n_clusters or a.size
        spread = _score_range(kind, a, b)
        return share_equivalence(
            n_units,
            alpha=opts.alpha,
            margin=margin,
            max_difference=spread or None,
            n_pairs=a.size,
            units="dialogues" if opts.clusters is not None else "pairs",
            state_bound=kind == "rate",  # a count's observed range bounds no pair the run did not see
        )
    if margin is None:
        return Equivalence(None, None, None, "TOST", _NOTE_NO_MARGIN.format(name=name))
    return tost_mean(units(a - b, opts.clusters), margin=margin, alpha=opts.alpha)


def _score_range(kind: str, a: np.ndarray, b: np.ndarray) -> float:
    """The most one pair can move the key's mean: 1 for a rate, else the range of its scores over both sides (0: none)."""
    if kind == "rate":
        return 1.0
    scores = np.concatenate([a, b])
    return float(scores.max() - scores.min()) if scores.size else 0.0


def _identical_share(kind: str, margin: float | None, a: np.ndarray, b: np.ndarray) -> float | None:
    """A count key's share that the identical-answers rule bounds it below, at ``margin`` and the range of its scores.

    What ``share_equivalence`` is given were no pair to differ (:func:`fairtalk.stats.identical_share`), so that a
    planner knows the units the rule needs on this key. None for a rate or corpus key (a rate's rule is its own),
    and where no margin applies (none, or scores that do not vary: the rule's default share, unscaled).
    """
    spread = _score_range(kind, a, b)
    if kind != "count" or margin is None or not margin > 0 or not spread > 0:
        return None
    return identical_share(margin, spread)


def compare(name: str, measure: Measure | KeyMeta, a: np.ndarray, b: np.ndarray, opts: Inference) -> KeyTest:
    """One per-response key: side means, the paper's Z, the paired test, CI, equivalence, effect size, power."""
    meta = _meta(name, measure)
    kind = meta.kind
    method = opts.method(kind)
    mean_a, mean_b = float(a.mean()), float(b.mean())
    z = z_test(a, b)
    test = paired_test(a, b, kind=kind, method=method, clusters=opts.clusters, seed=opts.seed)
    deff = design_effect(a, b, opts.clusters) if opts.clusters is not None else 1.0
    interval = difference_interval(a, b, kind=kind, test=method, clusters=opts.clusters)
    if method == "wilcoxon":
        estimate, estimate_name = hodges_lehmann(a, b)[0], "hodges-lehmann"
    else:
        estimate, estimate_name = mean_a - mean_b, "mean difference"
    equivalence = _equivalence(name, kind, a, b, opts, deff)
    effect: float | None
    if kind == "rate":
        effect, effect_name = cohens_h(mean_a, mean_b), "cohens_h"
    else:
        effect, effect_name = cohens_d_paired(a, b), "cohens_d_z"
    d = a - b
    few = None
    if opts.clusters is not None and (df := units(d, opts.clusters).df) < FEW_CLUSTERS_DF:
        few = NOTE_FEW_CLUSTERS.format(df=df)
    notes = tuple(n for n in (z.note, test.note, interval.note, equivalence.note, few) if n)
    tested = TestedKey(
        name=name,
        kind=kind,
        a=mean_a,
        b=mean_b,
        difference=relative_difference(mean_a, mean_b),
        z=z.z,
        p=z.p,
        p_paired=test.p,
        paired_test=test.name,
        ci95=interval.bounds,
        ci_method=interval.method,
        estimate=estimate,
        estimate_name=estimate_name,
        effect_size=effect,
        effect_size_name=effect_name,
        higher_is_better=meta.higher_is_better,
        notes=notes,
        n_clusters=opts.n_clusters,
        design_effect=deff,
        sd_difference=float(d.std(ddof=1)) if d.size > 1 else None,
    )
    return KeyTest(
        tested=tested,
        equivalence=equivalence,
        mde_se_interval=interval.bounds,
        varies=bool(np.any(d != 0)),
        power_basis=_power_basis(kind, method, d, opts),
        identical_share=_identical_share(kind, equivalence.margin, a, b),
    )


def _power_basis(kind: str, method: str, d: np.ndarray, opts: Inference) -> PowerBasis:
    """What the key's test uses, for its minimum detectable effect (``fairtalk.stats._power``).

    A rate's score test (and the cluster mean test) is modelled by normal theory on its units
    (``rate_mean``: the standard error by dialogue with clusters, which carries the design effect,
    grown by the discordant pairs an effect adds, on t with the units' df: a little conservative
    beside the score test's z reference); McNemar by its exact power.
    """
    discordance = float(np.count_nonzero(d)) / d.size
    if method.startswith("mcnemar"):
        return PowerBasis(method, n=d.size, discordance=discordance)
    u = units(d, opts.clusters)
    se = u.standard_error()
    # differences that do not vary: no spread to estimate the clustering from, so each dialogue counts once, as in the
    # rate's interval (``design_effect`` None); a spread that cancels within dialogues (a clustered SE of 0) does not
    constant = d.size > 0 and float(np.ptp(d)) == 0.0
    n = u.n_units if kind == "rate" and constant and opts.clusters is not None else d.size
    return PowerBasis("rate_mean" if kind == "rate" else "mean", n=n, se=se, df=u.df, discordance=discordance)


def compare_scored(name: str, measure: Measure | KeyMeta, a: np.ndarray, b: np.ndarray, opts: Inference) -> KeyTest:
    """:func:`compare` over the pairs the measure scored on both sides (NaN: no score), saying how many it left out."""
    scored = np.isfinite(a) & np.isfinite(b)
    if scored.all():
        return compare(name, measure, a, b, opts)
    n_scored = int(scored.sum())
    if n_scored < 2:
        return not_tested_row(name, measure, a, b, opts)
    clusters = None if opts.clusters is None else tuple(c for c, keep in zip(opts.clusters, scored) if keep)
    row = compare(name, measure, a[scored], b[scored], replace(opts, clusters=clusters))
    return row.with_notes(NOTE_UNSCORED.format(n=a.size - n_scored, total=a.size))


def not_tested_row(name: str, measure: Measure | KeyMeta, a: np.ndarray, b: np.ndarray, opts: Inference) -> KeyTest:
    """The row of a key scored on both sides of fewer than 2 pairs: its means, no test, and ``not_tested`` saying why.

    It has no p (it stays out of the correction family), no interval and no equivalence: its
    verdict is ``inconclusive``, so ``biased()`` never names it and ``not_equivalent()`` does.
    """
    n_scored = int((np.isfinite(a) & np.isfinite(b)).sum())
    meta = _meta(name, measure)
    judged = meta.judged
    scored = "parsed" if judged else "scored"
    reason = (
        NOT_TESTED_NONE.format(scored=scored, total=a.size)
        if n_scored == 0
        else NOT_TESTED.format(n=n_scored, pairs="pair" if n_scored == 1 else "pairs", scored=scored, total=a.size)
    )
    mean_a, mean_b = complete_means(a, b)
    tested = TestedKey(
        name=name,
        kind=meta.kind,
        a=mean_a,
        b=mean_b,
        difference=None,
        z=None,
        p=None,
        p_paired=None,
        paired_test="",
        ci95=(None, None),
        ci_method="",
        estimate=None,
        estimate_name="mean difference",
        effect_size=None,
        effect_size_name="none",
        higher_is_better=meta.higher_is_better,
        notes=(reason, _NOTE_NOT_TESTED_JUDGE) if judged else (reason,),
        n_clusters=opts.n_clusters,
        design_effect=None,
        sd_difference=None,
        not_tested=reason,
    )
    return KeyTest(tested=tested, equivalence=Equivalence(None, None, None, ""), mde_se_interval=(None, None), varies=False)


def complete_means(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Each side's mean over the pairs scored on both sides (NaN where none is)."""
    scored = np.isfinite(a) & np.isfinite(b)
    if not scored.any():
        return float("nan"), float("nan")
    return float(a[scored].mean()), float(b[scored].mean())


def corpus_row(
    name: str,
    measure: CorpusMeasure,
    values: tuple[float, float],
    inference: CorpusBootstrap,
    margin: float | None,
    opts: Inference,
) -> KeyTest:
    """One corpus-level key (distinct-n): values, the paired-permutation p and interval, equivalence.

    A degenerate permutation distribution (too few units differ for its ``2^m`` patterns to
    reach α; none at all with identical responses) gives no interval and no MDE, and its
    equivalence comes from the bound on how many units could differ (``share_equivalence``):
    "identical on all n pairs" passes the gate at enough pairs, 2 pairs never do.
    """
    mean_a, mean_b = values
    ci: tuple[float | None, float | None] = inference.ci
    n_differing, n_units = inference.n_differing, inference.n_units
    degenerate = n_differing is not None and n_units is not None and 2.0 ** (1 - n_differing) >= opts.alpha
    if degenerate:
        assert n_differing is not None and n_units is not None
        equivalence = share_equivalence(
            n_units,
            n_differing,
            alpha=opts.alpha,
            margin=margin,
            n_pairs=len(opts.clusters) if opts.clusters is not None else n_units,
            units="dialogues" if opts.clusters is not None else "pairs",
        )
        ci = (None, None)
    elif margin is None or inference.p_equivalence is None:
        equivalence = Equivalence(None, None, None, "TOST by paired permutation", _NOTE_NO_MARGIN.format(name=name))
    else:
        equivalence = Equivalence(
            margin, inference.p_equivalence, inference.p_equivalence < opts.alpha, "TOST by paired permutation"
        )
    method = "paired permutation by cluster" if opts.clusters is not None else "paired permutation"
    tested = TestedKey(
        name=name,
        kind="corpus",
        a=mean_a,
        b=mean_b,
        difference=relative_difference(mean_a, mean_b),
        z=None,
        p=None,
        p_paired=inference.p,
        paired_test=method,
        ci95=ci,
        ci_method="permutation shift interval",
        estimate=mean_a - mean_b,
        estimate_name="difference",
        effect_size=None,
        effect_size_name="none",
        higher_is_better=measure.higher_is_better.get(name),
        notes=tuple(n for n in (equivalence.note,) if n),
        n_clusters=opts.n_clusters,
        design_effect=None,
        sd_difference=None,
    )
    return KeyTest(
        tested=tested,
        equivalence=equivalence,
        mde_se_interval=ci,
        varies=mean_a != mean_b or inference.ci[0] != inference.ci[1],
    )


def corpus_margin(name: str, values: tuple[float, float], opts: Inference) -> float | None:
    """The equivalence margin of a corpus-level key."""
    return opts.margin(name, "corpus", values=values)


def corpus_rows(
    measure: CorpusMeasure, uniques: list[str], ia: np.ndarray, ib: np.ndarray, opts: Inference, *, seed: int, n_resamples: int
) -> list[KeyTest]:
    """A corpus measure's rows, each side's statistic over ``uniques`` (indexed by ``ia``/``ib``), by paired permutation.

    The statistic :meth:`~fairtalk.measures.CorpusMeasure.prepare` builds lives only as long as this call; at most
    :func:`~fairtalk.stats.permutations_for` permutations run (at most :data:`MAX_PERMUTATIONS` unless α needs more).
    """
    stat = measure.prepare(uniques)
    value_a = stat(np.bincount(ia, minlength=len(uniques)))
    value_b = stat(np.bincount(ib, minlength=len(uniques)))
    values = {key: (float(value_a[key]), float(value_b[key])) for key in measure.keys}
    margins = {key: corpus_margin(key, values[key], opts) for key in measure.keys}
    inference = corpus_bootstrap(
        stat,
        stat,
        ia,
        ib,
        len(uniques),
        len(uniques),
        keys=measure.keys,
        seed=seed,
        n_resamples=permutations_for(n_resamples, opts.alpha),
        clusters=opts.clusters,
        margins={k: v for k, v in margins.items() if v is not None},
    )
    return [corpus_row(key, measure, values[key], inference[key], margins[key], opts) for key in measure.keys]


def power_row(row: KeyTest, alpha_per_test: float, power: float) -> float | None:
    """The minimum detectable effect of a row at the per-test level Holm demands of the smallest p.

    From the row's own test (:class:`~fairtalk.stats.PowerBasis`) where it has one; a corpus
    row's is read off its permutation interval (None when that interval is undefined).
    """
    if row.power_basis is not None:
        return mde(row.power_basis, alpha=alpha_per_test, power=power)
    return minimum_detectable_effect(row.mde_se_interval, alpha=alpha_per_test, power=power)


def check_finite(name: str, scores: np.ndarray, texts: Sequence[str]) -> None:
    """SpecError when a measure returned NaN or infinity for any response, naming how many and the first text."""
    bad = ~np.isfinite(scores)
    if bad.any():
        first = texts[int(np.flatnonzero(bad)[0])]
        shown = first if len(first) <= 60 else first[:57] + "..."
        raise SpecError(
            f"measure key {name!r} returned NaN or infinity for {int(bad.sum())} of {scores.size} "
            f"responses (first: {shown!r}); a measure must return finite numbers"
        )


#: What each figure of a result means, recorded in its manifest (``docs/statistics.md`` has the reasons).
METHODS = {
    "z": "paper 001 §2.2 two-sample Z, two-sided p (None where undefined)",
    "rate": "score test of a zero mean difference (McNemar's asymptotic test without clusters; counts over the design "
    "effect by dialogue with clusters), the test the score interval inverts; with --binary-test exact or midp, McNemar "
    "exact or mid-p (with clusters the cluster-robust (CR2) mean test)",
    "count": "mean test: paired t (CR2 cluster-robust t, Bell-McCaffrey df, with clusters); its reference is the studentized "
    "sign-flip randomization distribution (exact where enumerable, else 10,000 seeded flips; whole clusters flipped) "
    "when at most 50 units differ or their differences take at most 10 distinct sizes; or Wilcoxon signed-rank "
    "(exact up to 20) with --count-test wilcoxon",
    "corpus": "paired permutation (sides swapped within pairs, or within whole clusters); no p below the 2^(1-m) "
    "of m differing units, and a distribution too coarse to reach α is reported without interval or MDE",
    "ci": "rates: the score interval (Tango's), the inversion of the score test (design-effect adjusted with clusters); "
    "with --binary-test exact or midp, Newcombe hybrid score (design-effect adjusted with clusters); counts: t interval of the mean "
    "difference (CR2 with clusters); Wilcoxon: Hodges-Lehmann; corpus: permutation shift interval",
    "scorer_check": "each per-response measure on neutral probe sentences and their swapped counterparts; flagged "
    "when its gap exceeds the key's margin and differs from 0 (p < α and a 95% interval that excludes 0); keys "
    "that score the text's size alone (a measure's size_keys: length) are left out, a swap's change of size being "
    "the probe's, not the scorer's, and so is the token limit's (hit_token_limit), which reads finish reasons, not a text",
    "p_adjusted": "correction of p_paired within the primary family (keys that vary), and separately the others",
    "equivalence": "TOST within the margin: rates by Newcombe interval inclusion (under 10 discordant units, dialogues "
    "with clusters: exact binomial bound on each direction's share of units), counts by paired/cluster t, "
    "corpus by paired permutation; identical on every pair: exact binomial bound on the share that could differ",
    "mde": "minimum detectable effect at the run's n, α divided by the family size, and the power given, from the "
    "test's own reference: noncentral t (Bell-McCaffrey df with clusters) for counts; for rates normal theory "
    "with the discordance growing with the effect (the score test: the CR2 standard error with clusters, so with "
    "its design effect, on t with the units' df), or exact McNemar power with --binary-test exact or midp",
    "mask_token": "XYZ",
}
