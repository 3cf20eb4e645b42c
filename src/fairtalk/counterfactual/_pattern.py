"""The swapper's one regular expression: a character trie over every term, longest match first, whole words only."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from fairtalk.counterfactual._senses import SPACE
from fairtalk.lexicons import Lexicon
from fairtalk.records import Side

__all__ = ["build_table", "terms_regex"]

#: Left boundary: no word character, nor a word character plus apostrophe (``rock'n'roll``).
_LEFT = r"(?<!\w)(?<!\w['\u2018\u2019])"
#: Right boundary: no word character (an apostrophe may follow: ``he'll``).
_RIGHT = r"(?!\w)"


def terms_regex(terms: Iterable[str]) -> str:
    """The pattern source matching any of ``terms`` (normalised, lowercase) as whole words; never matches when empty."""
    trie = _trie(terms)
    return _LEFT + _trie_regex(trie) + _RIGHT if trie else r"(?!)"


def _trie(terms: Iterable[str]) -> dict[str, Any]:
    """A character trie of the terms; the key ``""`` marks the end of a term."""
    root: dict[str, Any] = {}
    for term in terms:
        node = root
        for char in term:
            node = node.setdefault(char, {})
        node[""] = True
    return root


def _char_regex(char: str) -> str:
    if char == " ":
        return SPACE + "+"
    if char == "'":
        return "['\u2018\u2019]"
    return re.escape(char)


def _trie_regex(node: dict[str, Any]) -> str:
    """Regex for a trie node: greedy, so the longest term that ends on a word boundary wins."""
    branches = [_char_regex(char) + _trie_regex(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if "" in node:
        return "(?:" + body + ")?"
    return body


def build_table(lexicon: Lexicon, normalise: Callable[[str], str]) -> dict[str, tuple[tuple[str, Side], ...]]:
    """Map each normalised term of either side to its counterparts, in lexicon order."""
    choices: dict[str, list[tuple[str, Side]]] = {}
    for pair in lexicon.pairs:
        a, b = normalise(pair.a), normalise(pair.b)
        sides: tuple[tuple[str, str, Side], ...] = ((a, b, "a"), (b, a, "b"))
        if pair.direction != "both":  # one way: "a>b" swaps a to b only, "b>a" b to a only
            sides = sides[:1] if pair.direction == "a>b" else sides[1:]
        for source, target, side in sides:
            options = choices.setdefault(source, [])
            if (target, side) not in options:
                options.append((target, side))
    return {term: tuple(options) for term, options in choices.items()}
