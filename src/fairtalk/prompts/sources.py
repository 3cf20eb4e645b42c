"""The prompt set of a run: the fixed prompts once, plus paraphrases from one source, filtered and balanced.

Sources: ``builtin`` (the rule-based paraphraser), ``aesop`` (precomputed AESOP files, several
models in one run), ``none`` (the fixed prompts only) and ``model:SPEC`` (any Responder asked to
paraphrase). Every source's paraphrases go through the same quality filters and the group
balance (:func:`~fairtalk.prompts.filters.filter_prompts`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from fairtalk.errors import SpecError
from fairtalk.prompts.aesop import read_aesop
from fairtalk.prompts.filters import FilterResult, filter_prompts
from fairtalk.prompts.paraphrase import ModelParaphraser, paraphrase
from fairtalk.prompts.templates import GroupSet, Prompt, build_prompts, default_groups

__all__ = ["SOURCES", "make_prompts"]

#: The paraphrase sources (besides ``model:SPEC``).
SOURCES: tuple[str, ...] = ("builtin", "aesop", "none")
_MSG_SOURCE = "--source must be builtin, aesop, none or model:SPEC, not {given!r}"
_MSG_AESOP = "--source aesop needs --aesop-source FILE and --aesop-extract FILE, one extract per source, in the same order"


def _aesop_prefix(path: str | os.PathLike[str], index: int, n_sources: int) -> str:
    """A structure-label prefix that keeps several AESOP models' parses apart (none for a single source)."""
    if n_sources == 1:
        return ""
    name = Path(path).name.lower()
    for model in ("paranmt", "qqppos"):
        if model in name:
            return f"{model}:"
    return f"aesop{index + 1}:"


def make_prompts(
    groups: GroupSet | None = None,
    *,
    source: str = "builtin",
    aesop: Sequence[tuple[str | os.PathLike[str], str | os.PathLike[str]]] = (),
    n_model: int = 5,
    seed: int = 0,
    drop_questions: bool = False,
    balance: bool = True,
) -> tuple[list[Prompt], FilterResult]:
    """The fixed prompts of ``groups`` (once) plus the filtered, balanced paraphrases from ``source``.

    ``aesop`` pairs each AESOP ``.source`` file with its ``_sep_extract`` file (``source="aesop"``).

    Raises
    ------
    SpecError
        An unknown source, or ``aesop`` without its files.
    """
    from fairtalk.models import load_responder

    groups = groups or default_groups()
    fixed = build_prompts(groups)
    if source == "builtin":
        paraphrases: Sequence[Prompt] = paraphrase(fixed)
    elif source == "aesop":
        if not aesop:
            raise SpecError(_MSG_AESOP)
        paraphrases = [p for i, (src, ext) in enumerate(aesop)
                       for p in read_aesop(src, ext, groups=groups.groups, prefix=_aesop_prefix(src, i, len(aesop)))]  # fmt: skip
    elif source == "none":
        paraphrases = ()
    elif source.startswith("model:"):
        with load_responder(source[len("model:"):]) as responder:
            paraphrases = ModelParaphraser(responder, n_paraphrases=n_model, seed=seed).paraphrase(fixed)
    else:
        raise SpecError(_MSG_SOURCE.format(given=source), choices=(*SOURCES, "model:SPEC"), given=source)
    filtered = filter_prompts(paraphrases, drop_questions=drop_questions, balance=balance, groups=groups.groups)
    return [*fixed, *filtered.kept], filtered
