"""Word sense for the swapper: the role of ``her``/``his``, fixed phrases, terms that need a determiner or a cue.

Internal to :mod:`fairtalk.counterfactual`. Everything here reads the lowercased text around one
match with closed word lists; none of it is a parser, and the limits are written where they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fairtalk.records import ROLE_MARKS

#: Whitespace inside one line of one turn: a multi-word term or a role cue never spans two turns
#: (U+001E) or two lines.
SPACE = r"[^\S\x1e\n]"
#: The next token after a match: a word, another character, or nothing (end of text or turn).
_NEXT = re.compile(SPACE + r"*(?:([\w'\u2019-]+)|(\S))?")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})
#: What a sentence opens after: its punctuation (its fullwidth forms ``．！？＂`` too, as the swapper matches
#: fullwidth text), a turn separator (U+001E), a turn's role mark.
_SENTENCE_END = frozenset('.!?"\u201c\u201d\x1e\uff0e\uff01\uff1f\uff02' + ROLE_MARKS)
_WORD = re.compile(r"[\w'\u2019]+")
#: Where the look-back for a determiner stops: the end of a clause or of a turn.
_CLAUSE_END = re.compile(r"[.!?;:\x1e\n" + ROLE_MARKS + "]")

# Closed word lists for the role of ``her``/``his`` (see role_target).
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
#: Verbs, greetings and predicative adjectives that follow an object (``let her go``, ``made her
#: happy``, ``kissed her goodnight``); words that are also common nouns after a possessive
#: (``her smile``, ``her work``) are left out.
_AFTER_OBJECT = frozenset(
    "go come cry know feel think want see say tell leave stay lose eat sing speak decide get take"
    " give make let understand believe hear become fall die wait happy sad upset angry jealous"
    " alone goodnight goodbye hello hi".split()
)
#: Endings of adjectives and participles: before a clause end they are predicative (``found her boring.``).
_ADJECTIVE_ENDINGS = ("ing", "ed", "ful", "ous", "ive", "able", "ible", "less", "ish")
#: After ``his``: words that show it stands alone (``his is red``, ``his and mine``, ``his too``).
_AFTER_STANDALONE = frozenset(
    "is was are were will would can could should might must has had does did 's and or but nor"
    " than as so too either now then here there anyway though already yet also in on at with for"
    " from to of by about i you he she we they it".split()
)
#: After a sentence-initial ``Her``: words that keep it a pronoun (``Her and me went``).
_COORDINATORS = frozenset("and or too either neither".split())
#: After ``her very``: words that make it a possessive (``her very own``, ``her very best friend``).
_VERY_POSSESSIVE = frozenset("own best first last favorite favourite".split())

#: Determiners and possessives that make a noun a reference to a person (``the man``, ``my boy``).
DETERMINERS = frozenset(
    "a an the this that these those my your his her its our their every each any some no another"
    " one what which whose such other".split()
)
#: ``'s`` words that are contractions, not possessives (``that's man`` has no determiner).
_CONTRACTIONS = frozenset("it's that's what's he's she's there's here's let's who's where's how's when's why's".split())
#: How far back a determiner may stand: ``a really old man`` (three words between at most).
_LOOK_BACK_WORDS = 3


def at_sentence_start(text: str, start: int) -> bool:
    """True when ``start`` opens the text, a sentence or a turn."""
    before = text[:start].rstrip(" \t\n\r\u3000")
    return not before or before[-1] in _SENTENCE_END


def _next_word(low: str, end: int) -> tuple[str | None, int]:
    """The lowercase word after position ``end`` (None at punctuation or the end) and its end."""
    match = _NEXT.match(low, end)
    assert match is not None  # _NEXT matches the empty string too
    word = match.group(1)
    return (word.lower().translate(_APOSTROPHES) if word else None), match.end()


def role_target(key: str, low: str, start: int, end: int) -> str | None:
    """Resolve ``her`` to ``his``/``him`` and ``his`` to ``her``/``hers`` from the words around it.

    A closed-class heuristic, not a parser:

    * ``her`` opening a sentence or turn before a word is a possessive (``Her back hurts``).
    * ``her`` is an object (-> ``him``) before punctuation, the end of the text, a function word
      (determiner, pronoun, preposition, conjunction, auxiliary, common adverb), a verb, greeting
      or adjective from a short list (``let her go``, ``kissed her goodnight``), or an adjective
      or participle that ends a clause (``found her boring.``); otherwise it is a possessive
      (-> ``his``): ``her dog``, ``her new car``, ``her very own``.
    * ``his`` stands alone (-> ``hers``) before punctuation, the end of the text, an auxiliary,
      conjunction, preposition or pronoun (``that's his``, ``his is red``, ``his and mine``);
      otherwise it is a determiner (-> ``her``).

    Known limits: a double object is taken for a possessive (``I gave her food`` -> ``his food``,
    though ``I saw her dog`` -> ``his dog`` is right), as is an object before a verb missing from
    the list (``heard her laugh``); a possessive before a listed word in mid-sentence is taken for
    an object (``rubbed her back`` -> ``him back``). Returns None for other words.
    """
    if key == "her":
        word, after = _next_word(low, end)
        if word is None:
            return "him"
        if at_sentence_start(low, start) and word not in _COORDINATORS:
            return "his"
        if word == "very":
            following, _ = _next_word(low, after)
            return "his" if following in _VERY_POSSESSIVE else "him"
        if word in _FUNCTION_WORDS or word in _AFTER_OBJECT:
            return "him"
        if word.endswith(_ADJECTIVE_ENDINGS):
            following, _ = _next_word(low, after)
            if following is None or following in _FUNCTION_WORDS:
                return "him"
        return "his"
    if key == "his":
        word, _ = _next_word(low, end)
        return "hers" if word is None or word in _AFTER_STANDALONE else "her"
    return None


#: The role :func:`role_target` read, by (term, the gender-axis target it gave).
_ROLES = {("her", "him"): "object", ("her", "his"): "determiner", ("his", "her"): "determiner", ("his", "hers"): "standalone"}
#: The role of each pronoun a term may become on another axis (singular they, neopronouns).
_TARGET_ROLES = {
    "them": "object",
    "their": "determiner",
    "theirs": "standalone",
    "xem": "object",
    "xyr": "determiner",
    "xyrs": "standalone",
}


def target_by_role(key: str, by_role: str | None, targets: Iterable[str]) -> str | None:
    """The target with the role ``role_target`` read (``her`` as object -> ``them``), for axes beyond gender."""
    role = _ROLES.get((key, by_role or ""))
    return next((t for t in targets if role is not None and _TARGET_ROLES.get(t) == role), None)


def has_determiner(low: str, start: int) -> bool:
    """True when a determiner or possessive stands within three words before ``start``, in the same clause.

    ``the man``, ``a really old man``, ``John's dad`` have one; ``oh man``, ``yeah man, ...``,
    ``Man, that was close`` do not. Commas do not end the look-back (``my, um, man``).
    """
    window = low[max(0, start - 80) : start]
    ends = [m.end() for m in _CLAUSE_END.finditer(window)]
    if ends:
        window = window[ends[-1] :]
    words = _WORD.findall(window)[-_LOOK_BACK_WORDS:]
    for word in words:
        word = word.translate(_APOSTROPHES)
        if word in DETERMINERS or (word.endswith("'s") and word not in _CONTRACTIONS):
            return True
    return False


#: Words that may stand between a cue and its term (``that's so sick``, ``it was pretty lit``).
_INTENSIFIERS = frozenset("so really pretty super hella very totally kinda real lowkey actually just still too".split())
#: Auxiliaries between a subject and a one-word cue (``I would be sick``).
_AUXILIARIES = frozenset("would will could can might must should gonna gotta not never".split())
#: Personal subjects: a one-word cue after one speaks of a person's state (``I was sick``), not a thing's quality.
_PERSONS = frozenset(
    "i you he she we they u ya y'all i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll".split()
)


def has_cue(low: str, start: int, end: int, cues: Iterable[tuple[str, ...]]) -> bool:
    """True when the term at ``start:end`` stands alone or right after one of ``cues`` (each a tuple of words).

    *Alone*: nothing but intensifiers before it in its clause, and punctuation or the end after
    it (``Sick!``, ``Word.``, ``so lit``). *After a cue*: a cue's words end right before it, with
    only intensifiers between (``that's sick``, ``it was so sick``), and a one-word cue does not
    follow a personal subject, directly or across an auxiliary (``I was sick``, ``I would be
    sick``). A closed-list heuristic: ``my dog was sick`` reads as the slang sense.
    """
    window = low[max(0, start - 80) : start]
    ends = [m.end() for m in _CLAUSE_END.finditer(window)]
    if ends:
        window = window[ends[-1] :]
    words = [word.translate(_APOSTROPHES) for word in _WORD.findall(window)]
    while words and words[-1] in _INTENSIFIERS:
        words.pop()
    if not words:
        return _next_word(low, end)[0] is None
    for cue in cues:
        n = len(cue)
        if n and tuple(words[-n:]) == cue:
            subject = words[:-n]
            if n == 1 and subject and subject[-1] in _AUXILIARIES:
                subject.pop()
            if not (n == 1 and subject and subject[-1] in _PERSONS):
                return True
    return False


def phrase_pattern(phrases: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern for fixed phrases: whole words, case as lowercased text, a space matching spaces or a hyphen."""
    bodies = sorted({p for p in phrases if p}, key=len, reverse=True)
    if not bodies:
        return None
    parts = []
    for phrase in bodies:
        words = [re.escape(word).replace("'", "['\u2018\u2019]") for word in phrase.split()]
        parts.append(rf"(?:{SPACE}+|-)".join(words))
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + r")(?!\w)")


def inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """True when ``start:end`` lies within one of ``spans``."""
    return any(s <= start and end <= e for s, e in spans)
