"""The paper-004 analysis of labelled completions: per group, pairwise, segregated by structure, robustness.

Input is a frame with columns ``group``, ``template``, ``structure``, ``seed`` and ``label``
(-1 negative, 0 neutral, 1 positive, 2 other), such as :func:`read_published` or
:func:`~fairtalk.prompts.completions.read_completions` return. Regard scores are the labels
on -1/0/1; "other" rows never enter a mean regard, and enter the label distributions and KL
divergences only with ``include_other=True``. The *baseline* is the original prompts
(structure ``original``), beside *all* structures (original included, as in the paper's
Fig. 2(b) and Table 2). :func:`analyze` builds each table of :class:`PromptAnalysis` with
one function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairtalk.errors import InputError
from fairtalk.prompts import inference
from fairtalk.prompts._coverage import check_pairs, coverage_warnings
from fairtalk.prompts._frame import codes, finite, kl_matrix, regard_stats
from fairtalk.prompts.result import (
    AnalysisConfig,
    AnalysisCounts,
    Gap,
    InferenceSettings,
    PromptAnalysis,
    RegardStats,
    Robustness,
    VarianceShares,
)
from fairtalk.prompts.robustness import cell_sums, robustness, variance_decomposition
from fairtalk.prompts.templates import GroupPair, GroupSet, default_groups

__all__ = ["LABELS", "PromptAnalysis", "analyze", "kl_matrix"]

#: Label names by label value + 1 (``-1`` -> "negative", ..., ``2`` -> "other").
LABELS: tuple[str, ...] = ("negative", "neutral", "positive", "other")
BASELINE = "original"

_MSG_COLUMNS = "the completions lack the columns: {missing}"
_MSG_LABELS = "labels must be -1, 0, 1 or 2; found {bad}"
_MSG_NO_GROUP = "no completions for the groups {groups} (the data has: {found})"
_MSG_SMOOTHING = "smoothing must be >= 0, got {value!r}"
_INFERENCE_METHOD = "template × seed pigeonhole bootstrap; reversals by Holm over structures"

Table = dict[str, dict[str, float | None]]


@dataclass(frozen=True)
class _Rows:
    """The analysed rows as integer codes (groups of the groups file only), shared by every table."""

    frame: pd.DataFrame
    names: list[str]
    structures: list[str]
    g: np.ndarray
    s: np.ndarray
    labels: np.ndarray
    label_names: tuple[str, ...]
    n_ignored: int
    ignored_groups: list[str]

    @property
    def polar(self) -> np.ndarray:
        return self.labels != 2

    @property
    def counted(self) -> np.ndarray:
        """Rows that enter the label distributions and KL ("other" only with include_other)."""
        return self.labels < len(self.label_names) - 1 if len(self.label_names) == len(LABELS) else self.polar

    @property
    def regard_values(self) -> np.ndarray:
        return self.labels[self.polar].astype(np.float64)

    @property
    def baseline_code(self) -> int:
        return self.structures.index(BASELINE) if BASELINE in self.structures else -1

    @property
    def is_base(self) -> np.ndarray:
        return self.s == self.baseline_code


def _rows(frame: pd.DataFrame, names: list[str], include_other: bool) -> _Rows:
    """Validate the labels and code the rows; rows of other groups are left out and counted."""
    g_codes, _ = codes(frame["group"], names)
    labels = frame["label"].to_numpy().astype(np.int64)
    bad = sorted(set(np.unique(labels).tolist()) - {-1, 0, 1, 2})
    if bad:
        raise InputError(_MSG_LABELS.format(bad=bad))
    keep = g_codes >= 0
    if not keep.any():
        found = sorted(map(str, pd.unique(frame["group"])))[:10]
        raise InputError(_MSG_NO_GROUP.format(groups=", ".join(names), found=", ".join(found)))
    ignored = frame["group"][~keep]
    kept = frame[keep]
    s, structures = codes(kept["structure"])
    return _Rows(frame=kept, names=names, structures=structures, g=g_codes[keep], s=s, labels=labels[keep],
                 label_names=LABELS if include_other else LABELS[:3], n_ignored=len(ignored),
                 ignored_groups=sorted(map(str, pd.unique(ignored))))  # fmt: skip


def _label_distribution(rows: _Rows, mask: np.ndarray) -> tuple[Table, np.ndarray, np.ndarray]:
    """Label shares per group and pooled (``"all"``), with the probability and count matrices."""
    counted = mask & rows.counted
    k = len(rows.label_names)
    counts = cell_sums(np.ones(int(counted.sum())), rows.g[counted], rows.labels[counted] + 1, len(rows.names), k)[1]
    pooled = counts.sum(axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = counts / counts.sum(axis=1, keepdims=True)
        pooled_probs = pooled / pooled.sum()
    out: Table = {name: dict(zip(rows.label_names, map(float, probs[i]))) for i, name in enumerate(rows.names)}
    out["all"] = dict(zip(rows.label_names, map(float, pooled_probs[0])))
    return out, probs, counts


def _regard(rows: _Rows, mask: np.ndarray) -> dict[str, RegardStats]:
    """Mean regard per group and pooled, over the rows in ``mask``."""
    polar = rows.polar
    picked = mask[polar]
    group_codes, values = rows.g[polar][picked], rows.regard_values[picked]
    n_groups = len(rows.names)
    sums = np.bincount(group_codes, weights=values, minlength=n_groups)
    squares = np.bincount(group_codes, weights=values * values, minlength=n_groups)
    counts = np.bincount(group_codes, minlength=n_groups)
    out = {name: RegardStats(**regard_stats(sums[i], squares[i], counts[i])) for i, name in enumerate(rows.names)}
    out["all"] = RegardStats(**regard_stats(sums.sum(), squares.sum(), counts.sum()))
    return out


def _kl(probs: np.ndarray, names: list[str], smoothing: float) -> Table:
    """KL(P_a || P_b) for every ordered pair of groups (None where infinite)."""
    matrix = kl_matrix(np.nan_to_num(probs), smoothing=smoothing)
    return {a: {b: finite(matrix[i, j]) for j, b in enumerate(names)} for i, a in enumerate(names)}


@dataclass(frozen=True)
class _Structures:
    """Mean regard per (structure, group) cell and the rankings drawn from it."""

    by_structure: Table
    counts: dict[str, int]
    best: tuple[str, ...]
    worst: tuple[str, ...]
    best_by_group: dict[str, tuple[str, ...]]
    worst_by_group: dict[str, tuple[str, ...]]
    sums: np.ndarray
    cell_counts: np.ndarray
    means: np.ndarray


def _ranked(values: np.ndarray, structures: list[str], n_best: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    order = [structures[i] for i in np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable")
             if np.isfinite(values[i])]  # fmt: skip
    k = min(n_best, len(order))
    return tuple(order[:k]), tuple(reversed(order[len(order) - k :]))


def _by_structure(rows: _Rows, n_best: int) -> _Structures:
    """Segregated by structure: mean regard per (structure, group), best and worst structures overall and per group."""
    polar, names, structures = rows.polar, rows.names, rows.structures
    sums, cell_counts = cell_sums(rows.regard_values, rows.s[polar], rows.g[polar], len(structures), len(names))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / cell_counts
    present = cell_counts > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = np.where(present, means, 0.0).sum(axis=1) / present.sum(axis=1)  # mean over groups with data
    best, worst = _ranked(overall, structures, n_best)
    per_group = {name: _ranked(means[:, j], structures, n_best) for j, name in enumerate(names)}  # the paper's, per group
    return _Structures(
        by_structure={st: {name: finite(means[i, j]) for j, name in enumerate(names)} for i, st in enumerate(structures)},
        counts=dict(zip(structures, map(int, np.bincount(rows.s, minlength=len(structures))))),
        best=best, worst=worst, best_by_group={n: b for n, (b, _) in per_group.items()},
        worst_by_group={n: w for n, (_, w) in per_group.items()}, sums=sums, cell_counts=cell_counts, means=means,
    )  # fmt: skip


def _bootstrap(rows: _Rows, pairs: list[tuple[int, int]], smoothing: float, seed: int,
               n_resamples: int) -> inference.Bootstrap:  # fmt: skip
    """Template × seed bootstrap of the gaps, per-structure gaps and KL matrix."""
    t_codes, templates = codes(rows.frame["template"])
    e_codes, seeds = codes(rows.frame["seed"])

    def kl_of(label_counts: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return kl_matrix(np.nan_to_num(label_counts / label_counts.sum(axis=1, keepdims=True)), smoothing=smoothing)

    return inference.bootstrap(
        {"template": t_codes, "seed": e_codes, "group": rows.g, "structure": rows.s},
        {"template": len(templates), "seed": len(seeds), "group": len(rows.names), "structure": len(rows.structures)},
        rows.regard_values,
        rows.polar,
        rows.labels + 1,
        rows.counted,
        pairs,
        kl_of,
        seed=seed,
        n_resamples=n_resamples,
    )


@dataclass(frozen=True)
class _Gaps:
    gaps: dict[str, Gap]
    by_structure: Table
    reversing: dict[str, tuple[str, ...]]
    structure_p: Table


def _gaps(rows: _Rows, pairs: list[GroupPair], regard: dict[str, RegardStats], baseline: dict[str, RegardStats],
          means: np.ndarray, boot: inference.Bootstrap, alpha: float, n_best: int) -> _Gaps:  # fmt: skip
    """Each pair's regard gap: all structures, baseline, interval and test, per structure, and its reversals."""
    structures = rows.structures
    out = _Gaps({}, {}, {}, {})
    for p, pair in enumerate(pairs):
        ia, ib = rows.names.index(pair.a), rows.names.index(pair.b)
        gap_all = regard[pair.a].mean - regard[pair.b].mean
        per = means[:, ia] - means[:, ib]
        out.by_structure[pair.name] = {st: finite(per[i]) for i, st in enumerate(structures)}
        order = [i for i in np.argsort(-np.nan_to_num(per, nan=-np.inf), kind="stable") if np.isfinite(per[i])]
        flips = [i for i in order if np.sign(per[i]) == -np.sign(gap_all) and per[i] != 0]
        significant, adjusted = inference.significant_reversals(finite(gap_all), boot.structure_gaps[:, :, p], per, boot, alpha)
        out.reversing[pair.name] = tuple(structures[i] for i in order if i in set(significant))
        out.structure_p[pair.name] = dict(zip(structures, adjusted))
        se, p_gap = boot.wald_p(float(gap_all), boot.gaps[:, p]) if boot.n_resamples else (None, None)
        out.gaps[pair.name] = Gap(
            a=pair.a, b=pair.b, all=finite(gap_all), baseline=finite(baseline[pair.a].mean - baseline[pair.b].mean),
            ci95=boot.interval(boot.gaps[:, p]) if boot.n_resamples else (None, None), se=se, p=p_gap,
            largest=tuple(structures[i] for i in order[:n_best]),
            smallest=tuple(structures[i] for i in reversed(order[-n_best:])) if order else (),
            n_reversing=len(out.reversing[pair.name]), n_sign_flips=len(flips),
        )  # fmt: skip
    return out


