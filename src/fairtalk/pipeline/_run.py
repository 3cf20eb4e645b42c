"""``audit()`` (``run_audit``): corpus -> pairs -> responses -> scores and stats, per axis, through one cached model.

``audit()`` builds one :class:`AuditConfig` (from its arguments) and hands it to
:func:`run_axes`, the per-axis runner that ``reproduce_debias()`` shares: it takes the pairs
it is given, or builds them from the corpus. Writing is :func:`fairtalk.report.write_run`'s.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fairtalk.corpora import read_corpus
from fairtalk.counterfactual import Swapper
from fairtalk.errors import InputError, ResponderError, SpecError
from fairtalk.files import check_output_folder
from fairtalk.lexicons import Lexicon, expand_axis, load_lexicon
from fairtalk.models import resolve_engine
from fairtalk.pairs import build_pairs, check_pairs
from fairtalk.pipeline._config import (
    DEFAULT_AXES,
    DEFAULT_CORPUS,
    DEFAULT_N_PAIRS,
    AuditConfig,
)
from fairtalk.pipeline._family import Scored, adjust_family, finalize
from fairtalk.pipeline._generate import cached_model, generate
from fairtalk.pipeline._score import prepare_scores
from fairtalk.pipeline._similarity import against_baseline
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.records import Pair
from fairtalk.report import check_run_folder, write_run
from fairtalk.report.index import INDEX_FILE, RUN_FILE, previous_entries
from fairtalk.results import AuditRun, AxisRun, GenerationSummary, SimilarityResult
from fairtalk.store import CachingResponder, RunStore

__all__ = ["DEFAULT_AXES", "DEFAULT_CORPUS", "DEFAULT_N_PAIRS", "audit", "run_axes"]

_MSG_DUPLICATE_AXIS = "axis {axis!r} is given twice"
_LOG = logging.getLogger(__name__)
_MSG_TOO_FEW_PAIRS = (
    "axis {axis}: {corpus} gave {n} pair(s) ({n_read} contexts read, {n_matched} mention a group); need at least 2"
)
_MSG_LOST_TO_ERRORS = (
    "axis {axis}: {n_complete} complete pair(s) left of {n_pairs}, need at least 2: the model failed on "
    "{n_errors} pair side(s) ({counts}); first error: {first}"
)


def _lexicons(axes: Sequence[str | Lexicon]) -> list[Lexicon]:
    """Load each axis of a config once; SpecError for an axis given twice."""
    names = [name for item in axes for name in ([item] if isinstance(item, Lexicon) else expand_axis(item))]
    lexicons = [item if isinstance(item, Lexicon) else load_lexicon(item) for item in names]
    seen: set[str] = set()
    for lexicon in lexicons:
        if lexicon.axis in seen:
            raise SpecError(_MSG_DUPLICATE_AXIS.format(axis=lexicon.axis))
        seen.add(lexicon.axis)
    return lexicons


def audit(
    config: AuditConfig | None = None,
    *,
    progress: ProgressCallback | None = None,
    **options: Any,
) -> AuditRun:
    """Audit a dialogue model end to end: for each axis, pairs -> responses -> scores -> stats.

    Give an :class:`AuditConfig`, or its options as keyword arguments (the run's and the
    scoring ones, as below); both is a SpecError where they differ.

    Parameters
    ----------
    config : AuditConfig, optional
        Every option in one validated value (also built by ``AuditConfig.from_file``).
    progress : callable, optional
        Receives a :class:`~fairtalk.ProgressEvent` per step of each stage (pairs, responses,
        scoring); messages go to the ``fairtalk`` loggers. ``False`` means None; ``True`` and a
        callable ``(label, n_done, n_total)`` still work, with a FutureWarning.
    corpus : str or path
        Where the contexts come from (any :func:`fairtalk.read_corpus` spec).
    axes : str, Lexicon or sequence
        Axis names (``"gender"``, ``"race"``; a string is split at commas), lexicon files or
        loaded lexicons. Each gets its own pairs, responses and result.
    model : str or Responder, optional
        A model spec or responder; None takes ``builtin:minilm-retrieval`` when its packages are
        installed, else ``builtin:retrieval``, else ``builtin:smollm2``, else raises FairtalkError.
    n_pairs : int or None
        A seeded uniform sample of this many pairs per axis (None: every pair; default 2000).
    seed : int
        Seeds the pair sample, the swapper's many-to-many choices, the per-item generation
        seeds (from ``(seed, pair id, side)``) and the bootstrap.
    store : path or RunStore, optional
        The SQLite run store; re-running the same audit with it reuses every stored response
        and resumes an interrupted run. None keeps responses in memory only.
    out_dir : path, optional
        When given, the run is written there at the end by :func:`fairtalk.report.write_run`
        (per axis the report, ``pairs.jsonl`` and ``responses.jsonl``; the index and
        ``run.json``), swapped in whole. Before any work, the folder is checked: two axes may
        not share a folder, no input (corpus, store, the model's files) may lie inside an
        entry the run replaces, the folder may not be the root, the home folder or hold an
        input (the store aside), and every entry the run replaces that is there must be one a
        fairtalk run wrote (listed in its ``.written-by-fairtalk.json``): the user's own files
        are never replaced.
    settings : DecodingSettings or mapping, optional
        Greedy, ``max_new_tokens=40`` by default.
    max_errors : int, optional
        Abort (ResponderError) once more pair sides than this have failed over the run;
        otherwise failures are counted, stored, and retried by the next run.
    split : str, optional
        Corpus split; None means ``"heldout"`` for ``builtin:chitchat`` (never the reference
        models' training contexts) and ``"all"`` otherwise.
    mixed, batch_size
        Passed to :func:`fairtalk.build_pairs` and the caching wrapper.
    engine : {"local", "ray"}, RayEngine or mapping, optional
        Where the model runs: in this process (the default) or on Ray actors (see
        :func:`fairtalk.respond`); ``run.json`` records it in ``config.engine``. On Ray, an
        axis with at least two ``score_batch`` distinct responses is also scored on the
        cluster (see :func:`fairtalk.score`); each axis' manifest says where (``scoring_engine``).
    correction_scope : {"axis", "run"}
        Correct each axis' family on its own (the default), or all axes' families together
        (the family-wise error then holds over the whole run).
    model_args : mapping, optional
        Options for the model spec's adapter, as ``?key=value`` in the spec would give them.
    model_version : str, optional
        A tag that becomes part of the model's fingerprint, the run store's key (see
        :func:`fairtalk.respond`).
    score : ScoreOptions or mapping, optional
        The scoring options; each of them may also be given on its own (``alpha=0.01``):
    measures, alpha, correction, mask_groups, drop_empty, distinct, offense, offense_threshold,
    sentiment_threshold, n_resamples, n_divergent, binary_test, count_test, clusters, margins, primary, power,
    judge_rubric, judge_scale
        As for :func:`fairtalk.score` (fields of :class:`ScoreOptions`).

    Returns
    -------
    AuditRun
        Per axis: the AuditResult (its ``input_summary`` counts ``n_errors`` and
        ``n_pairs_with_errors``; its manifest has an ``audit`` entry with the corpus, model
        fingerprint, decoding settings and pair coverage), the coverage, generation counts
        and stage times; ``config`` is ``config.to_dict()``.

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
    >>> run = audit(AuditConfig.from_file("audit.toml"))  # doctest: +SKIP
    """
    config = AuditConfig.resolve(config, options)
    lexicons = _lexicons(config.axes)
    contexts = read_corpus(config.corpus, split=config.effective_split, turns=config.turns)
    if config.out_dir is not None:
        folders = check_run_folder(config.out_dir, [lexicon.axis for lexicon in lexicons],
                                   _inputs(contexts.path, config.store, None, lexicons))  # fmt: skip
        _check_out_dir(config.out_dir, folders, _inputs(contexts.path, None, None, lexicons))
    run = run_axes(config, lexicons, ProgressReporter(progress_callback(progress)), contexts=contexts)
    if config.out_dir is not None:
        write_run(run, config.out_dir)
    return run


def run_axes(
    config: AuditConfig,
    lexicons: Sequence[Lexicon],
    reporter: ProgressReporter,
    *,
    contexts: Any = None,
    pairs: Mapping[str, tuple[Sequence[Pair], Mapping[str, Any]]] | None = None,
    extra_manifest: Mapping[str, Any] | None = None,
) -> AuditRun:
    """Every axis through one cached model; the finished run, its manifests built with it.

    Per axis: pairs (built from ``contexts``, or ``pairs[axis]`` with its coverage), responses,
    scores, then the correction.
    """
    run_id = new_run_id()
    works: list[AxisWork] = []
    with cached_model(config.model, config.store, batch_size=config.batch_size, max_errors=config.max_errors,
                      model_args=config.model_args, model_version=config.model_version,
                      engine=resolve_engine(config.engine), progress=reporter,
                      max_consecutive_failures=config.max_consecutive_failures) as cached:  # fmt: skip
        if config.out_dir is not None:
            corpus_path = config.corpus if contexts is None else contexts.path
            folders = check_run_folder(config.out_dir, [lexicon.axis for lexicon in lexicons],
                                       _inputs(corpus_path, config.store, cached, lexicons))  # fmt: skip
            _check_out_dir(config.out_dir, folders, _inputs(corpus_path, None, cached, lexicons))
        for lexicon in lexicons:
            given = None if pairs is None else pairs[lexicon.axis]
            works.append(_audit_axis(lexicon, cached, config, reporter, contexts=contexts, given=given, run_id=run_id,
                                     extra_manifest=extra_manifest))  # fmt: skip
        model_fingerprint, store_path = cached.fingerprint, str(cached.store.path)
    return AuditRun(
        axes=MappingProxyType(_finish_axes(works, config)),
        model=model_fingerprint,
        corpus=config.corpus,
        split=config.effective_split,
        seed=config.seed,
        settings=MappingProxyType(config.settings.sent()),
        store=None if config.store is None else store_path,
        run_id=run_id,
        config=MappingProxyType(config.to_dict()),
    )


def new_run_id() -> str:
    """A run's id: the UTC time and a random suffix (``20261122T134501Z-3fa9c2``)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def _check_out_dir(out_dir: str | os.PathLike[str], folders: Sequence[str], inputs: Mapping[str, object]) -> None:
    """Before any answer: no root, home or folder holding an input, and what the run replaces there is fairtalk's.

    ``inputs`` leaves out the run store: it is the run's own, by default ``OUTPUT/store.sqlite``
    (outside the swap, so never replaced).
    """
    replaces = {*folders, *previous_entries(out_dir), INDEX_FILE, RUN_FILE}
    check_output_folder(out_dir, inputs, replaces=replaces)


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
    similarity: SimilarityResult | None = None
    pairs_check: dict[str, Any] | None = None


def _audit_axis(
    lexicon: Lexicon,
    cached: CachingResponder,
    config: AuditConfig,
    reporter: ProgressReporter,
    *,
    contexts: Any,
    given: tuple[Sequence[Pair], Mapping[str, Any]] | None,
    run_id: str,
    extra_manifest: Mapping[str, Any] | None,
) -> AxisWork:
    """One axis: the pairs given (with their coverage) or built from ``contexts``, responses, scores."""
    axis, seed, corpus = lexicon.axis, config.seed, config.corpus
    timings: dict[str, float] = {}
    started = time.perf_counter()
    if given is None:
        reporter.start(f"{axis}: pairs", unit="pairs")
        pair_set = build_pairs(contexts, Swapper(lexicon, seed=seed), mixed=config.mixed, limit=config.n_pairs,
                               seed=seed, balance=config.balance)  # fmt: skip
        pairs: Sequence[Pair] = list(pair_set)
        coverage = pair_set.coverage.to_dict()
        reporter.finish()
        timings["pairs"] = time.perf_counter() - started
        _LOG.info("%s: %d pairs from %d contexts read (%d mention a group)", axis, len(pairs), coverage["n_read"],
                  coverage["n_matched"])  # fmt: skip
        if len(pairs) < 2:
            raise InputError(_MSG_TOO_FEW_PAIRS.format(axis=axis, corpus=corpus, n=len(pairs), n_read=coverage["n_read"],
                                                       n_matched=coverage["n_matched"]))  # fmt: skip
    else:
        pairs, coverage = given[0], dict(given[1])
    pairs_check = check_pairs(pairs, Swapper(lexicon, seed=seed)).to_dict()

    generation = generate(cached, pairs, config.settings, seed=seed, progress=reporter, label=f"{axis}: responses")
    timings["generation"] = generation.summary.seconds
    if generation.responses.n_pairs < 2 and generation.errors:
        raise ResponderError(_lost_to_errors(axis, generation.summary, generation.responses.n_pairs))

    similarity = None
    if config.similarity:
        started = time.perf_counter()
        similarity = against_baseline(cached, pairs, generation, config.settings, seed=seed, methods=config.similarity,
                                      alpha=config.score.alpha, clusters=config.score.clusters, progress=reporter,
                                      label=f"{axis}: baseline answers")  # fmt: skip
        timings["similarity"] = time.perf_counter() - started
    started = time.perf_counter()
    reporter.start(f"{axis}: scoring", unit="pairs")
    scored = prepare_scores(generation.responses, axis=lexicon, options=config.score, engine=resolve_engine(config.engine),
                            store=cached.store)  # fmt: skip
    reporter.finish()
    timings["scoring"] = time.perf_counter() - started
    _LOG.info("%s: scored %d pairs (%.1f s)", axis, generation.responses.n_pairs, timings["scoring"])
    manifest = {
        "run_id": run_id, "corpus": corpus, "split": config.effective_split, "model": cached.fingerprint,
        "decoding": config.settings.sent(), "seed": seed, "n_pairs_requested": config.n_pairs,
        "mixed": config.mixed, "balance": config.balance, "coverage": coverage, **(extra_manifest or {}),
    }  # fmt: skip
    return AxisWork(axis, scored, coverage, generation.summary, timings, tuple(pairs), manifest, similarity,
                    pairs_check)  # fmt: skip


def _finish_axes(works: Sequence[AxisWork], config: AuditConfig) -> dict[str, AxisRun]:
    """Correct each axis' family (``correction_scope="axis"``) or all together (``"run"``), and build the AxisRuns."""
    correction, scope = config.score.correction, config.correction_scope
    adjusted: list[list[float | None]]
    sizes: list[int | None] = [None] * len(works)
    if scope == "run":
        adjusted = adjust_family([w.scored for w in works], correction)
        scopes = ["run"] * len(works)
    else:  # each axis on its own; the pairs of groups of one multi-way axis together (religion:a-b ...)
        families: dict[str, list[int]] = {}
        for index, work in enumerate(works):
            families.setdefault(_family_of(work.axis, index), []).append(index)
        adjusted = [[] for _ in works]
        scopes = ["axis"] * len(works)
        for members in families.values():
            for index, p_adjusted in zip(members, adjust_family([works[i].scored for i in members], correction)):
                adjusted[index] = p_adjusted
                if len(members) > 1:
                    scopes[index] = f"multi-way axis {works[index].axis.partition(':')[0]} ({len(members)} pairs of groups)"
                    sizes[index] = sum(len(works[i].scored.family(True)) for i in members)
    runs: dict[str, AxisRun] = {}
    for work, p_adjusted in zip(works, adjusted):
        result = finalize(work.scored, p_adjusted, correction_scope=scopes[len(runs)], extra_manifest=work.manifest,
                          family_size=sizes[len(runs)])  # fmt: skip
        runs[work.axis] = AxisRun(axis=work.axis, result=result, coverage=MappingProxyType(work.coverage),
                                  generation=work.generation, timings=MappingProxyType(work.timings),
                                  pairs=work.pairs, responses=work.scored.responses,
                                  similarity=work.similarity,
                                  pairs_check=None if work.pairs_check is None else MappingProxyType(work.pairs_check))  # fmt: skip
    return runs


def _family_of(axis: str, index: int) -> str:
    """The correction family of an axis: a multi-way axis' pairs of groups share one (``religion``)."""
    parent, colon, _ = axis.partition(":")
    return parent if colon else f"{axis}\x00{index}"


def _lost_to_errors(axis: str, summary: GenerationSummary, n_complete: int) -> str:
    counts = ", ".join(f"{kind} {n}" for kind, n in summary.error_counts.items())
    first = summary.error_examples[0] if summary.error_examples else "?"
    return _MSG_LOST_TO_ERRORS.format(axis=axis, n_complete=n_complete, n_pairs=summary.n_pairs,
                                      n_errors=summary.n_errors, counts=counts, first=first)  # fmt: skip
