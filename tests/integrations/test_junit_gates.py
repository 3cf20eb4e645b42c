"""Which gate the CI outputs render: only a gate requested is shown as passed or failed, and the JUnit file follows the gate in force."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app

junitparser = pytest.importorskip("junitparser")
runner = CliRunner()


@pytest.fixture
def toys(tmp_path: Path) -> tuple[Path, Path]:
    from audit_toys import write_corpus, write_models

    return write_corpus(tmp_path), write_models(tmp_path)


def _audit(tmp_path: Path, toys: tuple[Path, Path], name: str, model: str, *extra: str) -> tuple[int, str]:
    corpus, models = toys
    summary = tmp_path / f"{name}.sum"
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
            "offense,length",
            *extra,
        ],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, summary.read_text(encoding="utf-8") if summary.exists() else ""


def _failure_types(path: Path) -> set[str]:
    return {result.type for suite in junitparser.JUnitXml.fromfile(str(path)) for case in suite for result in case.result}


def test_an_audit_without_a_gate_shows_no_gate_outcome_in_the_job_summary(tmp_path: Path, toys: tuple[Path, Path]) -> None:
    """Review finding: the summary said "Gate fail-on-bias: FAILED" for a run that asked for no gate and exited 0."""
    code, summary = _audit(tmp_path, toys, "nogate", "biased")
    assert code == 0
    assert "Gate fail-on-bias" not in summary and "FAILED" not in summary and "## fairtalk: gender" in summary
    code, summary = _audit(tmp_path, toys, "nogate_junit", "biased", "--junit", str(tmp_path / "nogate.xml"))
    assert code == 0
    assert "Gate fail-on-bias" not in summary and "FAILED" not in summary
    # the JUnit file's testcases still follow fail-on-bias's rule: the summary says so, as that rule, not as the gate
    assert "No gate was requested" in summary and "testcases follow the fail-on-bias rule" in summary
    assert _failure_types(tmp_path / "nogate.xml") == {"fail-on-bias"}


def test_a_requested_gate_is_still_shown(tmp_path: Path, toys: tuple[Path, Path]) -> None:
    code, summary = _audit(tmp_path, toys, "gated", "biased", "--fail-on-bias", "--junit", str(tmp_path / "g.xml"))
    assert code == 1
    assert "**Gate fail-on-bias: FAILED" in summary and "No gate was requested" not in summary


def test_compare_without_fail_if_worse_shows_no_gate_outcome(tmp_path: Path, toys: tuple[Path, Path]) -> None:
    """Review finding: `compare` exited 0 and its report.md said "Gate fail-if-worse: FAILED"."""
    _audit(tmp_path, toys, "fair", "fair")
    _audit(tmp_path, toys, "biased", "biased")
    summary = tmp_path / "cmp.sum"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    args = ["compare", str(tmp_path / "fair"), str(tmp_path / "biased")]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "cmp"), "--junit", str(tmp_path / "cmp.xml")], env=env)
    assert done.exit_code == 0, done.output
    for text in (done.output, (tmp_path / "cmp" / "report.md").read_text(), (tmp_path / "cmp" / "report.html").read_text()):
        assert "Gate fail-if-worse" not in text
    text = summary.read_text()
    assert "Gate fail-if-worse" not in text and "testcases follow the fail-if-worse rule" in text
    assert _failure_types(tmp_path / "cmp.xml") == {"fail-if-worse"}
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "cmp2"), "--fail-if-worse"])
    assert done.exit_code == 1
    assert "Gate fail-if-worse: FAILED" in (tmp_path / "cmp2" / "report.md").read_text()
    assert " ".join(done.output.split()).count("Gate fail-if-worse: FAILED") == 1  # said once on the console, not twice


def test_audit_with_a_baseline_model_and_fail_if_worse_renders_that_gate(tmp_path: Path, toys: tuple[Path, Path]) -> None:
    """Review finding: the JUnit file and the summary held fail-on-bias's decisions while fail-if-worse decided the exit."""
    _, models = toys
    xml = tmp_path / "bm.xml"
    extra = ("--baseline-model", f"python:{models}:fair", "--fail-if-worse", "--junit", str(xml))
    code, summary = _audit(tmp_path, toys, "bm", "biased", *extra)
    assert code == 1
    assert _failure_types(xml) == {"fail-if-worse"}
    suites = [suite.name for suite in junitparser.JUnitXml.fromfile(str(xml))]
    assert suites and all(name.startswith("fairtalk.compare.") for name in suites)
    assert "Gate fail-if-worse: FAILED" in summary and "Gate fail-on-bias" not in summary
    assert "No gate was requested" not in summary
    # both gates requested: the file holds both decisions, each failure typed by its gate
    code, summary = _audit(tmp_path, toys, "bm2", "biased", *extra[:-1], str(tmp_path / "bm2.xml"), "--fail-on-bias")
    assert code == 1
    assert _failure_types(tmp_path / "bm2.xml") == {"fail-on-bias", "fail-if-worse"}
    assert "Gate fail-if-worse: FAILED" in summary and "Gate fail-on-bias: FAILED" in summary