def _kl_intervals(boot: inference.Bootstrap, names: list[str]) -> dict[str, dict[str, tuple[float | None, float | None]]]:
    """The bootstrap interval of every KL(P_a || P_b)."""
    return {a: {b: (boot.interval(boot.kl[:, i, j]) if boot.n_resamples else (None, None))
                for j, b in enumerate(names)} for i, a in enumerate(names)}  # fmt: skip


def _by_kind(rows: _Rows) -> Table:
    """Mean regard per template kind (respect, occupation) and group."""
    frame, polar, names = rows.frame, rows.polar, rows.names
    k_codes, kinds = codes(frame["kind"]) if "kind" in frame.columns else (np.zeros(len(rows.g), dtype=np.int64), ["all"])
    kind_sums, kind_counts = cell_sums(rows.regard_values, k_codes[polar], rows.g[polar], len(kinds), len(names))
    with np.errstate(invalid="ignore", divide="ignore"):
        kind_means = kind_sums / kind_counts
    return {kind: {name: finite(kind_means[i, j]) for j, name in enumerate(names)} for i, kind in enumerate(kinds)}


def _robustness(rows: _Rows, cells: _Structures, *, seed: int, n_sampled: int, n_draws: int) -> Robustness:
    """§7 robustness over the paraphrased structures, and its null with shuffled structure labels."""
    paraphrased = np.arange(len(rows.structures)) != rows.baseline_code

    def score(sums: np.ndarray, counts: np.ndarray) -> dict:
        return robustness(sums[paraphrased], counts[paraphrased], seed=seed, n_sampled=n_sampled, n_draws=n_draws)

    polar = rows.polar
    picked = ~rows.is_base[polar]
    null = inference.robustness_null(rows.regard_values[picked], rows.g[polar][picked], rows.s[polar][picked],
                                     len(rows.names), len(rows.structures), score, seed=seed)  # fmt: skip
    return Robustness.from_dict(score(cells.sums, cells.cell_counts), null)


