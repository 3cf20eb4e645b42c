"""Counterfactual validity (``pairs_check.json``): how sound the pairs are before any difference is read.

:func:`check_pairs` re-reads each pair's original through the swapper and reports, over the pairs:

* **leftover**: pairs whose swapped side still holds a word of the original's group (a lexicon
  term the swap missed, or a ``# markers-a:``/``# markers-b:`` word of the lexicon);
* **kept**: terms left unswapped on purpose (a fixed phrase, or no determiner: ``oh man``);
* **ambiguous**: swaps of words with several senses or counterparts and how each was resolved
  (``her→him`` 120, ``her→his`` 80, ``man→woman`` after a determiner);
* **top swaps**: the 20 most frequent swaps with counts.

The check itself is a :class:`~fairtalk.records.PairsCheck` (a record, so that results and
reports hold it typed); :meth:`PairsChecker.write` writes it as ``pairs_check.json``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable

from fairtalk._jsonl import replace_surrogates
from fairtalk.counterfactual import Swapper
from fairtalk.errors import SpecError
from fairtalk.files import write_text_atomic
from fairtalk.lexicons import Lexicon
from fairtalk.records import Pair, PairsCheck

__all__ = ["PairsCheck", "PairsChecker", "check_pairs"]

#: How many swaps ``top_swaps`` lists, and how many leftover examples are kept.
N_TOP_SWAPS = 20
N_EXAMPLES = 5
_MSG_BAD_SWAPPER = "{who} needs a Swapper or a Lexicon (fairtalk.load_lexicon('gender')), got {type}"


def as_swapper(swapper: object, who: str) -> Swapper:
    """``swapper`` itself, or a Swapper (seed 0) of a Lexicon; SpecError naming ``who`` for anything else."""
    if isinstance(swapper, Lexicon):
        return Swapper(swapper)
    if not isinstance(swapper, Swapper):
        raise SpecError(_MSG_BAD_SWAPPER.format(who=who, type=type(swapper).__name__))
    return swapper


def check_pairs(pairs: Iterable[Pair], swapper: Swapper | Lexicon) -> PairsCheck:
    """Check each pair's swapped side against its original's group with the swapper's lexicon.

    ``swapper`` is a Swapper or the axis' Lexicon (which gets a Swapper with seed 0, as in
    :func:`~fairtalk.pairs.build_pairs`).

    Examples
    --------
    >>> from fairtalk.lexicons import load_lexicon
    >>> from fairtalk.records import Pair
    >>> swapper = Swapper(load_lexicon("gender"))
    >>> pair = Pair("p1", "gender", a="oh man, he left", b="oh man, she left", original_side="a")
    >>> check = check_pairs([pair], swapper)
    >>> check.n_leftover, check.kept, check.top_swaps
    (0, (('man (phrase)', 1),), (('he→she', 1),))
    """
    checker = PairsChecker(as_swapper(swapper, "check_pairs"))
    for pair in pairs:
        checker.add(pair)
    return checker.result()


class PairsChecker:
    """Accumulates a :class:`PairsCheck` one pair at a time, for pairs streamed to a file."""

    def __init__(self, swapper: Swapper) -> None:
        self.swapper = swapper
        self._ambiguous = swapper.ambiguous
        self._markers = tuple(_marker_pattern(words) for words in swapper.lexicon.markers)
        self.n_pairs = self.n_leftover = self.n_with_kept = 0
        self._left: Counter[str] = Counter()
        self._examples: list[tuple[str, str]] = []
        self._kept: Counter[str] = Counter()
        self._resolved: Counter[str] = Counter()
        self._top: Counter[str] = Counter()

    def add(self, pair: Pair) -> Pair:
        """Count one pair; returns it, so that ``map(checker.add, pairs)`` passes the pairs on."""
        self.n_pairs += 1
        original, swapped = (pair.a, pair.b) if pair.original_side == "a" else (pair.b, pair.a)
        result = self.swapper.swap(original)
        for swap in result.swaps:
            name = f"{swap.source.lower()}→{swap.target.lower()}"
            self._top[name] += 1
            if swap.source.lower() in self._ambiguous:
                self._resolved[name] += 1
        if result.kept:
            self.n_with_kept += 1
            self._kept.update(f"{k.source.lower()} ({k.reason})" for k in result.kept)
        words = _leftover_words(self.swapper, swapped, pair.original_side, self._markers)
        if words:
            self.n_leftover += 1
            self._left.update(words)
            if len(self._examples) < N_EXAMPLES:
                self._examples.append((pair.id, swapped))
        return pair

    def result(self) -> PairsCheck:
        """The check over the pairs added so far."""
        lexicon = self.swapper.lexicon
        return PairsCheck(
            axis=lexicon.axis,
            groups=lexicon.groups,
            n_pairs=self.n_pairs,
            n_leftover=self.n_leftover,
            leftover_terms=_ranked(self._left),
            leftover_examples=tuple(self._examples),
            n_pairs_with_kept=self.n_with_kept,
            kept=_ranked(self._kept),
            ambiguous=_ranked(self._resolved),
            top_swaps=_ranked(self._top, N_TOP_SWAPS),
            n_markers=sum(len(words) for words in lexicon.markers),
        )

    def write(self, path: str | os.PathLike[str]) -> PairsCheck:
        """Write the check over the pairs added so far as ``pairs_check.json`` at ``path``, atomically; returns it."""
        check = self.result()
        write_text_atomic(path, replace_surrogates(check.to_json())[0])  # a pair's text may hold a lone surrogate
        return check


def _leftover_words(swapper: Swapper, swapped: str, side: str, markers: tuple[re.Pattern[str] | None, ...]) -> list[str]:
    """Words of group ``side`` still in the swapped text: lexicon terms the swapper reads as that side, and markers."""
    words = [s.source.lower() for s in swapper.swap(swapped).swaps if s.source_side == side]
    pattern = markers[side == "b"]
    if pattern is not None:
        words += [m.group().lower() for m in pattern.finditer(swapped)]
    return words


def _marker_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    if not words:
        return None
    body = "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)


def _ranked(counts: Counter[str], n: int | None = None) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n])
