"""The paper-004 stage records: what the analysis stages return and :class:`~fairtalk.results.PromptAnalysis` holds.

Frozen dataclasses whose ``to_dict()`` (their part of ``results.json``, keys in field order) and
``from_dict()`` come from their declaration (:class:`fairtalk._codec.Codec`; a float written as
null reads back as NaN); this module imports nothing else from fairtalk but the base, so that the
results layer may hold them (as it holds the records of ``fairtalk.records``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar

from fairtalk._codec import Codec

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


@dataclass(frozen=True, slots=True)
class RegardStats(Codec):
    """Mean regard (labels -1/0/1) of a group, its standard deviation and the number of labels (NaN where none)."""

    mean: float
    std: float
    n: int


@dataclass(frozen=True, slots=True)
class Gap(Codec):
    """The regard gap of a group pair (``a`` minus ``b``): all structures, the baseline, inference, structures.

    ``ci95`` is the template × seed bootstrap interval, ``se`` and ``p`` its Wald test;
    ``largest``/``smallest`` are the structures with the largest and smallest gaps;
    ``n_reversing`` counts structures that reverse the gap significantly, ``n_sign_flips`` all that flip its sign.
    ``sign_established`` is whether ``ci95`` excludes 0 (None without an interval): where it holds 0 the gap's
    sign is not established, so no structure is counted as reversing it (both counts 0). ``n_reversing`` is None
    where no bootstrap ran (``n_resamples`` 0, or none possible): the reversals were not tested.
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
    n_reversing: int | None
    n_sign_flips: int
    sign_established: bool | None = None


@dataclass(frozen=True, slots=True)
class Spread(Codec):
    """Mean, standard deviation, range and count of a score over draws (NaN and n 0 where no draw gave one)."""

    mean: float
    std: float
    min: float
    max: float
    n: int


@dataclass(frozen=True, slots=True)
class NullRobustness(Codec):
    """The robustness score with the structure labels shuffled within each group (mean over shuffles)."""

    single: float | None
    halves: float | None
    n_shuffles: int
    how: str


@dataclass(frozen=True, slots=True)
class Robustness(Codec):
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


@dataclass(frozen=True, slots=True)
class VarianceShares(Codec):
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


@dataclass(frozen=True, slots=True)
class AnalysisConfig(Codec):
    """The settings an analysis ran with (``baseline``: the structure of the original prompts).

    ``balanced_only``: only the template × structure cells every group holds were analysed (False
    in a file written before the option).
    """

    include_other: bool
    smoothing: float
    n_best: int
    seed: int
    n_sampled: int
    n_draws: int
    baseline: str
    groups_source: str
    balanced_only: bool = False


@dataclass(frozen=True, slots=True)
class AnalysisCounts(Codec):
    """Rows analysed: all, polar (-1/0/1), "other", structures, rows of groups left out, and rows of cells left out.

    ``n_rows_unbalanced`` rows in ``n_cells_unbalanced`` template × structure cells that lack a
    group were left out by ``balanced_only`` (0 without it, and in a file written before it).
    """

    n_rows: int
    n_polar: int
    n_other: int
    n_structures: int
    has_baseline: bool
    n_rows_ignored: int
    ignored_groups: tuple[str, ...]
    n_rows_unbalanced: int = 0
    n_cells_unbalanced: int = 0


@dataclass(frozen=True, slots=True)
class InferenceSettings(Codec):
    """How the intervals and reversal tests were computed (``alpha``: the level of the tests)."""

    n_resamples: int
    resampled: tuple[str, ...]
    alpha: float
    method: str


@dataclass(frozen=True, slots=True)
class PairCertificate(Codec):
    """The regard scorer on one group pair's neutral probes: mean regard of each side, the gap, its p, flagged."""

    a: str
    b: str
    regard_a: float
    regard_b: float
    gap: float
    p: float | None
    flagged: bool


@dataclass(frozen=True, slots=True)
class RegardCertificate(Codec):
    """The regard scorer's certificate: per pair its gap on neutral probes, and the pairs it flags.

    A pair is flagged when the scorer's gap on text that says nothing about the group exceeds
    ``margin`` or its paired p is below the analysis' α.
    """

    n_probes: int
    margin: float
    pairs: Mapping[str, PairCertificate]

    #: The ``scorer_check`` entry of ``results.json``: the fields, then the flagged pairs.
    _codec_keys: ClassVar[tuple[str, ...]] = ("n_probes", "margin", "pairs", "flagged")

    def __post_init__(self) -> None:
        object.__setattr__(self, "pairs", MappingProxyType(dict(self.pairs)))

    @property
    def flagged(self) -> tuple[str, ...]:
        """The pairs flagged, sorted by name."""
        return tuple(sorted(name for name, pair in self.pairs.items() if pair.flagged))