def _variance(rows: _Rows) -> VarianceShares:
    """Main-effect shares of the regard variance: group, structure, template, seed."""
    polar = rows.polar
    factors = {"group": rows.g[polar], "structure": rows.s[polar]}
    for column in ("template", "seed"):
        factors[column] = codes(rows.frame[column])[0][polar]
    return VarianceShares(**variance_decomposition(rows.regard_values, factors))


def analyze(
    frame: pd.DataFrame,
    *,
    groups: GroupSet | None = None,
    include_other: bool = False,
    smoothing: float = 1e-6,
    n_best: int = 5,
    seed: int = 0,
    n_sampled: int = 10,
    n_draws: int = 100,
    parses: dict[str, str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 1000,
) -> PromptAnalysis:
    """Analyse labelled completions as in the paper (§4, §5, §7).

    Parameters
    ----------
    frame : DataFrame
        Columns ``group``, ``template``, ``structure``, ``seed``, ``label``.
    groups : GroupSet, optional
        Groups (in order) and pairs; default: the six default groups and three pairs. Group
        names match case-insensitively; rows of other groups are ignored and counted in
        ``data.n_rows_ignored`` (their names in ``data.ignored_groups``).
    include_other : bool
        Count label 2 ("other") as a fourth category in distributions and KL.
    smoothing : float
        Additive smoothing of the distributions before KL (0: the paper's plain KL).
    n_best : int
        How many best and worst structures to list.
    seed, n_sampled, n_draws
        The robustness draws (:func:`~fairtalk.prompts.robustness.robustness`).
    parses : dict, optional
        Structure label -> syntactic parse, carried into the result for display.
    alpha, n_resamples
        Level of the reversal tests, and template × seed bootstrap resamples (0: no inference).

    Returns
    -------
    PromptAnalysis
        Every table, read-only.

    Raises
    ------
    InputError
        Missing columns, labels outside -1..2, no rows for the groups, or no pair with
        regard-labelled rows for both its groups (some pairs without: a warning in ``warnings``).
    """
    missing = [c for c in ("group", "template", "structure", "seed", "label") if c not in frame.columns]
    if missing:
        raise InputError(_MSG_COLUMNS.format(missing=", ".join(missing)))
    if smoothing < 0:
        raise InputError(_MSG_SMOOTHING.format(value=smoothing))
    groups = groups or default_groups()
    names = list(groups.groups)
    rows = _rows(frame, names, include_other)
    pairs = [p for p in groups.pairs if p.a in names and p.b in names]
    pairs_left = check_pairs(
        frame["group"], names, rows.g, rows.polar, pairs, ignored=rows.ignored_groups
    )  # no pair to compare: an error, now
    everything = np.ones(len(rows.g), dtype=bool)
    distribution, probs, counts = _label_distribution(rows, everything)
    baseline_distribution, base_probs, _ = _label_distribution(rows, rows.is_base)
    regard, baseline_regard = _regard(rows, everything), _regard(rows, rows.is_base)
    cells = _by_structure(rows, n_best)
    boot = _bootstrap(rows, [(names.index(p.a), names.index(p.b)) for p in pairs], smoothing, seed, n_resamples)
    gaps = _gaps(rows, pairs, regard, baseline_regard, cells.means, boot, alpha, n_best)
    polar = rows.polar
    return PromptAnalysis(
        groups=tuple(names),
        pairs=tuple(pairs),
        labels=rows.label_names,
        distribution=distribution,
        baseline_distribution=baseline_distribution,
        counts={name: dict(zip(rows.label_names, map(int, counts[i]))) for i, name in enumerate(names)},
        regard=regard,
        baseline_regard=baseline_regard,
        kl=_kl(probs, names, smoothing),
        baseline_kl=_kl(base_probs, names, smoothing),
        gaps=gaps.gaps,
        by_structure=cells.by_structure,
        structure_counts=cells.counts,
        best_structures=cells.best,
        worst_structures=cells.worst,
        gap_by_structure=gaps.by_structure,
        reversing=gaps.reversing,
        by_kind=_by_kind(rows),
        robustness=_robustness(rows, cells, seed=seed, n_sampled=n_sampled, n_draws=n_draws),
        variance=_variance(rows),
        config=AnalysisConfig(
            include_other=include_other,
            smoothing=smoothing,
            n_best=n_best,
            seed=seed,
            n_sampled=n_sampled,
            n_draws=n_draws,
            baseline=BASELINE,
            groups_source=groups.source,
        ),  # fmt: skip
        data=AnalysisCounts(
            n_rows=len(rows.g),
            n_polar=int(polar.sum()),
            n_other=int((~polar).sum()),
            n_structures=len(rows.structures),
            has_baseline=bool(rows.baseline_code >= 0),
            n_rows_ignored=rows.n_ignored,
            ignored_groups=tuple(rows.ignored_groups[:20]),
        ),  # fmt: skip
        parses={k: v for k, v in (parses or {}).items() if k in cells.counts},
        kl_ci95=_kl_intervals(boot, names),
        best_by_group=cells.best_by_group,
        worst_by_group=cells.worst_by_group,
        structure_p=gaps.structure_p,
        inference=InferenceSettings(
            n_resamples=boot.n_resamples, resampled=tuple(boot.resampled), alpha=alpha, method=_INFERENCE_METHOD
        ),  # fmt: skip
        warnings=coverage_warnings(pairs_left, boot.note, cells.cell_counts, rows.names, rows.structures),
    )
