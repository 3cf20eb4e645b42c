"""``plan --gold`` by simulation: do the labels it plans give the half-width it was asked for?

``fairtalk plan --gold HALF_WIDTH --results PILOT`` plans the labelled pairs' term of a
prediction-powered interval only: from a pilot run with labels it takes the per-pair spread of
that term (``se_labelled · sqrt(n_labels)``) and the scorer-only half-width ``z · se_scorer`` (the
term more labels do not shrink, a floor), and asks :func:`fairtalk.stats.labels_needed` for the
labels that bring the labelled term to ``sqrt(HALF_WIDTH² − floor²)`` (at least ``LEAST_LABELS``).

This script does the same on bench/ppi.py's ``group`` design (a scorer that misses 20% of
offensive answers and flags 2% of side a's clean answers and 8% of side b's; 2,000 pairs): one
pilot replicate with ``--pilot-labels`` labels gives the spread and the floor, the plan gives the
labels for each target half-width, and ``--runs`` fresh replicates with that many labels give the
PPI interval's realized half-width (mean, and the share of runs within the target) and its
coverage of the true gap. It reuses bench/ppi.py's ``Design`` and ``simulate``, recording each
replicate's :func:`fairtalk.stats._ppi.ppi_mean` estimate as it goes.

With ``--pilots N`` it also prints how the plan varies with the pilot: over N pilot replicates
(seeds 1000 on), the mean and sd of the pilot's error sd and floor, and the median and 10–90%
range of the labels planned.

Run: ``.venv/bin/python bench/plan_gold.py [--runs 1000] [--targets 0.03 0.04 0.05] [--pilot-labels 200] [--pilot-seed 7]
[--pilots 300]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import norm

from fairtalk.cli._plan import LEAST_LABELS
from fairtalk.stats import labels_needed

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ppi  # noqa: E402  (bench/ppi.py: its group design and its simulation)

ALPHA = 0.05
#: bench/ppi.py's ``group`` rates: a true gap of 0 and of -5 points.
RATES = ((0.10, 0.10), (0.10, 0.15))


@contextmanager
def recording() -> Iterator[list[Any]]:
    """bench/ppi.py's simulation with each replicate's ``ppi_mean`` estimate kept, in order."""
    estimates: list[Any] = []
    original = ppi.ppi_mean

    def kept(*args: Any, **kwargs: Any) -> Any:
        estimate = original(*args, **kwargs)
        estimates.append(estimate)
        return estimate

    ppi.ppi_mean = kept
    try:
        yield estimates
    finally:
        ppi.ppi_mean = original


@dataclass(frozen=True)
class Pilot:
    """What ``plan --gold --results`` reads from a pilot: the labelled term's per-pair spread and the scorer-only floor."""

    n_labels: int
    error_sd: float
    floor: float


def pilot(design: ppi.Design, seed: int) -> Pilot:
    """One replicate of ``design`` as the pilot run, read as ``plan --gold`` reads its results.json."""
    with recording() as estimates:
        ppi.simulate(design, 1, seed=seed)
    (estimate,) = estimates
    assert estimate.se_labelled is not None and estimate.se_scorer is not None
    z = float(norm.ppf(1 - ALPHA / 2))
    return Pilot(estimate.n_labels, estimate.se_labelled * math.sqrt(estimate.n_labels), z * estimate.se_scorer)


def planned_labels(half_width: float, p: Pilot) -> int:
    """The labels ``plan --gold`` plans for ``±half_width`` from pilot ``p`` (its formula, with its least number)."""
    return max(labels_needed(math.sqrt(half_width**2 - p.floor**2), p.error_sd, alpha=ALPHA), LEAST_LABELS)


@dataclass(frozen=True)
class Realized:
    """The PPI interval over the runs at the planned labels."""

    labels: int
    half_width: float
    within: float
    coverage: float
    floor: float
    alone: float


