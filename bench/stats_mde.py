"""Is the printed minimum detectable effect detected 80% of the time? Injection on the real responses of an audit.

For each key it draws null resamples of the audit's real pairs (whole dialogues with
replacement, sides swapped at random within pairs), computes the MDE that the audit prints for
that resample (at α / family size, power 0.8), plants an effect of exactly that size and tests at
that level with the audit's default test. It prints the power of the new MDE (from the test's
own reference distribution, ``fairtalk.stats._power``) and of the old normal formula read off
the 95% interval, which the new one replaces. Rates get new one-way discordant pairs (the
discordance grows with the effect); counts are shifted. ``tests/test_stats_power.py`` runs a
small version on chitchat turn pairs.

Run (after ``fairtalk audit --axis gender -o OUT``, the bare audit):
``.venv/bin/python bench/stats_mde.py --responses OUT/gender/responses.jsonl [--runs 1000]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from calibration import mde_power  # noqa: E402

KEYS = {"offense_rate": "rate", "sentiment_positive": "rate", "family_words": "count", "length": "count"}


def _scores(path: str, axis: str) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray | None]:
    """Per-pair scores of both sides for :data:`KEYS`, and each pair's dialogue."""
    import fairtalk
    from fairtalk.measures import default_measures

    responses = fairtalk.read_responses(path)
    texts_a = [r.response for r in responses.a]
    texts_b = [r.response for r in responses.b]
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for measure in default_measures(fairtalk.load_lexicon(axis)):
        wanted = [key for key in measure.keys if key in KEYS]
        if not wanted or not isinstance(measure, fairtalk.Measure):
            continue
        a, b = measure.score(texts_a), measure.score(texts_b)
        out.update({key: (np.asarray(a[key], float), np.asarray(b[key], float)) for key in wanted})
    clusters = responses.clusters
    cluster = None if clusters is None else np.unique(np.asarray(clusters, dtype=str), return_inverse=True)[1]
    return out, cluster


def main() -> None:
    """Print one row per key and design."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", required=True, help="responses.jsonl of an audit")
    parser.add_argument("--axis", default="gender")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--family", type=int, default=11, help="tests in the primary family (the bare audit: 11)")
    args = parser.parse_args()
    scores, cluster = _scores(args.responses, args.axis)
    n_pairs = next(iter(scores.values()))[0].size
    n_dialogues = None if cluster is None else int(cluster.max()) + 1
    print(f"{n_pairs:,} pairs, {n_dialogues} dialogues; {args.runs:,} runs; α 0.05 / {args.family}; power 0.8")
    print("| key | design | power at new MDE | power at old MDE | mean new MDE | mean old MDE | s |")
    print("|---|---|---|---|---|---|---|")
    for key, kind in KEYS.items():
        a, b = scores[key]
        designs = [("dialogues", cluster, n_dialogues)] if cluster is not None else []
        designs.append(("pairs", None, n_pairs))
        for design, groups, n_units in designs:
            start = time.perf_counter()
            check = mde_power(
                a, b, groups, kind=kind, n_units=int(n_units or n_pairs), runs=args.runs, seed=7, family=args.family
            )
            print(
                f"| {key} | {design} | {check.power:.3f} | {check.power_old:.3f} | {check.mde:.4g} | "
                f"{check.mde_old:.4g} | {time.perf_counter() - start:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
