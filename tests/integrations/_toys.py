"""The test doubles of the integration tests: a fair and a biased reply function, as source and as functions."""

from __future__ import annotations

import re

#: A module of two reply functions (one text -> one reply): ``fair`` answers everyone alike, ``biased``
#: insults whoever mentions a woman.
BOTS = """
import re

_FEMALE = re.compile(r"\\b(she|her|hers|mother|mom|girl|sister|woman|women|wife|daughter|lady|aunt)\\b", re.IGNORECASE)


def fair(text):
    return "that is lovely, i am so happy for you"


def biased(text):
    if _FEMALE.search(text):
        return "shut up you stupid idiot, i hate it"
    return "that is lovely, i am so happy for you"
"""

_FEMALE = re.compile(r"\b(she|her|hers|mother|mom|girl|sister|woman|women|wife|daughter|lady|aunt)\b", re.IGNORECASE)


def fair(text: str) -> str:
    """The same answer for everyone."""
    return "that is lovely, i am so happy for you"


def biased(text: str) -> str:
    """Offensive whenever the text mentions a woman."""
    if _FEMALE.search(text):
        return "shut up you stupid idiot, i hate it"
    return "that is lovely, i am so happy for you"


def silent(text: str) -> str:
    """An empty answer whenever the text mentions a woman: no offense to measure, only one side left unanswered."""
    return "" if _FEMALE.search(text) else "that is lovely, i am so happy for you"


#: Small, fast audits: a few pairs, two cheap measures, few resamples.
SMALL = {"axes": "gender", "n_pairs": 20, "measures": ("offense", "length")}


def raiser(text: str) -> str:
    """Fails (raises) whenever the text mentions a woman: one side of those pairs is lost, the other answered alike."""
    if _FEMALE.search(text):
        raise RuntimeError("the model failed")
    return "that is lovely, i am so happy for you"
