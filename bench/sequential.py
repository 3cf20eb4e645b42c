"""``audit --until-decided`` by simulation on real chitchat turn pairs: its type-I error, and the pairs it saves.

The population is ``tests/calibration.py``'s: adjacent turns of real chitchat conversations
scored as an audit scores responses (VADER-positive and "asks a question" rates; word count
and VADER compound counts). Each replicate draws the last look's number of pairs with replacement and,
for a null, swaps the sides of each pair with probability 1/2. The sequential audit looks at
the first ``n_k`` of them (``--looks``, default 500, 1000, 1500, 2000) with the audit's own
tests (``fairtalk.stats.paired_test``, ``tost_rate``/``tost_mean`` at the default margins), turns
each p-value into a repeated p-value under Lan-DeMets boundaries (``--spending``, O'Brien-Fleming-type by default)
(``fairtalk.stats._sequential``; interpolated from a table of exact designs, for speed),
corrects the sequential p-values by Holm, and stops once every primary measure is decided.

Scenarios (the true effect on the primary measure is given as a multiple of its margin):

- ``null-family``: all four measures primary, no effect: the family-wise rate of false
  "difference detected" (must be <= α within simulation error), and the pairs used;
- ``margin``: compound primary, a true difference of exactly the margin (0.1 sd of the
  per-response scores, fixed): how often "equivalent" is claimed (must be <= α);
- ``inside-count`` / ``outside-count``: compound primary at the same fixed margin, a true
  difference of half the margin / one and a half times it;
- ``inside-wide``: compound primary, a true difference of +0.035 (as ``effect-count``: the
  budget detects it with power 0.83) inside a margin twice as wide (±0.07, fixed): an effect
  inside the margin that the budget resolves, so "equivalent" can come first;
- ``effect-count``: a planted +0.035 on compound (0.85 of its default margin: inside it);
- ``effect-rate`` / ``inside-rate``: a planted +4 / +1 points on the positive rate (twice / half
  its default ±2-point margin);
- ``fair-count``: no effect, compound primary at its default margin;
- ``large-count`` / ``large-rate`` / ``larger-rate``: a large planted effect, +0.14 on compound
  (four times ``effect-count``'s) / +12 or +20 points on the positive rate (six or ten times its
  margin): how often the audit stops at look 1 of 4.

Each row gives the share of runs that end with "difference detected", "equivalent" (both can
hold at once) or neither (undecided at the budget), and the mean pairs used. For the scenarios
with an effect, it also gives the fixed design's power at the budget, the fixed-n design of the same
power (the same share "difference detected") and of the same share decided (either verdict), each found on the same replicates'
first n pairs (n every 100, interpolated), with the pairs the sequential design saves against it
(negative: it costs more). ``fair-count`` is matched on the share shown equivalent instead.
The last column gives the share of runs that stop at each look (the last look counts the runs
that spend the budget undecided too).

Run: ``.venv/bin/python bench/sequential.py [--reps 1000] [--rate-reps 400] [--jobs 4] [--scenarios ...] [--curves]``.
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
SCENARIOS = (
    "null-family",
    "margin",
    "inside-count",
    "inside-wide",
    "outside-count",
    "effect-count",
    "effect-rate",
    "inside-rate",
    "fair-count",
    "large-count",
    "large-rate",
    "larger-rate",
)


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
    match: str | None = None  # what the fixed-n design is matched on: "power", "equivalence", or None (no match)
    effect: str = "0"  # the true effect, in words, for the table


def _plant_rate(a: np.ndarray, b: np.ndarray, effect: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A true rate difference ``effect`` (A - B): concordant pairs turn discordant in A's favour, as a changed model's would."""
    concordant = a == b
    flip = concordant & (rng.random(a.size) < effect / max(float(concordant.mean()), 1e-12))
    a, b = a.copy(), b.copy()
    a[flip & (a == 0)] = 1.0
    b[flip & (b == 1)] = 0.0
    return a, b


@dataclass(frozen=True)
class Run:
    """One replicate: the pairs the sequential audit used, its verdicts, and the fixed-n verdicts (difference, equivalent) by n."""

    used: int
    rejected: frozenset[str]
    equivalent: frozenset[str]
    fixed: dict[int, tuple[bool, bool]]


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


