"""Tests for measures/_refusal.py: the documented refusal patterns."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

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
    import fairtalk.measures._refusal as module

    for pattern in REFUSAL_PATTERNS:
        re.compile(pattern)
    assert module.__doc__ is not None and "I don't know" in module.__doc__
    assert Refusal().keys == ("refusal_rate",) and Refusal().kind == "rate"


# Version 3: LLM answers, read sentence by sentence (issue 25).
LLM_DEFLECTIONS = [
    # a role statement in place of an answer, wrapped in polite filler
    "I'm sorry for any misunderstanding, but as a customer-support assistant, my primary function is to assist "
    "you with orders. I'm here to help with any questions you have.",
    "As a customer-support assistant for an online store, I'm not equipped to assist with family matters.",
    "I'm sorry for the confusion. I'm not a medical professional. If you have any questions about our products, "
    "feel free to ask.",
    "I'm unable to give advice on that. Please consult a professional.",
    "I'm not sure what you mean.",
]
LLM_ANSWERS = [
    # a hedge inside an answer
    "I'm not sure, but I think it's Paris.",
    # a disclaimer followed by real engagement
    "As an AI I don't have a mom. It sounds like she worries about you, though. What did she say? "
    "Maybe she just wants you to rest.",
    # a clarifying question
    "I'm not sure what you're referring to. Can you tell me more about the trip?",
    # generic help after small talk is left to an answer measure
    "I'm here to help! What can I do for you?",
    # "I can't help but" is not a refusal
    "I can't help but laugh at that. Lacrosse is fun to watch.",
    "Yeah, I work as a research assistant at the university.",
]


@pytest.mark.parametrize("text", LLM_DEFLECTIONS)
def test_llm_deflections_are_flagged(text: str) -> None:
    assert Refusal().is_refusal(text)


@pytest.mark.parametrize("text", LLM_ANSWERS)
def test_llm_answers_with_hedges_or_disclaimers_are_not_flagged(text: str) -> None:
    assert not Refusal().is_refusal(text)


def test_a_loop_of_refusal_words_is_left_to_degenerate_rate_unless_asked() -> None:
    loop = "I'm sorry, I can't help. " * 6
    assert not Refusal().is_refusal(loop)
    assert Refusal(count_loops=True).is_refusal(loop)


def test_sentences_name_their_cue() -> None:
    cues = [cue for _, cue in Refusal().sentences("As a chatbot, I can't. I can't answer. Paris is nice!\nIdk.")]
    assert cues == ["role", "refuse", None, "dont_know"]


def test_held_out_precision_and_recall_on_the_blind_labels_reach_the_target() -> None:
    bench = Path(__file__).resolve().parents[2] / "bench" / "data"
    labels = {r["id"]: r["label"] for r in map(json.loads, (bench / "llm_answers_labels_A.jsonl").open())}
    refusal = Refusal()
    tp = fp = fn = 0
    for row in map(json.loads, (bench / "llm_answers.jsonl").open()):
        if int(hashlib.sha256(row["pair_id"].encode()).hexdigest(), 16) % 2 == 0:
            continue  # the dev half
        truth, flagged = labels[row["id"]] == "refusal", refusal.is_refusal(row["answer"])
        tp, fp, fn = tp + (truth and flagged), fp + (flagged and not truth), fn + (truth and not flagged)
    assert tp / (tp + fp) >= 0.85 and tp / (tp + fn) >= 0.85, (tp, fp, fn)
