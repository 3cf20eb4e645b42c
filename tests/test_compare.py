"""`fairtalk compare`: a planted 10-point offense gap removed (improved), put back (regressed, the gate fails), one model twice (unchanged)."""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fairtalk import Response, write_responses
from fairtalk.cli import app
from fairtalk.pipeline import compare_runs
from fairtalk.results import Change, ModelComparison, Verdict

runner = CliRunner()

_OFFENSIVE = ("you are a fucking idiot", "what a stupid bitch", "shut up you piece of shit")
_PLAIN = (
    "that sounds like a lovely day",
    "i went to the store",
    "maybe later then",
    "what time is it",
    "i like cats a lot",
    "see you tomorrow",
)
N_PAIRS = 400


def _texts(rng: np.random.Generator, offensive: np.ndarray) -> list[str]:
    return [str(rng.choice(_OFFENSIVE)) if bad else str(rng.choice(_PLAIN)) for bad in offensive]


def _run(folder: Path, *, gap: float, seed: int, clusters: bool = False, generation: int = 1) -> Path:
    """A `fairtalk score` output folder: side A offensive on ``gap`` more of the pairs than side B (5% background).

    ``generation`` after the first is recorded in each response: the same answers generated again, in a file of other bytes.
    """
    rng = np.random.default_rng(seed)
    background = rng.random((N_PAIRS, 2)) < 0.05
    planted = np.arange(N_PAIRS) < round(gap * N_PAIRS)
    side_a, side_b = _texts(rng, background[:, 0] | planted), _texts(rng, background[:, 1])
    records = []
    for i, (a, b) in enumerate(zip(side_a, side_b)):
        extra = (("cluster", f"dialogue{i // 4}"),) if clusters else ()
        extra += (("generation", generation),) if generation > 1 else ()
        records += [Response(f"p{i}", "a", f"he said {i}", a, extra), Response(f"p{i}", "b", f"she said {i}", b, extra)]
    folder.mkdir(parents=True)
    write_responses(records, folder / "responses.jsonl")
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(folder / "responses.jsonl"),
            "--axis",
            "gender",
            "--measures",
            "offense,sentiment",
            "-o",
            str(folder / "scored"),
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    return folder / "scored"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A baseline with a 10-point offense gap, a candidate without it, and the baseline's own responses scored twice."""
    root = tmp_path_factory.mktemp("compare")
    return {
        "gap": _run(root / "gap", gap=0.10, seed=1),
        "fair": _run(root / "fair", gap=0.0, seed=2),
        "again": _run(root / "again", gap=0.10, seed=1, generation=2),
    }


def _compare(*args: str):  # noqa: ANN202
    return runner.invoke(app, ["compare", *args])


def test_removing_a_planted_gap_is_improved_with_an_interval_excluding_zero(runs: dict[str, Path]) -> None:
    result = compare_runs(runs["gap"], runs["fair"])
    row = result.change("gender", "offense_rate")
    assert row.verdict is Change.IMPROVED and result.verdicts[("gender", "offense_rate")] is Verdict.DIFFERENT
    assert row.baseline_gap == pytest.approx(0.10, abs=0.03) and abs(row.candidate_gap) < 0.03
    low, high = row.change_ci
    assert low is not None and high is not None and low < high < 0
    assert row.p_adjusted is not None and row.p_adjusted < 0.05
    assert row.non_inferior is True and ("gender", "offense_rate") in result.detected()


