"""Baseline and debiased models audited on the same pairs (paper 001, Table 7)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from fairtalk._codec import Codec
from fairtalk.results._audit import AuditResult
from fairtalk.results._model_comparison import Change, GapChange, ModelComparison
from fairtalk.results._protocol import Result, Verdict
from fairtalk.results._run import AuditRun

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["ComparedModel", "DebiasComparison"]


@dataclass(frozen=True, slots=True)
class ComparedModel(Codec):
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

    #: Its JSON keys in order (fields and derived properties).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "name",
        "debias",
        "checkpoint",
        "trained",
        "training",
        "training_seconds",
        "validation",
        "n_different",
        "n_distinct",
        "run",
    )

    @property
    def result(self) -> AuditResult:
        """The audit result (the comparison audits one axis)."""
        return next(iter(self.run.results.values()))


@dataclass(frozen=True, slots=True)
class DebiasComparison(Codec, Result[tuple[str, str]]):
    """Baseline and debiased models audited on the same pairs (paper 001, Table 7). Built once.

    ``models`` maps a model name (``baseline``, ``cda``, ``wer``) to its :class:`ComparedModel`,
    baseline first; ``timings`` maps ``training``/``pairs``/``generation``/``scoring``/``total``
    to seconds; ``files`` names what was written. ``mode`` is ``quick``, ``full`` or ``custom`` (a
    TrainConfig given).

    ``changes`` maps each debiased model to its :class:`ModelComparison` against the baseline
    (what ``fairtalk compare`` says of the two audits: per key the change in gap, its interval,
    p and :class:`Change` verdict); Table 7's ↓/↑ marks read these verdicts (:meth:`change_verdict`).

    Its keys are ``(model, measure)``, as the rows of ``to_frame()``: ``verdicts`` holds each
    model's measure verdicts, and ``detected()`` each model's primary measures with a difference detected.
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
    changes: Mapping[str, ModelComparison] = field(default_factory=lambda: MappingProxyType({}))

    #: Its JSON keys in order (fields and derived properties).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "axis",
        "groups",
        "n_pairs",
        "corpus",
        "eval_corpus",
        "eval_split",
        "seed",
        "mode",
        "timings",
        "files",
        "models",
        "changes",
    )

    def gap_change(self, model: str, key: str) -> GapChange | None:
        """The change in ``key``'s gap from the baseline to ``model`` (None: the baseline, or a key not compared)."""
        comparison = self.changes.get(model)
        if comparison is None:
            return None
        return next((row for row in comparison.changes if row.key == key and row.axis == self.axis), None)

    def change_verdict(self, model: str, key: str) -> Change | None:
        """The :class:`Change` verdict of ``key`` for ``model`` against the baseline (None: not compared)."""
        row = self.gap_change(model, key)
        return None if row is None else row.verdict

    def to_frame(self) -> pd.DataFrame:
        """One row per (model, measure): each model's ``AuditResult.to_frame()`` stacked, indexed by both."""
        import pandas as pd

        return pd.concat({name: result.to_frame() for name, result in self.results.items()}, names=["model", "measure"])

    @property
    def results(self) -> Mapping[str, AuditResult]:
        """Model name -> its AuditResult."""
        return MappingProxyType({name: model.result for name, model in self.models.items()})

    @property
    def verdicts(self) -> Mapping[tuple[str, str], Verdict]:
        """(model, measure) -> that model's verdict on the measure, baseline first."""
        return MappingProxyType(
            {(name, key): verdict for name, result in self.results.items() for key, verdict in result.verdicts.items()}
        )

    def detected(self) -> tuple[tuple[str, str], ...]:
        """(model, measure) of every model's primary measures with a difference detected (adjusted p below its α)."""
        return tuple((name, key) for name, result in self.results.items() for key in result.detected())

    @property
    def n_trained(self) -> int:
        """Models trained by this call (the others came from the cache)."""
        return sum(model.trained for model in self.models.values())
