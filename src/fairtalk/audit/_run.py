"""``audit()``: corpus -> pairs -> responses -> scores and stats, per axis, through one cached model."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fairtalk.audit._family import CORRECTION_SCOPES, Scored, adjust_family, finalize
from fairtalk.audit._generate import (
    Progress,
    ProgressCallback,
    cached_model,
    generate,
)
from fairtalk.audit._score import _validate, prepare_scores
from fairtalk.corpora import read_corpus
from fairtalk.counterfactual import Swapper
from fairtalk.errors import InputError, ResponderError, SpecError
from fairtalk.lexicons import Lexicon, load_lexicon
from fairtalk.measures import CorpusMeasure, Measure
from fairtalk.models import DecodingSettings, Responder
from fairtalk.pairs import build_pairs
from fairtalk.records import Pair
from fairtalk.report import check_run_folder, write_run
from fairtalk.results import AuditRun, AxisRun, GenerationSummary
from fairtalk.store import CachingResponder, RunStore

__all__ = ["DEFAULT_AXES", "DEFAULT_CORPUS", "DEFAULT_N_PAIRS", "audit"]

DEFAULT_CORPUS = "builtin:chitchat"
DEFAULT_AXES = ("gender", "race")
#: Pairs per axis by default: a bare audit with the built-in retrieval model takes a few minutes on 2 cores.
DEFAULT_N_PAIRS = 2000
#: ``score()``'s options with their defaults, for a caller that sets only a few (reproduce_debias).
SCORE_DEFAULTS: dict[str, Any] = {
    "measures": None, "seed": 0, "alpha": 0.05, "correction": "holm", "mask_groups": False, "drop_empty": False,
    "distinct": "paper", "offense": "profanity_check", "offense_threshold": 0.5, "sentiment_threshold": 0.8,
    "n_resamples": 2000, "n_divergent": 10, "binary_test": "exact", "count_test": "mean", "clusters": True,
    "margins": None, "primary": None, "power": 0.8,
}  # fmt: skip
#: Corpora whose held-out split is audited by default (so audit contexts are never training contexts).
HELDOUT_BY_DEFAULT = ("builtin:chitchat",)

_MSG_NO_AXES = "give at least one axis"
_MSG_DUPLICATE_AXIS = "axis {axis!r} is given twice"
_MSG_AXIS_TYPE = "axes must be axis names, lexicon paths or Lexicon objects, got {type}"
_MSG_N_PAIRS = "n_pairs must be a positive int or None, got {value!r}"
_MSG_MAX_ERRORS = "max_errors must be 0 or more, or None, got {value!r}"
_MSG_SCOPE = "unknown correction scope {given!r}"
_MSG_TOO_FEW_PAIRS = (
    "axis {axis}: {corpus} gave {n} pair(s) ({n_read} contexts read, {n_matched} mention a group); need at least 2"
)
_MSG_LOST_TO_ERRORS = (
    "axis {axis}: {n_complete} complete pair(s) left of {n_pairs}, need at least 2: the model failed on "
    "{n_errors} pair side(s) ({counts}); first error: {first}"
)


def _lexicons(axes: str | os.PathLike[str] | Lexicon | Sequence[str | os.PathLike[str] | Lexicon]) -> list[Lexicon]:
    """Load each axis once; ``"gender,race"`` is split at commas."""
    if isinstance(axes, str):
        items: list[Any] = [a.strip() for a in axes.split(",") if a.strip()]
    elif isinstance(axes, (Lexicon, os.PathLike)):
        items = [axes]
    else:
        items = list(axes)
    if not items:
        raise SpecError(_MSG_NO_AXES)
    lexicons = []
    for item in items:
        if isinstance(item, Lexicon):
            lexicons.append(item)
        elif isinstance(item, (str, os.PathLike)):
            lexicons.append(load_lexicon(item))
        else:
            raise SpecError(_MSG_AXIS_TYPE.format(type=type(item).__name__))
    seen: set[str] = set()
    for lexicon in lexicons:
        if lexicon.axis in seen:
            raise SpecError(_MSG_DUPLICATE_AXIS.format(axis=lexicon.axis))
        seen.add(lexicon.axis)
    return lexicons


def audit(
    *,
    corpus: str | os.PathLike[str] = DEFAULT_CORPUS,
    axes: str | Lexicon | Sequence[str | os.PathLike[str] | Lexicon] = DEFAULT_AXES,
    model: str | Responder | None = None,
    n_pairs: int | None = DEFAULT_N_PAIRS,
    seed: int = 0,
    store: str | os.PathLike[str] | RunStore | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    settings: DecodingSettings | None = None,
    max_errors: int | None = None,
    split: str | None = None,
    mixed: str = "drop",
    batch_size: int = 64,
    progress: bool | ProgressCallback | None = False,
    measures: Sequence[str | Measure | CorpusMeasure] | None = None,
    alpha: float = 0.05,
    correction: str = "holm",
    mask_groups: bool = False,
    drop_empty: bool = False,
    distinct: str = "paper",
    offense: str = "profanity_check",
    offense_threshold: float = 0.5,
    sentiment_threshold: float = 0.8,
    n_resamples: int = 2000,
    n_divergent: int = 10,
    model_args: Mapping[str, object] | None = None,
    model_version: str | None = None,
    binary_test: str = "exact",
    count_test: str = "mean",
    clusters: bool = True,
    margins: Mapping[str, float] | None = None,
    primary: Sequence[str] | None = None,
    power: float = 0.8,
    correction_scope: str = "axis",
) -> AuditRun:
    """Audit a dialogue model end to end: for each axis, pairs -> responses -> scores -> stats.

    Parameters
    ----------
    corpus : str or path
        Where the contexts come from (any :func:`fairtalk.read_corpus` spec).
    axes : str, Lexicon or sequence
        Axis names (``"gender"``, ``"race"``; a string is split at commas), lexicon files or
        loaded lexicons. Each gets its own pairs, responses and result.
    model : str or Responder, optional
        A model spec or responder; None takes ``builtin:minilm-retrieval`` when its packages are
        installed, else ``builtin:retrieval``, else ``builtin:smollm2``, else raises FairtalkError.
    n_pairs : int or None
        A seeded uniform sample of this many pairs per axis (None: every pair).
    seed : int
        Seeds the pair sample, the swapper's many-to-many choices, the per-item generation
        seeds (from ``(seed, pair id, side)``) and the bootstrap.
    store : path or RunStore, optional
        The SQLite run store; re-running the same audit with it reuses every stored response
        and resumes an interrupted run. None keeps responses in memory only.
    out_dir : path, optional
        When given, the whole run is written there at the end, as by
        :func:`fairtalk.report.write_run` (per axis the report, ``pairs.jsonl`` and
        ``responses.jsonl``; the index and ``run.json``), swapped in whole. Before any work, the
        folder is checked: two axes may not share a folder, and no input (corpus, store, the
        model's files) may lie inside an entry the run replaces.
    settings : DecodingSettings, optional
        Greedy, ``max_new_tokens=40`` by default.
    max_errors : int, optional
        Abort (ResponderError) once more pair sides than this have failed over the run;
        otherwise failures are counted, stored, and retried by the next run.
    split : str, optional
        Corpus split; None means ``"heldout"`` for ``builtin:chitchat`` (never the reference
        models' training contexts) and ``"all"`` otherwise.
    mixed, batch_size
        Passed to :func:`fairtalk.build_pairs` and the caching wrapper.
    progress : bool or callable
        True shows progress bars with ETA on stderr; a callable gets ``(label, n_done, n_total)``.
    measures, alpha, correction, mask_groups, drop_empty, distinct, offense, offense_threshold,
    sentiment_threshold, n_resamples, n_divergent, binary_test, count_test, clusters, margins, primary, power
        Passed to :func:`fairtalk.score`.
    correction_scope : {"axis", "run"}
        Correct each axis' family on its own (the default), or all axes' families together
        (the family-wise error then holds over the whole run).
    model_args : mapping, optional
        Options for the model spec's adapter, as ``?key=value`` in the spec would give them.
    model_version : str, optional
        A tag that becomes part of the model's fingerprint, the run store's key (see
        :func:`fairtalk.respond`).

    Returns
    -------
    AuditRun
        Per axis: the AuditResult (its ``input_summary`` counts ``n_errors`` and
        ``n_pairs_with_errors``; its manifest gains an ``audit`` entry with the corpus, model
        fingerprint, decoding settings and pair coverage), the coverage, generation counts
        and stage times.

    Raises
    ------
    FairtalkError
        A bad option, corpus, axis, model spec or output folder (before any generation);
        fewer than two pairs for an axis; ResponderError past ``max_errors`` or when errors
        leave fewer than two complete pairs (with the errors counted by kind);
        ResponderAborted when the model stopped the run; OutputError when the report cannot
        be written (the store keeps every answer).

    Examples
    --------
    >>> run = audit(corpus=corpus_path, axes="gender", model="builtin:echo")  # doctest: +SKIP
    >>> run.results["gender"].biased()  # doctest: +SKIP
    ()
    """
    _validate(correction, alpha, n_resamples, n_divergent, seed)
    if correction_scope not in CORRECTION_SCOPES:
        raise SpecError(_MSG_SCOPE.format(given=correction_scope), choices=CORRECTION_SCOPES, given=correction_scope)
    if n_pairs is not None and (isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1):
        raise SpecError(_MSG_N_PAIRS.format(value=n_pairs))
    if max_errors is not None and (isinstance(max_errors, bool) or not isinstance(max_errors, int) or max_errors < 0):
        raise SpecError(_MSG_MAX_ERRORS.format(value=max_errors))
    corpus_spec = os.fspath(corpus)
    if split is None:
        split = "heldout" if corpus_spec in HELDOUT_BY_DEFAULT else "all"
    lexicons = _lexicons(axes)
    contexts = read_corpus(corpus_spec, split=split)
    if out_dir is not None:
        check_run_folder(out_dir, [lexicon.axis for lexicon in lexicons], _inputs(contexts.path, store, None, lexicons))
    settings = DecodingSettings() if settings is None else settings
    options = {"measures": measures, "seed": seed, "alpha": alpha, "correction": correction,
               "mask_groups": mask_groups, "drop_empty": drop_empty, "distinct": distinct, "offense": offense,
               "offense_threshold": offense_threshold, "sentiment_threshold": sentiment_threshold,
               "n_resamples": n_resamples, "n_divergent": n_divergent, "binary_test": binary_test,
               "count_test": count_test, "clusters": clusters, "margins": margins, "primary": primary,
               "power": power}  # fmt: skip
    run_id = new_run_id()
    reporter = Progress(progress)
    works: list[AxisWork] = []
    try:
        with cached_model(model, store, batch_size=batch_size, max_errors=max_errors, model_args=model_args,
                          model_version=model_version) as cached:  # fmt: skip
            if out_dir is not None:
                check_run_folder(out_dir, [lexicon.axis for lexicon in lexicons],
                                 _inputs(contexts.path, store, cached, lexicons))  # fmt: skip
            model_fingerprint = cached.fingerprint
            for lexicon in lexicons:
                works.append(audit_axis(
                    lexicon, cached, settings, contexts=contexts, corpus=corpus_spec, split=split, n_pairs=n_pairs,
                    mixed=mixed, reporter=reporter, options=options, run_id=run_id,
                ))  # fmt: skip
            store_path = str(cached.store.path)
    finally:
        reporter.close()
    runs = finish_axes(works, correction=correction, scope=correction_scope)
    run = AuditRun(
        axes=MappingProxyType(runs),
        model=model_fingerprint,
        corpus=corpus_spec,
        split=split,
        seed=seed,
        settings=MappingProxyType(settings.to_dict()),
        store=None if store is None else store_path,
        run_id=run_id,
    )
    if out_dir is not None:
        write_run(run, out_dir)
    return run


def new_run_id() -> str:
    """A run's id: the UTC time and a random suffix (``20261122T134501Z-3fa9c2``)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def _inputs(corpus: Any, store: Any, cached: CachingResponder | None, lexicons: Sequence[Lexicon] = ()) -> dict[str, object]:
    """What the run reads, by what it is: the corpus file, the store, the model's files, the lexicon files."""
    found: dict[str, object] = {"the corpus": corpus}
    for lexicon in lexicons:
        if lexicon.variant == "custom" and lexicon.source and Path(lexicon.source).is_file():
            found[f"the lexicon file of {lexicon.axis}"] = lexicon.source
    if isinstance(store, (str, os.PathLike)):
        found["the run store"] = store
    elif isinstance(store, RunStore) and str(store.path) != ":memory:":
        found["the run store"] = store.path
    for i, path in enumerate(() if cached is None else cached.input_paths):
        found[f"the model file #{i + 1}" if i else "the model file"] = path
    return found


@dataclass
class AxisWork:
    """One axis audited up to its correction: the scores, and what its AxisRun records besides the result."""

    axis: str
    scored: Scored
    coverage: dict[str, Any]
    generation: GenerationSummary
    timings: dict[str, float]
    pairs: tuple[Pair, ...]
    manifest: dict[str, Any]


def audit_axis(
    lexicon: Lexicon,
    cached: CachingResponder,
    settings: DecodingSettings,
    *,
    contexts: Any = None,
    pairs: Sequence[Pair] | None = None,
    coverage: Mapping[str, Any] | None = None,
    corpus: str,
    split: str,
    n_pairs: int | None,
    mixed: str,
    reporter: Progress,
    options: dict[str, Any],
    run_id: str = "",
    extra_manifest: Mapping[str, Any] | None = None,
) -> AxisWork:
    """One axis: pairs (built from ``contexts``, or the ``pairs`` given with their ``coverage``), responses, scores."""
    axis, seed = lexicon.axis, options["seed"]
    timings: dict[str, float] = {}
    started = time.perf_counter()
    if pairs is None:
        reporter.start(f"{axis}: pairs", 0)
        pair_set = build_pairs(contexts, Swapper(lexicon, seed=seed), mixed=mixed, limit=n_pairs, seed=seed)  # type: ignore[arg-type]
        pairs = list(pair_set)
        coverage = pair_set.coverage.to_dict()
        reporter.finish()
        timings["pairs"] = time.perf_counter() - started
        if len(pairs) < 2:
            raise InputError(_MSG_TOO_FEW_PAIRS.format(axis=axis, corpus=corpus, n=len(pairs), n_read=coverage["n_read"],
                                                       n_matched=coverage["n_matched"]))  # fmt: skip
    coverage = dict(coverage or {})

    generation = generate(cached, pairs, settings, seed=seed, progress=reporter, label=f"{axis}: responses")
    timings["generation"] = generation.summary.seconds
    if generation.responses.n_pairs < 2 and generation.errors:
        raise ResponderError(_lost_to_errors(axis, generation.summary, generation.responses.n_pairs))

    started = time.perf_counter()
    reporter.start(f"{axis}: scoring", 0)
    scored = prepare_scores(generation.responses, axis=lexicon, **options)
    reporter.finish()
    timings["scoring"] = time.perf_counter() - started
    manifest = {
        "run_id": run_id, "corpus": corpus, "split": split, "model": cached.fingerprint, "decoding": settings.to_dict(),
        "seed": seed, "n_pairs_requested": n_pairs, "mixed": mixed, "coverage": coverage, **(extra_manifest or {}),
    }  # fmt: skip
    return AxisWork(axis, scored, coverage, generation.summary, timings, tuple(pairs), manifest)


def finish_axes(works: Sequence[AxisWork], *, correction: str, scope: str) -> dict[str, AxisRun]:
    """Correct each axis' family (``scope="axis"``) or all together (``"run"``), and build the AxisRuns."""
    if scope == "run":
        adjusted = adjust_family([w.scored for w in works], correction)
    else:
        adjusted = [adjust_family([w.scored], correction)[0] for w in works]
    runs = {}
    for work, p_adjusted in zip(works, adjusted):
        result = finalize(work.scored, p_adjusted, correction_scope=scope, extra_manifest=work.manifest)
        runs[work.axis] = AxisRun(axis=work.axis, result=result, coverage=MappingProxyType(work.coverage),
                                  generation=work.generation, timings=MappingProxyType(work.timings),
                                  pairs=work.pairs, responses=work.scored.responses)  # fmt: skip
    return runs


def _lost_to_errors(axis: str, summary: GenerationSummary, n_complete: int) -> str:
    counts = ", ".join(f"{kind} {n}" for kind, n in summary.error_counts.items())
    first = summary.error_examples[0] if summary.error_examples else "?"
    return _MSG_LOST_TO_ERRORS.format(axis=axis, n_complete=n_complete, n_pairs=summary.n_pairs,
                                      n_errors=summary.n_errors, counts=counts, first=first)  # fmt: skip
