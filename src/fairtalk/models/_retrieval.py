"""``retrieval:POOL``: a retrieval model answering with the best-scoring candidate of a pool.

The pool is a text file with one candidate response per line (blank lines skipped),
or a ``.jsonl`` file whose objects hold ``"response"`` (or ``"text"``). An encoder
maps texts to row vectors; a context's score for each candidate is the dot
product of their (L2-normalised) vectors, computed for a whole batch as one matrix
product. Greedy decoding returns the top candidate (ties: the earliest in the pool);
sampling draws from ``softmax(score / temperature)`` over the ``top_k`` best
(default 10), seeded per item.

The built-in encoders are ``tfidf`` (default) and ``bow`` (binary bag of words),
fitted on the pool. Any object with ``fit(pool)``, ``encode(texts)`` returning a
dense or scipy-sparse matrix, and a ``fingerprint`` string can be passed as
``encoder=``; the next release's Transformer ranker plugs in there.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from fairtalk._jsonl import numbered_lines, open_input, read_objects
from fairtalk.errors import InputError, SpecError
from fairtalk.models._base import (
    DecodingSettings,
    ModelFactory,
    Responder,
    Stream,
    check_batch,
    make_fingerprint,
)

__all__ = ["BagOfWordsEncoder", "Encoder", "RetrievalOptions", "RetrievalResponder", "read_pool"]

_MSG_EMPTY = "candidate pool has no candidates"
_MSG_FIELD = "expected an object with a 'response' or 'text' string"
_MSG_ENCODER = "unknown retrieval encoder {name!r}"
_TOKEN = re.compile(r"\w+")
_DEFAULT_TOP_K = 10
_CHUNK = 512


@dataclass(frozen=True, slots=True)
class RetrievalOptions:
    """Options of ``retrieval:POOL``: the built-in ``encoder`` and the ``name`` in the fingerprint."""

    encoder: Literal["tfidf", "bow"] = "tfidf"
    name: str | None = None


class Encoder(Protocol):
    """Maps texts to row vectors; fitted on the candidate pool first."""

    @property
    def fingerprint(self) -> str:
        """A stable string naming the encoder and its settings."""
        ...

    def fit(self, pool: Sequence[str]) -> Encoder:
        """Fit on the candidate pool; returns the fitted encoder."""
        ...

    def encode(self, texts: Sequence[str]) -> Any:
        """One row vector per text."""
        ...


class BagOfWordsEncoder:
    """Lower-cased word counts (``idf=True``: TF-IDF; ``binary=True``: presence), L2-normalised."""

    def __init__(self, *, idf: bool = True, binary: bool = False) -> None:
        self.idf = idf
        self.binary = binary
        self.vocabulary: dict[str, int] = {}
        self.weights: np.ndarray = np.zeros(0)

    @property
    def fingerprint(self) -> str:
        """Name of the weighting scheme (the pool itself is hashed by the responder)."""
        return "tfidf" if self.idf else ("bow-binary" if self.binary else "bow")

    def _counts(self, texts: Sequence[str], *, grow: bool) -> Any:
        from scipy import sparse

        rows, cols = [], []
        for i, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                j = self.vocabulary.get(token)
                if j is None and grow:
                    j = self.vocabulary[token] = len(self.vocabulary)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
        data = np.ones(len(rows), dtype=np.float64)
        m = sparse.csr_matrix((data, (rows, cols)), shape=(len(texts), len(self.vocabulary)))
        m.sum_duplicates()
        if self.binary:
            m.data[:] = 1.0
        return m

    def fit(self, pool: Sequence[str]) -> BagOfWordsEncoder:
        """Build the vocabulary (and idf weights) from the pool."""
        self.vocabulary = {}
        counts = self._counts(pool, grow=True)
        if self.idf:
            df = np.bincount(counts.indices, minlength=len(self.vocabulary))
            self.weights = np.log((1 + len(pool)) / (1 + df)) + 1.0
        else:
            self.weights = np.ones(len(self.vocabulary))
        return self

    def encode(self, texts: Sequence[str]) -> Any:
        """Return an L2-normalised sparse matrix, one row per text (unknown words ignored)."""
        from scipy import sparse

        m = self._counts(texts, grow=False) @ sparse.diags(self.weights)
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norms) @ m)


_ENCODERS = {"tfidf": lambda: BagOfWordsEncoder(idf=True), "bow": lambda: BagOfWordsEncoder(idf=False, binary=True)}


def read_pool(path: str | os.PathLike[str]) -> tuple[tuple[str, ...], str]:
    """Read candidates from a text file (one a line) or JSONL (``response`` or ``text``); return them and the sha256."""
    digest = hashlib.sha256()
    candidates: list[str] = []
    if Path(path).suffix == ".jsonl":
        for number, obj in read_objects(path, what="candidate pool", digest=digest):
            text = obj.get("response", obj.get("text"))
            if not isinstance(text, str):
                raise InputError(_MSG_FIELD, path=str(path), line=number)
            candidates.append(text.strip())
    else:
        with open_input(path, what="candidate pool") as handle:
            candidates = [line.strip() for _, line in numbered_lines(handle, str(path), digest) if line.strip()]
    if not candidates:
        raise InputError(_MSG_EMPTY, path=str(path))
    return tuple(candidates), digest.hexdigest()


class RetrievalResponder(Responder, ModelFactory[RetrievalOptions]):
    """Answer each context with the best-scoring candidate from a fixed pool."""

    def __init__(
        self,
        pool: Sequence[str] | str | os.PathLike[str],
        *,
        encoder: str | Encoder = "tfidf",
        name: str | None = None,
    ) -> None:
        if isinstance(pool, str | os.PathLike):
            self.candidates, pool_hash = read_pool(pool)
            self.name = name or Path(pool).name
            self.input_paths = (os.fspath(pool),)
        else:
            self.candidates = tuple(pool)
            if not self.candidates:
                raise InputError(_MSG_EMPTY)
            pool_hash = hashlib.sha256("\n".join(self.candidates).encode()).hexdigest()
            self.name = name or "pool"
        if isinstance(encoder, str):
            factory = _ENCODERS.get(encoder)
            if factory is None:
                raise SpecError(_MSG_ENCODER.format(name=encoder), choices=_ENCODERS, given=encoder)
            encoder = factory()
        self.encoder = encoder.fit(self.candidates)
        self._pool_matrix = self.encoder.encode(self.candidates)
        self._fingerprint = make_fingerprint("retrieval", self.name, pool=pool_hash[:16], encoder=self.encoder.fingerprint)

    @classmethod
    def options_for(cls, target: str) -> type[RetrievalOptions]:
        """The options this adapter takes."""
        return RetrievalOptions

    @classmethod
    def from_spec(cls, target: str, options: RetrievalOptions | None = None) -> RetrievalResponder:
        """Build from ``POOL`` (what follows ``retrieval:``) and its options (``encoder=tfidf|bow``, ``name``)."""
        options = options or RetrievalOptions()
        return cls(target, encoder=options.encoder, name=options.name)

    @property
    def fingerprint(self) -> str:
        """Pool name, pool hash and encoder fingerprint."""
        return self._fingerprint

    def scores(self, contexts: Sequence[str]) -> np.ndarray:
        """Return the (n_contexts, n_candidates) score matrix, in the encoder's precision."""
        s = self.encoder.encode(contexts) @ self._pool_matrix.T
        return np.asarray(s.toarray() if hasattr(s, "toarray") else s)

    def respond_stream(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> Stream:
        """Answer every context of the call, longest first, ``_CHUNK`` at a time; yield ``(index, answer)`` per chunk.

        A run store hands a streaming model all its misses in one call, so a neural encoder sees a
        whole run's contexts at once: sorted by length (and text, so repeats sit together), its
        batches carry little padding and each distinct context is encoded once. Longest first,
        the first batch needs the largest buffers and every later one fits in memory already
        freed (shortest first, each batch needed a little more than any before it, and the
        process grew by some 400 MB over the bare audit's contexts). The answers are those of
        :meth:`respond`; each is stored as its chunk finishes.
        """
        check_batch(contexts, seeds)
        order = sorted(range(len(contexts)), key=lambda i: (-len(contexts[i]), contexts[i]))
        for start in range(0, len(order), _CHUNK):
            chunk = order[start : start + _CHUNK]
            answers = self.respond([contexts[i] for i in chunk], settings, seeds=[seeds[i] for i in chunk])
            yield from zip(chunk, answers)

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Return the best candidate (or a seeded sample among the top ones) per context."""
        check_batch(contexts, seeds)
        out: list[str] = []
        for start in range(0, len(contexts), _CHUNK):
            scores = self.scores(contexts[start : start + _CHUNK])
            if not settings.do_sample:
                out.extend(self.candidates[j] for j in scores.argmax(axis=1))
                continue
            k = min(settings.top_k or _DEFAULT_TOP_K, scores.shape[1])
            for row, seed in zip(scores, seeds[start : start + _CHUNK]):
                top = np.argsort(-row, kind="stable")[:k]
                logits = row[top].astype(np.float64) / settings.temperature
                p = np.exp(logits - logits.max())
                rng = np.random.default_rng(seed)
                out.append(self.candidates[top[rng.choice(k, p=p / p.sum())]])
        return out
