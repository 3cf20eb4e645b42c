"""``--junit FILE`` of a command that stops on an error or is interrupted records that stop, never an earlier run's pass.

Review finding: ``audit … --fail-on-bias --junit sa.xml`` passed (failures="0"), then the same command
with a model that raises exited 2 and left sa.xml as it was, so a CI JUnit publisher run with
``if: always()`` showed the errored run as passing; ``compare`` the same. Once ``--junit`` passed its
check, a stop with exit 2, 3 or 130 leaves there a JUnit file of one testcase in error; an error before
the check, or a file that is not fairtalk's, leaves the file alone.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_corpus, write_models, write_responses
from fairtalk.cli import app, main

runner = CliRunner()
FAST = ["--resamples", "200", "--quiet", "--measures", "offense,length"]
BOOM = 'def boom(context):\n    raise RuntimeError("kaboom")\n'


@pytest.fixture()
def toys(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "boom.py").write_text(BOOM, encoding="utf-8")
    return write_corpus(tmp_path), write_models(tmp_path)


def _audit(corpus: Path, model: str, out: Path, junit: Path, *extra: str) -> list[str]:
    return ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", model, "-o", str(out), *FAST] + [
        "--junit",
        str(junit),
        *extra,
    ]


def _counts(path: Path) -> tuple[str | None, str | None, str | None]:
    root = ET.parse(path).getroot()
    return root.get("tests"), root.get("failures"), root.get("errors")


def _error(path: Path) -> ET.Element:
    """The one ``<error>`` of an error file, after checking its shape: one suite, one testcase, errors="1"."""
    root = ET.parse(path).getroot()
    assert _counts(path) == ("1", "0", "1")
    (suite,) = list(root)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "1")
    (case,) = list(suite)
    (error,) = list(case)
    assert error.tag == "error"
    return error


def _passed(toys: tuple[Path, Path], tmp_path: Path, junit: Path) -> bytes:
    corpus, models = toys
    done = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "run", junit, "--fail-on-bias"))
    assert done.exit_code == 0, done.output
    assert _counts(junit)[1] == "0" and "<error" not in junit.read_text()
    return junit.read_bytes()


def test_an_audit_stopped_by_a_model_error_replaces_the_earlier_pass_with_its_error(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    corpus, _ = toys
    junit = tmp_path / "sa.xml"
    _passed(toys, tmp_path, junit)
    done = runner.invoke(app, _audit(corpus, f"python:{tmp_path / 'boom.py'}:boom", tmp_path / "run", junit, "--fail-on-bias"))
    assert done.exit_code == 2, done.output
    error = _error(junit)
    assert error.get("type") == "error" and "kaboom" in (error.get("message") or "")
    assert (error.text or "").startswith("error: ") and "kaboom" in (error.text or "")
    root = ET.parse(junit).getroot()
    assert root.get("name") == "fairtalk" and root[0][0].get("name") == "fairtalk audit"
    # the next run that decides replaces it again (it is fairtalk's JUnit file)
    _passed(toys, tmp_path, junit)


def test_an_error_after_the_audit_wrote_its_own_file_replaces_that_too(toys: tuple[Path, Path], tmp_path: Path) -> None:
    """``audit --baseline-model`` (no --fail-if-worse) writes the audit's JUnit file, then audits the baseline: when
    that stops on an error, the command exits 2 and its file says so, not the audit's pass."""
    corpus, models = toys
    junit = tmp_path / "sa.xml"
    baseline = ["--baseline-model", f"python:{tmp_path / 'boom.py'}:boom", "--fail-on-bias"]
    done = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "run", junit, *baseline))
    assert done.exit_code == 2, done.output
    assert (tmp_path / "run" / "index.html").is_file()  # the audit itself was written
    assert "kaboom" in (_error(junit).text or "")


def test_an_error_file_is_written_where_there_was_none(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    junit = tmp_path / "ci" / "new.xml"
    done = runner.invoke(app, _audit(corpus, f"python:{tmp_path / 'boom.py'}:boom", tmp_path / "run", junit))
    assert done.exit_code == 2, done.output
    assert "kaboom" in (_error(junit).text or "")


def test_an_error_before_the_junit_check_leaves_the_file_as_it_was(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    junit = tmp_path / "sa.xml"
    before = _passed(toys, tmp_path, junit)
    # --fail-if-worse without --baseline-model is refused before any check of the outputs
    done = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "run", junit, "--fail-if-worse"))
    assert done.exit_code == 2 and "error:" in done.output
    assert junit.read_bytes() == before


def test_a_file_that_is_not_fairtalk_s_is_never_touched(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, models = toys
    mine = tmp_path / "mine.xml"
    mine.write_text("<notes>mine</notes>\n", encoding="utf-8")
    done = runner.invoke(app, _audit(corpus, f"python:{tmp_path / 'boom.py'}:boom", tmp_path / "run", mine))
    assert done.exit_code == 2 and "JUnit file" in done.output  # refused by the check: the run never started
    assert mine.read_text(encoding="utf-8") == "<notes>mine</notes>\n"
    # a file put there during the run (after the check) is not fairtalk's either: left alone
    junit = tmp_path / "sa.xml"

    def audit(*args: object, **kwargs: object) -> None:
        junit.write_text("<notes>written meanwhile</notes>\n", encoding="utf-8")
        raise fairtalk.SpecError("stopped")

    monkeypatch.setattr(fairtalk, "audit", audit)
    done = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "run", junit))
    assert done.exit_code == 2 and "error: stopped" in done.output
    assert junit.read_text(encoding="utf-8") == "<notes>written meanwhile</notes>\n"


