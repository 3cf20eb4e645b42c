"""The judge measure: masked prompts, yes/no and ordinal answers parsed, unparsed answers counted, the rubric and scale in the manifest."""

from __future__ import annotations

import hashlib
import math

import pytest

import fairtalk
from fairtalk.errors import SpecError
from fairtalk.gates import evaluate
from fairtalk.lexicons import identity_terms, load_lexicon
from fairtalk.measures import DEFAULT_RUBRIC, Judge, parse_scale, parse_score, parse_yes_no


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
    assert judge.keys == ("respectful_yes", "respectful_unparsed", "respectful_error")
    assert scores["respectful_error"].tolist() == [0.0] * 4
    verdict = scores["respectful_yes"].tolist()
    assert verdict[:2] == [1.0, 0.0] and verdict[3] == 1.0
    assert math.isnan(verdict[2])  # an answer with neither yes nor no is no "no": that pair leaves judge_yes's test
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


def test_an_ordinal_judge_gives_the_number_in_its_scale_and_counts_the_rest_unparsed() -> None:
    answers = {"a": "4", "b": "Score: 2 out of 5.", "c": "I cannot rate this.", "d": "7", "e": "**5**", "f": "From 1 to 5: 3"}
    seen: list[str] = []

    def ask(prompts: list[str]) -> list[str]:
        seen.extend(prompts)
        return [answers[p.split('"')[1]] for p in prompts]

    judge = Judge(ask, scale="1-5", name="respect")
    scores = judge.score(list(answers))
    assert judge.keys == ("respect_score", "respect_unparsed", "respect_error") and judge.kind == "count"
    assert judge.kinds == {"respect_score": "count", "respect_unparsed": "rate", "respect_error": "rate"}
    assert judge.unscored_keys == {"respect_score", "respect_unparsed"} and judge.higher_is_better["respect_score"] is True
    assert "from 1 (not at all) to 5 (fully)" in seen[0] and "number only" in seen[0]  # the default ordinal rubric
    score = scores["respect_score"].tolist()
    assert score[:2] == [4.0, 2.0] and score[4] == 5.0
    assert all(math.isnan(score[i]) for i in (2, 3, 5))  # no number, out of the scale, ambiguous: never guessed
    assert scores["respect_unparsed"].tolist() == [0.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    config = judge.config
    assert config["scale"] == [1, 5] and config["answers"] == "score"
    assert config["rubric_sha256"] == hashlib.sha256(judge.rubric.encode()).hexdigest()
    yes_no = Judge(lambda p: ["yes"] * len(p)).config
    assert yes_no["scale"] is None and yes_no["answers"] == "yes/no" and yes_no["rubric"] == DEFAULT_RUBRIC


def test_a_failed_answer_is_counted_by_kind_and_leaves_its_pair_out_of_the_verdict() -> None:
    def ask(prompts: list[str]) -> list[str | BaseException]:
        return [TimeoutError("judge timed out") if "slow" in p else ("yes" if "kind" in p else "no") for p in prompts]

    judge = Judge(ask)
    scores = judge.score(["kind words", "slow answer", "rude words", "slow answer"])
    assert scores["judge_error"].tolist() == [0.0, 1.0, 0.0, 1.0]
    verdict, unparsed = scores["judge_yes"].tolist(), scores["judge_unparsed"].tolist()
    assert verdict[0] == 1.0 and verdict[2] == 0.0 and math.isnan(verdict[1]) and math.isnan(verdict[3])
    assert unparsed[0] == unparsed[2] == 0.0 and math.isnan(unparsed[1])  # a failure is not an unparsed answer
    assert judge.error_counts == {"TimeoutError": 1}  # one distinct prompt failed (asked once)
    assert judge.config["n_errors_by_kind"] == {"TimeoutError": 1}
    assert judge.config["error_examples"] == {"TimeoutError": "judge timed out"}
    rating = Judge(lambda prompts: [ValueError("down") if "x" in p else "4" for p in prompts], scale="1-5")
    rated = rating.score(["x", "fine"])
    assert math.isnan(rated["judge_score"][0]) and rated["judge_score"][1] == 4.0
    assert rated["judge_error"].tolist() == [1.0, 0.0] and rating.error_counts == {"ValueError": 1}


def test_scores_are_read_from_the_answer_without_guessing() -> None:
    assert parse_score("3", (1, 5)) == 3.0 and parse_score(" 4.5 ", (1, 5)) == 4.5
    assert parse_score("8/10.", (0, 10)) == 8.0 and parse_score("10", (0, 10)) == 10.0
    assert parse_score("I'd rate it 8/10.", (0, 10)) is None  # a number in a sentence: no "Score:" before it
    assert parse_score("0", (1, 5)) is None and parse_score("-2", (1, 5)) is None  # outside the scale: never clipped
    assert parse_score("3 or 4", (1, 5)) is None and parse_score("3-4", (1, 5)) is None and parse_score("four", (1, 5)) is None
    assert parse_score("4. Polite, with 2 slang words", (1, 5)) is None  # a sentence that starts with a digit
    assert parse_score("Score: 4. Polite, with 2 slang words", (1, 5)) == 4.0  # the labelled number is the answer
    assert parse_score("a 4/50", (1, 5)) is None  # 50 is no denominator of a scale that ends at 5


def test_the_scale_is_checked() -> None:
    assert parse_scale("0-10") == (0, 10) and parse_scale((1, 7)) == (1, 7) and parse_scale(None) is None
    for bad in ("5-1", "1-1", "a-b", "1..5", (1,), (1.0, 5.0), (True, 5), "-1-5"):
        with pytest.raises(SpecError, match="LOW-HIGH"):
            Judge(lambda p: p, scale=bad)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="--judge-scale must be LOW-HIGH"):
        fairtalk.ScoreOptions(judge_scale="5-1", names={"judge_scale": "--judge-scale"})  # type: ignore[arg-type]
    assert fairtalk.ScoreOptions(judge_scale="1-5").judge_scale == (1, 5)  # type: ignore[arg-type]
    assert fairtalk.ScoreOptions(judge_scale="1-5").to_dict()["judge_scale"] == [1, 5]  # type: ignore[arg-type]


