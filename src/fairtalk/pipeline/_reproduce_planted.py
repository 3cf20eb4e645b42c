"""``reproduce_planted()``: a bias of known size, recovered by the audit and removed by CDA and WER.

Part 1 audits planted models (:mod:`fairtalk.pipeline._planted`) at each rate on the held-out
pairs and sets each recovered gap beside its truth. Part 2 plants a bias in builtin:chitchat's
train split (:func:`fairtalk.debias.planted.plant_corpus`: replies to group-B contexts replaced
with probability ``corpus_rate``), writes it to the cache as JSON Lines, and runs
:func:`reproduce_debias` on it: baseline, CDA and WER Seq2Seq models trained on the same planted
corpus, audited on the same held-out pairs, each debiased model compared with the baseline.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fairtalk.corpora import read_corpus
from fairtalk.counterfactual import Swapper
from fairtalk.debias.planted import plant_corpus, write_planted
from fairtalk.errors import InputError, SpecError
from fairtalk.files import check_output_folder
from fairtalk.lexicons import load_lexicon
from fairtalk.models import DecodingSettings, Responder, load_responder
from fairtalk.models.planted import PLANTED_REPLIES
from fairtalk.pairs import build_pairs
from fairtalk.pipeline._planted import PLANTED_RATES, debiased_rows, planted_gaps
from fairtalk.pipeline._reproduce import reproduce_debias
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.report.planted import PLANTED_FILES, write_planted_report
from fairtalk.results import DebiasComparison
from fairtalk.results.planted import PlantedRecovery
from fairtalk.training.loops import TrainConfig

__all__ = ["PLANTED_CONFIGS", "reproduce_planted"]

_LOG = logging.getLogger(__name__)
_CORPUS = "builtin:chitchat"
_SMALL = {"emb_dim": 64, "hidden": 128, "layers": 1, "dropout": 0.1}
#: Per mode: the planted corpus (``corpus_rate``: the share of group-B replies replaced; ``keep_other``: the
#: share of dialogues without an axis word kept), the Seq2Seq run (TrainConfig overrides: a 1 x 128 LSTM
#: on one torch thread) and the pairs audited (None: all 1,470 held-out gender pairs). Quick: 8,000 of the
#: 13,348 train dialogues that mention a gender word, one epoch; full: all of them plus a tenth of the others
#: (about 24k), two epochs. Measured in bench/README.md (planted bias).
PLANTED_CONFIGS: dict[str, dict[str, Any]] = {
    "quick": {"corpus_rate": 0.5, "keep_other": 0.0, "n_pairs": None,
              "training": {"epochs": 1, "max_dialogues": 8000, "max_vocab": 4000, "val_size": 300, "batch_size": 64,
                           "lr": 3e-3, "max_context_len": 20, "max_response_len": 16, "threads": 1, "sizes": _SMALL}},
    "full": {"corpus_rate": 0.5, "keep_other": 0.1, "n_pairs": None,
             "training": {"epochs": 2, "max_vocab": 6000, "val_size": 1000, "batch_size": 64, "lr": 3e-3,
                          "max_context_len": 20, "max_response_len": 16, "threads": 1, "sizes": _SMALL}},
}  # fmt: skip
_MSG_RATES = "planted rates must be in [0, 1], got {rates!r}"
_MSG_FEW_PAIRS = "the held-out split gave {n} {axis} pair(s); need at least 2"


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


def _train_on_planted_corpus(
    config: TrainConfig, swapper: Swapper, *, q: float, keep_other: float, seed: int, out: Path, cache: Path,
    n_pairs: int | None, n_resamples: int, report_formats: Iterable[str] | None, progress: ProgressCallback | None,
    timings: dict[str, float], settings: DecodingSettings | None,
) -> tuple[DebiasComparison, dict[str, int]]:  # fmt: skip
    """Write the planted corpus to the cache and run ``reproduce_debias`` on it; the comparison and the planting's counts."""
    t0 = time.perf_counter()
    cache.mkdir(parents=True, exist_ok=True)
    corpus_file = cache / f"planted-q{q:g}-keep{keep_other:g}-seed{seed}.jsonl"
    planting = plant_corpus(read_corpus(_CORPUS, split="train"), swapper, rate=q, replies=PLANTED_REPLIES, seed=seed,
                            keep_other=keep_other)  # fmt: skip
    summary = write_planted(planting, corpus_file)
    _LOG.info("planted corpus: %d of %d group-B dialogues replaced (q = %g) -> %s", summary.n_planted,
              summary.n_group_b, q, corpus_file)  # fmt: skip
    spec = f"jsonl:{corpus_file}"
    config = replace(config, corpus=spec, axis=swapper.lexicon.axis, debias="none")
    debias = reproduce_debias(out_dir=out / "debias", corpus=spec, eval_corpus=_CORPUS, train_config=config,
                              cache_dir=cache, n_pairs=n_pairs, seed=seed, n_resamples=n_resamples,
                              report_formats=report_formats, progress=progress, settings=settings)  # fmt: skip
    timings["planted corpus"] = time.perf_counter() - t0
    return debias, {k: v for k, v in asdict(summary).items() if isinstance(v, int)}


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
        (``table7.md`` and one report per model, as ``reproduce debias`` writes them).
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
    if n_pairs is not None and n_pairs < 2:
        raise SpecError(f"n_pairs must be at least 2, not {n_pairs}")
    started = time.perf_counter()
    out = Path(out_dir)
    check_output_folder(out_dir, replaces=PLANTED_FILES)
    cache = out / "cache" if cache_dir is None else Path(cache_dir)
    lexicon = load_lexicon("gender")
    swapper = Swapper(lexicon, seed=seed)
    reporter = ProgressReporter(progress_callback(progress))
    timings: dict[str, float] = {}

    pair_set = build_pairs(read_corpus(_CORPUS, split="heldout"), swapper, limit=n_pairs, seed=seed)
    pairs = list(pair_set)
    if len(pairs) < 2:
        raise InputError(_MSG_FEW_PAIRS.format(n=len(pairs), axis=lexicon.axis))
    config = TrainConfig(model="seq2seq", seed=seed, **mode["training"]) if train_config is None else train_config
    with _torch_threads(config.threads):  # the planted models' base and the Seq2Seq runs alike
        base, base_name = _base(base_model)
        _LOG.info("planted models: %s at rates %s on %d pairs", base_name, ", ".join(f"{r:g}" for r in rates), len(pairs))
        t0 = time.perf_counter()
        with base:
            planted = planted_gaps(pairs, pair_set.coverage, swapper, base, rates=rates, seed=seed, reporter=reporter,
                                   n_resamples=n_resamples, out_dir=out / "planted", base_name=base_name)  # fmt: skip
        timings["planted models"] = time.perf_counter() - t0
        debias, counts = (None, {}) if not train else _train_on_planted_corpus(
            config, swapper, q=q, keep_other=mode["keep_other"], seed=seed, out=out, cache=cache, n_pairs=n_pairs,
            n_resamples=n_resamples, report_formats=report_formats, progress=progress, timings=timings,
            settings=settings)  # fmt: skip

    timings["total"] = time.perf_counter() - started
    files = {kind: str(path) for kind, path in zip(("md", "csv", "json", "png", "html"), (out / f for f in PLANTED_FILES),
                                                    strict=True)}  # fmt: skip
    result = PlantedRecovery(
        axis=lexicon.axis, groups=lexicon.groups, base_model=base_name, n_pairs=len(pairs), seed=seed,
        mode="custom" if train_config is not None else ("quick" if quick else "full"), planted=planted,
        corpus_rate=q if train else None, corpus=MappingProxyType(counts),
        debiased=() if debias is None else debiased_rows(debias), debias=debias,
        timings=MappingProxyType(timings), files=MappingProxyType(files),
    )  # fmt: skip
    write_planted_report(result, out)
    return result
