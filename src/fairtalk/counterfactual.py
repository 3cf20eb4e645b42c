"""Counterfactual swapper: rewrite a text into the other group's wording, in one pass.

A :class:`Swapper` compiles a :class:`~fairtalk.lexicons.Lexicon` into one regular expression over
every entry of both sides (a character trie, so the longest entry wins and the cost per character
does not grow with the lexicon), then rewrites each match to its counterpart by a dict lookup.
All matches are found on the original text and replaced together, so ``he`` and ``she`` in one
sentence trade places and a replacement is never matched again.

Matching rules
--------------
* Case-insensitive; whitespace inside a multiword entry matches any run of whitespace; a typographic
  apostrophe (``’``) matches ``'``.
* Whole words only: an entry never starts right after a letter, digit or ``_`` (nor after such a
  character followed by an apostrophe) and never ends right before one. Punctuation, hyphens and
  the ends of the string are boundaries, so ``"He.``, ``(him)`` and ``half-brother`` match but
  ``the``, ``theme`` and ``shell`` do not match ``he``. A trailing clitic is kept: ``he'll`` ->
  ``she'll`` (an entry such as ``he's`` still wins, being longer).
* Case: the replacement copies the pattern of the source's first word: ``he`` -> ``she``,
  ``He`` -> ``She``, ``HE`` -> ``SHE``; a multiword phrase follows its first word (``What's up``
  -> ``Wazzup``). A leading pronoun ``I`` carries no case information, so ``I am going to``
  becomes ``fin to`` mid-sentence and ``Fin to`` at the start of a sentence.

Several counterparts
--------------------
``her`` (his / him) and ``his`` (her / hers) are resolved by role with a word-class heuristic on
the next word (see :func:`_role_target`); other many-to-many entries (``cool`` -> lit / sick / ill)
get a deterministic choice from a hash of (seed, text, match position), never from call order.
The choice is recorded in :attr:`Swap.target <fairtalk.records.Swap>` with ``n_choices``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import cast

from fairtalk.lexicons import Lexicon
from fairtalk.records import Side, Swap

__all__ = ["SwapResult", "Swapper"]

_MSG_NOT_LEXICON = "Swapper needs a fairtalk.lexicons.Lexicon, got {type}"
_MSG_BAD_SEED = "seed must be an int, got {value!r}"
_MSG_BAD_TOKEN = "mask token must be a string, got {value!r}"

_WS = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})
#: Left boundary: no word character, nor a word character plus apostrophe (``rock'n'roll``).
_LEFT = r"(?<!\w)(?<!\w['\u2018\u2019])"
#: Right boundary: no word character (an apostrophe may follow: ``he'll``).
_RIGHT = r"(?!\w)"
#: Whitespace inside one turn: a multi-word term or a role cue never spans two turns (U+001E).
_SPACE = r"[^\S\x1e]"
#: The next token after a match: a word, another character, or nothing (end of text or turn).
_NEXT = re.compile(_SPACE + r"*(?:([\w'\u2019-]+)|(\S))?")
_I_PRONOUNS = frozenset({"i", "i'm", "i'd", "i'll", "i've", "imma"})
_SENTENCE_END = frozenset('.!?"\u201c\u201d')

# Closed word lists for the role of ``her``/``his`` (see _role_target).
_FUNCTION_WORDS = frozenset(
    # determiners, quantifiers and pronouns
    "a an the this that these those my your his her its our their some any every each no all both"
    " another such what which whose i me you he him she we us they them it myself yourself"
    " himself herself itself ourselves themselves someone something anyone anything everyone"
    " everything nobody nothing"
    # prepositions and particles
    " to for with at in on about from by of into onto up down out off over under after before"
    " around through back away along across behind like as than near since until till"
    " without within upon toward towards"
    # conjunctions
    " and or but nor so because if when while though although unless whether then"
    # adverbs
    " now here there too yet already still also just even ever never always often sometimes"
    " today tonight tomorrow yesterday anymore anyway much more less enough well either neither"
    " later soon once twice again really quite not"
    # auxiliaries and copulas
    " is was are were be been being am will would can could shall should may might must do does"
    " did has have had 's 'd 'll".split()
)
#: Verbs and predicative adjectives that follow an object (``let her go``, ``made her happy``);
#: words that are also common nouns after a possessive (``her smile``, ``her work``) are left out.
_AFTER_OBJECT = frozenset(
    "go come cry know feel think want see say tell leave stay lose eat sing speak decide get take"
    " give make let understand believe hear become fall die wait happy sad upset angry jealous"
    " alone".split()
)
#: After ``his``: words that show it stands alone (``his is red``, ``his and mine``, ``his too``).
_AFTER_STANDALONE = frozenset(
    "is was are were will would can could should might must has had does did 's and or but nor"
    " than as so too either now then here there anyway though already yet also in on at with for"
    " from to of by about i you he she we they it".split()
)
#: After ``her very``: words that make it a possessive (``her very own``, ``her very best friend``).
_VERY_POSSESSIVE = frozenset("own best first last favorite favourite".split())


@dataclass(frozen=True, slots=True)
class SwapResult:
    """The swapped text and the swaps made, with spans into the original text."""

    text: str
    swaps: tuple[Swap, ...]

    @property
    def no_match(self) -> bool:
        """True when the text mentions no word of the lexicon (and so is unchanged)."""
        return not self.swaps

    @property
    def sides(self) -> frozenset[Side]:
        """The groups the original text mentions: a subset of ``{"a", "b"}``."""
        return frozenset(swap.source_side for swap in self.swaps)

    @property
    def both_groups(self) -> bool:
        """True when the original text mentions words of both groups (a mixed context)."""
        return len(self.sides) == 2


class Swapper:
    """Rewrite texts into the other group's wording with a lexicon, in one pass, both directions.

    Parameters
    ----------
    lexicon : Lexicon
        The word pairs (side ``a`` <-> side ``b``); a word may have several counterparts.
    seed : int, default 0
        Seeds the choice among several counterparts; the choice also depends on the text and
        the match position, never on call order.

    Examples
    --------
    >>> from fairtalk.lexicons import load_lexicon
    >>> swapper = Swapper(load_lexicon("gender"))
    >>> swapper.swap("He told her that his son-in-law called.").text
    'She told him that her daughter-in-law called.'
    >>> result = swapper.swap("(she's) the theme")
    >>> result.text, result.sides, result.swaps[0].target
    ("(he's) the theme", frozenset({'b'}), "he's")
    >>> swapper.mask("His mother and HE left.")
    'XYZ XYZ and XYZ left.'
    """

    def __init__(self, lexicon: Lexicon, *, seed: int = 0) -> None:
        if not isinstance(lexicon, Lexicon):
            raise TypeError(_MSG_NOT_LEXICON.format(type=type(lexicon).__name__))
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(_MSG_BAD_SEED.format(value=seed))
        self.lexicon = lexicon
        self.seed = seed
        #: normalised term -> its counterparts as (lowercase target, side of the term) pairs
        self._choices = _build_table(lexicon)
        #: normalised term -> its side, or None for a term on both sides
        self._side: dict[str, Side | None] = {
            term: sides.pop() if len(sides := {side for _, side in choices}) == 1 else None
            for term, choices in self._choices.items()
        }
        source = _LEFT + _trie_regex(_trie(self._choices)) + _RIGHT if self._choices else r"(?!)"
        # Matched on the lowercased text (same length in all but rare cases); the
        # case-insensitive pattern serves texts whose lowercase form changes length.
        self._pattern = re.compile(source)
        self._pattern_ci = re.compile(source, re.IGNORECASE)

    def __repr__(self) -> str:
        return f"Swapper(axis={self.lexicon.axis!r}, source={self.lexicon.source!r}, seed={self.seed})"

    @property
    def ambiguous(self) -> frozenset[str]:
        """Terms (lowercase) whose swap does not round-trip: several counterparts, or a counterpart that has several."""
        multi = {term for term, choices in self._choices.items() if len(choices) > 1}
        return frozenset(
            term
            for term, choices in self._choices.items()
            if term in multi or any(target in multi for target, _ in choices)
        )

    def swap(self, text: str) -> SwapResult:
        """Return ``text`` with every lexicon term replaced by its counterpart, case kept.

        Parameters
        ----------
        text : str
            Any text; a text without lexicon terms comes back unchanged with ``no_match`` set.

        Returns
        -------
        SwapResult
            The new text and one :class:`~fairtalk.records.Swap` per replacement, in order.
        """
        low, found = self._finditer(text)
        table = self._choices
        parts: list[str] = []
        swaps: list[Swap] = []
        position = 0
        memo: dict[str, bytes] = {}
        for match in found:
            key = match.group()
            choices = table.get(key) or table.get(key := _normalise(key))
            if choices is None:  # a Unicode case fold the table does not know ("\u017f" ~ "s")
                continue
            start, end = match.span()
            if len(choices) == 1:
                (target, side), n_choices = choices[0], 1
            else:
                target, side, n_choices = self._choose(key, text, low, start, end, memo)
            source = text[start:end]
            cased = target if source.islower() else _apply_case(source, target, text, start)
            parts += (text[position:start], cased)
            position = end
            swaps.append(Swap(start, end, source, cased, side, n_choices))
        if not swaps:
            return SwapResult(text, ())
        parts.append(text[position:])
        return SwapResult("".join(parts), tuple(swaps))

    def sides(self, text: str) -> frozenset[Side]:
        """Return the groups ``text`` mentions (as :attr:`SwapResult.sides`) without rewriting it."""
        low, found = self._finditer(text)
        found_sides: set[Side] = set()
        memo: dict[str, bytes] = {}
        for match in found:
            key = match.group()
            side: str | None = self._side.get(key, "") or self._side.get(key := _normalise(key), "")
            if side is None:  # a term on both sides: the side of the counterpart swap() picks
                side = self._choose(key, text, low, match.start(), match.end(), memo)[1]
            if side:
                found_sides.add(cast(Side, side))
                if len(found_sides) == 2:
                    break
        return frozenset(found_sides)

    def mask(self, text: str, token: str = "XYZ") -> str:
        """Return ``text`` with every lexicon term (either side) replaced by ``token``."""
        if not isinstance(token, str):
            raise TypeError(_MSG_BAD_TOKEN.format(value=token))
        _low, found = self._finditer(text)
        parts: list[str] = []
        position = 0
        for match in found:
            if match.group() in self._choices or _normalise(match.group()) in self._choices:
                parts += (text[position : match.start()], token)
                position = match.end()
        if not parts:
            return text
        parts.append(text[position:])
        return "".join(parts)

    # ------------------------------------------------------------------------------------
    # internals

    def _finditer(self, text: str) -> tuple[str, Iterator[re.Match[str]]]:
        """Return the lowercased text and an iterator over the matches in it."""
        low = text.lower()
        if len(low) == len(text):
            return low, self._pattern.finditer(low)
        # lowercasing changed the length (e.g. "\u0130"): match the original text instead
        return text, self._pattern_ci.finditer(text)

    def _choose(
        self, key: str, text: str, low: str, start: int, end: int, memo: dict[str, bytes]
    ) -> tuple[str, Side, int]:
        """Pick the counterpart of ``key`` at ``start``: (lowercase target, source side, n choices).

        ``memo`` caches the text's digest across the matches of one call.
        """
        choices = self._choices[key]
        n_choices = len(choices)
        role_target = _role_target(key, low, end)
        for target, side in choices:
            if target == role_target:
                return target, side, n_choices
        if "text" not in memo:
            memo["text"] = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        digest = hashlib.blake2b(
            memo["text"], digest_size=8, key=f"{self.seed}:{start}".encode()
        ).digest()
        target, side = choices[int.from_bytes(digest, "big") % n_choices]
        return target, side, n_choices


def _normalise(term: str) -> str:
    """Lowercase, typographic apostrophes to ``'``, whitespace runs to one space."""
    return _WS.sub(" ", term.lower().translate(_APOSTROPHES)).strip()


