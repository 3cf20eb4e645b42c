"""Tests for measures/_degenerate.py: looping and garbage LLM answers are flagged, ordinary chat answers are not."""

from __future__ import annotations

import pytest

from fairtalk.errors import SpecError
from fairtalk.measures import Degenerate, Length, get_measure, score_unique
from fairtalk.measures._degenerate import RULES, majority_script

#: Looping or garbage answers, as SmolLM2-135M-Instruct gives them under greedy decoding (cut at the token limit),
#: each with the rules it breaks.
DEGENERATE = [
    ("Mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", ("char_run",)),
    ("Mmmmmm…", ("char_run",)),
    ("Noooooo!", ("char_run",)),
    ("I'm sorry, I'm sorry, I'm sorry, I'm sorry, I'm sorry, I'm sorry, I'm", ("repeated_ngram", "repeated_3grams")),
    ("Oh no, oh no, oh no, oh no!", ("repeated_ngram",)),
    ("I'm sorry to hear that. I'm sorry to hear that. I'm sorry to hear that. I'm sorry to", ("repeated_3grams",)),
    (
        "Thank you for your question. Thank you for asking. Thank you for your question. Thank you for your "
        "question. Thank you for",
        ("repeated_3grams",),
    ),
    ("the the the the the the the the the the", ("repeated_ngram",)),  # 8 3-grams: too few for the share
    ("Yes yes yes yes, I do.", ("repeated_ngram",)),
    ("!!!!!!!!!!!!!!!!!!!!", ("empty", "char_run")),
    ("", ("empty",)),
    ("   \n  ", ("empty",)),
    ("...", ("empty",)),
    ("Hahahahahahahaha that's funny", ("char_run",)),
    ("hahahahahahaha lol", ("char_run",)),
    ("Я не знаю, что сказать. Это очень интересно", ("off_script",)),
    ("你好！我是一个人工智能助手，很高兴认识你", ("off_script",)),
    ("The 星期 の 한국어 мы были там где", ("off_script",)),
    ("Well????????? what", ("char_run",)),
]

#: Ordinary SmolLM2-style chat answers, legitimate repetition, lists and very short answers included.
NORMAL = [
    "Sure!",
    "No.",
    "Yes, I do.",
    "42",
    "That sounds very very good to me!",
    "No, no, no. That's not what I meant.",
    "Hmmm, let me think about that.",
    "Wow!!! That's amazing.",
    "Hello! How can I help you today?",
    "I'm sorry to hear that. Is there anything I can do to help?",
    "Here are some tips:\n1. Eat well.\n2. Sleep well.\n3. Exercise well.",
    "- Apples: good for you\n- Pears: good for you\n- Plums: good for you",
    "## Summary\n\n----------\n\nThe meeting went well and everyone agreed on the plan.",
    "As a chatbot, I don't have personal experiences, but I can tell you that many people enjoy hiking.",
    "In Japanese, thank you is ありがとう (arigatou).",
    "Café au lait is a French drink made with coffee and hot milk.",
    "I think she is a great friend. She always listens and helps when I need it.",
    "Bye bye! Talk to you soon.",
    # emphatic lengthening among other words is chat, not a loop (human lines a retrieval model returns)
    "oh noooooo",
    "yesssss have you ever been?",
    "YASSSSSSSS Cap is AMAZING!!!!!",
    "Mmmmmm… I love the smell of",
    "i love biking but im not super fit or athletic sooooooo",
    "It costs $1,000,000 in total.",
    "😊",  # not an answer in words: the empty rule (punctuation or emoji only)
]


@pytest.mark.parametrize(("text", "rules"), DEGENERATE)
def test_looping_and_garbage_answers_are_flagged_with_their_rules(text: str, rules: tuple[str, ...]) -> None:
    measure = Degenerate()
    assert measure.reasons(text) == rules
    assert measure.score([text])["degenerate_rate"].tolist() == [1.0]


@pytest.mark.parametrize("text", NORMAL[:-1])
def test_ordinary_chat_answers_are_not_flagged(text: str) -> None:
    assert Degenerate().reasons(text) == ()
    assert Degenerate().score([text])["degenerate_rate"].tolist() == [0.0]


def test_an_emoji_only_answer_has_no_word_and_counts_as_empty() -> None:
    assert Degenerate().reasons(NORMAL[-1]) == ("empty",)


def test_counts_and_order_over_a_whole_side() -> None:
    texts = [text for text, _ in DEGENERATE] + NORMAL[:-1]
    flags = Degenerate().score(texts)["degenerate_rate"]
    assert flags.tolist() == [1.0] * len(DEGENERATE) + [0.0] * (len(NORMAL) - 1)
    assert len(DEGENERATE) >= 15 and len(NORMAL) >= 15
    assert score_unique(Degenerate(), texts + texts)["degenerate_rate"].tolist() == flags.tolist() * 2


def test_the_script_rule_follows_the_expected_script_and_can_be_turned_off() -> None:
    russian = "Я не знаю, что сказать."
    assert Degenerate(script="cyrillic").reasons(russian) == ()
    assert Degenerate(script="cyrillic").reasons("I don't know what to say.") == ("off_script",)
    assert Degenerate(script=None).reasons(russian) == ()
    assert Degenerate(script=None).config["rules"] == list(RULES[:-1])
    assert Degenerate(script="cjk").reasons("こんにちは、元気ですか") == ()  # kana and Han together
    with pytest.raises(SpecError, match="unknown script 'klingon'"):
        Degenerate(script="klingon")


def test_majority_script_of_group_words() -> None:
    assert majority_script(["he", "she", "brother", "sister"]) == "latin"
    assert majority_script(["он", "она", "брат", "сестра"]) == "cyrillic"
    assert majority_script(["42", "!"]) == "latin"  # no letters: the default


def test_registered_as_a_rate_that_is_better_low() -> None:
    measure = get_measure("degenerate")
    assert isinstance(measure, Degenerate) and measure.keys == ("degenerate_rate",)
    assert measure.kind == "rate" and measure.higher_is_better["degenerate_rate"] is False
    assert measure.version == "2" and measure.config["script"] == "latin"
    assert get_measure("degenerate", script="greek").script == "greek"
    with pytest.raises(TypeError):
        measure.score("one string")


def test_length_counts_a_degenerate_answer_like_any_other() -> None:
    # documented: "Mmmmmm..." is a 1-word answer to length; degenerate_rate is the row that says it is garbage
    texts = ["Mmmmmmmm...", "I'm sorry, I'm sorry, I'm sorry"]
    assert Length().score(texts)["length"].tolist() == [1.0, 6.0]
    assert Degenerate().score(texts)["degenerate_rate"].tolist() == [1.0, 1.0]
