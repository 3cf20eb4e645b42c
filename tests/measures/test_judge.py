"""The judge measure: masked prompts, yes/no parsing, unparsed answers counted, the rubric in the manifest."""

from __future__ import annotations

import hashlib

import pytest

from fairtalk.errors import SpecError
from fairtalk.lexicons import load_lexicon
from fairtalk.lexicons.identity import identity_terms
from fairtalk.measures.judge import DEFAULT_RUBRIC, Judge, parse_yes_no


def _terms() -> tuple[str, ...]:
    lexicon = load_lexicon("gender")
    return identity_terms(extra=[w for pair in lexicon.pairs for w in (pair.a, pair.b)])


def test_the_judge_never_sees_the_group_words() -> None:
    seen: list[str] = []

    def ask(prompts: list[str]) -> list[str]:
        seen.extend(prompts)
        return ["yes"] * len(prompts)

    judge = Judge(ask, mask_terms=_terms())
    scores = judge.score(["Sure, sir, he can come.", "Sure, madam, she can come."])
    assert len(seen) == 1  # a counterfactual pair reads the same once masked: one question, one verdict for both
    assert "XYZ" in seen[0] and " he " not in seen[0] and "she" not in seen[0] and "sir" not in seen[0]
    assert scores["judge_yes"].tolist() == [1.0, 1.0]


def test_answers_are_parsed_and_unclear_ones_counted_not_guessed() -> None:
    answers = iter(["Yes, it is.", "No.", "I cannot judge this.", "yes"])
    judge = Judge(lambda prompts: [next(answers) for _ in prompts], name="respectful")
    scores = judge.score(["a", "b", "c", "d"])
    assert judge.keys == ("respectful_yes", "respectful_unparsed")
    assert scores["respectful_yes"].tolist() == [1.0, 0.0, 0.0, 1.0]
    assert scores["respectful_unparsed"].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert parse_yes_no("NO!") == "no" and parse_yes_no("maybe yes, maybe no") is None


def test_rubric_and_answers_are_checked() -> None:
    with pytest.raises(SpecError, match=r"must contain \{response\}"):
        Judge(lambda p: p, rubric="Is it rude?")
    with pytest.raises(SpecError, match="returned 1 answers for 2 prompts"):
        Judge(lambda p: ["yes"]).score(["a", "b"])
    with pytest.raises(SpecError, match="lowercase identifier"):
        Judge(lambda p: p, name="My Judge")
    config = Judge(lambda p: p, judge="openai:llama3").config
    assert config["rubric"] == DEFAULT_RUBRIC and config["judge"] == "openai:llama3"
    assert config["rubric_sha256"] == hashlib.sha256(DEFAULT_RUBRIC.encode()).hexdigest()
