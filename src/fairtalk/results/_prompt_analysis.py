"""The paper-004 analysis result: :class:`PromptAnalysis`, its tables typed as DataFrames and records.

Its tables are pandas DataFrames, one row per outer key of ``results.json`` (a group, a
structure, a pair or a kind); its per-key entries are the frozen records of
:mod:`fairtalk.prompts._records`. ``to_dict()`` writes them as the nested mappings
``results.json`` has always held, and ``from_dict()`` reads them back.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from fairtalk.prompts._data import DataSummary
from fairtalk.prompts._records import (
    AnalysisConfig,
    AnalysisCounts,
    Gap,
    InferenceSettings,
    RegardCertificate,
    RegardStats,
    Robustness,
    VarianceShares,
)
from fairtalk.prompts._templates import GroupPair
from fairtalk.results._protocol import Result, Verdict
from fairtalk.results._schema import ResultKind
from fairtalk.stats import PPIEstimate

if TYPE_CHECKING:  # pandas is imported lazily, when a table is built or read
    import pandas as pd

__all__ = ["METHOD", "PromptAnalysis"]

#: The ``method`` entry of ``results.json``.
METHOD = "prompts (Aggarwal et al. 2022, syntactically diverse prompts)"
#: The tables written as ``outer -> inner -> value``, non-finite values as null.
_FINITE_TABLES = ("kl", "baseline_kl", "by_structure", "gap_by_structure", "by_kind", "structure_p")
#: The level of the pair verdicts when the analysis kept no inference settings.
_ALPHA = 0.05


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _nested(frame: pd.DataFrame, *, finite: bool) -> dict[str, dict[str, Any]]:
    """``{row: {column: value}}`` in the frame's order; non-finite values None when ``finite``."""
    convert = _finite if finite else float
    return {
        str(row): {str(column): convert(value) for column, value in zip(frame.columns, values)}
        for row, values in zip(frame.index, frame.to_numpy(dtype=float))
    }


def _table(data: Mapping[str, Mapping[str, Any]], columns: Sequence[str] = (), *, none: float = math.nan) -> pd.DataFrame:
    """The DataFrame of ``{row: {column: value}}`` (None as ``none``); ``columns`` orders an empty table's columns."""
    import pandas as pd

    names = list(next(iter(data.values())).keys()) if data else list(columns)
    values = [[none if row.get(c) is None else float(row[c]) for c in names] for row in data.values()]
    return pd.DataFrame(values, index=pd.Index(list(data), dtype=object), columns=pd.Index(names, dtype=object), dtype=float)


def _intervals(data: Mapping[str, Mapping[str, Sequence[float | None]]]) -> pd.DataFrame:
    """The long table (row, column) -> low, high of ``{row: {column: (low, high)}}`` (None as NaN)."""
    import pandas as pd

    keys = [(r, c) for r, row in data.items() for c in row]
    values = [[math.nan if v is None else float(v) for v in data[r][c]] for r, c in keys]
    index = pd.MultiIndex.from_tuples(keys, names=["row", "column"])
    return pd.DataFrame(values, index=index, columns=["low", "high"], dtype=float)


def _nested_intervals(frame: pd.DataFrame) -> dict[str, dict[str, list[float | None]]]:
    """``{row: {column: [low, high]}}`` of a long interval table (non-finite bounds None)."""
    out: dict[str, dict[str, list[float | None]]] = {}
    for (row, column), (low, high) in zip(frame.index, frame.to_numpy(dtype=float)):
        out.setdefault(str(row), {})[str(column)] = [_finite(low), _finite(high)]
    return out


def _ppi_dict(estimate: PPIEstimate) -> dict[str, Any]:
    """A labelled estimate as ``results.json`` holds it (as ``score --gold`` writes one; non-finite bounds null)."""
    out = {name: getattr(estimate, name) for name in estimate.__slots__}
    return {
        k: [_finite(x) for x in v] if isinstance(v, tuple) else _finite(v) if isinstance(v, float) else v for k, v in out.items()
    }


