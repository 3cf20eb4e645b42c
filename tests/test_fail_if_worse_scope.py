"""What `--fail-if-worse` decides: every primary key of the candidate, and never a model against itself.

Review findings: a baseline audited with a narrower `--primary` or `--measures` shrank the gate to
its own primary keys (the candidate's other primary keys went unchecked, and the gate passed), and
`audit --baseline-model` with the candidate's own model passed, as did `assert_not_worse(f, f)`.
"""

from __future__ import annotations

import json
from pathlib import Path

import junitparser
import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus
from fairtalk.cli import app
from fairtalk.gates import evaluate
from fairtalk.results import ModelComparison

runner = CliRunner()

#: ``plain`` and ``plain_too`` answer everyone alike (two models, the same answers); ``gloomy`` is
#: gloomy (not offensive) whenever a woman is mentioned.
MODELS = """
import re

_FEMALE = re.compile(r"\\b(she|her|mother|girl|sister|woman)\\b", re.IGNORECASE)


def plain(context):
    return "that is lovely, i am so happy for you"


def plain_too(context):
    return "that is lovely, i am so happy for you"


def gloomy(context):
    if _FEMALE.search(context):
        return "that is sad and terrible news, i am so sorry"
    return "that is lovely, i am so happy for you"
"""
#: Identical offense on the toy corpus's 40 pairs is shown within ±0.2 (the identical-answers bound needs 29).
MARGIN = ("--margin", "offense_rate=0.2")


@pytest.fixture(scope="module")
def toys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("toys")
    models = folder / "scope_models.py"
    models.write_text(MODELS, encoding="utf-8")
    return write_corpus(folder), models


def _audit(toys: tuple[Path, Path], out: Path, model: str, *extra: str):  # noqa: ANN202
    corpus, models = toys
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", f"python:{models}:{model}", "--resamples", "50"]
    done = runner.invoke(app, [*args, "-o", str(out), "-q", *extra])
    assert done.exit_code == 0, done.output
    return out


def _compare(base: Path, cand: Path, tmp_path: Path, *extra: str):  # noqa: ANN202
    junit = tmp_path / "c.xml"
    out = tmp_path / "comparison"
    done = runner.invoke(
        app, ["compare", str(base), str(cand), "--fail-if-worse", "--json", "--junit", str(junit), "-o", str(out), *extra]
    )
    return done, junit, out


def test_a_baseline_with_a_narrower_primary_still_gates_every_primary_key_of_the_candidate(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    """A baseline audited with `--primary offense_rate` no longer shrinks the gate to offense: gloomy's sentiment fails it."""
    base = _audit(toys, tmp_path / "base", "plain", "--measures", "offense,sentiment", "--primary", "offense_rate")
    cand = _audit(toys, tmp_path / "cand", "gloomy", "--measures", "offense,sentiment")
    done, junit, out = _compare(base, cand, tmp_path, *MARGIN)
    assert done.exit_code == 1, done.output
    data = json.loads(done.stdout)
    keys = data["axes"]["gender"]["keys"]
    assert {key: row["primary"] for key, row in keys.items()} == dict.fromkeys(
        ("offense_rate", "sentiment_positive", "sentiment_negative"), True
    )
    (gate,) = data["gates"]
    assert not gate["passed"] and "gender/sentiment_negative" in [f["name"] for f in gate["failures"]]
    assert gate["headline"].startswith("Gate fail-if-worse: FAILED — ") and "of 3 primary keys" in gate["headline"]
    assert gate["headline"] in " ".join(done.output.split())
    failing = {case.name for suite in junitparser.JUnitXml.fromfile(str(junit)) for case in suite if not case.is_passed}
    assert "sentiment_negative" in failing and "offense_rate" not in failing
    reread = ModelComparison.from_dict(json.loads((out / "results.json").read_text(encoding="utf-8")))
    assert evaluate(reread, "fail-if-worse").to_dict() == gate


def test_a_primary_key_of_the_candidate_the_baseline_did_not_measure_fails_the_gate_naming_it(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    """A baseline audited with `--measures offense` cannot show the candidate's sentiment keys non-inferior."""
    base = _audit(toys, tmp_path / "base", "plain", "--measures", "offense")
    cand = _audit(toys, tmp_path / "cand", "plain_too", "--measures", "offense,sentiment,length")
    done, junit, out = _compare(base, cand, tmp_path, *MARGIN)
    assert done.exit_code == 1, done.output
    unmeasured = ("sentiment_positive", "sentiment_negative", "length")
    why = "not measured in the baseline: it cannot be shown non-inferior (audit the baseline with the measure that gives it)"
    (gate,) = json.loads(done.stdout)["gates"]
    names = [f"gender/{key}" for key in unmeasured]
    # every primary key the gate decides is counted, the unmeasured ones too; offense_rate itself passes
    headline = f"Gate fail-if-worse: FAILED — 3 of 4 primary keys not shown non-inferior ({', '.join(names)})"
    assert gate["headline"] == headline
    assert gate["failures"] == [{"name": name, "reason": why} for name in names]
    assert headline in " ".join(done.output.split())
    cases = [case for suite in junitparser.JUnitXml.fromfile(str(junit)) for case in suite if not case.is_passed]
    assert [case.name for case in cases] == list(unmeasured) and all(why in case.result[0].text for case in cases)
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["axes"]["gender"]["unmeasured_primary"] == ["sentiment_positive", "sentiment_negative", "length"]
    assert evaluate(ModelComparison.from_dict(data), "fail-if-worse").to_dict() == gate
    # no gate asked: the warning names the keys, and no gate is said to fail
    plain = runner.invoke(app, ["compare", str(base), str(cand), *MARGIN])
    said = " ".join(plain.output.split())
    assert plain.exit_code == 0 and "sentiment_positive, sentiment_negative, length were not measured" in said, plain.output
    assert "gate fails" not in said
    # the candidate measured with the baseline's measures only: the gate decides them and passes
    narrow = _audit(toys, tmp_path / "narrow", "plain_too", "--measures", "offense,sentiment,length", "--primary", "offense_rate")
    done, _, _ = _compare(base, narrow, tmp_path / "n", *MARGIN)
    assert done.exit_code == 0, done.output


def test_a_baseline_model_that_is_the_candidate_is_refused_before_any_answer(toys: tuple[Path, Path], tmp_path: Path) -> None:
    """`audit --baseline-model` with the candidate's own model: its answers are its own; a second model alike passes."""
    args = ["--measures", "offense", *MARGIN, "--fail-if-worse"]
    corpus, models = toys
    same = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"python:{models}:plain",
            "--baseline-model",
            f"python:{models}:plain",
            "-o",
            str(tmp_path / "same"),
            "--junit",
            str(tmp_path / "same.xml"),
            *args,
        ],
    )
    # knowable from the arguments: refused before any answer is generated, not a gate failure after two audits
    assert same.exit_code == 2, same.output
    why = f"two runs of the same model python:{models}:plain with the same decoding settings"
    assert f"error: --baseline-model: the baseline and the candidate would be {why}" in " ".join(same.output.split())
    assert not (tmp_path / "same").exists() and not (tmp_path / "same.xml").exists()
    other = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"python:{models}:plain",
            "--baseline-model",
            f"python:{models}:plain_too",
            "-o",
            str(tmp_path / "other"),
            *args,
        ],
    )
    assert other.exit_code == 0, other.output
    assert "Gate fail-if-worse: passed" in other.output


