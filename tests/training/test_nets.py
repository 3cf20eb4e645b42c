"""Tests for fairtalk.training._nets: shapes, decoding, batch independence."""

from __future__ import annotations

import torch

from fairtalk.training import Seq2Seq, TransformerRanker
from fairtalk.training._nets import sinusoidal_positions

from .conftest import TINY_RANKER, TINY_SEQ2SEQ


def _src() -> torch.Tensor:
    return torch.tensor([[5, 6, 7, 0], [8, 9, 0, 0], [4, 0, 0, 0]])


def test_seq2seq_forward_shapes() -> None:
    torch.manual_seed(0)
    net = Seq2Seq(20, **TINY_SEQ2SEQ)
    logits = net(_src(), torch.tensor([[2, 5, 6], [2, 7, 0], [2, 0, 0]]))
    assert logits.shape == (3, 3, 20)
    h, c = net.encode(_src())
    assert h.shape == c.shape == (2, 3, 32)


def test_encoder_ignores_padding() -> None:
    torch.manual_seed(0)
    net = Seq2Seq(20, **TINY_SEQ2SEQ).eval()
    padded = net.encode(torch.tensor([[5, 6, 0, 0, 0]]))[0]
    bare = net.encode(torch.tensor([[5, 6]]))[0]
    assert torch.allclose(padded, bare, atol=1e-6)


def test_greedy_beam_and_sampling_decode() -> None:
    torch.manual_seed(0)
    net = Seq2Seq(20, **TINY_SEQ2SEQ).eval()
    greedy = net.greedy(_src(), max_len=6)
    assert greedy.shape[0] == 3 and greedy.shape[1] <= 6
    assert not ((greedy == net.pad_id) | (greedy == net.bos_id)).all()
    beam1 = net.beam(_src(), beam_size=1, max_len=6)
    assert torch.equal(beam1[:, : greedy.shape[1]], greedy[:, : beam1.shape[1]])
    beam = net.beam(_src(), beam_size=3, max_len=6)
    assert beam.shape[0] == 3
    one = [torch.Generator().manual_seed(s) for s in (1, 2, 3)]
    two = [torch.Generator().manual_seed(s) for s in (1, 2, 3)]
    assert torch.equal(
        net.sample(_src(), max_len=6, generators=one, top_k=5), net.sample(_src(), max_len=6, generators=two, top_k=5)
    )


def test_beam_scores_at_least_greedy() -> None:
    torch.manual_seed(1)
    net = Seq2Seq(12, **TINY_SEQ2SEQ).eval()
    src = torch.tensor([[5, 6, 7]])

    def logp(seq: torch.Tensor) -> float:
        tgt = [net.eos_id if t == 0 else int(t) for t in seq]
        tgt = tgt[: tgt.index(net.eos_id) + 1] if net.eos_id in tgt else tgt
        inp = torch.tensor([[net.bos_id] + tgt[:-1]])
        with torch.no_grad():
            lp = torch.log_softmax(net(src, inp), dim=-1)[0]
        return float(sum(lp[i, t] for i, t in enumerate(tgt))) / len(tgt)

    assert logp(net.beam(src, beam_size=4, max_len=8)[0]) >= logp(net.greedy(src, max_len=8)[0]) - 1e-5


def test_ranker_encodes_unit_vectors_and_scores_a_batch() -> None:
    torch.manual_seed(0)
    net = TransformerRanker(20, **TINY_RANKER).eval()
    vectors = net.encode(_src())
    assert vectors.shape == (3, 32)
    assert torch.allclose(vectors.norm(dim=-1), torch.ones(3), atol=1e-5)
    assert net(_src(), _src()).shape == (3, 3)
    # padding does not change an encoding; an empty text still gets a finite vector
    assert torch.allclose(net.encode(torch.tensor([[8, 9]])), net.encode(torch.tensor([[8, 9, 0, 0, 0]])), atol=1e-5)
    assert torch.isfinite(net.encode(torch.tensor([[0, 0]]))).all()
    assert sinusoidal_positions(4, 6).shape == (4, 6)