def test_an_ordinal_python_judge_is_tested_like_a_count_over_the_pairs_it_scored(tmp_path) -> None:  # noqa: ANN001
    judge_file = tmp_path / "rater.py"
    judge_file.write_text(
        "def rate(prompt):\n"
        "    if 'gibberish' in prompt:\n"
        "        return 'I cannot rate this.'\n"
        "    return '2' if 'idiot' in prompt else 'Score: 5 out of 5'\n"
    )
    a = [f"he is right, reply {i}" if i % 10 else f"gibberish {i}" for i in range(40)]
    b = [f"she is an idiot, reply {i}" if i % 4 == 1 else f"she is right, reply {i}" for i in range(40)]
    result = fairtalk.score(a, b, axis="gender", measures=[f"judge:python:{judge_file}:rate"], judge_scale="1-5")
    row = {m.name: m for m in result.measures}["judge_score"]
    assert row.kind == "count" and "mcnemar" not in row.paired_test  # a count: the mean test, not McNemar
    scored = [i for i in range(40) if i % 10]  # the pairs whose side a was gibberish are left out
    assert row.a == 5.0 and row.b == pytest.approx(sum(2.0 if i % 4 == 1 else 5.0 for i in scored) / len(scored))
    assert row.p_paired is not None and row.p_paired < 0.01
    assert any("4 of 40 pairs left out" in note for note in row.notes)
    unparsed = {m.name: m for m in result.measures}["judge_unparsed"]
    assert unparsed.kind == "rate" and unparsed.a == pytest.approx(0.1) and unparsed.b == 0.0
    check = {c.key: c for c in result.scorer_check}
    assert not check["judge_score"].flagged and check["judge_score"].n_probes >= 10  # the certificate ran on the judge
    config = next(m.config for m in result.provenance.measures or () if m.name == "judge")
    assert config is not None
    assert config["scale"] == (1, 5) and "from 1 (not at all) to 5" in config["rubric"] and len(config["rubric_sha256"]) == 64
    assert result.provenance.options is not None and result.provenance.options.judge_scale == (1, 5)
    untested = fairtalk.score(a, b, axis="gender", measures=[f"judge:python:{judge_file}:rate"], judge_scale="6-9")
    row = untested.measure("judge_score")  # no answer in the scale: reported as not tested, the run goes on
    assert row.not_tested is not None and row.not_tested.startswith("not tested: no pair parsed on both sides (of 40)")
    assert row.p_paired is None and row.verdict == "inconclusive" and untested.measure("judge_unparsed").a == 1.0


def test_a_judge_that_never_answers_yes_or_no_leaves_judge_yes_untested_warns_and_fails_the_gate(tmp_path) -> None:  # noqa: ANN001
    judge_file = tmp_path / "echo.py"
    judge_file.write_text("def echo(prompt):\n    return 'you said: ' + prompt[:40]\n")
    a = [f"he is right, reply {i}" for i in range(300)]
    b = [f"she is right, reply {i}" for i in range(300)]
    result = fairtalk.score(
        a, b, axis="gender", measures=[f"judge:python:{judge_file}:echo"], primary=["judge_yes"], margins={"judge_yes": 0.05}
    )
    row = result.measure("judge_yes")  # before: 0.0 ("no") on every side, so "identical on every pair" and equivalent
    assert row.not_tested is not None and row.not_tested.startswith("not tested: no pair parsed on both sides (of 300)")
    assert row.verdict == "inconclusive" and result.measure("judge_unparsed").a == 1.0
    assert any(w.startswith("judge_unparsed: the judge's answer held neither yes nor no for 600 of 600") for w in result.warnings)
    outcome = evaluate(result, "fail-unless-equivalent")
    assert not outcome.passed and outcome.decisions[0].key == "judge_yes" and not outcome.decisions[0].passed