def test_an_internal_error_exits_3_and_the_file_says_so(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, models = toys
    junit = tmp_path / "sa.xml"
    _passed(toys, tmp_path, junit)

    def audit(*args: object, **kwargs: object) -> None:
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(fairtalk, "audit", audit)
    monkeypatch.setattr(sys, "argv", ["fairtalk", *_audit(corpus, f"python:{models}:fair", tmp_path / "run", junit)])
    monkeypatch.delenv("FAIRTALK_DEBUG", raising=False)
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 3
    assert "internal error: RuntimeError" in capsys.readouterr().err
    error = _error(junit)
    assert error.get("type") == "internal error"
    assert error.get("message") == "internal error: RuntimeError: something nobody expected"


def test_an_interrupted_audit_leaves_no_pass_before_or_after_its_run_is_written(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted (Ctrl-C, or SIGTERM from a cancelled CI job): the run has no decision, and its JUnit file says so."""
    import fairtalk.cli._audit as audit_command

    corpus, models = toys
    junit = tmp_path / "sa.xml"
    _passed(toys, tmp_path, junit)
    real = fairtalk.audit

    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fairtalk, "audit", interrupt)  # while the model answers
    done = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "run", junit, "--fail-on-bias"))
    assert done.exit_code == 130, done.output
    error = _error(junit)
    assert error.get("type") == "interrupted" and (error.text or "").startswith("interrupted")
    monkeypatch.setattr(fairtalk, "audit", real)
    _passed(toys, tmp_path, junit)
    monkeypatch.setattr(audit_command, "write_ci_files", interrupt)  # once the run is written, before the JUnit file
    done = runner.invoke(app, _audit(corpus, f"python:{models}:fair", tmp_path / "run", junit, "--fail-on-bias"))
    assert done.exit_code == 130, done.output
    error = _error(junit)
    assert error.get("type") == "interrupted" and "after the run was written in" in (error.text or "")


def test_score_stopped_by_an_input_error_replaces_its_earlier_pass(tmp_path: Path) -> None:
    responses, junit = write_responses(tmp_path / "r.jsonl", 20), tmp_path / "sc.xml"
    args = ["score", "--axis", "gender", "-o", str(tmp_path / "out"), *FAST, "--junit", str(junit)]
    done = runner.invoke(app, [*args, "--responses", str(responses)])
    assert done.exit_code == 0, done.output
    assert _counts(junit)[2] is None and "<error" not in junit.read_text()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pair_id": 0, "side": "a", "response": "hi"}\nnot json\n', encoding="utf-8")
    done = runner.invoke(app, [*args, "--responses", str(bad)])
    assert done.exit_code == 2, done.output
    error = _error(junit)
    assert (error.text or "").startswith("error: ") and "bad.jsonl" in (error.text or "")
    assert ET.parse(junit).getroot()[0][0].get("name") == "fairtalk score"


def test_compare_stopped_by_an_input_error_replaces_its_earlier_file(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    for name in ("fair", "biased"):
        done = runner.invoke(app, _audit(corpus, f"python:{models}:{name}", tmp_path / name, tmp_path / f"{name}.xml"))
        assert done.exit_code == 0, done.output
    junit = tmp_path / "cj.xml"
    args = ["compare", "-o", str(tmp_path / "cmp"), "--fail-if-worse", "--junit", str(junit)]
    done = runner.invoke(app, [*args[:1], str(tmp_path / "fair"), str(tmp_path / "biased"), *args[1:]])
    assert done.exit_code == 1, done.output  # the gate decided: its own file
    assert ET.parse(junit).getroot().get("name") == "fairtalk.compare" and "<failure" in junit.read_text()
    (tmp_path / "empty").mkdir()
    done = runner.invoke(app, [*args[:1], str(tmp_path / "fair"), str(tmp_path / "empty"), *args[1:]])
    assert done.exit_code == 2, done.output
    error = _error(junit)
    assert (error.text or "").startswith("error: ")
    root = ET.parse(junit).getroot()
    assert root.get("name") == "fairtalk.compare" and root[0][0].get("name") == "fairtalk compare"


def test_the_error_file_is_valid_junit(tmp_path: Path) -> None:
    """Against the schema CI systems accept (the Jenkins xUnit plugin's junit-10.xsd), with a control character quoted."""
    xmlschema = pytest.importorskip("xmlschema")
    from fairtalk.report import error_junit_xml, is_junit_file

    path = tmp_path / "e.xml"
    path.write_text(error_junit_xml("error: a model said \x1b[31m\x00 red", command="fairtalk audit"), encoding="utf-8")
    schema = xmlschema.XMLSchema(str(Path(__file__).parent / "integrations" / "data" / "junit-10.xsd"))
    assert [str(e) for e in schema.iter_errors(str(path))] == []
    assert is_junit_file(path)  # the next run may replace it
    assert json.dumps(_error(path).get("message")).count("\\ufffd") == 2
