"""The result of the counterfactual similarity test: whether swapping the group changes answers more than sampling does."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fairtalk.files import write_text_atomic

__all__ = ["SimilarityResult", "SimilarityRow"]


@dataclass(frozen=True, slots=True)
class SimilarityRow:
    """One similarity method: mean divergence (1 - similarity) of counterfactual and baseline answer pairs.

    ``difference`` is counterfactual - baseline (positive: the group swap changes answers more
    than asking again does), with its 95% interval and the paired test's p over pairs (or
    dialogues), corrected over the methods (Holm) into ``p_adjusted``.
    """

    method: str
    n_pairs: int
    counterfactual: float
    baseline: float
    difference: float
    ci95: tuple[float | None, float | None]
    test: str
    p: float | None
    p_adjusted: float | None
    detected: bool
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"method": self.method, "n_pairs": self.n_pairs, "counterfactual": self.counterfactual,
                "baseline": self.baseline, "difference": self.difference, "ci95": list(self.ci95), "test": self.test,
                "p": self.p, "p_adjusted": self.p_adjusted, "detected": self.detected, "note": self.note}  # fmt: skip


@dataclass(frozen=True, slots=True)
class SimilarityResult:
    """Counterfactual answer pairs against a no-effect baseline, per similarity method.

    The baseline answers the *same* context twice, with the seeds a counterfactual pair's two
    sides get: what sampling alone changes. A model that ignores the group has
    ``counterfactual == baseline`` in expectation, however much it samples.
    """

    axis: str
    model: str
    alpha: float
    seed: int
    n_pairs: int
    n_clusters: int | None
    rows: tuple[SimilarityRow, ...]
    summary: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def detected(self) -> tuple[str, ...]:
        """The methods whose counterfactual divergence differs from the baseline (adjusted p < alpha)."""
        return tuple(row.method for row in self.rows if row.detected)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``similarity.json``)."""
        return {"axis": self.axis, "model": self.model, "alpha": self.alpha, "seed": self.seed,
                "n_pairs": self.n_pairs, "n_clusters": self.n_clusters, "rows": [r.to_dict() for r in self.rows],
                "summary": dict(self.summary)}  # fmt: skip

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write ``to_dict()`` as JSON, atomically (the file is whole or untouched)."""
        return write_text_atomic(path, json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n")

    def to_frame(self) -> Any:
        """One row per method (pandas DataFrame indexed by ``method``)."""
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows]).set_index("method")
