"""The audit's result object: one frozen ``AuditResult`` with ``to_dict()`` and ``to_frame()``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["AuditResult", "AuditRun", "AxisRun", "ComparedModel", "DebiasComparison", "DivergentPair", "GenerationSummary",
           "MaskedComparison", "MeasureResult", "axis_folder"]


@dataclass(frozen=True, slots=True)
class MaskedComparison:
    """The same measure re-scored with the group words masked (the scorer-bias check).

    ``remaining`` is the masked absolute difference over the unmasked one: near 1 means
    the gap comes from the responses, near 0 means the scorer reacted to the group words.
    ``None`` when the unmasked difference is 0.
    """

    a: float
    b: float
    remaining: float | None


@dataclass(frozen=True, slots=True)
class MeasureResult:
    """Side means, the paper's Z test, the paired test, CI, correction and effect size of one measure.

    ``difference`` is the paper's relative difference (A - B) / A as a fraction, ``None``
    when A is 0. ``z``/``p`` are the paper's two-sample Z test (two-sided); they are
    ``None`` for corpus-level measures. ``ci95`` bounds the paired difference A - B.
    """

    name: str
    kind: str
    a: float
    b: float
    difference: float | None
    z: float | None
    p: float | None
    p_paired: float
    paired_test: str
    p_adjusted: float
    ci95: tuple[float, float]
    effect_size: float | None
    effect_size_name: str
    higher_is_better: bool | None = None
    masked: MaskedComparison | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``results.json`` entry for this measure."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "a": self.a,
            "b": self.b,
            "difference": self.difference,
            "difference_abs": self.a - self.b,
            "z": self.z,
            "p": self.p,
            "p_paired": self.p_paired,
            "paired_test": self.paired_test,
            "p_adjusted": self.p_adjusted,
            "ci95": list(self.ci95),
            "effect_size": self.effect_size,
            "effect_size_name": self.effect_size_name,
            "higher_is_better": self.higher_is_better,
        }
        if self.masked is not None:
            out["masked"] = {"a": self.masked.a, "b": self.masked.b, "remaining": self.masked.remaining}
        return out


@dataclass(frozen=True, slots=True)
class DivergentPair:
    """A pair whose two responses differ most on one measure (the paper's Table 1)."""

    pair_id: str
    measure: str
    context_a: str
    context_b: str
    response_a: str
    response_b: str
    score_a: float
    score_b: float


@dataclass(frozen=True, slots=True)
class AuditResult:
    """Everything one audit of one axis found. Built once; its shape never varies.

    ``input_summary`` counts what the reader skipped or kept (pairs missing a side,
    duplicate records, empty responses). ``manifest`` records versions, hashes,
    thresholds and seeds, so that a result can be traced and reproduced.
    """

    axis: str
    groups: tuple[str, str]
    n_pairs: int
    measures: tuple[MeasureResult, ...]
    alpha: float = 0.05
    correction: str = "holm"
    divergent_pairs: tuple[DivergentPair, ...] = ()
    input_summary: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    manifest: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def measure(self, name: str) -> MeasureResult:
        """The result of the measure with this result key."""
        for result in self.measures:
            if result.name == name:
                return result
        raise KeyError(f"no measure {name!r}; have: {', '.join(m.name for m in self.measures)}")

    def biased(self, alpha: float | None = None) -> tuple[str, ...]:
        """Names of the measures whose adjusted p-value is below ``alpha``."""
        level = self.alpha if alpha is None else alpha
        return tuple(m.name for m in self.measures if m.p_adjusted < level)

    def to_dict(self) -> dict[str, Any]:
        """The ``results.json`` schema."""
        return {
            "axis": self.axis,
            "groups": list(self.groups),
            "n_pairs": self.n_pairs,
            "alpha": self.alpha,
            "correction": self.correction,
            "measures": {m.name: m.to_dict() for m in self.measures},
            "input_summary": dict(self.input_summary),
            "divergent_pairs": [
                {
                    "pair_id": d.pair_id,
                    "measure": d.measure,
                    "context_a": d.context_a,
                    "context_b": d.context_b,
                    "response_a": d.response_a,
                    "response_b": d.response_b,
                    "score_a": d.score_a,
                    "score_b": d.score_b,
                }
                for d in self.divergent_pairs
            ],
            "manifest": dict(self.manifest),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per measure, indexed by measure name."""
        import pandas as pd

        rows = []
        for m in self.measures:
            row = m.to_dict()
            row.pop("masked", None)
            row["ci95_low"], row["ci95_high"] = m.ci95
            del row["ci95"]
            if m.masked is not None:
                row["masked_a"], row["masked_b"], row["masked_remaining"] = m.masked.a, m.masked.b, m.masked.remaining
            rows.append({"measure": m.name, **row})
        return pd.DataFrame(rows).set_index("measure")


@dataclass(frozen=True, slots=True)
class GenerationSummary:
    """How the responses of one axis were obtained: the model, and what came from the store.

    Items are pair sides (two per pair). ``n_cached`` were served by the run store,
    ``n_generated`` produced now, ``n_errors`` failed after the adapter's retries (they
    are retried on the next run). Pairs with a failed side are left out of the scores
    and counted in ``n_pairs_with_errors``. ``error_examples`` holds up to three distinct
    error messages.
    """

    model: str
    settings: Mapping[str, Any]
    n_items: int
    n_cached: int
    n_generated: int
    n_errors: int
    n_pairs: int
    n_pairs_with_errors: int
    seconds: float = 0.0
    error_examples: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "model": self.model, "settings": dict(self.settings), "n_items": self.n_items,
            "n_cached": self.n_cached, "n_generated": self.n_generated, "n_errors": self.n_errors,
            "n_pairs": self.n_pairs, "n_pairs_with_errors": self.n_pairs_with_errors,
            "seconds": self.seconds, "error_examples": list(self.error_examples),
        }  # fmt: skip


def axis_folder(axis: str) -> str:
    """The folder of an axis inside an audit's output folder (the axis name, safe characters only)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", axis).strip("._") or "axis"


@dataclass(frozen=True, slots=True)
class AxisRun:
    """One axis of an audit: its result, pair coverage, generation counts, stage times and files.

    ``coverage`` is the pairs stage's ``Coverage.to_dict()``; ``timings`` maps a stage
    (``pairs``, ``generation``, ``scoring``, ``write``) to seconds; ``files`` maps
    ``pairs``/``responses`` to the JSONL files written (empty without an output folder).
    """

    axis: str
    result: AuditResult
    coverage: Mapping[str, Any]
    generation: GenerationSummary
    timings: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def folder(self) -> str:
        """This axis' folder inside the audit's output folder."""
        return axis_folder(self.axis)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the result as ``AuditResult.to_dict()``)."""
        return {
            "axis": self.axis, "result": self.result.to_dict(), "coverage": dict(self.coverage),
            "generation": self.generation.to_dict(), "timings": dict(self.timings), "files": dict(self.files),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class AuditRun:
    """A whole audit: one :class:`AxisRun` per axis, in the order audited. Built once.

    ``results`` maps axis -> AuditResult; ``n_cached``/``n_generated``/``n_errors`` sum
    the axes' generation counts; ``timings`` sums each stage over the axes.
    """

    axes: Mapping[str, AxisRun]
    model: str
    corpus: str
    split: str
    seed: int
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    store: str | None = None

    @property
    def results(self) -> Mapping[str, AuditResult]:
        """Axis name -> its AuditResult."""
        return MappingProxyType({name: run.result for name, run in self.axes.items()})

    @property
    def n_cached(self) -> int:
        """Pair sides served by the run store, over all axes."""
        return sum(run.generation.n_cached for run in self.axes.values())

    @property
    def n_generated(self) -> int:
        """Pair sides the model produced in this run, over all axes."""
        return sum(run.generation.n_generated for run in self.axes.values())

    @property
    def n_errors(self) -> int:
        """Pair sides that failed in this run, over all axes."""
        return sum(run.generation.n_errors for run in self.axes.values())

    @property
    def timings(self) -> Mapping[str, float]:
        """Seconds per stage, summed over the axes."""
        total: dict[str, float] = {}
        for run in self.axes.values():
            for stage, seconds in run.timings.items():
                total[stage] = total.get(stage, 0.0) + seconds
        return MappingProxyType(total)

    def biased(self, alpha: float | None = None) -> dict[str, tuple[str, ...]]:
        """Axis -> names of its measures with adjusted p below ``alpha`` (axes without any left out)."""
        out = {name: result.biased(alpha) for name, result in self.results.items()}
        return {name: found for name, found in out.items() if found}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the run (``run.json``)."""
        return {
            "model": self.model, "corpus": self.corpus, "split": self.split, "seed": self.seed,
            "settings": dict(self.settings), "store": self.store,
            "n_cached": self.n_cached, "n_generated": self.n_generated, "n_errors": self.n_errors,
            "timings": dict(self.timings), "axes": {name: run.to_dict() for name, run in self.axes.items()},
        }  # fmt: skip


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