def _ppi(data: Mapping[str, Any]) -> PPIEstimate:
    """The :class:`PPIEstimate` of a :func:`_ppi_dict` dict (null read as NaN)."""

    def pair(name: str) -> tuple[float, float]:
        low, high = data[name]
        return _nan(low), _nan(high)

    return PPIEstimate(
        estimate=_nan(data["estimate"]),
        ci95=pair("ci95"),
        p=_nan(data["p"]),
        se=_nan(data["se"]),
        n_labels=int(data["n_labels"]),
        n_items=int(data["n_items"]),
        lam=_nan(data["lam"]),
        scorer_estimate=_nan(data["scorer_estimate"]),
        labels_estimate=_nan(data["labels_estimate"]),
        labels_ci95=pair("labels_ci95"),
        effective_labels=_nan(data["effective_labels"]),
        **{k: data[k] for k in ("n_disagreements", "method", "se_labelled", "se_scorer") if data.get(k) is not None},
    )


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


@dataclass(frozen=True, slots=True)
class PromptGold:
    """The analysis corrected by human labels (``prompts analyze --gold``; see :mod:`fairtalk.prompts._gold`).

    ``regard[g]``: group ``g``'s mean regard; ``rates[g][label]``: the label's share; ``gaps[pair]``:
    the pair's regard gap; each a prediction-powered :class:`~fairtalk.stats._ppi.PPIEstimate`
    from ``n_labels`` labelled completions of ``source``, clustered by ``clusters``.
    """

    source: str
    n_labels: int
    clusters: str
    regard: Mapping[str, PPIEstimate]
    rates: Mapping[str, Mapping[str, PPIEstimate]]
    gaps: Mapping[str, PPIEstimate]

    def to_dict(self) -> dict[str, Any]:
        """The ``"gold"`` entry of ``results.json`` (the gaps' and the groups' estimates sit beside theirs, as ``ppi``)."""
        return {
            "source": self.source,
            "n_labels": self.n_labels,
            "clusters": self.clusters,
            "rates": {g: {k: _ppi_dict(e) for k, e in r.items()} for g, r in self.rates.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], regard: Mapping[str, Any], gaps: Mapping[str, Any]) -> PromptGold:
        """The record of ``results.json``'s ``"gold"`` entry and the ``ppi`` objects of its ``regard`` and ``gaps``."""
        return cls(
            source=data["source"],
            n_labels=int(data["n_labels"]),
            clusters=data["clusters"],
            regard={g: _ppi(r["ppi"]) for g, r in regard.items() if r.get("ppi")},
            rates={g: {k: _ppi(e) for k, e in r.items()} for g, r in data["rates"].items()},
            gaps={name: _ppi(g["ppi"]) for name, g in gaps.items() if g.get("ppi")},
        )


