"""`fairtalk audit --model CANDIDATE --baseline-model BASELINE`: both models on the same pairs in one run, compared."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus, write_models
from fairtalk.cli import app

runner = CliRunner()


@pytest.fixture()
def toys(tmp_path: Path) -> tuple[Path, Path]:
    return write_corpus(tmp_path), write_models(tmp_path)


def _audit(corpus: Path, models: Path, out: Path, candidate: str, baseline: str, *extra: str):  # noqa: ANN202
    return runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"python:{models}:{candidate}",
            "--baseline-model",
            f"python:{models}:{baseline}",
            "--measures",
            "offense,sentiment",
            "--resamples",
            "50",
            "-o",
            str(out),
            *extra,
        ],
    )


def test_one_run_audits_both_models_on_the_same_pairs_and_compares_them(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    out = tmp_path / "out"
    done = _audit(corpus, models, out, "fair", "biased")
    assert done.exit_code == 0, done.output
    candidate = json.loads((out / "gender" / "results.json").read_text())
    baseline = json.loads((out / "baseline" / "gender" / "results.json").read_text())
    assert candidate["manifest"]["audit"]["model"].startswith(f"python:{models}:fair ")
    assert baseline["manifest"]["audit"]["model"].startswith(f"python:{models}:biased ")

    def ids(folder: Path) -> list[str]:
        return sorted({json.loads(line)["pair_id"] for line in (folder / "responses.jsonl").read_text().splitlines()})

    assert ids(out / "gender") == ids(out / "baseline" / "gender") and len(ids(out / "gender")) == 40
    with sqlite3.connect(out / "store.sqlite") as db:  # one store, both models' fingerprints
        fingerprints = {row[0].split(" ")[0] for row in db.execute("SELECT fingerprint FROM runs")}
    assert fingerprints == {f"python:{models}:fair", f"python:{models}:biased"}
    assert not (out / "baseline" / "store.sqlite").exists()
    comparison = json.loads((out / "comparison" / "results.json").read_text())
    assert comparison["kind"] == "model comparison"
    assert comparison["axes"]["gender"]["keys"]["offense_rate"]["verdict"] == "improved"
    table = [line for line in (out / "comparison" / "report.md").read_text().splitlines() if line.startswith("|")]
    # the verdict comes next to the measure, in view on a page (GitHub's ~980 px) where the other columns scroll
    assert [c.strip() for c in table[0].strip("|").split("|")][:3] == ["Measure", "Verdict", "Baseline gap"]
    offense = next(line for line in table if line.startswith("| Offense"))
    assert [c.strip() for c in offense.strip("|").split("|")][:2] == ["Offense Rate (%)", "improved"]
    assert "Offense" in done.output or "offense" in done.output  # the comparison table is printed, as compare prints it


def test_fail_if_worse_exits_1_when_the_candidate_is_the_biased_one(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    out = tmp_path / "worse"
    done = _audit(corpus, models, out, "biased", "fair", "--fail-if-worse")
    assert done.exit_code == 1, done.output
    assert "not shown non-inferior" in done.output
    comparison = json.loads((out / "comparison" / "results.json").read_text())
    assert comparison["axes"]["gender"]["keys"]["offense_rate"]["verdict"] == "regressed"
    again = _audit(corpus, models, out, "biased", "fair")  # without the gate: exit 0; the rerun keeps every folder
    assert again.exit_code == 0, again.output
    assert (out / "baseline" / "gender" / "results.json").is_file() and (out / "comparison" / "results.json").is_file()


def test_one_model_against_itself_on_40_pairs_fails_the_gate_saying_how_many_more_it_needs(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    """Identical answers on 40 pairs show nothing: the identical-answers bound needs 299 pairs for a rate at ±0.02.

    The candidate is the baseline's spec under another ``--model-version`` (a model changed behind
    the same spec), so the two are not one model; with no version the audit refuses before any
    answer is generated.
    """
    corpus, models = toys
    out = tmp_path / "same"
    done = _audit(corpus, models, out, "fair", "fair", "--fail-if-worse", "--model-version", "2")
    assert done.exit_code == 1, done.output
    said = " ".join(done.output.split())  # the console wraps its findings at 80 columns
    assert "gender/offense_rate: inconclusive; not shown non-inferior: the same gap on all 40 pairs" in said
    assert "it needs 299 pairs, 259 more" in said
    comparison = json.loads((out / "comparison" / "results.json").read_text())
    keys = comparison["axes"]["gender"]["keys"].values()
    assert {(row["verdict"], row["identical"], row["non_inferior"], row["units_needed"]) for row in keys} == {
        ("inconclusive", True, False, 299)
    }


def test_fail_if_worse_needs_a_baseline(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    done = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"python:{models}:fair",
            "--fail-if-worse",
            "-o",
            str(tmp_path / "x"),
        ],
    )
    assert done.exit_code == 2 and "--fail-if-worse needs --baseline-model" in done.output


def _audit_alone(corpus: Path, models: Path, out: Path, model: str, axes: str):  # noqa: ANN202
    return runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            axes,
            "--model",
            f"python:{models}:{model}",
            "--measures",
            "offense",
            "--resamples",
            "50",
            "-o",
            str(out),
            "-q",
        ],
    )


def test_an_axis_the_candidate_lacks_fails_the_gate_unless_the_axes_named_leave_it_out(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    """The baseline audits gender and a kin axis, the candidate gender alone: kin cannot be shown not worse."""
    corpus, models = toys
    kin = tmp_path / "kin.tsv"
    kin.write_text("# axis: kin\n# groups: male female\nfather\tmother\nbrother\tsister\nboy\tgirl\n", encoding="utf-8")
    done = _audit_alone(corpus, models, tmp_path / "base", "biased", f"gender,{kin}")
    assert done.exit_code == 0, done.output
    done = _audit_alone(corpus, models, tmp_path / "cand", "fair", "gender")
    assert done.exit_code == 0, done.output
    base, cand = str(tmp_path / "base"), str(tmp_path / "cand")
    done = runner.invoke(app, ["compare", base, cand, "--fail-if-worse", "--junit", str(tmp_path / "c.xml")])
    assert done.exit_code == 1, done.output
    said = " ".join(done.output.split())  # the console wraps its findings at 80 columns
    assert "kin: an axis only the baseline holds; the candidate cannot be shown not worse there" in said
    assert '<testcase classname="fairtalk.compare.gate" name="kin">' in (tmp_path / "c.xml").read_text(encoding="utf-8")
    named = runner.invoke(app, ["compare", base, cand, "--fail-if-worse", "--axis", "gender"])
    assert named.exit_code == 0, named.output  # the user left kin out: the gender gap improved
    typo = runner.invoke(app, ["compare", base, cand, "--fail-if-worse", "--axis", "gender,kni"])
    assert typo.exit_code == 2 and "the baseline holds no axis 'kni' (its axes: gender, kin)" in typo.output


def test_json_with_a_baseline_is_one_document_holding_the_audit_the_comparison_and_every_gate(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    """Review finding: `audit --baseline-model --fail-if-worse --json` printed two JSON documents, the gate in the second."""
    corpus, models = toys
    out = tmp_path / "j"
    done = _audit(corpus, models, out, "biased", "fair", "--fail-if-worse", "--fail-on-bias", "--json")
    assert done.exit_code == 1, done.output
    data = json.loads(done.stdout)  # one document: json.loads refuses "Extra data"
    assert list(data) == ["schema_version", "run", "results", "comparison", "gates"]
    assert data["results"]["gender"]["axis"] == "gender" and data["comparison"]["kind"] == "model comparison"
    assert [(g["gate"], g["passed"]) for g in data["gates"]] == [("fail-on-bias", False), ("fail-if-worse", False)]
    plain = _audit(corpus, models, tmp_path / "p", "fair", "biased", "--json")  # no gate: no "gates", still one document
    assert plain.exit_code == 0, plain.output
    assert list(json.loads(plain.stdout)) == ["schema_version", "run", "results", "comparison"]


def test_the_run_index_shows_fail_if_worse_and_links_the_baseline_and_the_comparison(
    toys: tuple[Path, Path], tmp_path: Path
) -> None:
    """Review finding: the command exited 1 on --fail-if-worse, and index.html had no gate and no link to either."""
    corpus, models = toys
    out = tmp_path / "worse"
    done = _audit(corpus, models, out, "biased", "fair", "--fail-if-worse")
    assert done.exit_code == 1, done.output
    page = (out / "index.html").read_text(encoding="utf-8")
    assert '<p class="gate" data-gate="fail-if-worse"><span class="badge bias">FAILED</span> Gate fail-if-worse: FAILED' in page
    assert 'href="baseline/index.html"' in page and 'href="comparison/report.html"' in page
    assert f"compared with the baseline model <code>python:{models}:fair " in page
    assert json.loads((out / "run.json").read_text())["model"].startswith(f"python:{models}:biased ")
    again = _audit(corpus, models, out, "biased", "fair")  # no gate asked: none shown, the links stay
    assert again.exit_code == 0, again.output
    page = (out / "index.html").read_text(encoding="utf-8")
    assert 'class="gate"' not in page and 'href="comparison/report.html"' in page


_MARKED = """
from pathlib import Path


