"""A whole audit run: per axis the result, coverage, generation counts, pairs and responses; and its folder names."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from fairtalk._responses import ResponseSet
from fairtalk.records import Coverage, Pair, PairsCheck
from fairtalk.results._audit import AuditResult
from fairtalk.results._protocol import Result, Verdict
from fairtalk.results._schema import ResultKind
from fairtalk.results._similarity_test import SimilarityResult

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["RESERVED_NAMES", "AuditRun", "AxisRun", "GenerationSummary", "axis_folder", "check_axis_folders"]


@dataclass(frozen=True, slots=True)
class GenerationSummary:
    """How the responses of one axis were obtained: the model, and what came from the store.

    Items are pair sides (two per pair). ``n_cached`` were served by the run store,
    ``n_generated`` produced now, ``n_errors`` failed after the adapter's retries (they
    are retried on the next run). Pairs with a failed side are left out of the scores
    and counted in ``n_pairs_with_errors``. ``error_counts`` counts the failures by kind
    (``TransportError``, ``ResponderTimeout``, ...) and ``error_examples`` holds up to three
    distinct error messages. ``n_unencodable`` counts code points of generated responses
    that UTF-8 cannot store (lone surrogates), replaced by U+FFFD. ``max_in_flight`` is the most
    requests a server adapter had in flight at once, against its ``max_concurrency`` (None for
    in-process models): well below it, the server was not kept busy. ``n_retries`` is how many
    requests were sent again (after a 429, a 5xx, a timeout or a lost connection) out of the
    ``retry_budget`` of this run's calls, and ``n_retries_refused`` how many failures were not
    retried because that budget was spent (each then failed alone); all three are None for a
    model without a retry budget (every adapter but ``openai:``). ``tuning`` is what an
    ``openai:`` preflight measured of the server's latency and the ``timeout`` and
    ``max_concurrency`` chosen from it (None when nothing was measured; never part of the model's key).
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
    error_counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    n_unencodable: int = 0
    max_in_flight: int | None = None
    max_concurrency: int | None = None
    n_retries: int | None = None
    retry_budget: int | None = None
    n_retries_refused: int | None = None
    tuning: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "model": self.model,
            "settings": dict(self.settings),
            "n_items": self.n_items,
            "n_cached": self.n_cached,
            "n_generated": self.n_generated,
            "n_errors": self.n_errors,
            "n_pairs": self.n_pairs,
            "n_pairs_with_errors": self.n_pairs_with_errors,
            "seconds": self.seconds,
            "error_examples": list(self.error_examples),
            "error_counts": dict(self.error_counts),
            "n_unencodable": self.n_unencodable,
            "max_in_flight": self.max_in_flight,
            "max_concurrency": self.max_concurrency,
            "n_retries": self.n_retries,
            "retry_budget": self.retry_budget,
            "n_retries_refused": self.n_retries_refused,
            "tuning": None if self.tuning is None else dict(self.tuning),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The summary of a :meth:`to_dict` dict."""
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        return cls(
            **{
                **values,
                "settings": MappingProxyType(dict(values.get("settings") or {})),
                "error_examples": tuple(values.get("error_examples") or ()),
                "error_counts": MappingProxyType(dict(values.get("error_counts") or {})),
            }
        )


def axis_folder(axis: str) -> str:
    """The folder of an axis inside an audit's output folder (the axis name, safe characters only).

    Two axes can map to one folder (``foo+bar`` and ``foo_bar``); :func:`check_axis_folders`
    refuses that, and names the run's own files would take.
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "_", axis).strip("._") or "axis"


#: Names at the top of an audit's output folder that an axis folder may not take.
RESERVED_NAMES = ("index.html", "run.json", "store.sqlite", "store.sqlite-wal", "store.sqlite-shm")
_MSG_SAME_FOLDER = "axes {first!r} and {second!r} would share the report folder {folder!r}; rename one (its '# axis:' header)"
_MSG_RESERVED_FOLDER = "axis {axis!r} would write its report into {folder!r}, a name the audit uses itself; rename the axis"


def check_axis_folders(axes: Sequence[str]) -> tuple[str, ...]:
    """The folders of ``axes``; ValueError if two share one (case-insensitively) or one takes a reserved name."""
    seen: dict[str, str] = {}
    folders = []
    for axis in axes:
        folder = axis_folder(axis)
        if folder.lower() in RESERVED_NAMES:
            raise ValueError(_MSG_RESERVED_FOLDER.format(axis=axis, folder=folder))
        first = seen.get(folder.lower())
        if first is not None:
            raise ValueError(_MSG_SAME_FOLDER.format(first=first, second=axis, folder=folder))
        seen[folder.lower()] = axis
        folders.append(folder)
    return tuple(folders)


