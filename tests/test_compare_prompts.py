"""`fairtalk compare` on two `fairtalk prompts analyze` folders: two generators' regard gaps, per group pair."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from typer.testing import CliRunner

from fairtalk import Response, write_responses
from fairtalk.cli import app
from fairtalk.errors import SpecError
from fairtalk.gates import evaluate
from fairtalk.pipeline import compare_prompt_analyses, is_prompt_analysis
from fairtalk.prompts import GroupPair, GroupSet, analyze
from fairtalk.report import write_prompts_report
from fairtalk.results import Change, ModelComparison, Verdict

runner = CliRunner()

GENDER = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
TWO_PAIRS = GroupSet(("man", "woman", "person"), (GroupPair("gender", "man", "woman"), GroupPair("other", "man", "person")))


def _analysis(folder: Path, *, gap: float, seed: int, groups: GroupSet = GENDER) -> Path:
    """A `prompts analyze -o` folder of one generator: latent regard = template effect ± gap/2 + noise, labelled -1/0/1."""
    rng = np.random.default_rng(seed)
    template_effect = rng.normal(0, 0.5, 10)
    shifts = {g: (gap / 2 if i == 0 else -gap / 2) for i, g in enumerate(groups.groups)}
    rows = []
    for t in range(10):
        for s in range(5):
            for structure in ["original"] + [f"s{i}" for i in range(8)]:
                for group, shift in shifts.items():
                    for _ in range(2):
                        latent = template_effect[t] + shift + rng.normal(0, 1)
                        label = -1 if latent < -0.5 else (1 if latent > 0.5 else 0)
                        rows.append({"group": group, "template": f"t{t}", "seed": s, "structure": structure, "label": label})
    result = analyze(pd.DataFrame(rows), groups=groups, n_draws=3, n_resamples=200)
    write_prompts_report(result, folder)
    return folder


@pytest.fixture(scope="module")
def analyses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A generator with a planted regard gap, one without, and one with the gap on two group pairs."""
    root = tmp_path_factory.mktemp("compare_prompts")
    return {
        "gap": _analysis(root / "gap", gap=0.6, seed=1),
        "fair": _analysis(root / "fair", gap=0.0, seed=2),
        "two": _analysis(root / "two", gap=0.6, seed=3, groups=TWO_PAIRS),
    }


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `fairtalk score -o` folder (paper 001), to mix with an analysis."""
    folder = tmp_path_factory.mktemp("score")
    records = []
    for i in range(20):
        records += [
            Response(f"p{i}", "a", f"he said {i}", "see you tomorrow"),
            Response(f"p{i}", "b", f"she said {i}", "maybe later then"),
        ]
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
            "offense",
            "-o",
            str(folder / "scored"),
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    return folder / "scored"


def _compare(*args: str):  # noqa: ANN202
    return runner.invoke(app, ["compare", *args])


def test_removing_a_planted_regard_gap_is_improved(analyses: dict[str, Path]) -> None:
    result = compare_prompt_analyses(analyses["gap"], analyses["fair"])
    assert result.design == "independent" and [a.axis for a in result.axes] == ["gender"]
    row = result.change("gender", "regard")
    assert row.verdict is Change.IMPROVED and result.verdicts[("gender", "regard")] is Verdict.DIFFERENT
    assert row.baseline_gap > 0.2 and abs(row.candidate_gap) < 0.1
    low, high = row.change_ci
    assert low is not None and high is not None and low < high < 0
    assert row.non_inferior is True and row.margin == pytest.approx(0.02) and row.change_test == "wald_independent"
    # the gaps are independent estimates: se of the change = sqrt(se_b^2 + se_c^2), from each analysis' Gap
    gaps = [json.loads((analyses[k] / "results.json").read_text(encoding="utf-8"))["gaps"]["gender"] for k in ("gap", "fair")]
    se = math.hypot(gaps[0]["se"], gaps[1]["se"])
    assert row.baseline_gap == gaps[0]["all"] and row.candidate_ci == tuple(gaps[1]["ci95"])
    assert high - low == pytest.approx(2 * norm.ppf(0.975) * se)
    assert row.p_change == pytest.approx(2 * norm.sf(abs(row.change) / se))


def test_adding_the_gap_regresses_and_fails_the_gate(analyses: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _compare(str(analyses["fair"]), str(analyses["gap"]), "--fail-if-worse", "-o", str(out))
    assert done.exit_code == 1, done.output
    assert "regressed" in done.output and "not shown non-inferior" in done.output
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    row = data["axes"]["gender"]["keys"]["regard"]
    assert data["design"] == "independent" and row["verdict"] == "regressed" and row["change_ci"][0] > 0
    assert row["non_inferior"] is False
    for name in ("results.csv", "report.md", "report.html"):
        assert (out / name).is_file()
    for name in ("report.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "within-prompt pairing" in text and "pairs both runs answered" not in text, name


def test_one_analysis_against_itself_is_unchanged_but_fails_the_gate_as_one_run(
    analyses: dict[str, Path], tmp_path: Path
) -> None:
    done = _compare(str(analyses["gap"]), str(analyses["gap"]), "--fail-if-worse", "--json")
    assert done.exit_code == 1, done.output
    data = json.loads(done.stdout)
    row = data["axes"]["gender"]["keys"]["regard"]
    assert row["verdict"] == "unchanged" and row["identical"] and row["non_inferior"] and row["change_ci"] == [0.0, 0.0]
    assert data["same_run"] == f"one run (the same folder {analyses['gap']})"
    assert "the baseline and the candidate are one run (the same folder" in done.stderr
    assert "gender: identical analyses" in _compare(str(analyses["gap"]), str(analyses["gap"])).output
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "results.json").write_bytes((analyses["gap"] / "results.json").read_bytes())
    done = _compare(str(analyses["gap"]), str(copy), "--fail-if-worse")
    assert done.exit_code == 1 and "one run (a byte-identical copy of its results file)" in " ".join(done.output.split())


def test_a_pair_the_candidate_has_no_gap_for_fails_the_gate_and_an_unknown_pair_is_refused(
    analyses: dict[str, Path], tmp_path: Path
) -> None:
    """The candidate's analysis holds the pair but no gap there (a group without labels): it cannot be shown not worse."""
    data = json.loads((analyses["two"] / "results.json").read_text(encoding="utf-8"))
    data["gaps"]["other"]["all"] = None
    (tmp_path / "results.json").write_text(json.dumps(data), encoding="utf-8")
    result = compare_prompt_analyses(analyses["two"], tmp_path)
    assert result.axes_only_baseline == ("other",) and [r.axis for r in result.changes] == ["gender"]
    outcome = evaluate(result, "fail-if-worse")
    assert not outcome.passed and outcome.run_failures[0].reason == (
        "other: a group pair only the baseline has a gap for; the candidate cannot be shown not worse there"
    )
    with pytest.raises(SpecError, match="the baseline holds no group pair 'gendr'"):
        compare_prompt_analyses(analyses["two"], tmp_path, pairs=["gender", "gendr"])


