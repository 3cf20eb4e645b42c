"""Identity terms: every word that can tell a scorer which group a text is about, for masking before scoring.

A scorer that sees "gay" or "she" can react to the group instead of to what the text says about
it. :func:`identity_terms` collects what a mask must hide: the group phrases in play and their
plurals, the identity words inside those phrases ("gay" of "gay person"), the built-in identity
vocabulary of gender, sexual orientation and race, and the gender lexicon's words (pronouns,
kinship, titles, -man/-woman words), except roles marked by a suffix (``manager``/``manageress``,
``waiter``/``waitress``): the occupation says something about regard and stays. :func:`mask_identity` replaces each with one token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

__all__ = ["IDENTITY_WORDS", "identity_masker", "identity_terms", "mask_identity", "plural"]

#: Built-in identity vocabulary beyond the gender lexicon: orientation, race, and gendered nouns.
IDENTITY_WORDS: tuple[str, ...] = (
    # sexual orientation
    "gay",
    "gays",
    "lesbian",
    "lesbians",
    "homosexual",
    "homosexuals",
    "heterosexual",
    "heterosexuals",
    "bisexual",
    "bisexuals",
    "straight",
    "queer",
    "lgbt",
    "lgbtq",
    # race and ethnicity
    "black",
    "blacks",
    "white",
    "whites",
    "african-american",
    "african-americans",
    "african american",
    "african americans",
    "afro-american",
    "caucasian",
    "caucasians",
    "negro",
    "negroes",
    # gendered nouns and adjectives
    "man",
    "men",
    "woman",
    "women",
    "guy",
    "guys",
    "gal",
    "gals",
    "girl",
    "girls",
    "boy",
    "boys",
    "lady",
    "ladies",
    "gentleman",
    "gentlemen",
    "male",
    "males",
    "female",
    "females",
    "he",
    "she",
    "him",
    "her",
    "his",
    "hers",
    "himself",
    "herself",
    "he's",
    "she's",
    "mr",
    "mr.",
    "mrs",
    "mrs.",
    "ms",
    "ms.",
    "sir",
    "madam",
)
#: Nouns that name a person without naming a group: kept when they follow an identity word.
_GENERIC = frozenset({"person", "people", "persons", "individual", "individuals", "folk", "folks"})
_DETERMINERS = r"(?:(?:the|a|an|this|these|those)\s+)?"


_IRREGULAR_PLURALS = {"man": "men", "woman": "women", "person": "people", "child": "children"}


def plural(group: str) -> str:
    """The plural of a group noun phrase: ``gay person`` -> ``gay people``, ``man`` -> ``men``.

    Examples
    --------
    >>> plural("gay person"), plural("woman"), plural("nurse")
    ('gay people', 'women', 'nurses')
    """
    *head, last = group.split(" ")
    if last in _IRREGULAR_PLURALS:
        last = _IRREGULAR_PLURALS[last]
    elif last.endswith(("s", "x", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return " ".join([*head, last])


#: Gender-lexicon pairs that name a role more than a gender: left unmasked (their meaning carries regard).
_ROLE_PAIRS = frozenset({("governor", "matron"), ("tutors", "governesses")})
_FEMININE_SUFFIXES = ("ess", "esses", "esse", "ette", "ettes", "ine", "ines", "euse", "euses")


def _is_role_pair(male: str, female: str) -> bool:
    """``manager``/``manageress``, ``waiter``/``waitress``: an occupation or title marked by a suffix, not a gender noun."""
    stem = male[: max(2, len(male) - 2)]
    return (male, female) in _ROLE_PAIRS or (female.startswith(stem) and female.endswith(_FEMININE_SUFFIXES))


@lru_cache(maxsize=1)
def _gender_words() -> tuple[str, ...]:
    """Every word of the gender lexicon except suffix-marked roles (kinship, pronouns, titles, -man/-woman words)."""
    from fairtalk.lexicons._load import load_lexicon

    lexicon = load_lexicon("gender")
    words = {w.lower() for pair in lexicon.pairs if not _is_role_pair(pair.a.lower(), pair.b.lower()) for w in (pair.a, pair.b)}
    return tuple(sorted(words))


def identity_terms(groups: Iterable[str] = (), *, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Every term a mask must hide for these ``groups``: phrases, plurals, their identity words, the built-in vocabulary.

    Examples
    --------
    >>> terms = identity_terms(["gay person"])
    >>> all(t in terms for t in ("gay person", "gay people", "gay", "she", "lesbian"))
    True
    >>> "person" in terms
    False
    """
    found: set[str] = {t.lower() for t in IDENTITY_WORDS} | set(_gender_words())
    for group in groups:
        phrase = " ".join(group.lower().split())
        if not phrase:
            continue
        found |= {phrase, plural(phrase)}
        found |= {word for word in phrase.split() if word not in _GENERIC}
    found |= {" ".join(t.lower().split()) for t in extra if t.strip()}
    return tuple(sorted(found))


@lru_cache(maxsize=32)
def _pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    body = "|".join(r"\s+".join(map(re.escape, t.split())) for t in sorted(terms, key=len, reverse=True))
    generic = "|".join(sorted(_GENERIC))
    # A determiner before the term is part of the mention; a generic noun after it too ("gay person").
    return re.compile(rf"(?<![\w-]){_DETERMINERS}(?:{body})(?:\s+(?:{generic}))?(?![\w-])", re.IGNORECASE)


def identity_masker(terms: Sequence[str], token: str = "XYZ") -> Callable[[str], str]:
    """A function that masks ``terms`` in a text (the pattern is compiled once, for many texts)."""
    pattern = _pattern(tuple(terms))
    repeats = re.compile(rf"{re.escape(token)}(?:\s+{re.escape(token)})+")
    return lambda text: repeats.sub(token, pattern.sub(token, text))


def mask_identity(text: str, terms: Sequence[str], token: str = "XYZ") -> str:
    """Replace every identity term (with its determiner) by ``token``; adjacent tokens merge into one.

    Examples
    --------
    >>> mask_identity("The gay man said she was a lesbian.", identity_terms())
    'XYZ said XYZ was XYZ.'
    """
    return identity_masker(terms, token)(text)
