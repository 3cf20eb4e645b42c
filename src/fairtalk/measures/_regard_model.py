"""fairtalk's own regard classifier: TF-IDF (word 1-2 grams + character 2-5 grams) plus VADER, and logistic regression.

The features are two TF-IDF blocks and a small lexicon block: VADER's negative, positive and
compound scores of the text, times ``lexicon_weight`` (0 turns the block off). The lexicon
block carries general sentiment knowledge that a few thousand labelled sentences cannot, which
helps on long, rambling model continuations.

Trained with scikit-learn, saved without pickle: ``config.json``, ``vocabulary.json`` and
``weights.npz`` (read with ``allow_pickle=False``); prediction rebuilds the TF-IDF features
from the vocabulary as ``TfidfVectorizer`` does (sublinear tf, idf, L2 normalisation).
A sentence-embedding variant is :mod:`fairtalk.measures._regard_embed`; :func:`load_regard_model`
reads either kind of folder. Labelled data: ``label<TAB>text``, labels -1 (negative),
0 (neutral), 1 (positive), 2 (other); identity terms are masked as ``XYZ`` before training.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fairtalk.errors import FairtalkError, InputError, SpecError
from fairtalk.files import staged, write_text_atomic
from fairtalk.measures._linear import (
    LABEL_NAMES,
    LABEL_VALUES,
    LinearClassifier,
    TrainReport,
    check_trainable,
    train_report,
)
from fairtalk.measures._shape import SHAPE_FEATURES, shape_features

__all__ = [
    "DEFAULT_C",
    "DEFAULT_LEXICON_WEIGHT",
    "ENCODERS",
    "FORMAT",
    "LABEL_NAMES",
    "LABEL_VALUES",
    "RegardModel",
    "TrainReport",
    "lexicon_features",
    "load_regard_model",
    "read_labelled",
    "train_regard_model",
]

FORMAT = "fairtalk-regard-tfidf-lr"
_BLOCKS: dict[str, dict[str, Any]] = {
    "word": {"analyzer": "word", "ngram_range": (1, 2), "min_df": 1},
    "char": {"analyzer": "char_wb", "ngram_range": (2, 5), "min_df": 2},
}
#: Inverse regularisation strength and lexicon-block weight of the shipped model (chosen by
#: cross-validation on the labelled set; see prompts/data/README.md).
DEFAULT_C = 10.0
DEFAULT_LEXICON_WEIGHT = 0.25
#: ``train_regard(encoder=...)`` choices (:mod:`fairtalk.measures._regard_train`).
ENCODERS: tuple[str, ...] = ("tfidf", "minilm", "minilm-ft")
_LEXICON = {"name": "vader", "features": ["neg", "pos", "compound"]}
_SHAPED = {"name": "vader+shape", "features": ["neg", "pos", "compound", *SHAPE_FEATURES]}

_MSG_LABEL = "label must be -1, 0, 1 or 2, got {label!r}"
_MSG_LINE = "expected label<TAB>text"
_MSG_COLUMNS = "expected label<TAB>text ({n} columns)"
_MSG_BLANK_TEXT = "the text after label<TAB> is blank"
_MSG_EMPTY = "no labelled examples"
_MSG_FORMAT = "not a fairtalk regard model (config.json format is {found!r}, expected {FORMAT!r})"
_MSG_MISSING_SKLEARN = "training and using the regard classifier need scikit-learn: pip install scikit-learn"
_MSG_MISSING_VADER = "the regard classifier's lexicon features need vaderSentiment: pip install vaderSentiment"
_MSG_WEIGHT = "lexicon_weight must be >= 0, got {given!r}"
_ANALYZER: list[Any] = []


def read_labelled(path: str | os.PathLike[str]) -> tuple[list[str], list[int]]:
    """Read ``label<TAB>text`` lines (blank lines skipped); InputError with path:line otherwise.

    A line of more than two columns (a text is never folded with another column) or with a blank
    text is an error, as a line without a tab is.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # a BOM is no part of the first line
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read labelled data: {exc}", path=str(path)) from exc
    texts, labels = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        label, tab, text = line.partition("\t")
        if not tab:
            raise InputError(_MSG_LINE, path=str(path), line=number)
        if "\t" in text:
            raise InputError(_MSG_COLUMNS.format(n=line.count("\t") + 1), path=str(path), line=number)
        if label.strip() not in ("-1", "0", "1", "2"):
            raise InputError(_MSG_LABEL.format(label=label), path=str(path), line=number)
        if not text.strip():
            raise InputError(_MSG_BLANK_TEXT, path=str(path), line=number)
        labels.append(int(label))
        texts.append(text.strip())
    if not texts:
        raise InputError(_MSG_EMPTY, path=str(path))
    return texts, labels