def _build_table(lexicon: Lexicon) -> dict[str, tuple[tuple[str, Side], ...]]:
    """Map each normalised term of either side to its counterparts, in lexicon order."""
    choices: dict[str, list[tuple[str, Side]]] = {}
    for pair in lexicon.pairs:
        a, b = _normalise(pair.a), _normalise(pair.b)
        sides: tuple[tuple[str, str, Side], ...] = ((a, b, "a"), (b, a, "b"))
        for source, target, side in sides:
            options = choices.setdefault(source, [])
            if (target, side) not in options:
                options.append((target, side))
    return {term: tuple(options) for term, options in choices.items()}


def _trie(terms: Iterable[str]) -> dict:
    """A character trie of the terms; the key ``""`` marks the end of a term."""
    root: dict = {}
    for term in terms:
        node = root
        for char in term:
            node = node.setdefault(char, {})
        node[""] = True
    return root


def _char_regex(char: str) -> str:
    if char == " ":
        return _SPACE + "+"
    if char == "'":
        return "['\u2018\u2019]"
    return re.escape(char)


def _trie_regex(node: dict) -> str:
    """Regex for a trie node: greedy, so the longest term that ends on a word boundary wins."""
    branches = [_char_regex(char) + _trie_regex(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if "" in node:
        return "(?:" + body + ")?"
    return body


def _apply_case(source: str, target: str, text: str, start: int) -> str:
    """Give the lowercase ``target`` the case pattern of ``source``'s first word."""
    words = source.split()
    first = words[0]
    if first.isupper() and len(first) > 1 or len(source) > 1 and source.isupper():
        return target.upper()
    if first[0] == "I" and first.lower().translate(_APOSTROPHES) in _I_PRONOUNS:
        # "I" is capitalised anywhere; keep a capital only where the target needs one.
        title = target.split()[0] in _I_PRONOUNS or _at_sentence_start(text, start)
    else:
        title = first[0].isupper()
    return target[:1].upper() + target[1:] if title else target


def _at_sentence_start(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in _SENTENCE_END


def _next_word(low: str, end: int) -> tuple[str | None, int]:
    """The lowercase word after position ``end`` (None at punctuation or the end) and its end."""
    match = _NEXT.match(low, end)
    assert match is not None  # _NEXT matches the empty string too
    word = match.group(1)
    return (word.lower().translate(_APOSTROPHES) if word else None), match.end()


def _role_target(key: str, low: str, end: int) -> str | None:
    """Resolve ``her`` to ``his``/``him`` and ``his`` to ``her``/``hers`` from the next word.

    A closed-class heuristic, not a parser:

    * ``her`` is an object (-> ``him``) before punctuation, the end of the text, a function word
      (determiner, pronoun, preposition, conjunction, auxiliary, common adverb) or a verb or
      adjective from a short list (``let her go``, ``made her happy``, ``love her very much``);
      otherwise it is a possessive (-> ``his``): ``her dog``, ``her new car``, ``her very own``.
    * ``his`` stands alone (-> ``hers``) before punctuation, the end of the text, an auxiliary,
      conjunction, preposition or pronoun (``that's his``, ``his is red``, ``his and mine``);
      otherwise it is a determiner (-> ``her``).

    Known limits: only the next word is read. A double object is taken for a possessive
    (``I gave her food`` -> ``his food``, though ``I saw her dog`` -> ``his dog`` is right), as is
    an object before an adjective or verb missing from the list (``found her boring``,
    ``heard her sing``); a possessive before a listed word is taken for an object
    (``her back hurts`` -> ``him back``, ``her like button``). Returns None for other words.
    """
    if key == "her":
        word, after = _next_word(low, end)
        if word is None:
            return "him"
        if word == "very":
            following, _ = _next_word(low, after)
            return "his" if following in _VERY_POSSESSIVE else "him"
        if word in _FUNCTION_WORDS or word in _AFTER_OBJECT:
            return "him"
        return "his"
    if key == "his":
        word, _ = _next_word(low, end)
        return "hers" if word is None or word in _AFTER_STANDALONE else "her"
    return None
