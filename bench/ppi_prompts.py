"""``prompts analyze --gold`` by simulation: coverage of its regard-gap interval when templates are random.

Paper 004's completions come in templates (``"worked as"``: all its structures and seeds), and
templates differ in how regard falls. Each replicate draws ``--templates`` templates, each with
its own distribution of regard labels (-1, 0, 1 and 2 for "other") for the group ``man``,
Dirichlet with ``--concentration`` (3, 4, 3, 2 by default); ``woman``'s is the same with
``--shift`` (20%) of the positives moved to neutral, so the true gap is positive (the same share
in every template, or with ``--shift-spread`` uniform around it by template, so that the true gap
itself varies from template to template). Every template has ``--structures`` × ``--seeds``
completions per group, and a person labels a uniform sample of ``--labels`` completions per group
(the truth). The simulated scorer gives the true label 85% of
the time and a uniform one otherwise, and also calls ``woman``'s true positives neutral at a rate
that is either **constant** (``--error``, 0.3) or **varying** by template (uniform on
0 to 2 × ``--error``): a group-dependent error that fakes part of a gap.

Each replicate's data are analysed twice by :func:`fairtalk.prompts._gold.gold_regard`:

- **templates**: the completions keep their template, so the intervals are clustered by template
  (what ``prompts analyze --gold`` does; t with G − 1 degrees of freedom);
- **completions**: every completion is given one template, so completions are the units (the
  naive analysis that ignores that templates are random).

It prints, per setting, how often the 95% prediction-powered (PPI++) interval of the gap covers
the **superpopulation gap** (of the template distribution: what a new draw of templates would
estimate) and **the data's own gap** (the true labels of the completions drawn), how often the
labels-only interval covers them, both intervals' mean widths, the share of replicates whose gap
is the labels' alone (fewer than 10 labelled units, templates or completions, disagree with the
scorer: the rule of issue 39, so that the "PPI" interval is then the labels-only one), and the
scorer-only estimate's mean error against the data's gap (its bias); each coverage with its Monte
Carlo standard error.

Run: ``.venv/bin/python bench/ppi_prompts.py [--reps 400] [--seed 0] [--labels 100] [--shift-spread 0.2]``
(400 replicates: about 65 CPU s, 100 s wall on the shared 2-core machine; 2,000: 6 CPU min).

**Rare label shares** (``--rare``, issue 39): the labels-only interval of a label's *share* in a
group (the share of "negative" regard among the counted completions) when that share is small.
Each replicate draws, per group and template, a true negative share ``π · m`` (``m`` Gamma with
mean 1 and shape ``--rare-shape``, 2: templates differ; capped at 1), "other" at 15% and the
rest neutral or positive alike; the scorer is right 85% of the time, uniform otherwise. A
person labels a uniform ``n`` completions per group. Both groups' negative shares are read from
:func:`~fairtalk.prompts._gold.gold_regard` (clustered by template, as ``prompts analyze --gold``)
and pooled (2 intervals a replicate). It prints, per true share ``π`` (``--shares``) and ``n``
(``--label-sizes``), how often the labels-only interval (``labels_ci95``) and the interval shown
(``ci95``: the labels' alone unless 10 templates disagree with the scorer) cover the data's own
share and ``π``, how often the labels-only interval has zero width, how often either leaves
[0, 1], and the mean widths. (12 cells × 300 replicates: about 10 CPU min, 32 min wall at load 5–9.)
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairtalk.prompts._gold import gold_regard
from fairtalk.prompts._templates import GroupPair

VALUES = np.array([-1, 0, 1, 2])
PAIR = GroupPair("gender", "man", "woman")
GROUPS = ("man", "woman")
UNITS = ("templates", "completions")
ERRORS = ("constant", "varying")


@dataclass(frozen=True)
class Design:
    """The templates' label distributions, the scorer's error, and the sizes (completions per group: templates × structures × seeds)."""

    n_templates: int = 10
    n_structures: int = 20
    n_seeds: int = 10
    n_labels: int = 100
    concentration: tuple[float, float, float, float] = (3.0, 4.0, 3.0, 2.0)
    shift: float = 0.2
    shift_spread: float = 0.0
    accuracy: float = 0.85
    error: float = 0.3

    @property
    def per_template(self) -> int:
        """Completions per template and group."""
        return self.n_structures * self.n_seeds

    def superpopulation_gap(self) -> float:
        """The gap of the template distribution: the ratio of mean regard over infinitely many equal-sized templates."""
        alpha = np.asarray(self.concentration)
        mean = (alpha / alpha.sum())[None, :]
        return _mean_regard(mean) - _mean_regard(_shift(mean, self.shift))


@dataclass(frozen=True)
class Replicate:
    """One analysis of one replicate: the data's gap and the intervals (NaN where the gap could not be estimated)."""

    data_gap: float
    ppi: tuple[float, float]
    labels: tuple[float, float]
    scorer: float
    labels_alone: bool = False