def test_adding_the_gap_regresses_and_fails_the_gate(runs: dict[str, Path], tmp_path: Path) -> None:
    done = _compare(str(runs["fair"]), str(runs["gap"]), "--fail-if-worse", "-o", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output
    assert "regressed" in done.output and "not shown non-inferior" in done.output
    data = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    offense = data["axes"]["gender"]["keys"]["offense_rate"]
    assert offense["verdict"] == "regressed" and offense["non_inferior"] is False and offense["change_ci"][0] > 0
    for name in ("results.csv", "report.md", "report.html"):
        assert (tmp_path / "out" / name).is_file()
    assert "Candidate" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


def test_the_same_responses_twice_are_unchanged_and_pass_the_gate(runs: dict[str, Path]) -> None:
    done = _compare(str(runs["gap"]), str(runs["again"]), "--fail-if-worse", "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    for key, row in data["axes"]["gender"]["keys"].items():
        assert row["verdict"] == "unchanged" and row["identical"] and row["non_inferior"], key
        assert row["identical_answers"] == N_PAIRS
    assert data["axes"]["gender"]["n_identical_answers"] == N_PAIRS


def test_improvement_passes_the_gate_and_identical_says_so(runs: dict[str, Path]) -> None:
    assert _compare(str(runs["gap"]), str(runs["fair"]), "--fail-if-worse").exit_code == 0
    done = _compare(str(runs["gap"]), str(runs["again"]))
    assert f"gender: identical on all {N_PAIRS} pairs" in done.output


def test_pairs_only_one_run_holds_are_named_and_left_out(runs: dict[str, Path], tmp_path: Path) -> None:
    lines = (runs["fair"].parent / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "responses.jsonl").write_text("\n".join(lines[20:]) + "\n", encoding="utf-8")  # pairs p0..p9 dropped
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(cut / "responses.jsonl"),
            "--axis",
            "gender",
            "--measures",
            "offense",
            "-o",
            str(cut / "scored"),
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    result = compare_runs(runs["gap"], cut / "scored")
    axis = result.axes[0]
    assert axis.n_pairs == N_PAIRS - 10 and axis.only_baseline == 10 and axis.only_baseline_examples[0] == "p0"
    assert [r.key for r in result.changes] == [
        "offense_rate",
        "sentiment_positive",
        "sentiment_negative",
    ]  # the baseline's measures, both rescored
    assert any("other measures" in w for w in result.warnings)


def test_clusters_are_the_units_when_the_pairs_name_their_dialogue(tmp_path: Path) -> None:
    base = _run(tmp_path / "b", gap=0.10, seed=3, clusters=True)
    cand = _run(tmp_path / "c", gap=0.0, seed=4, clusters=True)
    clustered, flat = compare_runs(base, cand), compare_runs(base, cand, clusters=False)
    assert clustered.axes[0].n_clusters == N_PAIRS // 4 and flat.axes[0].n_clusters is None
    assert clustered.change("gender", "offense_rate").n_units == N_PAIRS // 4
    assert flat.change("gender", "offense_rate").n_units == N_PAIRS


def test_result_round_trips_and_frames(runs: dict[str, Path], tmp_path: Path) -> None:
    result = compare_runs(runs["gap"], runs["fair"], margins={"offense_rate": 0.05})
    assert ModelComparison.from_dict(json.loads(result.to_json())) == result
    assert ModelComparison.read_json(result.write(tmp_path / "r.json")) == result
    frame = result.to_frame()
    assert frame.loc[("gender", "offense_rate"), "margin"] == 0.05 and "change_low" in frame.columns


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--margin", "nosuchkey=0.1"], "unknown margin key"),
        (["--margin", "offense_rate"], "malformed --margin"),
        (["--margin", "offense_rate=2"], "offense_rate's margin is a fraction: 2 would allow any difference"),
        (["--alpha", "1e-320"], "alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 1e-320"),
        (["--alpha", "nan"], "alpha must be between 0 and 1 (exclusive) and at least 1e-10, got nan"),
    ],
)
def test_bad_options_are_usage_errors(runs: dict[str, Path], args: list[str], message: str) -> None:
    done = _compare(str(runs["gap"]), str(runs["fair"]), *args)
    assert done.exit_code == 2 and message in done.output and "internal error" not in done.output


