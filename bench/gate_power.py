"""Does ``fairtalk plan --gate`` give the equivalence gate its power? A fair model simulated at the planned sizes (issue 39).

For every primary key that ``plan --gate`` plans (the built-in spreads of the bare gender audit,
or ``--results`` of a pilot run), it takes the pairs plan prints, draws ``--runs`` audits of a
fair model (A = B) of that size with the pilot's spread, and decides each with the audit's own
equivalence function (``fairtalk.inference._measure_tests._equivalence``: for a rate
``fairtalk.stats.rate_equivalence``, the exact bound on each direction's discordant dialogues
under 10 of them, identical answers included, else the Newcombe TOST with the pilot's design
effect; the cluster t TOST for a count). It prints the share that pass, which should be
0.75-0.85 at power 0.8.

The fair models (the pilot's per-pair scores are not in results.json):

- **rates**: pairs drawn independently, a share ``q`` of them discordant (half each way), the
  pilot's side rate for the pairs positive on both sides; dialogues of the pilot's pairs each.
- **counts**: differences with the pilot's sd: ternary ±1 where the pilot's spread is that of a
  sparse count (sd < 0.3, e.g. career_words), else normal, with a dialogue effect that gives the
  pilot's design effect.

Corpus keys (distinct_1, distinct_2, diversity) are planned from a permutation interval and are
not simulated here.

Run: ``.venv/bin/python bench/gate_power.py [--results FILE] [--runs 1000] [--keys k1,k2]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from fairtalk.cli._plan import _gate_need, _gate_rows, _GateRow
from fairtalk.inference._measure_tests import Inference, _equivalence
from fairtalk.stats import IDENTICAL_SHARE

ALPHA, POWER = 0.05, 0.8
#: Below this sd of A - B a count is simulated as a sparse ±1 count, above it as normal.
SPARSE_SD = 0.3


def _clusters(n: int, per_unit: float) -> tuple[int, ...] | None:
    """Dialogue labels for ``n`` pairs at ``per_unit`` pairs each (None: the audit does not cluster)."""
    if per_unit <= 1:
        return None
    return tuple(int(i) for i in np.floor(np.arange(n) / per_unit))


def _rate_pass(row: _GateRow, n: int, runs: int, rng: np.random.Generator) -> float:
    """Share of fair audits of ``n`` pairs whose rate the gate's equivalence test passes."""
    assert row.discordance is not None and row.margin is not None
    q = row.discordance
    both = max(0.0, (row.rate or 0.0) - q / 2) / (1 - q)
    probs = [(1 - q) * both, q / 2, q / 2, (1 - q) * (1 - both)]  # n11, n10, n01, n00
    clusters = _clusters(n, row.pairs_per_unit)
    opts = Inference(alpha=ALPHA, clusters=clusters, margins={row.key: float(row.margin)})
    passed = 0
    for _ in range(runs):
        n11, n10, n01, n00 = rng.multinomial(n, probs)
        cells = rng.permutation(np.repeat(np.arange(4), [n11, n10, n01, n00]))
        a = np.isin(cells, (0, 1)).astype(float)
        b = np.isin(cells, (0, 2)).astype(float)
        passed += bool(_equivalence(row.key, "rate", a, b, opts, row.deff).equivalent)
    return passed / runs


def _count_pass(row: _GateRow, n: int, runs: int, rng: np.random.Generator, per_unit: float) -> float:
    """Share of fair audits of ``n`` pairs whose count the gate's (cluster) t TOST passes."""
    assert row.sd is not None and row.margin is not None
    clustered = row.deff > 1 and per_unit > 1
    clusters = _clusters(n, per_unit) if clustered else None
    opts = Inference(alpha=ALPHA, clusters=clusters, margins={row.key: float(row.margin)})
    rho = min(0.9, (row.deff - 1) / (per_unit - 1)) if clustered else 0.0
    labels = np.asarray(clusters) if clusters is not None else np.arange(n)
    passed = 0
    for _ in range(runs):
        if row.sd < SPARSE_SD and not clustered:
            q = min(1.0, row.sd**2)
            d = rng.choice([-1.0, 0.0, 1.0], size=n, p=[q / 2, 1 - q, q / 2])
        else:
            shared = rng.normal(0.0, math.sqrt(rho), size=int(labels.max()) + 1)[labels]
            d = row.sd * (shared + rng.normal(0.0, math.sqrt(1 - rho), size=n))
        passed += bool(_equivalence(row.key, "count", d, np.zeros(n), opts, row.deff).equivalent)
    return passed / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=None, help="a pilot run's results.json (default: plan's built-in spreads)")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--keys", default=None, help="comma-separated keys (default: every rate and count)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows, source, _ = _gate_rows(args.results)
    identical = math.ceil(math.log(ALPHA) / math.log(1 - IDENTICAL_SHARE))
    wanted = set(args.keys.split(",")) if args.keys else None
    per_unit = max((r.pairs_per_unit for r in rows), default=1.0)
    print(f"pilot: {source}\n{args.runs} fair audits per key, α {ALPHA}, planned power {POWER}")
    print("| key | kind | planned pairs | discordant share | passed | s.e. | seconds |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        if row.kind not in ("rate", "count") or (wanted and row.key not in wanted):
            continue
        n, line = _gate_need(row, ALPHA, POWER, identical)
        if n is None or not row.sd:
            print(f"| {row.key} | {row.kind} | {line.strip()} | | | | |")
            continue
        start = time.process_time()
        if row.kind == "rate":
            share = _rate_pass(row, n, args.runs, rng)
        else:
            share = _count_pass(row, n, args.runs, rng, per_unit)
        seconds = time.process_time() - start
        se = math.sqrt(share * (1 - share) / args.runs)
        q = f"{row.discordance:.3%}" if row.discordance is not None else ""
        print(f"| {row.key} | {row.kind} | {n:,} | {q} | {share:.3f} | {se:.3f} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
