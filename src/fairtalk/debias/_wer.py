"""Word-embedding regularization (WER, paper 001 §4.2): the loss term ``k · Σ ||e_w − e_w'||₂``.

Adding :class:`EmbeddingRegularizer` to a training loss pulls each axis word's embedding towards
its counterpart's (``he`` / ``she``, ``father`` / ``mother``), so the model learns to treat the
two groups alike::

    reg = EmbeddingRegularizer.from_vocab(model.embedding, "gender", vocab, k=0.5)
    loss = task_loss + reg()

Words and tokens
----------------
A word (or multiword phrase) that maps to several tokens is represented by the **mean** of its
token embeddings. The token ids are resolved once, at construction, into a padded index matrix
and a mask, so each call is one gather and one reduction.

* :meth:`EmbeddingRegularizer.from_vocab` takes a ``vocab`` mapping (word -> id) or a callable
  (word -> list of ids). With a mapping, a term is looked up as written, then lowercased; a
  phrase not in the vocabulary as a whole is split on whitespace and each word looked up.
* :meth:`EmbeddingRegularizer.from_hf` takes a Hugging Face model (``get_input_embeddings()``)
  and its tokenizer. Byte-level BPE tokenizers (GPT-2, RoBERTa) give a word a different token
  after a space (``Ġhe``) than at the start of a text (``he``); most occurrences are mid-sentence.
  Each pair is therefore tied in both forms, bare and with a leading space, as two rows of the
  sum; the space form is dropped when it tokenizes like the bare form (WordPiece, most
  SentencePiece tokenizers). Tokens that decode to whitespace only (a lone ``▁``) are left out
  of a form's mean.

A pair is skipped, and counted in :attr:`~EmbeddingRegularizer.skipped`, when a side is out of
vocabulary (no ids, an id of the unknown token) or both sides map to the same tokens.

The embedding is referenced, not registered as a submodule: adding the regularizer to a model
does not duplicate the embedding's weights in ``state_dict``. Its index buffers follow the
embedding's device on each call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from fairtalk.errors import SpecError
from fairtalk.lexicons import Lexicon, load_lexicon

__all__ = ["EmbeddingRegularizer", "TokenIds"]

#: Word -> token ids: a vocabulary mapping or a function (empty list or None: out of vocabulary).
TokenIds = Mapping[str, int] | Callable[[str], Sequence[int] | None]

OUT_OF_VOCABULARY = "out of vocabulary"
SAME_TOKENS = "same tokens"

_MSG_K = "the WER coefficient k must be a finite number >= 0, got {value!r}"
_MSG_EMBEDDING = "expected a torch.nn.Embedding (or a module with a 2-D weight), got {type}"
_MSG_ID_RANGE = "token id {id} for {word!r} is outside the embedding's {n} rows"
_MSG_NO_IDS = "every term needs at least one token id"
_MSG_LEXICON = "expected a Lexicon or an axis name / lexicon path, got {type}"
_MSG_NO_INPUT_EMBEDDINGS = "{type} has no get_input_embeddings(); pass its embedding to from_vocab instead"


class EmbeddingRegularizer(torch.nn.Module):
    """The WER loss term ``k · Σ ||mean(e_a) − mean(e_b)||₂`` over the word pairs of an axis.

    Build it with :meth:`from_vocab` or :meth:`from_hf`; the constructor takes token ids directly.

    Parameters
    ----------
    embedding : torch.nn.Embedding
        The embedding to regularize (any module with a 2-D ``weight`` of one row per token).
    token_pairs : sequence of (ids_a, ids_b)
        One row of the sum each: the token ids of a group-A term and of its counterpart.
    k : float, default 0.5
        The coefficient (the paper uses 0.5).
    labels : sequence of (str, str), optional
        The word pair behind each row, for :attr:`pairs` and ``repr``.
    skipped : sequence of (str, str, str), optional
        Pairs left out as (word_a, word_b, reason), reported by :attr:`skipped`.

    Examples
    --------
    >>> import torch
    >>> embedding = torch.nn.Embedding(4, 3)
    >>> reg = EmbeddingRegularizer.from_vocab(embedding, "gender", {"he": 0, "she": 1, "man": 2}, k=0.5)
    >>> reg.n_pairs_used, reg.n_skipped > 0
    (1, True)
    >>> expected = 0.5 * torch.linalg.vector_norm(embedding.weight[0] - embedding.weight[1])
    >>> torch.allclose(reg(), expected)
    True
    """

    index: torch.Tensor
    mask: torch.Tensor

    def __init__(
        self,
        embedding: torch.nn.Module,
        token_pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
        *,
        k: float = 0.5,
        labels: Sequence[tuple[str, str]] | None = None,
        skipped: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        super().__init__()
        weight = getattr(embedding, "weight", None)
        if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
            raise TypeError(_MSG_EMBEDDING.format(type=type(embedding).__name__))
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k < 0:
            raise SpecError(_MSG_K.format(value=k))
        self.k = float(k)
        object.__setattr__(self, "_embedding", embedding)  # referenced, not a submodule
        rows = [list(ids) for pair in token_pairs for ids in pair]
        n_tokens = weight.shape[0]
        for row_ids in rows:
            if not row_ids:
                raise ValueError(_MSG_NO_IDS)
            for token in row_ids:
                if not 0 <= token < n_tokens:
                    raise ValueError(_MSG_ID_RANGE.format(id=token, word=row_ids, n=n_tokens))
        width = max((len(ids) for ids in rows), default=1)
        index = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.float32)
        for i, ids in enumerate(rows):
            index[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            mask[i, : len(ids)] = 1.0 / len(ids)  # mean weights: each row sums to 1
        # rows 0, 2, 4, ... are group-A terms; 1, 3, 5, ... their counterparts
        self.register_buffer("index", index, persistent=False)
        self.register_buffer("mask", mask, persistent=False)
        self._labels = tuple(labels) if labels is not None else tuple(("?", "?") for _ in token_pairs)
        self._skipped = tuple(skipped)

    # ------------------------------------------------------------------------------------
    # constructors

    @classmethod
    def from_vocab(
        cls,
        embedding: torch.nn.Module,
        lexicon: Lexicon | str,
        vocab: TokenIds,
        *,
        k: float = 0.5,
    ) -> EmbeddingRegularizer:
        """Regularize ``embedding`` over ``lexicon``'s pairs, with token ids from ``vocab``.

        Parameters
        ----------
        embedding : torch.nn.Embedding
            The embedding matrix, one row per token id.
        lexicon : Lexicon or str
            The word pairs, or an axis name / lexicon path for :func:`~fairtalk.lexicons.load_lexicon`.
        vocab : mapping of str to int, or callable
            Word -> id (a term is tried as written, lowercased, then word by word), or a
            function word -> ids (empty or None when out of vocabulary).
        k : float, default 0.5
            The coefficient.
        """
        resolve = vocab if callable(vocab) else _mapping_ids(vocab)
        return cls._build(embedding, _as_lexicon(lexicon), lambda word: [resolve(word)], k=k)

    @classmethod
    def from_hf(cls, model: Any, tokenizer: Any, lexicon: Lexicon | str, *, k: float = 0.5) -> EmbeddingRegularizer:
        """Regularize a Hugging Face model's input embeddings, with ids from its tokenizer.

        Each pair is tied in its bare and its leading-space form (see the module docstring);
        a side containing the tokenizer's unknown token is out of vocabulary.
        """
        if not hasattr(model, "get_input_embeddings"):
            raise TypeError(_MSG_NO_INPUT_EMBEDDINGS.format(type=type(model).__name__))
        return cls._build(model.get_input_embeddings(), _as_lexicon(lexicon), _hf_forms(tokenizer), k=k)

    @classmethod
    def _build(
        cls,
        embedding: torch.nn.Module,
        lexicon: Lexicon,
        forms: Callable[[str], list[Sequence[int] | None]],
        *,
        k: float,
    ) -> EmbeddingRegularizer:
        """Resolve each pair's forms to ids; keep the forms where both sides are known and differ."""
        token_pairs: list[tuple[list[int], list[int]]] = []
        labels: list[tuple[str, str]] = []
        skipped: list[tuple[str, str, str]] = []
        for pair in lexicon.pairs:
            rows: list[tuple[list[int], list[int]]] = []
            reason = OUT_OF_VOCABULARY
            for ids_a, ids_b in zip(forms(pair.a), forms(pair.b)):
                if not ids_a or not ids_b:
                    continue
                row = (list(ids_a), list(ids_b))
                if row[0] == row[1]:
                    reason = SAME_TOKENS
                elif row not in rows:
                    rows.append(row)
            if not rows:
                skipped.append((pair.a, pair.b, reason))
                continue
            token_pairs += rows
            labels += [(pair.a, pair.b)] * len(rows)
        return cls(embedding, token_pairs, k=k, labels=labels, skipped=skipped)

    # ------------------------------------------------------------------------------------
    # the loss

    @property
    def embedding(self) -> torch.nn.Module:
        """The regularized embedding (referenced, not owned)."""
        embedding: torch.nn.Module = self.__dict__["_embedding"]  # set by object.__setattr__: not a submodule
        return embedding

    def distances(self) -> torch.Tensor:
        """The distance ``||mean(e_a) − mean(e_b)||₂`` of each row (a graph-connected 1-D tensor)."""
        weight = self.embedding.weight
        assert isinstance(weight, torch.Tensor)  # checked in __init__
        index, mask = self.index, self.mask
        if index.device != weight.device:
            index, mask = index.to(weight.device), mask.to(weight.device)
        if index.shape[0] == 0:
            return weight.new_zeros((0,))
        vectors = (weight[index] * mask.to(weight.dtype).unsqueeze(-1)).sum(dim=1)
        norms: torch.Tensor = torch.linalg.vector_norm((vectors[0::2] - vectors[1::2]).float(), dim=1)
        return norms

    def forward(self) -> torch.Tensor:
        """The loss term, a scalar tensor: ``k`` times the sum of :meth:`distances`."""
        return self.k * self.distances().sum()

    # ------------------------------------------------------------------------------------
    # reporting

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The lexicon pairs in use (one entry per pair, in lexicon order)."""
        return tuple(dict.fromkeys(self._labels))

    @property
    def n_pairs_used(self) -> int:
        """How many word pairs contribute to the loss."""
        return len(self.pairs)

    @property
    def n_rows(self) -> int:
        """How many terms the sum has (a pair may count in several forms, see :meth:`from_hf`)."""
        return int(self.index.shape[0]) // 2

    @property
    def skipped(self) -> tuple[tuple[str, str, str], ...]:
        """Pairs left out, as (word_a, word_b, reason): ``"out of vocabulary"`` or ``"same tokens"``."""
        return self._skipped

    @property
    def n_skipped(self) -> int:
        """How many word pairs were left out."""
        return len(self._skipped)

    def extra_repr(self) -> str:
        """The summary shown in the module's repr."""
        return f"k={self.k}, n_pairs_used={self.n_pairs_used}, n_rows={self.n_rows}, n_skipped={self.n_skipped}"


