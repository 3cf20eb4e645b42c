"""The paper-004 analysis result: :class:`PromptAnalysis` and the read-only records it holds."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from fairtalk.prompts.data import DataSummary
from fairtalk.prompts.templates import GroupPair

__all__ = [
    "AnalysisConfig",
    "AnalysisCounts",
    "Gap",
    "InferenceSettings",
    "NullRobustness",
    "PromptAnalysis",
    "RegardStats",
    "Robustness",
    "Spread",
    "VarianceShares",
    "frozen",
    "plain",
]

_MSG_KEY = "{name} has no entry {key!r} (entries: {keys})"


def frozen(value: Any) -> Any:
    """``value`` made read-only all the way down: mappings become ``MappingProxyType``, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    return value


def plain(value: Any) -> Any:
    """``value`` as JSON-ready Python: records and mappings become dicts, tuples lists."""
    if isinstance(value, _Record):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class _Record:
    """Read access by key (``gap["all"]``, ``gap.get("ci95")``) beside attributes, and ``to_dict()``.

    The analysis' entries were dicts before they were records; item access keeps such code working.
    """

    __slots__ = ()

    def keys(self) -> tuple[str, ...]:
        """The entry names, in ``to_dict()`` order."""
        return tuple(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]

    def __getitem__(self, key: str) -> Any:
        if key not in self.keys():
            raise KeyError(_MSG_KEY.format(name=type(self).__name__, key=key, keys=", ".join(self.keys())))
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def get(self, key: str, default: Any = None) -> Any:
        """The entry ``key``, or ``default`` where there is none."""
        return getattr(self, key) if key in self.keys() else default

    def items(self) -> tuple[tuple[str, Any], ...]:
        """(name, value) pairs, in ``to_dict()`` order."""
        return tuple((k, getattr(self, k)) for k in self.keys())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the record's part of ``results.json``)."""
        return {k: plain(v) for k, v in self.items()}


@dataclass(frozen=True, slots=True)
class RegardStats(_Record):
    """Mean regard (labels -1/0/1) of a group, its standard deviation and the number of labels."""

    mean: float
    std: float
    n: int


@dataclass(frozen=True, slots=True)
class Gap(_Record):
    """The regard gap of a group pair (``a`` minus ``b``): all structures, the baseline, inference, structures.

    ``ci95`` is the template × seed bootstrap interval, ``se`` and ``p`` its Wald test;
    ``largest``/``smallest`` are the structures with the largest and smallest gaps;
    ``n_reversing`` counts structures that reverse the gap significantly, ``n_sign_flips`` all that flip its sign.
    """

    a: str
    b: str
    all: float | None
    baseline: float | None
    ci95: tuple[float | None, float | None]
    se: float | None
    p: float | None
    largest: tuple[str, ...]
    smallest: tuple[str, ...]
    n_reversing: int
    n_sign_flips: int


@dataclass(frozen=True, slots=True)
class Spread(_Record):
    """Mean, standard deviation, range and count of a score over draws."""

    mean: float
    std: float
    min: float
    max: float
    n: int


@dataclass(frozen=True, slots=True)
class NullRobustness(_Record):
    """The robustness score with the structure labels shuffled within each group (mean over shuffles)."""

    single: float | None
    halves: float | None
    n_shuffles: int
    how: str


@dataclass(frozen=True, slots=True)
class Robustness(_Record):
    """§7 robustness: cosine similarity of group-regard vectors over single structures and random halves."""

    single: Spread
    halves: Spread
    relative_increase: float
    n_structures: int
    n_sampled: int
    n_draws: int
    seed: int
    null: NullRobustness | None = None

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], null: Mapping[str, Any] | None = None) -> Robustness:
        """From :func:`~fairtalk.prompts.robustness.robustness`'s dict (and the shuffled-labels null's)."""
        return cls(single=Spread(**values["single"]), halves=Spread(**values["halves"]),
                   relative_increase=values["relative_increase"], n_structures=values["n_structures"],
                   n_sampled=values["n_sampled"], n_draws=values["n_draws"], seed=values["seed"],
                   null=NullRobustness(**null) if null is not None else None)  # fmt: skip


@dataclass(frozen=True, slots=True)
class VarianceShares(_Record):
    """Main-effect sums of squares of regard per factor (group, structure, template, seed) and their shares."""

    total_ss: float
    ss: Mapping[str, float]
    share: Mapping[str, float]
    n_levels: Mapping[str, int]
    n: int

    def __post_init__(self) -> None:
        for name in ("ss", "share", "n_levels"):
            object.__setattr__(self, name, frozen(getattr(self, name)))


@dataclass(frozen=True, slots=True)
class AnalysisConfig(_Record):
    """The settings an analysis ran with."""

    include_other: bool
    smoothing: float
    n_best: int
    seed: int
    n_sampled: int
    n_draws: int
    baseline: str
    groups_source: str


@dataclass(frozen=True, slots=True)
class AnalysisCounts(_Record):
    """Rows analysed: all, polar (-1/0/1), "other", structures, and rows of groups left out."""

    n_rows: int
    n_polar: int
    n_other: int
    n_structures: int
    has_baseline: bool
    n_rows_ignored: int
    ignored_groups: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class InferenceSettings(_Record):
    """How the intervals and reversal tests were computed."""

    n_resamples: int
    resampled: tuple[str, ...]
    alpha: float
    method: str


