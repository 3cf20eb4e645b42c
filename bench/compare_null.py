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
- ``--null-only``: only the test of no change, fast (no interval is searched): how often it rejects
  per key, beside the audit's paired mean test on the same ``d_i`` (the studentized sign-flip test,
  which ``compare`` used before its p became the inversion of the printed interval), and how often
  the two disagree. The test is the one ``contrast`` runs: the score test of 0
  (``fairtalk.stats._change.score_test``) for rates, the t test for counts.

Run: ``.venv/bin/python bench/compare_null.py [--runs 1000] [--n 200 1000] [--conversations 3000] [--null-only]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from fairtalk import load_lexicon
from fairtalk.measures import MeasureOptions, build_measure, score_unique
from fairtalk.stats import adjust_pvalues, default_margin, paired_test
from fairtalk.stats._change import contrast, gap_change, score_test

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


def _no_change_p(gap_c: np.ndarray, gap_b: np.ndarray, kind: str, groups: np.ndarray) -> tuple[float, float]:
    """The p of compare's test of no change (as ``contrast`` runs it, without its interval) and the paired mean test's."""
    d = gap_c - gap_b
    if not np.any(d):
        return 1.0, 1.0
    before = paired_test(gap_c, gap_b, kind="count", method="mean", clusters=groups).p
    p = score_test(d, clusters=groups) if kind == "rate" else None
    if p is None:
        p = contrast(gap_c, gap_b, clusters=groups, alpha=0.05, kind=kind).p
    return float(1.0 if p is None else p), float(1.0 if before is None else before)


def simulate_null(
    scores: dict[str, np.ndarray], kinds: dict[str, str], cluster: np.ndarray, *, n: int, runs: int, seed: int
) -> dict[str, dict[str, float]]:
    """Per key: how often the test of no change rejects at α = 0.05, the sign-flip test before it, and their disagreement."""
    rng = np.random.default_rng(seed)
    keys = [k for k in scores if scores[k][:, :2].std() > 0]
    counts = {k: {"reject": 0, "reject_signflip": 0, "disagree": 0} for k in keys}
    for _ in range(runs):
        rows = rng.choice(cluster.size, n, replace=False)
        groups = cluster[rows]
        swap_b, swap_c = rng.random(n) < 0.5, rng.random(n) < 0.5
        for k in keys:
            x = scores[k][rows]
            b_a, b_b = _swapped(x[:, :2], swap_b)
            c_a, c_b = _swapped(x[:, 2:], swap_c)
            p, before = _no_change_p(c_a - c_b, b_a - b_b, kinds[k], groups)
            counts[k]["reject"] += p < 0.05
            counts[k]["reject_signflip"] += before < 0.05
            counts[k]["disagree"] += (p < 0.05) != (before < 0.05)
    return {k: {name: value / runs for name, value in c.items()} for k, c in counts.items()}


def _print_null(scores: dict[str, np.ndarray], kinds: dict[str, str], cluster: np.ndarray, args: argparse.Namespace) -> None:
    print("| n | key | rejects no change (α 0.05) | sign-flip test, same d_i | the two disagree |")
    print("|---:|---|---:|---:|---:|")
    for n in args.n:
        tick = time.process_time()
        for key, row in simulate_null(scores, kinds, cluster, n=n, runs=args.runs, seed=args.seed).items():
            print(f"| {n} | {key} | {row['reject']:.3f} | {row['reject_signflip']:.3f} | {row['disagree']:.3f} |")
        print(f"| {n} | ({time.process_time() - tick:.0f} s CPU) | | | |")


def main() -> None:
    """Print one table row per key and n."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--conversations", type=int, default=3000)
    parser.add_argument("--n", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--base-gap", type=float, default=0.0, help="Baseline gap, in margins (default 0).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--null-only", action="store_true", help="Only the level of the test of no change (fast).")
    args = parser.parse_args()
    started = time.perf_counter()
    scores, kinds, cluster = population(args.conversations)
    print(
        f"population: {cluster.size:,} runs of 4 turns from {len(set(cluster.tolist())):,} conversations "
        f"({time.perf_counter() - started:.0f} s to score); replicates {args.runs:,}; baseline gap {args.base_gap:g} margins"
    )
    if args.null_only:
        _print_null(scores, kinds, cluster, args)
        return
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
