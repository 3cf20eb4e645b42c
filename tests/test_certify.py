"""The scorer certificate: a scorer that reacts to group words on neutral probes is flagged; a neutral one is not."""

from __future__ import annotations

import json

import numpy as np

import fairtalk
from fairtalk import Response, score
from fairtalk.inference import PROBES, certify, check_scorers, probe_pairs
from fairtalk.measures import Length, Measure
from fairtalk.report import render_markdown, write_report


class _SaysShe(Measure):
    """A biased instrument: 1 for any text that mentions "she" or "her"."""

    name = "says_she"
    keys = ("says_she",)
    kind = "rate"
    version = "1"
    higher_is_better = {"says_she": None}

    def score(self, texts):  # noqa: ANN001, ANN201
        return {"says_she": np.array([float(any(w in t.lower().split() for w in ("she", "her"))) for t in texts])}


class _Asks(Measure):
    """A neutral instrument: 1 for a question; a swap of the group words leaves it alone."""

    name = "asks"
    keys = ("asks",)
    kind = "rate"
    version = "1"
    higher_is_better = {"asks": None}

    def score(self, texts):  # noqa: ANN001, ANN201
        return {"asks": np.array([float("?" in t) for t in texts])}


def _records(n: int = 30) -> list[Response]:
    out = []
    for i in range(n):
        out += [
            Response(f"p{i}", "a", f"he said {i}", f"fine answer {i}"),
            Response(f"p{i}", "b", f"she said {i}", f"fine answer {i}"),
        ]
    return out


def test_probe_pairs_are_side_a_sentences_and_their_swaps() -> None:
    pairs = probe_pairs(fairtalk.load_lexicon("gender"))
    assert len(pairs) == len(PROBES["gender"])  # every written probe mentions side A only
    assert ("He is at the door.", "She is at the door.") in pairs
    assert all(a != b for a, b in pairs)
    assert len(probe_pairs(fairtalk.load_lexicon("race"))) >= 25


def test_a_scorer_that_reacts_to_the_group_is_flagged_and_a_neutral_one_is_not() -> None:
    checks = {c.key: c for c in certify([_SaysShe(), _Asks()], fairtalk.load_lexicon("gender"), {})}
    assert checks["says_she"].flagged and checks["says_she"].b > checks["says_she"].a
    assert checks["says_she"].p is not None and checks["says_she"].p < 0.05
    assert not checks["asks"].flagged and checks["asks"].gap == 0.0


