"""Calibration of the audit's default tests and intervals on real chitchat turn pairs (the larger run of the suite's test).

For each design and sample size it prints the null rejection rate of each default test at
α = 0.05 (sides swapped within pairs), the Holm family-wise error over the four measures, and
the coverage of each default 95% interval of the true mean difference. Designs
(``tests/calibration.py``):

- ``pairs``: independent pairs;
- ``sampled``: pairs sampled uniformly from the corpus, clustered by their conversation (what
  ``--n`` does on the built-in corpus);
- ``conversations``: whole conversations, so a few long dialogues hold most pairs (the stress
  case; the report notes "few effective clusters" there).

Run: ``.venv/bin/python bench/stats_calibration.py [--runs 4000] [--conversations 1500]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from calibration import MEASURES, chitchat_population, simulate  # noqa: E402


def main() -> None:
    """Print one row per design and n."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--conversations", type=int, default=1500)
    parser.add_argument("--n", type=int, nargs="+", default=[20, 60, 400, 1500])
    parser.add_argument("--designs", nargs="+", default=["pairs", "sampled", "conversations"])
    args = parser.parse_args()
    population = chitchat_population(args.conversations)
    print(f"population: {population.n_pairs:,} turn pairs from {args.conversations:,} conversations; runs {args.runs:,}")
    header = ["design", "n"] + [f"null {m}" for m in MEASURES] + ["Holm FWER"] + [f"cover {m}" for m in MEASURES]
    print("| " + " | ".join(header) + " | s |")
    print("|" + "---|" * (len(header) + 1))
    for design in args.designs:
        for n in args.n:
            start = time.perf_counter()
            result = simulate(population, n=n, runs=args.runs, seed=n, design=design)
            cells = [design, str(n)] + [f"{result.rejection[m]:.3f}" for m in MEASURES] + [f"{result.fwer:.3f}"]
            cells += [f"{result.coverage[m]:.3f}" for m in MEASURES]
            print("| " + " | ".join(cells) + f" | {time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