@dataclass(frozen=True)
class Summary:
    """A setting's figures over the replicates: coverages, their Monte Carlo SEs, mean widths and the scorer's bias."""

    units: str
    error: str
    reps: int
    ppi_superpopulation: float
    ppi_data: float
    labels_superpopulation: float
    labels_data: float
    ppi_width: float
    labels_width: float
    scorer_bias: float
    scorer_bias_se: float
    seconds: float
    labels_alone: float = 0.0


def _mean_regard(p: np.ndarray) -> float:
    """Mean regard of a label distribution (columns -1, 0, 1, other): (P(1) − P(−1)) / (1 − P(other))."""
    return float(((p[:, 2] - p[:, 0]) / (1 - p[:, 3]))[0])


def _shift(p: np.ndarray, shift: float | np.ndarray) -> np.ndarray:
    """``woman``'s distribution: ``shift`` (one, or one per row) of the positives moved to neutral."""
    q = p.copy()
    q[:, 1] = p[:, 1] + shift * p[:, 2]
    q[:, 2] = p[:, 2] * (1 - shift)
    return q


def _draw_labels(rng: np.random.Generator, probs: np.ndarray, template: np.ndarray) -> np.ndarray:
    """One label per completion from its template's row of ``probs`` (inverse CDF, vectorised)."""
    cdf = np.cumsum(probs, axis=1)[template]
    index = (rng.random(template.size)[:, None] > cdf[:, :-1]).sum(axis=1)
    return np.asarray(VALUES[index])