def realize(design: ppi.Design, labels: int, half_width: float, runs: int, seed: int) -> Realized:
    """``runs`` fresh replicates of ``design`` with ``labels`` labels: the PPI interval's half-width and coverage."""
    z = float(norm.ppf(1 - ALPHA / 2))
    with recording() as estimates:
        cover = ppi.simulate(replace(design, n_labels=labels), runs, seed=seed)
    halves = [(e.ci95[1] - e.ci95[0]) / 2 for e in estimates]
    return Realized(
        labels=labels,
        half_width=cover.ppi[1] / 2,
        within=sum(h <= half_width for h in halves) / runs,
        coverage=cover.ppi[0],
        floor=sum(z * (e.se_scorer or 0.0) for e in estimates) / runs,
        alone=cover.alone + cover.no_narrower,
    )


def rows(targets: list[float], runs: int, pilot_labels: int, pairs: int, pilot_seed: int = 7) -> Iterator[str]:
    """One table row per true gap and target half-width."""
    for p_a, p_b in RATES:
        design = ppi.Design(p_a=p_a, p_b=p_b, n_pairs=pairs, n_labels=pilot_labels)
        p = pilot(design, seed=pilot_seed)
        for target in targets:
            started = time.perf_counter()
            if p.floor >= target:
                yield f"| {design.truth:+.3f} | ±{target:g} | {p.error_sd:.4f} | ±{p.floor:.4f} | – (below the floor) |"
                continue
            r = realize(design, planned_labels(target, p), target, runs, seed=100)
            yield (
                f"| {design.truth:+.3f} | ±{target:g} | {p.error_sd:.4f} | ±{p.floor:.4f} | {r.labels:,} | "
                f"±{r.half_width:.4f} ({r.half_width / target - 1:+.0%}) | {r.within:.2f} | {r.coverage:.3f} | "
                f"±{r.floor:.4f} | {r.alone:.2f} | {time.perf_counter() - started:.0f} |"
            )


def pilot_rows(targets: list[float], pilots: int, pilot_labels: int, pairs: int) -> Iterator[str]:
    """How the plan varies with the pilot: over ``pilots`` pilot replicates, its inputs and the labels planned."""
    for p_a, p_b in RATES:
        design = ppi.Design(p_a=p_a, p_b=p_b, n_pairs=pairs, n_labels=pilot_labels)
        drawn = [pilot(design, seed=1000 + i) for i in range(pilots)]
        sds = np.array([p.error_sd for p in drawn])
        floors = np.array([p.floor for p in drawn])
        for target in targets:
            labels = np.array([planned_labels(target, p) for p in drawn if p.floor < target])
            low, mid, high = np.percentile(labels, [10, 50, 90]) if labels.size else (np.nan,) * 3
            yield (
                f"| {design.truth:+.3f} | ±{target:g} | {sds.mean():.4f} ({sds.std():.4f}) | ±{floors.mean():.4f} "
                f"({floors.std():.4f}) | {mid:,.0f} | {low:,.0f}–{high:,.0f} |"
            )


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--pilot-labels", type=int, default=200)
    parser.add_argument("--pilot-seed", type=int, default=7, help="the seed of the pilot replicate")
    parser.add_argument("--targets", type=float, nargs="+", default=[0.03, 0.04, 0.05])
    parser.add_argument("--pilots", type=int, default=0, help="also: the labels planned from this many pilots' seeds")
    args = parser.parse_args()
    print(
        f"group design, {args.pairs:,} pairs, a pilot of {args.pilot_labels} labels (seed {args.pilot_seed}), "
        f"{args.runs:,} runs per row, α {ALPHA}"
    )
    print(
        "| true gap | target half-width | pilot's error sd | pilot's floor | labels planned | realized mean half-width "
        "(vs target) | share within target | coverage | realized floor | labels alone | s |"
    )
    print("|---" * 11 + "|")
    for row in rows(args.targets, args.runs, args.pilot_labels, args.pairs, args.pilot_seed):
        print(row, flush=True)
    if args.pilots:
        print(f"\nthe plan from {args.pilots:,} pilots (seeds 1000 on) of {args.pilot_labels} labels each:")
        print(
            "| true gap | target half-width | pilot's error sd: mean (sd) | pilot's floor: mean (sd) | labels planned: median | 10–90% |"
        )
        print("|---" * 6 + "|")
        for row in pilot_rows(args.targets, args.pilots, args.pilot_labels, args.pairs):
            print(row, flush=True)


if __name__ == "__main__":
    main()
