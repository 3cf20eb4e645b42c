"""A realistic paired population from chitchat, and a seeded simulation of the audit's default tests on it.

Shared by ``tests/test_stats.py`` (small, in ``make test``) and ``bench/stats_calibration.py``
(larger). A pair is two adjacent turns of one real conversation: side A the earlier turn,
side B the next. Each text gets the kind of score an audit gives a response: its word count
and VADER compound score (counts), VADER-positive (compound >= 0.5) and "asks a question"
(rates). The conversation is the pair's cluster.

- **null**: draw ``n`` pairs (or whole conversations) with replacement and swap the two
  sides of each pair with probability 1/2: A and B are then exchangeable, so every test
  should reject at about α, and Holm should keep the family-wise error at or below α.
- **coverage**: draw without swapping; the population's mean difference is the true value,
  and each default 95% interval should contain it about 95% of the time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fairtalk.stats import adjust_pvalues, difference_interval, paired_test

RATES = ("positive", "question")
COUNTS = ("words", "compound")
MEASURES = RATES + COUNTS


@dataclass(frozen=True)
class Population:
    """Per-pair scores of both sides for each measure, and each pair's conversation."""

    a: dict[str, np.ndarray]
    b: dict[str, np.ndarray]
    cluster: np.ndarray

    @property
    def n_pairs(self) -> int:
        return int(self.cluster.size)

    def true_difference(self, measure: str) -> float:
        return float(np.mean(self.a[measure] - self.b[measure]))


def chitchat_population(n_conversations: int = 1500) -> Population:
    """Adjacent turn pairs from the first ``n_conversations`` chitchat conversations, scored."""
    import chitchat_dataset
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    data = json.loads(Path(chitchat_dataset.__file__).with_name("dataset.json").read_text())
    vader = SentimentIntensityAnalyzer()
    a: dict[str, list[float]] = {m: [] for m in MEASURES}
    b: dict[str, list[float]] = {m: [] for m in MEASURES}
    cluster: list[int] = []

    def score(text: str, into: dict[str, list[float]]) -> None:
        compound = vader.polarity_scores(text)["compound"]
        into["words"].append(len(text.split()))
        into["compound"].append(compound)
        into["positive"].append(float(compound >= 0.5))
        into["question"].append(float("?" in text))

    for g, conversation in enumerate(list(data.values())[:n_conversations]):
        turns = [" ".join(message["text"] for message in turn) for turn in conversation["messages"]]
        for i in range(0, len(turns) - 1, 2):
            score(turns[i], a)
            score(turns[i + 1], b)
            cluster.append(g)
    return Population(
        {m: np.asarray(v, float) for m, v in a.items()}, {m: np.asarray(v, float) for m, v in b.items()}, np.asarray(cluster)
    )


@dataclass(frozen=True)
class Calibration:
    """Rejection rate per measure, the Holm family-wise error, and interval coverage per measure."""

    rejection: dict[str, float]
    fwer: float
    coverage: dict[str, float]


