"""``audit --until-decided`` by simulation on real chitchat turn pairs: its type-I error, and the pairs it saves.

The population is ``tests/calibration.py``'s: adjacent turns of real chitchat conversations
scored as an audit scores responses (VADER-positive and "asks a question" rates; word count
and VADER compound counts). Each replicate draws ``--max-pairs`` pairs with replacement and,
for a null, swaps the sides of each pair with probability 1/2. The sequential audit looks at
the first ``n_k`` of them (``--looks``, default 500, 1000, 1500, 2000) with the audit's own
tests (``fairtalk.stats.paired_test``, ``tost_rate``/``tost_mean`` at the default margins), turns
each p-value into a repeated p-value under Lan-DeMets O'Brien-Fleming-type boundaries
(``fairtalk.stats._sequential``; interpolated from a table of exact designs, for speed),
corrects the sequential p-values by Holm, and stops once every primary measure is decided.

Scenarios:

- ``null-family``: all four measures primary, no effect: the family-wise rate of false
  "difference detected" (must be <= α within simulation error), and the pairs used;
- ``margin``: compound primary, a true difference of exactly the margin (0.1 sd of the
  per-response scores, fixed): how often "equivalent" is claimed (must be <= α);
- ``effect-count`` / ``effect-rate``: a planted effect on compound (+0.035) or on the positive
  rate (+4 points), that measure primary: the sequential design's power and mean pairs used,
  against the fixed-n design of the same power (interpolated on the same replicates' first
  n pairs, n every 100);
- ``fair-count``: no effect, compound primary at its default margin: how often it is shown
  equivalent, the mean pairs used, and the fixed n that shows equivalence as often.

Run: ``.venv/bin/python bench/sequential.py [--reps 1000] [--jobs 4] [--scenarios ...]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from calibration import COUNTS, MEASURES, Population, chitchat_population  # noqa: E402
from fairtalk.stats import adjust_pvalues, default_margin, paired_test, tost_mean, tost_rate, units  # noqa: E402
from fairtalk.stats._sequential import boundaries  # noqa: E402

ALPHA = 0.05
SCENARIOS = ("null-family", "margin", "effect-count", "effect-rate", "fair-count")


class RepeatedP:
    """Repeated p-values of each look, interpolated (log-log) from exact designs on a grid of α."""

    def __init__(self, fractions: Sequence[float], spending: str) -> None:
        self.grid = np.geomspace(1e-9, 0.999, 160)
        self.tables: dict[tuple[int, int], np.ndarray] = {}
        for sides in (1, 2):
            for k in range(1, len(fractions) + 1):
                t = list(fractions[:k])
                self.tables[k, sides] = np.array(
                    [boundaries(t, alpha=float(a), spending=spending, sides=sides).nominal[-1] for a in self.grid]
                )

    def __call__(self, p: float, look: int, sides: int) -> float:
        """The repeated p of ``p`` at look ``look`` (1-based)."""
        levels = self.tables[look, sides]
        if p <= levels[0]:
            return float(self.grid[0])
        if p >= levels[-1]:
            return 1.0
        return float(np.exp(np.interp(math.log(p), np.log(levels), np.log(self.grid))))


@dataclass(frozen=True)
class Scenario:
    """What a replicate draws and tests."""

    name: str
    primary: tuple[str, ...]
    null: bool = True
    shift: float = 0.0  # added to side A of the primary count measure
    rate_effect: float = 0.0  # planted on the primary rate measure
    margin: float | None = None  # fixed margin for the primary measure (None: the default, per look)


def _plant_rate(a: np.ndarray, b: np.ndarray, effect: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A true rate difference ``effect`` (A - B): concordant pairs turn discordant in A's favour, as a changed model's would."""
    concordant = a == b
    flip = concordant & (rng.random(a.size) < effect / max(float(concordant.mean()), 1e-12))
    a, b = a.copy(), b.copy()
    a[flip & (a == 0)] = 1.0
    b[flip & (b == 1)] = 0.0
    return a, b


def _kind(measure: str) -> str:
    return "count" if measure in COUNTS else "rate"


def _tests(a: np.ndarray, b: np.ndarray, kind: str, margin: float | None) -> tuple[float, float | None]:
    """The audit's paired test p and TOST p on these pairs."""
    p = paired_test(a, b, kind=kind).p
    m = margin if margin is not None else default_margin(kind, a, b)
    if m is None:
        return (1.0 if p is None else p), None
    eq = tost_rate(a, b, margin=m, alpha=ALPHA) if kind == "rate" else tost_mean(units(a - b, None), margin=m, alpha=ALPHA)
    return (1.0 if p is None else p), eq.p


def _draw(pop: Population, scenario: Scenario, n: int, rng: np.random.Generator) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rows = rng.integers(0, pop.n_pairs, n)
    swap = rng.random(n) < 0.5 if scenario.null else np.zeros(n, bool)
    out = {}
    for m in scenario.primary:
        a, b = pop.a[m][rows], pop.b[m][rows]
        a, b = np.where(swap, b, a), np.where(swap, a, b)
        if scenario.shift and _kind(m) == "count":
            a = a + scenario.shift
        if scenario.rate_effect and _kind(m) == "rate":
            a, b = _plant_rate(a, b, scenario.rate_effect, rng)
        out[m] = (a, b)
    return out


