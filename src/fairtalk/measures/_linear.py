"""What the three regard classifiers share: the labels, a linear softmax classifier, and the training report.

``regard_model`` (TF-IDF), ``regard_embed`` (sentence embeddings) and ``regard_finetuned`` each
build on these; keeping them here lets those modules load one another without a cycle.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairtalk._codec import Codec
from fairtalk.errors import InputError

__all__ = ["LABEL_NAMES", "LABEL_VALUES", "LinearClassifier", "TrainReport", "check_trainable", "train_report"]

LABEL_VALUES: tuple[int, ...] = (-1, 0, 1, 2)
LABEL_NAMES: tuple[str, ...] = ("negative", "neutral", "positive", "other")
_MSG_FEW = "need at least {n} examples of each of at least two labels to train (found {counts})"
_MSG_FEW_FOLDS = (
    "need at least {n} examples of each of at least two labels for {n}-fold cross-validation (--cv {n}; found "
    "{counts}): give fewer folds"
)


@dataclass(frozen=True)
class TrainReport(Codec):
    """Cross-validated accuracy and macro-F1 of a training run, and the label counts."""

    n_examples: int
    n_by_label: dict[str, int]
    cv_folds: int
    cv_accuracy: float | None
    cv_macro_f1: float | None


class LinearClassifier:
    """Softmax over linear scores of ``features(texts)``; subclasses provide the features.

    Subclasses have ``coef`` (classes x features), ``intercept`` and ``classes`` (label values).
    """

    coef: np.ndarray
    intercept: np.ndarray
    classes: tuple[int, ...]

    def features(self, texts: list[str]) -> Any:
        """The feature matrix of ``texts``, as at training time."""
        raise NotImplementedError

    def probabilities(self, texts: list[str]) -> np.ndarray:
        """Class probabilities, ``(len(texts), len(classes))`` (softmax of the linear scores)."""
        if not texts:
            return np.zeros((0, len(self.classes)))
        scores = np.asarray(self.features(list(texts)) @ self.coef.T) + self.intercept[None, :]
        scores -= scores.max(axis=1, keepdims=True)
        exp = np.exp(scores)
        out: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
        return out

    def predict(self, texts: list[str]) -> np.ndarray:
        """The most probable label value (-1, 0, 1 or 2) per text."""
        if not texts:
            return np.zeros(0, dtype=np.int64)
        labels: np.ndarray = np.asarray(self.classes, dtype=np.int64)[self.probabilities(texts).argmax(axis=1)]
        return labels


def check_trainable(labels: list[int], cv: int, *, cross_validated: bool = True) -> Counter[int]:
    """The label counts; InputError unless at least two labels have ``cv`` examples each.

    ``cross_validated``: whether ``cv`` is the number of folds (the message then names it), or
    only the fewest examples of a label to train on.
    """
    counts = Counter(labels)
    if len(counts) < 2 or min(counts.values()) < cv:
        few = dict(sorted(counts.items()))
        folds = cross_validated and len(counts) >= 2
        raise InputError((_MSG_FEW_FOLDS if folds else _MSG_FEW).format(n=cv, counts=few))
    return counts


def train_report(y: np.ndarray, predicted: np.ndarray, counts: Counter[int], cv: int) -> TrainReport:
    """Cross-validated accuracy and macro-F1 of ``predicted`` against ``y``, with the label counts."""
    from sklearn.metrics import accuracy_score, f1_score

    return TrainReport(
        n_examples=len(y),
        n_by_label={LABEL_NAMES[LABEL_VALUES.index(k)]: int(v) for k, v in sorted(counts.items())},
        cv_folds=cv,
        cv_accuracy=float(accuracy_score(y, predicted)),
        cv_macro_f1=float(f1_score(y, predicted, average="macro")),
    )
