"""``reproduce_debias()``: paper 001 §4 and Table 7 — baseline, CDA and WER Seq2Seq models on the same pairs.

Three Seq2Seq generators (or, through :func:`compare_debiased`, three retrieval rankers) are
trained with :func:`fairtalk.train_model` on the corpus' train split (no debiasing, counterpart
data augmentation, word-embedding regularization with ``k = 0.5``), or taken from the cache: each
checkpoint lives in ``cache_dir/seq2seq-<debias>-<key>/`` (``retrieval-<debias>-<key>/`` for
rankers), where ``key`` hashes the TrainConfig (plus the lexicon's and a corpus file's bytes), and a
finished checkpoint there is loaded instead of trained. The pairs are built once, from the held-out
split, and every model answers them through one run store (``cache_dir/responses.sqlite``),
so a repeated call trains and generates nothing. Each model is scored with the default measures,
and each debiased model is compared with the baseline by :func:`compare_runs` (per key, the
change in gap with its test and verdict: what Table 7's ↓/↑ marks).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fairtalk.compare import compare_runs
from fairtalk.config import AuditConfig, ScoreOptions
from fairtalk.corpora import HELDOUT_PERCENT, Corpus, ReadSummary, read_corpus, split_corpus
from fairtalk.counterfactual import Swapper
from fairtalk.debias import augment, check_counterparts, check_not_augmented
from fairtalk.errors import InputError, SpecError
from fairtalk.files import check_folder_kind, check_output_folder, output_scope, same_file, staged
from fairtalk.lexicons import Lexicon, load_lexicon
from fairtalk.models import PAPER_MAX_NEW_TOKENS, DecodingSettings, RayEngine, resolve_engine
from fairtalk.pairs import Coverage, build_pairs, write_pairs
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.records import Pair
from fairtalk.report import COMPARISON_FILES, INDEX_FILE, RUN_FILE, write_comparison, write_run
from fairtalk.results import ComparedModel, DebiasComparison, axis_folder
from fairtalk.run import run_axes
from fairtalk.store import RunStore
from fairtalk.training import TrainConfig, TrainingRecord, TrainResult, read_training_record, train_model

__all__ = [
    "DEBIAS_MODELS",
    "QUICK_N_PAIRS",
    "QUICK_TRAINING",
    "cache_key",
    "compare_debiased",
    "debias_configs",
    "reproduce_debias",
]

#: The compared models: name -> TrainConfig.debias, in the table's order.
DEBIAS_MODELS = MappingProxyType({"baseline": "none", "cda": "cda", "wer": "wer"})
#: ``quick=True``: TrainConfig overrides (a 25k-dialogue sample, one epoch, a 1 x 128 LSTM; batches
#: of 32 at Adam 2e-3, which reach a validation loss of 5.05 where 128 at 1e-3 stop at 5.73).
QUICK_TRAINING: dict[str, Any] = {
    "epochs": 1,
    "max_dialogues": 25_000,
    "max_vocab": 5000,
    "val_size": 1000,
    "batch_size": 32,
    "lr": 2e-3,
    "sizes": {"emb_dim": 64, "hidden": 128, "layers": 1, "dropout": 0.1},
}
#: Pairs audited in quick mode (the full mode audits every held-out pair).
QUICK_N_PAIRS = 1000
#: Corpora with a held-out split: models train on ``train`` and are audited on ``heldout``.
_SPLIT_CORPORA = ("builtin:chitchat",)
_CACHE_FORMAT = 1
_STORE_FILE = "responses.sqlite"
_PAIRS_FILE = "pairs.jsonl"

_MSG_LOG = (
    "reproduce_debias(log=...) is deprecated: its lines go to the 'fairtalk' loggers at INFO "
    "(logging.basicConfig(level=logging.INFO) shows them); log= stops working in fairtalk 0.3"
)
_LOG = logging.getLogger(__name__)
_MSG_KIND = "reproduce_debias trains {kind} models, got a TrainConfig for {model!r}"
_MSG_TOO_FEW_PAIRS = "{corpus} ({split}) gave {n} {axis} pair(s) ({n_read} contexts read); need at least 2"
_MSG_FILE_HELDOUT = (
    " (the audit reads the {percent}% of the corpus' dialogues held out of training; "
    "give a larger corpus, or contexts to audit of their own with --eval-corpus)"
)


def _splits(corpus: str, eval_corpus: str | None) -> tuple[str, str, str]:
    """(training split, evaluation corpus, evaluation split).

    The models never train on the audited contexts: a corpus that is also the evaluation corpus
    (by default, or the same file) is split, ``builtin:chitchat`` by its own split and a file by
    :func:`~fairtalk.corpora.split_corpus`; a file with an evaluation corpus of its own is trained on whole.
    ``builtin:chitchat`` always trains on its ``train`` split and is always audited on its ``heldout``
    one; any other evaluation corpus of its own (not the training corpus) is audited whole.
    """
    evaluated = corpus if eval_corpus is None else eval_corpus
    same = _same_corpus(corpus, evaluated)
    training = "train" if same or corpus in _SPLIT_CORPORA else "all"
    return training, evaluated, ("heldout" if same or evaluated in _SPLIT_CORPORA else "all")


def _same_corpus(corpus: str, other: str) -> bool:
    """Whether two corpus specs name one corpus (the same spec, or the same file)."""
    if corpus == other:
        return True
    paths = [_corpus_file(spec) for spec in (corpus, other)]
    return paths[0] is not None and paths[1] is not None and same_file(paths[0], paths[1])


def _read(spec: str, split: str) -> Corpus:
    """A corpus' split: ``builtin:chitchat``'s own, a file's by :func:`~fairtalk.corpora.split_corpus` (``all``: whole)."""
    if spec in _SPLIT_CORPORA or split == "all":
        return read_corpus(spec, split=split)
    return split_corpus(read_corpus(spec), split)


