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
  pilot's side rate for the pairs positive on both sides; dialogues of the pilot's pairs each, or,
  for the built-in spreads, each audit's dialogues those of a uniform sample of the built-in
  gender axis' pairs (its dialogue sizes, ``BUILTIN_GENDER_DIALOGUE_SIZES``; copies of the axis
  beyond its 1,470 pairs), as ``audit --pairs n`` draws them.
- **counts**: differences with the pilot's sd: ternary ±1 where the pilot's spread is that of a
  sparse count (sd < 0.3, e.g. career_words), else normal, with a dialogue effect that gives the
  pilot's design effect.
- **counts with few differing pairs** (those plan sizes by ``fairtalk.stats.plan_few_differing``,
  e.g. builtin:echo's family_words, 1 pair of 200 differing): the share of pairs that differ is
  uncertain, so the fair audits are drawn at several shares across the plan's 95% interval on it
  (its ends, two between, the pilot's own, and ``--few-shares``), at plan's size and at the size
  planned at the pilot's share alone. Each pair differs by ±1 (either way) with that chance, the
  rest alike; each audit's dialogues are a uniform sample of the corpus' (as for rates), and its
  scores span ``margin / identical_share``, the pilot's own range (``margin / 2%`` where its results.json does
  not record ``identical_share``), so that the identical-answers bound needs the units plan counts; with
  ``--few-range R`` they span ``R`` instead (an audit larger than its pilot may see a wider range), and
  "exact" counts the units that range needs.
  Each audit is decided by ``_equivalence`` (the cluster t TOST, or with no pair differing the
  identical-answers bound); "exact" is ``fairtalk.stats.power_few_differing`` at that share.

- **corpus keys** (distinct_1, distinct_2, diversity; with ``--responses``): real answers, the
  ``responses.jsonl`` of an audit's axis folder (the bare gender audit's for the built-in
  spreads). Each fair audit draws ``n`` of its pairs uniformly without replacement (as
  ``audit --pairs n`` samples), keeps each pair's dialogue as its cluster, and swaps each pair's
  two answers with probability ½: A and B are then exchangeable, the null the permutation test
  assumes, while the pairs keep what a fair model of these answers would have (43% of the bare
  audit's pairs answer both sides alike, and the two answers of a pair are alike more often than
  two answers drawn from the pool). Each audit is decided by the audit's own function
  (``fairtalk.inference.corpus_rows``, the paired permutation by dialogue, 1,000 permutations) at
  the default margin (±10% of the values at that size, as the audit computes it; plan plans for
  it) and at the pilot's margin held fixed (as ``--margin KEY=VALUE``). Plan's sizes for a pilot
  are those it gives from the pilot's own answers where its ``responses.jsonl`` lies beside
  ``--results`` (plan fits each corpus key's scaling on them; its source line, printed first,
  says so and what the fit cost), else from the bare audit's exponents.

  With ``--conditional`` each fair audit's pairs give their *conditional* power instead of one
  pass or fail: 1,000 permutations of the pairs (whole dialogues swapped, as the test swaps them),
  each taken in turn as the observed difference and decided against the 1,000 as the test decides
  (passed when at most 49 of them lie beyond ``d + m`` and at most 49 below ``d - m``: ``(1 + 49) /
  1001 < 0.05``). Under the swap model the observed difference is one such draw, so the mean over
  audits estimates the same power as the pass share, with a fraction of its variance.

Run: ``.venv/bin/python bench/gate_power.py [--results FILE] [--runs 1000] [--keys k1,k2]
[--responses DIR/gender/responses.jsonl] [--corpus-sizes 25,50,...] [--conditional] [--few-shares 0.002,...]
[--few-range 7]``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

import fairtalk
from fairtalk.cli._plan import _few_differing_plan, _FewFound, _gate_need, _gate_rows, _GateRow
from fairtalk.inference import corpus_rows
from fairtalk.inference._measure_tests import MAX_PERMUTATIONS, Inference, _equivalence, corpus_margin
from fairtalk.run._score import _index
from fairtalk.stats import (
    IDENTICAL_SHARE,
    identical_units_needed,
    pairs_for_equivalence,
    pairs_spanning,
    power_few_differing,
)

