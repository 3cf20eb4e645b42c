"""Training loops of the reference models (paper 001 §3.1), with CDA and WER debiasing (§4).

:func:`train_model` reads context–response dialogues, holds out a validation slice by conversation,
optionally augments the rest with CDA, builds the vocabulary, trains, and writes a checkpoint
after every epoch (so an interrupted run still leaves the last finished epoch).

* ``seq2seq``: token cross-entropy with teacher forcing; each epoch reports the validation loss
  per token and its perplexity. ``debias="wer"`` adds ``k · Σ ||e_w − e_w'||₂`` over the axis'
  word pairs (:class:`fairtalk.debias.EmbeddingRegularizer`) on the shared embedding.
* ``retrieval``: cross-entropy over each batch's (B, B) score matrix (in-batch negatives); each
  epoch reports recall@1 and recall@10 among 100 candidates (the validation response and 99
  others). At the end a candidate pool is sampled from the training responses and encoded.

Determinism: the seed fixes torch's generator, the data order (numpy), the validation split,
the CDA choices and the pool. ``torch.use_deterministic_algorithms(True)`` is switched on for
the run (warn-only: a CPU op without a deterministic kernel warns instead of failing). Results
are bit-identical for the same seed, thread count and torch build; a different thread count
can change floating-point reduction order.
"""

from __future__ import annotations

import logging
import math
import random
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, replace
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.files import output_scope
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.records import Context
from fairtalk.training import _data as D
from fairtalk.training._checkpoints import check_checkpoint_folder, save_checkpoint
from fairtalk.training._config import DEBIAS, EpochStats, TrainConfig, TrainResult
from fairtalk.training._vocab import Vocab

__all__ = ["DEBIAS", "EpochStats", "TrainConfig", "TrainResult", "train_model"]

_N_CANDIDATES = 100
_MSG_LOG = (
    "train_model(log=...) is deprecated: its lines go to the 'fairtalk.training' logger at INFO "
    "(logging.basicConfig(level=logging.INFO) shows them); log= stops working in fairtalk 0.3"
)
_MSG_DIVERGED = (
    "training diverged in epoch {epoch}: not finite: {what} (try a smaller learning rate); "
    "no checkpoint was written for it: {kept}"
)
_MSG_OVERFLOW = (
    "training diverged in epoch {epoch}: the optimizer's step overflowed float32 at learning rate {lr:g} "
    "(Adam's first step is about ten times the rate; try a smaller learning rate); no checkpoint was written for it: {kept}"
)
_MSG_KEPT_NONE = "{out} holds no checkpoint of this run (an earlier one there is left as it was)"
_MSG_KEPT_EPOCH = "{out} holds this run's unfinished checkpoint of epoch {epoch}"
_MSG_WER_NO_PAIRS = (
    "WER ties no word pair, so nothing would be debiased: none of the {axis} axis' {n} word pairs has both words "
    "in the vocabulary (its {vocab} words, those seen at least {min_count} times in the training dialogues); train on "
    "more dialogues, or a corpus that uses the axis' words, or debias with CDA"
)
_LOG = logging.getLogger(__name__)


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)