@dataclass(frozen=True, slots=True, eq=False)
class PromptAnalysis(Result[str]):
    """Everything the analysis computed, read-only; ``to_dict()`` is the schema of ``results.json``.

    Tables (pandas DataFrames; treat them as read-only):

    - ``distribution``, ``baseline_distribution``: label shares (columns ``labels``) per group,
      and ``"all"`` (every group pooled) last; NaN for a group without completions. ``counts``:
      the label counts per group.
    - ``kl``, ``baseline_kl``: KL(P_row || P_column) in nats between groups (``inf`` where infinite).
    - ``by_structure``: mean regard per structure (rows) and group (NaN where none); ``by_kind``:
      per template kind and group; ``gap_by_structure`` and ``structure_p``: per pair (rows) and
      structure, the gap and its Holm-adjusted reversal p.
    - ``kl_ci95``: per (row, column) group pair, the ``low`` and ``high`` bootstrap interval of the KL.

    Per key: ``regard[g]`` is a :class:`~fairtalk.prompts._records.RegardStats` (``"all"`` too),
    ``gaps[pair]`` a :class:`~fairtalk.prompts._records.Gap`, ``reversing[pair]`` the structures that
    reverse its gap significantly. ``warnings`` flags small cells and pairs without a gap.

    Its keys are the group pairs: ``verdicts[pair]`` is :attr:`Verdict.DIFFERENT` when the gap's
    bootstrap p, Holm-adjusted over the pairs, is below the inference's α (else ``INCONCLUSIVE``:
    the analysis tests no equivalence); ``detected()`` names those pairs.

    From :func:`~fairtalk.prompts._labelling.analyze_prompts`, the analysis also holds what it
    was computed from: ``data_summary`` (what the reader found and how the rows were labelled),
    ``frame`` (the labelled completions, for examples), ``relabelled`` (the same completions
    analysed with a second scorer's labels) and ``scorer_check`` (the labelling scorer's
    certificate). None of these enter ``to_dict()``.
    """

    groups: tuple[str, ...]
    pairs: tuple[GroupPair, ...]
    labels: tuple[str, ...]
    distribution: pd.DataFrame
    baseline_distribution: pd.DataFrame
    counts: pd.DataFrame
    regard: Mapping[str, RegardStats]
    baseline_regard: Mapping[str, RegardStats]
    kl: pd.DataFrame
    baseline_kl: pd.DataFrame
    gaps: Mapping[str, Gap]
    by_structure: pd.DataFrame
    structure_counts: Mapping[str, int]
    best_structures: tuple[str, ...]
    worst_structures: tuple[str, ...]
    gap_by_structure: pd.DataFrame
    reversing: Mapping[str, tuple[str, ...]]
    by_kind: pd.DataFrame
    robustness: Robustness
    variance: VarianceShares
    config: AnalysisConfig
    data: AnalysisCounts
    kl_ci95: pd.DataFrame
    structure_p: pd.DataFrame
    parses: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    best_by_group: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    worst_by_group: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    inference: InferenceSettings | None = None
    warnings: tuple[str, ...] = ()
    data_summary: DataSummary | None = None
    frame: pd.DataFrame | None = field(default=None, repr=False)
    relabelled: PromptAnalysis | None = field(default=None, repr=False)
    relabelled_with: str | None = None
    scorer_check: RegardCertificate | None = None
    gold: PromptGold | None = None

    _file_kind: ClassVar[ResultKind] = "prompts"

    def __post_init__(self) -> None:
        for name in (
            "regard",
            "baseline_regard",
            "gaps",
            "structure_counts",
            "reversing",
            "parses",
            "best_by_group",
            "worst_by_group",
        ):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    def __eq__(self, other: object) -> bool:
        """Two analyses are equal when their ``results.json`` content is (the tables compared as written)."""
        return isinstance(other, PromptAnalysis) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # holds DataFrames

    @property
    def verdicts(self) -> Mapping[str, Verdict]:
        """Pair -> :attr:`Verdict.DIFFERENT` when its gap's p, Holm-adjusted over the pairs, is below α; else ``INCONCLUSIVE``."""
        import numpy as np

        from fairtalk.stats import adjust_pvalues

        alpha = self.inference.alpha if self.inference is not None else _ALPHA
        names = list(self.gaps)
        p = np.array([math.nan if g.p is None else g.p for g in self.gaps.values()], dtype=float)
        adjusted = adjust_pvalues(p, method="holm") if names else p
        return MappingProxyType(
            {name: Verdict.DIFFERENT if adjusted[i] < alpha else Verdict.INCONCLUSIVE for i, name in enumerate(names)}
        )

    def with_gold(
        self,
        *,
        source: str,
        n_labels: int,
        clusters: str,
        regard: Mapping[str, PPIEstimate],
        rates: Mapping[str, Mapping[str, PPIEstimate]],
        gaps: Mapping[str, PPIEstimate],
        warnings: Sequence[str] = (),
    ) -> PromptAnalysis:
        """The analysis with its labelled estimates (a :class:`PromptGold`) and the labels' ``warnings`` after its own."""
        record = PromptGold(
            source=source,
            n_labels=n_labels,
            clusters=clusters,
            regard=MappingProxyType(dict(regard)),
            rates=MappingProxyType({g: MappingProxyType(dict(r)) for g, r in rates.items()}),
            gaps=MappingProxyType(dict(gaps)),
        )
        return dataclasses.replace(self, gold=record, warnings=(*self.warnings, *warnings))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``results.json`` schema; with labels, ``gold`` and a ``ppi`` per gap and group)."""
        tables = {name: _nested(getattr(self, name), finite=name in _FINITE_TABLES) for name in _FINITE_TABLES}
        out = self._to_dict(tables)
        if self.gold is not None:
            for name, estimate in self.gold.gaps.items():
                out["gaps"][name]["ppi"] = _ppi_dict(estimate)
            for group, estimate in self.gold.regard.items():
                out["regard"][group]["ppi"] = _ppi_dict(estimate)
            out["gold"] = self.gold.to_dict()
        return out

    def _to_dict(self, tables: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "method": METHOD,
            "groups": list(self.groups),
            "pairs": [{"name": p.name, "a": p.a, "b": p.b} for p in self.pairs],
            "labels": list(self.labels),
            "distribution": _nested(self.distribution, finite=False),
            "baseline_distribution": _nested(self.baseline_distribution, finite=False),
            "counts": {str(g): {str(k): int(v) for k, v in row.items()} for g, row in self.counts.iterrows()},
            "regard": {g: r.to_dict() for g, r in self.regard.items()},
            "baseline_regard": {g: r.to_dict() for g, r in self.baseline_regard.items()},
            "kl": tables["kl"],
            "baseline_kl": tables["baseline_kl"],
            "gaps": {name: g.to_dict() for name, g in self.gaps.items()},
            "by_structure": tables["by_structure"],
            "structure_counts": dict(self.structure_counts),
            "best_structures": list(self.best_structures),
            "worst_structures": list(self.worst_structures),
            "gap_by_structure": tables["gap_by_structure"],
            "reversing_structures": {name: list(s) for name, s in self.reversing.items()},
            "by_kind": tables["by_kind"],
            "robustness": self.robustness.to_dict(),
            "variance": self.variance.to_dict(),
            "config": self.config.to_dict(),
            "data": self.data.to_dict(),
            "parses": dict(self.parses),
            "kl_ci95": _nested_intervals(self.kl_ci95),
            "best_structures_by_group": {g: list(s) for g, s in self.best_by_group.items()},
            "worst_structures_by_group": {g: list(s) for g, s in self.worst_by_group.items()},
            "structure_p_adjusted": tables["structure_p"],
            "inference": self.inference.to_dict() if self.inference is not None else {},
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The analysis of its ``results.json`` dict (the inverse of :meth:`to_dict`; the extra entries a report adds are ignored)."""
        groups, labels = tuple(data["groups"]), tuple(data["labels"])
        inference, gold = data.get("inference"), data.get("gold")
        return cls(
            groups=groups,
            pairs=tuple(GroupPair(p["name"], p["a"], p["b"]) for p in data["pairs"]),
            labels=labels,
            distribution=_table(data["distribution"], labels),
            baseline_distribution=_table(data["baseline_distribution"], labels),
            counts=_table(data["counts"], labels).astype("int64"),
            regard={g: RegardStats.from_dict(r) for g, r in data["regard"].items()},
            baseline_regard={g: RegardStats.from_dict(r) for g, r in data["baseline_regard"].items()},
            kl=_table(data["kl"], groups, none=math.inf),
            baseline_kl=_table(data["baseline_kl"], groups, none=math.inf),
            gaps={name: Gap.from_dict(g) for name, g in data["gaps"].items()},
            by_structure=_table(data["by_structure"], groups),
            structure_counts=data["structure_counts"],
            best_structures=tuple(data["best_structures"]),
            worst_structures=tuple(data["worst_structures"]),
            gap_by_structure=_table(data["gap_by_structure"]),
            reversing={name: tuple(s) for name, s in data["reversing_structures"].items()},
            by_kind=_table(data["by_kind"], groups),
            robustness=Robustness.from_dict(data["robustness"]),
            variance=VarianceShares.from_dict(data["variance"]),
            config=AnalysisConfig.from_dict(data["config"]),
            data=AnalysisCounts.from_dict(data["data"]),
            kl_ci95=_intervals(data.get("kl_ci95") or {}),
            structure_p=_table(data.get("structure_p_adjusted") or {}),
            parses=data.get("parses") or {},
            best_by_group={g: tuple(s) for g, s in (data.get("best_structures_by_group") or {}).items()},
            worst_by_group={g: tuple(s) for g, s in (data.get("worst_structures_by_group") or {}).items()},
            inference=InferenceSettings.from_dict(inference) if inference else None,
            warnings=tuple(data.get("warnings") or ()),
            gold=PromptGold.from_dict(gold, data["regard"], data["gaps"]) if gold else None,
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per group (and ``all``): label shares over all structures, mean regard, its n, and the baseline's."""
        import pandas as pd

        rows = {}
        for group in ["all", *self.groups]:
            row: dict[str, Any] = {label: float(self.distribution.at[group, label]) for label in self.labels}
            row.update(
                mean_regard=self.regard[group].mean, n=self.regard[group].n, baseline_mean_regard=self.baseline_regard[group].mean
            )
            rows[group] = row
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "group"
        return frame

    def structure_frame(self) -> pd.DataFrame:
        """Mean regard per structure (rows) and group (columns), plus each pair's gap."""
        import pandas as pd

        frame = pd.DataFrame(
            self.by_structure.to_numpy(dtype=float), index=list(self.by_structure.index), columns=list(self.groups), dtype=float
        )
        for pair in self.pairs:
            frame[f"gap:{pair.name}"] = frame[pair.a] - frame[pair.b]
        frame.insert(0, "n", pd.Series(dict(self.structure_counts), dtype="int64"))
        frame.index.name = "structure"
        return frame