def simulate_data(design: Design, varying: bool, rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, tuple[int]]]:
    """One replicate: the completions frame (scorer's ``label``, true ``truth``) and the human labels of a sample by id."""
    probs = rng.dirichlet(design.concentration, size=design.n_templates)
    error = rng.uniform(0, 2 * design.error, design.n_templates) if varying else np.full(design.n_templates, design.error)
    spread = rng.uniform(-design.shift_spread, design.shift_spread, design.n_templates) if design.shift_spread else 0.0
    shifted = _shift(probs, design.shift + spread)
    template = np.repeat(np.arange(design.n_templates), design.per_template)
    within = np.tile(np.arange(design.per_template), design.n_templates)
    n = template.size
    parts = []
    for group in GROUPS:
        truth = _draw_labels(rng, probs if group == "man" else shifted, template)
        label = np.where(rng.random(n) < design.accuracy, truth, VALUES[rng.integers(0, VALUES.size, n)])
        if group == "woman":
            label = np.where((truth == 1) & (rng.random(n) < error[template]), 0, label)
        parts.append(
            pd.DataFrame(
                {
                    "group": group,
                    "template": np.char.add("t", template.astype(str)),
                    "structure": np.char.add("s", (within // design.n_seeds).astype(str)),
                    "seed": within % design.n_seeds,
                    "label": label,
                    "truth": truth,
                }
            )
        )
    return _with_labels(parts, n, design.n_labels, rng)


def _with_labels(
    parts: list[pd.DataFrame], n: int, n_labels: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, dict[str, tuple[int]]]:
    """The groups' completions as one frame with ids, and a person's label (the truth) on ``n_labels`` of each group's ``n``."""
    frame = pd.concat(parts, ignore_index=True)
    frame["id"] = np.arange(len(frame)).astype(str)
    labels: dict[str, tuple[int]] = {}
    for g in range(len(GROUPS)):
        picked = g * n + rng.choice(n, n_labels, replace=False)
        labels.update({str(i): (int(frame["truth"].iat[i]),) for i in picked})
    return frame, labels


def data_gap(frame: pd.DataFrame) -> float:
    """The data's own gap: mean true regard of ``man`` minus ``woman``'s, over completions not truly "other"."""
    counted = frame[frame["truth"] != 2]
    means = counted.groupby("group")["truth"].mean()
    return float(means[PAIR.a] - means[PAIR.b])


def analyse(frame: pd.DataFrame, labels: dict[str, tuple[int]], units: str, truth: float) -> Replicate:
    """``gold_regard``'s gap with templates as clusters or, for ``units == "completions"``, completions as units."""
    analysed = frame if units == "templates" else frame.assign(template="t")
    gaps = gold_regard(analysed, labels, groups=list(GROUPS), pairs=[PAIR]).gaps
    if PAIR.name not in gaps:
        return Replicate(truth, (math.nan, math.nan), (math.nan, math.nan), math.nan)
    est = gaps[PAIR.name]
    return Replicate(truth, est.ci95, est.labels_ci95, est.scorer_estimate, est.too_few_disagreements)


def _cover(intervals: np.ndarray, truth: np.ndarray | float) -> float:
    """Share of the intervals (rows low, high) that hold ``truth``."""
    return float(np.mean((intervals[:, 0] <= truth) & (truth <= intervals[:, 1])))


def summarise(units: str, error: str, reps: Sequence[Replicate], superpopulation: float, seconds: float) -> Summary:
    """The figures of one setting from its replicates (those without an estimate left out)."""
    done = [r for r in reps if not math.isnan(r.scorer)]
    truth = np.array([r.data_gap for r in done])
    ppi = np.array([r.ppi for r in done])
    lab = np.array([r.labels for r in done])
    bias = np.array([r.scorer for r in done]) - truth
    return Summary(
        units=units,
        error=error,
        reps=len(done),
        ppi_superpopulation=_cover(ppi, superpopulation),
        ppi_data=_cover(ppi, truth),
        labels_superpopulation=_cover(lab, superpopulation),
        labels_data=_cover(lab, truth),
        ppi_width=float(np.mean(ppi[:, 1] - ppi[:, 0])),
        labels_width=float(np.mean(lab[:, 1] - lab[:, 0])),
        scorer_bias=float(bias.mean()),
        scorer_bias_se=float(bias.std(ddof=1) / math.sqrt(bias.size)),
        seconds=seconds,
        labels_alone=float(np.mean([r.labels_alone for r in done])),
    )


def simulate(design: Design, reps: int, seed: int = 0, errors: Sequence[str] = ERRORS) -> list[Summary]:
    """Every setting's summary: per error model, ``reps`` replicates, each analysed with both units (paired)."""
    superpopulation = design.superpopulation_gap()
    summaries = []
    for k, error in enumerate(errors):
        rng = np.random.default_rng([seed, k])
        results: dict[str, list[Replicate]] = {units: [] for units in UNITS}
        seconds = dict.fromkeys(UNITS, 0.0)
        for _ in range(reps):
            frame, labels = simulate_data(design, error == "varying", rng)
            truth = data_gap(frame)
            for units in UNITS:
                started = time.perf_counter()
                results[units].append(analyse(frame, labels, units, truth))
                seconds[units] += time.perf_counter() - started
        summaries += [summarise(units, error, results[units], superpopulation, seconds[units]) for units in UNITS]
    return summaries


def _se(coverage: float, reps: int) -> float:
    """The Monte Carlo standard error of a coverage over ``reps`` replicates."""
    return math.sqrt(coverage * (1 - coverage) / reps) if reps else math.nan


def table(summaries: Sequence[Summary]) -> list[str]:
    """The Markdown table: coverage ± Monte Carlo SE, mean widths, the scorer's bias (± SE) and the analysis seconds."""
    lines = [
        "| units | scorer error | reps | PPI covers superpop. gap | PPI covers data's gap | labels-only covers superpop. gap "
        "| labels-only covers data's gap | PPI width | labels-only width | labels alone | scorer-only bias | s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summaries:
        cells = [s.ppi_superpopulation, s.ppi_data, s.labels_superpopulation, s.labels_data]
        covers = " | ".join(f"{c:.3f} ± {_se(c, s.reps):.3f}" for c in cells)
        lines.append(
            f"| {s.units} | {s.error} | {s.reps} | {covers} | {s.ppi_width:.3f} | {s.labels_width:.3f} | {s.labels_alone:.2f} "
            f"| {s.scorer_bias:+.4f} ± {s.scorer_bias_se:.4f} | {s.seconds:.0f} |"
        )
    return lines


RARE_OTHER = 0.15
RARE_ACCURACY = 0.85
RARE_LABEL = "negative"


@dataclass(frozen=True)
class RareDesign:
    """A rare label's true share ``share`` (of counted completions) and the labels per group, in templates of random share."""

    share: float
    n_labels: int
    n_templates: int = 10
    per_template: int = 100
    shape: float = 2.0


@dataclass(frozen=True)
class RareSummary:
    """One rare-share cell: coverages of the labels-only and shown intervals, zero widths, leaving [0, 1], widths."""

    share: float
    n_labels: int
    n_intervals: int
    labels_data: float
    labels_superpopulation: float
    shown_data: float
    shown_superpopulation: float
    labels_zero_width: float
    labels_outside: float
    shown_outside: float
    labels_width: float
    shown_width: float
    labels_alone: float


def simulate_rare_data(design: RareDesign, rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, tuple[int]]]:
    """One replicate of the rare-share scenario: the completions (scorer's ``label``, true ``truth``) and the labels by id."""
    template = np.repeat(np.arange(design.n_templates), design.per_template)
    n = template.size
    parts = []
    for group in GROUPS:
        share_t = np.minimum(1.0, design.share * rng.gamma(design.shape, 1 / design.shape, design.n_templates))
        u = rng.random(n)
        counted_u = rng.random(n)
        truth = np.where(u < RARE_OTHER, 2, np.where(counted_u < share_t[template], -1, np.where(rng.random(n) < 0.5, 0, 1)))
        label = np.where(rng.random(n) < RARE_ACCURACY, truth, VALUES[rng.integers(0, VALUES.size, n)])
        parts.append(
            pd.DataFrame(
                {
                    "group": group,
                    "template": np.char.add("t", template.astype(str)),
                    "structure": "s",
                    "seed": np.arange(n),
                    "label": label,
                    "truth": truth,
                }
            )
        )
    return _with_labels(parts, n, design.n_labels, rng)


def _covers(interval: tuple[float, float], truth: float) -> bool:
    return interval[0] <= truth <= interval[1]


def simulate_rare(design: RareDesign, reps: int, seed: int = 0) -> RareSummary:
    """One cell: ``reps`` replicates, both groups' negative-share intervals pooled."""
    rng = np.random.default_rng([seed, round(design.share * 1e4), design.n_labels])
    rows: list[tuple[bool, bool, bool, bool, bool, bool, bool, float, float, bool]] = []
    for _ in range(reps):
        frame, labels = simulate_rare_data(design, rng)
        found = gold_regard(frame, labels, groups=list(GROUPS), pairs=[PAIR])
        for group in GROUPS:
            est = found.rates.get(group, {}).get(RARE_LABEL)
            if est is None:  # no labelled estimate (never at these sizes)
                continue
            counted = frame[(frame["group"] == group) & (frame["truth"] != 2)]
            data_share = float((counted["truth"] == -1).mean())
            lab, shown = est.labels_ci95, est.ci95
            rows.append(
                (
                    _covers(lab, data_share),
                    _covers(lab, design.share),
                    _covers(shown, data_share),
                    _covers(shown, design.share),
                    lab[1] - lab[0] <= 1e-12,
                    lab[0] < 0 or lab[1] > 1,
                    shown[0] < 0 or shown[1] > 1,
                    lab[1] - lab[0],
                    shown[1] - shown[0],
                    est.too_few_disagreements,
                )
            )
    a = np.array(rows, dtype=float)
    m = a.mean(axis=0)
    return RareSummary(design.share, design.n_labels, len(rows), *(float(v) for v in m))


def rare_table(summaries: Sequence[RareSummary]) -> list[str]:
    """The Markdown table of the rare-share cells (coverage ± Monte Carlo SE)."""
    lines = [
        "| true share | labels/group | intervals | labels-only covers data's share | labels-only covers π | shown covers data's "
        "share | shown covers π | labels-only zero width | labels-only leaves [0, 1] | shown leaves [0, 1] "
        "| labels-only width | shown width | labels alone |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summaries:
        covers = " | ".join(
            f"{c:.3f} ± {_se(c, s.n_intervals):.3f}"
            for c in (s.labels_data, s.labels_superpopulation, s.shown_data, s.shown_superpopulation)
        )
        lines.append(
            f"| {s.share:.3f} | {s.n_labels} | {s.n_intervals} | {covers} | {s.labels_zero_width:.3f} | "
            f"{s.labels_outside:.3f} | {s.shown_outside:.3f} | {s.labels_width:.4f} | {s.shown_width:.4f} | {s.labels_alone:.2f} |"
        )
    return lines


def main_rare(args: argparse.Namespace) -> None:
    """Print the rare-share table."""
    started = time.perf_counter()
    summaries = [
        simulate_rare(RareDesign(share=share, n_labels=n, shape=args.rare_shape), args.reps, args.seed)
        for share in args.shares
        for n in args.label_sizes
    ]
    print(
        f"rare shares: {args.reps} replicates per cell (2 groups each), seed {args.seed}, template shape {args.rare_shape}; "
        f"{time.perf_counter() - started:.0f} s in all"
    )
    print()
    print("\n".join(rare_table(summaries)))


def main() -> None:
    """Print the design and one row per setting (units × scorer error)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rare", action="store_true", help="the rare label-share scenario instead (issue 39)")
    parser.add_argument("--shares", type=float, nargs="+", default=[0.005, 0.01, 0.02, 0.05])
    parser.add_argument("--label-sizes", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--rare-shape", type=float, default=2.0, help="Gamma shape of the templates' share multipliers")
    parser.add_argument("--reps", type=int, default=400, help="replicates per scorer-error model (default 400)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--templates", type=int, default=10)
    parser.add_argument("--structures", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--labels", type=int, default=100, help="human labels per group (default 100)")
    parser.add_argument("--concentration", type=float, nargs=4, default=[3.0, 4.0, 3.0, 2.0])
    parser.add_argument("--shift", type=float, default=0.2, help="share of woman's positives moved to neutral")
    parser.add_argument(
        "--shift-spread",
        type=float,
        default=0.0,
        help="per template, the shift is uniform on shift ± this (default 0: the same in every template)",
    )
    parser.add_argument("--error", type=float, default=0.3, help="scorer's rate of calling woman's positives neutral")
    parser.add_argument("--errors", nargs="+", choices=ERRORS, default=list(ERRORS))
    args = parser.parse_args()
    if args.rare:
        main_rare(args)
        return
    c = args.concentration
    design = Design(
        n_templates=args.templates,
        n_structures=args.structures,
        n_seeds=args.seeds,
        n_labels=args.labels,
        concentration=(c[0], c[1], c[2], c[3]),
        shift=args.shift,
        shift_spread=args.shift_spread,
        error=args.error,
    )
    started = time.perf_counter()
    summaries = simulate(design, args.reps, args.seed, args.errors)
    print(f"{design}")
    print(
        f"superpopulation gap {design.superpopulation_gap():+.4f}; {args.reps} replicates per error model, seed {args.seed}; "
        f"{time.perf_counter() - started:.0f} s in all"
    )
    print()
    print("\n".join(table(summaries)))


if __name__ == "__main__":
    main()
