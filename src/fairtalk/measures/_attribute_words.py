"""The attribute-word measure (§2.4.4): how many words of each attribute list a response contains.

One key per list, ``f"{list_name}_words"``: ``career_words``/``family_words`` for gender,
``pleasant_words``/``unpleasant_words`` for race (an axis may name other lists, and any call
may pass its own). The score of a response is a count; its mean per side is the paper's
"expected number of attribute words in one response".

Matching, per response token (see :func:`fairtalk.measures.tokenize`: lowercase,
punctuation stripped, inner apostrophes and hyphens kept):

* a token counts for a list when its **surface form or its simplemma lemma** (``lang="en"``)
  is an entry of the list. List entries are *not* lemmatised: the paper's lists hold
  deliberate inflected forms (``enjoyed``, ``married``, ``children``), matched on the surface,
  while response inflections are reduced to the list's base forms (``engineers`` ->
  ``engineer``, ``weddings`` -> ``wedding``, ``marries`` -> ``marry``). The paper used NLTK's
  WordNet lemmatizer; simplemma is a lighter stand-in, so a few lemmas differ.
* hyphenated entries (``care-giver``, ``in-law``, ``grand-daughter``) match the hyphenated
  token (and its inflections: ``in-laws``), the closed form (``caregiver``) and the open
  form as consecutive words (``care giver``).
* a hyphenated response token that is not itself an entry counts its parts:
  ``sister-in-law`` counts ``sister``.
* entries of several words (phrases) match consecutive tokens, each by surface or lemma.

A token may count for several lists when they share a word (``family`` is both a family and
a pleasant word); within one list each occurrence counts once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.measures._base import Measure
from fairtalk.measures._text import check_texts, package_version, tokenize

if TYPE_CHECKING:
    from fairtalk.lexicons import AttributeList, Lexicon

    #: What ``attributes=`` accepts: ``{name: words}``, or list names, list files and loaded lists.
    Attributes: TypeAlias = Mapping[str, Iterable[str]] | Sequence[AttributeList | str | os.PathLike[str]]

__all__ = ["AttributeWords"]

#: Tokens whose lemma and list hits are cached per measure: a corpus of millions of distinct tokens (ids,
#: numbers, typos) keeps only the first ones, not a dict entry per token.
_MAX_CACHED_TOKENS = 1 << 17
_VERSION = "1"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]*$")
_MSG_NO_LISTS = "attribute_words needs attribute lists: pass attributes=... or lexicon=..."
_MSG_BAD_NAME = "attribute list name {name!r} must be letters, digits, '_' or '-'"
_MSG_DUPLICATE = "attribute list {name!r} given twice"
_MSG_MISSING = "the attribute-word measure needs simplemma: pip install simplemma"


@dataclass(frozen=True, slots=True)
class _List:
    """One attribute list, split for matching."""

    name: str
    words: frozenset[str]  # single-token forms (entries, plus closed forms of hyphenated ones)
    phrases: tuple[tuple[str, ...], ...]  # multi-token forms
    source: str
    sha256: str
    n_entries: int


def _split(name: str, entries: Iterable[str], source: str = "", sha256: str = "") -> _List:
    if not _NAME.match(name):
        raise SpecError(_MSG_BAD_NAME.format(name=name))
    words: set[str] = set()
    phrases: set[tuple[str, ...]] = set()
    n_entries = 0
    for entry in entries:
        tokens = tuple(tokenize(entry))
        if not tokens:
            continue
        n_entries += 1
        if len(tokens) == 1:
            words.add(tokens[0])
            if "-" in tokens[0]:
                words.add(tokens[0].replace("-", ""))
                phrases.add(tuple(tokens[0].split("-")))
        else:
            phrases.add(tokens)
    return _List(name, frozenset(words), tuple(sorted(phrases)), source, sha256, n_entries)


def _resolve(attributes: Attributes | str | os.PathLike[str] | None, lexicon: Lexicon | None) -> tuple[_List, ...]:
    if attributes is None:
        if lexicon is None:
            raise SpecError(_MSG_NO_LISTS)
        attributes = lexicon.attributes
    lists: list[_List] = []
    if isinstance(attributes, Mapping):
        lists = [_split(str(name), words) for name, words in attributes.items()]
    else:
        if isinstance(attributes, (str, os.PathLike)):
            attributes = (attributes,)
        for given in attributes:
            if isinstance(given, (str, os.PathLike)):
                from fairtalk.lexicons import load_attributes

                given = load_attributes(given)
            lists.append(_split(given.name, given.words, given.source, given.sha256))
    if not lists:
        raise SpecError(_MSG_NO_LISTS)
    seen: set[str] = set()
    for item in lists:
        if item.name in seen:
            raise SpecError(_MSG_DUPLICATE.format(name=item.name))
        seen.add(item.name)
    return tuple(lists)


class AttributeWords(Measure):
    """Counts, per response, the words of each attribute list (lemma- and surface-matched).

    Parameters
    ----------
    attributes : mapping or sequence, optional
        ``{name: words}``, or a sequence of :class:`~fairtalk.lexicons.AttributeList`,
        built-in list names (``"career"``) or paths to list files. Defaults to the
        lexicon's lists.
    lexicon : Lexicon, optional
        Used for its ``attributes`` (list names) when ``attributes`` is not given.

    Examples
    --------
    >>> measure = AttributeWords({"career": ["engineer"], "family": ["wedding", "in-law"]})
    >>> scores = measure.score(["The engineers planned two weddings for my in-laws."])
    >>> scores["career_words"].tolist(), scores["family_words"].tolist()
    ([1.0], [2.0])
    """

    name = "attribute_words"
    kind: Literal["count"] = "count"

    def __init__(
        self,
        attributes: Attributes | None = None,
        *,
        lexicon: Lexicon | None = None,
    ) -> None:
        self._lists = _resolve(attributes, lexicon)
        self._keys = tuple(f"{item.name}_words" for item in self._lists)
        self._lemmas: dict[str, str] = {}
        self._hits: dict[str, tuple[int, ...]] = {}
        self._has_phrases = any(item.phrases for item in self._lists)
        self._lemmatize: Any = None

    def __repr__(self) -> str:
        return f"AttributeWords({[item.name for item in self._lists]!r})"

    @property
    def keys(self) -> tuple[str, ...]:
        """One key per list, ``f"{list_name}_words"``, in the lists' order."""
        return self._keys

    @property
    def higher_is_better(self) -> Mapping[str, bool | None]:
        """Neither direction is better for any list."""
        return MappingProxyType({key: None for key in self._keys})

    @property
    def list_names(self) -> tuple[str, ...]:
        """The attribute lists' names, in key order."""
        return tuple(item.name for item in self._lists)

    @property
    def version(self) -> str:
        """The measure's version plus simplemma's."""
        return f"{_VERSION} (simplemma {package_version('simplemma')})"

    @property
    def config(self) -> Mapping[str, Any]:
        """Settings for the manifest: each list's source, hash and size."""
        return {
            "lemmatizer": "simplemma (en)",
            "matching": "surface or lemma",
            "lists": {
                item.name: {"source": item.source, "sha256": item.sha256, "n_words": item.n_entries} for item in self._lists
            },
        }

    def _lemma(self, token: str) -> str:
        lemma = self._lemmas.get(token)
        if lemma is None:
            if self._lemmatize is None:
                try:
                    from simplemma import lemmatize
                except ImportError as exc:
                    raise FairtalkError(_MSG_MISSING) from exc
                self._lemmatize = lemmatize
            lemma = self._lemmatize(token, lang="en").lower()
            if len(self._lemmas) < _MAX_CACHED_TOKENS:
                self._lemmas[token] = lemma
        return lemma

    def _match(self, token: str) -> tuple[int, ...]:
        """The list indices a token counts for, once per occurrence (cached per token)."""
        hits = self._hits.get(token)
        if hits is not None:
            return hits
        lemma = self._lemma(token)
        found: list[int] = []
        for j, item in enumerate(self._lists):
            if token in item.words or lemma in item.words:
                found.append(j)
            elif "-" in token:
                for part in token.split("-"):
                    if part and (part in item.words or self._lemma(part) in item.words):
                        found.append(j)
        hits = tuple(found)
        if len(self._hits) < _MAX_CACHED_TOKENS:
            self._hits[token] = hits
        return hits

    def _phrase_counts(self, tokens: list[str], counts: np.ndarray, column: int) -> None:
        forms = [(t, self._lemma(t)) for t in tokens]
        for j, item in enumerate(self._lists):
            for phrase in item.phrases:
                k = len(phrase)
                for start in range(len(tokens) - k + 1):
                    if all(phrase[m] in forms[start + m] for m in range(k)):
                        counts[j, column] += 1

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """``{f"{list}_words": array}``: per text, the number of attribute words of each list."""
        texts = check_texts(texts)
        counts = np.zeros((len(self._lists), len(texts)), dtype=np.float64)
        match = self._match
        for i, text in enumerate(texts):
            tokens = tokenize(text)
            for token in tokens:
                for j in match(token):
                    counts[j, i] += 1
            if self._has_phrases:
                self._phrase_counts(tokens, counts, i)
        return {key: counts[j] for j, key in enumerate(self.keys)}
