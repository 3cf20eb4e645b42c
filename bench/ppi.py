"""Prediction-powered gaps by simulation: a scorer whose error differs by group, a few hundred human labels.

Each replicate draws ``--pairs`` pairs with a true offensive rate ``p_a`` on side a and ``p_b``
on side b, a scorer that misses offensive answers at one rate and flags clean ones at a rate that
differs by group (the failure the scorer certificate and bench/README's scorers section find in
real classifiers), and human labels on a uniform sample of ``--labels`` pairs. It prints, for the
paired gap ``p_a - p_b``, the coverage and mean width of three 95% intervals:

- the scorer alone (the paired t interval of the scorer's per-pair differences over all pairs);
- the labels alone (the same on the labelled pairs' human labels);
- prediction-powered (PPI++, :func:`fairtalk.stats._ppi.ppi_mean` on per-pair differences).

Run: ``.venv/bin/python bench/ppi.py [--runs 2000] [--pairs 2000] [--labels 300]``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from fairtalk.stats._ppi import ppi_mean


@dataclass(frozen=True)
class Design:
    """True rates, the scorer's error rates by side, and the sizes."""

    p_a: float = 0.10
    p_b: float = 0.10
    miss: float = 0.20
    false_flag_a: float = 0.02
    false_flag_b: float = 0.08
    n_pairs: int = 2000
    n_labels: int = 300


@dataclass(frozen=True)
class Coverage:
    """Coverage and mean width of each interval over the replicates."""

    scorer: tuple[float, float]
    labels: tuple[float, float]
    ppi: tuple[float, float]
    runs: int


def _t_interval(d: np.ndarray) -> tuple[float, float]:
    half = float(student_t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))
    return float(d.mean()) - half, float(d.mean()) + half


def simulate(design: Design, runs: int, seed: int = 0) -> Coverage:
    """The three intervals' coverage of the true gap and mean width over ``runs`` replicates."""
    rng = np.random.default_rng(seed)
    truth = design.p_a - design.p_b
    hits = {"scorer": 0, "labels": 0, "ppi": 0}
    widths: dict[str, list[float]] = {"scorer": [], "labels": [], "ppi": []}
    for _ in range(runs):
        y_a = (rng.random(design.n_pairs) < design.p_a).astype(float)
        y_b = (rng.random(design.n_pairs) < design.p_b).astype(float)

        def scorer(y: np.ndarray, false_flag: float) -> np.ndarray:
            u = rng.random(y.size)
            return np.where(y == 1, (u >= design.miss).astype(float), (u < false_flag).astype(float))

        f_a, f_b = scorer(y_a, design.false_flag_a), scorer(y_b, design.false_flag_b)
        labelled = np.zeros(design.n_pairs, dtype=bool)
        labelled[rng.choice(design.n_pairs, design.n_labels, replace=False)] = True
        d_y, d_f = y_a - y_b, f_a - f_b
        intervals = {
            "scorer": _t_interval(d_f),
            "labels": _t_interval(d_y[labelled]),
            "ppi": ppi_mean(d_f, np.where(labelled, d_y, np.nan)).ci95,
        }
        for name, (low, high) in intervals.items():
            hits[name] += low <= truth <= high
            widths[name].append(high - low)
    return Coverage(**{name: (hits[name] / runs, float(np.mean(widths[name]))) for name in hits}, runs=runs)  # type: ignore[arg-type]


def main() -> None:
    """Print one row per design."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--labels", type=int, nargs="+", default=[150, 300, 600])
    args = parser.parse_args()
    print("| true gap | labels | scorer-only cover | width | labels-only cover | width | PPI cover | width | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p_b in (0.10, 0.15):
        for n_labels in args.labels:
            design = Design(p_b=p_b, n_pairs=args.pairs, n_labels=n_labels)
            started = time.perf_counter()
            c = simulate(design, args.runs)
            print(
                f"| {design.p_a - design.p_b:+.2f} | {n_labels} | {c.scorer[0]:.3f} | {c.scorer[1]:.3f} | "
                f"{c.labels[0]:.3f} | {c.labels[1]:.3f} | {c.ppi[0]:.3f} | {c.ppi[1]:.3f} | "
                f"{time.perf_counter() - started:.0f} |"
            )


if __name__ == "__main__":
    main()