def debias_configs(
    *,
    quick: bool = False,
    corpus: str = "builtin:chitchat",
    axis: str = "gender",
    seed: int = 0,
    base: TrainConfig | None = None,
    model: str = "seq2seq",
) -> dict[str, TrainConfig]:
    """The TrainConfig of each compared model: ``base`` (default: TrainConfig's defaults, or the quick ones) per debiasing method.

    ``base`` must be a ``model`` configuration (``seq2seq``, or ``retrieval`` for :func:`compare_debiased`).
    """
    if base is None:
        quick_training = {k: v for k, v in QUICK_TRAINING.items() if model == "seq2seq" or k != "sizes"}  # LSTM sizes
        base = TrainConfig(model=model, corpus=corpus, axis=axis, seed=seed, **(quick_training if quick else {}))
    elif base.model != model:
        raise SpecError(_MSG_KIND.format(kind=model, model=base.model))
    return {name: replace(base, debias=debias) for name, debias in DEBIAS_MODELS.items()}


def _corpus_file(spec: str) -> Path | None:
    """The file a corpus spec names (None for builtin corpora and specs that name no file)."""
    path = Path(spec)
    if not path.is_file() and ":" in spec:
        path = Path(spec.split(":", 1)[1])
    return path if path.is_file() else None


def _inputs(corpus: str, eval_corpus: str | None, base: TrainConfig | None) -> dict[str, object]:
    """What a comparison reads, by what it is: the corpora (paths or ``FORMAT:PATH`` specs)."""
    found: dict[str, object] = {"the corpus": corpus, "the evaluation corpus": eval_corpus}
    if base is not None and base.corpus is not None and base.corpus != corpus:
        found["the training corpus"] = base.corpus
    return found


def _lexicon_file(lexicon: Lexicon) -> dict[str, object]:
    """The lexicon's file, when it was read from one (a built-in axis is no input a run could overwrite)."""
    if lexicon.variant == "custom" and lexicon.source and os.path.isfile(lexicon.source):
        return {"the --axis file": lexicon.source}
    return {}


def _written_in(spec: object, cache: Path, own: str | None) -> bool:
    """Whether ``spec`` is ``own``, a corpus fairtalk itself wrote in ``cache`` (reproduce planted's)."""
    path = _corpus_file(spec) if isinstance(spec, str) and spec == own else None
    return path is not None and path.resolve().is_relative_to(cache.resolve())


