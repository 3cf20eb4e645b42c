r"""Counterfactual swapper: rewrite a text into the other group's wording, in one pass.

A :class:`Swapper` compiles a :class:`~fairtalk.lexicons.Lexicon` into one regular expression over
every entry of both sides (a character trie, so the longest entry wins and the cost per character
does not grow with the lexicon), then rewrites each match to its counterpart by a dict lookup.
All matches are found on the original text and replaced together, so ``he`` and ``she`` in one
sentence trade places and a replacement is never matched again.

Matching rules
--------------
* Case-insensitive; whitespace inside a multiword entry matches any run of whitespace within a
  line (a line break or a turn separator ends a term); a typographic apostrophe (``’``) matches ``'``.
* A conversation's turn separators and role marks (:mod:`fairtalk.records`) stay as they are:
  they are boundaries, and each turn opens a sentence (``\x11Her back hurts`` ->
  ``\x11His back hurts``).
* Whole words only: an entry never starts right after a letter, digit or ``_`` (nor after such a
  character followed by an apostrophe) and never ends right before one. Punctuation, hyphens and
  the ends of the string are boundaries, so ``"He.``, ``(him)`` and ``half-brother`` match but
  ``the``, ``theme`` and ``shell`` do not match ``he``. A trailing clitic is kept: ``he'll`` ->
  ``she'll`` (an entry such as ``he's`` still wins, being longer).
* Case: the replacement copies the source's case: ``he`` -> ``she``, ``He`` -> ``She``, ``HE`` ->
  ``SHE``; word by word where both have as many words (or pieces of a hyphenated word):
  ``the United States`` -> ``the United Kingdom``, ``X-Ray`` -> ``Gamma-Ray``; otherwise every
  word capitalised where every source word is (``LA City`` -> ``New York City``), else as the
  first word (``What's up`` -> ``Wazzup``, ``WHAT'S up`` -> ``WAZZUP``). A leading pronoun ``I``
  carries no case information, so ``I am going to`` becomes ``fin to`` mid-sentence and ``Fin to``
  at the start of a sentence. A lexicon entry's own capitals are kept (a pair ``USA`` - ``UK``: ``the usa`` ->
  ``the UK``), but for a phrase whose only capital is its first letter (``That's it``, as a
  sentence starts), which takes the text's case like a lowercase entry.

* A typographic apostrophe stays as it is: ``He’s`` -> ``She’s``, ``he‘s`` -> ``she‘s``.
* Fullwidth forms (``ＨＥ``, U+FF01-U+FF5E) match as the ASCII they fold to under NFKC, and the
  counterpart is written fullwidth: ``ＨＥ is here`` -> ``ＳＨＥ is here``. A word typed partly
  fullwidth keeps each character's width where the counterpart is as long (``ｈim`` -> ``ｈer``),
  else takes the width most of its characters have (``ｂｒｏther`` -> ``sister``); a fullwidth ``Ｉ``
  is the pronoun ``I``, and a fullwidth ``．``, ``！``, ``？`` or ``＂`` ends a sentence.

Word sense
----------
Three rules from the lexicon's header leave a match as it is, recorded in :attr:`SwapResult.kept`
with the reason, and make it count for no group (so ``oh man, it rained`` is no male context):

* ``# keep:`` fixed phrases (``oh my god``, ``spider man``, ``you guys``, ``stephen king``): a
  term inside one is not swapped. A space in a phrase also matches a hyphen (``Spider-Man``).
* ``# needs-determiner:`` terms (``man``, ``boy``, ``god``, ``guy``, ``dude``...) are swapped only
  after a determiner or possessive within three words in the same clause (``the man``, ``my old
  man``), not as an interjection or vocative (``oh man``, ``yeah man``, ``Man, that was close``).
* ``# needs-cue:`` terms (race: ``sick``, ``lit``, ``word``, ``peace``) are swapped only where they
  stand alone (``Sick!``) or right after a cue of theirs (``that's sick``), not in their ordinary
  sense (``I feel sick``, ``world peace``); see :func:`~fairtalk.counterfactual._senses.has_cue`.

Several counterparts
--------------------
``her`` (his / him) and ``his`` (her / hers) are resolved by role with a word-class heuristic on
the words around them (see :func:`~fairtalk.counterfactual._senses.role_target`); other
many-to-many entries (``cool`` -> lit / sick / ill) get one deterministic choice per text and
term, from a hash of (seed, text, term), never from call order: every ``cool`` of a text (any
case, every turn of a conversation) becomes the same word, and different texts vary. The choice is recorded in
:attr:`Swap.target <fairtalk.records.Swap>` with ``n_choices``. One-way lexicon entries
(``guy -> girl``) swap in one direction only, so ``girl`` keeps ``boy`` as its one counterpart.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, cast

from fairtalk.counterfactual._pattern import build_table, terms_regex
from fairtalk.counterfactual._senses import (
    at_sentence_start,
    has_cue,
    has_determiner,
    inside,
    phrase_pattern,
    role_target,
    target_by_role,
)
from fairtalk.lexicons import Lexicon
from fairtalk.records import Side, Swap

__all__ = ["Kept", "SwapResult", "Swapper", "role_target"]

_MSG_NOT_LEXICON = "Swapper needs a fairtalk.lexicons.Lexicon, got {type}"
_MSG_BAD_SEED = "seed must be an int, got {value!r}"
_MSG_BAD_TOKEN = "mask token must be a string, got {value!r}"

_WS = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})
_I_PRONOUNS = frozenset({"i", "i'm", "i'd", "i'll", "i've", "imma"})
#: A part of a term, as :func:`_apply_case` gives each its case: a word, or a piece of a hyphenated one (``X-Ray``).
_PARTS = re.compile(r"[^\s-]+")
#: The terms whose counterpart :func:`~fairtalk.counterfactual._senses.role_target` reads from their role.
_ROLE_TERMS = frozenset({"her", "his"})
#: The key under which :meth:`Swapper._choose` caches the text's digest (no term holds a line break).
_TEXT_DIGEST = "\n"
#: A fullwidth form of an ASCII character (``ＨＥ``): matched as its ASCII letter, as NFKC would fold it.
_FULLWIDTH = re.compile("[\uff01-\uff5e]")
_TO_ASCII = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_TO_FULLWIDTH = {code: code + 0xFEE0 for code in range(0x21, 0x7F)}
_IDEOGRAPHIC_SPACE = "\u3000"

#: Why a match was left as it is: inside a fixed phrase, a needs-determiner term without one, a needs-cue term without one.
KeptReason = Literal["phrase", "no-determiner", "no-cue"]


@dataclass(frozen=True, slots=True)
class Kept:
    """A lexicon term the swapper left unchanged on purpose, with its span in the original text."""

    start: int
    end: int
    source: str
    reason: KeptReason


@dataclass(frozen=True, slots=True)
class SwapResult:
    """The swapped text and the swaps made, with spans into the original text."""

    text: str
    swaps: tuple[Swap, ...]
    kept: tuple[Kept, ...] = ()

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
        the term (one choice per term in a text), never on call order.

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
        self._choices = build_table(lexicon, _normalise)
        #: normalised term -> the lexicon's spelling, for the terms whose capitals a swap keeps
        self._spellings = _own_spellings(lexicon)
        #: normalised term -> its side, or None for a term on both sides
        self._side: dict[str, Side | None] = {
            term: sides.pop() if len(sides := {side for _, side in choices}) == 1 else None
            for term, choices in self._choices.items()
        }
        #: fixed phrases (``# keep:``) and the lexicon terms inside them; terms that need a determiner
        self._phrases = phrase_pattern(lexicon.keep)
        words_in_phrases = {word for phrase in lexicon.keep for word in phrase.split()}
        self._in_phrases = frozenset(term for term in self._choices if all(word in words_in_phrases for word in term.split()))
        self._needs_determiner = frozenset(_normalise(term) for term in lexicon.needs_determiner)
        self._needs_cue = {_normalise(term): tuple(tuple(cue.split()) for cue in cues) for term, cues in lexicon.needs_cue}
        self._sensed = self._in_phrases | self._needs_determiner | frozenset(self._needs_cue)
        source = terms_regex(self._choices)
        # Matched on the lowercased text (same length in all but rare cases); the
        # case-insensitive pattern serves texts whose lowercase form changes length.
        self._pattern = re.compile(source)
        self._pattern_ci = re.compile(source, re.IGNORECASE)
        self._mask_always = self._unsensed_targets()
        #: the terms only a swap puts in (one-way lines' targets): masked in the text between the swap's own terms
        self._mask_only = self._mask_always - set(self._choices)
        masked = terms_regex(set(self._choices) | self._mask_only)
        self._mask_pattern = re.compile(masked)
        self._mask_pattern_ci = re.compile(masked, re.IGNORECASE)

    def _unsensed_targets(self) -> frozenset[str]:
        """The terms :meth:`mask` masks wherever they stand: every term a swap can put in, unless its sense rules hold where it lands.

        A target that is no term of its own (a one-way line's ``good -> fly``) is masked always,
        and so is a target whose word-sense rules (determiner, cues, fixed phrases) differ from
        those of a term swapped to it (``goddess -> god``, ``cool -> sick``): the swap puts it
        where its own rule may keep it, and one side of the pair would show it unmasked.
        """

        def rules(term: str) -> tuple[bool, tuple[tuple[str, ...], ...] | None, bool]:
            return term in self._needs_determiner, self._needs_cue.get(term), term in self._in_phrases

        always: set[str] = set()
        for source, choices in self._choices.items():
            for target, _ in choices:
                if target not in self._choices or target in self._sensed and rules(target) != rules(source):
                    always.add(target)
        return frozenset(always)

    def __repr__(self) -> str:
        return f"Swapper(axis={self.lexicon.axis!r}, source={self.lexicon.source!r}, seed={self.seed})"

    @property
    def ambiguous(self) -> frozenset[str]:
        """Terms (lowercase) whose swap may not round-trip.

        Several counterparts, a counterpart that has several or does not swap back (one-way
        entries), or a determiner or cue rule on the term or its counterpart (``goddess`` -> ``god``,
        which a second swap keeps without a determiner). Terms of ``# keep:`` phrases are left
        out: they round-trip except where a swap forms a phrase (``mother time`` -> ``father time``).
        """
        multi = {term for term, choices in self._choices.items() if len(choices) > 1}
        multi |= self._needs_determiner | set(self._needs_cue)
        return frozenset(
            term
            for term, choices in self._choices.items()
            if term in multi or any(t in multi or (term, "ab".replace(s, "")) not in self._choices.get(t, ()) for t, s in choices)
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
        swaps: list[Swap] = []
        kept: list[Kept] = []
        new_text = self._rewrite(text, swaps, kept)
        return SwapResult(new_text, tuple(swaps), tuple(kept))

    def swap_text(self, text: str) -> str:
        """Return only the swapped text (``swap(text).text``), without building the swap records."""
        return self._rewrite(text, None, None)

    def swap_lines(self, block: str) -> str:
        """Swap each line of ``block`` (lines end at a newline) as :meth:`swap_text` would, in one scan of the block.

        Lines without a lexicon term are copied as they are, so a large block of chat lines costs
        one regular-expression pass plus a rewrite of the lines that mention a group.
        """
        low = block.lower()
        if len(low) != len(block):  # a character whose lowercase changes length: line by line
            return "\n".join(map(self.swap_text, block.split("\n")))
        low = _folded(low)
        parts: list[str] = []
        position = 0  # the block is copied up to here; block[position] is a newline or the end
        line_start = line_end = -1
        matches: list[re.Match[str]] = []
        rewrite, find, rfind, size = self._rewrite_found, low.find, low.rfind, len(low)
        for match in self._pattern.finditer(low):
            start, end = match.span()
            if start >= line_end:  # a new line: rewrite the previous one
                if matches:
                    parts += (
                        block[position:line_start],
                        rewrite(block[line_start:line_end], low[line_start:line_end], matches, None, None, line_start),
                    )
                    position, matches = line_end, []
                line_start = rfind("\n", 0, start) + 1
                line_end = find("\n", start)
                if line_end < 0:
                    line_end = size
            if end > line_end:  # a term over a line end: per line, it is no match (rare)
                continue
            matches.append(match)
        if matches:
            parts += (
                block[position:line_start],
                rewrite(block[line_start:line_end], low[line_start:line_end], matches, None, None, line_start),
            )
            position = line_end
        if not parts:
            return block
        parts.append(block[position:])
        return "".join(parts)

    def sides(self, text: str) -> frozenset[Side]:
        """Return the groups ``text`` mentions (as :attr:`SwapResult.sides`) without rewriting it."""
        low, found = self._finditer(text)
        found_sides: set[Side] = set()
        memo: dict[str, bytes] = {}
        spans: list[list[tuple[int, int]]] = []
        for match in found:
            key = match.group()
            side: str | None = self._side.get(key, "") or self._side.get(key := _normalise(key), "")
            if key in self._sensed and self._kept_reason(key, low, match.start(), match.end(), spans):
                continue
            if side is None:  # a term on both sides: the side of the counterpart swap() picks
                side = self._choose(key, text, low, match.start(), match.end(), memo)[1]
            if side:
                found_sides.add(cast(Side, side))
                if len(found_sides) == 2:
                    break
        return frozenset(found_sides)

    def mask(self, text: str, token: str = "XYZ") -> str:
        """Return ``text`` with every term either side of a swap can hold replaced by ``token``.

        The terms of both sides, and the terms swapped in by one-way lines (``good -> fly``), so
        that a pair's two sides, which differ only by the swap, mask to the same text. Terms the
        swap keeps stay (``oh boy``, ``I feel sick``), except a term a swap can put where its own
        rule would keep it (``man``, put in for ``woman``, which needs no determiner): that one is
        masked wherever it stands (``oh man`` -> ``oh XYZ``).
        """
        if not isinstance(token, str):
            raise TypeError(_MSG_BAD_TOKEN.format(value=token))
        low, by_case = self._lowered(text)
        found = (self._pattern_ci if by_case else self._pattern).finditer(low)
        masked: list[tuple[int, int]] = []
        spans: list[list[tuple[int, int]]] = []
        for match in found:  # the terms the swap reads, as it reads them
            key = match.group()
            if key not in self._choices and (key := _normalise(key)) not in self._choices:
                continue  # a Unicode case fold the table does not know
            start, end = match.span()
            if key in self._mask_always or key not in self._sensed or not self._kept_reason(key, low, start, end, spans):
                masked.append((start, end))
        if self._mask_only:  # and the terms only a swap puts in, longest first over all terms
            pattern = self._mask_pattern_ci if by_case else self._mask_pattern
            masked += [m.span() for m in pattern.finditer(low) if _normalise(m.group()) in self._mask_only]
        if not masked:
            return text
        parts: list[str] = []
        position = 0
        for start, end in sorted(masked):  # overlapping spans merge into one token
            if start < position:
                if end > position:
                    parts[-1:] = [token]
                    position = end
                continue
            parts += (text[position:start], token)
            position = end
        parts.append(text[position:])
        return "".join(parts)

    # ------------------------------------------------------------------------------------
    # internals

    def _rewrite(self, text: str, swaps: list[Swap] | None, kept: list[Kept] | None) -> str:
        """The swapped text; appends the swaps made and the terms kept when lists are given."""
        low, found = self._finditer(text)
        return self._rewrite_found(text, low, found, swaps, kept)

    def _rewrite_found(
        self,
        text: str,
        low: str,
        found: Iterable[re.Match[str]],
        swaps: list[Swap] | None,
        kept: list[Kept] | None,
        offset: int = 0,
    ) -> str:
        """Rewrite the matches found in ``text`` (``low`` is it lowercased; their spans start ``offset`` earlier)."""
        table, sensed = self._choices, self._sensed
        parts: list[str] = []
        position = 0
        memo: dict[str, bytes] = {}
        spans: list[list[tuple[int, int]]] = []
        for match in found:
            key = match.group()
            choices = table.get(key) or table.get(key := _normalise(key))
            if choices is None:  # a Unicode case fold the table does not know ("\u017f" ~ "s")
                continue
            start, end = match.span()
            start -= offset
            end -= offset
            if key in sensed and (reason := self._kept_reason(key, low, start, end, spans)):
                if kept is not None:
                    kept.append(Kept(start, end, text[start:end], reason))
                continue
            if len(choices) == 1:
                (target, side), n_choices = choices[0], 1
            else:
                target, side, n_choices = self._choose(key, text, low, start, end, memo)
            source = text[start:end]
            if source.islower() and target not in self._spellings:
                cased = target
            else:
                cased = _apply_case(source, target, text, start, self._spellings)
            if not source.isascii():
                cased = _in_form_of(source, cased)
            parts += (text[position:start], cased)
            position = end
            if swaps is not None:
                swaps.append(Swap(start, end, source, cased, side, n_choices))
        if not parts:
            return text
        parts.append(text[position:])
        return "".join(parts)

    def _finditer(self, text: str) -> tuple[str, Iterator[re.Match[str]]]:
        """Return the lowercased text (fullwidth forms folded) and an iterator over the matches in it (as :meth:`_lowered`)."""
        low = text.lower()
        if len(low) == len(text):  # inlined: the common case, on every text
            if not low.isascii() and _FULLWIDTH.search(low) is not None:
                low = low.translate(_TO_ASCII)
            return low, self._pattern.finditer(low)
        low = _folded(text)
        return low, self._pattern_ci.finditer(low)

    @staticmethod
    def _lowered(text: str) -> tuple[str, bool]:
        """The text to match, as long as ``text``, and whether it needs the case-insensitive pattern.

        The lowercased text, its fullwidth forms folded to ASCII; where lowercasing changes the
        length (e.g. ``"\u0130"``), the original text, folded, for the case-insensitive pattern.
        """
        low = text.lower()
        if len(low) == len(text):
            return _folded(low), False
        return _folded(text), True

    def _kept_reason(self, key: str, low: str, start: int, end: int, spans: list[list[tuple[int, int]]]) -> KeptReason | None:
        """Why the match ``key`` at ``start:end`` stays as it is, or None to swap it.

        ``spans`` caches the text's fixed-phrase spans across the matches of one call.
        """
        if key in self._in_phrases and self._phrases is not None:
            if not spans:
                spans.append([m.span() for m in self._phrases.finditer(low)])
            if inside(spans[0], start, end):
                return "phrase"
        if key in self._needs_determiner and not has_determiner(low, start):
            return "no-determiner"
        if key in self._needs_cue and not has_cue(low, start, end, self._needs_cue[key]):
            return "no-cue"
        return None

    def _choose(self, key: str, text: str, low: str, start: int, end: int, memo: dict[str, bytes]) -> tuple[str, Side, int]:
        """Pick the counterpart of ``key`` at ``start``: (lowercase target, source side, n choices).

        A role term (``her``, ``his``) takes the counterpart of its role where the words around it
        tell one; otherwise the choice hashes (seed, text, term), so every occurrence of the term
        in the text, in any turn, gets the same counterpart. ``memo`` caches the text's digest
        and each term's across the matches of one call.
        """
        choices = self._choices[key]
        n_choices = len(choices)
        by_role = role_target(key, low, start, end) if key in _ROLE_TERMS else None
        if by_role is not None and all(target != by_role for target, _ in choices):
            by_role = target_by_role(key, by_role, (target for target, _ in choices))
        for target, side in choices:
            if target == by_role:
                return target, side, n_choices
        digest = memo.get(key)
        if digest is None:  # the term's first choice in this text: every other occurrence takes it too
            if (text_digest := memo.get(_TEXT_DIGEST)) is None:
                text_digest = memo[_TEXT_DIGEST] = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            digest = memo[key] = hashlib.blake2b(text_digest, digest_size=8, key=f"{self.seed}:{key}".encode()).digest()
        target, side = choices[int.from_bytes(digest, "big") % n_choices]
        return target, side, n_choices


def _folded(text: str) -> str:
    """``text`` with fullwidth forms of ASCII (``ｈｅ``) folded to ASCII, one character for one, so spans hold."""
    if text.isascii() or _FULLWIDTH.search(text) is None:
        return text
    return text.translate(_TO_ASCII)


def _in_form_of(source: str, replacement: str) -> str:
    """``replacement`` written in the characters ``source`` uses: its typographic apostrophe, fullwidth forms.

    ``he‘s`` -> ``she‘s``, ``He’s`` -> ``She’s``, ``ＨＥ`` -> ``ＳＨＥ`` (a fullwidth source's ASCII
    characters become fullwidth, its spaces ideographic where it has one).
    """
    apostrophe = "\u2019" if "\u2019" in source else "\u2018" if "\u2018" in source else None
    if apostrophe is not None:
        replacement = replacement.replace("'", apostrophe)
    if _FULLWIDTH.search(source) is not None:
        replacement = _in_widths(source, replacement)
    return replacement


def _is_wide(char: str) -> bool | None:
    """A character's width: True fullwidth (or the ideographic space), False ASCII, None a space or another character."""
    if "\uff01" <= char <= "\uff5e" or char == _IDEOGRAPHIC_SPACE:
        return True
    return False if "!" <= char <= "~" else None


def _in_widths(source: str, replacement: str) -> str:
    """``replacement`` (ASCII but for its apostrophe) in the widths of ``source``, which holds a fullwidth form.

    What we chose for a word typed partly fullwidth: where the two are as long, their characters
    map place by place, and each character takes the width of the source's at its place (``ｈim``
    -> ``ｈer``). Otherwise, and at a place where the source has an ASCII space or a character of
    no width of its own (a typographic apostrophe), the width most of the source's characters
    have; on a tie fullwidth, as every counterpart of a source with a fullwidth form was written
    before (``ｈe`` -> ``ｓｈｅ``). A space becomes ideographic (U+3000) only where the source has
    one: at its place, or, by the majority, anywhere in it.
    """
    widths = [_is_wide(char) for char in source]
    wide = widths.count(True) >= widths.count(False)
    if len(source) != len(replacement):
        if not wide:
            return replacement
        written = replacement.translate(_TO_FULLWIDTH)
        return written.replace(" ", _IDEOGRAPHIC_SPACE) if _IDEOGRAPHIC_SPACE in source else written
    chars = []
    for char, theirs, width in zip(replacement, source, widths, strict=True):
        if char == " ":
            chars.append(_IDEOGRAPHIC_SPACE if theirs == _IDEOGRAPHIC_SPACE else char)
        elif wide if width is None else width:
            chars.append(char.translate(_TO_FULLWIDTH))
        else:
            chars.append(char)
    return "".join(chars)


def term_key(term: str) -> str:
    """A matched term as the swapper keys its choice: fullwidth folded, lowercase, ``'``, one space (for CDA)."""
    return _normalise(_folded(term))


def in_form_of(source: str, word: str) -> str:
    """``word`` (ASCII, cased) written as the swapper writes a counterpart of ``source``: its apostrophe, fullwidth (for CDA)."""
    return _in_form_of(source, word)


def _normalise(term: str) -> str:
    """Lowercase, typographic apostrophes to ``'``, whitespace runs to one space."""
    return _WS.sub(" ", term.lower().translate(_APOSTROPHES)).strip()


def _spelt(term: str) -> str:
    """``term`` as a lexicon spells it, whitespace and apostrophes normalised but its case kept."""
    return _WS.sub(" ", term.translate(_APOSTROPHES)).strip()


def _own_spellings(lexicon: Lexicon) -> dict[str, str]:
    """Normalised term -> the lexicon's spelling, for the terms whose capitals a swap keeps (``UK``, ``McDonald``).

    A term of several words whose only capital is its first letter (``That's it``, as a sentence
    starts where the paper printed it) keeps none: it takes the text's case like a lowercase one.
    """
    spellings: dict[str, str] = {}
    for pair in lexicon.pairs:
        for term in (pair.a, pair.b):
            spelt = _spelt(term)
            sentence_cased = " " in spelt and spelt[:1].isupper() and spelt[1:] == spelt[1:].lower()
            if spelt != spelt.lower() and not sentence_cased:
                spellings.setdefault(_normalise(term), spelt)
    return spellings


def _capitalise(word: str) -> str:
    return word[:1].upper() + word[1:]


def _part_case(source: str, target: str) -> str:
    """``target`` in the case of ``source``, part by part (:data:`_PARTS`) where they have as many.

    ``United States`` -> ``United Kingdom``, ``X-Ray`` -> ``Gamma-Ray``; with other counts, every
    target part capitalised where every source part is (``New York City`` -> ``La City``), else
    the whole target in capitals where the source's first part is (``WANT to`` -> ``FINNA``), or
    capitalised where that is.
    """
    sources = _PARTS.findall(source)
    if not sources:
        return target
    spans = [match.span() for match in _PARTS.finditer(target)]
    if len(sources) == len(spans):
        cases = [str.upper if len(part) > 1 and part.isupper() else _capitalise if part[0].isupper() else str for part in sources]
    elif len(sources) > 1 and all(part[0].isupper() for part in sources):
        cases = [_capitalise] * len(spans)
    elif len(sources[0]) > 1 and sources[0].isupper():
        return target.upper()
    else:
        cases = [_capitalise if sources[0][0].isupper() else str]
    cased = list(target)
    for (begin, end), case in zip(spans, cases, strict=False):
        cased[begin:end] = case(target[begin:end])
    return "".join(cased)


def _apply_case(source: str, target: str, text: str, start: int, spellings: dict[str, str]) -> str:
    """Give the lowercase ``target`` the case pattern of ``source`` and keep the lexicon's own capitals of ``target``.

    ``spellings`` (:func:`_own_spellings`) holds the lexicon's capitals: a source spelt as the
    lexicon spells it (``UK``) shows no case of its own, and takes the target as the lexicon
    spells it (``USA``) where the lexicon spells that with capitals; otherwise the target's own
    capitals are kept over the source's case (``the uk`` -> ``the USA``).
    """
    own = spellings.get(target)
    if own is not None and (spelt := spellings.get(_normalise(source))) is not None and _spelt(source) == spelt:
        return own
    first = source.split()[0]
    if len(source) > 1 and source.isupper():
        cased = target.upper()
    elif first[0] in "I\uff29" and _folded(first).lower().translate(_APOSTROPHES) in _I_PRONOUNS:
        # "I" (or a fullwidth "Ｉ") is capitalised anywhere; keep a capital only where the target needs one.
        title = target.split()[0] in _I_PRONOUNS or at_sentence_start(text, start)
        cased = _capitalise(target) if title else target
    else:
        cased = _part_case(source, target)
    if own is None or len(own) != len(cased):
        return cased
    return "".join(mine if mine.isupper() else letter for letter, mine in zip(cased, own, strict=True))