def reply(context):
    Path(__file__).with_name("called").write_text("the main model answered", encoding="utf-8")
    return "that is lovely"
"""


@pytest.mark.parametrize(
    ("baseline", "said"),
    [
        ("builtin:nosuch", "unknown builtin model 'nosuch'"),
        ("python:/nonexist.py:f", "cannot import '/nonexist.py' for 'python:/nonexist.py:f': file not found"),
        ("python:no_such_module_here_x:f", "no module named 'no_such_module_here_x'"),
        ("builtin:echo?bogus=1", "unknown option 'bogus' for builtin:echo"),
    ],
)
def test_a_bad_baseline_spec_exits_2_before_the_main_model_answers(
    toys: tuple[Path, Path], tmp_path: Path, baseline: str, said: str
) -> None:
    corpus, _ = toys
    model = tmp_path / "marked.py"
    model.write_text(_MARKED, encoding="utf-8")
    out = tmp_path / "out"
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--measures", "offense", "--resamples", "50"]
    done = runner.invoke(app, [*args, "--model", f"python:{model}:reply", "--baseline-model", baseline, "--json", "-o", str(out)])
    assert done.exit_code == 2, done.output
    assert not (tmp_path / "called").exists(), done.output  # the main model was never called
    told = " ".join(done.output.split())
    assert "error: --baseline-model: " in told and said in told, told
    assert not (out / "run.json").exists()


def _title_lines(output: str) -> list[str]:
    """The lines of ``fairtalk compare: …``, the comparison's title, up to the blank line under it."""
    start = output.index("fairtalk compare:")
    return output[start:].split("\n\n", 1)[0].split("\n")


def test_paths_with_spaces_stay_whole_in_the_baseline_line_and_the_comparison_title(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: at 80 columns ``report in spaced runs/a quite long`` carried the rest of the path to the next line, and
    the title read ``fairtalk compare: spaced …/x `` / ``y against …``: paths broken at spaces, blanks left at line ends."""
    monkeypatch.chdir(tmp_path)
    folder = "spaced runs/a quite long folder name with some spaces in it/x y"
    done = _audit(*toys, Path(folder), "fair", "biased")
    assert done.exit_code == 0, done.output
    assert f"\n  {folder}/baseline/\n" in done.output, done.output
    title = _title_lines(done.output)
    assert title == ["fairtalk compare:", f"  {folder} against", f"  {folder}/baseline"], done.output
    again = runner.invoke(app, ["compare", f"{folder}/baseline", folder, "-o", "cmp 3"])
    assert again.exit_code == 0, again.output
    assert _title_lines(again.output) == title, again.output
    assert all(not line.endswith(" ") for line in again.output.split("\n")), again.output
