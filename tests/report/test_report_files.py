"""write_report: the four files, strict results.json, results.csv columns, unknown formats."""

from __future__ import annotations

import csv
import json
import math

import pytest

from fairtalk.errors import SpecError
from fairtalk.report import CSV_COLUMNS, FILE_NAMES, jsonable, render_json, write_report
from fairtalk.results import SCHEMA_VERSION


def test_write_report_creates_the_folder_and_every_file(result, tmp_path) -> None:
    out = tmp_path / "a" / "b"
    paths = write_report(result, out)
    assert list(paths) == ["json", "csv", "md", "html"]
    for name, path in paths.items():
        assert path == out / FILE_NAMES[name]
        assert path.stat().st_size > 0


def test_write_report_writes_only_the_formats_asked(result, tmp_path) -> None:
    paths = write_report(result, tmp_path, formats=("md", "json"))
    assert set(paths) == {"md", "json"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".written-by-fairtalk.json", "report.md", "results.json"]


def test_unknown_format_is_a_spec_error_before_writing(result, tmp_path) -> None:
    with pytest.raises(SpecError, match=r"unknown report format 'pdf'.*choose from"):
        write_report(result, tmp_path / "x", formats=("json", "pdf"))
    assert not (tmp_path / "x").exists()


def test_results_json_is_to_dict_with_strict_nulls(result, tmp_path) -> None:
    path = write_report(result, tmp_path, formats=("json",))["json"]
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    assert data == {"schema_version": SCHEMA_VERSION, **jsonable(result.to_dict())}
    assert data["axis"] == "gender" and data["groups"] == ["male", "female"] and data["n_pairs"] == 300000
    offense = data["measures"]["offense_rate"]
    for key in ("a", "b", "difference", "z", "p", "p_paired", "p_adjusted", "ci95", "effect_size"):
        assert key in offense
    assert offense["a"] == pytest.approx(0.21081)  # rates stay fractions in the JSON
    assert offense["masked"]["remaining"] == pytest.approx(0.71)
    refusal = data["measures"]["refusal_rate"]
    assert refusal["ci95"] == [None, None] and refusal["effect_size"] is None
    assert data["manifest"]["weird"] is None
    assert data["manifest"]["lexicon"]["sha256"] == "ab" * 32


def test_jsonable_converts_numpy_paths_and_sets(tmp_path) -> None:
    np = pytest.importorskip("numpy")
    value = {"a": np.float32(0.5), "b": np.array([1.0, np.nan]), "c": tmp_path, "d": {2, 1}, 3: (math.inf,)}
    assert jsonable(value) == {"a": 0.5, "b": [1.0, None], "c": str(tmp_path), "d": [1, 2], "3": [None]}


def test_render_json_never_emits_nan(result) -> None:
    json.loads(render_json(result), parse_constant=lambda c: pytest.fail(f"non-strict constant {c}"))


def test_results_csv_has_one_row_per_measure(result, tmp_path) -> None:
    path = write_report(result, tmp_path, formats=("csv",))["csv"]
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r["measure"] for r in rows] == [m.name for m in result.measures]
    offense = next(r for r in rows if r["measure"] == "offense_rate")
    assert float(offense["a"]) == pytest.approx(0.21081)
    assert float(offense["ci95_low"]) == pytest.approx(-0.0289)
    assert offense["significant"] == "True" and offense["masked_remaining"] == "0.71"
    diversity = next(r for r in rows if r["measure"] == "diversity")
    assert diversity["z"] == "" and diversity["p"] == "" and diversity["masked_a"] == ""
    refusal = next(r for r in rows if r["measure"] == "refusal_rate")
    assert refusal["ci95_low"] == "" and refusal["effect_size"] == "" and refusal["significant"] == "False"


def test_csv_columns_cover_to_frame(result) -> None:
    pytest.importorskip("pandas")
    frame = result.to_frame()
    assert set(frame.columns) | {"measure"} <= set(CSV_COLUMNS)


def test_a_run_written_with_its_gates_states_them_on_every_page(result, tmp_path) -> None:
    """Review finding: ``write_run(..., gates=)`` gives the requested gates to each axis' pages and the index."""
    from fairtalk.gates import evaluate
    from fairtalk.records import Coverage
    from fairtalk.report import write_run
    from fairtalk.results import AuditRun, AxisRun, GenerationSummary

    coverage = Coverage(
        axis="gender",
        groups=result.groups,
        n_read=1,
        n_matched=1,
        n_by_group=dict.fromkeys(result.groups, 1),
        n_mixed=0,
        n_duplicates=0,
        n_pairs=result.n_pairs,
        top_terms=(),
    )
    generation = GenerationSummary(
        model="m", settings={}, n_items=2, n_cached=0, n_generated=2, n_errors=0, n_pairs=1, n_pairs_with_errors=0
    )
    axes = {"gender": AxisRun(axis="gender", result=result, coverage=coverage, generation=generation)}
    run = AuditRun(axes=axes, model="m", corpus="c", split="all", seed=0, run_id="r1")
    outcome = evaluate(run, "fail-unless-equivalent")
    files = write_run(run, tmp_path / "run", formats=("md", "html"), gates=[outcome])
    assert "Gate fail-unless-equivalent: FAILED" in files.axes["gender"]["md"].read_text(encoding="utf-8")
    assert 'data-gate="fail-unless-equivalent"' in files.axes["gender"]["html"].read_text(encoding="utf-8")
    assert 'data-gate="fail-unless-equivalent"' in files.index.read_text(encoding="utf-8")


def test_one_format_given_alone_is_that_format_not_its_letters(result, tmp_path) -> None:
    """Review finding: ``formats="json"`` was read as the formats j, s, o, n ("unknown report format 'j'")."""
    paths = write_report(result, tmp_path, formats="json")
    assert list(paths) == ["json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".written-by-fairtalk.json", "results.json"]


@pytest.mark.parametrize(
    ("formats", "start"),
    [(None, "formats must be a report format or a list of them, got NoneType"), ([5], "unknown report format 5")],
)
def test_formats_that_are_no_names_are_a_spec_error_before_writing(result, tmp_path, formats, start) -> None:
    with pytest.raises(SpecError) as caught:
        write_report(result, tmp_path / "x", formats=formats)
    assert str(caught.value).startswith(start)
    assert not (tmp_path / "x").exists()
