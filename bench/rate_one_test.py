"""The level of an audit's rate test, old and new (issue 39): the verdict and its interval from one test.

Under the null (a fair model) it draws 0/1 outcomes for side A and side B of each pair and
counts how often each test of ``A == B`` rejects at α = 0.05:

- **old**: the audit's paired test before issue 39 (McNemar's exact test without clusters; the
  cluster mean test, exact or Monte Carlo sign-flip by dialogue else CR2 t, with clusters),
  and how often its p and the Newcombe interval printed beside it (design-effect adjusted)
  disagreed about 0 (the report's ‡ rows);
- **score**: the score test of 0 on the per-pair differences (support −1, 0, 1; counts over the
  design effect with clusters), z reference: the test the score interval inverts
  (``paired_test(..., method="score")``, the audit's default since issue 39);
- **score_t**: the same statistic against Student t with the units' Bell–McCaffrey df
  (``n − 1`` without clusters), the variant tried where the z reference runs above α.

The pairs are those of the built-in gender axis (``builtin:chitchat`` heldout, 1,470 pairs in
206 dialogues): an audit of ``n`` pairs is a uniform sample of them, clustered by dialogue.
Designs:

- ``exchangeable``: a dialogue's propensity ``u_j ~ N(logit p, 1)`` and a pair's ``v_i ~ N(0, 1)``
  on the logit scale; both sides drawn independently with probability ``expit(u_j + v_i)``;
- ``tilted``: as exchangeable, plus a tilt ``t_j ~ N(0, 1)`` per dialogue (side A at
  ``u_j + v_i + t_j/2``, side B at ``u_j + v_i − t_j/2``): each dialogue may favour a side, the
  population does not (the differences are correlated within dialogues, the clustered test's
  stress case; the whole-dialogue sign flip stays exact);
- ``pairs``: independent pairs (``v_i`` only), tested without clusters (``--no-clusters``).

Run: ``nice -n 5 .venv/bin/python bench/rate_one_test.py [--runs 4000]`` (about 10 min on 2 cores).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np
from scipy.special import expit, logit
from scipy.stats import t as student_t

import fairtalk
from fairtalk.stats import difference_interval, paired_test, units

_ALPHA = 0.05


def axis_dialogues() -> np.ndarray:
    """Each pair's dialogue on the built-in gender axis (an index per pair)."""
    corpus = fairtalk.read_corpus("builtin:chitchat", split="heldout")
    pairs = fairtalk.build_pairs(corpus, fairtalk.load_lexicon("gender"))
    labels = [pair.cluster for pair in pairs]
    index = {c: i for i, c in enumerate(dict.fromkeys(labels))}
    return np.array([index[c] for c in labels])


def draw(gen: np.random.Generator, dialogues: np.ndarray, rate: float, design: str) -> tuple[np.ndarray, np.ndarray]:
    """One null sample: side A's and side B's 0/1 outcomes."""
    n = dialogues.size
    n_dialogues = int(dialogues.max()) + 1
    base = logit(rate) + gen.normal(0.0, 1.0, n)
    if design != "pairs":
        base = base + gen.normal(0.0, 1.0, n_dialogues)[dialogues]
    tilt = gen.normal(0.0, 1.0, n_dialogues)[dialogues] / 2 if design == "tilted" else 0.0
    a = (gen.random(n) < expit(base + tilt)).astype(float)
    b = (gen.random(n) < expit(base - tilt)).astype(float)
    return a, b


def one(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None) -> tuple[bool, bool, bool, bool]:
    """Whether old, score and score_t reject at α, and whether the old test and its interval disagreed about 0."""
    old_method = "mcnemar_exact" if clusters is None else "mean"  # the default before issue 39
    old = paired_test(a, b, kind="rate", method=old_method, clusters=clusters)
    low, high = difference_interval(a, b, kind="rate", test=old_method, clusters=clusters).bounds  # Newcombe's
    old_reject = old.p is not None and old.p < _ALPHA
    excludes = low is not None and high is not None and (low > 0 or high < 0)
    new = paired_test(a, b, kind="rate", method="score", clusters=clusters)  # the audit's default now
    assert new.statistic is not None and new.p is not None
    p_t = float(2.0 * student_t.sf(abs(new.statistic), units(a - b, clusters).df))
    return old_reject, new.p < _ALPHA, p_t < _ALPHA, excludes != old_reject


def cell(dialogues: np.ndarray, n: int, rate: float, design: str, runs: int, seed: int) -> dict[str, float]:
    """Rejection rates (and the old ‡ rate) of one design, n and rate."""
    gen = np.random.default_rng(seed)
    counts = np.zeros(4)
    discordant_units = 0.0
    for _ in range(runs):
        chosen = dialogues if n >= dialogues.size else dialogues[gen.choice(dialogues.size, n, replace=False)]
        a, b = draw(gen, chosen, rate, design)
        clusters = None if design == "pairs" else chosen
        counts += one(a, b, clusters)
        differing = a != b
        discordant_units += len(set(chosen[differing])) if clusters is not None else int(differing.sum())
    out = dict(zip(("old", "score", "score_t", "dagger"), counts / runs))
    out["units"] = discordant_units / runs
    return out


def main() -> None:
    """Print one row per design, rate and n."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--n", type=int, nargs="+", default=[30, 60, 150, 500, 1470])
    parser.add_argument("--rates", type=float, nargs="+", default=[0.2, 0.02])
    parser.add_argument("--designs", nargs="+", default=["exchangeable", "tilted", "pairs"])
    args = parser.parse_args()
    dialogues = axis_dialogues()
    sizes = Counter(Counter(dialogues.tolist()).values())
    print(f"gender axis: {dialogues.size:,} pairs in {len(set(dialogues.tolist())):,} dialogues; sizes {sorted(sizes.items())}")
    print(f"runs per row {args.runs:,}; SE of a rate near 0.05: {np.sqrt(0.05 * 0.95 / args.runs):.4f}")
    print("| design | rate | n | discordant units | old | old ‡ | score (z) | score (t, BM df) | s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for design in args.designs:
        for rate in args.rates:
            for n in args.n:
                start = time.perf_counter()
                r = cell(dialogues, n, rate, design, args.runs, seed=n + int(rate * 1000))
                print(
                    f"| {design} | {rate:g} | {n} | {r['units']:.1f} | {r['old']:.3f} | {r['dagger']:.3f} | "
                    f"{r['score']:.3f} | {r['score_t']:.3f} | {time.perf_counter() - start:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