def _check_cda_adds(dialogues: Corpus, config: TrainConfig, *, seed: int) -> None:
    """InputError, before any training, when CDA would add no counterpart to the training corpus.

    Read up to the first dialogue with a counterpart (for a corpus that uses the axis' words, a
    few); the training itself checks its own sample again (:func:`fairtalk.debias.check_counterparts`).
    """
    augmentation = augment(dialogues, Swapper(load_lexicon(config.axis), seed=seed))
    if not any(dialogue.augmented for dialogue in augmentation):
        check_counterparts(augmentation.summary, augmentation.swapper, corpus=config.corpus, training=True)


def _file_digest(spec: str) -> str | None:
    """sha256 of a corpus file's bytes (None for builtin corpora and specs that name no file)."""
    path = _corpus_file(spec)
    if path is None:
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_key(config: TrainConfig, lexicon: Lexicon, *, split: str = "all") -> str:
    """The cache folder's key: a hash of the TrainConfig, the lexicon's bytes, a corpus file's bytes and its split."""
    digest = _file_digest(config.corpus)
    payload: dict[str, Any] = {"format": _CACHE_FORMAT, "config": asdict(config), "lexicon": lexicon.sha256, "corpus": digest}
    if digest is not None and split != "all":  # a file's train split (whole, it keeps the key it had)
        payload["split"] = split
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _audit_pairs(evaluated: str, split: str, lexicon: Lexicon, *, seed: int, n_pairs: int | None) -> tuple[list[Pair], Coverage]:
    """The pairs every model answers, and their coverage: at least two, or an InputError."""
    pair_set = build_pairs(_read(evaluated, split), Swapper(lexicon, seed=seed), limit=n_pairs, seed=seed)
    pairs = list(pair_set)
    coverage = pair_set.coverage
    if len(pairs) < 2:
        message = _MSG_TOO_FEW_PAIRS.format(
            corpus=evaluated, split=split, n=len(pairs), axis=lexicon.axis, n_read=coverage.n_read
        )
        held_out = split == "heldout" and evaluated not in _SPLIT_CORPORA
        raise InputError(message + (_MSG_FILE_HELDOUT.format(percent=HELDOUT_PERCENT) if held_out else ""))
    return pairs, coverage


def _with_skips(error: InputError, read: ReadSummary) -> InputError:
    """``error`` (one not about a file's line) with the lines the corpus reader skipped, when it skipped any."""
    if error.path is not None or not read.skipped:
        return error
    return type(error)(read.with_skips(str(error)))  # a reply's problem: among those without a response, not a skip


def _train(
    dialogues: Corpus,
    config: TrainConfig,
    folder: Path,
    *,
    callback: ProgressCallback | None,
    log: Callable[[str], object] | None,
    report: bool,
) -> TrainResult:
    """Train one model; with ``report``, log what the reader skipped and training left out."""
    with warnings.catch_warnings():  # the caller was warned about log= already
        warnings.simplefilter("ignore", FutureWarning)
        try:
            result = train_model(dialogues, config, folder, progress=callback, log=log)
        except InputError as exc:  # too few dialogues: say what the reader skipped
            raise _with_skips(exc, dialogues.summary) from exc
    if report:
        read = dialogues.summary  # a missing reply counted once, among those without a response
        for line in [*read.skip_lines(replies=False), *result.left_out_lines(reply_note=read.reply_note())]:
            _LOG.warning("the training corpus %s: %s", dialogues.source, line)
    return result


def _finished(folder: Path) -> TrainingRecord | None:
    """The training record of the checkpoint in ``folder`` when it holds a finished one."""
    record = read_training_record(folder)
    return record if record is not None and record.finished else None


