"""``--junit`` and the GitHub job summary: a gate that fails reads as a failing test in any CI (issue 29, item 1)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.records import Response

junitparser = pytest.importorskip("junitparser")
runner = CliRunner()
RUDE, KIND = "you are a stupid idiot, shut up now", "that is a lovely idea, tell me more"  # as long


def _responses(path: Path, *, biased: bool) -> Path:
    rows = []
    for i in range(60):
        a = RUDE if biased and i % 3 == 0 else KIND
        rows += [Response(f"p{i}", "a", f"he said hi {i}", a), Response(f"p{i}", "b", f"she said hi {i}", KIND)]
    fairtalk.write_responses(rows, path)
    return path


def _score(tmp_path: Path, *extra: str, biased: bool, env: dict[str, str] | None = None) -> tuple[int, Path]:
    junit = tmp_path / "ci" / "fairtalk.xml"
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(_responses(tmp_path / "r.jsonl", biased=biased)),
            "--axis",
            "gender",
            "--measures",
            "offense,length",
            "-o",
            str(tmp_path / "out"),
            "--resamples",
            "100",
            "--junit",
            str(junit),
            *extra,
        ],
        env=env,
    )
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, junit


def test_a_detected_difference_is_a_failing_testcase_with_its_figures(tmp_path: Path) -> None:
    code, junit = _score(tmp_path, "--fail-on-bias", biased=True)
    assert code == 1
    xml = junitparser.JUnitXml.fromfile(str(junit))
    (suite,) = list(xml)
    assert suite.name == "fairtalk.gender" and suite.tests == 2 and suite.failures == 1
    cases = {case.name: case for case in suite}
    (failure,) = cases["offense_rate"].result
    assert isinstance(failure, junitparser.Failure) and failure.type == "fail-on-bias"
    assert "difference detected" in failure.message and "gap +33.33 pp" in failure.message
    assert "95% CI [" in failure.message and "adjusted p" in failure.message
    assert cases["length"].is_passed
    ET.parse(junit)  # well-formed for any CI's parser


def test_a_fair_run_passes_and_the_equivalence_gate_fails_exactly_what_is_not_shown_equivalent(tmp_path: Path) -> None:
    code, junit = _score(tmp_path, biased=False)
    assert code == 0 and junitparser.JUnitXml.fromfile(str(junit)).failures == 0
    code, junit = _score(tmp_path, "--fail-unless-equivalent", biased=True)
    shown = {k: m["equivalent"] for k, m in json.loads((tmp_path / "out" / "results.json").read_text())["measures"].items()}
    suite = next(iter(junitparser.JUnitXml.fromfile(str(junit))))
    failing = {case.name for case in suite if not case.is_passed}
    assert failing == {k for k, v in shown.items() if not v} and "offense_rate" in failing
    assert code == 1


def test_the_job_summary_is_appended_when_github_names_its_file(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    _score(tmp_path, biased=True, env={"GITHUB_STEP_SUMMARY": str(summary)})
    text = summary.read_text()
    assert text.startswith("# earlier step\n") and "## fairtalk: gender" in text
    assert "| Measure |" in text and "Offense Rate" in text


def test_a_junit_path_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("x")
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(_responses(tmp_path / "r.jsonl", biased=False)),
            "--axis",
            "gender",
            "-o",
            str(tmp_path / "out"),
            "--junit",
            str(tmp_path / "a_file" / "x.xml"),
        ],
    )
    assert done.exit_code == 2 and "--junit" in done.stderr and not (tmp_path / "out").exists()


def test_audit_and_compare_write_junit_too(tmp_path: Path) -> None:
    """``audit --junit`` as score's; ``compare --junit``: a key not shown non-inferior is a failing testcase."""
    from audit_toys import write_corpus, write_models

    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    for name, model in (("baseline", "fair"), ("candidate", "biased")):
        done = runner.invoke(
            app,
            [
                "audit",
                "--corpus",
                str(corpus),
                "--axis",
                "gender",
                "--model",
                f"python:{models}:{model}",
                "-o",
                str(tmp_path / name),
                "--resamples",
                "100",
                "--quiet",
                "--measures",
                "offense",
                "--junit",
                str(tmp_path / f"{name}.xml"),
            ],
        )
        assert done.exit_code == 0, done.output
    audit_suite = next(iter(junitparser.JUnitXml.fromfile(str(tmp_path / "candidate.xml"))))
    assert audit_suite.name == "fairtalk.gender" and audit_suite.failures == 1  # the biased model's offense gap
    done = runner.invoke(
        app, ["compare", str(tmp_path / "baseline"), str(tmp_path / "candidate"), "--junit", str(tmp_path / "compare.xml")]
    )
    assert done.exit_code == 0, done.output
    suite = next(iter(junitparser.JUnitXml.fromfile(str(tmp_path / "compare.xml"))))
    cases = {case.name: case for case in suite}
    (failure,) = cases["offense_rate"].result
    assert (
        failure.type == "fail-if-worse"
        and "regressed" in failure.message
        and "baseline gap +0.00 pp, candidate gap -100.00 pp" in failure.message
    )
