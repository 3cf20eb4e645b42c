"""The regard measure (Sheng et al. 2019): how a text makes its subject group look, negative to positive.

Before classification every identity term is masked as ``XYZ``, as Sheng et al. masked the
group phrase: ``The gay man said she was tired`` -> ``XYZ said XYZ was tired``. The mask hides
the group phrases and their plurals, the identity words in them, the built-in identity
vocabulary (orientation, race, gendered nouns) and every gender-lexicon word, pronouns included
(:func:`fairtalk.lexicons._identity.identity_terms`), so that no scorer, built-in or ``hf:``, can
react to the group rather than to what the text says. Pass ``mask_terms`` for other groups, or
``mask=False`` to classify the raw text.

Scorers:

- ``builtin`` (default): fairtalk's own classifier, all-MiniLM-L6-v2 fine-tuned on a labelled
  set written for fairtalk (``measures/data/regard-minilm``, :mod:`~fairtalk.measures._regard_finetuned`;
  about 200 texts/s on two CPU cores);
- ``builtin:tfidf``: the earlier TF-IDF + VADER + logistic-regression classifier
  (``measures/data/regard``), about 100 times faster and less accurate;
- a folder saved by ``fairtalk regard train`` (``path:DIR`` or the bare path), of either
  kind: TF-IDF, or sentence embeddings (``--encoder minilm``, needs ``fairtalk[regard]``);
- ``hf:MODEL_OR_PATH``: a transformers sequence classifier (such as a Sheng-style regard
  BERT); its labels are mapped by name (``neg``/``neu``/``pos``/``other``) or by
  ``label_map`` (``"LABEL_0=negative,LABEL_1=neutral,..."``).

Keys (rates, 0/1 per response): ``regard_negative``, ``regard_neutral``, ``regard_positive``,
``regard_other``. The mean regard of a set of responses on the -1/0/1 scale is
``positive - negative`` over the non-"other" responses; :meth:`Regard.labels` gives the
per-response labels (-1, 0, 1, 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from fairtalk.errors import SpecError
from fairtalk.lexicons import identity_masker, identity_terms, mask_identity
from fairtalk.measures._base import Measure
from fairtalk.measures._text import check_texts, package_version

__all__ = ["BUILTIN_MODEL", "BUILTIN_MODELS", "DEFAULT_MASK_TERMS", "Regard", "mask_groups"]

_VERSION = "1"
#: Folders of the shipped classifiers by scorer name; ``builtin`` is the default.
BUILTIN_MODELS: Mapping[str, Path] = MappingProxyType(
    {
        "builtin": Path(__file__).resolve().parent / "data" / "regard-minilm",
        "builtin:tfidf": Path(__file__).resolve().parent / "data" / "regard",
    }
)
#: Folder of the default shipped classifier.
BUILTIN_MODEL = BUILTIN_MODELS["builtin"]
#: The default groups of paper 004, whose identity terms are masked by default.
DEFAULT_GROUPS: tuple[str, ...] = ("man", "woman", "straight person", "gay person", "black person", "white person")
DEFAULT_MASK_TERMS: tuple[str, ...] = identity_terms(DEFAULT_GROUPS)
_LABEL_VALUES = (-1, 0, 1, 2)
_KEYS = ("regard_negative", "regard_neutral", "regard_positive", "regard_other")
_MSG_LABEL_MAP = "cannot map the classifier's label {label!r} to negative/neutral/positive/other; pass label_map"
_MSG_LABEL_MAP_SYNTAX = "label_map must look like 'LABEL_0=negative,LABEL_1=neutral', got {given!r}"
_NAMES = {"negative": -1, "neutral": 0, "positive": 1, "other": 2}


def mask_groups(text: str, terms: Sequence[str] = DEFAULT_MASK_TERMS, token: str = "XYZ") -> str:
    """Replace every identity term (with its determiner) by ``token``.

    Examples
    --------
    >>> mask_groups("The black person worked as a cook. Black people saw her there.")
    'XYZ worked as a cook. XYZ saw XYZ there.'
    """
    return mask_identity(text, terms, token)


def _label_value(name: str, label_map: Mapping[str, str]) -> int:
    if name in label_map:
        return _NAMES[label_map[name]]
    lowered = name.lower()
    for prefix, value in (("neg", -1), ("neu", 0), ("pos", 1), ("oth", 2)):
        if lowered.startswith(prefix):
            return value
    raise SpecError(_MSG_LABEL_MAP.format(label=name))


def _parse_label_map(spec: str | Mapping[str, str] | None) -> dict[str, str]:
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        items = dict(spec)
    else:
        items = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise SpecError(_MSG_LABEL_MAP_SYNTAX.format(given=spec))
            items[key.strip()] = value.strip()
    for value in items.values():
        if value not in _NAMES:
            raise SpecError(_MSG_LABEL_MAP_SYNTAX.format(given=spec), choices=_NAMES, given=value)
    return items


class Regard(Measure):
    """Regard rates per response: negative / neutral / positive / other (one of them is 1.0).

    Parameters
    ----------
    scorer : str
        ``"builtin"``, ``"builtin:tfidf"``, a model folder (``path:DIR`` or ``DIR``), or ``"hf:MODEL_OR_PATH"``.
    mask : bool
        Mask group mentions as ``XYZ`` before classifying.
    mask_terms : sequence of str, optional
        Terms to mask (default :data:`DEFAULT_MASK_TERMS`, the identity terms of the default
        groups; build others with :func:`~fairtalk.lexicons._identity.identity_terms`).
    label_map : str or mapping, optional
        For ``hf:`` models: model label -> negative/neutral/positive/other.
    batch_size : int
        Batch size of ``hf:`` models.

    Examples
    --------
    >>> regard = Regard()
    >>> regard.labels(["The man was known for his kindness and generosity to everyone in the town."]).tolist()
    [1]
    """

    name = "regard"
    keys = _KEYS
    kind: Literal["rate"] = "rate"
    higher_is_better: Mapping[str, bool | None] = MappingProxyType(
        {"regard_negative": False, "regard_neutral": None, "regard_positive": True, "regard_other": None}
    )

    def __init__(
        self,
        *,
        scorer: str = "builtin",
        mask: bool = True,
        mask_terms: Sequence[str] | None = None,
        label_map: str | Mapping[str, str] | None = None,
        batch_size: int = 64,
    ) -> None:
        self.scorer = str(scorer)
        self.mask = bool(mask)
        self.mask_terms = tuple(mask_terms) if mask_terms is not None else DEFAULT_MASK_TERMS
        self.label_map = _parse_label_map(label_map)
        self.batch_size = int(batch_size)
        self._backend: Any = None
        if not (self.scorer in BUILTIN_MODELS or self.scorer.startswith("hf:")):
            folder = Path(self.scorer.removeprefix("path:"))
            if not (folder / "config.json").is_file():
                raise SpecError(
                    f"unknown regard scorer {self.scorer!r}: not a model folder (no config.json)",
                    choices=(*BUILTIN_MODELS, "hf:MODEL_OR_PATH", "path:DIR"),
                )

    def __repr__(self) -> str:
        return f"Regard(scorer={self.scorer!r}, mask={self.mask!r})"

    @property
    def version(self) -> str:
        """The measure's version plus the scorer's."""
        if self.scorer.startswith("hf:") or self.scorer == "builtin":
            return f"{_VERSION} ({self.scorer}, transformers {package_version('transformers')})"
        return f"{_VERSION} ({self.scorer}, scikit-learn {package_version('scikit-learn')})"

    @property
    def config(self) -> Mapping[str, Any]:
        """Settings for the manifest."""
        return {"scorer": self.scorer, "mask": self.mask, "mask_terms": list(self.mask_terms), "label_map": self.label_map}

    def _load(self) -> Any:
        if self._backend is None:
            if self.scorer.startswith("hf:"):
                from fairtalk.measures._hf import HFTextClassifier

                self._backend = HFTextClassifier(self.scorer[3:], batch_size=self.batch_size)
            else:
                from fairtalk.measures._regard_model import load_regard_model

                folder = BUILTIN_MODELS.get(self.scorer) or Path(self.scorer.removeprefix("path:"))
                self._backend = load_regard_model(folder)
        return self._backend

    def prepare(self, texts: Sequence[str]) -> list[str]:
        """The texts as the classifier sees them (group mentions masked when ``mask``)."""
        if not self.mask:
            return list(texts)
        mask = identity_masker(self.mask_terms)
        return [mask(t) for t in texts]

    def labels(self, texts: Sequence[str]) -> np.ndarray:
        """The regard label per text: -1 negative, 0 neutral, 1 positive, 2 other."""
        texts = check_texts(texts)
        if not texts:
            return np.zeros(0, dtype=np.int64)
        prepared = self.prepare(texts)
        backend = self._load()
        if self.scorer.startswith("hf:"):
            values = np.array([_label_value(name, self.label_map) for name in backend.labels], dtype=np.int64)
            chosen: np.ndarray = values[backend.probabilities(prepared).argmax(axis=1)]
            return chosen
        predicted: np.ndarray = backend.predict(prepared)
        return predicted

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """One 0/1 array per key: which of negative / neutral / positive / other each text is."""
        labels = self.labels(texts)
        return {key: (labels == value).astype(np.float64) for key, value in zip(_KEYS, _LABEL_VALUES)}
