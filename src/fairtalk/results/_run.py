"""A whole audit run: per axis the result, coverage, generation counts, pairs and responses; and its folder names."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from fairtalk._codec import OMIT_DEFAULT, SKIP, Codec
from fairtalk._responses import ResponseSet
from fairtalk.records import Coverage, Pair, PairsCheck
from fairtalk.results._audit import AuditResult, verdict_counts
from fairtalk.results._protocol import Result, Verdict
from fairtalk.results._schema import ResultKind
from fairtalk.results._similarity_test import SimilarityResult

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["RESERVED_NAMES", "AuditRun", "AxisRun", "GenerationSummary", "axis_folder", "check_axis_folders"]


@dataclass(frozen=True, slots=True)
class GenerationSummary(Codec):
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
    retried because that budget was spent (each then failed alone); ``n_retries_waited`` how many
    requests the server could not take (a 429, a 503, a refused connection) were sent again on
    ``retry_seconds``, the time budget of such failures, which draws nothing on ``retry_budget``;
    all four are None for a model without a retry budget (every adapter but ``openai:``). ``tuning`` is what an
    ``openai:`` preflight measured of the server's latency and the ``timeout`` and
    ``max_concurrency`` chosen from it (None when nothing was measured; never part of the model's key).
    ``served_models`` counts the answers by the model name the server's replies gave (``openai:``;
    None for a model that does not say, or a server that named none), those served by the run store
    included (it keeps each answer's name), and ``n_served_unknown`` the answers whose name is not
    known (the server named none, or the store holds them from a fairtalk that did not keep it; None
    for a model that does not say); a name other than the one asked for is warned of.
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
    n_retries_waited: int | None = None
    tuning: Mapping[str, Any] | None = None
    served_models: Mapping[str, int] | None = None
    n_served_unknown: int | None = None


def axis_folder(axis: str) -> str:
    """The folder of an axis inside an audit's output folder (the axis name, safe characters only).

    Two axes can map to one folder (``foo+bar`` and ``foo_bar``); :func:`check_axis_folders`
    refuses that, and names the run's own files would take.
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "_", axis).strip("._") or "axis"


RESERVED_NAMES = ("index.html", "run.json", "store.sqlite", "store.sqlite-wal", "store.sqlite-shm")
"""Names at the top of an audit's output folder that an axis folder may not take."""
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
class AxisRun(Codec):
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
    pairs: Sequence[Pair] = field(default=(), repr=False, compare=False, metadata=SKIP)
    responses: ResponseSet | None = field(default=None, repr=False, compare=False, metadata=SKIP)
    similarity: SimilarityResult | None = None
    pairs_check: PairsCheck | None = None

    #: Its JSON: the fields but the pairs and responses (``pairs.jsonl``, ``responses.jsonl``), its folder second.
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "axis",
        "folder",
        "result",
        "coverage",
        "generation",
        "timings",
        "similarity",
        "pairs_check",
    )

    @property
    def folder(self) -> str:
        """The axis' folder inside the audit's output folder."""
        return axis_folder(self.axis)

    def __repr__(self) -> str:
        """One line: the axis, its result's line, and its answers generated, served from the store and failed.

        The fields stay whole on the object (``coverage``, ``generation``, ``pairs_check``, ``to_dict()``).
        """
        made = self.generation
        return (
            f"AxisRun(axis={self.axis!r}, result={self.result!r}, generated={made.n_generated}, "
            f"cached={made.n_cached}, errors={made.n_errors})"
        )


@dataclass(frozen=True, slots=True)
class AuditRun(Codec, Result[tuple[str, str]]):
    """A whole audit: one :class:`AxisRun` per axis, in the order audited. Built once.

    ``results`` maps axis -> AuditResult; ``n_cached``/``n_generated``/``n_errors`` sum
    the axes' generation counts; ``timings`` sums each stage over the axes. ``run_id``
    identifies the run in every file its report writes, so outputs of two runs are never
    taken for one. ``config`` is the run's ``AuditConfig.to_dict()``: every option it ran with.
    ``model_target`` is what a ``python:`` model's target named where the run loaded it, its file's
    real path and the function (``/home/me/bot.py:reply``; :attr:`~fairtalk.models.Responder.resolved_target`),
    which tells two runs of one model spelled two ways from two files of one relative name however
    far apart they ran (None, and not written: another model, or a run recorded before it was kept).

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
    model_target: str | None = field(default=None, metadata=OMIT_DEFAULT)

    _file_kind: ClassVar[ResultKind] = "run"
    #: ``run.json``: the fields and the sums over the axes (recomputed when read, not read).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "run_id",
        "model",
        "model_target",
        "corpus",
        "split",
        "seed",
        "settings",
        "store",
        "n_cached",
        "n_generated",
        "n_errors",
        "timings",
        "config",
        "axes",
    )

    def to_frame(self) -> pd.DataFrame:
        """One row per (axis, measure): every axis's ``AuditResult.to_frame()`` stacked, indexed by both."""
        import pandas as pd

        frames = {axis: result.to_frame() for axis, result in self.results.items()}
        return pd.concat(frames, names=["axis", "measure"]) if frames else pd.DataFrame()

    def __repr__(self) -> str:
        """One line: the model, corpus and run id, each axis' pairs, how many keys got each verdict, those detected.

        The fields stay whole on the run (``to_dict()``, ``to_frame()``, :attr:`results`).
        """
        n_pairs = {axis: result.n_pairs for axis, result in self.results.items()}
        return (
            f"AuditRun(model={self.model!r}, corpus={self.corpus!r}, run_id={self.run_id!r}, n_pairs={n_pairs}, "
            f"verdicts={verdict_counts(self.verdicts.values())}, detected={self.detected()!r})"
        )

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
