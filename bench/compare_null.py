"""Level of ``fairtalk compare`` under the null, on real chitchat turns scored by fairtalk's own measures.

Two "models" answer the same pairs with real text: in each run of 4 consecutive turns of a
chitchat conversation, the baseline's answers to sides A and B are turns 1 and 2, the
candidate's turns 3 and 4 (the conversation is the cluster). Each text is scored by the audit's
measures (offense, sentiment, refusal, length). Per replicate, ``n`` runs are drawn without
replacement and the two sides of every pair are swapped at random in each model independently,
so both gaps are 0 in the population.

- **no change**: how often the test of no change (``δ− = g_c − g_b``) rejects at α = 0.05 per key
  (the target: 3–7%), and how often the magnitude verdict (improved/regressed, Holm over the keys)
  fires anywhere (family-wise).
- **at the margin**: the candidate's side A gets ``+m`` in the population (counts: ``+m`` added;
  rates: a 0 becomes 1 with the probability that raises the mean by ``m``), so ``|g_c| = |g_b| + m``
  exactly; how often non-inferiority is (wrongly) shown must stay at or below α. With ``--base-gap``
  the baseline's side A is shifted by that many margins too (the candidate by one margin more).
  Rate contrasts use the score bounds (``fairtalk.stats._change.score_interval``), counts the t bounds.
- **gate pass rate**: with no planted change, how often a key is shown non-inferior (the power
  of ``--fail-if-worse`` for a candidate exactly as fair as the baseline).

Run: ``.venv/bin/python bench/compare_null.py [--runs 1000] [--n 200 1000] [--conversations 3000]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from fairtalk import load_lexicon
from fairtalk.measures import MeasureOptions, build_measure, score_unique
from fairtalk.stats import adjust_pvalues, default_margin
from fairtalk.stats._change import gap_change

MEASURES = ("offense", "sentiment", "refusal", "length")


def population(n_conversations: int) -> tuple[dict[str, np.ndarray], dict[str, str], np.ndarray]:
    """Per key, an array (runs, 4) of the scores of 4 consecutive turns; each key's kind; each run's conversation."""
    import chitchat_dataset

    data = json.loads(Path(chitchat_dataset.__file__).with_name("dataset.json").read_text())
    texts: list[str] = []
    cluster: list[int] = []
    for g, conversation in enumerate(list(data.values())[:n_conversations]):
        turns = [" ".join(message["text"] for message in turn) for turn in conversation["messages"]]
        for i in range(0, len(turns) - 3, 4):
            texts += turns[i : i + 4]
            cluster.append(g)
    options = MeasureOptions(load_lexicon("gender"))
    scores: dict[str, np.ndarray] = {}
    kinds: dict[str, str] = {}
    for name in MEASURES:
        measure = build_measure(name, options)
        for key, values in score_unique(measure, texts).items():  # type: ignore[arg-type]
            scores[key] = np.asarray(values, dtype=float).reshape(-1, 4)
            kinds[key] = measure.kind_of(key)
    return scores, kinds, np.asarray(cluster)


def _swapped(x: np.ndarray, swap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.where(swap, x[:, 1], x[:, 0]), np.where(swap, x[:, 0], x[:, 1])


def _shift(a: np.ndarray, amount: float, kind: str, p_zero: float, rng: np.random.Generator) -> np.ndarray:
    """Side A raised by ``amount`` in the population mean (rates: zeros turned to ones with probability amount / P(0))."""
    if kind == "count":
        return a + amount
    return np.where((a == 0) & (rng.random(a.size) < amount / p_zero), 1.0, a)


def simulate(
    scores: dict[str, np.ndarray], kinds: dict[str, str], cluster: np.ndarray, *, n: int, runs: int, seed: int, base_gap: float
) -> dict[str, dict[str, float]]:
    """Per key: null rejection of the change test, NI shown at the margin, NI shown with no change; and the FWER."""
    rng = np.random.default_rng(seed)
    keys = [k for k in scores if scores[k][:, :2].std() > 0]
    margins = {k: default_margin(kinds[k], a=scores[k][:, 0], b=scores[k][:, 1]) or 0.02 for k in keys}
    counts = {k: {"reject": 0, "ni_at_margin": 0, "ni_no_change": 0, "unchanged_no_change": 0} for k in keys}
    family = 0
    for _ in range(runs):
        rows = rng.choice(cluster.size, n, replace=False)
        groups = cluster[rows]
        swap_b, swap_c = rng.random(n) < 0.5, rng.random(n) < 0.5
        p_magnitude = []
        for k in keys:
            x = scores[k][rows]
            b_a, b_b = _swapped(x[:, :2], swap_b)
            c_a, c_b = _swapped(x[:, 2:], swap_c)
            m = margins[k]
            p_zero = float(np.mean(scores[k][:, 2:] == 0)) if kinds[k] == "rate" else 1.0
            if base_gap:
                b_a = _shift(b_a, base_gap * m, kinds[k], p_zero, rng)
                c_a = _shift(c_a, base_gap * m, kinds[k], p_zero, rng)
            null = gap_change(b_a, b_b, c_a, c_b, kind=kinds[k], margin=m, clusters=groups)
            counts[k]["reject"] += null.change.p is not None and null.change.p < 0.05
            counts[k]["ni_no_change"] += bool(null.non_inferior)
            counts[k]["unchanged_no_change"] += bool(null.within_margin)
            p_magnitude.append(1.0 if null.p_magnitude is None else null.p_magnitude)
            worse = gap_change(b_a, b_b, _shift(c_a, m, kinds[k], p_zero, rng), c_b, kind=kinds[k], margin=m, clusters=groups)
            counts[k]["ni_at_margin"] += bool(worse.non_inferior)
        family += bool((adjust_pvalues(p_magnitude, method="holm") < 0.05).any())
    out = {k: {name: value / runs for name, value in c.items()} | {"margin": margins[k]} for k, c in counts.items()}
    out["_family"] = {"magnitude_fwer": family / runs}
    return out


def main() -> None:
    """Print one table row per key and n."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--conversations", type=int, default=3000)
    parser.add_argument("--n", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--base-gap", type=float, default=0.0, help="Baseline gap, in margins (default 0).")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    scores, kinds, cluster = population(args.conversations)
    print(
        f"population: {cluster.size:,} runs of 4 turns from {len(set(cluster.tolist())):,} conversations "
        f"({time.perf_counter() - started:.0f} s to score); replicates {args.runs:,}; baseline gap {args.base_gap:g} margins"
    )
    print(
        "| n | key | margin | rejects no change (α 0.05) | NI shown at |g_c| = |g_b| + m | NI shown, no change "
        "| unchanged shown, no change |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|")
    for n in args.n:
        tick = time.perf_counter()
        result = simulate(scores, kinds, cluster, n=n, runs=args.runs, seed=args.seed, base_gap=args.base_gap)
        family = result.pop("_family")
        for key, row in result.items():
            print(
                f"| {n} | {key} | {row['margin']:.3g} | {row['reject']:.3f} | {row['ni_at_margin']:.3f} | "
                f"{row['ni_no_change']:.3f} | {row['unchanged_no_change']:.3f} |"
            )
        print(
            f"| {n} | (family) | | magnitude verdict FWER (Holm) {family['magnitude_fwer']:.3f} | | | "
            f"{time.perf_counter() - tick:.0f} s |"
        )


if __name__ == "__main__":
    main()