def test_two_audits_of_one_model_are_one_run_unless_their_decoding_settings_differ(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    """Two run ids, one model with the same settings: compare refuses it as `compare A A` does."""
    from fairtalk.pipeline import compare_runs

    first = _audit(toys, tmp_path / "first", "plain", "--measures", "offense")
    again = _audit(toys, tmp_path / "again", "plain", "--measures", "offense")
    done, _, _ = _compare(first, again, tmp_path, *MARGIN)
    assert done.exit_code == 1, done.output
    why = f"two runs of the same model python:{toys[1]}:plain with the same decoding settings"
    assert f"the baseline and the candidate are {why}: a model cannot be shown not worse than itself" in " ".join(
        done.output.split()
    )
    comparison = compare_runs(first, again, margins={"offense_rate": 0.2})
    assert comparison.same_run == why
    assert not evaluate(comparison, "fail-if-worse").passed
    longer = _audit(toys, tmp_path / "longer", "plain", "--measures", "offense", "--max-new-tokens", "64")
    assert compare_runs(first, longer).same_run is None
    done, _, _ = _compare(first, longer, tmp_path / "l", *MARGIN)
    assert done.exit_code == 0, done.output


def test_an_audits_own_responses_scored_are_one_run_with_it_either_way_round(toys: tuple[Path, Path], tmp_path: Path) -> None:
    """Review finding: `score` of an audit's responses.jsonl, compared with that audit, passed the gate on identical answers."""
    import hashlib

    from fairtalk.pipeline import compare_runs

    first = _audit(toys, tmp_path / "first", "plain", "--measures", "offense")
    responses = first / "gender" / "responses.jsonl"
    scored = tmp_path / "scored"
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "-o", str(scored), "-q"]
    assert runner.invoke(app, args).exit_code == 0
    sha = hashlib.sha256(responses.read_bytes()).hexdigest()
    why = f"one run (the same responses scored on both sides, sha256 {sha[:16]}…)"
    for base, cand, where in ((first, scored, tmp_path / "ab"), (scored, first, tmp_path / "ba")):
        done, junit, _ = _compare(base, cand, where, *MARGIN)
        assert done.exit_code == 1, done.output
        assert f"the baseline and the candidate are {why}: a model cannot be shown not worse than itself" in " ".join(
            done.output.split()
        )
        gate = next(suite for suite in junitparser.JUnitXml.fromfile(str(junit)) if suite.name == "fairtalk.compare.gate")
        assert gate.failures == 1
        assert compare_runs(base, cand, margins={"offense_rate": 0.2}).same_run == why
    other = _audit(toys, tmp_path / "other", "plain_too", "--measures", "offense")
    assert compare_runs(first, other).same_run is None  # two audits of two models, the same answers: told apart
