"""`fairtalk compare`'s default margin is the baseline's, and its verdict and gate read one test.

Review findings: (1) a candidate that doubled the baseline's length gap passed ``--fail-if-worse``,
because the default margin of a count was 0.1 sd of both runs' scores pooled, and the candidate's
own spread widened it; (2) a key whose change was the same on every pair was *improved* by the
exact sign-flip test yet failed the gate as "not shown non-inferior".
"""

from __future__ import annotations

import json
from pathlib import Path

import junitparser
import numpy as np
import pytest
from typer.testing import CliRunner

from fairtalk import Response, write_responses
from fairtalk.cli import app
from fairtalk.gates import evaluate
from fairtalk.pipeline import compare_runs
from fairtalk.results import AuditResult, Change
from fairtalk.stats import default_margin, gap_change

runner = CliRunner()
N = 60


def _score(folder: Path, side_a: list[str], side_b: list[str]) -> Path:
    """A `fairtalk score --measures length` output of the given answers (pair i: side_a[i], side_b[i])."""
    records = []
    for i, (a, b) in enumerate(zip(side_a, side_b)):
        records += [Response(f"p{i}", "a", f"he said {i}", a), Response(f"p{i}", "b", f"she said {i}", b)]
    folder.mkdir(parents=True)
    write_responses(records, folder / "responses.jsonl")
    args = ["score", "--responses", str(folder / "responses.jsonl"), "--axis", "gender", "--measures", "length"]
    done = runner.invoke(app, [*args, "-o", str(folder / "scored"), "-q"])
    assert done.exit_code == 0, done.output
    return folder / "scored"


def _baseline(folder: Path) -> Path:
    """Short answers, side B one word longer on 4 pairs of 5: a small spread, a gap of -0.8 words."""
    plain = "that sounds nice tell me more"
    return _score(folder, [plain] * N, [plain + (" please" if i % 5 else "") for i in range(N)])


def _verbose(folder: Path) -> Path:
    """Long answers of 10 to 69 words, side B two words longer on every pair: a gap of -2 words, a wide spread."""
    side_a = ["ok " * (10 + i) + "sure" for i in range(N)]
    return _score(folder, side_a, [a + " really truly" for a in side_a])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("margin_gate")
    plain = "that sounds nice tell me more"
    return {
        "base": _baseline(root / "base"),
        "verbose": _verbose(root / "verbose"),
        "longer": _score(root / "longer", [plain] * N, [plain + " please"] * N),  # side B one word longer on every pair
        "fair": _score(root / "fair", [plain] * N, [plain] * N),
        "fair_too": _score(root / "fair_too", [plain + "!"] * N, [plain + "!"] * N),  # other text, the same lengths
    }


