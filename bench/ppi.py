"""Prediction-powered gaps by simulation: a scorer whose error differs by group, a few hundred human labels.

Each replicate draws ``--pairs`` pairs with a true offensive rate ``p_a`` on side a and ``p_b``
on side b, a scorer that misses offensive answers at one rate and flags clean ones at a rate that
differs by group (the failure the scorer certificate and bench/README's scorers section find in
real classifiers), and human labels on a uniform sample of ``--labels`` pairs. It prints, for the
paired gap ``p_a - p_b``, the coverage and mean width of three 95% intervals:

- the scorer alone (the paired t interval of the scorer's per-pair differences over all pairs);
- the labels alone (the same on the labelled pairs' human labels);
- prediction-powered (PPI++, :func:`fairtalk.stats._ppi.ppi_mean` on per-pair differences); with fewer than 10
  labelled pairs that disagree with the scorer it is the labels alone with their score interval (``alone``: the
  share of replicates where that rule applied), and likewise where PPI++'s interval was no narrower than that score
  interval (``no narrower``: the share of replicates where that rule applied).

Two scorer errors (``--scenario``): ``group``, the scorer misses 20% of offensive answers and
flags 2% of side a's clean answers and 8% of side b's; ``rare``, the scorer is right except that
1% of side b's unflagged answers are truly offensive (few disagreements among the labels). A third,
``poor`` (only when named), misses half the offensive answers and flags 30% of side a's clean ones
and 40% of side b's, at rates of 30% and 30% or 40%: with 20-50 labels PPI++'s interval is often no
narrower than the labels' own, the case of the rule "never more than the labels alone give".

Run: ``.venv/bin/python bench/ppi.py [--runs 2000] [--pairs 2000] [--labels 50 100 200] [--scenario rare]``.
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
    #: The share of side b's answers the scorer leaves unflagged that are truly offensive (a rare error; 0: none).
    hidden_b: float = 0.0

    @property
    def truth(self) -> float:
        """The true paired gap ``E[y_a - y_b]``."""
        return self.p_a - (self.p_b + self.hidden_b * (1 - self.p_b * (1 - self.miss)))


#: The scorer right except that 1% of side b's unflagged answers are truly offensive (issue 39's rare error).
RARE = {"miss": 0.0, "false_flag_a": 0.0, "false_flag_b": 0.0, "hidden_b": 0.01}
#: A poor scorer: it misses half the offensive answers and flags 30% / 40% of the clean ones.
POOR = {"miss": 0.5, "false_flag_a": 0.3, "false_flag_b": 0.4}


@dataclass(frozen=True)
class Coverage:
    """Coverage and mean width of each interval over the replicates."""

    scorer: tuple[float, float]
    labels: tuple[float, float]
    ppi: tuple[float, float]
    runs: int
    #: The share of replicates whose PPI estimate was the labels alone (fewer than 10 disagreements).
    alone: float = 0.0
    #: The share whose PPI estimate was the labels alone because PPI++'s interval was no narrower than theirs.
    no_narrower: float = 0.0


def _t_interval(d: np.ndarray) -> tuple[float, float]:
    half = float(student_t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))
    return float(d.mean()) - half, float(d.mean()) + half


def simulate(design: Design, runs: int, seed: int = 0) -> Coverage:
    """The three intervals' coverage of the true gap and mean width over ``runs`` replicates."""
    rng = np.random.default_rng(seed)
    truth = design.truth
    hits = {"scorer": 0, "labels": 0, "ppi": 0}
    alone = no_narrower = 0
    widths: dict[str, list[float]] = {"scorer": [], "labels": [], "ppi": []}
    for _ in range(runs):
        y_a = (rng.random(design.n_pairs) < design.p_a).astype(float)
        y_b = (rng.random(design.n_pairs) < design.p_b).astype(float)

        def scorer(y: np.ndarray, false_flag: float) -> np.ndarray:
            u = rng.random(y.size)
            return np.where(y == 1, (u >= design.miss).astype(float), (u < false_flag).astype(float))

        f_a, f_b = scorer(y_a, design.false_flag_a), scorer(y_b, design.false_flag_b)
        if design.hidden_b:  # offensive answers the scorer does not flag, on side b only
            y_b = np.maximum(y_b, ((f_b == 0) & (rng.random(design.n_pairs) < design.hidden_b)).astype(float))
        labelled = np.zeros(design.n_pairs, dtype=bool)
        labelled[rng.choice(design.n_pairs, design.n_labels, replace=False)] = True
        d_y, d_f = y_a - y_b, f_a - f_b
        estimate = ppi_mean(d_f, np.where(labelled, d_y, np.nan))
        alone += estimate.too_few_disagreements
        no_narrower += estimate.no_narrower
        intervals = {"scorer": _t_interval(d_f), "labels": _t_interval(d_y[labelled]), "ppi": estimate.ci95}
        for name, (low, high) in intervals.items():
            hits[name] += low <= truth <= high
            widths[name].append(high - low)
    return Coverage(
        **{name: (hits[name] / runs, float(np.mean(widths[name]))) for name in hits},  # type: ignore[arg-type]
        runs=runs,
        alone=alone / runs,
        no_narrower=no_narrower / runs,
    )


def main() -> None:
    """Print one row per design."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--labels", type=int, nargs="+", default=[50, 100, 200, 300, 600])
    parser.add_argument("--scenario", choices=("group", "rare", "both", "poor"), default="both")
    args = parser.parse_args()
    print(
        "| scorer error | true gap | labels | scorer-only cover | width | labels-only cover | width | PPI cover | width "
        "| labels alone | no narrower | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rates = {"group": ((0.10, 0.10), (0.10, 0.15)), "rare": ((0.03, 0.03), (0.03, 0.06)), "poor": ((0.30, 0.30), (0.30, 0.40))}
    for scenario, error in (("group", {}), ("rare", RARE), ("poor", POOR)):
        if args.scenario != scenario and (args.scenario != "both" or scenario == "poor"):
            continue
        for p_a, p_b in rates[scenario]:
            for n_labels in args.labels:
                design = Design(p_a=p_a, p_b=p_b, n_pairs=args.pairs, n_labels=n_labels, **error)  # type: ignore[arg-type]
                _row(scenario, design, args.runs)


def _row(scenario: str, design: Design, runs: int) -> None:
    """Simulate one design and print its table row."""
    started = time.perf_counter()
    c = simulate(design, runs)
    print(
        f"| {scenario} | {design.truth:+.3f} | {design.n_labels} | {c.scorer[0]:.3f} | {c.scorer[1]:.3f} | "
        f"{c.labels[0]:.3f} | {c.labels[1]:.3f} | {c.ppi[0]:.3f} | {c.ppi[1]:.3f} | {c.alone:.2f} | {c.no_narrower:.2f} | "
        f"{time.perf_counter() - started:.0f} |"
    )


if __name__ == "__main__":
    main()
