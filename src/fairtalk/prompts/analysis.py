"""The paper-004 analysis of labelled completions: per group, pairwise, segregated by structure, robustness.

Input is a frame with columns ``group``, ``template``, ``structure``, ``seed`` and ``label``
(-1 negative, 0 neutral, 1 positive, 2 other), such as :func:`read_published` or
:func:`~fairtalk.prompts.completions.read_completions` return. Regard scores are the labels
on -1/0/1; "other" rows never enter a mean regard, and enter the label distributions and KL
divergences only with ``include_other=True``. The *baseline* is the original prompts
(structure ``original``), beside *all* structures (original included, as in the paper's
Fig. 2(b) and Table 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairtalk.errors import InputError
from fairtalk.prompts import inference
from fairtalk.prompts._frame import codes, finite, kl_matrix, regard_stats
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
_MSG_EMPTY = "no labelled completions to analyse"


@dataclass(frozen=True)
class PromptAnalysis:
    """Everything the analysis computed; ``to_dict()`` is the schema of ``results.json``.

    Distributions are fractions per group (``"all"`` is every group pooled); ``kl[a][b]`` is
    KL(P_a || P_b) in nats (None where infinite); regard entries are ``{mean, std, n}``.
    ``by_structure[s][g]`` is the mean regard of group ``g`` under structure ``s``. Inference
    (``fairtalk.prompts.inference``): ``gaps[pair]["ci95"]`` and ``kl_ci95[a][b]`` are template ×
    seed bootstrap intervals, ``reversing`` holds only significant reversals (Holm over the
    structures, adjusted p in ``structure_p``), ``robustness["null"]`` is the score with shuffled
    structure labels, and ``warnings`` flags small cells.
    """

    groups: tuple[str, ...]
    pairs: tuple[GroupPair, ...]
    labels: tuple[str, ...]
    distribution: dict[str, dict[str, float]]
    baseline_distribution: dict[str, dict[str, float]]
    counts: dict[str, dict[str, int]]
    regard: dict[str, dict[str, float]]
    baseline_regard: dict[str, dict[str, float]]
    kl: dict[str, dict[str, float | None]]
    baseline_kl: dict[str, dict[str, float | None]]
    gaps: dict[str, dict[str, Any]]
    by_structure: dict[str, dict[str, float | None]]
    structure_counts: dict[str, int]
    best_structures: tuple[str, ...]
    worst_structures: tuple[str, ...]
    gap_by_structure: dict[str, dict[str, float | None]]
    reversing: dict[str, tuple[str, ...]]
    by_kind: dict[str, dict[str, float | None]]
    robustness: dict[str, Any]
    variance: dict[str, Any]
    config: dict[str, Any]
    data: dict[str, Any] = field(default_factory=dict)
    parses: dict[str, str] = field(default_factory=dict)
    kl_ci95: dict[str, dict[str, list[float | None]]] = field(default_factory=dict)
    best_by_group: dict[str, list[str]] = field(default_factory=dict)
    worst_by_group: dict[str, list[str]] = field(default_factory=dict)
    structure_p: dict[str, dict[str, float | None]] = field(default_factory=dict)
    inference: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``results.json`` schema)."""
        return {
            "method": "prompts (Aggarwal et al. 2022, syntactically diverse prompts)",
            "groups": list(self.groups),
            "pairs": [{"name": p.name, "a": p.a, "b": p.b} for p in self.pairs],
            "labels": list(self.labels),
            "distribution": self.distribution,
            "baseline_distribution": self.baseline_distribution,
            "counts": self.counts,
            "regard": self.regard,
            "baseline_regard": self.baseline_regard,
            "kl": self.kl,
            "baseline_kl": self.baseline_kl,
            "gaps": self.gaps,
            "by_structure": self.by_structure,
            "structure_counts": self.structure_counts,
            "best_structures": list(self.best_structures),
            "worst_structures": list(self.worst_structures),
            "gap_by_structure": self.gap_by_structure,
            "reversing_structures": {k: list(v) for k, v in self.reversing.items()},
            "by_kind": self.by_kind,
            "robustness": self.robustness,
            "variance": self.variance,
            "config": self.config,
            "data": self.data,
            "parses": self.parses,
            "kl_ci95": self.kl_ci95,
            "best_structures_by_group": self.best_by_group,
            "worst_structures_by_group": self.worst_by_group,
            "structure_p_adjusted": self.structure_p,
            "inference": self.inference,
            "warnings": list(self.warnings),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per group (and ``all``): label shares over all structures, mean regard, its n, and the baseline's."""
        rows = {}
        for group in ["all", *self.groups]:
            row: dict[str, Any] = {label: self.distribution[group].get(label) for label in self.labels}
            row.update(mean_regard=self.regard[group]["mean"], n=self.regard[group]["n"],
                       baseline_mean_regard=self.baseline_regard[group]["mean"])  # fmt: skip
            rows[group] = row
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "group"
        return frame

    def structure_frame(self) -> pd.DataFrame:
        """Mean regard per structure (rows) and group (columns), plus each pair's gap."""
        frame = pd.DataFrame.from_dict(self.by_structure, orient="index", columns=list(self.groups), dtype=float)
        for pair in self.pairs:
            frame[f"gap:{pair.name}"] = frame[pair.a] - frame[pair.b]
        frame.insert(0, "n", pd.Series(self.structure_counts))
        frame.index.name = "structure"
        return frame


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
        ``data["n_rows_ignored"]`` (their names in ``data["ignored_groups"]``).
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

    Raises
    ------
    InputError
        Missing columns, labels outside -1..2, or no rows for the groups.
    """
    missing = [c for c in ("group", "template", "structure", "seed", "label") if c not in frame.columns]
    if missing:
        raise InputError(_MSG_COLUMNS.format(missing=", ".join(missing)))
    if smoothing < 0:
        raise InputError(_MSG_SMOOTHING.format(value=smoothing))
    groups = groups or default_groups()
    names = list(groups.groups)
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
    ignored_groups = sorted(map(str, pd.unique(ignored)))
    frame = frame[keep]
    g, labels = g_codes[keep], labels[keep]
    s, structures = codes(frame["structure"])
    n_groups, n_structures = len(names), len(structures)
    label_names = LABELS if include_other else LABELS[:3]
    k = len(label_names)
    polar = labels != 2
    regard_values = labels[polar].astype(np.float64)
    baseline_code = structures.index(BASELINE) if BASELINE in structures else -1
    is_base = s == baseline_code

    def distributions(mask: np.ndarray) -> tuple[dict[str, dict[str, float]], np.ndarray, np.ndarray]:
        counted = mask & (labels < k - 1 if include_other else polar)
        counts = cell_sums(np.ones(int(counted.sum())), g[counted], labels[counted] + 1, n_groups, k)[1]
        pooled = counts.sum(axis=0, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            probs = counts / counts.sum(axis=1, keepdims=True)
            pooled_probs = pooled / pooled.sum()
        out = {name: dict(zip(label_names, map(float, probs[i]))) for i, name in enumerate(names)}
        out["all"] = dict(zip(label_names, map(float, pooled_probs[0])))
        return out, probs, counts

    def regards(mask: np.ndarray) -> dict[str, dict[str, float]]:
        rows = mask[polar]
        codes, values = g[polar][rows], regard_values[rows]
        sums = np.bincount(codes, weights=values, minlength=n_groups)
        squares = np.bincount(codes, weights=values * values, minlength=n_groups)
        counts = np.bincount(codes, minlength=n_groups)
        out = {name: regard_stats(sums[i], squares[i], counts[i]) for i, name in enumerate(names)}
        out["all"] = regard_stats(sums.sum(), squares.sum(), counts.sum())
        return out

    everything = np.ones(len(g), dtype=bool)
    distribution, probs, counts = distributions(everything)
    baseline_distribution, base_probs, _ = distributions(is_base)
    regard, baseline_regard = regards(everything), regards(is_base)

    def kl_dict(p: np.ndarray) -> dict[str, dict[str, float | None]]:
        matrix = kl_matrix(np.nan_to_num(p), smoothing=smoothing)
        return {a: {b: finite(matrix[i, j]) for j, b in enumerate(names)} for i, a in enumerate(names)}

    # Segregated by structure: mean regard per (structure, group).
    sums, cell_counts = cell_sums(regard_values, s[polar], g[polar], n_structures, n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / cell_counts
    by_structure = {st: {name: finite(means[i, j]) for j, name in enumerate(names)} for i, st in enumerate(structures)}
    structure_counts = dict(zip(structures, map(int, np.bincount(s, minlength=n_structures))))
    present = cell_counts > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = np.where(present, means, 0.0).sum(axis=1) / present.sum(axis=1)  # mean over groups with data
    ranked = [structures[i] for i in np.argsort(-np.nan_to_num(overall, nan=-np.inf), kind="stable")
              if np.isfinite(overall[i])]
    n_show = min(n_best, len(ranked))
    best, worst = tuple(ranked[:n_show]), tuple(reversed(ranked[len(ranked) - n_show:]))
    best_by_group: dict[str, list[str]] = {}
    worst_by_group: dict[str, list[str]] = {}
    for j, name in enumerate(names):  # the paper picks best and worst structures per group
        order = [structures[i] for i in np.argsort(-np.nan_to_num(means[:, j], nan=-np.inf), kind="stable")
                 if np.isfinite(means[i, j])]  # fmt: skip
        k = min(n_best, len(order))
        best_by_group[name], worst_by_group[name] = order[:k], list(reversed(order[len(order) - k:]))

    t_codes, templates = codes(frame["template"])
    e_codes, seeds = codes(frame["seed"])
    valid = [p for p in groups.pairs if p.a in names and p.b in names]
    index_pairs = [(names.index(p.a), names.index(p.b)) for p in valid]
    counted = labels < k - 1 if include_other else polar

    def kl_of(label_counts: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return kl_matrix(np.nan_to_num(label_counts / label_counts.sum(axis=1, keepdims=True)), smoothing=smoothing)

    boot = inference.bootstrap(
        {"template": t_codes, "seed": e_codes, "group": g, "structure": s},
        {"template": len(templates), "seed": len(seeds), "group": n_groups, "structure": n_structures},
        regard_values, polar, labels + 1, counted, index_pairs, kl_of, seed=seed, n_resamples=n_resamples)
    gaps: dict[str, dict[str, Any]] = {}
    gap_by_structure: dict[str, dict[str, float | None]] = {}
    reversing: dict[str, tuple[str, ...]] = {}
    structure_p: dict[str, dict[str, float | None]] = {}
    for p, (pair, (ia, ib)) in enumerate(zip(valid, index_pairs)):
        gap_all = regard[pair.a]["mean"] - regard[pair.b]["mean"]
        gap_base = baseline_regard[pair.a]["mean"] - baseline_regard[pair.b]["mean"]
        per = means[:, ia] - means[:, ib]
        gap_by_structure[pair.name] = {st: finite(per[i]) for i, st in enumerate(structures)}
        order = [i for i in np.argsort(-np.nan_to_num(per, nan=-np.inf), kind="stable") if np.isfinite(per[i])]
        flips = [i for i in order if np.sign(per[i]) == -np.sign(gap_all) and per[i] != 0]
        significant, adjusted = inference.significant_reversals(
            finite(gap_all), boot.structure_gaps[:, :, p], per, boot, alpha)
        reversing[pair.name] = tuple(structures[i] for i in order if i in set(significant))
        structure_p[pair.name] = dict(zip(structures, adjusted))
        se, p_gap = boot.wald_p(float(gap_all), boot.gaps[:, p]) if boot.n_resamples else (None, None)
        gaps[pair.name] = {
            "a": pair.a,
            "b": pair.b,
            "all": finite(gap_all),
            "baseline": finite(gap_base),
            "ci95": list(boot.interval(boot.gaps[:, p])) if boot.n_resamples else [None, None],
            "se": se,
            "p": p_gap,
            "largest": [structures[i] for i in order[:n_best]],
            "smallest": [structures[i] for i in reversed(order[-n_best:])] if order else [],
            "n_reversing": len(reversing[pair.name]),
            "n_sign_flips": len(flips),
        }
    kl_ci95 = {a: {b: (list(boot.interval(boot.kl[:, i, j])) if boot.n_resamples else [None, None])
                   for j, b in enumerate(names)} for i, a in enumerate(names)}  # fmt: skip

    k_codes, kinds = codes(frame["kind"]) if "kind" in frame.columns else (np.zeros(len(g), dtype=np.int64), ["all"])
    kind_sums, kind_counts = cell_sums(regard_values, k_codes[polar], g[polar], len(kinds), n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        kind_means = kind_sums / kind_counts
    by_kind = {kind: {name: finite(kind_means[i, j]) for j, name in enumerate(names)} for i, kind in enumerate(kinds)}

    paraphrased = np.arange(n_structures) != baseline_code
    robust = robustness(sums[paraphrased], cell_counts[paraphrased], seed=seed, n_sampled=n_sampled, n_draws=n_draws)
    rows = ~is_base[polar]
    robust["null"] = inference.robustness_null(
        regard_values[rows], g[polar][rows], s[polar][rows], n_groups, n_structures,
        lambda su, co: robustness(su[paraphrased], co[paraphrased], seed=seed, n_sampled=n_sampled, n_draws=n_draws),
        seed=seed)
    warnings = [boot.note] if boot.note else []
    small = inference.small_cells(cell_counts, names, structures)
    if small:
        low = min(small, key=lambda c: c["n"])
        warnings.append(f"{len(small):,} of {cell_counts.size:,} group × structure cells have fewer than "
                        f"{inference.MIN_CELL} labelled completions (smallest: {low['group']} under "
                        f"{low['structure']}, {low['n']}): their regard means and gaps are noisy")
    factors = {"group": g[polar], "structure": s[polar]}
    for column in ("template", "seed"):
        factors[column] = codes(frame[column])[0][polar]
    variance = variance_decomposition(regard_values, factors)

    return PromptAnalysis(
        groups=tuple(names),
        pairs=tuple(valid),
        labels=tuple(label_names),
        distribution=distribution,
        baseline_distribution=baseline_distribution,
        counts={name: dict(zip(label_names, map(int, counts[i]))) for i, name in enumerate(names)},
        regard=regard,
        baseline_regard=baseline_regard,
        kl=kl_dict(probs),
        baseline_kl=kl_dict(base_probs),
        gaps=gaps,
        by_structure=by_structure,
        structure_counts=structure_counts,
        best_structures=best,
        worst_structures=worst,
        gap_by_structure=gap_by_structure,
        reversing=reversing,
        by_kind=by_kind,
        robustness=robust,
        variance=variance,
        config={
            "include_other": include_other,
            "smoothing": smoothing,
            "n_best": n_best,
            "seed": seed,
            "n_sampled": n_sampled,
            "n_draws": n_draws,
            "baseline": BASELINE,
            "groups_source": groups.source,
        },
        data={"n_rows": len(g), "n_polar": int(polar.sum()), "n_other": int((~polar).sum()),
              "n_structures": n_structures, "has_baseline": bool(baseline_code >= 0),
              "n_rows_ignored": len(ignored), "ignored_groups": ignored_groups[:20]},
        parses={k: v for k, v in (parses or {}).items() if k in structure_counts},
        kl_ci95=kl_ci95,
        best_by_group=best_by_group,
        worst_by_group=worst_by_group,
        structure_p=structure_p,
        inference={"n_resamples": boot.n_resamples, "resampled": list(boot.resampled), "alpha": alpha,
                   "method": "template × seed pigeonhole bootstrap; reversals by Holm over structures"},
        warnings=tuple(warnings),
    )
