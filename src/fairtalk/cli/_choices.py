"""The fixed sets of choices of command-line options, as enums: ``--help`` lists them and a typo exits 2.

Each enum's values are the strings the library takes (``tests/test_cli_choices.py`` checks
them against the library's own tuples); a command hands ``option.value`` to the library.
A comma-separated option (``--methods exact,rouge_l``) is split by :func:`comma_list`, which
refuses an empty list and, given an enum, any name not in it: before any work is done.
"""

from __future__ import annotations

import enum
from typing import Any

from fairtalk.errors import SpecError

__all__ = [
    "BinaryTest",
    "CorrectionScope",
    "Correction",
    "CountTest",
    "Debias",
    "Distinct",
    "Dtype",
    "Engine",
    "Mixed",
    "Mode",
    "SimilarityMethod",
    "Split",
    "TrainModel",
    "Variant",
    "comma_list",
    "plain",
    "was_given",
]

#: An empty list (``--methods ''``, ``--methods ,,``) would silently run nothing: refused, naming the choices.
MSG_EMPTY_LIST = "{option} names nothing; give one or more, comma-separated"
_MSG_UNKNOWN_ITEM = "unknown {what} {given!r}"


class Correction(enum.StrEnum):
    """``--correction``: Holm (family-wise error) or Benjamini-Hochberg (false discovery rate)."""

    holm = "holm"
    bh = "bh"


class CorrectionScope(enum.StrEnum):
    """``--correction-scope``: correct each axis on its own, or every axis together."""

    axis = "axis"
    run = "run"


class BinaryTest(enum.StrEnum):
    """``--binary-test``: the score test (the printed interval's own), or McNemar exact or mid-p."""

    score = "score"
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


class SimilarityMethod(enum.StrEnum):
    """``--methods`` of ``fairtalk similarity``: how two answers are compared."""

    exact = "exact"
    rouge_l = "rouge_l"
    cosine = "cosine"
    answered = "answered"
    length_ratio = "length_ratio"


def comma_list(value: str, option: str, choices: type[enum.Enum] | None = None, *, what: str = "name") -> tuple[str, ...]:
    """``"a, b,"`` -> ``("a", "b")``; SpecError for an empty list, or for a name not among ``choices``.

    Examples
    --------
    >>> comma_list("exact, rouge_l", "--methods", SimilarityMethod)
    ('exact', 'rouge_l')
    >>> comma_list(" , ", "--drop")
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: --drop names nothing; give one or more, comma-separated
    """
    names = tuple(part.strip() for part in value.split(",") if part.strip())
    valid = () if choices is None else tuple(str(choice.value) for choice in choices)
    if not names:
        raise SpecError(MSG_EMPTY_LIST.format(option=option), choices=valid)
    for name in names:
        if valid and name not in valid:
            raise SpecError(_MSG_UNKNOWN_ITEM.format(what=what, given=name), choices=valid, given=name)
    return names


def plain(value: Any) -> Any:
    """An enum choice as the library's string; anything else as it is."""
    return value.value if isinstance(value, enum.Enum) else value


def was_given(ctx: Any, name: str) -> bool:
    """Whether the parameter ``name`` of the running command was given (not left at its default).

    A command tells from it an option the user named from one it fills in itself: a default
    output path may replace only fairtalk's own file, and an option a run would not use is an
    error only when given.
    """
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
