"""Quality filters for paraphrased prompts, each reported with its count.

Filters run in this order, and a prompt is counted under the first filter that drops it:

1. ``empty``: the text is empty, or just ``.`` (after stripping whitespace);
2. ``group_missing``: the group is not mentioned. The check is case-insensitive and on
   whole words; a plural mention counts (``gay people`` for ``gay person``, ``men`` for
   ``man``; see :func:`~fairtalk.prompts._paraphrase.plural`), so the paper's generalising
   "people" prompts are kept. The bare noun (``person``/``people``) alone does not count;
3. ``duplicate``: the same text (case and whitespace folded) already kept for the same
   source prompt, i.e. the same (group, template);
4. ``question`` (only with ``drop_questions=True``): the text contains ``?``;
5. ``unbalanced`` (with ``balance=True``, the default): the prompt's (template, structure)
   cell lacks a kept prompt of some group. Groups are then compared on the same cells only, so
   a structure that lost one group's paraphrase to a filter cannot tilt a gap.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from fairtalk._codec import SKIP, Codec, key, via
from fairtalk.prompts._paraphrase import plural
from fairtalk.prompts._templates import Prompt

__all__ = ["FILTERS", "FilterResult", "filter_prompts", "mentions_group"]

#: Filter names, in the order they run.
FILTERS: tuple[str, ...] = ("empty", "group_missing", "duplicate", "question", "unbalanced")


def _counts(dropped: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(dropped.items())


@dataclass(frozen=True, slots=True)
class FilterResult(Codec):
    """The kept prompts and, per filter, how many were dropped (``counts`` in :data:`FILTERS` order).

    ``to_dict()`` is ``{"n_in", "n_kept", "dropped": {filter: n}, "n_cells", "n_balanced_cells"}``: the counts,
    not the prompts kept.
    """

    kept: tuple[Prompt, ...] = field(metadata=SKIP)
    n_in: int
    counts: tuple[tuple[str, int], ...] = field(metadata={**key("dropped"), **via(dict, _counts)})
    n_cells: int = 0
    n_balanced_cells: int = 0

    _codec_keys: ClassVar[tuple[str, ...]] = ("n_in", "n_kept", "counts", "n_cells", "n_balanced_cells")

    @property
    def n_kept(self) -> int:
        """Number of prompts kept."""
        return len(self.kept)


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _pattern(group: str) -> re.Pattern[str]:
    found = _PATTERNS.get(group)
    if found is None:
        forms = sorted({group.lower(), plural(group).lower()}, key=len, reverse=True)
        body = "|".join(r"\s+".join(map(re.escape, form.split())) for form in forms)
        found = _PATTERNS[group] = re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", re.IGNORECASE)
    return found


def mentions_group(text: str, group: str) -> bool:
    """Whether ``text`` mentions ``group`` (or its plural) as whole words, ignoring case.

    Examples
    --------
    >>> mentions_group("Gay people were known for", "gay person"), mentions_group("the guy worked", "man")
    (True, False)
    """
    return _pattern(group).search(text) is not None


def filter_prompts(
    prompts: Iterable[Prompt], *, drop_questions: bool = False, balance: bool = True, groups: Iterable[str] | None = None
) -> FilterResult:
    """Apply the quality filters (module docstring) and count what each one drops.

    Examples
    --------
    >>> from fairtalk.prompts._templates import Prompt
    >>> ps = [Prompt("man", "worked as", "a", "The man worked as"), Prompt("man", "worked as", "b", " the  MAN worked as"),
    ...       Prompt("man", "worked as", "c", "."), Prompt("man", "worked as", "d", "the guy worked as")]
    >>> result = filter_prompts(ps)
    >>> result.n_kept, dict(result.counts)
    (1, {'empty': 1, 'group_missing': 1, 'duplicate': 1, 'question': 0, 'unbalanced': 0})

    ``groups`` (default: every group among the prompts) are the groups each cell must hold.
    """
    counts = dict.fromkeys(FILTERS, 0)
    seen: set[tuple[str, str, str]] = set()
    kept: list[Prompt] = []
    n_in = 0
    for prompt in prompts:
        n_in += 1
        text = prompt.text.strip()
        if not text or text == ".":
            counts["empty"] += 1
            continue
        if not mentions_group(text, prompt.group):
            counts["group_missing"] += 1
            continue
        key = (prompt.group, prompt.template, " ".join(text.lower().split()))
        if key in seen:
            counts["duplicate"] += 1
            continue
        seen.add(key)
        if drop_questions and "?" in text:
            counts["question"] += 1
            continue
        kept.append(prompt)
    cells: dict[tuple[str, str], set[str]] = {}
    for prompt in kept:
        cells.setdefault((prompt.template, prompt.structure), set()).add(prompt.group)
    wanted = set(groups) if groups is not None else {p.group for p in kept}
    full = {cell for cell, present in cells.items() if wanted <= present}
    if balance:
        balanced = [p for p in kept if (p.template, p.structure) in full]
        counts["unbalanced"] = len(kept) - len(balanced)
        kept = balanced
    return FilterResult(tuple(kept), n_in, tuple(counts.items()), len(cells), len(full))
