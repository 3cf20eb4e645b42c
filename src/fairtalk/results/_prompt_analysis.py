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
from typing import TYPE_CHECKING, Any, ClassVar

from fairtalk._codec import OMIT_DEFAULT, SKIP, Codec, key, via
from fairtalk.errors import InputError
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

__all__ = ["METHOD", "PairVerdict", "PromptAnalysis"]

#: The ``method`` entry of ``results.json``.
METHOD = "prompts (Aggarwal et al. 2022, syntactically diverse prompts)"
#: The tables written as ``outer -> inner -> value``, non-finite values as null.
_FINITE_TABLES = ("kl", "baseline_kl", "by_structure", "gap_by_structure", "by_kind", "structure_p")


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


def _ppi_map(estimates: Mapping[str, PPIEstimate]) -> dict[str, dict[str, Any]]:
    return {name: _ppi_dict(e) for name, e in estimates.items()}


def _ppi_map_of(data: Mapping[str, Any]) -> dict[str, PPIEstimate]:
    return {name: _ppi(e) for name, e in data.items()}


@dataclass(frozen=True, slots=True)
class PromptGold(Codec):
    """The analysis corrected by human labels (``prompts analyze --gold``; see :mod:`fairtalk.prompts._gold`).

    ``regard[g]``: group ``g``'s mean regard; ``rates[g][label]``: the label's share; ``gaps[pair]``:
    the pair's regard gap; each a prediction-powered :class:`~fairtalk.stats._ppi.PPIEstimate`
    from ``n_labels`` labelled completions of ``source``, clustered by ``clusters``.

    ``to_dict()`` is the ``"gold"`` entry of ``results.json``: the gaps' and the groups' estimates
    sit beside theirs, as ``ppi`` (the analysis writes them there); ``from_dict()`` reads them
    back from ``regard`` and ``gaps`` keys of that shape (``{name: ppi}``).
    """

    source: str
    n_labels: int
    clusters: str
    regard: Mapping[str, PPIEstimate] = field(metadata=SKIP | via(_ppi_map, _ppi_map_of))
    rates: Mapping[str, Mapping[str, PPIEstimate]] = field(
        metadata=via(
            lambda rates: {g: _ppi_map(r) for g, r in rates.items()}, lambda data: {g: _ppi_map_of(r) for g, r in data.items()}
        )
    )
    gaps: Mapping[str, PPIEstimate] = field(metadata=SKIP | via(_ppi_map, _ppi_map_of))


_MSG_UNDECIDED = (
    "this prompts analysis was written before fairtalk recorded its pair verdicts (no pair_verdicts in its "
    "results.json); rerun `fairtalk prompts analyze` to decide them"
)


@dataclass(frozen=True, slots=True)
class PairVerdict(Codec):
    """A group pair's verdict on its regard gap, as the analysis decided it (:func:`fairtalk.inference.pair_verdicts`).

    ``p_adjusted``: the gap's bootstrap p, Holm-adjusted over the pairs (None without one: no
    bootstrap ran); ``verdict``: :attr:`Verdict.DIFFERENT` when it is below the inference's α, else
    :attr:`Verdict.INCONCLUSIVE` (the analysis tests no equivalence). A string ``verdict`` is read
    as its :class:`Verdict`.
    """

    p_adjusted: float | None
    verdict: Verdict

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))  # ValueError for a string that is no verdict


def _pair_verdicts_of(data: Mapping[str, Any]) -> Mapping[str, PairVerdict]:
    return MappingProxyType({name: PairVerdict.from_dict(value) for name, value in data.items()})


def _frame(name: str, json_key: str, *, finite: bool, columns: str = "", none: float = math.nan) -> MappingProxyType[str, Any]:
    """Field metadata of a table written as ``{row: {column: value}}`` under ``json_key``.

    ``columns`` names the key (``groups``, ``labels``) that orders an empty table's columns; a
    table other than ``distribution``'s may be missing from an older file (read as empty).
    """

    def read(data: Mapping[str, Any]) -> pd.DataFrame:
        return _table(data.get(json_key) or {}, tuple(data[columns]) if columns else (), none=none)

    return MappingProxyType(
        via(lambda analysis: _nested(getattr(analysis, name), finite=finite), read, whole=True) | key(json_key)
    )


