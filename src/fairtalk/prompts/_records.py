"""The paper-004 stage records: what the analysis stages return and :class:`~fairtalk.results.PromptAnalysis` holds.

Frozen dataclasses with ``to_dict()`` (their part of ``results.json``, keys in field order) and
``from_dict()``; this module imports nothing else from fairtalk, so that the results layer may
hold them (as it holds the records of ``fairtalk.records``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Self

__all__ = [
    "AnalysisConfig",
    "AnalysisCounts",
    "Gap",
    "InferenceSettings",
    "NullRobustness",
    "PairCertificate",
    "RegardCertificate",
    "RegardStats",
    "Robustness",
    "Spread",
    "VarianceShares",
]

Interval = tuple[float | None, float | None]


def _interval(values: Any) -> Interval:
    low, high = values if values is not None else (None, None)
    return low, high


@dataclass(frozen=True, slots=True)
class RegardStats:
    """Mean regard (labels -1/0/1) of a group, its standard deviation and the number of labels (NaN where none)."""

    mean: float
    std: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"mean": self.mean, "std": self.std, "n": self.n}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict (null read as NaN)."""
        return cls(mean=_nan(data["mean"]), std=_nan(data["std"]), n=int(data["n"]))


@dataclass(frozen=True, slots=True)
class Gap:
    """The regard gap of a group pair (``a`` minus ``b``): all structures, the baseline, inference, structures.

    ``ci95`` is the template × seed bootstrap interval, ``se`` and ``p`` its Wald test;
    ``largest``/``smallest`` are the structures with the largest and smallest gaps;
    ``n_reversing`` counts structures that reverse the gap significantly, ``n_sign_flips`` all that flip its sign.
    """

    a: str
    b: str
    all: float | None
    baseline: float | None
    ci95: Interval
    se: float | None
    p: float | None
    largest: tuple[str, ...]
    smallest: tuple[str, ...]
    n_reversing: int
    n_sign_flips: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "a": self.a,
            "b": self.b,
            "all": self.all,
            "baseline": self.baseline,
            "ci95": list(self.ci95),
            "se": self.se,
            "p": self.p,
            "largest": list(self.largest),
            "smallest": list(self.smallest),
            "n_reversing": self.n_reversing,
            "n_sign_flips": self.n_sign_flips,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict."""
        return cls(
            a=data["a"],
            b=data["b"],
            all=data["all"],
            baseline=data["baseline"],
            ci95=_interval(data["ci95"]),
            se=data["se"],
            p=data["p"],
            largest=tuple(data["largest"]),
            smallest=tuple(data["smallest"]),
            n_reversing=data["n_reversing"],
            n_sign_flips=data["n_sign_flips"],
        )


@dataclass(frozen=True, slots=True)
class Spread:
    """Mean, standard deviation, range and count of a score over draws (NaN and n 0 where no draw gave one)."""

    mean: float
    std: float
    min: float
    max: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"mean": self.mean, "std": self.std, "min": self.min, "max": self.max, "n": self.n}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict (null read as NaN)."""
        return cls(mean=_nan(data["mean"]), std=_nan(data["std"]), min=_nan(data["min"]), max=_nan(data["max"]), n=int(data["n"]))


@dataclass(frozen=True, slots=True)
class NullRobustness:
    """The robustness score with the structure labels shuffled within each group (mean over shuffles)."""

    single: float | None
    halves: float | None
    n_shuffles: int
    how: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"single": self.single, "halves": self.halves, "n_shuffles": self.n_shuffles, "how": self.how}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict."""
        return cls(single=data["single"], halves=data["halves"], n_shuffles=data["n_shuffles"], how=data["how"])


@dataclass(frozen=True, slots=True)
class Robustness:
    """§7 robustness: cosine similarity of group-regard vectors over single structures and random halves.

    ``relative_increase`` is ``halves.mean / single.mean - 1`` (NaN when undefined); ``null`` the
    score against shuffled structure labels (None until the analysis adds it).
    """

    single: Spread
    halves: Spread
    relative_increase: float
    n_structures: int
    n_sampled: int
    n_draws: int
    seed: int
    null: NullRobustness | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "single": self.single.to_dict(),
            "halves": self.halves.to_dict(),
            "relative_increase": self.relative_increase,
            "n_structures": self.n_structures,
            "n_sampled": self.n_sampled,
            "n_draws": self.n_draws,
            "seed": self.seed,
            "null": None if self.null is None else self.null.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict."""
        null = data.get("null")
        return cls(
            single=Spread.from_dict(data["single"]),
            halves=Spread.from_dict(data["halves"]),
            relative_increase=_nan(data["relative_increase"]),
            n_structures=data["n_structures"],
            n_sampled=data["n_sampled"],
            n_draws=data["n_draws"],
            seed=data["seed"],
            null=None if null is None else NullRobustness.from_dict(null),
        )