def test_junit_help_says_what_both_gates_do_and_the_file_does_it(tmp_path: Path, toys: tuple[Path, Path]) -> None:
    """Review finding: the help said --fail-unless-equivalent's decisions alone show with both gates; both do."""
    from fairtalk.cli._test_options import JUNIT

    assert "--fail-unless-equivalent's when given, else" not in str(JUNIT.help)
    assert "both given, where either fails, the failure typed by its gate" in str(JUNIT.help)
    code, summary = _audit(
        tmp_path, toys, "both", "biased", "--fail-on-bias", "--fail-unless-equivalent", "--junit", str(tmp_path / "both.xml")
    )
    assert code == 1
    cases = {
        case.name: {result.type for result in case.result}
        for suite in junitparser.JUnitXml.fromfile(str(tmp_path / "both.xml"))
        for case in suite
    }
    assert "fail-on-bias,fail-unless-equivalent" in cases["offense_rate"]  # failed by either: typed by both
    assert "Gate fail-on-bias: FAILED" in summary and "Gate fail-unless-equivalent: FAILED" in summary


def test_a_requested_gate_is_in_the_index_and_the_json(tmp_path: Path, toys: tuple[Path, Path]) -> None:
    """Review finding: the run's report and --json said nothing of whether the gate requested passed."""
    import json

    corpus, models = toys
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", f"python:{models}:biased"]
    args += ["--resamples", "100", "--measures", "offense", "--json"]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "gated"), "--fail-on-bias"])
    assert done.exit_code == 1
    (outcome,) = json.loads(done.stdout)["gates"]
    assert outcome["gate"] == "fail-on-bias" and outcome["passed"] is False
    assert outcome["headline"].startswith("Gate fail-on-bias: FAILED") and outcome["failures"][0]["name"] == "gender/offense_rate"
    index = (tmp_path / "gated" / "index.html").read_text(encoding="utf-8")
    assert 'data-gate="fail-on-bias"' in index and "Gate fail-on-bias: FAILED" in index
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "plain")])
    assert done.exit_code == 0
    assert "gates" not in json.loads(done.stdout)
    assert "data-gate" not in (tmp_path / "plain" / "index.html").read_text(encoding="utf-8")


def test_each_axis_report_states_the_gate_requested_and_only_then(tmp_path: Path, toys: tuple[Path, Path]) -> None:
    """Review finding: the per-axis report.md and report.html did not say whether the gate requested passed."""
    code, _ = _audit(tmp_path, toys, "equiv", "biased", "--fail-unless-equivalent")
    assert code == 1
    md = (tmp_path / "equiv" / "gender" / "report.md").read_text(encoding="utf-8")
    assert "## Gate requested" in md and "**Gate fail-unless-equivalent: FAILED — " in md
    assert "On this axis (gender): FAILED." in md and "- offense\\_rate: FAILED — " in md
    html = (tmp_path / "equiv" / "gender" / "report.html").read_text(encoding="utf-8")
    assert 'data-gate="fail-unless-equivalent" data-passed="false"' in html
    assert "Gate fail-unless-equivalent: FAILED" in html
    code, _ = _audit(tmp_path, toys, "none", "biased")
    assert code == 0
    md = (tmp_path / "none" / "gender" / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "none" / "gender" / "report.html").read_text(encoding="utf-8")
    assert "Gate requested" not in md and "Gate fail-" not in md and "data-gate" not in html and "Gate fail-" not in html
