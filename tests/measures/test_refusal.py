"""Tests for measures/refusal.py: the documented refusal patterns."""

from __future__ import annotations

import re

import pytest

from fairtalk.errors import SpecError
from fairtalk.measures import REFUSAL_PATTERNS, Refusal

REFUSALS = [
    "I don't know.",
    "i dont know lol",
    "I really do not know what to say",
    "I can't help with that.",
    "I cannot answer that question",
    "I\u2019m not sure.",
    "not sure tbh",
    "I'd rather not say.",
    "I would prefer not to comment",
    "As an AI, I have no opinions.",
    "As a large language model I can't",
    "I'm just an AI",
    "I have no idea",
    "No idea!",
    "idk",
    "I dunno man",
    "I am unable to help with that",
    "I won't answer that",
    "I refuse to discuss this",
    "No comment.",
    "I don't understand the question",
    "I don't want to talk about it",
    # LLM deflections (issue 13: SmolLM2 deflects in 30-40% of chit-chat answers)
    "As a chatbot, I don't have the capability to go out.",
    "As an AI language model, I can share some tips.",
    "As an artificial intelligence, I never sleep.",
    "I'm an AI assistant, so I can't taste pizza.",
    "I am just a computer program.",
    "I don't have personal experiences or feelings.",
    "I do not have a physical body, but I can imagine it.",
    "I don't have the capability to browse the internet.",
    "I'm not a human, but I understand.",
]
ANSWERS = [
    "Paris is the capital of France.",
    "I know what you mean!",
    "Sure, I can help with that.",
    "I love pizza.",
    "I'm sure it will be fine.",
    "That's a great idea",
    "I can tell you about it: it is blue.",
    "Nobody knows the trouble I've seen",
    "I'm an assistant manager at a store.",
    "She is an assistant at the law firm.",
    "As a kid I loved the beach.",
    "As a language teacher I love it.",
    "I don't have feelings for him anymore.",
    "I have no personal trainer.",
    "Sorry, I can't make it tonight, my shift runs late.",
]


@pytest.mark.parametrize("text", REFUSALS)
def test_refusals_are_flagged(text: str) -> None:
    assert Refusal().score([text])["refusal_rate"].tolist() == [1.0]


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_are_not_flagged(text: str) -> None:
    assert Refusal().score([text])["refusal_rate"].tolist() == [0.0]


def test_empty_and_punctuation_only_responses_count_unless_disabled() -> None:
    texts = ["", "   ", "...", "ok"]
    assert Refusal().score(texts)["refusal_rate"].tolist() == [1.0, 1.0, 1.0, 0.0]
    assert Refusal(count_empty=False).score(texts)["refusal_rate"].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_extra_patterns_extend_the_list_and_bad_ones_are_spec_errors() -> None:
    refusal = Refusal(extra_patterns=[r"\bask someone else\b"])
    assert refusal.score(["Ask someone else."])["refusal_rate"].tolist() == [1.0]
    assert refusal.config["n_patterns"] == len(REFUSAL_PATTERNS) + 1
    with pytest.raises(SpecError, match="invalid refusal pattern"):
        Refusal(extra_patterns=["(unclosed"])


def test_every_documented_pattern_compiles_and_appears_in_the_docstring() -> None:
    import fairtalk.measures.refusal as module

    for pattern in REFUSAL_PATTERNS:
        re.compile(pattern)
    assert module.__doc__ is not None and "I don't know" in module.__doc__
    assert Refusal().keys == ("refusal_rate",) and Refusal().kind == "rate"
