"""Tiny toy corpus and configs shared by the training tests (each run takes a second or two)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("safetensors")

from fairtalk import Context

TINY_SEQ2SEQ = {"emb_dim": 16, "hidden": 32, "layers": 2, "dropout": 0.1}
TINY_RANKER = {"dim": 32, "heads": 2, "ffn": 32, "layers": 2, "max_len": 32}


def toy_dialogues(n: int = 120) -> list[Context]:
    """Two kinds of exchanges, spread over 30 conversations."""
    out = []
    for i in range(n):
        if i % 2:
            out.append(Context(id=f"c{i % 30}/{i}", text=f"is he a doctor {i % 7}?", response=f"yes he is a doctor {i % 7}"))
        else:
            out.append(Context(id=f"c{i % 30}/{i}", text=f"how are you {i % 5}", response=f"i am fine thanks {i % 5}"))
    return out


@pytest.fixture
def dialogues() -> list[Context]:
    return toy_dialogues()