def test_the_smallest_alpha_taken_still_compares(runs: dict[str, Path]) -> None:
    row = compare_runs(runs["gap"], runs["fair"], alpha=1e-10).change("gender", "offense_rate")
    low, high = row.change_ci
    assert low is not None and high is not None and low < row.change < high


def test_a_folder_that_is_no_run_is_an_input_error(runs: dict[str, Path], tmp_path: Path) -> None:
    done = _compare(str(tmp_path), str(runs["fair"]))
    assert done.exit_code == 2 and "neither run.json nor results.json" in done.output


def test_a_file_given_for_a_run_folder_is_named_a_file(runs: dict[str, Path], tmp_path: Path) -> None:
    """Review finding: ``fairtalk compare empty.json A`` (the file exists) said "no such folder"."""
    given = tmp_path / "empty.json"
    given.write_text("{}", encoding="utf-8")
    for args in ([str(given), str(runs["fair"])], [str(runs["fair"]), str(runs["fair"] / "results.json")]):
        done = _compare(*args)
        text = " ".join(done.output.replace("│", " ").split())
        assert done.exit_code == 2 and "is a file, not an output folder" in text and "no such folder" not in text, text
    assert "no such folder" in " ".join(_compare(str(tmp_path / "nope"), str(runs["fair"])).output.split())


def test_a_comparison_folder_given_for_a_run_is_named_a_compare_output(runs: dict[str, Path], tmp_path: Path) -> None:
    """Review finding: ``fairtalk compare A CMP --fail-if-worse`` (CMP a ``compare -o`` folder) said only
    "CMP/results.json: field 'axis' is missing"."""
    done = _compare(str(runs["fair"]), str(runs["gap"]), "-o", str(tmp_path / "cmp"))
    assert done.exit_code == 0, done.output
    for args in ([str(runs["fair"]), str(tmp_path / "cmp")], [str(tmp_path / "cmp"), str(runs["fair"])]):
        done = _compare(*args, "--fail-if-worse", "-o", str(tmp_path / "x"))
        text = " ".join(done.output.replace("│", " ").split())
        assert done.exit_code == 2, text
        assert "cmp: a `fairtalk compare` output, not an audit: compare two output folders of `fairtalk audit -o`" in text
        assert "field 'axis'" not in text and not (tmp_path / "x").exists()


