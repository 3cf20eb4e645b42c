"""``reproduce_planted()``: a bias of known size, recovered by the audit and removed by CDA and WER.

Part 1 audits planted models (:mod:`fairtalk.experiments._planted`) at each rate on the held-out
pairs and sets each recovered gap beside its truth. Part 2 plants a bias in builtin:chitchat's
train split (:func:`fairtalk.debias._planted.plant_corpus`: replies to group-B contexts replaced
with probability ``corpus_rate``), writes it to the cache as JSON Lines, and runs
:func:`reproduce_debias` on it: baseline, CDA and WER Seq2Seq models trained on the same planted
corpus, audited on the same held-out pairs, each debiased model compared with the baseline. Then
the same for retrieval rankers (:func:`compare_debiased`), whose candidate pool is every distinct
training response, so it holds the planted replies; how many it holds is recorded per ranker.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fairtalk.config import AuditConfig
from fairtalk.corpora import read_corpus
from fairtalk.counterfactual import Swapper
from fairtalk.debias import plant_corpus, write_planted
from fairtalk.errors import InputError, OutputError, SpecError
from fairtalk.experiments._planted import PLANTED_RATES, debiased_rows, planted_gaps
from fairtalk.experiments._reproduce import compare_debiased
from fairtalk.files import check_folder_kind, check_output_folder, output_scope
from fairtalk.lexicons import load_lexicon
from fairtalk.models import PLANTED_REPLIES, DecodingSettings, Responder, load_responder
from fairtalk.pairs import build_pairs
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.report import PLANTED_FILES, write_planted_report
from fairtalk.results import DebiasComparison, PlantedRecovery, RankerPool
from fairtalk.training import POOL, TrainConfig

__all__ = ["PLANTED_CONFIGS", "reproduce_planted"]

_LOG = logging.getLogger(__name__)
_CORPUS = "builtin:chitchat"
_SMALL = {"emb_dim": 64, "hidden": 128, "layers": 1, "dropout": 0.1}
_SMALL_RANKER = {"dim": 128, "heads": 2, "ffn": 256, "layers": 1, "dropout": 0.0}
#: Per mode: the planted corpus (``corpus_rate``: the share of group-B replies replaced; ``keep_other``: the
#: share of dialogues without an axis word kept), the Seq2Seq run (TrainConfig overrides: a 1 x 128 LSTM
#: on one torch thread) and the pairs audited (None: all 1,470 held-out gender pairs). Quick: 8,000 of the
#: 13,348 train dialogues that mention a gender word, one epoch; full: all of them plus a tenth of the others
#: (about 24k), two epochs. ``retrieval``: the rankers' overrides of the same run (the same dialogues): a 1-layer,
#: 128-d Transformer, three epochs at Adam 1e-3 (at 3e-3 it collapses onto a few dozen replies), and a pool large
#: enough to hold every distinct training response, so the planted replies are among the candidates. Measured in
#: bench/README.md (planted bias).
PLANTED_CONFIGS: dict[str, dict[str, Any]] = {
    "quick": {
        "corpus_rate": 0.5,
        "keep_other": 0.0,
        "n_pairs": None,
        "training": {
            "epochs": 1,
            "max_dialogues": 8000,
            "max_vocab": 4000,
            "val_size": 300,
            "batch_size": 64,
            "lr": 3e-3,
            "max_context_len": 20,
            "max_response_len": 16,
            "threads": 1,
            "sizes": _SMALL,
        },
        "retrieval": {"epochs": 3, "lr": 1e-3, "pool_size": 50_000, "sizes": _SMALL_RANKER},
    },
    "full": {
        "corpus_rate": 0.5,
        "keep_other": 0.1,
        "n_pairs": None,
        "training": {
            "epochs": 2,
            "max_vocab": 6000,
            "val_size": 1000,
            "batch_size": 64,
            "lr": 3e-3,
            "max_context_len": 20,
            "max_response_len": 16,
            "threads": 1,
            "sizes": _SMALL,
        },
        "retrieval": {"epochs": 3, "lr": 1e-3, "pool_size": 50_000, "sizes": _SMALL_RANKER},
    },
}
_MSG_RATES = "planted rates must be in [0, 1], got {rates!r}"
_MSG_RANKER = "retrieval_config must be a retrieval TrainConfig, got one for {model!r}"
_MSG_FEW_PAIRS = "the held-out split gave {n} {axis} pair(s); need at least 2"
_MSG_CACHE_IS_OUT = (
    "the cache folder is the output folder; the cache (planted corpus, checkpoints, run store) needs a folder of "
    "its own: leave the cache out (it is then OUTPUT/cache) or give it another folder"
)


@contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """Training and generation on ``n`` torch threads (the TrainConfig's), restored afterwards.

    On a shared, busy machine two threads spin against each other and run many times slower than one.
    """
    try:
        import torch
    except ImportError:  # a base model without torch, and no training: nothing to set
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _write_planted_corpus(swapper: Swapper, *, q: float, keep_other: float, seed: int, cache: Path) -> tuple[str, dict[str, int]]:
    """Plant the corpus and write it to the cache: its ``jsonl:`` spec and the planting's counts."""
    cache.mkdir(parents=True, exist_ok=True)
    corpus_file = cache / f"planted-q{q:g}-keep{keep_other:g}-seed{seed}.jsonl"
    planting = plant_corpus(
        read_corpus(_CORPUS, split="train"), swapper, rate=q, replies=PLANTED_REPLIES, seed=seed, keep_other=keep_other
    )
    summary = write_planted(planting, corpus_file)
    _LOG.info(
        "planted corpus: %d of %d group-B dialogues replaced (q = %g) -> %s", summary.n_planted, summary.n_group_b, q, corpus_file
    )
    return f"jsonl:{corpus_file}", {k: v for k, v in asdict(summary).items() if isinstance(v, int)}


def _pools(comparison: DebiasComparison) -> dict[str, RankerPool]:
    """Per ranker: the planted replies in its candidate pool, and the audited pairs' sides it answered with one."""
    out: dict[str, RankerPool] = {}
    replies = set(PLANTED_REPLIES)
    for name, model in comparison.models.items():
        pool = set(json.loads((Path(model.checkpoint) / POOL).read_text(encoding="utf-8")))
        responses = model.run.axes[comparison.axis].responses
        sides = [] if responses is None else [(ra.response in replies, rb.response in replies) for ra, rb in responses]
        out[name] = RankerPool(
            n_held=len(replies & pool),
            n_replies=len(replies),
            n_candidates=len(pool),
            n_chosen_a=sum(a for a, _ in sides),
            n_chosen_b=sum(b for _, b in sides),
        )
    return out


def _train_on_planted_corpus(
    configs: Sequence[TrainConfig],
    swapper: Swapper,
    *,
    q: float,
    keep_other: float,
    seed: int,
    out: Path,
    cache: Path,
    n_pairs: int | None,
    n_resamples: int,
    report_formats: Iterable[str] | None,
    progress: ProgressCallback | None,
    timings: dict[str, float],
    settings: DecodingSettings | None,
) -> tuple[dict[str, DebiasComparison], dict[str, int]]:
    """Write the planted corpus, then train and compare baseline, CDA and WER per config's model on it.

    Returns each architecture's comparison (Seq2Seq's in ``out/debias``, the rankers' in
    ``out/debias-retrieval``) and the planting's counts.
    """
    t0 = time.perf_counter()
    spec, counts = _write_planted_corpus(swapper, q=q, keep_other=keep_other, seed=seed, cache=cache)
    timings["planted corpus"] = time.perf_counter() - t0
    comparisons: dict[str, DebiasComparison] = {}
    for config in configs:
        t0 = time.perf_counter()
        folder = out / ("debias" if config.model == "seq2seq" else f"debias-{config.model}")
        comparisons[config.model] = compare_debiased(
            config.model,
            out_dir=folder,
            corpus=spec,
            eval_corpus=_CORPUS,
            train_config=replace(config, corpus=spec, axis=swapper.lexicon.axis, debias="none"),
            cache_dir=cache,
            _own_corpus=spec,  # the planted corpus is the cache's own file
            n_pairs=n_pairs,
            seed=seed,
            n_resamples=n_resamples,
            report_formats=report_formats,
            progress=progress,
            settings=settings,
        )
        timings[config.model] = time.perf_counter() - t0
    return comparisons, counts


def _check_folders(out: Path, cache: Path) -> None:
    """Raise OutputError, before any work, for an output or cache folder that holds another command's outputs, or one folder for both."""
    if out.resolve() == cache.resolve():
        raise OutputError(_MSG_CACHE_IS_OUT, path=str(cache))
    check_folder_kind(out, "planted", option="the output folder", writes="reproduce planted's results need")
    check_folder_kind(cache, None, option="the cache folder", writes="the cache needs")


def _base(model: str | Responder) -> tuple[Responder, str]:
    if isinstance(model, Responder):
        return model, model.fingerprint
    return load_responder(model), model


def reproduce_planted(
    *,
    out_dir: str | os.PathLike[str],
    quick: bool = False,
    seed: int = 0,
    rates: Sequence[float] = PLANTED_RATES,
    base_model: str | Responder = "builtin:retrieval",
    n_pairs: int | None = None,
    corpus_rate: float | None = None,
    train: bool = True,
    train_config: TrainConfig | None = None,
    retrieval: bool = True,
    retrieval_config: TrainConfig | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    settings: DecodingSettings | None = None,
    n_resamples: int = 2000,
    report_formats: Iterable[str] | None = None,
    progress: ProgressCallback | None = None,
) -> PlantedRecovery:
    """Plant gaps of known size and check that the audit recovers them and that CDA and WER remove them.

    Parameters
    ----------
    out_dir : path
        Gets ``planted.md``, ``planted.csv``, ``results.json``, ``planted.png`` and ``report.html``;
        ``planted/p<rate>/`` holds each planted model's audit and ``debias/`` the trained models'
        (``table7.md`` and one report per model, as ``reproduce debias`` writes them), ``debias-retrieval/`` the rankers'.
    quick : bool
        The quick configuration of :data:`PLANTED_CONFIGS` (minutes on 2 cores), else the full one.
    seed : int
        Seeds the planting (models and corpus), the pairs, training and the bootstrap.
    rates : sequence of float
        The planted models' rates (default 0, 1, 2, 5 and 10 points).
    base_model : str or Responder
        The model the planted ones wrap (default ``builtin:retrieval``, the reference ranker).
    n_pairs : int, optional
        Held-out pairs audited (default: all of builtin:chitchat's held-out gender pairs).
    corpus_rate : float, optional
        The planted corpus' replacement probability (default: the mode's).
    train : bool
        False skips the planted corpus and its models (part 1 only).
    train_config : TrainConfig, optional
        The Seq2Seq run (its ``corpus``, ``axis`` and ``debias`` are set here); overrides the mode's.
    retrieval : bool
        Also train baseline, CDA and WER retrieval rankers on the planted corpus (``out_dir/debias-retrieval``).
    retrieval_config : TrainConfig, optional
        The rankers' run (a ``retrieval`` one); default: the Seq2Seq run with the mode's ``retrieval`` overrides.
    cache_dir : path, optional
        The planted corpus, checkpoints and run store (default ``out_dir/cache``); a finished
        checkpoint of the same corpus and configuration is reused.
    settings : DecodingSettings, optional
        How the trained models answer (default: the mode's, :data:`PLANTED_CONFIGS`).
    n_resamples : int
        Bootstrap resamples of the scoring.
    report_formats : iterable of str, optional
        Formats of each trained model's report (default all).
    progress : callable, optional
        Receives a :class:`~fairtalk.progress.ProgressEvent` per answer and per training batch.

    Returns
    -------
    PlantedRecovery

    Raises
    ------
    FairtalkError
        A bad option or rate; fewer than two pairs.
    """
    if not rates or any(isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r <= 1 for r in rates):
        raise SpecError(_MSG_RATES.format(rates=list(rates)))
    mode = PLANTED_CONFIGS["quick" if quick else "full"]
    q = mode["corpus_rate"] if corpus_rate is None else corpus_rate
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 <= q <= 1:
        raise SpecError(f"corpus_rate must be in [0, 1], got {q!r}")
    n_pairs = mode["n_pairs"] if n_pairs is None else n_pairs
    AuditConfig(n_pairs=n_pairs)  # checked as every audit checks it: a whole number ≥ 2 (or None, every pair)
    config = TrainConfig(model="seq2seq", seed=seed, **mode["training"]) if train_config is None else train_config
    if retrieval_config is None:
        retrieval_config = replace(config, model="retrieval", **mode["retrieval"])
    elif retrieval_config.model != "retrieval":
        raise SpecError(_MSG_RANKER.format(model=retrieval_config.model))
    configs = (config, retrieval_config) if retrieval else (config,)
    with output_scope():  # out_dir stays locked from its check to the end: no other fairtalk run writes it meanwhile
        started = time.perf_counter()
        out = Path(out_dir)
        check_output_folder(out_dir, replaces=PLANTED_FILES)
        cache = out / "cache" if cache_dir is None else Path(cache_dir)
        check_output_folder(cache if cache_dir is None else cache_dir, hold=False)  # a file, a device or a FIFO: refused now
        _check_folders(out, cache)
        lexicon = load_lexicon("gender")
        swapper = Swapper(lexicon, seed=seed)
        reporter = ProgressReporter(progress_callback(progress))
        timings: dict[str, float] = {}

        pair_set = build_pairs(read_corpus(_CORPUS, split="heldout"), swapper, limit=n_pairs, seed=seed)
        pairs = list(pair_set)
        if len(pairs) < 2:
            raise InputError(_MSG_FEW_PAIRS.format(n=len(pairs), axis=lexicon.axis))
        with _torch_threads(config.threads):  # the planted models' base and the Seq2Seq runs alike
            base, base_name = _base(base_model)
            _LOG.info("planted models: %s at rates %s on %d pairs", base_name, ", ".join(f"{r:g}" for r in rates), len(pairs))
            t0 = time.perf_counter()
            with base:
                planted = planted_gaps(
                    pairs,
                    pair_set.coverage,
                    swapper,
                    base,
                    rates=rates,
                    seed=seed,
                    reporter=reporter,
                    n_resamples=n_resamples,
                    out_dir=out / "planted",
                    base_name=base_name,
                )
            timings["planted models"] = time.perf_counter() - t0
            comparisons, counts = (
                ({}, {})
                if not train
                else _train_on_planted_corpus(
                    configs,
                    swapper,
                    q=q,
                    keep_other=mode["keep_other"],
                    seed=seed,
                    out=out,
                    cache=cache,
                    n_pairs=n_pairs,
                    n_resamples=n_resamples,
                    report_formats=report_formats,
                    progress=progress,
                    timings=timings,
                    settings=settings,
                )
            )

        timings["total"] = time.perf_counter() - started
        debias, rankers = comparisons.get("seq2seq"), comparisons.get("retrieval")
        debiased = tuple(row for kind, c in comparisons.items() for row in debiased_rows(c, architecture=kind))
        files = {
            kind: str(path)
            for kind, path in zip(("md", "csv", "json", "png", "html"), (out / f for f in PLANTED_FILES), strict=True)
        }
        result = PlantedRecovery(
            axis=lexicon.axis,
            groups=lexicon.groups,
            base_model=base_name,
            n_pairs=len(pairs),
            seed=seed,
            mode="custom" if train_config is not None else ("quick" if quick else "full"),
            planted=planted,
            corpus_rate=q if train else None,
            corpus=MappingProxyType(counts),
            debiased=debiased,
            debias=debias,
            debias_retrieval=rankers,
            pools=MappingProxyType({} if rankers is None else _pools(rankers)),
            timings=MappingProxyType(timings),
            files=MappingProxyType(files),
        )
        write_planted_report(result, out)
        return result
