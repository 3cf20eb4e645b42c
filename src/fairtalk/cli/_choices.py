"""The fixed sets of choices of command-line options, as enums: ``--help`` lists them and a typo exits 2.

Each enum's values are the strings the library takes (``tests/test_cli_choices.py`` checks
them against the library's own tuples); a command hands ``option.value`` to the library.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = [
    "BinaryTest", "CorrectionScope", "Correction", "CountTest", "Debias", "Distinct", "Dtype", "Engine", "Mixed",
    "Mode", "Split", "TrainModel", "Variant", "plain",
]  # fmt: skip


class Correction(enum.StrEnum):
    """``--correction``: Holm (family-wise error) or Benjamini-Hochberg (false discovery rate)."""

    holm = "holm"
    bh = "bh"


class CorrectionScope(enum.StrEnum):
    """``--correction-scope``: correct each axis on its own, or every axis together."""

    axis = "axis"
    run = "run"


class BinaryTest(enum.StrEnum):
    """``--binary-test``: McNemar exact or mid-p."""

    exact = "exact"
    midp = "midp"


class CountTest(enum.StrEnum):
    """``--count-test``: the mean (sign-flip or t) or Wilcoxon's signed-rank test."""

    mean = "mean"
    wilcoxon = "wilcoxon"


class Distinct(enum.StrEnum):
    """``--distinct``: distinct-n per word (the paper's) or per n-gram (the standard one)."""

    paper = "paper"
    standard = "standard"


class Engine(enum.StrEnum):
    """``--engine``: generate in this process, or on Ray actors."""

    local = "local"
    ray = "ray"


class Mixed(enum.StrEnum):
    """``--mixed``: drop contexts that mention both groups, or keep them."""

    drop = "drop"
    keep = "keep"


class Split(enum.StrEnum):
    """``--split`` of ``builtin:chitchat``."""

    all = "all"
    train = "train"
    heldout = "heldout"


class Variant(enum.StrEnum):
    """``--variant``: the cleaned built-in word lists or the papers' as printed."""

    default = "default"
    paper = "paper"


class TrainModel(enum.StrEnum):
    """``fairtalk train MODEL``."""

    seq2seq = "seq2seq"
    retrieval = "retrieval"


class Debias(enum.StrEnum):
    """``--debias`` of ``fairtalk train``."""

    none = "none"
    cda = "cda"
    wer = "wer"


class Mode(enum.StrEnum):
    """``prompts generate --mode``: continue the prefix (the paper) or send it as a user turn."""

    completion = "completion"
    chat = "chat"


class Dtype(enum.StrEnum):
    """``--dtype``: precision of saved weights."""

    float16 = "float16"
    float32 = "float32"


def plain(value: Any) -> Any:
    """An enum choice as the library's string; anything else as it is."""
    return value.value if isinstance(value, enum.Enum) else value