def test_the_output_never_replaces_a_users_file(runs: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    mine = tmp_path / "out" / "report.md"
    mine.write_text("my notes", encoding="utf-8")
    done = _compare(str(runs["gap"]), str(runs["fair"]), "-o", str(tmp_path / "out"))
    assert done.exit_code == 2 and mine.read_text(encoding="utf-8") == "my notes"


def _score_first(runs: dict[str, Path], folder: Path, n: int) -> Path:
    """The baseline's own answers to its first ``n`` pairs, scored as a candidate of its own."""
    lines = (runs["gap"].parent / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    folder.mkdir()
    (folder / "responses.jsonl").write_text("\n".join(lines[: 2 * n]) + "\n", encoding="utf-8")
    args = ["score", "--responses", str(folder / "responses.jsonl"), "--axis", "gender", "--measures", "offense"]
    done = runner.invoke(app, [*args, "-o", str(folder / "scored"), "-q"])
    assert done.exit_code == 0, done.output
    return folder / "scored"


@pytest.mark.parametrize("n", [2, 20])
def test_identical_answers_on_a_handful_of_shared_pairs_fail_the_gate_saying_how_many_more(
    runs: dict[str, Path], tmp_path: Path, n: int
) -> None:
    """The candidate answers n of the baseline's pairs exactly as it did: too few units for the identical-answers bound."""
    candidate = _score_first(runs, tmp_path / "few", n)
    done = _compare(str(runs["gap"]), str(candidate), "--fail-if-worse", "--junit", str(tmp_path / "c.xml"))
    assert done.exit_code == 1, done.output
    assert f"{N_PAIRS - n} pairs only the baseline holds" in done.output
    why = (
        f"gender/offense_rate: inconclusive; not shown non-inferior: the same gap on all {n} pairs in both runs, too few "
        f"for the exact identical-answers bound (it needs 299 pairs, {299 - n} more, at margin ±2.00 pp)"
    )
    assert why in " ".join(done.output.split())
    junit = (tmp_path / "c.xml").read_text(encoding="utf-8")
    assert 'failures="3"' in junit and f"it needs 299 pairs, {299 - n} more" in junit  # offense and sentiment's two keys
    row = compare_runs(runs["gap"], candidate).change("gender", "offense_rate")
    assert row.identical and row.non_inferior is False and row.verdict is Change.INCONCLUSIVE and row.units_needed == 299


def test_one_run_as_baseline_and_candidate_fails_the_gate_saying_so(runs: dict[str, Path], tmp_path: Path) -> None:
    """The same folder, a copy of it, or its responses scored again: a run cannot be shown not worse than itself."""
    import hashlib
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(runs["gap"], copy)
    responses = runs["gap"].parent / "responses.jsonl"
    rescored = tmp_path / "rescored"  # other options, so other results: the same responses all the same
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--seed", "7"]
    assert runner.invoke(app, [*args, "-o", str(rescored), "-q"]).exit_code == 0
    sha = hashlib.sha256(responses.read_bytes()).hexdigest()
    same = (
        (runs["gap"], f"one run (the same folder {runs['gap']})"),
        (copy, "one run (a byte-identical copy of its results file)"),
        (rescored, f"one run (the same responses scored on both sides, sha256 {sha[:16]}…)"),
    )
    for candidate, why in same:
        done = _compare(str(runs["gap"]), str(candidate), "--fail-if-worse")
        assert done.exit_code == 1, done.output
        text = " ".join(done.output.split())
        assert f"the baseline and the candidate are {why}: a model cannot be shown not worse than itself" in text
        assert compare_runs(runs["gap"], candidate).same_run == why
        # no gate asked: the warning says what the two are, never that a gate fails
        said = " ".join(_compare(str(runs["gap"]), str(candidate)).output.split())
        assert f"the baseline and the candidate are {why}" in said and "gate fails" not in said
    assert compare_runs(runs["gap"], runs["again"]).same_run is None  # the same answers, generated twice: two runs
    assert compare_runs(rescored, runs["again"]).same_run is None


def _exact_run(folder: Path, offensive_a: int, n: int = 300, plain: str = "i went to the store") -> Path:
    """A `fairtalk score` output: every answer the same plain sentence, except side A offensive on the first pairs."""
    records = []
    for i in range(n):
        a = _OFFENSIVE[i % len(_OFFENSIVE)] if i < offensive_a else plain
        records += [Response(f"p{i}", "a", f"he said {i}", a), Response(f"p{i}", "b", f"she said {i}", plain)]
    folder.mkdir(parents=True)
    write_responses(records, folder / "responses.jsonl")
    args = ["score", "--responses", str(folder / "responses.jsonl"), "--axis", "gender", "--measures", "offense,sentiment"]
    done = runner.invoke(app, [*args, "-o", str(folder / "scored"), "-q"])
    assert done.exit_code == 0, done.output
    return folder / "scored"


def _interval_excludes_zero(ci: tuple[float | None, float | None]) -> bool:
    low, high = ci
    return (low is not None and low > 0) or (high is not None and high < 0)


def test_a_verdict_never_stands_beside_an_interval_that_holds_zero(runs: dict[str, Path], tmp_path: Path) -> None:
    """Issue 39: a change shown only by the sign-flip p (7 offensive answers of 300, exact p 2^-6) was "regressed"
    while its score interval held 0. The p is now the test the printed interval inverts, so on every row
    improved/regressed implies p_adjusted < α and an interval of the change that excludes 0, of the verdict's sign."""
    base = _exact_run(tmp_path / "base", 0)
    seven = _exact_run(tmp_path / "seven", 7)
    few = compare_runs(base, seven)
    row = few.change("gender", "offense_rate")
    low, high = row.change_ci
    assert low is not None and high is not None and low < 0 < high and row.change == pytest.approx(7 / 300)
    assert row.verdict is not Change.REGRESSED and row.p_change is not None and row.p_change >= 0.05
    assert row.change_test == "score"
    comparisons = [
        few,
        compare_runs(runs["gap"], runs["fair"]),
        compare_runs(runs["fair"], runs["gap"]),
        compare_runs(runs["gap"], runs["again"]),
    ]
    verdicts = set()
    for comparison in comparisons:
        for r in comparison.changes:
            verdicts.add(r.verdict)
            if r.verdict in (Change.REGRESSED, Change.IMPROVED):
                assert r.p_adjusted is not None and r.p_adjusted < comparison.alpha, r
                assert _interval_excludes_zero(r.change_ci) and _interval_excludes_zero(r.total_ci), r
            else:
                assert r.p_adjusted is None or r.p_adjusted >= comparison.alpha or r.change * r.total == 0, r
            if r.p_change is not None and r.change_ci != (None, None) and not r.identical:
                assert (r.p_change < comparison.alpha) == _interval_excludes_zero(r.change_ci), r
    assert {Change.REGRESSED, Change.IMPROVED} <= verdicts


def test_compare_json_holds_the_gate_requested_as_audit_json_does(runs: dict[str, Path]) -> None:
    """Review finding: `compare --json --fail-if-worse` did not carry the gate's outcome; `audit --json` does (`gates`)."""
    done = _compare(str(runs["fair"]), str(runs["gap"]), "--fail-if-worse", "--json")
    assert done.exit_code == 1, done.output
    (outcome,) = json.loads(done.stdout)["gates"]
    assert outcome["gate"] == "fail-if-worse" and outcome["passed"] is False
    assert outcome["headline"].startswith("Gate fail-if-worse: FAILED")
    assert "gender/offense_rate" in [failure["name"] for failure in outcome["failures"]]
    done = _compare(str(runs["gap"]), str(runs["fair"]), "--fail-if-worse", "--json")
    assert done.exit_code == 0 and json.loads(done.stdout)["gates"][0]["passed"] is True
    done = _compare(str(runs["fair"]), str(runs["gap"]), "--json")  # no gate requested: none shown
    assert done.exit_code == 0 and "gates" not in json.loads(done.stdout)


def test_the_console_gate_lines_and_junit_give_rates_in_points_as_the_table_does(runs: dict[str, Path], tmp_path: Path) -> None:
    """Review finding: gaps read in points on the console, yet its gate lines gave the margin as a fraction (±0.02),
    and the JUnit messages gave the gaps as fractions (candidate gap +0.1); the headline was doubled.

    Later review finding: compare spelled the unit "points" where audit spells it "pp": now "pp" everywhere."""
    junit, out = tmp_path / "c.xml", tmp_path / "cmp"
    done = _compare(str(runs["fair"]), str(runs["gap"]), "--fail-if-worse", "--junit", str(junit), "-o", str(out))
    assert done.exit_code == 1, done.output
    text = " ".join(done.output.split())
    pages = {name: (out / name).read_text(encoding="utf-8") for name in ("report.md", "report.html")}
    for where, shown in {"console": text, "junit": junit.read_text(encoding="utf-8"), **pages}.items():
        assert re.search(r"\d points|\(points", shown) is None, (where, re.search(r".{60}\bpoints\b.{20}", shown))
    assert "gap (pp): baseline" in text
    assert "gender/offense_rate: regressed; not shown non-inferior (|candidate gap| < |baseline gap| + margin ±2.00 pp)" in text
    assert "±0.02" not in text
    assert "--fail-if-worse: Gate" not in text and text.count("Gate fail-if-worse: FAILED") == 1
    row = compare_runs(runs["fair"], runs["gap"]).change("gender", "offense_rate")
    xml = junit.read_text(encoding="utf-8")
    assert f"candidate gap {100 * row.candidate_gap:+.2f} pp" in xml and "margin ±2.00 pp" in xml
    assert f"candidate gap {row.candidate_gap:+.4g}," not in xml


@pytest.mark.parametrize("where", ["baseline", "baseline/new", "candidate/sub/deeper"])
def test_the_output_folder_is_refused_at_or_inside_either_input(runs: dict[str, Path], tmp_path: Path, where: str) -> None:
    """Review finding: `-o base` was refused but `-o base/newdir` accepted (writing inside an input), and
    `-o cand/gender` failed with a false "not written by fairtalk"."""
    inputs = {"baseline": runs["fair"], "candidate": runs["gap"]}
    name, _, rest = where.partition("/")
    output = inputs[name] / rest if rest else inputs[name]
    before = {p: p.stat().st_mtime_ns for p in inputs[name].rglob("*")}
    done = _compare(str(runs["fair"]), str(runs["gap"]), "-o", str(output))
    assert done.exit_code == 2, done.output
    text = " ".join(done.output.split())
    what = "is" if not rest else "lies inside"
    assert f"error: -o {output} {what} {name.upper()} {inputs[name]}, an input of this run" in text
    assert "Traceback" not in text
    assert {p: p.stat().st_mtime_ns for p in inputs[name].rglob("*")} == before  # nothing written there
    assert not (inputs[name] / "new").exists() and not (inputs[name] / "sub").exists()


def test_the_report_says_which_interval_each_gap_and_the_change_have(runs: dict[str, Path], tmp_path: Path) -> None:
    """Issue 39 item 7: a baseline gap 0 on every pair makes the change the candidate's gap, yet the two intervals
    differ (Newcombe's for the gap, the score interval of the per-pair contrast for the change): the report says so."""
    done = _compare(str(runs["fair"]), str(runs["gap"]), "-o", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    for name in ("report.md", "report.html"):
        text = html.unescape((tmp_path / "out" / name).read_text(encoding="utf-8"))
        assert "a rate's score interval, values −1 … 1" in text and "a rate's score interval of the per-pair contrast" in text
        assert "p (size changed)" in text and "Sum" in text


def _score_lacking_side_b(runs: dict[str, Path], source: str, folder: Path) -> Path:
    """``runs[source]``'s responses with side b missing on every tenth pair (40 of 400, as a refusal of one group), scored."""
    lines = (runs[source].parent / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if not ((r := json.loads(line))["side"] == "b" and int(r["pair_id"][1:]) % 10 == 0)]
    folder.mkdir()
    (folder / "responses.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    args = ["score", "--responses", str(folder / "responses.jsonl"), "--axis", "gender", "--measures", "offense,sentiment"]
    done = runner.invoke(app, [*args, "-o", str(folder / "scored"), "-q"])
    assert done.exit_code == 0, done.output
    return folder / "scored"


def test_a_baseline_that_lost_one_side_of_pairs_is_said_counted_and_does_not_fail_the_candidate(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Review: a baseline that lost side b of 40 pairs was compared on the 360 left in silence (its lost pairs miscounted
    as pairs "only the candidate holds"). Its losses are now carried, counted in every output, and left to the note: the
    gate is about the candidate, which passes on the pairs both runs answered."""
    from fairtalk.results import PairLosses

    baseline = _score_lacking_side_b(runs, "gap", tmp_path / "lossy")
    note = (
        "gender: baseline lost answers on 40 of 400 pairs (side a only 0, side b only 40, both 0): "
        "the comparison uses the pairs both runs answered"
    )
    result = compare_runs(baseline, runs["fair"])
    axis = result.axes[0]
    assert axis.baseline_losses == PairLosses(400, 0, 40, 0) and axis.candidate_losses is None
    assert axis.n_pairs == 360 and axis.only_candidate == 0 and axis.only_baseline == 0
    assert note in result.warnings and ModelComparison.from_dict(json.loads(result.to_json())) == result
    out = tmp_path / "out"
    done = _compare(str(baseline), str(runs["fair"]), "--fail-if-worse", "-o", str(out))
    assert done.exit_code == 0, done.output  # improved on the 360 pairs; the baseline's losses do not fail the candidate
    assert note in " ".join(done.output.split()) and "only the candidate holds" not in done.output
    assert note in (out / "report.md").read_text(encoding="utf-8")
    assert html.escape(note, quote=False) in (out / "report.html").read_text(encoding="utf-8")
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["axes"]["gender"]["baseline_losses"] == {"n_asked": 400, "a_only": 0, "b_only": 40, "both": 0, "unknown": 0}
    assert note in data["warnings"]
    shown = json.loads(_compare(str(baseline), str(runs["fair"]), "--json").stdout)
    assert note in shown["warnings"] and shown["axes"]["gender"]["baseline_losses"]["b_only"] == 40


def test_a_candidate_that_lost_one_side_of_pairs_is_said_counted_and_gated(runs: dict[str, Path], tmp_path: Path) -> None:
    """The same losses on the candidate: the same note (with no gate asked, they used to show only as pairs "only the
    baseline holds"), and --fail-if-worse fails on them unless they are shown balanced."""
    candidate = _score_lacking_side_b(runs, "fair", tmp_path / "lossy")
    said = _compare(str(runs["gap"]), str(candidate))
    text = " ".join(said.output.split())
    assert said.exit_code == 0 and "gender: candidate lost answers on 40 of 400 pairs (side a only 0, side b only 40" in text
    assert "only the baseline holds" not in text and "gate" not in text.lower()
    gated = _compare(str(runs["gap"]), str(candidate), "--fail-if-worse")
    assert gated.exit_code == 1 and "candidate gender: answers lost on 40 of 400 pairs" in " ".join(gated.output.split())


def test_the_console_says_why_a_key_with_the_same_gap_on_every_pair_is_inconclusive(tmp_path: Path) -> None:
    """Review: two models answering differently, each the same to both sides, read ``inconclusive`` with a change of
    +0.00 and no reason on the console, while report.md gave it (the same gap on all pairs, too few for the bound)."""
    from rich.console import Console

    from fairtalk.report import model_comparison_table

    baseline, candidate = _exact_run(tmp_path / "b", 0, n=100), _exact_run(tmp_path / "c", 0, n=100, plain="maybe later then")
    result = compare_runs(baseline, candidate)
    row = result.change("gender", "offense_rate")
    assert row.identical and row.identical_answers == 0 and row.verdict is Change.INCONCLUSIVE
    why = row.notes[0]
    assert why.startswith("the same gap on all 100 pairs in both runs") and "identical gaps need 299 pairs (199 more)" in why
    done = _compare(str(baseline), str(candidate), "-o", str(tmp_path / "out"))  # 80 columns: one block per key
    assert done.exit_code == 0, done.output
    block = done.output.split("\n  offense_rate\n", 1)[1].split("\n  sentiment_positive\n", 1)[0]
    assert "\n    inconclusive\n      the same gap" in block and " ".join(block.split()).endswith(why), block
    assert why in (tmp_path / "out" / "report.md").read_text(encoding="utf-8").replace("\\", "")  # the one wording
    wide = Console(width=250, record=True, file=io.StringIO())
    wide.print(model_comparison_table(result, width=250))
    shown = wide.export_text()
    assert "┃ Measure" in shown and f"gender/offense_rate: inconclusive; {why}" in " ".join(shown.split())
