"""The paper-004 analysis' tables, one function each: label distributions, regard, KL, structures, gaps, robustness.

Each takes the analysed rows as integer codes (:class:`Rows`, from :func:`code_rows`) and returns
a DataFrame or the records of :mod:`fairtalk.prompts._records`; :func:`~fairtalk.prompts._analysis.analyze`
puts them together into a :class:`~fairtalk.results.PromptAnalysis`. Regard scores are the
labels on -1/0/1; "other" rows never enter a mean regard, and enter the label distributions and
KL divergences only with ``include_other``. The *baseline* is the structure :data:`BASELINE`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairtalk.errors import InputError
from fairtalk.prompts._bootstrap import Bootstrap, bootstrap, significant_reversals
from fairtalk.prompts._frame import codes, finite, kl_matrix, regard_stats
from fairtalk.prompts._records import Gap, RegardStats, Robustness, VarianceShares
from fairtalk.prompts._robustness import cell_sums, robustness, robustness_null, variance_decomposition
from fairtalk.prompts._templates import GroupPair

_MSG_UNSIGNED = (
    "the regard gap {pair} ({a} - {b}) is {gap:+.3f} with a 95% CI of [{low:+.3f}, {high:+.3f}], which holds 0: its "
    "sign is not established, so no structure is counted as reversing it"
)
_MSG_INFINITE_KL = (
    "{n:,} KL divergence(s) of {scope} are infinite, shown n/a (null in results.json, empty in the CSV): unsmoothed KL "
    "(--smoothing 0) is infinite where one group has a zero count of a label the other group has: {cells}; give "
    "--smoothing > 0 (the default 1e-6) for finite values"
)

__all__ = [
    "BASELINE",
    "LABELS",
    "Gaps",
    "Rows",
    "Structures",
    "by_kind",
    "by_structure",
    "code_rows",
    "gaps",
    "infinite_kl_warning",
    "kl_intervals",
    "kl_table",
    "label_distribution",
    "mean_regard",
    "resample",
    "robustness_scores",
    "sign_established",
    "unsigned_gap_warnings",
    "variance_shares",
]

#: Label names by label value + 1 (``-1`` -> "negative", ..., ``2`` -> "other").
LABELS: tuple[str, ...] = ("negative", "neutral", "positive", "other")
#: The structure of the original prompts.
BASELINE = "original"

_MSG_LABELS = "labels must be -1, 0, 1 or 2; found {bad}"
_MSG_NO_GROUP = "no completions for the groups {groups} (the data has: {found})"


def _frame(values: np.ndarray, rows: list[str], columns: list[str] | tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame(values, index=pd.Index(rows, dtype=object), columns=pd.Index(list(columns), dtype=object))


@dataclass(frozen=True)
class Rows:
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
        """Rows labelled -1, 0 or 1 (not "other")."""
        return np.asarray(self.labels != 2)

    @property
    def counted(self) -> np.ndarray:
        """Rows that enter the label distributions and KL ("other" only with include_other)."""
        if len(self.label_names) == len(LABELS):
            return np.asarray(self.labels < len(self.label_names) - 1)
        return self.polar

    @property
    def regard_values(self) -> np.ndarray:
        """The -1/0/1 regard of the polar rows."""
        return np.asarray(self.labels[self.polar], dtype=np.float64)

    @property
    def baseline_code(self) -> int:
        """The code of the baseline structure, -1 without one."""
        return self.structures.index(BASELINE) if BASELINE in self.structures else -1

    @property
    def is_base(self) -> np.ndarray:
        """Rows of the baseline structure."""
        return np.asarray(self.s == self.baseline_code)


def code_rows(frame: pd.DataFrame, names: list[str], include_other: bool) -> Rows:
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
    return Rows(
        frame=kept,
        names=names,
        structures=structures,
        g=g_codes[keep],
        s=s,
        labels=labels[keep],
        label_names=LABELS if include_other else LABELS[:3],
        n_ignored=len(ignored),
        ignored_groups=sorted(map(str, pd.unique(ignored))),
    )


def label_distribution(rows: Rows, mask: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Label shares per group and pooled (``"all"``, last), the count table and the probability matrix."""
    counted = mask & rows.counted
    k = len(rows.label_names)
    counts = cell_sums(np.ones(int(counted.sum())), rows.g[counted], rows.labels[counted] + 1, len(rows.names), k)[1]
    pooled = counts.sum(axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = counts / counts.sum(axis=1, keepdims=True)
        pooled_probs = pooled / pooled.sum()
    shares = _frame(np.vstack([probs, pooled_probs]).astype(np.float64), [*rows.names, "all"], rows.label_names)
    return shares, _frame(counts.astype(np.int64), rows.names, rows.label_names), probs


def mean_regard(rows: Rows, mask: np.ndarray) -> dict[str, RegardStats]:
    """Mean regard per group and pooled (``"all"``), over the rows in ``mask``."""
    polar = rows.polar
    picked = mask[polar]
    group_codes, values = rows.g[polar][picked], rows.regard_values[picked]
    n_groups = len(rows.names)
    sums = np.bincount(group_codes, weights=values, minlength=n_groups)
    squares = np.bincount(group_codes, weights=values * values, minlength=n_groups)
    counts = np.bincount(group_codes, minlength=n_groups)
    out = {name: regard_stats(sums[i], squares[i], counts[i]) for i, name in enumerate(rows.names)}
    out["all"] = regard_stats(sums.sum(), squares.sum(), counts.sum())
    return out


def kl_table(probs: np.ndarray, names: list[str], smoothing: float) -> pd.DataFrame:
    """KL(P_row || P_column) for every ordered pair of groups (``inf`` where infinite)."""
    return _frame(kl_matrix(np.nan_to_num(probs), smoothing=smoothing), names, names)


def infinite_kl_warning(probs: np.ndarray, kl: pd.DataFrame, labels: tuple[str, ...] | list[str], scope: str) -> str | None:
    """Why some KL(P_row || P_column) of ``kl`` is infinite (the column group lacks a label the row group has), or None.

    ``probs`` are the label shares the table was computed from (groups in ``kl``'s order, labels in ``labels``').
    Only unsmoothed KL (smoothing 0) is ever infinite; the tables show it as n/a, ``results.json`` as null.
    """
    shares = np.nan_to_num(np.asarray(probs, dtype=np.float64))
    names = [str(n) for n in kl.index]
    values = kl.to_numpy(dtype=np.float64)
    cells = []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if np.isinf(values[i, j]):
                lacking = [labels[k] for k in range(shares.shape[1]) if shares[i, k] > 0 and shares[j, k] == 0]
                cells.append(f"KL({a} ‖ {b}): {b} has no {', '.join(repr(label) for label in lacking)} label where {a} has some")
    if not cells:
        return None
    return _MSG_INFINITE_KL.format(scope=scope, n=len(cells), cells="; ".join(cells))


@dataclass(frozen=True)
class Structures:
    """Mean regard per (structure, group) cell and the rankings drawn from it."""

    by_structure: pd.DataFrame
    counts: dict[str, int]
    best: tuple[str, ...]
    worst: tuple[str, ...]
    best_by_group: dict[str, tuple[str, ...]]
    worst_by_group: dict[str, tuple[str, ...]]
    sums: np.ndarray
    cell_counts: np.ndarray
    means: np.ndarray


def _ranked(values: np.ndarray, structures: list[str], n_best: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    order = [structures[i] for i in np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable") if np.isfinite(values[i])]
    k = min(n_best, len(order))
    return tuple(order[:k]), tuple(reversed(order[len(order) - k :]))


def by_structure(rows: Rows, n_best: int) -> Structures:
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
    return Structures(
        by_structure=_frame(means.astype(np.float64), structures, names),
        counts=dict(zip(structures, map(int, np.bincount(rows.s, minlength=len(structures))))),
        best=best,
        worst=worst,
        best_by_group={n: b for n, (b, _) in per_group.items()},
        worst_by_group={n: w for n, (_, w) in per_group.items()},
        sums=sums,
        cell_counts=cell_counts,
        means=means,
    )


def resample(rows: Rows, pairs: list[tuple[int, int]], smoothing: float, seed: int, n_resamples: int) -> Bootstrap:
    """Template × seed bootstrap of the gaps, per-structure gaps and KL matrix."""
    t_codes, templates = codes(rows.frame["template"])
    e_codes, seeds = codes(rows.frame["seed"])

    def kl_of(label_counts: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return kl_matrix(np.nan_to_num(label_counts / label_counts.sum(axis=1, keepdims=True)), smoothing=smoothing)

    return bootstrap(
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
class Gaps:
    """Each pair's gap record, its gap per structure, its significant reversals and their adjusted p."""

    gaps: dict[str, Gap]
    by_structure: pd.DataFrame
    reversing: dict[str, tuple[str, ...]]
    structure_p: pd.DataFrame


def gaps(
    rows: Rows,
    pairs: list[GroupPair],
    regard: dict[str, RegardStats],
    baseline: dict[str, RegardStats],
    means: np.ndarray,
    boot: Bootstrap,
    alpha: float,
    n_best: int,
) -> Gaps:
    """Each pair's regard gap: all structures, baseline, interval and test, per structure, and its reversals."""
    structures = rows.structures
    found: dict[str, Gap] = {}
    reversing: dict[str, tuple[str, ...]] = {}
    per_structure = np.full((len(pairs), len(structures)), np.nan)
    p_adjusted = np.full((len(pairs), len(structures)), np.nan)
    for p, pair in enumerate(pairs):
        ia, ib = rows.names.index(pair.a), rows.names.index(pair.b)
        gap_all = regard[pair.a].mean - regard[pair.b].mean
        per = means[:, ia] - means[:, ib]
        per_structure[p] = per
        order = [i for i in np.argsort(-np.nan_to_num(per, nan=-np.inf), kind="stable") if np.isfinite(per[i])]
        ci95 = boot.interval(boot.gaps[:, p]) if boot.n_resamples else (None, None)
        established = sign_established(ci95)
        # a gap whose interval holds 0 has no established sign: no structure is said to reverse (or flip) it
        flips = [i for i in order if np.sign(per[i]) == -np.sign(gap_all) and per[i] != 0] if established is not False else []
        significant, adjusted = significant_reversals(finite(gap_all), boot.structure_gaps[:, :, p], per, boot, alpha)
        reversing[pair.name] = tuple(structures[i] for i in order if i in set(significant)) if established is not False else ()
        p_adjusted[p] = [np.nan if value is None else value for value in adjusted]
        se, p_gap = boot.wald_p(float(gap_all), boot.gaps[:, p]) if boot.n_resamples else (None, None)
        found[pair.name] = Gap(
            a=pair.a,
            b=pair.b,
            all=finite(gap_all),
            baseline=finite(baseline[pair.a].mean - baseline[pair.b].mean),
            ci95=ci95,
            se=se,
            p=p_gap,
            largest=tuple(structures[i] for i in order[:n_best]),
            smallest=tuple(structures[i] for i in reversed(order[-n_best:])) if order else (),
            n_reversing=len(reversing[pair.name]) if boot.n_resamples else None,  # None: not tested
            n_sign_flips=len(flips),
            sign_established=established,
        )
    names = [pair.name for pair in pairs]
    return Gaps(
        gaps=found,
        by_structure=_frame(per_structure, names, structures),
        reversing=reversing,
        structure_p=_frame(p_adjusted, names, structures),
    )


def sign_established(ci95: tuple[float | None, float | None]) -> bool | None:
    """Whether an interval excludes 0 (the sign of its estimate is established); None without an interval."""
    low, high = ci95
    if low is None or high is None:
        return None
    return not low <= 0.0 <= high


def unsigned_gap_warnings(found: Mapping[str, Gap]) -> list[str]:
    """One warning per gap whose interval holds 0: its sign is not established, so no reversal is counted."""
    return [
        _MSG_UNSIGNED.format(pair=name, a=g.a, b=g.b, gap=g.all, low=g.ci95[0], high=g.ci95[1])
        for name, g in found.items()
        if g.sign_established is False and g.all is not None and g.ci95[0] is not None and g.ci95[1] is not None
    ]


def kl_intervals(boot: Bootstrap, names: list[str]) -> pd.DataFrame:
    """The bootstrap interval (``low``, ``high``; NaN where none) of every KL(P_row || P_column)."""
    keys, values = [], []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            low, high = boot.interval(boot.kl[:, i, j]) if boot.n_resamples else (None, None)
            keys.append((a, b))
            values.append([np.nan if low is None else low, np.nan if high is None else high])
    index = pd.MultiIndex.from_tuples(keys, names=["row", "column"])
    return pd.DataFrame(values, index=index, columns=["low", "high"], dtype=float)


def by_kind(rows: Rows) -> pd.DataFrame:
    """Mean regard per template kind (respect, occupation; rows) and group (columns)."""
    frame, polar, names = rows.frame, rows.polar, rows.names
    k_codes, kinds = codes(frame["kind"]) if "kind" in frame.columns else (np.zeros(len(rows.g), dtype=np.int64), ["all"])
    kind_sums, kind_counts = cell_sums(rows.regard_values, k_codes[polar], rows.g[polar], len(kinds), len(names))
    with np.errstate(invalid="ignore", divide="ignore"):
        kind_means = kind_sums / kind_counts
    return _frame(kind_means.astype(np.float64), kinds, names)


def robustness_scores(rows: Rows, cells: Structures, *, seed: int, n_sampled: int, n_draws: int) -> Robustness:
    """§7 robustness over the paraphrased structures, with its null of shuffled structure labels."""
    import dataclasses

    paraphrased = np.arange(len(rows.structures)) != rows.baseline_code

    def score(sums: np.ndarray, counts: np.ndarray) -> Robustness:
        return robustness(sums[paraphrased], counts[paraphrased], seed=seed, n_sampled=n_sampled, n_draws=n_draws)

    polar = rows.polar
    picked = ~rows.is_base[polar]
    null = robustness_null(
        rows.regard_values[picked],
        rows.g[polar][picked],
        rows.s[polar][picked],
        len(rows.names),
        len(rows.structures),
        score,
        seed=seed,
    )
    return dataclasses.replace(score(cells.sums, cells.cell_counts), null=null)


def variance_shares(rows: Rows) -> VarianceShares:
    """Main-effect shares of the regard variance: group, structure, template, seed."""
    polar = rows.polar
    factors = {"group": rows.g[polar], "structure": rows.s[polar]}
    for column in ("template", "seed"):
        factors[column] = codes(rows.frame[column])[0][polar]
    return variance_decomposition(rows.regard_values, factors)
