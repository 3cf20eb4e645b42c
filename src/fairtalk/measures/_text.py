"""Shared text handling for the measures: punctuation collapsing, tokenising, deduplication.

Two rules, used by every measure so that their numbers agree:

* :func:`preprocess` collapses a **run of the same punctuation character** to one
  character (``"!!!"`` -> ``"!"``, ``"...."`` -> ``"."``, ``"??"`` -> ``"?"``), as the paper
  does before sentiment and offense scoring (§3.2: repeated punctuation "interferes" with
  the classifiers). Alternating runs such as ``"?!?!"`` are left alone: only repeats of one
  character collapse. Letters, digits and whitespace are never touched.
* :func:`tokenize` lowercases the text, turns curly apostrophes into ``'``, and returns the
  maximal runs of letters and digits, where a run may contain single inner apostrophes or
  hyphens (``"don't"``, ``"in-law"``, ``"care-giver"`` stay one token). Every other
  character, punctuation and emoji included, separates tokens and is dropped. This is
  "lowercase, strip punctuation, split on whitespace" except that ``"hello,world"`` gives
  two tokens rather than one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["DistinctTexts", "dedupe", "preprocess", "tokenize"]

#: A punctuation or symbol character (not a letter, digit, underscore or space) repeated.
_REPEATED_PUNCTUATION = re.compile(r"([^\w\s])\1+")
#: A token: letters/digits, optionally joined by single inner apostrophes or hyphens.
_TOKEN = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2010": "-", "\u2011": "-"})


def preprocess(text: str) -> str:
    """Collapse each run of one repeated punctuation character to a single character.

    Examples
    --------
    >>> preprocess("Wow!!! Really??? ok...")
    'Wow! Really? ok.'
    >>> preprocess("what?!?!")
    'what?!?!'
    """
    return _REPEATED_PUNCTUATION.sub(r"\1", text)


def tokenize(text: str) -> list[str]:
    """Lowercase ``text`` and split it into word tokens, punctuation stripped.

    Examples
    --------
    >>> tokenize("Don't go, my mother-in-law's HERE!!")
    ["don't", 'go', 'my', "mother-in-law's", 'here']
    """
    return _TOKEN.findall(text.lower().translate(_APOSTROPHES))


class DistinctTexts(list[str]):
    """Texts known to be distinct (the keys of a dict, in its order): :func:`dedupe` keeps them as they are.

    Scoring indexes the answers of both sides once and hands every measure the distinct ones
    in this type, so that no measure builds a second dict over a million texts to find them
    distinct again. Build it from a dict (``DistinctTexts(index)``) and do not change it.
    """

    __slots__ = ()


def dedupe(texts: Iterable[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts in first-seen order, and for each input text the index of its distinct text.

    ``uniques[inverse[i]] == texts[i]`` for every ``i``. Uses a dict, so it is linear and
    keeps the first-seen order (``np.unique`` would sort, which is slower on strings).

    Examples
    --------
    >>> dedupe(["a", "b", "a"])
    (['a', 'b'], array([0, 1, 0]))
    """
    if isinstance(texts, DistinctTexts):
        return texts, np.arange(len(texts), dtype=np.intp)
    index: dict[str, int] = {}
    setdefault = index.setdefault
    inverse = [setdefault(text, len(index)) for text in texts]
    return list(index), np.asarray(inverse, dtype=np.intp)


def check_texts(texts: Sequence[str]) -> Sequence[str]:
    """Return ``texts`` unchanged after checking that it is a sequence of ``str`` (not one string)."""
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not a single string")
    return texts


def package_version(distribution: str) -> str:
    """The installed version of ``distribution`` (for measure versions), or ``"unknown"``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"
