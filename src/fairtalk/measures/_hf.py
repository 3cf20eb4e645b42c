"""A batched Hugging Face text classifier for the measures; transformers and torch load on first use."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.measures._text import package_version
from fairtalk.progress import no_third_party_bars

__all__ = ["HFTextClassifier"]

_MSG_MISSING = "the Hugging Face scorer {model!r} needs transformers and torch: pip install 'fairtalk[hf]'"
_MSG_LOAD = "cannot load the Hugging Face classifier {model!r}: {error}"


class HFTextClassifier:
    """Class probabilities from a ``AutoModelForSequenceClassification`` checkpoint (hub id or path).

    The model loads on the first :meth:`probabilities` call. Texts are sorted by length
    and run in batches of ``batch_size`` (truncated to ``max_length`` tokens); the output
    rows come back in input order. Probabilities are a softmax over the labels, or an
    element-wise sigmoid when the config says ``problem_type="multi_label_classification"``
    or the model has a single output.
    """

    def __init__(self, model: str, *, batch_size: int = 64, max_length: int = 128, device: str = "auto") -> None:
        self.model_name = model
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)
        self.device = device
        self._loaded: tuple[object, object, object] | None = None

    @property
    def version(self) -> str:
        """Model name plus the transformers and torch versions."""
        return f"{self.model_name} (transformers {package_version('transformers')}, torch {package_version('torch')})"

    def _load(self) -> tuple[object, object, object]:
        if self._loaded is None:
            try:
                import torch
                from transformers import (
                    AutoModelForSequenceClassification,
                    AutoTokenizer,
                )
            except ImportError as exc:
                raise FairtalkError(_MSG_MISSING.format(model=self.model_name)) from exc
            device = self.device
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            try:
                with no_third_party_bars():  # the library never draws
                    tokenizer = AutoTokenizer.from_pretrained(self.model_name)
                    model = AutoModelForSequenceClassification.from_pretrained(self.model_name)
            except (OSError, ValueError) as exc:
                raise SpecError(_MSG_LOAD.format(model=self.model_name, error=exc)) from exc
            model.eval().to(device)
            self._loaded = (torch, tokenizer, model)
        return self._loaded

    @property
    def labels(self) -> tuple[str, ...]:
        """The model's labels, by output index (loads the model)."""
        _, _, model = self._load()
        id2label = model.config.id2label  # type: ignore[attr-defined]
        return tuple(str(id2label[i]) for i in range(model.config.num_labels))  # type: ignore[attr-defined]

    @property
    def multi_label(self) -> bool:
        """Whether outputs are independent sigmoids rather than one softmax (loads the model)."""
        _, _, model = self._load()
        config = model.config  # type: ignore[attr-defined]
        return bool(config.num_labels == 1 or config.problem_type == "multi_label_classification")

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """An ``(len(texts), n_labels)`` array of class probabilities."""
        torch, tokenizer, model = self._load()
        n_labels = len(self.labels)
        out = np.zeros((len(texts), n_labels), dtype=np.float64)
        if not texts:
            return out
        sigmoid = self.multi_label
        order = np.argsort([len(t) for t in texts], kind="stable")
        device = next(model.parameters()).device  # type: ignore[attr-defined]
        with torch.inference_mode():  # type: ignore[attr-defined]
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                batch = tokenizer(  # type: ignore[operator]
                    [texts[i] for i in rows],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(device)
                logits = model(**batch).logits.float()  # type: ignore[operator]
                probs = torch.sigmoid(logits) if sigmoid else torch.softmax(logits, dim=-1)  # type: ignore[attr-defined]
                out[rows] = probs.cpu().numpy()
        return out