def reproduce_debias(
    *,
    out_dir: str | os.PathLike[str],
    quick: bool = False,
    axis: str = "gender",
    seed: int = 0,
    cache_dir: str | os.PathLike[str] | None = None,
    n_pairs: int | None = None,
    corpus: str = "builtin:chitchat",
    eval_corpus: str | None = None,
    train_config: TrainConfig | None = None,
    settings: DecodingSettings | None = None,
    n_resamples: int = 2000,
    report_formats: Iterable[str] | None = None,
    progress: ProgressCallback | None = None,
    log: Callable[[str], object] | None = None,
    engine: str | RayEngine | Mapping[str, object] | None = None,
) -> DebiasComparison:
    """Train (or reuse) baseline, CDA and WER Seq2Seq models and audit them on the same held-out pairs.

    Parameters
    ----------
    out_dir : path
        Gets ``table7.md``, ``table7.csv``, ``results.json``, ``pairs.jsonl`` and one report
        folder per model (``baseline/``, ``cda/``, ``wer/``, as ``fairtalk audit`` writes them).
    quick : bool
        Small models on a 25k-dialogue sample for one epoch (:data:`QUICK_TRAINING`) and
        :data:`QUICK_N_PAIRS` pairs: minutes on 2 cores. Otherwise TrainConfig's defaults
        (2 epochs over the whole train split; about 25-40 min per model on 2 idle cores).
    axis : str
        ``gender``, ``race`` or a lexicon file: CDA and WER use it, and the audit pairs it.
    seed : int
        Seeds training, the pair sample, the per-item generation seeds and the bootstrap.
    cache_dir : path, optional
        Checkpoints and the run store (default ``out_dir/cache``).
    n_pairs : int, optional
        Pairs audited (default :data:`QUICK_N_PAIRS` in quick mode, else every pair of what the audit
        reads: the evaluation corpus, or its held-out split, see ``eval_corpus``).
    corpus : str
        Training dialogues (its ``train`` split when it is also the evaluation corpus, see ``eval_corpus``).
    eval_corpus : str, optional
        Where the audit's contexts come from (default ``corpus``). When it is ``corpus`` (the
        default, or the same file), the audit reads its ``heldout`` split and the models train on
        its ``train`` split: ``builtin:chitchat``'s own, a file's by
        :func:`~fairtalk.corpora.split_corpus` (:data:`~fairtalk.corpora.HELDOUT_PERCENT` percent of its
        dialogues held out). Another corpus is read whole (``builtin:chitchat``: its ``heldout`` split),
        and the models train on all of ``corpus`` (``builtin:chitchat``: its ``train`` split).
    train_config : TrainConfig, optional
        The base configuration (a seq2seq one); its ``debias`` is set per model. Overrides ``quick``,
        ``corpus``, ``axis`` and ``seed`` for training.
    settings : DecodingSettings, optional
        Greedy, ``max_new_tokens=40`` by default (paper 001's setting).
    n_resamples : int
        Bootstrap resamples of the scoring.
    report_formats : iterable of str, optional
        Formats of each model's report (default all: json, csv, md, html).
    progress : callable, optional
        Receives a :class:`~fairtalk.progress.ProgressEvent` per training batch and per generated answer.
        ``False`` means None; ``True`` and a callable ``(label, n_done, n_total)`` still work, with
        a FutureWarning.
    engine : {"local", "ray"}, RayEngine or mapping, optional
        Where the three models answer the pairs (as :func:`fairtalk.audit`'s): with ``"ray"``, each
        checkpoint is loaded on Ray actors and this process alone writes the run store. Training
        stays in this process.
    log : callable, optional
        Deprecated (FutureWarning; removed in fairtalk 0.3): also receives each line that goes
        to the ``fairtalk.pipeline`` and ``fairtalk.training`` loggers at INFO, one per stage and per epoch.

    Returns
    -------
    DebiasComparison

    Raises
    ------
    FairtalkError
        A bad option, corpus or axis; fewer than two pairs: each found before any model trains
        (the evaluation corpus is read and paired first). A training corpus with no usable
        dialogue fails when the first model reads it, saying what its reader skipped.

    Notes
    -----
    What the training corpus' reader skipped (malformed lines, by reason) and what training
    left out (records without a response) is logged once, at WARNING, to this module's logger.

    Examples
    --------
    >>> comparison = reproduce_debias(out_dir="debias", quick=True)  # doctest: +SKIP
    >>> comparison.results["wer"].measure("offense_rate").p_adjusted  # doctest: +SKIP
    1.0
    """
    return compare_debiased(
        "seq2seq",
        out_dir=out_dir,
        quick=quick,
        axis=axis,
        seed=seed,
        cache_dir=cache_dir,
        n_pairs=n_pairs,
        corpus=corpus,
        eval_corpus=eval_corpus,
        train_config=train_config,
        settings=settings,
        n_resamples=n_resamples,
        report_formats=report_formats,
        progress=progress,
        log=log,
        engine=engine,
        _stacklevel=3,
    )


