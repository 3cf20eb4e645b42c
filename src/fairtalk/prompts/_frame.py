"""Frame helpers of the paper-004 analysis: KL between label distributions, category codes, regard statistics."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import rel_entr

from fairtalk.errors import InputError
from fairtalk.prompts._records import RegardStats

__all__ = ["codes", "finite", "kl_matrix", "regard_stats"]

_MSG_SMOOTHING = "smoothing must be >= 0, got {value!r}"


def kl_matrix(probabilities: np.ndarray, *, smoothing: float = 0.0) -> np.ndarray:
    """Pairwise KL(P_i || P_j) of the rows of ``probabilities``, after additive smoothing.

    Each row becomes ``(p + smoothing) / (1 + k * smoothing)`` (``k`` labels). With
    ``smoothing=0`` this is the paper's plain KL: finite when every cell is non-zero, ``inf``
    where ``P_j`` has a zero that ``P_i`` does not.

    Examples
    --------
    >>> kl_matrix(np.array([[0.5, 0.5], [0.9, 0.1]])).round(3).tolist()
    [[0.0, 0.511], [0.368, 0.0]]
    """
    if smoothing < 0:
        raise InputError(_MSG_SMOOTHING.format(value=smoothing))
    p = np.asarray(probabilities, dtype=np.float64)
    p = (p + smoothing) / (1.0 + p.shape[1] * smoothing)
    return np.asarray(rel_entr(p[:, None, :], p[None, :, :]).sum(axis=2), dtype=np.float64)


def finite(value: float) -> float | None:
    """``value`` as a float, None where it is NaN or infinite."""
    return float(value) if np.isfinite(value) else None


def codes(column: pd.Series, categories: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """Integer codes of a column in the order of ``categories`` (-1 outside them), else of its own categories.

    Against ``categories``, values match case-insensitively and ignoring surrounding spaces
    (``"Man"`` is ``"man"``).
    """
    if not isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(str).astype("category")
    if categories is None:
        used = column.cat.remove_unused_categories()
        return used.cat.codes.to_numpy().astype(np.int64), [str(c) for c in used.cat.categories]
    lookup = {name.strip().casefold(): i for i, name in enumerate(categories)}
    mapping = np.array([lookup.get(str(c).strip().casefold(), -1) for c in column.cat.categories] + [-1], dtype=np.int64)
    return mapping[column.cat.codes.to_numpy().astype(np.int64)], categories


def regard_stats(sums: float, squares: float, counts: int) -> RegardStats:
    """Mean regard, its standard deviation and n from the sum, the sum of squares and the count of the labels."""
    n = int(counts)
    if n == 0:
        return RegardStats(mean=float("nan"), std=float("nan"), n=0)
    mean = float(sums / n)
    var = float((squares - n * mean * mean) / (n - 1)) if n > 1 else 0.0
    return RegardStats(mean=mean, std=float(np.sqrt(max(var, 0.0))), n=n)