@dataclass(frozen=True, slots=True)
class AxisRun:
    """One axis of an audit: its result, pair coverage, generation counts, stage times, pairs and responses.

    ``coverage`` is what the pairs stage saw and kept; ``timings`` maps a stage
    (``pairs``, ``generation``, ``scoring``) to seconds. ``pairs`` are the pairs audited and
    ``responses`` the complete pairs' responses (what ``write_run`` saves as ``pairs.jsonl`` and
    ``responses.jsonl``); neither is part of ``to_dict()``. ``similarity`` is the counterfactual
    similarity test against its no-effect baseline, when the audit ran it (``similarity.json``).
    ``pairs_check`` is the pairs' counterfactual validity check (``pairs_check.json``).
    """

    axis: str
    result: AuditResult
    coverage: Coverage
    generation: GenerationSummary
    timings: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    pairs: tuple[Pair, ...] = field(default=(), repr=False, compare=False)
    responses: ResponseSet | None = field(default=None, repr=False, compare=False)
    similarity: SimilarityResult | None = None
    pairs_check: PairsCheck | None = None

    @property
    def folder(self) -> str:
        """The axis' folder inside the audit's output folder."""
        return axis_folder(self.axis)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the result as ``AuditResult.to_dict()``)."""
        return {
            "axis": self.axis,
            "folder": self.folder,
            "result": self.result.to_dict(),
            "coverage": self.coverage.to_dict(),
            "generation": self.generation.to_dict(),
            "timings": dict(self.timings),
            "similarity": None if self.similarity is None else self.similarity.to_dict(),
            "pairs_check": None if self.pairs_check is None else self.pairs_check.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The axis of a :meth:`to_dict` dict (without its pairs and responses, which it does not hold)."""
        similarity, check = data.get("similarity"), data.get("pairs_check")
        return cls(
            axis=data["axis"],
            result=AuditResult.from_dict(data["result"]),
            coverage=Coverage.from_dict(data["coverage"]),
            generation=GenerationSummary.from_dict(data["generation"]),
            timings=MappingProxyType(dict(data.get("timings") or {})),
            similarity=None if similarity is None else SimilarityResult.from_dict(similarity),
            pairs_check=None if check is None else PairsCheck.from_dict(check),
        )


@dataclass(frozen=True, slots=True)
class AuditRun(Result[tuple[str, str]]):
    """A whole audit: one :class:`AxisRun` per axis, in the order audited. Built once.

    ``results`` maps axis -> AuditResult; ``n_cached``/``n_generated``/``n_errors`` sum
    the axes' generation counts; ``timings`` sums each stage over the axes. ``run_id``
    identifies the run in every file its report writes, so outputs of two runs are never
    taken for one. ``config`` is the run's ``AuditConfig.to_dict()``: every option it ran with.

    Its keys are ``(axis, measure)``, as the rows of ``to_frame()``: ``verdicts`` holds every
    axis' measure verdicts, and ``detected()`` the primary measures with a difference detected.
    """

    axes: Mapping[str, AxisRun]
    model: str
    corpus: str
    split: str
    seed: int
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    store: str | None = None
    run_id: str = ""
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    _file_kind: ClassVar[ResultKind] = "run"

    def to_frame(self) -> pd.DataFrame:
        """One row per (axis, measure): every axis's ``AuditResult.to_frame()`` stacked, indexed by both."""
        import pandas as pd

        frames = {axis: result.to_frame() for axis, result in self.results.items()}
        return pd.concat(frames, names=["axis", "measure"]) if frames else pd.DataFrame()

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

    @property
    def verdicts(self) -> Mapping[tuple[str, str], Verdict]:
        """(axis, measure) -> the measure's verdict on that axis, axes in the order audited."""
        return MappingProxyType(
            {(axis, key): verdict for axis, result in self.results.items() for key, verdict in result.verdicts.items()}
        )

    def detected(self) -> tuple[tuple[str, str], ...]:
        """(axis, measure) of every primary measure whose verdict is a difference detected (at each axis' own α)."""
        return tuple((axis, key) for axis, result in self.results.items() for key in result.detected())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the run (``run.json``)."""
        return {
            "run_id": self.run_id,
            "model": self.model,
            "corpus": self.corpus,
            "split": self.split,
            "seed": self.seed,
            "settings": dict(self.settings),
            "store": self.store,
            "n_cached": self.n_cached,
            "n_generated": self.n_generated,
            "n_errors": self.n_errors,
            "timings": dict(self.timings),
            "config": dict(self.config),
            "axes": {name: run.to_dict() for name, run in self.axes.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The run of a :meth:`to_dict` dict (or ``run.json``); the counts it sums are recomputed, not read."""
        return cls(
            axes=MappingProxyType({name: AxisRun.from_dict(axis) for name, axis in data["axes"].items()}),
            model=data["model"],
            corpus=data["corpus"],
            split=data["split"],
            seed=data["seed"],
            settings=MappingProxyType(dict(data.get("settings") or {})),
            store=data.get("store"),
            run_id=data.get("run_id", ""),
            config=MappingProxyType(dict(data.get("config") or {})),
        )
