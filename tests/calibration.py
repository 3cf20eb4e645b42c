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
    return Population({m: np.asarray(v, float) for m, v in a.items()},
                      {m: np.asarray(v, float) for m, v in b.items()}, np.asarray(cluster))  # fmt: skip


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


def simulate(pop: Population, *, n: int, runs: int, seed: int, design: str = "pairs",
             alpha: float = 0.05) -> Calibration:  # fmt: skip
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
    return Calibration({m: rejected[m] / runs for m in MEASURES}, family_errors / runs,
                       {m: covered[m] / runs for m in MEASURES})  # fmt: skip