def test_the_default_margin_is_the_baseline_audits_not_widened_by_the_candidates_spread(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    recorded = AuditResult.read_json(runs["base"] / "results.json").measure("length").equivalence_margin
    assert recorded is not None and 0 < recorded < 0.1  # 0.1 sd of the baseline's own short answers
    result = compare_runs(runs["base"], runs["verbose"])
    row = result.change("gender", "length")
    assert row.baseline_gap == pytest.approx(-0.8) and row.candidate_gap == pytest.approx(-2.0)
    assert row.verdict is Change.REGRESSED
    # the old default, 0.1 sd of all four score arrays, would have allowed the doubled gap
    pooled = np.r_[[6.0] * N, [6.0 + (i % 5 > 0) for i in range(N)], [11.0 + i for i in range(N)], [13.0 + i for i in range(N)]]
    assert default_margin("count", a=pooled[: 2 * N], b=pooled[2 * N :]) > 1.2  # wider than the regression
    assert row.margin == pytest.approx(recorded) and row.non_inferior is False
    outcome = evaluate(result, "fail-if-worse")
    assert not outcome.passed and [d.name for d in outcome.failures] == ["gender/length"]
    # the CLI and its JUnit file read the same margin
    junit = tmp_path / "gate.xml"
    done = runner.invoke(app, ["compare", str(runs["base"]), str(runs["verbose"]), "--fail-if-worse", "--junit", str(junit)])
    assert done.exit_code == 1, done.output
    (case,) = [c for suite in junitparser.JUnitXml.fromfile(str(junit)) for c in suite if c.name == "length"]
    assert not case.is_passed and f"margin ±{recorded:.3g}" in case.result[0].message


def test_a_margin_given_to_the_baseline_audit_is_the_default(runs: dict[str, Path]) -> None:
    result = compare_runs(runs["base"], runs["verbose"], margins={"length": 5.0})
    assert result.change("gender", "length").margin == 5.0 and result.change("gender", "length").non_inferior is True
    data = json.loads((runs["base"] / "results.json").read_text(encoding="utf-8"))
    data["manifest"]["margins"] = {"length": 4.0}  # as `audit --margin length=4` records it
    edited = runs["base"].parent / "edited"
    edited.mkdir(exist_ok=True)
    (edited / "results.json").write_text(json.dumps(data), encoding="utf-8")
    (edited / "responses.jsonl").write_bytes((runs["base"].parent / "responses.jsonl").read_bytes())
    assert compare_runs(edited, runs["verbose"]).change("gender", "length").margin == 4.0


def test_an_improvement_shown_by_the_exact_test_passes_the_gate(runs: dict[str, Path]) -> None:
    result = compare_runs(runs["longer"], runs["fair"])
    row = result.change("gender", "length")
    assert row.change_ci == (None, None) and row.change_test == "signflip_exact"  # +1 on every pair: no interval
    assert row.verdict is Change.IMPROVED and row.non_inferior is True and row.within_margin is False
    assert any("shows it above 0" in note for note in row.notes), row.notes
    assert evaluate(result, "fail-if-worse").passed
    done = runner.invoke(app, ["compare", str(runs["longer"]), str(runs["fair"]), "--fail-if-worse"])
    assert done.exit_code == 0 and "improved" in done.output and "not shown non-inferior" not in done.output, done.output


def test_a_regression_shown_by_the_exact_test_fails_the_gate(runs: dict[str, Path]) -> None:
    comparison = compare_runs(runs["fair"], runs["longer"], margins={"length": 0.5})
    row = comparison.change("gender", "length")
    assert row.verdict is Change.REGRESSED and row.non_inferior is False and not evaluate(comparison, "fail-if-worse").passed
    # a baseline whose answers have no spread records no default margin: none is taken from the candidate
    unset = compare_runs(runs["fair"], runs["longer"]).change("gender", "length")
    assert unset.margin is None and unset.non_inferior is None
    assert unset.notes[0].startswith("no margin: the baseline audit recorded none for length"), unset.notes


def test_identical_scores_without_a_margin_name_the_units_needed_not_a_margin(runs: dict[str, Path]) -> None:
    """Review: both runs' lengths the same on every pair, the note said "give one (--margin length=VALUE…)" while the
    gate said "needs 149 pairs"; a margin changes nothing there (the bound needs that many whatever the margin)."""
    row = compare_runs(runs["fair"], runs["fair_too"]).change("gender", "length")
    assert row.margin is None and row.identical and row.non_inferior is False and row.units_needed == 149
    assert row.notes[0].startswith(f"the same gap on all {N} pairs in both runs"), row.notes
    assert f"identical gaps need 149 pairs ({149 - N} more)" in row.notes[0], row.notes
    assert not any("--margin" in note for note in row.notes), row.notes
    assert row.notes[-1].startswith("no margin was needed: every score of length is the same in both runs"), row.notes
    given = compare_runs(runs["fair"], runs["fair_too"], margins={"length": 1.0}).change("gender", "length")
    assert given.units_needed == row.units_needed and given.non_inferior is False  # the margin is not what is missing
    done = runner.invoke(app, ["compare", str(runs["fair"]), str(runs["fair_too"]), "--fail-if-worse"], env={"COLUMNS": "200"})
    assert done.exit_code == 1, done.output
    said = " ".join(done.output.split())
    assert "--margin length=" not in said and "identical gaps need 149 pairs (89 more)" in said, said
    assert "it needs 149 pairs, 89 more" in said, said


def test_a_constant_contrast_is_bounded_by_zero_only_where_its_exact_test_shows_its_sign() -> None:
    n = 20
    ones, zeros = np.ones(n), np.zeros(n)
    shown = gap_change(zeros, zeros, ones, zeros, kind="count", margin=0.05).change  # +1 on every pair
    assert shown.ci == (None, None) and shown.shown_sign == 1
    assert (shown.low, shown.high, shown.negated().low, shown.negated().high) == (0.0, None, None, 0.0)
    few = gap_change(np.zeros(4), np.zeros(4), np.ones(4), np.zeros(4), kind="count", margin=0.05).change  # p 2^-3
    assert few.shown_sign == 0 and (few.low, few.high) == (None, None)
    improved = gap_change(zeros, ones, zeros, zeros, kind="count", margin=0.05)  # baseline gap -1, candidate 0
    assert improved.direction == "smaller" and improved.non_inferior is True and improved.within_margin is False
    worse = gap_change(zeros, zeros, zeros, ones, kind="count", margin=0.05)
    assert worse.direction == "larger" and worse.non_inferior is False


def test_the_documented_python_gate_is_evaluate_not_the_keys_not_shown_non_inferior(runs: dict[str, Path]) -> None:
    """Review: the how-to printed ``not_non_inferior()`` as "the gate fails on:", () where the gate failed."""
    import dataclasses

    from fairtalk.results import ModelComparison

    passing = compare_runs(runs["longer"], runs["fair"])
    assert evaluate(passing, "fail-if-worse").passed
    left_out = dataclasses.replace(passing, axes_only_baseline=("race",))  # an axis only the baseline holds
    assert left_out.not_non_inferior() == () and not evaluate(left_out, "fail-if-worse").passed
    doc = (Path(__file__).resolve().parents[1] / "docs" / "how-to" / "compare.md").read_text(encoding="utf-8")
    block = doc.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'evaluate(comparison, "fail-if-worse")' in block and "not_non_inferior" not in block
    said = " ".join((ModelComparison.not_non_inferior.__doc__ or "").split())
    assert "not the release gate's failures" in said and "An empty tuple is not a passing gate" in said


def test_an_axis_given_twice_is_refused_as_audit_refuses_it(runs: dict[str, Path]) -> None:
    """Review: ``--axis gender,gender`` compared gender twice (4 JUnit testcases, 4 csv rows for 2 keys)."""
    from fairtalk.errors import SpecError

    with pytest.raises(SpecError, match="axis 'gender' is given twice: give each axis once"):
        compare_runs(runs["longer"], runs["fair"], axes=["gender", "gender"])
    done = runner.invoke(app, ["compare", str(runs["longer"]), str(runs["fair"]), "--axis", "gender,gender"])
    assert done.exit_code == 2 and "error: axis 'gender' is given twice: give each axis once" in done.output, done.output


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), "0.01", True])
def test_a_bad_margin_is_a_spec_error_naming_the_key(runs: dict[str, Path], value: object) -> None:
    from fairtalk.errors import SpecError

    with pytest.raises(SpecError, match="the non-inferiority margin of 'length' must be a finite number > 0"):
        compare_runs(runs["longer"], runs["fair"], margins={"length": value})  # type: ignore[dict-item]
    with pytest.raises(SpecError, match="margins must map result keys"):
        compare_runs(runs["longer"], runs["fair"], margins=[("length", 1.0)])  # type: ignore[arg-type]


