"""``audit()``: corpus -> pairs -> responses -> scores and stats, per axis, through one cached model.

``audit()`` builds one :class:`AuditConfig` (from its arguments) and hands it to
:func:`run_axes`, the per-axis runner that ``reproduce_debias()`` shares: it takes the pairs
it is given, or builds them from the corpus. One axis is ``_run_axis.py``'s; writing is
:func:`fairtalk.report.write_run`'s.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from types import MappingProxyType
from typing import Unpack

from fairtalk.config import (
    DEFAULT_AXES,
    DEFAULT_CORPUS,
    DEFAULT_N_PAIRS,
    AuditConfig,
    AuditOverrides,
    GenerationOptions,
    InferenceOptions,
    PairsOptions,
    ScoreOptions,
    keyword_options,
)
from fairtalk.corpora import Corpus, read_corpus
from fairtalk.errors import InputError, SpecError
from fairtalk.files import check_folder_kind, check_output_folder, output_scope
from fairtalk.gates import Gate, evaluate
from fairtalk.inference import OtherAnswersError, check_gold
from fairtalk.lexicons import Lexicon, expand_axis, load_lexicon
from fairtalk.models import Responder
from fairtalk.pairs import PairColumn
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.records import Coverage, Pair
from fairtalk.report import INDEX_FILE, RUN_FILE, check_run_folder, previous_entries, write_run
from fairtalk.results import AuditRun, AxisRun
from fairtalk.run._axis import audit_axis, axis_pairs, finish_axes
from fairtalk.run._generate import cached_model
from fairtalk.run._score import audit_score_options, check_score_options
from fairtalk.run._sequential import run_sequential
from fairtalk.store import CachingResponder, RunStore

__all__ = ["DEFAULT_AXES", "DEFAULT_CORPUS", "DEFAULT_N_PAIRS", "audit", "new_run_id", "run_axes"]

_MSG_DUPLICATE_AXIS = "axis {axis!r} is given twice: give each axis once"
_MSG_SAME_AXIS = "{first} and {second} both name the axis {axis!r}; rename one (its '# axis:' header)"
_MSG_UNKNOWN_GATE = "unknown gate {gate!r} (an audit states: {choices})"
_MSG_COMPARISON_GATE = "the gate fail-if-worse decides a comparison of two runs (fairtalk.compare), not an audit"
_MSG_SEQUENTIAL_CORPUS = "until_decided draws its pairs from a corpus: it cannot audit pairs given ready-made"
_MSG_KEPT = (
    "{finding}. Nothing was written, but every answer of this run is kept in the run store {store}: the same command "
    "without --gold (the same options and store) gives them again without asking the model; label those answers "
    "(fairtalk label OUTPUT/AXIS/responses.jsonl) for a gold file of this run"
)
_MSG_NOT_KEPT = (
    "{finding}. Nothing was written, and the answers were not kept (no run store file: give --store FILE to keep "
    "them, and a rerun then gives them without asking the model)"
)


def load_axes(axes: Sequence[str | Lexicon]) -> list[Lexicon]:
    """Load each axis of a config once (a multi-way one expanded); SpecError for an axis given twice.

    One axis named twice (``gender,gender``) is said so; two lexicons from different sources that
    name one axis (two files with one ``# axis:`` header) are told to rename one.
    """
    names = [name for item in axes for name in ([item] if isinstance(item, Lexicon) else expand_axis(item))]
    lexicons = [item if isinstance(item, Lexicon) else load_lexicon(item) for item in names]
    seen: dict[str, Lexicon] = {}
    for lexicon in lexicons:
        first = seen.get(lexicon.axis)
        if first is None:
            seen[lexicon.axis] = lexicon
            continue
        if first.source and first.source != lexicon.source:
            raise SpecError(_MSG_SAME_AXIS.format(axis=lexicon.axis, first=first.source, second=lexicon.source))
        raise SpecError(_MSG_DUPLICATE_AXIS.format(axis=lexicon.axis))
    return lexicons


def audit(
    config: AuditConfig | None = None,
    *,
    progress: ProgressCallback | None = None,
    gates: Sequence[Gate | str] = (),
    **overrides: Unpack[AuditOverrides],
) -> AuditRun:
    """Audit a dialogue model end to end: for each axis, pairs -> responses -> scores -> stats.

    Give an :class:`AuditConfig`, or its options as keyword arguments (the run's and the
    scoring ones, as below; typed by :class:`AuditOverrides`); both is a SpecError where they
    differ. An option left out keeps the config's value, or :class:`AuditConfig`'s default; a
    keyword that is no option is a TypeError (and an error for a type checker).

    Parameters
    ----------
    config : AuditConfig, optional
        Every option in one validated value (also built by ``AuditConfig.from_file``).
    progress : callable, optional
        Receives a :class:`~fairtalk.progress.ProgressEvent` per step of each stage (pairs, responses,
        scoring); messages go to the ``fairtalk`` loggers. ``False`` means None; ``True`` and a
        callable ``(label, n_done, n_total)`` still work, with a FutureWarning.
    gates : sequence of Gate or str
        Release gates (``"fail-on-bias"``, ``"fail-unless-equivalent"``) whose outcomes the report
        written to ``out_dir`` states (the index and each axis' pages), each decided once the run
        is done by :func:`fairtalk.gates.evaluate`. They do not raise: evaluate the run to act on
        them. An unknown gate is a SpecError before any work; without ``out_dir`` they change nothing.
    **overrides : AuditOverrides
        The options under Other Parameters (:class:`AuditConfig`'s fields and :class:`ScoreOptions`'), by
        keyword; each is optional, and one left out keeps its default.

    Other Parameters
    ----------------
    corpus : str or path
        Where the contexts come from (any :func:`fairtalk.read_corpus` spec).
    axes : str, Lexicon or sequence
        Axis names (``"gender"``, ``"race"``; a string is split at commas), lexicon files or
        loaded lexicons. Each gets its own pairs, responses and result.
    model : str, Responder or function, optional
        A model spec, a responder, or a function (one text -> one reply; a batched or an async
        one, see :func:`fairtalk.models.as_responder`), which ``run.json`` records by its
        fingerprint; None takes ``builtin:minilm-retrieval`` when its packages are installed,
        else ``builtin:retrieval``, else ``builtin:smollm2``, else raises FairtalkError.
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
        Greedy, ``max_new_tokens=256`` by default (:class:`~fairtalk.models.DecodingSettings`' defaults).
    max_errors : int, optional
        Abort (ResponderError) once more pair sides than this have failed over the run;
        otherwise failures are counted, stored, and retried by the next run.
    max_consecutive_failures : int, optional
        Stop the run once this many items in a row fail with one kind of error (5 by default;
        0 or None: never).
    split : str, optional
        Corpus split; None means ``"heldout"`` for ``builtin:chitchat`` (never the reference
        models' training contexts) and ``"all"`` otherwise.
    mixed, balance, batch_size
        Passed to :func:`fairtalk.build_pairs` and the caching wrapper.
    turns : int
        ``builtin:chitchat``: each context is the last ``turns`` turns of its dialogue (1 by default).
    by_turn : bool
        Also report each primary key's gap by the number of turns since the identity appeared
        (the first turn where a pair's two sides differ), per bucket with the audit's tests and
        intervals, clustered as the audit is; a bucket of too few units is counted, not tested
        (:mod:`fairtalk.inference._by_turn` says how and why). Each AuditResult then has its
        ``by_turn`` (:class:`~fairtalk.results._by_turn.ByTurnResult`). Needs conversations:
        ``turns`` >= 2 with ``builtin:chitchat`` (SpecError otherwise), or a corpus of
        conversations (InputError, before any answer, when every pair has one turn); not with
        ``until_decided`` (its per-bucket tests are fixed-sample tests).
    similarity : str or sequence of str, optional
        Also test whether the answers to the pairs diverge more than to one context asked twice
        (the no-effect baseline), by these methods (``exact``, ``rouge_l``, ``cosine``,
        ``answered``, ``length_ratio``); each AxisRun then holds its ``similarity``.
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
    until_decided : bool
        Size the audit by itself: audit ``n_pairs`` pairs per axis first, then add pairs look by
        look (steps of ``n_pairs``, or ``looks`` equal steps) until every primary measure has a
        verdict (difference detected, or equivalent within its margin; one not tested for too few
        scored pairs aside) or ``max_pairs`` are spent. The pairs of a look extend the previous
        look's, so the store answers those and only new pairs reach the model; a pair side that
        failed at an earlier look is not asked again in the run (a rerun asks for it). p-values stay valid under this optional stopping: a
        group-sequential design with Lan-DeMets alpha spending (see
        :mod:`fairtalk.stats._sequential`); each axis' manifest has ``audit.sequential``, which
        says how many looks ran, the pairs used, the last look's nominal level and why it stopped.
    max_pairs : int, optional
        With ``until_decided`` (and only then; then it is required): the most pairs per axis,
        at least ``n_pairs``.
    looks : int, optional
        With ``until_decided``: this many looks (>= 2) in equal steps from ``n_pairs`` to ``max_pairs``,
        or to the pairs the corpus gives when it gives fewer (SpecError, before any answer, when
        that many looks do not fit there).
    spending : {"obrien-fleming", "pocock"}
        With ``until_decided``: the alpha-spending function (O'Brien-Fleming-type by default).
    model_version : str, optional
        A tag that becomes part of the model's fingerprint, the run store's key (see
        :func:`fairtalk.respond`).
    score : ScoreOptions or mapping, optional
        The scoring options; each of them may also be given on its own (``alpha=0.01``):
    measures, alpha, correction, mask_groups, drop_empty, distinct, offense, offense_threshold,
    sentiment_threshold, n_resamples, n_divergent, binary_test, count_test, clusters, margins, primary, power,
    scorer_check, judge_rubric, judge_scale, exclude_truncated, gold
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
        be written (the store keeps every answer). A ``gold`` file is checked before any answer
        (it reads, labels responses, some of the keys scored and some of the pairs); labels given
        on other answers than the run's can only be found once they exist: that InputError says
        where the answers are kept (the store), and nothing is written.

    Examples
    --------
    >>> run = audit(corpus=corpus_path, axes="gender", model="builtin:echo")  # doctest: +SKIP
    >>> run.results["gender"].detected()  # doctest: +SKIP
    ()
    >>> run = audit(AuditConfig.from_file("audit.toml"))  # doctest: +SKIP
    """
    known = (*AuditConfig.keys(), *ScoreOptions.keys())
    config = AuditConfig.resolve(config, keyword_options(overrides, known, "audit"))
    requested = _audit_gates(gates)
    lexicons = load_axes(config.axes)
    pairing, out_dir = config.pairs, config.output.out_dir
    contexts = read_corpus(pairing.corpus, split=pairing.split, turns=pairing.turns)
    with output_scope():  # out_dir stays locked from its check to the end of the write: no other run writes it meanwhile
        if out_dir is not None:
            folders = check_run_folder(
                out_dir, [lexicon.axis for lexicon in lexicons], _inputs(contexts.path, config.store, None, lexicons)
            )
            _check_out_dir(out_dir, folders, _inputs(contexts.path, None, None, lexicons))
        run = run_axes(config, lexicons, ProgressReporter(progress_callback(progress)), contexts=contexts)
        if out_dir is not None:
            write_run(run, out_dir, gates=[evaluate(run, gate) for gate in requested])
    return run


def _audit_gates(gates: Sequence[Gate | str]) -> tuple[Gate, ...]:
    """The gates an audit's report states: SpecError for a gate that is unknown or decides comparisons."""
    allowed = {gate.value: gate for gate in Gate if gate is not Gate.FAIL_IF_WORSE}
    chosen: list[Gate] = []
    for gate in (gates,) if isinstance(gates, str) else gates:
        if gate == Gate.FAIL_IF_WORSE:
            raise SpecError(_MSG_COMPARISON_GATE)
        if not isinstance(gate, str) or gate not in allowed:
            raise SpecError(_MSG_UNKNOWN_GATE.format(gate=gate, choices=", ".join(allowed)))
        chosen.append(allowed[gate])
    return tuple(chosen)


def run_axes(
    config: AuditConfig,
    lexicons: Sequence[Lexicon],
    reporter: ProgressReporter,
    *,
    contexts: Corpus | None = None,
    pairs: Mapping[str, tuple[Sequence[Pair], Coverage]] | None = None,
    extra_manifest: Mapping[str, object] | None = None,
) -> AuditRun:
    """Every axis through one cached model; the finished run, its manifests built with it.

    Per axis: pairs (built from ``contexts``, or ``pairs[axis]`` with its coverage), responses,
    scores, then the correction. It wires the stages (the whole config); each stage it calls
    receives its own options (``config.pairs``, ``config.generation``, ``config.inference``).
    Before the model is loaded, the scoring options are checked against the audited axes' measures
    (:func:`~fairtalk.run._score.audit_score_options`): a bad margin or primary key costs no answer,
    and a key only some axes produce applies on those.
    """
    run_id = new_run_id()
    if config.until_decided and (contexts is None or pairs is not None):
        raise SpecError(_MSG_SEQUENTIAL_CORPUS)
    gold = config.inference.score.gold
    scoring = audit_score_options(config.inference.score, lexicons)  # a bad margin or primary key,
    keys = [key for lexicon in lexicons for key in check_score_options(scoring[lexicon.axis], lexicon)]
    if gold:  # or a gold file that cannot count, fails here, not after every answer
        check_gold(gold, keys=keys)
    axes: dict[str, AxisRun] = {}
    pairing, generation, out_dir = config.pairs, config.generation, config.output.out_dir
    with _cached_model(generation, reporter) as cached:
        if out_dir is not None:
            corpus_path = pairing.corpus if contexts is None else contexts.path
            folders = check_run_folder(
                out_dir, [lexicon.axis for lexicon in lexicons], _inputs(corpus_path, generation.store, cached, lexicons)
            )
            _check_out_dir(out_dir, folders, _inputs(corpus_path, None, cached, lexicons))
        try:
            if config.until_decided and contexts is not None:  # look by look, until decided (checked above)
                axes = run_sequential(
                    config, lexicons, cached, reporter, contexts=contexts, run_id=run_id, extra_manifest=extra_manifest
                )
            else:
                axes = _every_axis(
                    lexicons,
                    cached,
                    reporter,
                    contexts,
                    pairs,
                    keys,
                    scoring,
                    pairing=pairing,
                    generation=generation,
                    inference=config.inference,
                    run_id=run_id,
                    extra_manifest=extra_manifest,
                )
        except OtherAnswersError as exc:  # found once the answers exist: say where they are kept
            raise InputError(_answers_kept(exc.finding, cached.store), path=exc.path) from exc
        model_fingerprint, store_path = cached.recorded, str(cached.store.path)
        model_target = cached.responder.resolved_target
    recorded = config.to_dict()
    if config.model is not None and not isinstance(config.model, (str, Responder)):
        recorded["model"] = model_fingerprint  # a function is known by the fingerprint it ran under
    return AuditRun(
        axes=MappingProxyType(axes),
        model=model_fingerprint,
        corpus=pairing.corpus,
        split=pairing.split,
        seed=pairing.seed,
        settings=MappingProxyType(generation.settings.sent()),
        store=None if generation.store is None else store_path,
        run_id=run_id,
        config=MappingProxyType(recorded),
        model_target=model_target,
    )


def _every_axis(
    lexicons: Sequence[Lexicon],
    cached: CachingResponder,
    reporter: ProgressReporter,
    contexts: Corpus | None,
    pairs: Mapping[str, tuple[Sequence[Pair], Coverage]] | None,
    keys: Sequence[str],
    scoring: Mapping[str, ScoreOptions],
    *,
    pairing: PairsOptions,
    generation: GenerationOptions,
    inference: InferenceOptions,
    run_id: str,
    extra_manifest: Mapping[str, object] | None,
) -> dict[str, AxisRun]:
    """Every axis' pairs (given, or built from ``contexts``) and the gold file checked against them, then each axis audited.

    The pairs of every axis are built before the first answer is asked for, so that what can be
    checked of them (a gold file labels some of them, enough pairs on each axis) costs no answer.
    """
    gold = inference.score.gold
    timings: dict[str, dict[str, float]] = {lexicon.axis: {} for lexicon in lexicons}
    found = {
        lexicon.axis: axis_pairs(lexicon, contexts, pairing, reporter, timings[lexicon.axis])
        if pairs is None
        else pairs[lexicon.axis]
        for lexicon in lexicons
    }
    if gold:
        check_gold(gold, keys=keys, pair_ids=(i for given, _ in found.values() for i in PairColumn.of(given).pair_ids()))
    works = [
        audit_axis(
            lexicon,
            cached,
            reporter,
            pairing=pairing,
            generation=generation,
            inference=replace(inference, score=scoring[lexicon.axis]),  # the margin and primary keys it has
            contexts=contexts,
            given=found[lexicon.axis],
            run_id=run_id,
            extra_manifest=extra_manifest,
            timings=timings[lexicon.axis],
        )
        for lexicon in lexicons
    ]
    return finish_axes(works, inference)


def _answers_kept(finding: str, store: RunStore) -> str:
    """``finding``, found once the answers exist, with where they are kept and how to get them without asking again."""
    if str(store.path) in ("", ":memory:"):
        return _MSG_NOT_KEPT.format(finding=finding)
    return _MSG_KEPT.format(finding=finding, store=store.path)


def _cached_model(generation: GenerationOptions, reporter: ProgressReporter) -> AbstractContextManager[CachingResponder]:
    """The generation stage's model behind its run store (:func:`~fairtalk.run._generate.cached_model`)."""
    return cached_model(
        generation.model,
        generation.store,
        batch_size=generation.batch_size,
        max_errors=generation.max_errors,
        model_args=generation.model_args,
        model_version=generation.model_version,
        engine=generation.engine,
        progress=reporter,
        max_consecutive_failures=generation.max_consecutive_failures,
    )


def new_run_id() -> str:
    """A run's id: the UTC time and a random suffix (``20261122T134501Z-3fa9c2``)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def _check_out_dir(out_dir: str | os.PathLike[str], folders: Sequence[str], inputs: Mapping[str, object]) -> None:
    """Before any answer: no root, home or folder holding an input or another command's outputs, and what it replaces is fairtalk's.

    The folder is locked from here to the end of the caller's :func:`~fairtalk.files.output_scope`:
    one another fairtalk run is writing is an OutputError (:func:`~fairtalk.files.hold_output`).

    ``inputs`` leaves out the run store: it is the run's own, by default ``OUTPUT/store.sqlite``
    (outside the swap, so never replaced).
    """
    replaces = {*folders, *previous_entries(out_dir), INDEX_FILE, RUN_FILE}
    check_output_folder(out_dir, inputs, replaces=replaces)
    check_folder_kind(out_dir, "run", option="the output folder", writes="an audit's run needs")  # not a report's, a checkpoint's


def _inputs(
    corpus: object,
    store: str | os.PathLike[str] | RunStore | None,
    cached: CachingResponder | None,
    lexicons: Sequence[Lexicon] = (),
) -> dict[str, object]:
    """What the run reads, by what it is: the corpus file, the store, the model's files, the lexicon files."""
    found: dict[str, object] = {"the corpus": corpus}
    for lexicon in lexicons:
        if lexicon.variant == "custom" and lexicon.source and os.path.isfile(lexicon.source):
            found[f"the lexicon file of {lexicon.axis}"] = lexicon.source
    if isinstance(store, (str, os.PathLike)):
        found["the run store"] = store
    elif isinstance(store, RunStore) and str(store.path) != ":memory:":
        found["the run store"] = store.path
    for i, path in enumerate(() if cached is None else cached.input_paths):
        found[f"the model file #{i + 1}" if i else "the model file"] = path
    return found