def test_improvement_passes_the_gate(analyses: dict[str, Path]) -> None:
    assert _compare(str(analyses["gap"]), str(analyses["fair"]), "--fail-if-worse").exit_code == 0


@pytest.mark.parametrize("order", [("audit", "analysis"), ("analysis", "audit")])
def test_an_audit_and_an_analysis_do_not_mix(analyses: dict[str, Path], audit: Path, order: tuple[str, str]) -> None:
    folders = {"audit": str(audit), "analysis": str(analyses["gap"])}
    done = _compare(folders[order[0]], folders[order[1]])
    assert done.exit_code == 2 and "not one of each" in done.output
    assert is_prompt_analysis(analyses["gap"]) and not is_prompt_analysis(audit)


@pytest.mark.parametrize("order", [("audit", "analysis"), ("analysis", "audit")])
def test_compare_runs_given_an_analysis_names_the_mix_up(analyses: dict[str, Path], audit: Path, order: tuple[str, str]) -> None:
    """Review finding: ``compare_runs(audit_dir, prompts_dir)`` said "field 'axis' is missing" (the CLI names the mix-up)."""
    from fairtalk import InputError, compare_runs

    folders = {"audit": audit, "analysis": analyses["gap"]}
    with pytest.raises(InputError, match="a `fairtalk prompts analyze` output, not an audit.*not one of each") as caught:
        compare_runs(folders[order[0]], folders[order[1]])
    assert caught.value.path == str(analyses["gap"])