def train_model(
    dialogues: Iterable[Context],
    config: TrainConfig,
    out_dir: str | Path,
    *,
    progress: ProgressCallback | None = None,
    log: Callable[[str], object] | None = None,
) -> TrainResult:
    """Train a reference model on context–response dialogues and write its checkpoint to ``out_dir``.

    Parameters
    ----------
    dialogues : iterable of Context
        Records with ``response`` (e.g. ``read_corpus("builtin:chitchat", split="train")``). Records
        without a response, or with a blank context, are left out and counted in the result
        (``n_no_response``, ``n_blank_context``).
    config : TrainConfig
        Model kind, sizes, seed, debiasing, epochs.
    out_dir : path
        Checkpoint directory (rewritten after each epoch).
    progress : callable, optional
        Receives a :class:`~fairtalk.progress.ProgressEvent` per training batch (stage ``"seq2seq epoch
        1/2"``, the running loss in ``metrics``). ``False`` means None; ``True`` (which drew bars
        here before) still works, with a FutureWarning, and draws nothing.
    log : callable, optional
        Deprecated (FutureWarning; removed in fairtalk 0.3): also receives each line logged to
        ``fairtalk.training`` at INFO (one per epoch, and WER's word pair count).

    Returns
    -------
    TrainResult

    Raises
    ------
    InputError
        ``config.debias`` is ``"cda"`` and ``dialogues`` is a corpus read from an augmented
        corpus fairtalk wrote (:func:`fairtalk.debias.check_not_augmented`): its twins would get twins.
    OutputError
        ``out_dir`` cannot hold the checkpoint (a file, the root, the home folder, or files of
        the user's under a checkpoint's names): refused before any training.
    FairtalkError
        Training diverged: an epoch ended with a loss, a validation figure or a weight (as
        stored in the checkpoint's dtype) that is not finite. That epoch's checkpoint is not
        written: ``out_dir`` keeps the previous epoch's, or what it held before the run.
    """
    if config.debias == "cda":  # twins of twins: refused before any work
        from fairtalk.debias import check_not_augmented

        check_not_augmented(dialogues, training=True)
    with output_scope():  # out_dir stays locked from its check to the last save: no other fairtalk run writes it meanwhile
        check_checkpoint_folder(out_dir, training=_settings(config))  # another run's checkpoint there is refused
        import torch

        callback = progress_callback(progress)
        if log is not None:
            warnings.warn(_MSG_LOG, FutureWarning, stacklevel=2)
        started = time.perf_counter()
        previous = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
        torch.set_num_threads(config.threads)
        torch.use_deterministic_algorithms(True, warn_only=True)
        try:
            _seed_everything(config.seed)
            read = D.count_dialogues(dialogues, max_dialogues=config.max_dialogues, seed=config.seed)
            split = D.split_dialogues(read.dialogues, val_size=config.val_size, seed=config.seed)
            if config.debias == "cda":
                split = D.augment_split(split, config.axis, seed=config.seed, corpus=config.corpus)
            texts = (t for p in split.train for t in (p.context, p.response))
            vocab = Vocab.build(texts, min_count=config.min_count, max_size=config.max_vocab)
            run = _Run(config, vocab, split, Path(out_dir), ProgressReporter(callback), log, started)
            return replace(run.fit(), n_read=read.n_read, n_no_response=read.n_no_response, n_blank_context=read.n_blank_context)
        finally:
            torch.set_num_threads(previous[0])
            torch.use_deterministic_algorithms(previous[1])


def _settings(config: TrainConfig) -> dict[str, Any]:
    """The training settings a checkpoint's ``config.json`` records (the learning rate used, not None)."""
    return asdict(replace(config, lr=config.learning_rate))


