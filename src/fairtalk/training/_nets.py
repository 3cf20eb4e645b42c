"""Torch architectures of the reference models: a Seq2Seq LSTM generator and a Transformer ranker.

Paper 001 §3.1 (sizes there; ours are scaled down for 2 CPU cores, see :data:`SEQ2SEQ_SIZES`
and :data:`RETRIEVAL_SIZES`):

* :class:`Seq2Seq` — LSTM encoder–decoder. The encoder's last hidden and cell states (every
  layer) initialise the decoder. Encoder and decoder share one word embedding, and the output
  layer is tied to it (``logits = W_e · proj(h) + b``), which halves the parameters and makes
  the WER term act on the single embedding that both reading and writing use.
* :class:`TransformerRanker` — a Transformer encoder (sinusoidal positional encodings, post-norm
  layers, mean pooling over the non-pad tokens, L2 normalisation) that encodes contexts and
  candidate responses alike; a pair's score is ``scale · cos(head(context), candidate)``. The
  one extra linear ``head`` on the context side breaks the symmetry of a shared encoder, which
  otherwise scores a candidate identical to the context (the previous turn) highest.

Everything here is pure torch: no I/O, no fairtalk imports.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

__all__ = ["RETRIEVAL_SIZES", "SEQ2SEQ_SIZES", "Seq2Seq", "TransformerRanker"]

#: Default Seq2Seq sizes. Paper: 3 layers x 1024, GloVe 300. Ours: 2 x 256, embedding 128, a
#: tied 8k-word output layer -- 2.9M parameters (5.8 MB in fp16). One epoch over the chitchat
#: train split (106k pairs, batch 128) took 920 CPU-seconds on one thread (AMD EPYC), so the
#: default 2 epochs fit the 30-minute budget on 2 idle cores with room to spare.
SEQ2SEQ_SIZES = {"emb_dim": 128, "hidden": 256, "layers": 2, "dropout": 0.1}
#: Default ranker sizes: the paper's own (2 layers, 2 heads, 300-d embeddings, FFN 300, no dropout).
RETRIEVAL_SIZES = {"dim": 300, "heads": 2, "ffn": 300, "layers": 2, "dropout": 0.0, "max_len": 64, "scale": 20.0}


class Seq2Seq(nn.Module):
    """LSTM encoder–decoder with a shared, output-tied word embedding."""

    def __init__(
        self,
        vocab_size: int,
        *,
        emb_dim: int = 128,
        hidden: int = 256,
        layers: int = 2,
        dropout: float = 0.1,
        pad_id: int = 0,
        bos_id: int = 2,
        eos_id: int = 3,
    ) -> None:
        super().__init__()
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        inner = dropout if layers > 1 else 0.0
        self.encoder = nn.LSTM(emb_dim, hidden, layers, batch_first=True, dropout=inner)
        self.decoder = nn.LSTM(emb_dim, hidden, layers, batch_first=True, dropout=inner)
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(hidden, emb_dim)
        self.out_bias = nn.Parameter(torch.zeros(vocab_size))

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Run the encoder over right-padded ``src`` (B, S); return its final (h, c) per layer."""
        lengths = (src != self.pad_id).sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.dropout(self.embedding(src)), lengths, batch_first=True, enforce_sorted=False)
        state: tuple[torch.Tensor, torch.Tensor]
        _, state = self.encoder(packed)
        return state

    def logits(self, output: torch.Tensor) -> torch.Tensor:
        """Vocabulary logits from decoder outputs, through the tied embedding."""
        logits: torch.Tensor = self.proj(self.dropout(output)) @ self.embedding.weight.T + self.out_bias
        return logits

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits (B, T, V) for decoder inputs ``tgt_in`` (``<bos>`` + response)."""
        state = self.encode(src)
        output, _ = self.decoder(self.dropout(self.embedding(tgt_in)), state)
        return self.logits(output)

    def _step(
        self, tokens: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        output, state = self.decoder(self.embedding(tokens).unsqueeze(1), state)
        return torch.log_softmax(self.logits(output[:, 0]), dim=-1), state

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, *, max_len: int = 40) -> torch.Tensor:
        """Greedy decoding for a batch; returns (B, <= max_len) ids, ``<pad>`` after ``<eos>``."""
        return self.sample(src, max_len=max_len, generators=None)

    @torch.no_grad()
    def sample(
        self,
        src: torch.Tensor,
        *,
        max_len: int = 40,
        generators: list[torch.Generator] | None = None,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
    ) -> torch.Tensor:
        """Decode a batch step by step: argmax, or (with one generator per row) seeded sampling."""
        batch = src.shape[0]
        state = self.encode(src)
        tokens = torch.full((batch,), self.bos_id, dtype=torch.long)
        done = torch.zeros(batch, dtype=torch.bool)
        out: list[torch.Tensor] = []
        for _ in range(max_len):
            logp, state = self._step(tokens, state)
            logp[:, self.pad_id] = logp[:, self.bos_id] = -math.inf
            if generators is None:
                tokens = logp.argmax(dim=-1)
            else:
                probs = _filtered_probs(logp / temperature, top_k, top_p)
                tokens = torch.cat([torch.multinomial(probs[i], 1, generator=g) for i, g in enumerate(generators)])
            tokens = tokens.masked_fill(done, self.pad_id)
            out.append(tokens)
            done |= tokens == self.eos_id
            if bool(done.all()):
                break
        return torch.stack(out, dim=1)

    @torch.no_grad()
    def beam(self, src: torch.Tensor, *, beam_size: int = 4, max_len: int = 40, length_penalty: float = 1.0) -> torch.Tensor:
        """Batched beam search; the best finished hypothesis by ``logp / len**length_penalty`` per row."""
        batch, k = src.shape[0], beam_size
        h, c = self.encode(src)
        state = (h.repeat_interleave(k, dim=1), c.repeat_interleave(k, dim=1))
        scores = torch.full((batch, k), -math.inf)
        scores[:, 0] = 0.0  # one live hypothesis at the start
        tokens = torch.full((batch * k,), self.bos_id, dtype=torch.long)
        history = torch.zeros((batch, k, 0), dtype=torch.long)
        finished = torch.zeros((batch, k), dtype=torch.bool)
        lengths = torch.zeros((batch, k))
        vocab = self.embedding.num_embeddings
        for _ in range(max_len):
            logp, (h, c) = self._step(tokens, state)
            logp[:, self.pad_id] = logp[:, self.bos_id] = -math.inf
            logp = logp.view(batch, k, vocab)
            # a finished hypothesis only extends with <pad> at no cost
            frozen = torch.full((vocab,), -math.inf)
            frozen[self.pad_id] = 0.0
            logp = torch.where(finished.unsqueeze(-1), frozen, logp)
            total = (scores.unsqueeze(-1) + logp).view(batch, k * vocab)
            scores, flat = total.topk(k, dim=1)
            origin, word = flat // vocab, flat % vocab
            gather = (origin + torch.arange(batch).unsqueeze(1) * k).view(-1)
            state = (h[:, gather], c[:, gather])
            history = torch.cat(
                [history.gather(1, origin.unsqueeze(-1).expand(-1, -1, history.shape[2])), word.unsqueeze(-1)], dim=2
            )
            was_finished = finished.gather(1, origin)
            lengths = lengths.gather(1, origin) + (~was_finished).float()
            finished = was_finished | (word == self.eos_id)
            tokens = word.view(-1)
            if bool(finished.all()):
                break
        normalised = torch.where(finished, scores, scores - 1e4) / lengths.clamp(min=1) ** length_penalty
        best = normalised.argmax(dim=1)
        return history[torch.arange(batch), best]


def _filtered_probs(logits: torch.Tensor, top_k: int | None, top_p: float | None) -> torch.Tensor:
    """Softmax over the ``top_k`` best and the smallest set reaching ``top_p`` mass."""
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, -math.inf)
    probs = torch.softmax(logits, dim=-1)
    if top_p is not None and top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        keep = sorted_p.cumsum(dim=-1) - sorted_p < top_p
        mask = torch.zeros_like(probs, dtype=torch.bool).scatter(1, order, keep)
        probs = probs * mask
        probs = probs / probs.sum(dim=-1, keepdim=True)
    return probs


def sinusoidal_positions(max_len: int, dim: int) -> torch.Tensor:
    """The (max_len, dim) sinusoidal positional encodings of Vaswani et al. (2017)."""
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(max_len, dim)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div)[:, : dim // 2]
    return table


class TransformerRanker(nn.Module):
    """Transformer encoder for retrieval: contexts and candidates to unit vectors."""

    positions: torch.Tensor

    def __init__(
        self,
        vocab_size: int,
        *,
        dim: int = 300,
        heads: int = 2,
        ffn: int = 300,
        layers: int = 2,
        dropout: float = 0.0,
        max_len: int = 64,
        scale: float = 20.0,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        self.pad_id, self.max_len, self.scale = pad_id, max_len, scale
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=pad_id)
        nn.init.normal_(self.embedding.weight, std=dim**-0.5)  # x sqrt(dim) below: unit-scale inputs
        with torch.no_grad():
            self.embedding.weight[pad_id].zero_()
        self.register_buffer("positions", sinusoidal_positions(max_len, dim), persistent=False)
        layer = nn.TransformerEncoderLayer(dim, heads, ffn, dropout=dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, dim)
        with torch.no_grad():
            self.head.weight.copy_(torch.eye(dim))
            self.head.bias.zero_()

    def encode(self, ids: torch.Tensor, *, context: bool = False) -> torch.Tensor:
        """Encode right-padded ids (B, S <= max_len) to unit vectors (B, dim); ``context=True`` adds the head."""
        ids = ids[:, : self.max_len]
        pad = ids == self.pad_id
        pad[:, 0] = False  # an empty text still attends to (and pools) its first position
        x = self.embedding(ids) * math.sqrt(self.embedding.embedding_dim) + self.positions[: ids.shape[1]]
        h = self.encoder(x, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        pooled = (h * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        if context:
            pooled = self.head(pooled)
        return nn.functional.normalize(pooled, dim=-1)

    def forward(self, contexts: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
        """The (B, B) score matrix of a batch: row i's positive is column i, the rest are negatives."""
        return self.scale * self.encode(contexts, context=True) @ self.encode(responses).T