def test_pairs_only_one_holds_are_named_and_left_out(analyses: dict[str, Path]) -> None:
    result = compare_prompt_analyses(analyses["two"], analyses["fair"], margins={"regard:gender": 0.5})
    assert [r.axis for r in result.changes] == ["gender"] and result.axes_only_baseline == ("other",)
    assert result.change("gender", "regard").margin == 0.5
    done = _compare(str(analyses["two"]), str(analyses["fair"]))
    assert "group pairs only the baseline holds, left out: other" in done.output


def test_margins_apply_by_key_and_unknown_keys_are_usage_errors(analyses: dict[str, Path]) -> None:
    result = compare_prompt_analyses(analyses["fair"], analyses["gap"], margins={"regard": 1.0})
    assert result.change("gender", "regard").non_inferior is True  # a margin wider than the planted gap
    done = _compare(str(analyses["fair"]), str(analyses["gap"]), "--margin", "offense_rate=0.1")
    assert done.exit_code == 2 and "unknown margin key" in done.output


def test_result_round_trips_and_paired_results_json_has_no_design(analyses: dict[str, Path], tmp_path: Path) -> None:
    result = compare_prompt_analyses(analyses["gap"], analyses["fair"])
    assert ModelComparison.from_dict(json.loads(result.to_json())) == result
    assert ModelComparison.read_json(result.write(tmp_path / "r.json")) == result
    assert "design" not in ModelComparison("old", "new", (), ()).to_dict()
    assert result.to_frame().loc[("gender", "regard"), "change_test"] == "wald_independent"


def ci(bounds: tuple[float | None, float | None]) -> str:
    low, high = bounds
    assert low is not None and high is not None
    return f"[{low:+.4f}, {high:+.4f}]"


def _sign_flipped(analyses: dict[str, Path]) -> ModelComparison:
    """The review's case: the change shown (p 0.0203) but not the size change (p_magnitude 0.165, adjusted 0.495)."""
    result = compare_prompt_analyses(analyses["gap"], analyses["fair"])
    row = dataclasses.replace(result.changes[0], p_change=0.0203, p_total=0.165, p_magnitude=0.165, p_adjusted=0.495)
    return dataclasses.replace(result, changes=(row,))


def test_each_p_stands_beside_what_it_tests_and_the_adjusted_one_beside_its_raw_p(
    analyses: dict[str, Path], tmp_path: Path
) -> None:
    """Review finding: report.md showed p_change (0.020) as "p" beside the adjusted p_magnitude (0.495) as "p (adj.)",
    and the console printed the change's interval with "p adj." of another test."""
    from rich.console import Console

    from fairtalk.report import model_comparison_table, write_model_comparison

    result = _sign_flipped(analyses)
    row = result.changes[0]
    paths = write_model_comparison(result, tmp_path / "out")
    md = paths["md"].read_text(encoding="utf-8")
    assert "| p (no change) | Sum CI | p (size changed) | p (size changed, adj.) |" in md
    assert f"| {ci(row.change_ci)} | 0.020 | {ci(row.total_ci)} | 0.165 | 0.495 |" in md
    html = paths["html"].read_text(encoding="utf-8")
    assert "<th>p (no change)</th>" in html and '<td class="num">0.165</td><td class="num">0.495</td>' in html
    console = Console(width=80, record=True)
    console.print(model_comparison_table(result, width=80))
    text = console.export_text()
    assert f"change {row.change:+.4f} (95% CI {ci(row.change_ci)}), p 0.020" in text
    assert f"sum of the gaps 95% CI {ci(row.total_ci)}" in text and "size of the gap changed: p 0.165, adj. 0.495" in text
    assert "p adj. 0.495" not in text


@pytest.mark.parametrize("flag", ["--no-clusters", "--clusters"])
def test_a_clusters_option_is_refused_where_it_does_nothing(analyses: dict[str, Path], flag: str) -> None:
    """Review finding: `compare an_b an_c --no-clusters` was accepted and ignored (the gaps are independent estimates)."""
    done = _compare(str(analyses["gap"]), str(analyses["fair"]), flag)
    assert done.exit_code == 2, done.output
    assert f"error: {flag} applies only to two audits" in " ".join(done.output.split())
    assert _compare(str(analyses["gap"]), str(analyses["fair"])).exit_code == 0