def test_identical_gaps_say_one_unit_in_the_note_and_the_gate(tmp_path: Path) -> None:
    """Review: "the same gap on all 3 pairs" in the note beside "all 3 dialogues" in the gate's reason."""
    records = []
    for i in range(12):
        extra = (("cluster", f"d{i // 3}"),)  # 12 pairs in 4 dialogues
        records += [
            Response(f"p{i}", "a", f"he said {i}", "fine thanks", extra),
            Response(f"p{i}", "b", f"she said {i}", "fine thanks", extra),
        ]
    folders = []
    for name in ("b", "c"):
        (tmp_path / name).mkdir()
        write_responses(records, tmp_path / name / "responses.jsonl")
        args = ["score", "--responses", str(tmp_path / name / "responses.jsonl"), "--axis", "gender", "--measures", "offense"]
        assert runner.invoke(app, [*args, "-o", str(tmp_path / name / "scored"), "-q"]).exit_code == 0
        folders.append(tmp_path / name / "scored")
    comparison = compare_runs(*folders)
    row = comparison.change("gender", "offense_rate")
    assert row.identical and row.n_units == 4
    assert row.notes[0].startswith("the same gap on all 4 dialogues (12 pairs) in both runs: at most"), row.notes
    (failure,) = [f for f in evaluate(comparison, "fail-if-worse").failures if f.key == "offense_rate"]
    assert "the same gap on all 4 dialogues in both runs" in failure.reason
