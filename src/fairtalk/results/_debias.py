"""Baseline and debiased models audited on the same pairs (paper 001, Table 7)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from fairtalk.results._audit import AuditResult
from fairtalk.results._run import AuditRun

__all__ = ["ComparedModel", "DebiasComparison"]


@dataclass(frozen=True, slots=True)
class ComparedModel:
    """One model of a debiasing comparison: its checkpoint, whether this call trained it, and its audit.

    ``training`` is the TrainConfig as a dict; ``training_seconds`` and ``validation`` (the last
    epoch's figures) are read from the checkpoint, so they describe the run that made it.
    ``n_different`` counts the pairs whose two responses differ (0 means the model ignored the
    group words); ``n_distinct`` counts distinct response texts over both sides (a low count
    means generic responses, which leave little room for any difference).
    """

    name: str
    debias: str
    checkpoint: str
    trained: bool
    training: Mapping[str, Any]
    training_seconds: float | None
    validation: Mapping[str, float]
    run: AuditRun
    n_different: int = 0
    n_distinct: int = 0

    @property
    def result(self) -> AuditResult:
        """The audit result (the comparison audits one axis)."""
        return next(iter(self.run.results.values()))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the audit as ``AuditRun.to_dict()``)."""
        return {
            "name": self.name, "debias": self.debias, "checkpoint": self.checkpoint, "trained": self.trained,
            "training": dict(self.training), "training_seconds": self.training_seconds,
            "validation": dict(self.validation), "n_different": self.n_different, "n_distinct": self.n_distinct,
            "run": self.run.to_dict(),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class DebiasComparison:
    """Baseline and debiased models audited on the same pairs (paper 001, Table 7). Built once.

    ``models`` maps a model name (``baseline``, ``cda``, ``wer``) to its :class:`ComparedModel`,
    baseline first; ``timings`` maps ``training``/``pairs``/``generation``/``scoring``/``total``
    to seconds; ``files`` names what was written. ``mode`` is ``quick``, ``full`` or ``custom`` (a
    TrainConfig given).
    """

    axis: str
    groups: tuple[str, str]
    n_pairs: int
    models: Mapping[str, ComparedModel]
    corpus: str
    eval_corpus: str
    eval_split: str
    seed: int
    mode: str
    timings: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def to_frame(self) -> Any:
        """One row per (model, measure): each model's ``AuditResult.to_frame()`` stacked, indexed by both."""
        import pandas as pd

        return pd.concat({name: result.to_frame() for name, result in self.results.items()}, names=["model", "measure"])

    @property
    def results(self) -> Mapping[str, AuditResult]:
        """Model name -> its AuditResult."""
        return MappingProxyType({name: model.result for name, model in self.models.items()})

    @property
    def n_trained(self) -> int:
        """Models trained by this call (the others came from the cache)."""
        return sum(model.trained for model in self.models.values())

    def to_dict(self) -> dict[str, Any]:
        """The comparison's ``results.json``."""
        return {
            "axis": self.axis, "groups": list(self.groups), "n_pairs": self.n_pairs, "corpus": self.corpus,
            "eval_corpus": self.eval_corpus, "eval_split": self.eval_split, "seed": self.seed, "mode": self.mode,
            "timings": dict(self.timings), "files": dict(self.files),
            "models": {name: model.to_dict() for name, model in self.models.items()},
        }  # fmt: skip