def _sklearn() -> Any:
    try:
        import sklearn  # noqa: F401
        from sklearn.feature_extraction import text
    except ImportError as exc:  # pragma: no cover - scikit-learn comes with alt-profanity-check
        raise FairtalkError(_MSG_MISSING_SKLEARN) from exc
    return text


def lexicon_features(texts: list[str], shape: bool = False) -> np.ndarray:
    """VADER's negative, positive and compound scores per text, ``(len(texts), 3)``, then the shape features."""
    if not _ANALYZER:
        try:
            from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
        except ImportError as exc:  # pragma: no cover - a base dependency
            raise FairtalkError(_MSG_MISSING_VADER) from exc
        _ANALYZER.append(SentimentIntensityAnalyzer())
    scores = map(_ANALYZER[0].polarity_scores, texts)
    vader = np.array([[d["neg"], d["pos"], d["compound"]] for d in scores], dtype=np.float64).reshape(-1, 3)
    return np.hstack([vader, shape_features(texts)]) if shape else vader


def _weighted_lexicon(texts: Any, weight: float = 1.0, shape: bool = False) -> np.ndarray:
    return lexicon_features(list(texts), shape) * weight


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes (the labelled set's version in a model's config)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class RegardModel(LinearClassifier):
    """A trained classifier: vocabularies and idf per block, coefficients, classes (label values)."""

    vocabularies: dict[str, tuple[str, ...]]
    idf: dict[str, np.ndarray]
    coef: np.ndarray
    intercept: np.ndarray
    classes: tuple[int, ...]
    config: dict[str, Any] = field(default_factory=dict)
    lexicon_weight: float = 0.0
    shape: bool = False

    def features(self, texts: list[str]) -> Any:
        """The feature matrix (scipy sparse CSR: TF-IDF blocks, then the lexicon block), as at training time."""
        from scipy import sparse

        text_module = _sklearn()
        blocks = []
        for name, options in _BLOCKS.items():
            vocabulary = {term: i for i, term in enumerate(self.vocabularies[name])}
            counts = text_module.CountVectorizer(
                vocabulary=vocabulary, lowercase=True, analyzer=options["analyzer"], ngram_range=options["ngram_range"]
            ).transform(texts)
            counts = counts.astype(np.float64).tocsr()
            counts.data = 1.0 + np.log(counts.data)
            weighted = counts.multiply(self.idf[name][None, :]).tocsr()
            norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
            norms[norms == 0] = 1.0
            blocks.append(sparse.diags(1.0 / norms) @ weighted)
        if self.lexicon_weight > 0:
            blocks.append(sparse.csr_matrix(_weighted_lexicon(texts, self.lexicon_weight, self.shape)))
        return sparse.hstack(blocks, format="csr")

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write ``config.json``, ``vocabulary.json`` and ``weights.npz`` into ``directory``, swapped in together."""
        out = Path(directory)
        config = {
            "format": FORMAT,
            "version": 1,
            "classes": list(self.classes),
            "blocks": {k: {**v, "ngram_range": list(v["ngram_range"])} for k, v in _BLOCKS.items()},
            "sublinear_tf": True,
            "lowercase": True,
            **(
                {"lexicon": {**(_SHAPED if self.shape else _LEXICON), "weight": self.lexicon_weight}}
                if self.lexicon_weight > 0
                else {}
            ),
            **self.config,
        }
        with staged(out) as staging:
            write_text_atomic(staging / "config.json", json.dumps(config, indent=2, ensure_ascii=False) + "\n")
            write_text_atomic(
                staging / "vocabulary.json", json.dumps({k: list(v) for k, v in self.vocabularies.items()}, ensure_ascii=False)
            )
            arrays: dict[str, Any] = {
                "coef": self.coef.astype(np.float32),
                "intercept": self.intercept,
                **{f"idf_{k}": v for k, v in self.idf.items()},
            }
            np.savez_compressed(staging / "weights.npz", **arrays)
        return out

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> RegardModel:
        """Read a model saved by :meth:`save` (InputError when the folder is not one)."""
        folder = Path(directory)
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            vocabularies = json.loads((folder / "vocabulary.json").read_text(encoding="utf-8"))
            with np.load(folder / "weights.npz", allow_pickle=False) as weights:
                arrays = {k: weights[k] for k in weights.files}
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the regard model: {exc}", path=str(folder)) from exc
        if config.get("format") != FORMAT:
            raise InputError(_MSG_FORMAT.format(found=config.get("format"), FORMAT=FORMAT), path=str(folder))
        fixed = ("format", "version", "classes", "blocks", "sublinear_tf", "lowercase", "lexicon")
        extra = {k: v for k, v in config.items() if k not in fixed}
        return cls(
            vocabularies={k: tuple(v) for k, v in vocabularies.items()},
            idf={k: arrays[f"idf_{k}"] for k in _BLOCKS},
            coef=arrays["coef"].astype(np.float64),
            intercept=arrays["intercept"].astype(np.float64),
            classes=tuple(int(c) for c in config["classes"]),
            config=extra,
            lexicon_weight=float(config.get("lexicon", {}).get("weight", 0.0)),
            shape="repetition" in config.get("lexicon", {}).get("features", ()),
        )


def load_regard_model(directory: str | os.PathLike[str]) -> Any:
    """Read a saved regard classifier of either kind (TF-IDF or sentence-embedding) by its config format."""
    folder = Path(directory)
    try:
        found = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("format")
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(f"cannot read the regard model: {exc}", path=str(folder)) from exc
    from fairtalk.measures import _regard_embed as regard_embed
    from fairtalk.measures import _regard_finetuned as regard_finetuned

    if found == regard_embed.FORMAT:
        return regard_embed.EmbeddingRegardModel.load(folder)
    if found == regard_finetuned.FORMAT:
        return regard_finetuned.FinetunedRegardModel.load(folder)
    return RegardModel.load(folder)


def _pipeline(c: float, seed: int, lexicon_weight: float = 0.0, shape: bool = True) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.preprocessing import FunctionTransformer

    text_module = _sklearn()
    blocks: list[tuple[str, Any]] = [
        (name, text_module.TfidfVectorizer(sublinear_tf=True, lowercase=True, **options)) for name, options in _BLOCKS.items()
    ]
    if lexicon_weight > 0:
        blocks.append(("lexicon", FunctionTransformer(_weighted_lexicon, kw_args={"weight": lexicon_weight, "shape": shape})))
    return Pipeline([("features", FeatureUnion(blocks)), ("lr", LogisticRegression(C=c, max_iter=3000, random_state=seed))])


def train_regard_model(
    texts: list[str],
    labels: list[int],
    *,
    c: float = DEFAULT_C,
    cv: int = 5,
    seed: int = 0,
    source: str = "",
    lexicon_weight: float = DEFAULT_LEXICON_WEIGHT,
) -> tuple[RegardModel, TrainReport]:
    """Train the TF-IDF (+ VADER and shape features) logistic-regression classifier and cross-validate it.

    ``texts`` are masked (``XYZ ...``), ``labels`` -1..2; ``c`` the inverse regularisation,
    ``cv`` the stratified folds of the reported scores (shuffled with ``seed``), and
    ``lexicon_weight`` the weight of the VADER + shape block (0: TF-IDF only).

    Raises
    ------
    InputError
        Fewer than two labels, or fewer than ``cv`` examples of some label.
    """
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    if not lexicon_weight >= 0:
        raise SpecError(_MSG_WEIGHT.format(given=lexicon_weight))
    counts = check_trainable(labels, cv)
    y = np.asarray(labels)
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    predicted = cross_val_predict(_pipeline(c, seed, lexicon_weight), texts, y, cv=folds)
    report = train_report(y, predicted, counts, cv)
    pipeline = _pipeline(c, seed, lexicon_weight).fit(texts, y)
    union, lr = pipeline.named_steps["features"], pipeline.named_steps["lr"]
    vectorizers = {k: v for k, v in union.transformer_list if k in _BLOCKS}
    vocabularies, idf = {}, {}
    for name, vectorizer in vectorizers.items():
        terms = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.__getitem__)
        vocabularies[name] = tuple(terms)
        idf[name] = vectorizer.idf_.astype(np.float64)
    coef, intercept = lr.coef_, lr.intercept_
    if coef.shape[0] == 1:  # binary: expand to two classes so that softmax applies
        coef, intercept = np.vstack([-coef / 2, coef / 2]), np.array([-intercept[0] / 2, intercept[0] / 2])
    model = RegardModel(
        vocabularies=vocabularies,
        idf=idf,
        coef=np.asarray(coef, dtype=np.float64),
        intercept=np.asarray(intercept, dtype=np.float64),
        classes=tuple(int(k) for k in lr.classes_),
        config={"c": c, "seed": seed, "training_data": source, "training": report.to_dict()},
        lexicon_weight=float(lexicon_weight),
        shape=True,
    )
    return model, report