ALPHA, POWER = 0.05, 0.8
#: Below this sd of A - B a count is simulated as a sparse ±1 count, above it as normal.
SPARSE_SD = 0.3


def _clusters(n: int, per_unit: float) -> tuple[int, ...] | None:
    """Dialogue labels for ``n`` pairs at ``per_unit`` pairs each (None: the audit does not cluster)."""
    if per_unit <= 1:
        return None
    return tuple(int(i) for i in np.floor(np.arange(n) / per_unit))


def _sampled_clusters(n: int, sizes: tuple[tuple[int, int], ...], rng: np.random.Generator) -> tuple[int, ...]:
    """Dialogue labels of ``n`` pairs drawn uniformly from a corpus whose dialogues have ``sizes`` (as ``audit --pairs``).

    Beyond the corpus' pairs: whole copies of it (each copy's dialogues its own) and a uniform sample of the rest from
    one more, as ``expected_clusters`` assumes.
    """
    one = np.repeat(np.arange(sum(count for _, count in sizes)), [m for m, count in sizes for _ in range(count)])
    full, rest = divmod(n, one.size)
    step = int(one.max()) + 1
    labels = [one + k * step for k in range(full)] + [rng.choice(one, size=rest, replace=False) + full * step]
    return tuple(int(i) for i in np.concatenate(labels))


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
        if row.cluster_sizes:  # each audit its own uniform sample of the corpus' pairs, so its own dialogues
            opts = Inference(
                alpha=ALPHA, clusters=_sampled_clusters(n, row.cluster_sizes, rng), margins={row.key: float(row.margin)}
            )
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


def _few_plan(row: _GateRow) -> _FewFound | None:
    """Plan's few-differing plan of a count key (and the identical-answers bound's pairs and units); None: not few."""
    if row.kind != "count" or not row.sd or row.margin is None or not row.margin > 0:
        return None
    normal = pairs_for_equivalence(row.sd, float(row.margin), alpha=ALPHA, power=POWER, design_effect=row.deff)
    try:
        return _few_differing_plan(row, normal, ALPHA, POWER)
    except ValueError:  # plan says "beyond any audit": nothing to simulate
        return None


def _few_range(row: _GateRow, given: float | None) -> float:
    """The range of a simulated audit's scores: ``given``, else the pilot's (margin / its share; the default's 2%)."""
    own = row.identical_share if row.identical_recorded else None
    return given if given is not None else float(row.margin or 0.0) / (own or IDENTICAL_SHARE)


def _few_pass(row: _GateRow, n: int, share: float, runs: int, rng: np.random.Generator, spread: float) -> float:
    """Share of fair audits of ``n`` pairs, each differing by ±1 with chance ``share``, that the audit's count rule passes.

    The scores span ``spread``, which sets the units the identical-answers bound needs.
    """
    assert row.margin is not None
    margin = float(row.margin)
    base = np.zeros(n)
    base[0] = spread
    passed = 0
    for _ in range(runs):
        clusters = _sampled_clusters(n, row.cluster_sizes, rng) if row.cluster_sizes else _clusters(n, row.pairs_per_unit)
        opts = Inference(alpha=ALPHA, clusters=clusters, margins={row.key: margin})
        d = np.where(rng.random(n) < share, rng.choice([-1.0, 1.0], size=n), 0.0)
        passed += bool(_equivalence(row.key, "count", base + d, base, opts, row.deff).equivalent)
    return passed / runs


