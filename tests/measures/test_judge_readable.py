"""Judges you can read (issue 25): strict parsing, every raw answer kept (store, judge.jsonl, the report), untestable keys reported."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.measures import Judge, Measure, parse_score, parse_yes_no
from fairtalk.report import render_html, render_json, render_markdown, write_report
from fairtalk.results import AuditResult

runner = CliRunner()

#: LLM-style judges, as a small model answers: a looping apology judged "Yes.", a rating that starts a sentence with 1.
JUDGES = """
from pathlib import Path

_CALLS = Path(__file__).with_name("judge_calls.txt")


def _count():
    with _CALLS.open("a", encoding="utf-8") as f:
        f.write("x")


def polite(prompt):
    _count()
    if "idiot" in prompt:
        return "No, it is rude."
    if "weather" in prompt:
        return "Yesterday it rained."
    return "Yes."


def rater(prompt):
    _count()
    if "reply 0" in prompt:
        return "4/5"
    if "reply 1" in prompt:
        return "garbage ###"
    return "1. The user's response is"


def careful_rater(prompt):
    _count()
    if "idiot" in prompt:
        return "Rating: 2 out of 5"
    return "Score: 4"
"""

#: The model under test: a looping apology for one group (the answer a judge called "Yes."), insults for the other.
MODELS = """
import re

_FEMALE = re.compile(r"\\b(she|her|mother|girl|sister)\\b", re.IGNORECASE)


def loops(context):
    if _FEMALE.search(context):
        return "you stupid idiot, go away" if "bank" in context else "I'm sorry, I'm sorry, I'm sorry, I'm sorry, I'm sorry"
    return "that is lovely, thank you for telling me"