class _Run:
    """State of one training run (model, optimizer, data) and its epoch loop."""

    def __init__(
        self,
        config: TrainConfig,
        vocab: Vocab,
        split: D.DialogueSplit,
        out: Path,
        progress: ProgressReporter,
        log: Callable[[str], object] | None,
        started: float,
    ) -> None:
        import torch

        from fairtalk.training import _nets as nets

        self.config, self.vocab, self.split, self.out = config, vocab, split, out
        self.progress, self._log, self.started = progress, log, started
        self.rng = np.random.default_rng([config.seed, 2])
        enc = {"max_context_len": config.max_context_len, "max_response_len": config.max_response_len}
        self.train_ids = D.encode_pairs(split.train, vocab, **enc)
        self.val_ids = D.encode_pairs(split.validation, vocab, **enc)
        if config.model == "seq2seq":
            self.sizes = {**nets.SEQ2SEQ_SIZES, **config.sizes}
            self.net: Any = nets.Seq2Seq(len(vocab), **self.sizes)
        else:
            self.sizes = {**nets.RETRIEVAL_SIZES, **config.sizes}
            self.net = nets.TransformerRanker(len(vocab), **self.sizes)
        self.regularizer = None
        if config.debias == "wer":
            from fairtalk.debias import EmbeddingRegularizer

            self.regularizer = EmbeddingRegularizer.from_vocab(self.net.embedding, config.axis, vocab.words, k=config.wer_k)
            self.log(
                f"WER: {self.regularizer.n_pairs_used} word pairs tied (k={config.wer_k}), {self.regularizer.n_skipped} out of vocabulary"
            )
            if self.regularizer.n_pairs_used == 0:  # WER would train a plain model under the name of a debiased one
                raise SpecError(
                    _MSG_WER_NO_PAIRS.format(
                        axis=config.axis, n=self.regularizer.n_skipped, vocab=len(vocab), min_count=config.min_count
                    )
                )
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate)
        self.history: list[EpochStats] = []

    def log(self, line: str) -> None:
        """One line of the training log: to the ``fairtalk.training`` logger (and the deprecated ``log=``)."""
        _LOG.info("%s", line)
        if self._log is not None:
            self._log(line)

    def fit(self) -> TrainResult:
        """Run every epoch, validating and saving after each."""
        config = self.config
        lengths = [len(c) + len(r) for c, r in zip(*self.train_ids)]
        n_batches = -(-len(lengths) // config.batch_size)
        for epoch in range(1, config.epochs + 1):
            t0 = time.perf_counter()
            self.progress.start(f"{config.model} epoch {epoch}/{config.epochs}", n_batches, unit="batches")
            self.net.train()
            total = 0.0
            count = 0
            for index in D.batches(lengths, config.batch_size, self.rng):
                loss = self._step(index, epoch)
                total += loss
                count += 1
                self.progress.advance(1, loss=total / count)
            self.progress.finish()
            figures = self.validate()
            stats = EpochStats(epoch, total / max(count, 1), figures, time.perf_counter() - t0)
            shown = "  ".join(f"{k} {v:.4f}" for k, v in figures.items())
            self.log(
                f"epoch {epoch}/{config.epochs}: train loss {stats.train_loss:.4f}  validation {shown}  ({stats.seconds:.0f} s)"
            )
            self._check_finite(stats)
            self.history.append(stats)
            self.save(final=epoch == config.epochs)
        return self.result()

    def _check_finite(self, stats: EpochStats) -> None:
        """Raise FairtalkError, before the epoch is saved, when its loss, a figure or a weight (as saved) is not finite."""
        import torch

        dtype = getattr(torch, self.config.dtype)
        what = [
            *(["the training loss"] if not math.isfinite(stats.train_loss) else []),
            *(f"validation {k}" for k, v in stats.validation.items() if not math.isfinite(v)),
            *(
                [f"weights (in {self.config.dtype})"]
                if not all(bool(torch.isfinite(p.detach().to(dtype)).all()) for p in self.net.parameters())
                else []
            ),
        ]
        if what:
            raise FairtalkError(_MSG_DIVERGED.format(epoch=stats.epoch, what=", ".join(what), kept=self._kept()))

    def _kept(self) -> str:
        """What ``out`` holds when this epoch is not saved: the previous epoch's checkpoint, or what it held before."""
        done = len(self.history)
        return _MSG_KEPT_EPOCH.format(out=self.out, epoch=done) if done else _MSG_KEPT_NONE.format(out=self.out)

    def _tensors(self, index: np.ndarray, ids: tuple[list[list[int]], list[list[int]]]) -> tuple[Any, Any]:
        import torch

        contexts = torch.from_numpy(D.pad([ids[0][i] for i in index]))
        responses = torch.from_numpy(D.pad([ids[1][i] for i in index]))
        return contexts, responses

    def _loss(self, contexts: Any, responses: Any) -> Any:
        import torch
        from torch.nn import functional as F

        if self.config.model == "seq2seq":
            bos = torch.full((responses.shape[0], 1), self.vocab.bos_id, dtype=torch.long)
            tgt_in = torch.cat([bos, responses[:, :-1]], dim=1)
            tgt_in = tgt_in.masked_fill(tgt_in == self.vocab.eos_id, self.vocab.pad_id)
            logits = self.net(contexts, tgt_in)
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), responses.reshape(-1), ignore_index=self.vocab.pad_id)
        scores = self.net(contexts, responses[:, :-1].masked_fill(responses[:, :-1] == self.vocab.eos_id, 0))
        return F.cross_entropy(scores, torch.arange(scores.shape[0]))

    def _step(self, index: np.ndarray, epoch: int) -> float:
        """One training batch; the loss. A step that overflows float32 raises FairtalkError (training diverged)."""
        import torch

        contexts, responses = self._tensors(index, self.train_ids)
        loss = self._loss(contexts, responses)
        total = loss + self.regularizer() if self.regularizer is not None else loss
        self.optimizer.zero_grad(set_to_none=True)
        total.backward()
        if self.config.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.config.grad_clip)
        try:
            self.optimizer.step()
        except RuntimeError as error:  # Adam's step size, lr / (1 - beta1**step), cannot be converted to float32
            if "overflow" not in str(error):
                raise
            message = _MSG_OVERFLOW.format(epoch=epoch, lr=self.config.learning_rate, kept=self._kept())
            raise FairtalkError(message) from None
        return float(loss.detach())

    def validate(self) -> dict[str, float]:
        """Validation loss/perplexity (seq2seq) or recall@1/@10 among 100 candidates (retrieval)."""
        import torch

        self.net.eval()
        n = len(self.val_ids[0])
        with torch.no_grad():
            if self.config.model == "seq2seq":
                order = np.argsort([len(c) for c in self.val_ids[0]], kind="stable")
                total = tokens = 0.0
                for start in range(0, n, 256):
                    contexts, responses = self._tensors(order[start : start + 256], self.val_ids)
                    k = float((responses != self.vocab.pad_id).sum())
                    total += float(self._loss(contexts, responses)) * k
                    tokens += k
                loss = total / max(tokens, 1.0)
                return {"loss": loss, "perplexity": float(np.exp(min(loss, 50.0)))}
            hits1 = hits10 = blocks = 0.0
            # a fixed shuffle: consecutive pairs of one conversation would offer the previous turn
            shuffled = np.random.default_rng([self.config.seed, 4]).permutation(n)
            for start in range(0, n, _N_CANDIDATES):
                index = shuffled[start : start + _N_CANDIDATES]
                if len(index) < 2:
                    break
                contexts, responses = self._tensors(index, self.val_ids)
                scores = self.net(contexts, responses[:, :-1].masked_fill(responses[:, :-1] == self.vocab.eos_id, 0))
                rank = (scores > scores.diagonal().unsqueeze(1)).sum(dim=1)
                hits1 += float((rank < 1).float().sum())
                hits10 += float((rank < 10).float().sum())
                blocks += len(index)
            return {"recall@1": hits1 / max(blocks, 1.0), "recall@10": hits10 / max(blocks, 1.0)}

    def _pool(self) -> tuple[list[str], Any]:
        """Sample the candidate pool from the training responses (originals, distinct) and encode it."""
        from fairtalk.training._decoding import encode_texts

        seen: dict[str, None] = {}
        for p in self.split.train:
            seen.setdefault(p.response, None)
        distinct = list(seen)
        n = min(self.config.pool_size, len(distinct))
        chosen = np.sort(np.random.default_rng([self.config.seed, 3]).choice(len(distinct), n, replace=False))
        pool = [distinct[i] for i in chosen]
        return pool, encode_texts(self.net, self.vocab, pool, max_len=self.config.max_response_len)

    def save(self, *, final: bool) -> None:
        """Write the checkpoint (the pool is re-encoded each time: it depends on the weights)."""
        pool = vectors = None
        if self.config.model == "retrieval":
            pool, vectors = self._pool()
        save_checkpoint(
            self.out,
            config=self._record(final),
            vocab=self.vocab,
            state=self.net.state_dict(),
            dtype=self.config.dtype,
            pool=pool,
            pool_vectors=vectors,
        )

    def _record(self, final: bool) -> dict[str, Any]:
        try:
            version = metadata.version("fairtalk")
        except metadata.PackageNotFoundError:
            version = "unknown"
        import torch

        training = _settings(self.config)
        return {
            "model": self.config.model,
            "architecture": {**self.sizes, "vocab_size": len(self.vocab)},
            "training": training,
            "corpus": self.config.corpus,
            "seed": self.config.seed,
            "debias": self.config.debias,
            "epochs_done": len(self.history),
            "finished": final,
            "n_train": len(self.split.train),
            "n_validation": len(self.split.validation),
            "n_augmented": self.split.n_augmented,
            "n_parameters": sum(p.numel() for p in self.net.parameters()),
            "history": [asdict(h) for h in self.history],
            "training_seconds": round(time.perf_counter() - self.started, 1),
            "fairtalk_version": version,
            "torch_version": torch.__version__,
        }

    def result(self) -> TrainResult:
        """The run's summary."""
        return TrainResult(
            self.out,
            self.config,
            tuple(self.history),
            len(self.split.train),
            len(self.split.validation),
            self.split.n_augmented,
            len(self.vocab),
            sum(p.numel() for p in self.net.parameters()),
            time.perf_counter() - self.started,
            0 if self.regularizer is None else self.regularizer.n_pairs_used,
        )