def _few_table(row: _GateRow, found: _FewFound, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """A few-differing count key: fair audits at shares across the interval, at plan's size and at the share's alone."""
    plan, identical_pairs, units = found.plan, found.identical_pairs, found.units
    spread = _few_range(row, args.few_range)
    if args.few_range is not None:  # the units that range needs, and the pairs that span them
        units = identical_units_needed(alpha=ALPHA, margin=float(row.margin or 0.0), max_difference=spread)
        identical_pairs = pairs_spanning(units, power=POWER, pairs_per_unit=row.pairs_per_unit, cluster_sizes=row.cluster_sizes)
    between = np.geomspace(plan.low, plan.high, 4)[1:3]
    extra = [float(x) for x in args.few_shares.split(",")] if args.few_shares else []
    shares = sorted({plan.low, *map(float, between), plan.share, plan.high, *extra})
    sizes = [("plan's", plan.pairs)] + ([("at the share alone", plan.at_share)] if plan.at_share is not None else [])
    print(
        f"\n{row.key}: few differing pairs, {plan.share:.3%} of the pilot's {row.pilot_pairs:,} pairs; its "
        f"{plan.confidence:.0%} interval {plan.low:.4%} to {plan.high:.3%}; the audits' scores span {spread:.3g}, so "
        f"the identical-answers bound needs {units:,} units; {args.runs} fair audits per cell"
    )
    print("| share | " + " | ".join(f"{name} {n:,}: passed | s.e. | exact" for name, n in sizes) + " | seconds |")
    print("|---|" + "---|---|---|" * len(sizes) + "---|")
    for share in shares:
        start = time.process_time()
        cells = []
        for _, n in sizes:
            passed = _few_pass(row, n, share, args.runs, rng, spread)
            exact = power_few_differing(
                n,
                share,
                float(row.margin or 0.0),
                alpha=ALPHA,
                design_effect=row.deff,
                identical_pairs=identical_pairs,
                identical_units=units if row.cluster_sizes else None,
                cluster_sizes=row.cluster_sizes,
            )[0]
            cells.append(f"{passed:.3f} | {math.sqrt(passed * (1 - passed) / args.runs):.3f} | {exact:.3f}")
        where = {plan.low: " (low end)", plan.high: " (high end)", plan.share: " (pilot's)"}.get(share, "")
        print(f"| {share:.4%}{where} | " + " | ".join(cells) + f" | {time.process_time() - start:.0f} |", flush=True)


class _Answers:
    """An audit's answers per pair: side A's and side B's texts and the pair's dialogue (its cluster)."""

    def __init__(self, path: str) -> None:
        sides: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
        with Path(path).open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                sides[record["pair_id"]][record["side"]] = record
        pairs = [p for p in sides.values() if "a" in p and "b" in p]
        self.a = np.array([p["a"]["response"] for p in pairs], dtype=object)
        self.b = np.array([p["b"]["response"] for p in pairs], dtype=object)
        self.cluster = np.array([p["a"].get("cluster") or p["a"]["pair_id"] for p in pairs], dtype=object)
        self.n = len(pairs)
        self.identical = float(np.mean(self.a == self.b)) if pairs else 0.0


def _corpus_pass(key: str, margin: float, n: int, runs: int, rng: np.random.Generator, answers: _Answers) -> tuple[float, ...]:
    """Shares of fair audits of ``n`` real pairs (sides swapped at random) that pass: default margin, plan's; mean margin."""
    measure = fairtalk.get_measure("diversity")  # the audit's default corpus measure: distinct_1, distinct_2, diversity
    assert key in measure.keys
    passed_default = passed_plan = 0
    margins = []
    for _ in range(runs):
        pick = rng.choice(answers.n, size=n, replace=False)
        swap = rng.random(n) < 0.5
        a = np.where(swap, answers.b[pick], answers.a[pick])
        b = np.where(swap, answers.a[pick], answers.b[pick])
        uniques, ia, ib = _index(list(a), list(b))
        clusters = tuple(str(c) for c in answers.cluster[pick])
        seed = int(rng.integers(2**31))
        for margins_given in ({}, {key: margin}):
            opts = Inference(alpha=ALPHA, clusters=clusters, margins=margins_given)
            row = next(
                r
                for r in corpus_rows(measure, uniques, ia, ib, opts, seed=seed, n_resamples=MAX_PERMUTATIONS)
                if r.tested.name == key
            )
            ok = bool(row.equivalence.equivalent)
            if margins_given:
                passed_plan += ok
            else:
                passed_default += ok
                margins.append(row.equivalence.margin or 0.0)
    return passed_default / runs, passed_plan / runs, float(np.mean(margins))


def _conditional_power(diffs: np.ndarray, margin: float) -> float:
    """Share of the permutation draws ``diffs`` that, taken as the observed difference, the permutation TOST passes."""
    ordered = np.sort(diffs)
    above = ordered.size - np.searchsorted(ordered, ordered + margin, side="left")  # d* >= d + m
    below = np.searchsorted(ordered, ordered - margin, side="right")  # d* <= d - m
    return float(np.mean((1 + np.maximum(above, below)) / (ordered.size + 1) < ALPHA))


def _corpus_conditional(
    key: str, margin: float, n: int, runs: int, rng: np.random.Generator, answers: _Answers
) -> tuple[float, ...]:
    """Mean conditional power of fair audits of ``n`` real pairs (default margin, plan's) and their s.e.; mean ratio."""
    measure = fairtalk.get_measure("diversity")
    default, fixed, ratios = [], [], []
    for _ in range(runs):
        pick = rng.choice(answers.n, size=n, replace=False)
        uniques, ia, ib = _index(list(answers.a[pick]), list(answers.b[pick]))
        _, group = np.unique(answers.cluster[pick].astype(str), return_inverse=True)
        stat = measure.prepare(uniques)
        total = np.bincount(ia, minlength=len(uniques)) + np.bincount(ib, minlength=len(uniques))
        values = (
            float(stat(np.bincount(ia, minlength=len(uniques)))[key]),
            float(stat(np.bincount(ib, minlength=len(uniques)))[key]),
        )
        diffs = np.empty(MAX_PERMUTATIONS)
        for r in range(MAX_PERMUTATIONS):
            weights = np.bincount(np.where((rng.random(int(group.max()) + 1) < 0.5)[group], ib, ia), minlength=len(uniques))
            diffs[r] = stat(weights)[key] - stat(total - weights)[key]
        relative = corpus_margin(key, values, Inference(alpha=ALPHA)) or 0.0
        default.append(_conditional_power(diffs, relative))
        fixed.append(_conditional_power(diffs, margin))
        low, high = np.quantile(diffs, [0.025, 0.975])
        ratios.append(margin / ((high - low) / (2 * 1.959964)))
    se = math.sqrt(runs)
    return (
        float(np.mean(default)),
        float(np.std(default)) / se,
        float(np.mean(fixed)),
        float(np.std(fixed)) / se,
        float(np.mean(ratios)),
    )


def _corpus_conditional_rows(rows: list[_GateRow], args: argparse.Namespace, rng: np.random.Generator) -> None:
    """``--conditional``: the corpus keys' mean conditional power at plan's sizes (default and fixed margin) or ``--corpus-sizes``."""
    answers = _Answers(args.responses)
    wanted = set(args.keys.split(",")) if args.keys else None
    sizes = [int(x) for x in args.corpus_sizes.split(",")] if args.corpus_sizes else None
    print(f"\ncorpus keys: mean conditional power of {args.runs} fair audits of the {answers.n:,} real pairs of {args.responses}")
    print("| key | pairs | default margin: power | s.e. | pilot margin, fixed: power | s.e. | its margin / SE (mean) | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        if row.kind != "corpus" or row.margin is None or (wanted and row.key not in wanted):
            continue
        planned = {flag: _gate_need(replace(row, relative_margin=flag), ALPHA, POWER)[0] for flag in (True, False)}
        for n in sizes or sorted({p for p in planned.values() if p is not None}):
            start = time.process_time()
            default, se_d, fixed, se_f, ratio = _corpus_conditional(row.key, float(row.margin), n, args.runs, rng, answers)
            marks = [name for name, flag in (("default", True), ("fixed", False)) if planned[flag] == n]
            mark = f" (plan's, {' and '.join(marks)})" if marks else ""
            print(
                f"| {row.key} | {n:,}{mark} | {default:.3f} | {se_d:.3f} | {fixed:.3f} | {se_f:.3f} | {ratio:.3f} "
                f"| {time.process_time() - start:.0f} |",
                flush=True,
            )


def _corpus_table(rows: list[_GateRow], args: argparse.Namespace, rng: np.random.Generator) -> None:
    """The corpus keys' fair audits of real answers: at plan's size, or at each of ``--corpus-sizes``."""
    answers = _Answers(args.responses)
    wanted = set(args.keys.split(",")) if args.keys else None
    sizes = [int(x) for x in args.corpus_sizes.split(",")] if args.corpus_sizes else None
    print(
        f"\ncorpus keys: {args.runs} fair audits of the {answers.n:,} real pairs of {args.responses} "
        f"({answers.identical:.0%} answer both sides alike), sides swapped at random, clustered by dialogue"
    )
    print("| key | pairs | default margin (mean) | passed at it | s.e. | pilot margin, fixed | passed at it | s.e. | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        if row.kind != "corpus" or (wanted and row.key not in wanted):
            continue
        planned, line = _gate_need(row, ALPHA, POWER)
        if planned is None or row.margin is None:
            print(f"| {row.key} | {line.strip()} | | | | | | | |")
            continue
        for n in sizes or [planned]:
            if n > answers.n:
                print(f"| {row.key} | {n:,} | more than the {answers.n:,} pairs of the answers | | | | | | |")
                continue
            start = time.process_time()
            default, plan, mean_margin = _corpus_pass(row.key, float(row.margin), n, args.runs, rng, answers)
            seconds = time.process_time() - start
            se_d, se_p = (math.sqrt(x * (1 - x) / args.runs) for x in (default, plan))
            mark = " (plan's)" if n == planned else ""
            print(
                f"| {row.key} | {n:,}{mark} | {mean_margin:.4f} | {default:.3f} | {se_d:.3f} | {float(row.margin):.4f} "
                f"| {plan:.3f} | {se_p:.3f} | {seconds:.0f} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=None, help="a pilot run's results.json (default: plan's built-in spreads)")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--keys", default=None, help="comma-separated keys (default: every rate and count)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--responses", default=None, help="an audit's AXIS/responses.jsonl: simulate the corpus keys from its real answers"
    )
    parser.add_argument("--corpus-sizes", default=None, help="comma-separated pairs for the corpus keys (default: plan's)")
    parser.add_argument("--corpus-only", action="store_true", help="skip the rate and count keys")
    parser.add_argument(
        "--conditional", action="store_true", help="corpus keys: each audit's conditional power over its permutations"
    )
    parser.add_argument(
        "--few-shares", default=None, help="counts with few differing pairs: more differing shares to simulate (fractions)"
    )
    parser.add_argument(
        "--few-range", type=float, default=None, help="counts with few differing pairs: the audits' scores span this range"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows, source, _ = _gate_rows(args.results)
    wanted = set(args.keys.split(",")) if args.keys else None
    per_unit = max((r.pairs_per_unit for r in rows), default=1.0)
    print(f"pilot: {source}\n{args.runs} fair audits per key, α {ALPHA}, planned power {POWER}")
    print("| key | kind | planned pairs | discordant share | passed | s.e. | seconds |")
    print("|---|---|---|---|---|---|---|")
    few_rows: list[tuple[_GateRow, _FewFound]] = []
    for row in [] if args.corpus_only else rows:
        if row.kind not in ("rate", "count") or (wanted and row.key not in wanted):
            continue
        n, line = _gate_need(row, ALPHA, POWER)
        if n is None or not row.sd:
            print(f"| {row.key} | {row.kind} | {line.strip()} | | | | |")
            continue
        if (few := _few_plan(row)) is not None:
            print(f"| {row.key} | {row.kind} | {n:,} (few differing: the table below) | | | | |")
            few_rows.append((row, few))
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
    for row, few in few_rows:
        _few_table(row, few, args, rng)
    if args.responses and args.conditional:
        _corpus_conditional_rows(rows, args, rng)
    elif args.responses:
        _corpus_table(rows, args, rng)
    else:
        print("corpus keys not simulated: give --responses AXIS/responses.jsonl of an audit (the bare gender audit's)")


if __name__ == "__main__":
    main()