def compare_debiased(  # noqa: PLR0915
    model: str,
    *,
    out_dir: str | os.PathLike[str],
    quick: bool = False,
    axis: str = "gender",
    seed: int = 0,
    cache_dir: str | os.PathLike[str] | None = None,
    n_pairs: int | None = None,
    corpus: str = "builtin:chitchat",
    eval_corpus: str | None = None,
    train_config: TrainConfig | None = None,
    settings: DecodingSettings | None = None,
    n_resamples: int = 2000,
    report_formats: Iterable[str] | None = None,
    progress: ProgressCallback | None = None,
    log: Callable[[str], object] | None = None,
    engine: str | RayEngine | Mapping[str, object] | None = None,
    _stacklevel: int = 2,
    _own_corpus: str | None = None,
) -> DebiasComparison:
    """:func:`reproduce_debias` for ``model`` (``seq2seq`` or ``retrieval``): baseline, CDA and WER models of that kind.

    The options are :func:`reproduce_debias`'s; ``train_config``, when given, must be a ``model``
    configuration, and the models answer as ``builtin:<model>`` from their checkpoints.
    ``_own_corpus`` is a corpus spec fairtalk wrote into the cache folder itself (reproduce
    planted's): the cache may hold that input, and no other.
    """
    # every audit option is validated here, once, before any training
    audit_config = AuditConfig(
        model=f"builtin:{model}",
        n_pairs=n_pairs,
        settings=settings or DecodingSettings(max_new_tokens=PAPER_MAX_NEW_TOKENS),
        score=ScoreOptions(seed=seed, n_resamples=n_resamples),
        engine=resolve_engine(engine),
    )
    callback = progress_callback(progress)
    if log is not None:
        warnings.warn(_MSG_LOG, FutureWarning, stacklevel=_stacklevel)

    def say(line: str) -> None:
        _LOG.info("%s", line)
        if log is not None:
            log(line)

    with output_scope():  # out_dir stays locked from its check to the end: no other fairtalk run writes it meanwhile
        started = time.perf_counter()
        out = Path(out_dir)
        inputs = _inputs(corpus, eval_corpus, train_config)
        # before any training: no root, home or input's folder, and no file of the user's where one is written
        check_output_folder(out_dir, inputs, replaces=(*COMPARISON_FILES, _PAIRS_FILE))  # as given: '' is no folder
        cache = out / "cache" if cache_dir is None else Path(cache_dir)
        cache_inputs = {k: v for k, v in inputs.items() if not _written_in(v, cache, _own_corpus)}
        check_output_folder(cache if cache_dir is None else cache_dir, cache_inputs, hold=False)  # runs may share a cache
        lexicon = load_lexicon(axis)  # read once the folders are known to be no root or home
        for folder in (out_dir, cache):  # nor one holding the --axis file
            check_output_folder(folder, _lexicon_file(lexicon), hold=False)
        check_folder_kind(out, "debias", option="the output folder", writes="reproduce debias's results need")
        if cache_dir is not None:  # the default, out/cache, is its own
            check_folder_kind(cache, None, option="the cache folder", writes="the cache needs")
        for name in DEBIAS_MODELS:  # each model's report folder, as `fairtalk audit -o` writes it
            check_output_folder(out / name, replaces=(INDEX_FILE, RUN_FILE, axis_folder(lexicon.axis)))
        configs = debias_configs(quick=quick, corpus=corpus, axis=axis, seed=seed, base=train_config, model=model)
        train_split, evaluated, eval_split = _splits(configs["baseline"].corpus or corpus, eval_corpus)
        n_pairs = (QUICK_N_PAIRS if quick else None) if n_pairs is None else n_pairs
        timings = {"training": 0.0}

        # every input is read before any training: the training corpus opened, the evaluation corpus paired
        dialogues = _read(configs["baseline"].corpus or corpus, train_split)
        check_not_augmented(dialogues, training=True)  # the CDA model's twins would get twins
        t0 = time.perf_counter()
        pairs, coverage = _audit_pairs(evaluated, eval_split, lexicon, seed=seed, n_pairs=n_pairs)
        timings["pairs"] = time.perf_counter() - t0
        _check_cda_adds(dialogues, configs["cda"], seed=seed)  # a CDA model trained as the baseline: refused now

        checkpoints: dict[str, tuple[Path, bool]] = {}
        for name, config in configs.items():
            folder = cache / f"{model}-{config.debias}-{cache_key(config, lexicon, split=train_split)}"
            if _finished(folder) is not None:
                say(f"{name}: using the cached checkpoint {folder}")
                checkpoints[name] = (folder, False)
                continue
            say(f"{name}: training {model} (debias {config.debias}) on {config.corpus or corpus} ({train_split}) -> {folder}")
            t0 = time.perf_counter()
            first = not any(was_trained for _, was_trained in checkpoints.values())  # the same corpus each time: said once
            _train(dialogues, config, folder, callback=callback, log=log, report=first)
            timings["training"] += time.perf_counter() - t0
            checkpoints[name] = (folder, True)

        t0 = time.perf_counter()
        with staged(out) as staging:  # replaces only a pairs.jsonl fairtalk wrote
            write_pairs(pairs, staging / _PAIRS_FILE)
        timings["pairs"] += time.perf_counter() - t0
        say(f"{len(pairs)} {lexicon.axis} pairs from {evaluated} ({eval_split}) -> {out / _PAIRS_FILE}")

        models: dict[str, ComparedModel] = {}
        given = {lexicon.axis: (pairs, coverage)}
        formats = None if report_formats is None else tuple(report_formats)
        reporter = ProgressReporter(callback)
        with RunStore(cache / _STORE_FILE) as store:
            for name, (folder, trained) in checkpoints.items():
                run_config = audit_config.updated(
                    {
                        "corpus": evaluated,
                        "split": eval_split,
                        "axes": (lexicon,),
                        "model_args": {"path": str(folder)},
                        "store": store,
                        "n_pairs": n_pairs,
                    }
                )
                run = run_axes(
                    run_config, [lexicon], reporter, pairs=given, extra_manifest={"checkpoint": str(folder), "name": name}
                )
                write_run(run, out / name, formats=formats)
                for stage in ("generation", "scoring"):
                    timings[stage] = timings.get(stage, 0.0) + run.timings.get(stage, 0.0)
                rs = run.axes[lexicon.axis].responses
                assert rs is not None
                n_different = sum(ra.response != rb.response for ra, rb in rs)
                n_distinct = len({r.response for r in (*rs.a, *rs.b)})
                record = _finished(folder)
                models[name] = ComparedModel(
                    name=name,
                    debias=configs[name].debias,
                    checkpoint=str(folder),
                    trained=trained,
                    training=MappingProxyType(asdict(configs[name])),
                    training_seconds=None if record is None else record.seconds,
                    validation=MappingProxyType({} if record is None else dict(record.validation)),
                    run=run,
                    n_different=n_different,
                    n_distinct=n_distinct,
                )
        t0 = time.perf_counter()
        baseline = next(iter(models))
        changes = {name: compare_runs(out / baseline, out / name) for name in models if name != baseline}
        timings["compare"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - started
        files = {
            "table_md": str(out / "table7.md"),
            "table_csv": str(out / "table7.csv"),
            "results": str(out / "results.json"),
            "pairs": str(out / _PAIRS_FILE),
            **{name: str(out / name) for name in models},
        }
        comparison = DebiasComparison(
            axis=lexicon.axis,
            groups=lexicon.groups,
            n_pairs=len(pairs),
            models=MappingProxyType(models),
            corpus=configs["baseline"].corpus or corpus,
            eval_corpus=evaluated,
            eval_split=eval_split,
            seed=seed,
            mode="custom" if train_config is not None else ("quick" if quick else "full"),
            timings=MappingProxyType(timings),
            files=MappingProxyType(files),
            changes=MappingProxyType(changes),
        )
        write_comparison(comparison, out)
        return comparison