def _counts_json(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    return {str(g): {str(k): int(v) for k, v in row.items()} for g, row in frame.iterrows()}


def _counts_of(data: Mapping[str, Any]) -> pd.DataFrame:
    return _table(data["counts"], tuple(data["labels"])).astype("int64")


def _with_ppi(name: str) -> MappingProxyType[str, Any]:
    """Field metadata of ``regard`` or ``gaps``: each entry, with labels its estimate under ``ppi`` (see :class:`PromptGold`)."""
    kind: type[RegardStats | Gap] = RegardStats if name == "regard" else Gap

    def write(analysis: PromptAnalysis) -> dict[str, dict[str, Any]]:
        labelled = getattr(analysis.gold, name) if analysis.gold is not None else {}
        return {
            entry: {**value.to_dict(), **({"ppi": _ppi_dict(labelled[entry])} if entry in labelled else {})}
            for entry, value in getattr(analysis, name).items()
        }

    return via(write, lambda data: {entry: kind.from_dict(value) for entry, value in data[name].items()}, whole=True)


def _gold_of(data: Mapping[str, Any]) -> PromptGold | None:
    """The labelled estimates: ``results.json``'s ``gold`` and the ``ppi`` of its groups and gaps (None without labels)."""
    gold = data.get("gold")
    if not gold:
        return None
    regard = {g: r["ppi"] for g, r in data["regard"].items() if r.get("ppi")}
    gaps = {name: g["ppi"] for name, g in data["gaps"].items() if g.get("ppi")}
    return PromptGold.from_dict({**gold, "regard": regard, "gaps": gaps})


@dataclass(frozen=True, slots=True, eq=False)
class PromptAnalysis(Codec, Result[str]):
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

    Its keys are the group pairs: ``pair_verdicts[pair]`` is the :class:`PairVerdict` the analysis
    decided (:func:`fairtalk.inference.pair_verdicts`: the gap's bootstrap p, Holm-adjusted over the
    pairs, against the inference's α), ``verdicts[pair]`` its :class:`Verdict`, and ``detected()``
    names the pairs with a difference detected. A file written before the verdicts were recorded has
    none (``pair_verdicts`` None): ``verdicts`` and ``detected()`` raise InputError there; rerun the
    analysis for them.

    From :func:`~fairtalk.prompts._labelling.analyze_prompts`, the analysis also holds what it
    was computed from: ``data_summary`` (what the reader found and how the rows were labelled),
    ``frame`` (the labelled completions, for examples), ``relabelled`` (the same completions
    analysed with a second scorer's labels) and ``scorer_check`` (the labelling scorer's
    certificate). None of these enter ``to_dict()``.
    """

    groups: tuple[str, ...]
    pairs: tuple[GroupPair, ...]
    labels: tuple[str, ...]
    distribution: pd.DataFrame = field(metadata=_frame("distribution", "distribution", finite=False, columns="labels"))
    baseline_distribution: pd.DataFrame = field(
        metadata=_frame("baseline_distribution", "baseline_distribution", finite=False, columns="labels")
    )
    counts: pd.DataFrame = field(metadata=via(lambda analysis: _counts_json(analysis.counts), _counts_of, whole=True))
    regard: Mapping[str, RegardStats] = field(metadata=_with_ppi("regard"))
    baseline_regard: Mapping[str, RegardStats]
    kl: pd.DataFrame = field(metadata=_frame("kl", "kl", finite=True, columns="groups", none=math.inf))
    baseline_kl: pd.DataFrame = field(metadata=_frame("baseline_kl", "baseline_kl", finite=True, columns="groups", none=math.inf))
    gaps: Mapping[str, Gap] = field(metadata=_with_ppi("gaps"))
    by_structure: pd.DataFrame = field(metadata=_frame("by_structure", "by_structure", finite=True, columns="groups"))
    structure_counts: Mapping[str, int]
    best_structures: tuple[str, ...]
    worst_structures: tuple[str, ...]
    gap_by_structure: pd.DataFrame = field(metadata=_frame("gap_by_structure", "gap_by_structure", finite=True))
    reversing: Mapping[str, tuple[str, ...]] = field(metadata=key("reversing_structures"))
    by_kind: pd.DataFrame = field(metadata=_frame("by_kind", "by_kind", finite=True, columns="groups"))
    robustness: Robustness
    variance: VarianceShares
    config: AnalysisConfig
    data: AnalysisCounts
    kl_ci95: pd.DataFrame = field(
        metadata=via(
            lambda analysis: _nested_intervals(analysis.kl_ci95), lambda data: _intervals(data.get("kl_ci95") or {}), whole=True
        )
    )
    structure_p: pd.DataFrame = field(metadata=_frame("structure_p", "structure_p_adjusted", finite=True))
    parses: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    best_by_group: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}), metadata=key("best_structures_by_group")
    )
    worst_by_group: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}), metadata=key("worst_structures_by_group")
    )
    inference: InferenceSettings | None = field(
        default=None,
        metadata=via(lambda i: {} if i is None else i.to_dict(), lambda d: InferenceSettings.from_dict(d) if d else None),
    )
    pair_verdicts: Mapping[str, PairVerdict] | None = field(
        default=None,
        metadata=OMIT_DEFAULT | via(lambda found: {name: v.to_dict() for name, v in found.items()}, _pair_verdicts_of),
    )
    warnings: tuple[str, ...] = ()
    data_summary: DataSummary | None = None
    frame: pd.DataFrame | None = field(default=None, repr=False)
    relabelled: PromptAnalysis | None = field(default=None, repr=False)
    relabelled_with: str | None = None
    scorer_check: RegardCertificate | None = None
    gold: PromptGold | None = field(
        default=None, metadata=OMIT_DEFAULT | via(lambda analysis: analysis.gold.to_dict(), _gold_of, whole=True)
    )

    _file_kind: ClassVar[ResultKind] = "prompts"

    #: Its ``results.json`` keys in order (what it was computed from is not written).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "method",
        "groups",
        "pairs",
        "labels",
        "distribution",
        "baseline_distribution",
        "counts",
        "regard",
        "baseline_regard",
        "kl",
        "baseline_kl",
        "gaps",
        "by_structure",
        "structure_counts",
        "best_structures",
        "worst_structures",
        "gap_by_structure",
        "reversing",
        "by_kind",
        "robustness",
        "variance",
        "config",
        "data",
        "parses",
        "kl_ci95",
        "best_by_group",
        "worst_by_group",
        "structure_p",
        "inference",
        "pair_verdicts",
        "warnings",
        "gold",
    )

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
        if self.pair_verdicts is not None:
            object.__setattr__(self, "pair_verdicts", MappingProxyType(dict(self.pair_verdicts)))

    def __eq__(self, other: object) -> bool:
        """Two analyses are equal when their ``results.json`` content is (the tables compared as written)."""
        return isinstance(other, PromptAnalysis) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # holds DataFrames

    @property
    def method(self) -> str:
        """The ``method`` entry of ``results.json``: :data:`METHOD`."""
        return METHOD

    @property
    def verdicts(self) -> Mapping[str, Verdict]:
        """Pair -> the verdict the analysis decided (:attr:`pair_verdicts`).

        Raises
        ------
        InputError
            The analysis was read from a file written before the verdicts were recorded: they were
            never decided there, and reading them as inconclusive would hide a difference.
        """
        if self.pair_verdicts is None:
            raise InputError(_MSG_UNDECIDED)
        return MappingProxyType({name: found.verdict for name, found in self.pair_verdicts.items()})

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