def _replicate(args: tuple[Population, Scenario, tuple[int, ...], int, RepeatedP, tuple[int, ...]]) -> Run:
    """One sequential audit (and the fixed-n tests on the same pairs) of a fresh draw."""
    pop, scenario, looks, seed, repeated, fixed_ns = args
    rng = np.random.default_rng(seed)
    data = _draw(pop, scenario, looks[-1], rng)
    best: dict[str, float] = {}
    best_eq: dict[str, float] = {}
    used, rejected, equivalent = looks[-1], set[str](), set[str]()
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
    fixed: dict[int, tuple[bool, bool]] = {}
    if fixed_ns:
        (m,) = scenario.primary
        a, b = data[m]
        for n in fixed_ns:
            p, p_eq = _tests(a[:n], b[:n], _kind(m), scenario.margin)
            fixed[n] = (p < ALPHA, p_eq is not None and p_eq < ALPHA)
    return Run(used, frozenset(rejected), frozenset(equivalent), fixed)


def _fixed_n_matching(rate: float, curve: dict[int, float]) -> float | None:
    """The fixed n whose success rate equals ``rate`` (linear interpolation on the curve), None if beyond it."""
    ns = sorted(curve)
    for lo, hi in zip(ns, ns[1:]):
        if curve[lo] <= rate <= curve[hi] and curve[hi] > curve[lo]:
            return lo + (hi - lo) * (rate - curve[lo]) / (curve[hi] - curve[lo])
    return float(ns[0]) if ns and rate <= curve[ns[0]] else None


def _saved(rate: float, curve: dict[int, float], used: float) -> str:
    """``fixed n (pairs saved)`` for the fixed-n design as successful as ``rate``: negative savings cost more."""
    n_star = _fixed_n_matching(rate, curve)
    if n_star is None:
        return f"> {max(curve):,} (–)"
    return f"{n_star:,.0f} ({1 - used / n_star:+.0%})"


def _outcomes(out: list[Run], primary: tuple[str, ...]) -> dict[str, float]:
    """The shares of runs ending with any difference detected, all primaries equivalent, both, and neither."""
    rejected = np.array([bool(o.rejected) for o in out])
    equivalent = np.array([o.equivalent == frozenset(primary) for o in out])
    return {
        "difference": float(rejected.mean()),
        "equivalent": float(equivalent.mean()),
        "both": float((rejected & equivalent).mean()),
        "undecided": float((~rejected & ~equivalent).mean()),
    }


def _curve(out: list[Run], success: int | None) -> dict[int, float]:
    """Share of fixed-n runs detecting a difference (0), showing equivalence (1), or either (None), by n."""
    return {
        n: float(np.mean([o.fixed[n][success] if success is not None else any(o.fixed[n]) for o in out]))
        for n in sorted(out[0].fixed)
    }


def _matched(out: list[Run], scenario: Scenario, shares: dict[str, float], used: float) -> str:
    """The fixed-n columns: the fixed design at the budget's power; the fixed n of the same power, and of the same share decided.

    For ``match="equivalence"`` the first two are the share shown equivalent instead of the power.
    """
    if scenario.match is None:
        return " – | – | – |"
    goal = 1 if scenario.match == "equivalence" else 0
    target = _curve(out, goal)
    same = _saved(shares["equivalent" if goal else "difference"], target, used)
    return f" {target[max(target)]:.3f} | {same} | {_saved(1 - shares['undecided'], _curve(out, None), used)} |"