def _as_lexicon(lexicon: Lexicon | str) -> Lexicon:
    if isinstance(lexicon, Lexicon):
        return lexicon
    if isinstance(lexicon, str):
        return load_lexicon(lexicon)
    raise TypeError(_MSG_LEXICON.format(type=type(lexicon).__name__))


def _mapping_ids(vocab: Mapping[str, int]) -> Callable[[str], list[int] | None]:
    """Word -> ids from a vocabulary mapping: the term as written, lowercased, then word by word."""

    def lookup(word: str) -> int | None:
        for form in (word, word.lower()):
            if form in vocab:
                return int(vocab[form])
        return None

    def resolve(term: str) -> list[int] | None:
        whole = lookup(term)
        if whole is not None:
            return [whole]
        ids = [lookup(word) for word in term.split()]
        if not ids or any(token is None for token in ids):
            return None
        return [token for token in ids if token is not None]

    return resolve


def _hf_forms(tokenizer: Any) -> Callable[[str], list[Sequence[int] | None]]:
    """Word -> [bare ids, leading-space ids] with a Hugging Face tokenizer (None: unknown)."""
    unk = getattr(tokenizer, "unk_token_id", None)

    def encode(text: str, *, strip_blank: bool) -> list[int] | None:
        ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
        if strip_blank and len(ids) > 1:
            kept = [token for token in ids if tokenizer.decode([token]).strip()]
            ids = kept or ids
        if not ids or (unk is not None and unk in ids):
            return None
        return ids

    def forms(term: str) -> list[Sequence[int] | None]:
        return [encode(term, strip_blank=False), encode(" " + term, strip_blank=True)]

    return forms
