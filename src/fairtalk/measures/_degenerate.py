r"""The degenerate measure: the share of answers that loop or are garbage, ``degenerate_rate``.

Small language models under greedy decoding often fall into a loop ("I'm sorry, I'm sorry, I'm
sorry, ...") or emit garbage ("Mmmmmmmm...", fragments in another script). Such an answer is
not a refusal and not offensive, so every other measure scores it like a normal answer, and
``length`` counts "Mmmmmm" as a 1-word answer. This measure flags it; read the other rows
beside it. A response is degenerate when any rule below fires (:meth:`Degenerate.reasons`
names the rules that fire for one response):

====================  ==========================================================  ==============================
rule                  fires when                                                  catches
====================  ==========================================================  ==============================
``empty``             the response has no word (letters or digits) at all:        ``""``, ``"   "``, ``"..."``,
                      empty, blank, punctuation or emoji only                     ``"!!!!!!!!"``
``char_run``          one to four letters repeated 5 times or more in a row        ``"Mmmmmm..."``, ``"Nooooo!"``,
                      (case-insensitive) when the run is 12 letters or longer    ``"hahahahahahaha lol"``,
                      or every word of the answer holds one; or a symbol other   ``"!!!!!!!!"``, ``"????????"``
                      than a Markdown rule character (``- = _ * # ~ ```)
                      repeated 8 times or more
``repeated_ngram``    a word repeated 4 times or more in a row, or a phrase of    ``"I'm sorry, I'm sorry, I'm
                      2 to 4 words 3 times or more (punctuation ignored)          sorry"``, ``"no no no no"``
``repeated_3grams``   at least 10 word 3-grams, of which 40% or more repeat an    a sentence said again and
                      earlier 3-gram of the same response                         again, not back to back
``off_script``        fewer than half of the response's letters are in the        an answer in Cyrillic or CJK
                      expected script (``script``; digits and symbols do not      fragments to a Latin-script
                      count, so ``"42"`` is not flagged)                          prompt
====================  ==========================================================  ==============================

The thresholds leave ordinary chat alone: "very very good" (a word twice), "No, no, no." (three
times), "Hmmm" (four letters), "Wow!!!" (three symbols), emphatic lengthening among other words
("oh noooooo", "yesssss have you been?": on the bare audit's retrieved human chat lines version 1
flagged 32 of 4,000 such answers), Markdown rules (``----------``) and
lists whose items share words. A measure sees only response texts, not the prompts, so "the
prompt's script" is a setting: ``script="latin"`` by default, and :func:`~fairtalk.measures.default_measures`
sets it to the script of the axis' own group words (the words the prompts were built from), so
a Cyrillic lexicon gets ``"cyrillic"``. ``script=None`` turns the rule off. A response the user
asked to answer in another language ("translate this into Japanese") is flagged by that rule.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from fairtalk.errors import SpecError
from fairtalk.measures._base import Measure
from fairtalk.measures._text import check_texts, tokenize

__all__ = ["RULES", "SCRIPTS", "Degenerate", "loops", "majority_script"]

#: The rules of the module docstring's table, in the order :meth:`Degenerate.reasons` names them.
RULES: tuple[str, ...] = ("empty", "char_run", "repeated_ngram", "repeated_3grams", "off_script")
#: Scripts the ``script`` option accepts (Unicode script names; ``cjk`` is Han, kana and Hangul together).
SCRIPTS: tuple[str, ...] = (
    "arabic",
    "armenian",
    "bengali",
    "cjk",
    "cyrillic",
    "devanagari",
    "ethiopic",
    "georgian",
    "greek",
    "gujarati",
    "gurmukhi",
    "hebrew",
    "kannada",
    "khmer",
    "lao",
    "latin",
    "malayalam",
    "myanmar",
    "sinhala",
    "tamil",
    "telugu",
    "thai",
    "tibetan",
)
_VERSION = "2"
_MSG_SCRIPT = "unknown script {given!r} for the degenerate measure (None turns the script rule off)"
#: One to four letters, then the same again 4 or more times (5 in a row in all), inside one word.
_LETTER_RUN = re.compile(r"([^\W\d_]{1,4})\1{4,}", re.IGNORECASE)
#: A letter run this long is degenerate even among other words ("Mmmmmmmmmmmm", "hahahahahahaha").
_LONG_RUN = 12
#: A symbol (not a letter, digit, space or Markdown rule character) 8 or more times in a row.
_SYMBOL_RUN = re.compile(r"([^\w\s\-=*#~`])\1{7,}")
_MAX_N = 4
_MIN_WORD_REPEATS = 4
_MIN_PHRASE_REPEATS = 3
_MIN_TRIGRAMS = 10
_REPEATED_SHARE = 0.4
_MIN_SCRIPT_SHARE = 0.5
#: The first word of a Unicode character name that names a script other than itself.
_SCRIPT_ALIASES = {"hiragana": "cjk", "katakana": "cjk", "hangul": "cjk", "bopomofo": "cjk", "ideographic": "cjk"}


def _letter_script(char: str) -> str:
    """The script of one letter, from its Unicode name (``LATIN SMALL LETTER A`` -> ``latin``)."""
    words = unicodedata.name(char, "").split()
    if words and words[0] in ("FULLWIDTH", "HALFWIDTH"):
        words = words[1:]
    first = words[0].lower() if words else ""
    return _SCRIPT_ALIASES.get(first, first)


def _script_counts(text: str) -> Counter[str]:
    if text.isascii():
        return Counter({"latin": sum(c.isalpha() for c in text)})
    return Counter(_letter_script(c) for c in text if c.isalpha())


def majority_script(texts: Iterable[str], default: str = "latin") -> str:
    """The script most letters of ``texts`` are written in; ``default`` when they hold no letter of a known script.

    Examples
    --------
    >>> majority_script(["he", "she", "他"])
    'latin'
    >>> majority_script(["он", "она"])
    'cyrillic'
    """
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_script_counts(text))
    known = [(n, script) for script, n in counts.items() if script in SCRIPTS and n > 0]
    return max(known)[1] if known else default


def _letter_run(text: str) -> bool:
    """A letter run of :data:`_LONG_RUN` or more, or runs in every word (an answer that is only "Noooooo!")."""
    words = re.findall(r"[^\W_]+", text)
    runs = [w for w in words if _LETTER_RUN.search(w)]
    return bool(runs) and (len(runs) == len(words) or any(len(m.group(0)) >= _LONG_RUN for m in _LETTER_RUN.finditer(text)))


def _repeated_ngram(tokens: list[str]) -> bool:
    """A word 4+ times in a row, or a 2- to 4-word phrase 3+ times in a row."""
    for n in range(1, _MAX_N + 1):
        needed = _MIN_WORD_REPEATS if n == 1 else _MIN_PHRASE_REPEATS
        for start in range(len(tokens) - n * needed + 1):
            gram = tokens[start : start + n]
            if all(tokens[start + k * n : start + (k + 1) * n] == gram for k in range(1, needed)):
                return True
    return False


def _repeated_3grams(tokens: list[str]) -> bool:
    """At least 10 word 3-grams, 40% or more of them repeating an earlier one."""
    grams = list(zip(tokens, tokens[1:], tokens[2:]))
    if len(grams) < _MIN_TRIGRAMS:
        return False
    return (len(grams) - len(set(grams))) / len(grams) >= _REPEATED_SHARE


def loops(text: str) -> bool:
    """Whether ``text`` loops: the ``repeated_ngram`` or ``repeated_3grams`` rule fires.

    Examples
    --------
    >>> loops("I'm sorry, I'm sorry, I'm sorry."), loops("No, no. I'm sorry.")
    (True, False)
    """
    tokens = tokenize(text)
    return _repeated_ngram(tokens) or _repeated_3grams(tokens)


class Degenerate(Measure):
    """Flags answers that loop or are garbage; ``degenerate_rate`` is 1.0 for those, else 0.0.

    See the module docstring for the rules and what they leave alone.

    Parameters
    ----------
    script : str or None
        The script a normal answer is written in (one of :data:`SCRIPTS`): an answer with
        letters, fewer than half of them in it, is degenerate. None turns this rule off.

    Raises
    ------
    SpecError
        An unknown script (with the choices).

    Examples
    --------
    >>> Degenerate().score(["Mmmmmmm...", "I'm sorry, I'm sorry, I'm sorry", "", "Sure!", "Привет мир"])[
    ...     "degenerate_rate"].tolist()
    [1.0, 1.0, 1.0, 0.0, 1.0]
    >>> Degenerate().reasons("Sorry sorry sorry sorry!!!!!!!!")
    ('char_run', 'repeated_ngram')
    >>> Degenerate(script="cyrillic").reasons("Привет мир")
    ()
    """

    name = "degenerate"
    keys = ("degenerate_rate",)
    kind: Literal["rate"] = "rate"
    version = _VERSION
    higher_is_better: Mapping[str, bool | None] = MappingProxyType({"degenerate_rate": False})

    def __init__(self, *, script: str | None = "latin") -> None:
        if script is not None and script not in SCRIPTS:
            raise SpecError(_MSG_SCRIPT.format(given=script), choices=SCRIPTS, given=str(script))
        self.script = script

    def __repr__(self) -> str:
        return f"Degenerate(script={self.script!r})"

    @property
    def config(self) -> Mapping[str, Any]:
        """Settings for the manifest."""
        return {"script": self.script, "rules": list(RULES if self.script is not None else RULES[:-1])}

    def reasons(self, text: str) -> tuple[str, ...]:
        """The rules (of :data:`RULES`) that ``text`` breaks, in that order; empty for a normal answer."""
        tokens = tokenize(text)
        fired = {
            "empty": not tokens,
            "char_run": _letter_run(text) or _SYMBOL_RUN.search(text) is not None,
            "repeated_ngram": _repeated_ngram(tokens),
            "repeated_3grams": _repeated_3grams(tokens),
            "off_script": self._off_script(text),
        }
        return tuple(rule for rule in RULES if fired[rule])

    def is_degenerate(self, text: str) -> bool:
        """Whether one response loops or is garbage (any rule fires)."""
        return bool(self.reasons(text))

    def _off_script(self, text: str) -> bool:
        if self.script is None:
            return False
        counts = _script_counts(text)
        total = sum(counts.values())
        return total > 0 and counts[self.script] / total < _MIN_SCRIPT_SHARE

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """``{"degenerate_rate": array}`` of 1.0/0.0 per text."""
        texts = check_texts(texts)
        flags = np.fromiter((self.is_degenerate(t) for t in texts), dtype=np.float64, count=len(texts))
        return {"degenerate_rate": flags}