@dataclass(frozen=True, slots=True)
class VarianceShares:
    """Main-effect sums of squares of regard per factor (group, structure, template, seed) and their shares.

    ``ss`` and ``share`` hold every factor and ``residual``; ``n_levels`` the levels present per factor.
    """

    total_ss: float
    ss: Mapping[str, float]
    share: Mapping[str, float]
    n_levels: Mapping[str, int]
    n: int

    def __post_init__(self) -> None:
        for name in ("ss", "share", "n_levels"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "total_ss": self.total_ss,
            "ss": dict(self.ss),
            "share": dict(self.share),
            "n_levels": dict(self.n_levels),
            "n": self.n,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict."""
        return cls(total_ss=data["total_ss"], ss=data["ss"], share=data["share"], n_levels=data["n_levels"], n=data["n"])


@dataclass(frozen=True, slots=True)
class AnalysisConfig:
    """The settings an analysis ran with (``baseline``: the structure of the original prompts)."""

    include_other: bool
    smoothing: float
    n_best: int
    seed: int
    n_sampled: int
    n_draws: int
    baseline: str
    groups_source: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "include_other": self.include_other,
            "smoothing": self.smoothing,
            "n_best": self.n_best,
            "seed": self.seed,
            "n_sampled": self.n_sampled,
            "n_draws": self.n_draws,
            "baseline": self.baseline,
            "groups_source": self.groups_source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict."""
        return cls(**{key: data[key] for key in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True)
class AnalysisCounts:
    """Rows analysed: all, polar (-1/0/1), "other", structures, and rows of groups left out."""

    n_rows: int
    n_polar: int
    n_other: int
    n_structures: int
    has_baseline: bool
    n_rows_ignored: int
    ignored_groups: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "n_rows": self.n_rows,
            "n_polar": self.n_polar,
            "n_other": self.n_other,
            "n_structures": self.n_structures,
            "has_baseline": self.has_baseline,
            "n_rows_ignored": self.n_rows_ignored,
            "ignored_groups": list(self.ignored_groups),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict."""
        return cls(**{**{key: data[key] for key in cls.__dataclass_fields__}, "ignored_groups": tuple(data["ignored_groups"])})


@dataclass(frozen=True, slots=True)
class InferenceSettings:
    """How the intervals and reversal tests were computed (``alpha``: the level of the tests)."""

    n_resamples: int
    resampled: tuple[str, ...]
    alpha: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"n_resamples": self.n_resamples, "resampled": list(self.resampled), "alpha": self.alpha, "method": self.method}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of a :meth:`to_dict` dict."""
        return cls(
            n_resamples=data["n_resamples"], resampled=tuple(data["resampled"]), alpha=data["alpha"], method=data["method"]
        )


@dataclass(frozen=True, slots=True)
class PairCertificate:
    """The regard scorer on one group pair's neutral probes: mean regard of each side, the gap, its p, flagged."""

    a: str
    b: str
    regard_a: float
    regard_b: float
    gap: float
    p: float | None
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "a": self.a,
            "b": self.b,
            "regard_a": self.regard_a,
            "regard_b": self.regard_b,
            "gap": self.gap,
            "p": self.p,
            "flagged": self.flagged,
        }


@dataclass(frozen=True, slots=True)
class RegardCertificate:
    """The regard scorer's certificate: per pair its gap on neutral probes, and the pairs it flags.

    A pair is flagged when the scorer's gap on text that says nothing about the group exceeds
    ``margin`` or its paired p is below the analysis' α.
    """

    n_probes: int
    margin: float
    pairs: Mapping[str, PairCertificate]

    def __post_init__(self) -> None:
        object.__setattr__(self, "pairs", MappingProxyType(dict(self.pairs)))

    @property
    def flagged(self) -> tuple[str, ...]:
        """The pairs flagged, sorted by name."""
        return tuple(sorted(name for name, pair in self.pairs.items() if pair.flagged))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``scorer_check`` entry of ``results.json``)."""
        return {
            "n_probes": self.n_probes,
            "margin": self.margin,
            "pairs": {name: pair.to_dict() for name, pair in self.pairs.items()},
            "flagged": list(self.flagged),
        }


def _nan(value: float | None) -> float:
    """A float field written as null (NaN in strict JSON) read back as NaN."""
    return float("nan") if value is None else float(value)