def _draw(pop: Population, n: int, rng: np.random.Generator, design: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Rows of ``n`` pairs drawn with replacement, and their cluster ids (None for ``design="pairs"``).

    ``pairs``: independent pairs. ``sampled``: pairs drawn uniformly, clustered by their
    conversation (what ``--n`` does on a corpus). ``conversations``: whole conversations, each
    draw its own cluster (the stress case: a few long dialogues hold most pairs).
    """
    if design == "pairs":
        return rng.integers(0, pop.n_pairs, n), None
    if design == "sampled":
        rows = rng.choice(pop.n_pairs, n, replace=False)
        return rows, pop.cluster[rows]
    by_cluster = np.split(np.arange(pop.n_pairs), np.flatnonzero(np.diff(pop.cluster)) + 1)
    rows: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    while sum(r.size for r in rows) < n:
        drawn = by_cluster[int(rng.integers(0, len(by_cluster)))]
        rows.append(drawn)
        ids.append(np.full(drawn.size, len(ids)))
    return np.concatenate(rows), np.concatenate(ids)


def simulate(pop: Population, *, n: int, runs: int, seed: int, design: str = "pairs", alpha: float = 0.05) -> Calibration:
    """Null rejection, Holm FWER and coverage of the default tests and intervals at ``n`` pairs."""
    rng = np.random.default_rng(seed)
    rejected = {m: 0 for m in MEASURES}
    covered = {m: 0 for m in MEASURES}
    family_errors = 0
    for run in range(runs):
        rows, groups = _draw(pop, n, rng, design)
        swap = rng.random(rows.size) < 0.5
        p_values = []
        for m in MEASURES:
            kind = "rate" if m in RATES else "count"
            a, b = pop.a[m][rows], pop.b[m][rows]
            null_a, null_b = np.where(swap, b, a), np.where(swap, a, b)
            p = paired_test(null_a, null_b, kind=kind, clusters=groups).p
            p_values.append(1.0 if p is None else p)
            rejected[m] += p is not None and p < alpha
            ci = difference_interval(a, b, kind=kind, clusters=groups)
            truth = pop.true_difference(m)
            covered[m] += ci.low is not None and ci.high is not None and ci.low <= truth <= ci.high
        family_errors += bool((adjust_pvalues(p_values, method="holm") < alpha).any())
    return Calibration({m: rejected[m] / runs for m in MEASURES}, family_errors / runs, {m: covered[m] / runs for m in MEASURES})


@dataclass(frozen=True)
class PowerCheck:
    """Power at the printed minimum detectable effect: the new MDE's and the old normal formula's, and the mean MDEs."""

    power: float
    power_old: float
    mde: float
    mde_old: float


def _inject(a: np.ndarray, b: np.ndarray, kind: str, effect: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A candidate with a true difference ``effect``: counts shifted; rates with new one-way discordant pairs.

    For a rate, each concordant pair becomes discordant in A's favour with probability
    ``effect / concordant share`` ((0, 0) gets A = 1, (1, 1) gets B = 0): the discordance grows
    with the effect, as it does when a model's answers really change.
    """
    if kind == "count":
        return a + effect, b
    concordant = a == b
    flip = concordant & (rng.random(a.size) < effect / max(float(concordant.mean()), 1e-12))
    a, b = a.copy(), b.copy()
    a[flip & (a == 0)] = 1.0
    b[flip & (b == 1)] = 0.0
    return a, b


def mde_power(
    a: np.ndarray,
    b: np.ndarray,
    cluster: np.ndarray | None,
    *,
    kind: str,
    n_units: int,
    runs: int,
    seed: int,
    alpha: float = 0.05,
    family: int = 1,
    power: float = 0.8,
) -> PowerCheck:
    """Inject an effect of exactly the printed MDE into null resamples of real pairs; how often is it detected?

    Each run draws ``n_units`` dialogues (``cluster`` given: whole dialogues, the units of the
    cluster tests) or pairs with replacement, swaps sides at random (the null), computes the
    MDE the audit prints at ``alpha / family``, plants an effect of that size and tests at that
    level with the audit's default test for ``kind``.
    """
    from fairtalk.stats import PowerBasis, mde, minimum_detectable_effect, units

    rng = np.random.default_rng(seed)
    by_cluster = None
    if cluster is not None:
        order = np.argsort(cluster, kind="stable")
        by_cluster = np.split(order, np.flatnonzero(np.diff(cluster[order])) + 1)
    level = alpha / family
    hits = hits_old = 0
    mdes, mdes_old = [], []
    for run in range(runs):
        if by_cluster is None:
            rows, groups = rng.integers(0, a.size, n_units), None
        else:
            drawn = rng.integers(0, len(by_cluster), n_units)
            rows = np.concatenate([by_cluster[g] for g in drawn])
            groups = np.repeat(np.arange(n_units), [by_cluster[g].size for g in drawn])
        swap = rng.random(rows.size) < 0.5
        null_a, null_b = np.where(swap, b[rows], a[rows]), np.where(swap, a[rows], b[rows])
        d = null_a - null_b
        discordance = float(np.count_nonzero(d)) / d.size
        method = "score" if kind == "rate" else "mean"  # the audit's default tests (issue 39: a rate's score test)
        u = units(d, groups)
        basis = PowerBasis(
            "rate_mean" if kind == "rate" else "mean", n=d.size, se=u.standard_error(), df=u.df, discordance=discordance
        )
        old_test = "mcnemar_exact" if kind == "rate" else "mean"  # the old formula read Newcombe's interval for a rate
        interval = difference_interval(null_a, null_b, kind=kind, test=old_test, clusters=groups)
        for effect, old in (
            (mde(basis, alpha=level, power=power), False),
            (minimum_detectable_effect(interval.bounds, alpha=level, power=power), True),
        ):
            if effect is None:
                continue
            planted_a, planted_b = _inject(null_a, null_b, kind, effect, rng)
            p = paired_test(planted_a, planted_b, kind=kind, method=method, clusters=groups, seed=run).p
            detected = p is not None and p < level
            if old:
                hits_old += detected
                mdes_old.append(effect)
            else:
                hits += detected
                mdes.append(effect)
    return PowerCheck(hits / runs, hits_old / runs, float(np.mean(mdes)), float(np.mean(mdes_old)))
