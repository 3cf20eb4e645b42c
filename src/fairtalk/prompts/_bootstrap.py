"""The paper-004 analysis' inference: template × seed bootstrap intervals and the significant reversals they test.

The paper reports point estimates only. Completions share their prompt template (the ten
nlg-bias templates, each paraphrased into every structure) and their sampling seed, so rows are
not independent: a template that happens to draw negative completions does so for every
structure. Resampling seeds alone understates the spread about three-fold.

- **Intervals**: a two-way *pigeonhole* bootstrap (Owen 2007) of the crossed template and seed
  factors: each resample draws templates and seeds with replacement, independently, and weighs
  every row by (times its template was drawn) × (times its seed was drawn). Gaps and KL cells get
  the percentile interval; gaps also a bootstrap standard error and its Wald p.
- **Reversals**: a structure reverses a pair's gap only when its own gap has the opposite sign
  and differs from zero after Holm over the structures (Wald p from the bootstrap SE). A raw sign
  flip is what noise gives to about half of the structures when the gap is small.

The robustness null (structure labels shuffled) is :func:`~fairtalk.prompts._robustness.robustness_null`;
small cells are flagged by :func:`~fairtalk.prompts._coverage.small_cells`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Bootstrap", "bootstrap", "significant_reversals"]

#: The bootstrap is skipped (with a note) above this many template × seed × group × structure cells.
_MAX_CELLS = 20_000_000
NOTE_ONE_LEVEL = "only one {factor}: the interval resamples the {other} alone and may be too narrow"
NOTE_NO_CLUSTERS = "one template and one seed: no bootstrap interval is possible"
NOTE_TOO_LARGE = "more than 20 million template × seed × group × structure cells: no bootstrap interval computed"


@dataclass(frozen=True)
class Bootstrap:
    """Resampled statistics: ``gaps[r, p]`` overall gap of pair ``p``, ``structure_gaps[r, s, p]``, ``kl[r, i, j]``."""

    gaps: np.ndarray
    structure_gaps: np.ndarray
    kl: np.ndarray
    n_resamples: int
    resampled: tuple[str, ...]
    note: str | None = None

    def interval(self, values: np.ndarray, level: float = 0.95) -> tuple[float | None, float | None]:
        """Percentile interval of one resampled statistic (None where fewer than half the resamples are finite)."""
        finite = values[np.isfinite(values)]
        if finite.size < max(2, values.size // 2):
            return None, None
        low, high = np.quantile(finite, [(1 - level) / 2, (1 + level) / 2])
        return float(low), float(high)

    def wald_p(self, estimate: float, values: np.ndarray) -> tuple[float | None, float | None]:
        """Bootstrap standard error of a statistic and the two-sided Wald p of ``estimate``."""
        from scipy.stats import norm

        finite = values[np.isfinite(values)]
        if finite.size < max(2, values.size // 2) or not np.isfinite(estimate):
            return None, None
        se = float(finite.std(ddof=1))
        if se == 0:
            return se, None
        return se, float(2 * norm.sf(abs(estimate) / se))


def bootstrap(
    codes: dict[str, np.ndarray],
    sizes: dict[str, int],
    regard: np.ndarray,
    polar: np.ndarray,
    label_index: np.ndarray,
    counted: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    kl: Callable[[np.ndarray], np.ndarray],
    *,
    seed: int,
    n_resamples: int,
) -> Bootstrap:
    """Template × seed pigeonhole bootstrap of the overall gaps, per-structure gaps and the KL matrix.

    ``codes`` holds integer codes per row for ``group``, ``structure``, ``template`` and
    ``seed`` (``sizes`` their numbers of levels); ``regard`` the -1/0/1 score of the rows where
    ``polar``; ``label_index`` each row's distribution column where ``counted``; ``kl`` maps a
    groups × labels count matrix to the KL matrix.
    """
    n_t, n_e, n_g, n_s = sizes["template"], sizes["seed"], sizes["group"], sizes["structure"]
    n_pairs = len(pairs)
    empty = Bootstrap(np.full((0, n_pairs), np.nan), np.full((0, n_s, n_pairs), np.nan), np.full((0, n_g, n_g), np.nan), 0, ())
    if n_t < 2 and n_e < 2:
        return Bootstrap(empty.gaps, empty.structure_gaps, empty.kl, 0, (), NOTE_NO_CLUSTERS)
    if n_t * n_e * n_g * n_s > _MAX_CELLS:
        return Bootstrap(empty.gaps, empty.structure_gaps, empty.kl, 0, (), NOTE_TOO_LARGE)
    t, e, g, s = (codes[k] for k in ("template", "seed", "group", "structure"))
    cell = ((t * n_e + e) * n_g + g) * n_s + s
    shape = (n_t, n_e, n_g * n_s)
    r_sum = np.bincount(cell[polar], weights=regard, minlength=n_t * n_e * n_g * n_s).reshape(shape)
    r_cnt = np.bincount(cell[polar], minlength=n_t * n_e * n_g * n_s).astype(float).reshape(shape)
    n_labels = int(label_index[counted].max()) + 1 if counted.any() else 1
    label_cell = ((t[counted] * n_e + e[counted]) * n_g + g[counted]) * n_labels + label_index[counted]
    l_cnt = np.bincount(label_cell, minlength=n_t * n_e * n_g * n_labels).astype(float).reshape(n_t, n_e, n_g * n_labels)
    rng = np.random.default_rng(seed)
    gaps = np.full((n_resamples, n_pairs), np.nan)
    structure_gaps = np.full((n_resamples, n_s, n_pairs), np.nan)
    kls = np.full((n_resamples, n_g, n_g), np.nan)
    ia = np.array([a for a, _ in pairs], dtype=np.int64)
    ib = np.array([b for _, b in pairs], dtype=np.int64)
    for r in range(n_resamples):
        w_t = np.bincount(rng.integers(0, n_t, n_t), minlength=n_t) if n_t > 1 else np.ones(1)
        w_e = np.bincount(rng.integers(0, n_e, n_e), minlength=n_e) if n_e > 1 else np.ones(1)
        weights = np.outer(w_t, w_e)
        sums = np.tensordot(weights, r_sum, axes=([0, 1], [0, 1])).reshape(n_g, n_s)
        counts = np.tensordot(weights, r_cnt, axes=([0, 1], [0, 1])).reshape(n_g, n_s)
        with np.errstate(invalid="ignore", divide="ignore"):
            overall = sums.sum(axis=1) / counts.sum(axis=1)
            per = sums / counts
        gaps[r] = overall[ia] - overall[ib]
        structure_gaps[r] = (per[ia] - per[ib]).T
        labels = np.tensordot(weights, l_cnt, axes=([0, 1], [0, 1])).reshape(n_g, n_labels)
        kls[r] = kl(labels)
    resampled = tuple(f for f, n in (("template", n_t), ("seed", n_e)) if n > 1)
    note = None
    if len(resampled) == 1:
        other = resampled[0]
        note = NOTE_ONE_LEVEL.format(factor="seed" if other == "template" else "template", other=other + "s")
    return Bootstrap(gaps, structure_gaps, kls, n_resamples, resampled, note)


def significant_reversals(
    gap: float | None, structure_gaps: np.ndarray, per_structure: np.ndarray, boot: Bootstrap, alpha: float
) -> tuple[list[int], list[float | None]]:
    """Structures whose gap has the opposite sign to ``gap`` and differs from 0 after Holm; and each structure's adjusted p.

    ``structure_gaps[r, s]`` are the resampled gaps of one pair, ``per_structure[s]`` the
    observed ones.
    """
    from fairtalk.stats import adjust_pvalues

    p = np.full(per_structure.size, np.nan)
    for i, value in enumerate(per_structure):
        if boot.n_resamples and np.isfinite(value):
            p_i = boot.wald_p(float(value), structure_gaps[:, i])[1]
            p[i] = np.nan if p_i is None else p_i
    adjusted = adjust_pvalues(p, method="holm")
    out_p = [None if not np.isfinite(x) else float(x) for x in adjusted]
    if gap is None or gap == 0:
        return [], out_p
    reversing = [
        i
        for i, value in enumerate(per_structure)
        if np.isfinite(value) and np.sign(value) == -np.sign(gap) and np.isfinite(adjusted[i]) and adjusted[i] < alpha
    ]
    return reversing, out_p