def test_the_certificate_runs_with_every_score_and_reaches_the_report(tmp_path) -> None:  # noqa: ANN001
    result = score(_records(), axis="gender", measures=[_SaysShe(), _Asks(), Length()], n_resamples=50)
    assert result.flagged_scorers() == ("says_she",)
    assert {c.key for c in result.scorer_check} == {"says_she", "asks"}  # a word count is not checked
    text = render_markdown(result)
    assert text.index("Scorer check") < text.index("| Measure")  # at the top of the report
    write_report(result, tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["scorer_check"]["says_she"]["flagged"] is True and data["scorer_check"]["asks"]["flagged"] is False
    assert "scorer check" in (tmp_path / "report.html").read_text()
    assert score(_records(), axis="gender", measures=[_Asks()], n_resamples=50, scorer_check=False).scorer_check == ()


def test_a_custom_lexicon_gets_generic_probes(tmp_path) -> None:  # noqa: ANN001
    lexicon_file = tmp_path / "fruit.tsv"
    lexicon_file.write_text("# axis: fruit\n# groups: apple pear\napple\tpear\napples\tpears\n")
    pairs = probe_pairs(fairtalk.load_lexicon(str(lexicon_file)))
    assert ("I wrote the word apple on the board.", "I wrote the word pear on the board.") in pairs


class _OneProbe(Measure):
    """An instrument that reacts to one probe of 30: 1 for "She is at the door." only."""

    name = "one_probe"
    keys = ("one_probe_rate",)
    kind = "rate"
    version = "1"
    higher_is_better = {"one_probe_rate": None}

    def score(self, texts):  # noqa: ANN001, ANN201
        return {"one_probe_rate": np.array([float(t == "She is at the door.") for t in texts])}


def test_a_gap_of_one_probe_in_thirty_is_a_note_not_a_flag(tmp_path) -> None:  # noqa: ANN001
    (check,) = certify([_OneProbe()], fairtalk.load_lexicon("gender"), {})
    assert check.n_probes == 30 and abs(check.gap) > check.margin  # 1 in 30 (3.3 points) > the 2-point margin
    assert check.p == 1.0 and not check.flagged  # ... but p = 1: not distinguishable from 0
    assert "exceeds the margin ±0.02 but is not distinguishable from 0 (p 1.000" in check.note
    result = score(_records(), axis="gender", measures=[_OneProbe(), _SaysShe()], n_resamples=50)
    assert result.flagged_scorers() == ("says_she",)
    text = render_markdown(result)
    assert "**Scorer check: One Probe Rate (%)" not in text and "**Scorer check: Says she" in text  # one banner
    assert "Scorer check note: One Probe Rate (%): its gap on the probes (-0.0333) exceeds the margin" in text
    write_report(result, tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert page.count('<span class="badge bias">scorer check</span>') == 1
    assert '<span class="badge note">scorer check</span> Scorer check note: One Probe Rate' in page


def test_a_gap_beyond_the_margin_and_distinguishable_from_zero_is_flagged() -> None:
    lexicon = fairtalk.load_lexicon("gender")
    (check,) = certify([_SaysShe()], lexicon, {})
    assert check.flagged and check.p < 0.05 and (check.ci95[0] > 0 or check.ci95[1] < 0)
    (wide,) = certify([_SaysShe()], lexicon, {"says_she": 0.99})  # distinguishable, but within a margin of 0.99
    assert not wide.flagged and "is distinguishable from 0" in wide.note and "within the margin ±0.99" in wide.note


def test_a_scorer_check_of_length_alone_says_it_left_length_out(tmp_path) -> None:  # noqa: ANN001
    """Review finding: ``score --measures length --scorer-check`` wrote ``"scorer_check": {}`` and said nothing: the
    check leaves a size key out, so it checked nothing, silently."""
    from typer.testing import CliRunner

    from fairtalk.cli import app

    path = tmp_path / "responses.jsonl"
    rows = [{"pair_id": r.pair_id, "side": r.side, "context": r.context, "response": r.response} for r in _records()]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    args = ["score", "--responses", str(path), "--axis", "gender", "--resamples", "50", "--scorer-check", "-o", str(out)]
    done = CliRunner().invoke(app, [*args, "--measures", "length"])
    assert done.exit_code == 0, done.output
    note = "the scorer check left out length: its score depends on the text's size alone"
    assert note in " ".join(done.stdout.split())
    assert note in " ".join((out / "report.md").read_text().split())
    data = json.loads((out / "results.json").read_text())
    assert data["scorer_check"] == {} and any(note in w for w in data["warnings"])
    with_asks = score(_records(), axis="gender", measures=[_Asks(), Length()], n_resamples=50)
    assert [c.key for c in with_asks.scorer_check] == ["asks"] and not any("left out" in w for w in with_asks.warnings)
    unchecked = score(_records(), axis="gender", measures=[Length()], n_resamples=50, scorer_check=False)
    assert not any("scorer check" in w for w in unchecked.warnings)  # no check run: nothing left out of it


def _echo_judge(tmp_path) -> str:  # noqa: ANN001
    """A judge that never answers yes or no: its verdict (``judge_yes``) is unscored on every probe."""
    path = tmp_path / "echo.py"
    path.write_text("def echo(prompt):\n    return 'you said: ' + prompt[:40]\n")
    return f"judge:python:{path}:echo"


def test_a_key_left_out_for_a_reason_of_the_run_is_named_on_every_surface(tmp_path) -> None:  # noqa: ANN001
    """Review finding: a key the check skipped for another reason than its size (a judge's verdict scored on no probe)
    was silently absent: the certificate read "(2 keys checked)" and nothing said which key was not, nor why."""
    from typer.testing import CliRunner

    from fairtalk.cli import app

    path = tmp_path / "responses.jsonl"
    rows = [{"pair_id": r.pair_id, "side": r.side, "context": r.context, "response": r.response} for r in _records()]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    measures = f"{_echo_judge(tmp_path)},length,diversity"
    args = ["score", "--responses", str(path), "--axis", "gender", "--resamples", "50", "--scorer-check", "-o", str(out)]
    done = CliRunner().invoke(app, [*args, "--measures", measures])
    assert done.exit_code == 0, done.output
    note = "the scorer check left out judge_yes: the scorer gave a score on both sides of only 0 of the 30 probe pairs"
    assert note in " ".join(done.stdout.split())
    data = json.loads((out / "results.json").read_text())
    assert sorted(data["scorer_check"]) == ["judge_error", "judge_unparsed"] and any(note in w for w in data["warnings"])
    report = " ".join((out / "report.md").read_text().split()).replace("\\_", "_")
    assert note in report and "(2 keys checked)" in report
    assert note in " ".join((out / "report.html").read_text().split())
    # length and diversity are left out by their kind, as the docs and methods say: named only where nothing is checked
    assert not any("left out length" in w or "distinct" in w for w in data["warnings"] if w.startswith("the scorer check"))


def test_every_reason_a_key_is_left_out_has_its_note() -> None:
    from fairtalk.measures import Diversity, TokenLimit

    class _HalfBlank(_Asks):
        """A scorer with no score for the 6 "She ..." probes, though its measure does not declare it may leave one unscored."""

        def score(self, texts):  # noqa: ANN001, ANN201
            return {"asks": np.array([np.nan if t.startswith("She") else float("?" in t) for t in texts])}

    gender = fairtalk.load_lexicon("gender")
    checks, notes = check_scorers([_SaysShe(), _HalfBlank(), TokenLimit(), Length()], gender, {})
    assert [c.key for c in checks] == ["says_she"]
    assert notes == (  # the token limit's key, like length's, is left out by its kind: not named where a key was checked
        "the scorer check left out asks: the scorer gave no score (NaN or infinity) on 6 of the 30 probe pairs, and its "
        "measure does not declare that it may leave a response unscored (unscored_keys)",
    )
    assert check_scorers([TokenLimit(), Length()], gender, {})[1] == (
        "the scorer check left out length: its score depends on the text's size alone (a swap that changes a probe's "
        "size changes it by construction), and it had no other key to check",
        "the scorer check left out hit_token_limit: the token limit reads the model's finish reasons, not a text, and it "
        "had no other key to check",
    )
    assert check_scorers([_SaysShe(), Length()], gender, {}) == (certify([_SaysShe()], gender, {}), ())  # as before
    (corpus,) = check_scorers([Diversity()], gender, {})[1]
    assert corpus.startswith(
        "the scorer check left out distinct_1, distinct_2, diversity: their statistic is taken over each side"
    )
    assert corpus.endswith("and it had no other key to check")


def test_an_axis_that_gives_no_probe_pair_names_the_keys_it_left_out(tmp_path) -> None:  # noqa: ANN001
    lexicon_file = tmp_path / "kept.tsv"  # its one term is a phrase kept whole: no probe sentence swaps
    lexicon_file.write_text("# axis: kept\n# groups: m f\n# keep: the man\nthe man\tthe woman\n")
    lexicon = fairtalk.load_lexicon(str(lexicon_file))
    assert probe_pairs(lexicon) == []
    checks, notes = check_scorers([_SaysShe(), _Asks(), Length()], lexicon, {})
    assert checks == ()
    no_probe = "the axis gave no probe pair (no probe sentence swaps to side B's wording)"
    assert notes[0] == f"the scorer check left out says_she, asks: {no_probe}"
    assert notes[1].startswith("the scorer check left out length: its score depends on the text's size alone")


def test_answers_with_finish_reasons_get_no_warning_that_the_token_limit_was_left_out(tmp_path) -> None:  # noqa: ANN001
    """Review finding: every run whose answers carry finish reasons (hf:, openai:, vllm:) warned "the scorer check left
    out hit_token_limit" in the console, report.md, report.html and results.json, though the token limit is left out by
    its kind every time, as length is: named only where the check had no other key."""
    from typer.testing import CliRunner

    from fairtalk.cli import app

    path = tmp_path / "responses.jsonl"
    rows = [
        {"pair_id": r.pair_id, "side": r.side, "context": r.context, "response": r.response, "finish_reason": "stop"}
        for r in _records()
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["score", "--responses", str(path), "--axis", "gender", "--resamples", "50", "--scorer-check"]
    out = tmp_path / "out"
    done = CliRunner().invoke(app, [*args, "--measures", "offense,length", "-o", str(out)])
    assert done.exit_code == 0, done.output
    data = json.loads((out / "results.json").read_text())
    assert "hit_token_limit" in data["measures"]  # the token limit was tested ...
    assert "offense_rate" in data["scorer_check"]  # ... and the check ran on another key
    assert not any("scorer check" in w for w in data["warnings"]), data["warnings"]
    assert "left out hit_token_limit" not in " ".join(done.stdout.split())
    for report in ("report.md", "report.html"):
        assert "token limit reads" not in " ".join((out / report).read_text().split())
    alone = tmp_path / "alone"
    done = CliRunner().invoke(app, [*args, "--measures", "length", "-o", str(alone)])
    assert done.exit_code == 0, done.output
    warnings = json.loads((alone / "results.json").read_text())["warnings"]
    assert (
        "the scorer check left out hit_token_limit: the token limit reads the model's finish reasons, not a text, and it "
        "had no other key to check" in warnings
    )
