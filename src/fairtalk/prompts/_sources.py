"""The prompt set of a run: the fixed prompts once, plus paraphrases from one source, filtered and balanced.

Sources: ``builtin`` (the rule-based paraphraser), ``aesop`` (precomputed AESOP files, several
models in one run), ``none`` (the fixed prompts only) and ``model:SPEC`` (any Responder asked to
paraphrase). Every source's paraphrases go through the same quality filters and the group
balance (:func:`~fairtalk.prompts._filters.filter_prompts`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fairtalk.errors import SpecError
from fairtalk.prompts._aesop import read_aesop
from fairtalk.prompts._filters import FilterResult, filter_prompts
from fairtalk.prompts._paraphrase import ModelParaphraser, paraphrase
from fairtalk.prompts._templates import GroupSet, Prompt, build_prompts, default_groups

__all__ = ["SOURCES", "PromptSet", "make_prompts", "paraphrase_prompts"]

#: The paraphrase sources (besides ``model:SPEC``).
SOURCES: tuple[str, ...] = ("builtin", "aesop", "none")
_MSG_SOURCE = "--source must be builtin, aesop, none or model:SPEC, not {given!r}"
_MSG_AESOP = "--source aesop needs --aesop-source FILE and --aesop-extract FILE, one extract per source, in the same order"


@dataclass(frozen=True, slots=True)
class PromptSet:
    """The prompts of a run (fixed prompts, then the kept paraphrases) and what the filters did.

    ``source`` is the paraphrase source (``builtin``, ``aesop``, ``none`` or ``model:SPEC``);
    ``filtered`` counts the paraphrases in, kept and dropped per filter, and the balanced cells.
    """

    prompts: tuple[Prompt, ...]
    filtered: FilterResult
    source: str

    def __len__(self) -> int:
        return len(self.prompts)


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
        paraphrases = [
            p
            for i, (src, ext) in enumerate(aesop)
            for p in read_aesop(src, ext, groups=groups.groups, prefix=_aesop_prefix(src, i, len(aesop)))
        ]
    elif source == "none":
        paraphrases = ()
    elif source.startswith("model:"):
        with load_responder(source[len("model:") :]) as responder:
            paraphrases = ModelParaphraser(responder, n_paraphrases=n_model, seed=seed).paraphrase(fixed)
    else:
        raise SpecError(_MSG_SOURCE.format(given=source), choices=(*SOURCES, "model:SPEC"), given=source)
    filtered = filter_prompts(paraphrases, drop_questions=drop_questions, balance=balance, groups=groups.groups)
    return [*fixed, *filtered.kept], filtered


def paraphrase_prompts(
    groups: GroupSet | None = None,
    *,
    source: str = "builtin",
    aesop_sources: Sequence[str | os.PathLike[str]] = (),
    aesop_extracts: Sequence[str | os.PathLike[str]] = (),
    n_model: int = 5,
    seed: int = 0,
    drop_questions: bool = False,
    balance: bool = True,
) -> PromptSet:
    """The prompt set of a run: the fixed prompts of ``groups`` and their paraphrases from ``source``, filtered.

    Parameters
    ----------
    groups : GroupSet, optional
        Groups and pairs; default: the six groups of the paper.
    source : str
        ``builtin`` (the rule-based paraphraser, offline), ``aesop`` (precomputed AESOP files),
        ``none`` (the fixed prompts only) or ``model:SPEC`` (a Responder asked to paraphrase).
    aesop_sources, aesop_extracts : sequence of path
        For ``source="aesop"``: each AESOP ``.source`` file and, in the same order, its
        ``_sep_extract`` file (several AESOP models in one run).
    n_model, seed : int
        Paraphrases per prompt from a ``model:SPEC`` source, and the seed of its draws.
    drop_questions, balance : bool
        Also drop questions; keep only template × structure cells that hold every group.

    Returns
    -------
    PromptSet
        The prompts and the filters' counts.

    Raises
    ------
    SpecError
        An unknown source, or ``aesop`` without one extract per source file.

    Examples
    --------
    >>> result = paraphrase_prompts(source="none")
    >>> len(result), result.filtered.n_in
    (60, 0)
    """
    if source == "aesop" and (not aesop_sources or len(aesop_sources) != len(aesop_extracts)):
        raise SpecError(_MSG_AESOP)
    prompts, filtered = make_prompts(
        groups,
        source=source,
        aesop=list(zip(aesop_sources, aesop_extracts)),
        n_model=n_model,
        seed=seed,
        drop_questions=drop_questions,
        balance=balance,
    )
    return PromptSet(prompts=tuple(prompts), filtered=filtered, source=source)
