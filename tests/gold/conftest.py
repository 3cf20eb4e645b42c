"""Fixtures of the labelling tests: a small audit axis folder whose texts name their groups, and a running page."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairtalk.cli import main
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


#: Multi-turn contexts: three alternating turns, and two user turns in a row (role marks), with markup to escape.
TURN_CONTEXTS = (
    (["hi, tell me about him", "sure, <b>what</b> about him?", "is he & his mother late?"], None),
    (["quick question about her", "is she <i>right</i>?"], ["user", "user"]),
)
#: A text and a context that would run script if a page did not escape them.
XSS = '</script><img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


def write_turns_folder(folder: Path, n_pairs: int = 4, *, text: str = "Text {i}: {word} was late.") -> Path:
    """An axis folder whose contexts have several turns (:data:`TURN_CONTEXTS` in turn), gendered words on each side."""
    from fairtalk.records import join_turns

    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n_pairs):
        turns, roles = TURN_CONTEXTS[i % len(TURN_CONTEXTS)]
        for side, swap in (("a", {}), ("b", {"him": "her", "he": "she", "his": "her", "her": "his", "she": "he"})):
            words = [" ".join(swap.get(w, w) for w in turn.split(" ")) for turn in turns]
            rows.append(
                {
                    "pair_id": f"p{i:02d}",
                    "side": side,
                    "context": join_turns(words, roles),
                    "response": text.format(i=i, word="he" if side == "a" else "she"),
                }
            )
    (folder / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def write_xss_folder(folder: Path) -> Path:
    """One pair whose response and the context's last turn hold :data:`XSS`."""
    write_turns_folder(folder, 1, text="Text {i}: " + XSS.replace("{", "{{").replace("}", "}}"))
    rows = [json.loads(line) for line in (folder / "responses.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["context"] = row["context"] + "\x1e" + XSS
    (folder / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@contextlib.contextmanager
def serving(log: GoldLog) -> Iterator[LabelServer]:
    """A labelling server of ``log`` on a free port, serving in a thread until the block ends."""
    server = LabelServer(log)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def page(axis_folder: Path, tmp_path: Path) -> Iterator[LabelServer]:
    """A labelling server on 20 texts (offense_rate), serving in a thread until the test ends."""
    log = GoldLog(tmp_path / "gold.jsonl", draw_sample(axis_folder, n=20, seed=3), label_schemes("offense_rate"), annotator="ann")
    with serving(log) as server:
        yield server


def run_label(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``fairtalk label ARGS`` in this process: its exit code, stdout and stderr."""
    monkeypatch.setattr(sys, "argv", ["fairtalk", "label", *args])
    monkeypatch.delenv("FAIRTALK_DEBUG", raising=False)
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err