"""


def _judges(folder: Path) -> Path:
    path = folder / "judges.py"
    path.write_text(JUDGES, encoding="utf-8")
    return path


def _calls(folder: Path) -> int:
    calls = folder / "judge_calls.txt"
    return len(calls.read_text(encoding="utf-8")) if calls.exists() else 0


def _responses(path: Path, pairs: list[tuple[str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, (a, b) in enumerate(pairs):
            f.write(json.dumps({"pair_id": f"p{i}", "side": "a", "context": f"he said {i}", "response": a}) + "\n")
            f.write(json.dumps({"pair_id": f"p{i}", "side": "b", "context": f"she said {i}", "response": b}) + "\n")
    return path


def _section(html: str, start: str, end: str) -> str:
    return html[html.index(start) : html.index(end)]


def test_a_scale_answer_is_a_number_standing_alone_or_after_score_never_the_first_digit_of_a_sentence() -> None:
    read = {
        answer: parse_score(answer, (1, 5))
        for answer in (
            "1. The user's response is",
            "4. Polite, with 2 slang words",
            "I'd say 2/5",
            "garbage ###",
            "3 or 4",
            "Score: 3 or 4",
            "Score: 8/10",
            "Score: 4\nScore: 2",
            "",
            "4",
            " 4.5 ",
            "4.",
            "**5**",
            "4/5",
            "4 out of 5",
            "Score: 4",
            "score: 3.",
            "Rating: 2 out of 5",
            "The reply is polite. Score: 4",
            "**Rating:** 5/5",
            "(3)",
        )
    }
    assert [read[a] for a in list(read)[:9]] == [None] * 9  # a sentence that starts with a digit, a guess, two scores
    assert [read[a] for a in list(read)[9:]] == [4.0, 4.5, 4.0, 5.0, 4.0, 4.0, 4.0, 3.0, 2.0, 4.0, 5.0, 3.0]
    assert parse_score("7", (1, 5)) is None and parse_score("Score: 0", (1, 5)) is None  # outside the scale: never clipped
    assert parse_score("8/10", (0, 10)) == 8.0 and parse_score("8/10", (1, 5)) is None


def test_a_yes_or_no_is_the_first_word_or_after_answer_never_a_word_that_starts_with_it() -> None:
    read = {
        answer: parse_yes_no(answer)
        for answer in (
            "Yes.",
            "yes, it is",
            "Answer: No",
            "**No**",
            "NO!",
            "answer: yes.",
            "No, it is rude.",
            "Yesterday it rained.",
            "Nobody knows",
            "I think yes",
            "Yes or no?",
            "yes/no",
            "maybe",
            "",
            "I'm sorry, I'm sorry, no",
            "Notably, yes",
        )
    }
    assert list(read.values()) == ["yes", "yes", "no", "no", "no", "yes", "no"] + [None] * 9


def test_the_judge_keeps_each_raw_answer_with_the_masked_response_and_its_reading() -> None:
    answers = {"kind": "Yes.", "rude": "No, it is rude.", "odd": "Yesterday it rained.", "slow": TimeoutError("slow")}

    def ask(prompts: list[str]) -> list[str | BaseException]:
        return [next(v for k, v in answers.items() if k in p) for p in prompts]

    judge = Judge(ask, mask_terms=("he", "she"))
    judge.score(["he is kind", "she is kind", "rude reply", "odd reply", "slow reply"])
    kind = judge.reading("she is kind")
    assert kind is not None and kind.response == "XYZ is kind" and kind.answer == "Yes." and kind.value == "yes"
    assert judge.reading("odd reply").value == "unparsed" and judge.reading("odd reply").answer == "Yesterday it rained."
    failed = judge.reading("slow reply")
    assert failed.value == "error" and failed.answer is None and failed.error == "TimeoutError: slow"
    assert judge.reading("never asked") is None
    assert np.asarray(judge.raw_scores(["he is kind", "rude reply"])).tolist() == [1.0, 0.0]  # read back, not asked again
    rating = Judge(lambda prompts: ["Score: 4" if "fine" in p else "1. The user's" for p in prompts], scale="1-5")
    scores = rating.score(["fine", "other"])
    assert scores["judge_score"][0] == 4.0 and math.isnan(scores["judge_score"][1])
    assert rating.reading("fine").value == 4.0 and rating.reading("other").value == "unparsed"


def test_judge_jsonl_and_the_divergent_pairs_show_every_raw_answer(tmp_path: Path) -> None:
    judges = _judges(tmp_path)
    loop = "I'm sorry, I'm sorry, I'm sorry, I'm sorry, I'm sorry"
    pairs = [("that is lovely, he is kind", loop)] * 6 + [("he is great", "you stupid idiot")] * 4
    pairs += [("the weather is nice", "the weather is nice"), ("ok", "ok")]
    a, b = zip(*pairs, strict=True)
    result = fairtalk.score(
        list(a), list(b), axis="gender", measures=["length", f"judge:python:{judges}:polite"], n_resamples=200
    )
    answers = {(r.pair_id, r.side): r for r in result.judge_answers}
    assert len(answers) == 2 * len(pairs)
    looped = answers[("0", "b")]
    assert looped.response == loop and looped.answer == "Yes." and looped.value == "yes" and looped.judge == "judge"
    masked = answers[("0", "a")]
    assert masked.response == "that is lovely, XYZ is kind"  # as the judge read it: masked
    assert answers[("6", "b")].value == "no" and answers[("10", "a")].value == "unparsed"
    written = write_report(result, tmp_path / "report")
    lines = [json.loads(line) for line in (tmp_path / "report" / "judge.jsonl").read_text(encoding="utf-8").splitlines()]
    assert written["judge"] == tmp_path / "report" / "judge.jsonl"
    assert len(lines) == 2 * len(pairs)
    assert {
        "judge": "judge",
        "pair_id": "0",
        "side": "b",
        "response": loop,
        "answer": "Yes.",
        "value": "yes",
        "error": None,
    } in lines
    assert {
        "judge": "judge",
        "pair_id": "10",
        "side": "a",
        "response": "the weather is nice",
        "answer": "Yesterday it rained.",
        "value": "unparsed",
        "error": None,
    } in lines
    # the judge's own divergent pairs (its verdict differs between the sides), with each side's raw answer
    judged = [d for d in result.divergent_pairs if d.measure == "judge"]
    assert judged and {d.pair_id for d in judged} <= {str(i) for i in range(6, 10)}
    assert {(j.side, j.answer) for j in judged[0].judged} == {("a", "Yes."), ("b", "No, it is rude.")}
    html = render_html(result, plots=False)
    divergent = _section(html, 'id="divergent"', 'id="input"')
    assert "No, it is rude." in divergent and "Yes." in divergent and "Judge" in divergent
    markdown = render_markdown(result)
    assert "Most divergent pairs" in markdown and "No, it is rude." in markdown
    # results.json keeps the divergent pairs' answers, so a report rendered from it shows them too
    again = AuditResult.from_dict(json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8")))
    assert again.divergent_pairs == result.divergent_pairs
    assert "No, it is rude." in _section(render_html(again, plots=False), 'id="divergent"', 'id="input"')


def test_a_rerun_with_the_run_store_asks_the_judge_nothing(tmp_path: Path) -> None:
    judges = _judges(tmp_path)
    models = tmp_path / "models.py"
    models.write_text(MODELS, encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "\n".join(
            f"{s} {p}"
            for s in ("he", "she", "my father", "my mother")
            for p in ("works at the bank", "made dinner", "sings in a band", "is late")
        )
        + "\n"
    )
    store = tmp_path / "store.sqlite"
    options = {
        "corpus": corpus,
        "axes": "gender",
        "model": f"python:{models}:loops",
        "store": store,
        "measures": ["length", f"judge:python:{judges}:polite"],
        "n_resamples": 200,
    }
    first = fairtalk.audit(**options, out_dir=tmp_path / "first")
    asked = _calls(tmp_path)
    assert asked > 0
    again = fairtalk.audit(**options, out_dir=tmp_path / "again")
    assert _calls(tmp_path) == asked  # every judge answer came from the run store
    assert again.results["gender"].measure("judge_yes") == first.results["gender"].measure("judge_yes")
    folder = tmp_path / "again" / again.axes["gender"].folder
    lines = [json.loads(line) for line in (folder / "judge.jsonl").read_text(encoding="utf-8").splitlines()]
    loop = [line for line in lines if line["response"].startswith("I'm sorry")]
    assert loop and all(line["answer"] == "Yes." and line["value"] == "yes" for line in loop)
    assert "No, it is rude." in _section((folder / "report.html").read_text(encoding="utf-8"), 'id="divergent"', 'id="input"')


def test_a_judge_key_that_cannot_be_tested_is_reported_so_and_the_other_measures_still_are(tmp_path: Path) -> None:
    judges = _judges(tmp_path)
    responses = _responses(tmp_path / "r.jsonl", [(f"he is fine, reply {i}", f"she is fine, reply {i} ok") for i in range(10)])
    args = [
        "score",
        "--responses",
        str(responses),
        "--axis",
        "gender",
        "--resamples",
        "200",
        "--measures",
        f"length,judge:python:{judges}:rater",
        "--judge-scale",
        "1-5",
    ]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    result = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    row = result["measures"]["judge_score"]
    assert row["not_tested"] == "not tested: only 1 pair parsed on both sides (of 10), at least 2 are needed"
    assert row["p_paired"] is None and row["p_adjusted"] is None and row["verdict"] == "inconclusive"
    assert row["a"] == 4.0 and row["b"] == 4.0 and row["equivalent"] is None
    assert result["measures"]["length"]["p_paired"] is not None  # the other measures are tested and reported
    assert result["measures"]["judge_unparsed"]["p_paired"] is not None
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    judge_row = next(line for line in markdown.splitlines() if line.startswith("| Judge score"))
    assert "not tested" in judge_row
    assert "was not tested: only 1 pair parsed on both sides" in markdown  # the plain summary says why, once
    assert not any(line.startswith("Inconclusive") and "Judge score" in line for line in markdown.splitlines())
    assert "not tested: only 1 pair parsed on both sides" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "not tested" in done.output
    flat = " ".join(done.output.replace("│", " ").split())
    assert "gender: judge_score: not tested: only 1 pair parsed on both sides" in flat
    assert not any("inconclusive" in line and "judge_score" in line for line in done.output.splitlines())
    lines = [json.loads(line) for line in (tmp_path / "out" / "judge.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {line["answer"] for line in lines} == {"4/5", "garbage ###", "1. The user's response is"}
    assert {line["value"] for line in lines} == {4.0, "unparsed"}
    # the gates: a primary key that was not tested was not shown equivalent, nor shown different
    gate = runner.invoke(app, [*args, "-o", str(tmp_path / "g1"), "--primary", "judge_score", "--fail-unless-equivalent"])
    assert gate.exit_code == 1, gate.output
    # --fail-on-bias fails closed: with no primary key tested there is no evidence of "no difference" either
    bias = runner.invoke(app, [*args, "-o", str(tmp_path / "g2"), "--primary", "judge_score", "--fail-on-bias"])
    assert bias.exit_code == 1, bias.output
    assert "Gate fail-on-bias: FAILED — no primary measure was tested" in " ".join(bias.output.split())


class _Sparse(Measure):
    """A measure (not a judge) that scores only the responses that mention rain: NaN elsewhere."""

    name = "rainy"
    keys = ("rain_words", "words")
    kind = "count"
    version = "1"
    higher_is_better = {"rain_words": None, "words": None}
    unscored_keys = frozenset({"rain_words"})

    def score(self, texts: list[str]) -> dict[str, np.ndarray]:
        rain = [float(t.count("rain")) if "rain" in t else math.nan for t in texts]
        return {"rain_words": np.array(rain), "words": np.array([float(len(t.split())) for t in texts])}


def test_any_key_with_too_few_scored_pairs_is_not_tested_and_the_rest_is_scored() -> None:
    a = ["rain again", "dry", "dry day", "dry", "sunny day"]
    b = ["rain rain", "dry", "rain", "dry dry", "sunny"]
    result = fairtalk.score(a, b, axis="gender", measures=[_Sparse()], n_resamples=200)
    rain = result.measure("rain_words")
    assert rain.not_tested == "not tested: only 1 pair scored on both sides (of 5), at least 2 are needed"
    assert rain.p_paired is None and rain.verdict == "inconclusive" and rain.mde is None
    assert not any("every pair scores the same" in note for note in rain.notes)
    assert result.measure("words").p_paired is not None and result.measure("words").not_tested is None
    assert "rain_words" in result.not_equivalent() and "rain_words" not in result.detected()
    assert AuditResult.from_dict(result.to_dict()).measure("rain_words") == rain
    none = fairtalk.score(["dry"] * 4, ["dry"] * 4, axis="gender", measures=[_Sparse()], n_resamples=200)
    assert none.measure("rain_words").not_tested.startswith("not tested: no pair scored on both sides (of 4)")
    assert math.isnan(none.measure("rain_words").a)
    back = AuditResult.from_dict(json.loads(render_json(none)))  # strict JSON: NaN means are null, read back as NaN
    assert (
        math.isnan(back.measure("rain_words").a)
        and json.loads(render_json(back))["measures"]["rain_words"]["difference_abs"] is None
    )
    assert render_json(back) == render_json(none)


@pytest.mark.parametrize("answer", ["1. The user's response is", "4. Polite, with 2 slang words"])
def test_a_numbered_sentence_is_unparsed_not_a_score(answer: str) -> None:
    judge = Judge(lambda prompts: [answer] * len(prompts), scale="1-5")
    scores = judge.score(["some reply"])
    assert math.isnan(scores["judge_score"][0]) and scores["judge_unparsed"][0] == 1.0


def test_the_run_index_links_each_axis_judge_answers(tmp_path: Path) -> None:
    judges = _judges(tmp_path)
    models = tmp_path / "models.py"
    models.write_text(MODELS, encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("he works at the bank\nshe works at the bank\nhe is late\nshe is late\n", encoding="utf-8")
    run = fairtalk.audit(
        corpus=corpus,
        axes="gender",
        model=f"python:{models}:loops",
        n_resamples=200,
        measures=["length", f"judge:python:{judges}:polite"],
        out_dir=tmp_path / "out",
    )
    folder = run.axes["gender"].folder
    summary = json.loads((tmp_path / "out" / "run.json").read_text(encoding="utf-8"))
    assert summary["axes"]["gender"]["files"]["judge answers"] == f"{folder}/judge.jsonl"
    assert f'href="{folder}/judge.jsonl"' in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
