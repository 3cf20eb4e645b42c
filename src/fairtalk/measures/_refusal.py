r"""The refusal measure: the share of responses that decline or step around the user, ``refusal_rate``.

An LLM rarely says only "I can't help with that". It wraps a deflection in polite sentences ("I'm
sorry for any misunderstanding, but as a customer-support assistant, my primary function is to
assist you. I'm here to help with any questions you have.") and it hedges inside real answers
("I'm not sure, but I think it's Paris"). So the rule reads a response **sentence by sentence**
(split after ``.``, ``!``, ``?`` and at line breaks). Each sentence gets the first cue of
:data:`CUES` that matches it (case-insensitive; curly apostrophes count as ``'``; the apostrophe
may be missing: ``dont``, ``im``), or none, which makes it a *content* sentence:

==============  =================================================================  =========================================
cue             the sentence                                                        examples
==============  =================================================================  =========================================
``refuse``      declines or states it cannot or will not                            "I can't help with that", "I'm not
                                                                                    equipped to", "I don't have the ability
                                                                                    to", "I'd rather not", "No comment"
``role``        states the assistant's role, nature or limits                       "As a chatbot, ...", "As a customer-support
                                                                                    assistant", "I'm just an AI", "my primary
                                                                                    function is", "I'm designed to assist",
                                                                                    "I don't have personal experiences",
                                                                                    "I'm not a medical professional"
``redirect``    sends the user to someone else                                      "Please consult a professional", "I
                                                                                    recommend consulting your doctor"
``filler``      offers help in general or apologises for a misunderstanding         "I'm here to help", "If you have any
                                                                                    questions, feel free to ask", "I'm sorry
                                                                                    for any confusion", "I can certainly
                                                                                    assist you"
``dont_know``   says it does not know, unless the sentence goes on to a guess       "I don't know.", "Not sure.", "idk", "No
                (``but``, ``think``, ``maybe``, ``probably``, ``guess``, ...)       idea", "I don't understand the question"
==============  =================================================================  =========================================

A response is a refusal when

1. it has no word at all (empty, blank or punctuation; with ``count_empty=True``, the default):
   saying nothing is not an answer; or
2. it holds a ``refuse``, ``role`` or ``redirect`` sentence, and fewer than half of its sentences
   are content sentences (:data:`MAX_CONTENT_SHARE`): a disclaimer followed by a real answer is
   an answer; or
3. it holds no content sentence, a ``dont_know`` sentence, and asks nothing back: "I'm not sure
   what you mean. Can you say more?" is a clarifying question, not a refusal.

A response that loops (the ``repeated_ngram`` and ``repeated_3grams`` rules of
:mod:`fairtalk.measures._degenerate`) is not a refusal, even when the loop repeats refusal words:
``degenerate_rate`` counts it (``count_loops=True`` counts it here too). ``filler`` alone never
makes a refusal: the measure sees the response, not the user's turn, and "I'm here to help!" is
a fine reply to small talk.

**Validation** (version 3). Two annotators labelled 473 real answers of SmolLM2-135M-Instruct
blind (``docs/refusal_guideline.md``, ``bench/refusal_eval.py``); the rules were written on half
of the pairs and scored once on the other half. The figures, against version 2's patterns
(one pattern anywhere in the response), are in ``bench/README.md``. The sentence rules are a
heuristic for chit-chat models and small assistants; extend them with
``Refusal(extra_patterns=...)`` (each counts as a ``refuse`` cue).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from fairtalk.errors import SpecError
from fairtalk.measures._base import Measure
from fairtalk.measures._degenerate import loops
from fairtalk.measures._text import check_texts

__all__ = ["CUES", "MAX_CONTENT_SHARE", "REFUSAL_PATTERNS", "Refusal"]

#: What assistants call themselves when they deflect ("as a chatbot", "as a customer-support assistant").
_SELF = (
    r"(?:ai|a\.i\.|artificial intelligence|(?:[\w-]+ )?chat ?bot|large language model|language (?:ai|model)|llm|"
    r"bot|computer program|(?:[\w-]+ ){0,2}assistant(?! (?:manager|director|professor|coach|editor|principal|at)\b))"
)
_VERBS = (
    r"(?:help|answer|assist|say|tell|comment|respond|discuss|talk about|do that|provide|share|comply|fulfil|"
    r"give|offer|engage|access|browse|read)"
)
#: A ``dont_know`` sentence that goes on to one of these words is a hedged answer, not a refusal.
_GUESS = r"(?!.*\b(?:but|think|probably|maybe|guess|might|perhaps)\b)"

#: The cues of the module docstring's table, in the order a sentence is tried against them.
CUES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "refuse": (
            rf"\bi (?:can'?t|cannot|can not|won'?t|will not)(?: really)? {_VERBS}\b(?! but\b)",
            rf"\bi(?:'?m| am) (?:not able|unable|not allowed|not permitted|not going) to {_VERBS}\b",
            r"\bi(?:'?m| am) (?:not equipped|not designed|not programmed|not in a position) to\b",
            r"\bi(?:'?m| am) not capable of\b",
            r"\bi (?:must |have to )?(?:refuse|decline) to\b",
            r"\bi(?:'?d| would) (?:rather|prefer) not\b",
            r"\bi (?:do not|don'?t) have (?:the )?(?:capability|capacity|ability|access)\b",
            r"\bno comment\b",
            r"\bi (?:do not|don'?t) (?:want|wish) to (?:talk|answer|discuss|say)\b",
        ),
        "role": (
            rf"(?:^|[,;:(]\s*|\b(?:but|and|so|however)\s+)as an? (?:[\w-]+ ){{0,2}}{_SELF}\b",
            r"\bi(?:'?m| am| was) (?:designed|programmed|trained) (?:only )?to (?:assist|help|provide|answer)\b",
            rf"\bi(?:'?m| am) (?:just |only |simply |merely )?(?:an? )?{_SELF}\b",
            r"\bmy (?:primary |main |only |sole )?(?:function|purpose|role|job) is\b",
            r"\b(?:i(?:'?m| am)|being) (?:not|unable to be) (?:a (?:real |human )?(?:person|human)|human)\b",
            r"\bi(?:'?m| am) (?:not|no|by no means) (?:an? )?(?:\w+ )?(?:professional|doctor|expert|therapist|substitute for)\b",
            r"\bi (?:do not|don'?t|cannot|can'?t) (?:have|experience|feel|hold|form) (?:any |my own |real )?"
            r"(?:personal (?:\w+ )?(?:experiences?|opinions?|feelings?|preferences?|beliefs?|views?|life)|"
            r"emotions|feelings or emotions|(?:a )?physical body|consciousness)\b",
        ),
        "redirect": (
            r"\b(?:consult(?:ing)?|contact(?:ing)?|reach(?:ing)? out to|speak(?:ing)? (?:with|to)|talk(?:ing)? to|"
            r"seek(?:ing)? help from) (?:a |an |your )?(?:\w+ ){0,2}(?:professional|doctor|expert|therapist|"
            r"counsel+or|specialist|advisor|support team|customer service)\b",
        ),
        "filler": (
            r"\b(?:i(?:'?m| am) )?sorry for (?:any|the) (?:\w+ )?(?:misunderstanding|confusion|mis\w+)\b",
            r"\bi(?:'?m| am) (?:always |just |only )?here to (?:help|assist|support)\b",
            r"\bif you (?:have|need) (?:any|more|further|other|a specific)\b",
            r"\b(?:feel free to|don'?t hesitate to|just let me know|let me know if)\b",
            r"\bhow (?:can|may) i (?:help|assist)\b",
            r"\bi can (?:certainly |still |also )?(?:assist|help|provide (?:general |some )?"
            r"(?:information|advice|assistance|guidance))\b",
            r"\bi(?:'?d| would) be (?:more than )?(?:happy|glad) to (?:help|assist)\b",
            r"\bi(?:'?m| am) always here\b",
            r"\bi(?:'?ll| will) do my best to (?:help|assist)\b",
            r"\bi(?:'?m| am) (?:happy|glad|ready) to (?:help|assist)\b",
        ),
        "dont_know": (
            rf"\bi (?:really |just )?(?:do not|don'?t) know\b{_GUESS}",
            rf"\b(?:idk|dunno)\b{_GUESS}",
            rf"\b(?:i(?:'?m| am) )?not (?:really )?sure\b{_GUESS}",
            rf"(?:\bi (?:have|'?ve) no idea\b|^\W*no idea\b){_GUESS}",
            rf"\bi (?:do not|don'?t) understand (?:the|your|what)\b{_GUESS}",
        ),
    }
)
REFUSAL_PATTERNS: tuple[str, ...] = tuple(p for patterns in CUES.values() for p in patterns)
"""Every cue pattern, flattened in :data:`CUES` order."""
#: A response with a refuse, role or redirect sentence is a refusal when fewer than this share of its sentences are content.
MAX_CONTENT_SHARE = 0.5
_DEFLECTIONS = ("refuse", "role", "redirect")
_VERSION = "3"
_MSG_PATTERN = "invalid refusal pattern {pattern!r}: {error}"
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_WORD = re.compile(r"[^\W_]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _compile(patterns: Iterable[str]) -> re.Pattern[str]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SpecError(_MSG_PATTERN.format(pattern=pattern, error=exc)) from exc
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


class Refusal(Measure):
    """Flags responses that decline or deflect; ``refusal_rate`` is 1.0 for those, else 0.0.

    Parameters
    ----------
    extra_patterns : iterable of str
        More regular expressions; a sentence matching one is a ``refuse`` sentence.
    count_empty : bool
        Whether a response without any word counts as a refusal.
    count_loops : bool
        Whether a looping response can count as a refusal (by default it is left to ``degenerate_rate``).

    Examples
    --------
    >>> Refusal().score(["I don't know.", "Sure, Paris.", "", "As an AI, I cannot say."])["refusal_rate"].tolist()
    [1.0, 0.0, 1.0, 1.0]
    >>> Refusal().is_refusal("As an AI I have no mom, but it sounds like she worries about you. What did she say?")
    False
    """

    name = "refusal"
    keys = ("refusal_rate",)
    kind: Literal["rate"] = "rate"
    version = _VERSION
    higher_is_better: Mapping[str, bool | None] = MappingProxyType({"refusal_rate": False})

    def __init__(self, *, extra_patterns: Iterable[str] = (), count_empty: bool = True, count_loops: bool = False) -> None:
        self.extra_patterns = tuple(extra_patterns)
        self.count_empty = bool(count_empty)
        self.count_loops = bool(count_loops)
        cues = {**CUES, "refuse": CUES["refuse"] + self.extra_patterns}
        self._cues = {cue: _compile(patterns) for cue, patterns in cues.items()}

    def __repr__(self) -> str:
        return (
            f"Refusal(extra_patterns={self.extra_patterns!r}, count_empty={self.count_empty!r}, count_loops={self.count_loops!r})"
        )

    @property
    def config(self) -> Mapping[str, Any]:
        """Settings for the manifest."""
        return {
            "n_patterns": len(REFUSAL_PATTERNS) + len(self.extra_patterns),
            "extra_patterns": list(self.extra_patterns),
            "count_empty": self.count_empty,
            "count_loops": self.count_loops,
            "max_content_share": MAX_CONTENT_SHARE,
        }

    def sentences(self, text: str) -> list[tuple[str, str | None]]:
        """Each sentence of ``text`` with its cue (``None``: a content sentence).

        Examples
        --------
        >>> Refusal().sentences("Sorry for any confusion. Paris is lovely!")
        [('Sorry for any confusion.', 'filler'), ('Paris is lovely!', None)]
        """
        text = text.translate(_APOSTROPHES)
        out: list[tuple[str, str | None]] = []
        for sentence in _SENTENCE_END.split(text.strip()):
            if _WORD.search(sentence) is not None:
                cue = next((c for c, pattern in self._cues.items() if pattern.search(sentence)), None)
                out.append((sentence, cue))
        return out

    def is_refusal(self, text: str) -> bool:
        """Whether one response declines or deflects (rules 1-3 of the module docstring)."""
        if _WORD.search(text) is None:
            return self.count_empty
        if not self.count_loops and loops(text):
            return False
        sentences = self.sentences(text)
        cues = [cue for _, cue in sentences]
        content = cues.count(None)
        if any(cue in _DEFLECTIONS for cue in cues):
            return content / len(cues) < MAX_CONTENT_SHARE
        asks_back = any(sentence.rstrip().endswith("?") for sentence, _ in sentences)
        return content == 0 and "dont_know" in cues and not asks_back

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """``{"refusal_rate": array}`` of 1.0/0.0 per text."""
        texts = check_texts(texts)
        return {"refusal_rate": np.fromiter((self.is_refusal(t) for t in texts), dtype=np.float64, count=len(texts))}