def _replicate(args: tuple[Population, Scenario, tuple[int, ...], int, RepeatedP, tuple[int, ...]]) -> dict[str, object]:
    """One sequential audit (and the fixed-n tests on the same pairs) of a fresh draw."""
    pop, scenario, looks, seed, repeated, fixed_ns = args
    rng = np.random.default_rng(seed)
    data = _draw(pop, scenario, looks[-1], rng)
    best: dict[str, float] = {}
    best_eq: dict[str, float] = {}
    used, rejected, equivalent = looks[-1], set(), set()
    for k, n in enumerate(looks, start=1):
        for m, (a, b) in data.items():
            p, p_eq = _tests(a[:n], b[:n], _kind(m), scenario.margin)
            best[m] = min(best.get(m, 1.0), repeated(p, k, 2))
            if p_eq is not None:
                best_eq[m] = min(best_eq.get(m, 1.0), repeated(p_eq, k, 1))
        names = list(data)
        adjusted = adjust_pvalues([best[m] for m in names], method="holm")
        rejected = {m for m, q in zip(names, adjusted) if q < ALPHA}
        equivalent = {m for m in names if best_eq.get(m, 1.0) < ALPHA}
        if all(m in rejected or m in equivalent for m in names):
            used = n
            break
    fixed = {}
    if fixed_ns:
        (m,) = scenario.primary
        a, b = data[m]
        for n in fixed_ns:
            p, p_eq = _tests(a[:n], b[:n], _kind(m), scenario.margin)
            fixed[n] = (p < ALPHA, p_eq is not None and p_eq < ALPHA)
    return {"used": used, "rejected": rejected, "equivalent": equivalent, "fixed": fixed}


def _fixed_n_matching(rate: float, curve: dict[int, float]) -> float | None:
    """The fixed n whose success rate equals ``rate`` (linear interpolation on the curve), None if beyond it."""
    ns = sorted(curve)
    for lo, hi in zip(ns, ns[1:]):
        if curve[lo] <= rate <= curve[hi] and curve[hi] > curve[lo]:
            return lo + (hi - lo) * (rate - curve[lo]) / (curve[hi] - curve[lo])
    return float(ns[0]) if ns and rate <= curve[ns[0]] else None


def run(pop: Population, scenario: Scenario, looks: tuple[int, ...], reps: int, jobs: int, repeated: RepeatedP) -> str:
    """One scenario's line of the results table."""
    matched = scenario.name.startswith(("effect", "fair"))  # the scenarios a fixed-n design is matched on
    fixed_ns = tuple(range(100, looks[-1] + 1, 100)) if matched else ()
    tasks = [(pop, scenario, looks, 1000 + i, repeated, fixed_ns) for i in range(reps)]
    started = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            out = list(pool.map(_replicate, tasks, chunksize=8))
    else:
        out = [_replicate(t) for t in tasks]
    used = np.array([o["used"] for o in out], float)
    any_rejected = np.mean([bool(o["rejected"]) for o in out])
    equivalent = np.mean([bool(o["equivalent"]) and o["equivalent"] == set(scenario.primary) for o in out])
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    line = (
        f"| {scenario.name} | {', '.join(scenario.primary)} | {reps} | {any_rejected:.4f} | {equivalent:.4f} | "
        f"{used.mean():.0f} | {np.mean(used < looks[-1]):.3f} |"
    )
    if fixed_ns:
        goal = 1 if scenario.name.startswith("fair") else 0  # which fixed-n success the sequential rate is matched on
        curve = {n: float(np.mean([o["fixed"][n][goal] for o in out])) for n in fixed_ns}  # type: ignore[index]
        achieved = equivalent if goal else any_rejected
        n_star = _fixed_n_matching(achieved, curve)
        saved = "n/a" if n_star is None else f"{n_star:.0f} ({1 - used.mean() / n_star:+.0%})"
        line += f" {saved} |"
    else:
        line += " – |"
    return line + f" ±{3 * se:.4f} · {time.perf_counter() - started:.0f} s"


def main() -> None:
    """Print one row per scenario."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--rate-reps", type=int, default=400, help="replicates of the scenarios with rate measures (slower)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--looks", type=int, nargs="+", default=[500, 1000, 1500, 2000])
    parser.add_argument("--spending", default="obrien-fleming")
    parser.add_argument("--conversations", type=int, default=1500)
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    args = parser.parse_args()
    pop = chitchat_population(args.conversations)
    looks = tuple(args.looks)
    repeated = RepeatedP([n / looks[-1] for n in looks], args.spending)
    margin = 0.1 * float(np.concatenate([pop.a["compound"], pop.b["compound"]]).std(ddof=1))
    scenarios = {
        "null-family": Scenario("null-family", MEASURES),
        "margin": Scenario("margin", ("compound",), shift=margin, margin=margin),
        "effect-count": Scenario("effect-count", ("compound",), shift=0.035),
        "effect-rate": Scenario("effect-rate", ("positive",), rate_effect=0.04),
        "fair-count": Scenario("fair-count", ("compound",)),
    }
    print(f"population: {pop.n_pairs:,} turn pairs; looks {looks}; {args.spending}; alpha {ALPHA}")
    print(
        "| scenario | primary | reps | any difference detected | all equivalent | mean pairs used | "
        "share stopped early | fixed n of the same power (saved) | 3 SE of α · time |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.scenarios:
        rate_scenario = any(_kind(m) == "rate" for m in scenarios[name].primary)
        reps = args.rate_reps if rate_scenario else args.reps
        print(run(pop, scenarios[name], looks, reps, args.jobs, repeated), flush=True)


if __name__ == "__main__":
    main()
