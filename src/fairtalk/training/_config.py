"""What a training run is: :class:`TrainConfig` in, :class:`EpochStats` per epoch, :class:`TrainResult` out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairtalk.errors import SpecError

__all__ = ["DEBIAS", "EpochStats", "TrainConfig", "TrainResult"]

#: The debiasing methods of paper 001 §4: none, counterfactual data augmentation, word embedding regularization.
DEBIAS = ("none", "cda", "wer")
_MSG_MODEL = "unknown model {model!r}"
_MSG_DEBIAS = "unknown debiasing method {debias!r}"
_MSG_POSITIVE = "{name} must be a positive integer, got {value!r}"
_DEFAULT_LR = {"seq2seq": 1e-3, "retrieval": 1e-3}
#: The largest learning rate taken: float32's largest finite value. The weights train in float32, and a larger
#: rate cannot be converted to it at all. What the optimizer can take is smaller: Adam's first step is
#: lr / (1 - beta1) = 10 x lr (beta1 = 0.9), so a rate above about 3.4e37 overflows float32 in that step; the training
#: loop reports such an overflow as "training diverged ... try a smaller learning rate", like a rate that blows the
#: weights up to inf.
MAX_LR = 3.4028234663852886e38
_MSG_LR = "lr must be a finite number > 0 and at most {most:.4g} (float32's largest, the weights' precision), got {value!r}"


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run; recorded in the checkpoint's config.json.

    ``sizes`` overrides the architecture defaults (:data:`~fairtalk.training._nets.SEQ2SEQ_SIZES`,
    :data:`~fairtalk.training._nets.RETRIEVAL_SIZES`). ``lr=None`` picks Adam 1e-3 for both models; the paper used SGD 1.0 and Adamax 1e-4 over far longer runs.
    """

    model: str
    epochs: int = 2
    seed: int = 0
    batch_size: int = 128
    lr: float | None = None
    grad_clip: float = 0.1
    debias: str = "none"
    wer_k: float = 0.5
    axis: str = "gender"
    max_dialogues: int | None = None
    max_vocab: int = 8000
    min_count: int = 3
    max_context_len: int = 30
    max_response_len: int = 25
    val_size: int = 2000
    pool_size: int = 16000
    threads: int = 2
    dtype: str = "float16"
    corpus: str = ""
    sizes: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.model not in ("seq2seq", "retrieval"):
            raise SpecError(_MSG_MODEL.format(model=self.model), choices=("seq2seq", "retrieval"), given=self.model)
        if self.debias not in DEBIAS:
            raise SpecError(_MSG_DEBIAS.format(debias=self.debias), choices=DEBIAS, given=self.debias)
        for name in (
            "epochs",
            "batch_size",
            "max_vocab",
            "min_count",
            "max_context_len",
            "max_response_len",
            "val_size",
            "pool_size",
            "threads",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SpecError(_MSG_POSITIVE.format(name=name, value=value))
        if self.max_dialogues is not None and (not isinstance(self.max_dialogues, int) or self.max_dialogues < 2):
            raise SpecError(f"max_dialogues must be >= 2, got {self.max_dialogues!r}")
        if not self.wer_k >= 0:
            raise SpecError(f"wer_k must be >= 0, got {self.wer_k!r}")
        if self.lr is not None and (
            isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)) or not 0 < self.lr <= MAX_LR
        ):  # nan fails too
            raise SpecError(_MSG_LR.format(most=MAX_LR, value=self.lr))

    @property
    def learning_rate(self) -> float:
        """The learning rate used (``lr`` or the model's default)."""
        return self.lr if self.lr is not None else _DEFAULT_LR[self.model]


@dataclass(frozen=True, slots=True)
class EpochStats:
    """One epoch: mean training loss, validation figures (``loss``/``perplexity`` or ``recall@1``/``recall@10``), seconds."""

    epoch: int
    train_loss: float
    validation: dict[str, float]
    seconds: float


@dataclass(frozen=True, slots=True)
class TrainResult:
    """A finished run: where the checkpoint is, per-epoch figures, sizes and time.

    ``n_read`` records came in; ``n_no_response`` of them (no or a blank response) and
    ``n_blank_context`` (a response to a blank context) were left out, not trained on. Lines a
    corpus reader skipped never reach :func:`train_model`: a :class:`~fairtalk.corpora.Corpus`
    counts them in its ``summary``.
    """

    path: Path
    config: TrainConfig
    epochs: tuple[EpochStats, ...]
    n_train: int
    n_validation: int
    n_augmented: int
    vocab_size: int
    n_parameters: int
    seconds: float
    #: WER runs: the axis' word pairs the regularizer tied (both words in the vocabulary); 0 for other runs.
    n_wer_pairs: int = 0
    #: Records given, and those left out for a missing response or a blank context.
    n_read: int = 0
    n_no_response: int = 0
    n_blank_context: int = 0

    def left_out_lines(self, *, reply_note: str = "") -> list[str]:
        """The records given but not trained on, a line per reason (none when every record was used).

        ``reply_note`` (the corpus reader's :meth:`~fairtalk.corpora.ReadSummary.reply_note`) says, in
        brackets, which of those without a response the reader kept without their reply: counted
        once, here, not again as a skipped line.
        """
        lines = []
        if self.n_no_response:
            lines.append(f"without a response {self.n_no_response:,}, left out" + (f" ({reply_note})" if reply_note else ""))
        if self.n_blank_context:
            lines.append(f"with a blank context {self.n_blank_context:,}, left out")
        return lines