Table = Mapping[str, Mapping[str, float | None]]


@dataclass(frozen=True, slots=True)
class PromptAnalysis:
    """Everything the analysis computed, read-only; ``to_dict()`` is the schema of ``results.json``.

    Distributions are fractions per group (``"all"`` is every group pooled); ``kl[a][b]`` is
    KL(P_a || P_b) in nats (None where infinite); ``regard[g]`` is a :class:`RegardStats`.
    ``by_structure[s][g]`` is the mean regard of group ``g`` under structure ``s``. Inference
    (``fairtalk.prompts.inference``): ``gaps[pair].ci95`` and ``kl_ci95[a][b]`` are template ×
    seed bootstrap intervals, ``reversing`` holds only significant reversals (Holm over the
    structures, adjusted p in ``structure_p``), ``robustness.null`` is the score with shuffled
    structure labels, and ``warnings`` flags small cells.

    From :func:`~fairtalk.prompts.labelling.analyze_prompts`, the analysis also holds what it
    was computed from: ``data_summary`` (what the reader found and how the rows were labelled),
    ``frame`` (the labelled completions, for examples), ``relabelled`` (the same completions
    analysed with a second scorer's labels) and ``scorer_check`` (the labelling scorer's
    certificate). None of these enter ``to_dict()``.
    """

    groups: tuple[str, ...]
    pairs: tuple[GroupPair, ...]
    labels: tuple[str, ...]
    distribution: Table
    baseline_distribution: Table
    counts: Mapping[str, Mapping[str, int]]
    regard: Mapping[str, RegardStats]
    baseline_regard: Mapping[str, RegardStats]
    kl: Table
    baseline_kl: Table
    gaps: Mapping[str, Gap]
    by_structure: Table
    structure_counts: Mapping[str, int]
    best_structures: tuple[str, ...]
    worst_structures: tuple[str, ...]
    gap_by_structure: Table
    reversing: Mapping[str, tuple[str, ...]]
    by_kind: Table
    robustness: Robustness
    variance: VarianceShares
    config: AnalysisConfig
    data: AnalysisCounts
    parses: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    kl_ci95: Mapping[str, Mapping[str, tuple[float | None, float | None]]] = field(default_factory=lambda: MappingProxyType({}))
    best_by_group: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    worst_by_group: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    structure_p: Table = field(default_factory=lambda: MappingProxyType({}))
    inference: InferenceSettings | None = None
    warnings: tuple[str, ...] = ()
    data_summary: DataSummary | None = None
    frame: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    relabelled: PromptAnalysis | None = field(default=None, repr=False)
    relabelled_with: str | None = None
    scorer_check: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        for name in ("distribution", "baseline_distribution", "counts", "regard", "baseline_regard", "kl",
                     "baseline_kl", "gaps", "by_structure", "structure_counts", "gap_by_structure", "reversing",
                     "by_kind", "parses", "kl_ci95", "best_by_group", "worst_by_group", "structure_p",
                     "scorer_check"):  # fmt: skip
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, frozen(value))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``results.json`` schema)."""
        return {
            "method": "prompts (Aggarwal et al. 2022, syntactically diverse prompts)",
            "groups": list(self.groups),
            "pairs": [{"name": p.name, "a": p.a, "b": p.b} for p in self.pairs],
            "labels": list(self.labels),
            **{
                name: plain(getattr(self, name))
                for name in (
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
                )
            },
            "reversing_structures": plain(self.reversing),
            "by_kind": plain(self.by_kind),
            "robustness": plain(self.robustness),
            "variance": plain(self.variance),
            "config": plain(self.config),
            "data": plain(self.data),
            "parses": plain(self.parses),
            "kl_ci95": plain(self.kl_ci95),
            "best_structures_by_group": plain(self.best_by_group),
            "worst_structures_by_group": plain(self.worst_by_group),
            "structure_p_adjusted": plain(self.structure_p),
            "inference": plain(self.inference) if self.inference is not None else {},
            "warnings": list(self.warnings),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per group (and ``all``): label shares over all structures, mean regard, its n, and the baseline's."""
        rows = {}
        for group in ["all", *self.groups]:
            row: dict[str, Any] = {label: self.distribution[group].get(label) for label in self.labels}
            row.update(mean_regard=self.regard[group].mean, n=self.regard[group].n,
                       baseline_mean_regard=self.baseline_regard[group].mean)  # fmt: skip
            rows[group] = row
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "group"
        return frame

    def structure_frame(self) -> pd.DataFrame:
        """Mean regard per structure (rows) and group (columns), plus each pair's gap."""
        frame = pd.DataFrame.from_dict(plain(self.by_structure), orient="index", columns=list(self.groups),
                                       dtype=float)  # fmt: skip
        for pair in self.pairs:
            frame[f"gap:{pair.name}"] = frame[pair.a] - frame[pair.b]
        frame.insert(0, "n", pd.Series(dict(self.structure_counts), dtype="int64"))
        frame.index.name = "structure"
        return frame
