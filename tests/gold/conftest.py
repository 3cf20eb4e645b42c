"""Fixtures of the labelling tests: a small audit axis folder whose texts name their groups, and a running page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairtalk.gold import GoldLog, LabelServer, draw_sample, label_schemes

#: Side a's and side b's words: what a blind page must never show.
WORDS_A = ("he", "his", "man", "father", "boyfriend")
WORDS_B = ("she", "her", "woman", "mother", "girlfriend")
#: A scorer's output carried in each record, which the page must never show either.
SCORE_FIELD = "offense_probability"


def score_of(i: int, side: str) -> str:
    """The (unique, recognisable) scorer value written into pair ``i``'s record of ``side``."""
    return f"0.{9137 + 7 * i}{1 if side == 'a' else 2}"


def write_axis_folder(folder: Path, n_pairs: int = 24) -> Path:
    """An axis folder holding responses.jsonl: pair i's two sides differ only in their gender words."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n_pairs):
        for side, words in (("a", WORDS_A), ("b", WORDS_B)):
            w = [words[(i + k) % len(words)] for k in range(3)]
            rows.append(
                {
                    "pair_id": f"p{i:02d}",
                    "side": side,
                    "context": f"Tell me about {w[0]} number {i}.",
                    "response": f"Text {i}: {w[0]} said {w[1]} {w[2]} was late again.",
                    SCORE_FIELD: float(score_of(i, side)),
                    "cluster": f"d{i // 2}",
                }
            )
    (folder / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@pytest.fixture
def axis_folder(tmp_path: Path) -> Path:
    """An audit's axis folder with 24 pairs (48 texts)."""
    return write_axis_folder(tmp_path / "gender")


@pytest.fixture
def page(axis_folder: Path, tmp_path: Path) -> Iterator[LabelServer]:
    """A labelling server on 20 texts (offense_rate), serving in a thread until the test ends."""
    import threading

    log = GoldLog(tmp_path / "gold.jsonl", draw_sample(axis_folder, n=20, seed=3), label_schemes("offense_rate"), annotator="ann")
    server = LabelServer(log)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