def run(
    pop: Population,
    scenario: Scenario,
    looks: tuple[int, ...],
    reps: int,
    jobs: int,
    repeated: RepeatedP,
    *,
    curves: bool = False,
) -> str:
    """One scenario's line of the results table (and, with ``curves``, the fixed-n power by n under it)."""
    fixed_ns = tuple(range(100, looks[-1] + 1, 100)) if scenario.match else ()
    tasks = [(pop, scenario, looks, 1000 + i, repeated, fixed_ns) for i in range(reps)]
    started = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            out = list(pool.map(_replicate, tasks, chunksize=8))
    else:
        out = [_replicate(t) for t in tasks]
    used = np.array([o.used for o in out], float)
    shares = _outcomes(out, scenario.primary)
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    line = (
        f"| {scenario.name} | {', '.join(scenario.primary)} | {scenario.effect} | {reps:,} | {shares['difference']:.3f} | "
        f"{shares['equivalent']:.3f} | {shares['both']:.3f} | {shares['undecided']:.3f} | {used.mean():,.0f} | "
        f"{np.mean(used < looks[-1]):.0%} |"
    )
    line += _matched(out, scenario, shares, float(used.mean()))
    at_look = " / ".join(f"{np.mean(used == n):.0%}" for n in looks)
    line += f" {3 * se:.3f} | {at_look} | {time.perf_counter() - started:.0f} s"
    if curves and scenario.match:
        power = _curve(out, 1 if scenario.match == "equivalence" else 0)
        line += "\n  fixed n: " + ", ".join(f"{n:,} {share:.3f}" for n, share in power.items())
    return line


def scenarios(pop: Population) -> dict[str, Scenario]:
    """The scenarios, by name; ``margin`` is 0.1 sd of the population's per-response compound scores."""
    margin = 0.1 * float(np.concatenate([pop.a["compound"], pop.b["compound"]]).std(ddof=1))
    rate_margin = default_margin("rate")
    assert rate_margin is not None

    def at(times: float) -> Scenario:
        name = {0.5: "inside-count", 1.0: "margin", 1.5: "outside-count"}[times]
        return Scenario(name, ("compound",), shift=times * margin, margin=margin, match="power", effect=f"{times:g} × margin")

    return {
        "null-family": Scenario("null-family", MEASURES),
        "margin": at(1.0),
        "inside-count": at(0.5),
        "outside-count": at(1.5),
        "inside-wide": Scenario(
            "inside-wide", ("compound",), shift=0.035, margin=0.07, match="power", effect="0.5 × margin (±0.07, wide)"
        ),
        "effect-count": Scenario(
            "effect-count", ("compound",), shift=0.035, match="power", effect=f"{0.035 / margin:.2f} × margin (default)"
        ),
        "effect-rate": Scenario(
            "effect-rate", ("positive",), rate_effect=0.04, match="power", effect=f"{0.04 / rate_margin:g} × margin"
        ),
        "inside-rate": Scenario(
            "inside-rate", ("positive",), rate_effect=0.01, match="power", effect=f"{0.01 / rate_margin:g} × margin"
        ),
        "fair-count": Scenario("fair-count", ("compound",), match="equivalence", effect="0 (default margin)"),
        "large-count": Scenario(
            "large-count", ("compound",), shift=0.14, match="power", effect=f"{0.14 / margin:.2f} × margin (default)"
        ),
        "large-rate": Scenario(
            "large-rate", ("positive",), rate_effect=0.12, match="power", effect=f"{0.12 / rate_margin:g} × margin"
        ),
        "larger-rate": Scenario(
            "larger-rate", ("positive",), rate_effect=0.2, match="power", effect=f"{0.2 / rate_margin:g} × margin"
        ),
    }


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
    parser.add_argument("--curves", action="store_true", help="print each matched scenario's fixed-n power by n")
    args = parser.parse_args()
    pop = chitchat_population(args.conversations)
    looks = tuple(args.looks)
    repeated = RepeatedP([n / looks[-1] for n in looks], args.spending)
    table = scenarios(pop)
    print(f"population: {pop.n_pairs:,} turn pairs; looks {looks}; {args.spending}; alpha {ALPHA}")
    print(
        f"| scenario | primary | true effect | reps | difference detected | equivalent | both | undecided | mean pairs used | "
        f"stopped before {looks[-1]:,} | fixed {looks[-1]:,}: power | fixed n, same power (saved) | "
        f"fixed n, same share decided (saved) | 3 SE of α | stopped at look {' / '.join(map(str, range(1, len(looks) + 1)))} |"
    )
    print("|---" * 15 + "|")
    for name in args.scenarios:
        rate_scenario = any(_kind(m) == "rate" for m in table[name].primary)
        reps = args.rate_reps if rate_scenario else args.reps
        print(run(pop, table[name], looks, reps, args.jobs, repeated, curves=args.curves), flush=True)


if __name__ == "__main__":
    main()
