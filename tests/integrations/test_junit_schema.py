"""What ``--junit`` writes is valid against the JUnit schema CI systems accept (issue 29, item 1).

The schema is the Jenkins xUnit plugin's ``junit-10.xsd`` (``data/junit-10.xsd``, MIT; its header
says where it comes from), the one pytest checks its own ``--junitxml`` against. Each command's
file is checked with a gate that fails and with one that passes, so both ``<failure>`` and
``<system-out>`` testcases are covered.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.report import junit_xml
from fairtalk.results import AuditResult, MeasureResult, TestedKey, Verdict

xmlschema = pytest.importorskip("xmlschema")
junitparser = pytest.importorskip("junitparser")

SCHEMA_FILE = Path(__file__).parent / "data" / "junit-10.xsd"
runner = CliRunner()


@pytest.fixture(scope="module")
def schema() -> object:
    return xmlschema.XMLSchema(str(SCHEMA_FILE))


def _check(schema: object, path: Path) -> None:
    """Valid against the schema (the error names the element and the rule broken), and read back by junitparser."""
    errors = [str(e) for e in schema.iter_errors(str(path))]  # type: ignore[attr-defined]
    assert not errors, "\n".join(errors)
    assert junitparser.JUnitXml.fromfile(str(path)).tests >= 1


def _failing(path: Path) -> set[str]:
    return {case.name for suite in junitparser.JUnitXml.fromfile(str(path)) for case in suite if not case.is_passed}


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fair baseline and a biased candidate, audited on the same pairs (two measures, few resamples)."""
    from audit_toys import write_corpus, write_models

    folder = tmp_path_factory.mktemp("audits")
    corpus, models = write_corpus(folder), write_models(folder)
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
                str(folder / name),
                "--resamples",
                "100",
                "--quiet",
                "--measures",
                "offense,length",
                "--junit",
                str(folder / f"{name}.xml"),
            ],
        )
        assert done.exit_code == 0, done.output
    return folder


def test_the_validator_rejects_what_the_schema_forbids(schema: object, tmp_path: Path) -> None:
    """The check bites: a testsuite without its required counts, or a testcase without a name, is invalid."""
    for broken in (
        '<testsuites><testsuite name="s" tests="1"><testcase name="t"/></testsuite></testsuites>',
        '<testsuites><testsuite name="s" tests="1" failures="0" errors="0"><testcase/></testsuite></testsuites>',
        '<testsuites><testsuite name="s" tests="1" failures="0" errors="0"><testcase name="t">'
        "<verdict/></testcase></testsuite></testsuites>",
    ):
        path = tmp_path / "broken.xml"
        path.write_text(broken, encoding="utf-8")
        assert list(schema.iter_errors(str(path))), broken  # type: ignore[attr-defined]


def test_an_empty_audit_is_valid(schema: object, tmp_path: Path) -> None:
    path = tmp_path / "empty.xml"
    path.write_text(junit_xml({}), encoding="utf-8")
    assert not list(schema.iter_errors(str(path)))  # type: ignore[attr-defined]


def test_audit_junit_is_valid_with_a_failing_and_a_passing_testcase(schema: object, audits: Path) -> None:
    _check(schema, audits / "baseline.xml")
    _check(schema, audits / "candidate.xml")
    assert _failing(audits / "baseline.xml") == set() and "offense_rate" in _failing(audits / "candidate.xml")


def test_score_junit_is_valid_under_both_gates(schema: object, audits: Path, tmp_path: Path) -> None:
    responses = audits / "candidate" / "gender" / "responses.jsonl"
    assert responses.is_file()
    for gate in ("--fail-on-bias", "--fail-unless-equivalent"):
        junit = tmp_path / f"{gate}.xml"
        done = runner.invoke(
            app,
            [
                "score",
                "--responses",
                str(responses),
                "--axis",
                "gender",
                "--measures",
                "offense,length",
                "--resamples",
                "100",
                gate,
                "--junit",
                str(junit),
                "-o",
                str(tmp_path / gate.strip("-")),
            ],
        )
        assert done.exit_code == 1, done.output  # the gate fails: the file holds a <failure>
        _check(schema, junit)
        assert "offense_rate" in _failing(junit)


def test_compare_junit_is_valid_with_a_regression(schema: object, audits: Path, tmp_path: Path) -> None:
    junit = tmp_path / "compare.xml"
    done = runner.invoke(app, ["compare", str(audits / "baseline"), str(audits / "candidate"), "--junit", str(junit)])
    assert done.exit_code == 0, done.output
    _check(schema, junit)
    assert "offense_rate" in _failing(junit)  # regressed
    same = tmp_path / "same.xml"
    done = runner.invoke(app, ["compare", str(audits / "baseline"), str(audits / "baseline"), "--junit", str(same)])
    assert done.exit_code == 0, done.output
    _check(schema, same)
    assert "run" in _failing(same)  # one run as baseline and candidate: the gate fails on it (a testcase of its own)


def test_compare_appends_its_findings_and_table_to_the_job_summary(audits: Path, tmp_path: Path) -> None:
    """``compare`` with ``$GITHUB_STEP_SUMMARY`` set, as ``audit`` and ``score``: the regressed key is in the summary."""
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    done = runner.invoke(app, ["compare", str(audits / "baseline"), str(audits / "candidate"), "--fail-if-worse"], env=env)
    assert done.exit_code == 1, done.output
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n## fairtalk compare: ")
    lines = text.splitlines()
    regressed = next(line for line in lines if line.startswith("- regressed (the gap's size changed"))
    failing = next(line for line in lines if line.startswith("**Gate fail-if-worse: FAILED"))
    assert "not shown non-inferior" in failing
    assert "gender/offense\\_rate" in regressed and "gender/offense\\_rate" in failing  # Markdown-escaped
    row = next(line for line in lines if line.startswith("| gender | Offense Rate (%) |"))
    assert row.endswith("| not shown | regressed |") and "| +0.00 | -100.00 |" in row
    done = runner.invoke(app, ["compare", str(audits / "baseline"), str(audits / "candidate")], env={"GITHUB_STEP_SUMMARY": None})
    assert done.exit_code == 0 and summary.read_text(encoding="utf-8") == text  # unset: nothing appended


def test_a_junit_file_counting_empty_answers_is_valid(schema: object, tmp_path: Path) -> None:
    """The lost and empty answers' counts are the axis suite's properties, where the schema allows them (before its testcases)."""
    key = TestedKey("offense_rate", "rate", 0.0, 0.0, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), None, "")
    m = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict=Verdict.EQUIVALENT)
    summary = {"n_empty_a": 80, "n_empty_b": 80, "n_empty_both": 80, "n_lost_b_only": 5}
    path = tmp_path / "empty.xml"
    path.write_text(junit_xml({"gender": AuditResult("gender", ("m", "f"), 80, (m,), input_summary=summary)}), encoding="utf-8")
    _check(schema, path)
    assert 'name="n_empty_both" value="80"' in path.read_text(encoding="utf-8")
    assert 'name="n_lost_b" value="5"' in path.read_text(encoding="utf-8")  # lost answers too, in one properties element
    assert _failing(path) == {"gender"}  # every answer empty: the gate's testcase fails