def _with_import(source: Path, folder: Path, found: dict[str, object], structures: dict[str, str] | None = None) -> Path:
    """A copy of an analysis folder whose results.json records ``found`` as its ``import`` (structures renamed)."""
    data = json.loads((source / "results.json").read_text(encoding="utf-8"))
    data["import"] = found
    for old, new in (structures or {}).items():
        data["structure_counts"][new] = data["structure_counts"].pop(old)
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_analyses_labelled_or_prompted_differently_are_refused(analyses: dict[str, Path], tmp_path: Path) -> None:
    """Review finding: one file labelled by two scorers, or one's own prompts against the published ones, was compared."""
    generated = {"n_records": 900, "n_failed": 0, "regard": "builtin"}
    base = _with_import(analyses["fair"], tmp_path / "bert", generated)
    tfidf = _with_import(analyses["gap"], tmp_path / "tfidf", {**generated, "regard": "builtin:tfidf"})
    done = _compare(str(base), str(tfidf), "--fail-if-worse")
    assert done.exit_code == 2, done.output
    said = " ".join(done.output.split())
    assert "error:" in said and "regard labels from builtin and from builtin:tfidf" in said and "regressed" not in said
    published = {"n_rows": 9, "n_kept": 9, "prompts_source": "AESOP", "regard": "builtin"}
    aesop = _with_import(analyses["gap"], tmp_path / "aesop", published, structures={"s0": "(ROOT (S))"})
    with pytest.raises(SpecError, match=r"prompts completed by a generator .* and the published outputs' prompts;"):
        compare_prompt_analyses(base, aesop)
    with pytest.raises(SpecError, match=r"1 structure only the baseline has: s0; 1 structure only the candidate has"):
        compare_prompt_analyses(base, _with_import(analyses["gap"], tmp_path / "renamed", generated, {"s0": "x"}))
    same = _with_import(analyses["gap"], tmp_path / "same", generated)
    assert compare_prompt_analyses(base, same).regressed() == (("gender", "regard"),)
    unsaid = compare_prompt_analyses(base, analyses["gap"])  # the fixture's analyses record no labeller
    assert any("does not say which regard scorer labelled it" in w for w in unsaid.warnings)


@pytest.mark.parametrize("name", ["balanced_only", "include_other"])
def test_analyses_of_different_rows_are_refused(analyses: dict[str, Path], tmp_path: Path, name: str) -> None:
    """An analysis of the balanced cells only (or with the "other" labels) against one of every row compared gaps of
    different rows as if one had changed."""
    data = json.loads((analyses["gap"] / "results.json").read_text(encoding="utf-8"))
    data["config"][name] = True
    if name == "balanced_only":
        data["data"]["n_rows_unbalanced"], data["data"]["n_cells_unbalanced"] = 8, 2  # it left some rows out
    folder = tmp_path / name
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")
    done = _compare(str(analyses["fair"]), str(folder), "--fail-if-worse")
    assert done.exit_code == 2, done.output
    said = " ".join(done.output.split())
    flag = "--" + name.replace("_", "-")
    assert "error:" in said and f"analysed in the candidate alone ({name}: give both the same {flag})" in said
    assert "regressed" not in said
    with pytest.raises(SpecError, match=rf"analysed in the baseline alone \({name}"):
        compare_prompt_analyses(folder, analyses["fair"])


def test_balanced_cells_only_that_left_nothing_out_are_the_same_rows(analyses: dict[str, Path], tmp_path: Path) -> None:
    """Review finding: --balanced-only on balanced prompts analyses every row, yet compare refused it against an analysis
    without the option, naming --regard."""
    data = json.loads((analyses["gap"] / "results.json").read_text(encoding="utf-8"))
    data["config"]["balanced_only"] = True  # n_rows_unbalanced 0: no cell lacked a group
    folder = tmp_path / "balanced"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")
    assert compare_prompt_analyses(analyses["fair"], folder).regressed() == (("gender", "regard"),)
