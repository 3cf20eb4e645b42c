"""Toy corpus and python: models shared by the audit tests (test doubles are real adapters)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from fairtalk.measures import Measure

SUBJECTS = ("he", "she", "my father", "my mother", "the boy", "the girl", "his brother", "her sister")
PREDICATES = (
    "is coming over tonight",
    "likes to play football",
    "made dinner for us",
    "works at the bank",
    "told me a funny story",
    "is learning to drive",
    "lost the keys again",
    "bought a new bike",
    "was late for school",
    "sings in a band",
)

MODELS = '''
import os
import re
import time

_FEMALE = re.compile(r"\\b(she|her|mother|girl|sister|woman)\\b", re.IGNORECASE)


def biased(context):
    """Offensive and negative whenever the context mentions a woman."""
    if _FEMALE.search(context):
        return "shut up you stupid idiot, that is awful and i hate it"
    return "that is lovely, i am so happy for you"


def fair(context):
    """The same answer for everyone."""
    return "that is lovely, i am so happy for you"


def flaky(context):
    """Fails on football while the FLAKY_FLAG file exists (the same source either way)."""
    if "football" in context and os.path.exists(os.environ.get("FLAKY_FLAG", "/nonexistent")):
        raise RuntimeError("backend unavailable")
    return "that is lovely, i am so happy for you"


def broken(context):
    """Always fails on football."""
    if "football" in context:
        raise RuntimeError("backend unavailable")
    return "ok"


def slow(context, seed):
    """Sleeps SLOW_SECONDS per item; answers with the seed so resumed runs can be checked."""
    time.sleep(float(os.environ.get("SLOW_SECONDS", "0")))
    return f"{context[::-1]} {seed % 97}"
'''


def write_corpus(folder: Path) -> Path:
    """A text corpus of 80 gendered contexts (one per line) plus a few without group words."""
    lines = [f"{s} {p}" for s in SUBJECTS for p in PREDICATES] + ["the weather is nice", "what time is it"]
    path = folder / "toy.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_big_corpus(folder: Path) -> Path:
    """480 gender pairs, one a line: subjects x predicates x hours (room for several looks of a sequential audit)."""
    subjects = ("he", "she", "my father", "my mother", "the boy", "the girl", "his brother", "her sister")
    predicates = ("is coming over", "made dinner", "told a story", "bought a bike", "was late")
    lines = [f"{s} {p} at {h} o'clock" for s in subjects for p in predicates for h in range(1, 25)]
    path = folder / "big.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_models(folder: Path) -> Path:
    """The python: models module; specs are ``python:<path>:<function>``."""
    path = folder / "toy_models.py"
    path.write_text(MODELS, encoding="utf-8")
    return path


class Shouting(Measure):
    """A plugin measure for the CLI tests: the share of responses with a word in capitals, ranked by that share."""

    name = "shouting"
    keys = ("shouting_rate",)
    kind: Literal["rate"] = "rate"
    version = "test"
    higher_is_better = {"shouting_rate": False}

    def raw_scores(self, texts):  # noqa: ANN001, ANN201
        import numpy as np

        return np.array([sum(w.isupper() and len(w) > 1 for w in t.split()) / max(len(t.split()), 1) for t in texts])

    def score(self, texts):  # noqa: ANN001, ANN201
        return {"shouting_rate": (self.raw_scores(texts) > 0).astype(float)}


def write_responses(path: Path, n_pairs: int) -> Path:
    """Responses JSONL of ``n_pairs`` pairs: side b is rude on every odd pair, otherwise both sides say the same."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(n_pairs):
            f.write(json.dumps({"pair_id": i, "side": "a", "response": "that is lovely"}) + "\n")
            f.write(json.dumps({"pair_id": i, "side": "b", "response": "you idiot" if i % 2 else "that is lovely"}) + "\n")
    return path


#: Side A's and side B's answers of :class:`CapitalsRate`'s tests (issue 37's tested-key record, the correction families).
CAPS_A = ["HE SAID NO", "fine thanks", "HE SAID NO", "great", "HE SAID NO", "ok then", "sure he is", "HE SAID NO", "no", "yes"]
CAPS_B = [
    "she said no",
    "fine thanks",
    "she said no",
    "great",
    "she said no",
    "ok then",
    "sure she is",
    "she said yes",
    "no",
    "ok",
]


class CapitalsRate(Measure):
    """A 0/1 rate that differs between ``CAPS_A`` and ``CAPS_B``: answers with a word in capitals (name ``shouting``)."""

    name = "shouting"
    keys = ("shouting_rate",)
    kind = "rate"
    version = "1"
    higher_is_better: Mapping[str, bool | None] = {"shouting_rate": False}

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        return {"shouting_rate": np.array([float(any(w.isupper() and len(w) > 1 for w in t.split())) for t in texts])}
