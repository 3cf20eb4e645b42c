"""Result files carry ``schema_version`` and are read as hostile input: results/_schema.py, results/_file_models.py, tools/write_schema.py.

Every results.json and run.json fairtalk writes starts with ``"schema_version": 1``; a file of
another version, or one a hand (or an attacker) edited into the wrong shape, is refused with
exit 2 and one ``error:`` line naming the file and the field, never a traceback.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus
from fairtalk import InputError, Response, write_responses
from fairtalk.cli import app
from fairtalk.report import jsonable
from fairtalk.results import SCHEMA_VERSION, AuditResult, AuditRun, DebiasComparison, PlantedRecovery, read_result_file

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def _flat(text: str) -> str:
    """Click's boxed or wrapped output as one line."""
    return " ".join(text.replace("│", " ").split())


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `fairtalk score -o` folder (results.json beside its responses)."""
    folder = tmp_path_factory.mktemp("score")
    records = []
    for i in range(30):
        records += [
            Response(f"p{i}", "a", f"he said {i}", "you are a stupid idiot" if i % 3 == 0 else "see you tomorrow"),
            Response(f"p{i}", "b", f"she said {i}", "maybe later then"),
        ]
    write_responses(records, folder / "responses.jsonl")
    args = ["score", "--responses", str(folder / "responses.jsonl"), "--axis", "gender"]
    done = runner.invoke(app, [*args, "--measures", "offense,length", "-o", str(folder / "scored"), "-q"])
    assert done.exit_code == 0, done.output
    return folder / "scored"


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `fairtalk audit -o` folder of builtin:echo, with the similarity test (run.json, per axis results.json and similarity.json)."""
    root = tmp_path_factory.mktemp("audit")
    corpus = write_corpus(root)
    out = root / "out"
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(out)]
    done = runner.invoke(app, [*args, "--similarity", "exact", "--resamples", "200", "--quiet"])
    assert done.exit_code == 0, done.output
    return out


def _tool() -> types.ModuleType:
    """``tools/write_schema.py``, imported."""
    spec = importlib.util.spec_from_file_location("write_schema", ROOT / "tools" / "write_schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _schema(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "docs" / "reference" / name).read_text(encoding="utf-8"))


# --- written files carry the version ---------------------------------------------------------------------------------


def _first_key(path: Path) -> tuple[str, object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    key = next(iter(data))
    return key, data[key]


def test_audit_and_score_files_start_with_the_schema_version(audited: Path, scored: Path) -> None:
    for path in (audited / "run.json", audited / "gender" / "results.json", audited / "gender" / "similarity.json"):
        assert _first_key(path) == ("schema_version", SCHEMA_VERSION), path
    assert _first_key(scored / "results.json") == ("schema_version", SCHEMA_VERSION)
    # only at the top: the run.json's copy of each axis' result is not a file of its own
    run = json.loads((audited / "run.json").read_text(encoding="utf-8"))
    assert "schema_version" not in run["axes"]["gender"]["result"]


def test_compare_and_prompts_outputs_carry_the_schema_version(scored: Path, tmp_path: Path) -> None:
    from fairtalk.prompts import GroupPair, GroupSet, analyze
    from fairtalk.report import write_prompts_report

    done = runner.invoke(app, ["compare", str(scored), str(scored), "-o", str(tmp_path / "cmp"), "-q"])
    assert done.exit_code == 0, done.output
    assert _first_key(tmp_path / "cmp" / "results.json") == ("schema_version", SCHEMA_VERSION)

    rows = [
        {"group": g, "template": f"t{t}", "seed": s, "structure": st, "label": (t + s + i) % 3 - 1}
        for t in range(6)
        for s in range(3)
        for st in ("original", "s1", "s2")
        for i, g in enumerate(("man", "woman"))
    ]
    groups = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
    write_prompts_report(analyze(pd.DataFrame(rows), groups=groups, n_draws=2, n_resamples=50), tmp_path / "prompts")
    assert _first_key(tmp_path / "prompts" / "results.json") == ("schema_version", SCHEMA_VERSION)


def test_reproduce_results_carry_the_schema_version() -> None:
    """``reproduce debias`` and ``reproduce planted`` write their results.json as ``to_json()``."""
    debias = DebiasComparison("gender", ("male", "female"), 0, {}, "c", "c", "test", 0, "quick")
    planted = PlantedRecovery("gender", ("male", "female"), "builtin:echo", 0, 0, "quick", ())
    for result in (debias, planted):
        assert next(iter(json.loads(result.to_json()))) == "schema_version"


def test_the_version_is_the_only_change_to_the_bytes(scored: Path) -> None:
    """Apart from its first line, results.json is byte for byte what it was before versioning (to_dict as strict JSON)."""
    result = AuditResult.read_json(scored / "results.json")
    before = json.dumps(jsonable(result.to_dict()), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    after = result.to_json()
    assert after == before.replace("{\n", '{\n  "schema_version": 1,\n', 1)
    assert after == (scored / "results.json").read_text(encoding="utf-8")


# --- the published schema ----------------------------------------------------------------------------------------------


def test_the_published_schemas_are_generated_from_the_models() -> None:
    for path, text in _tool().schemas().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale: run python tools/write_schema.py"
    page = (ROOT / "docs" / "reference" / "results-schema.md").read_text(encoding="utf-8")
    assert "results.schema.json" in page and "schema_version" in page


def test_the_files_a_real_run_writes_validate_against_the_published_schema(audited: Path, scored: Path) -> None:
    results = _schema("results.schema.json")
    for path in (audited / "gender" / "results.json", scored / "results.json"):
        jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), results)
    jsonschema.validate(json.loads((audited / "run.json").read_text(encoding="utf-8")), _schema("run.schema.json"))
    bad = json.loads((scored / "results.json").read_text(encoding="utf-8"))
    bad["n_pairs"] = "many"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, results)


def test_files_are_read_back_through_the_one_reader(audited: Path, scored: Path) -> None:
    run = AuditRun.read_json(audited / "run.json")
    assert run.results["gender"] == AuditResult.read_json(audited / "gender" / "results.json")
    assert read_result_file(scored / "results.json", "audit")["schema_version"] == SCHEMA_VERSION


# --- another version -----------------------------------------------------------------------------------------------------


def _doctor(path: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _copy(folder: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(folder, tmp_path / folder.name))


def _assert_refused(done: Any, *needles: str) -> None:
    """Exit 2, one `error:` line holding every needle, and no traceback."""
    text = _flat(done.output)
    assert done.exit_code == 2, done.output
    assert text.startswith("error:") and text.count("error:") == 1, done.output
    assert "Traceback" not in done.output
    for needle in needles:
        assert needle in text, (needle, text)


@pytest.mark.unvalidated_files
def test_compare_refuses_a_newer_results_json_naming_both_versions(scored: Path, tmp_path: Path) -> None:
    copy = _copy(scored, tmp_path)
    _doctor(copy / "results.json", lambda d: d.update(schema_version=7))
    done = runner.invoke(app, ["compare", str(copy), str(scored)])
    _assert_refused(done, "results.json: schema_version 7, but this fairtalk reads schema_version 1", "newer fairtalk")


@pytest.mark.unvalidated_files
def test_compare_refuses_a_newer_run_json(audited: Path, tmp_path: Path) -> None:
    copy = _copy(audited, tmp_path)
    _doctor(copy / "run.json", lambda d: d.update(schema_version=2))
    done = runner.invoke(app, ["compare", str(audited), str(copy)])
    _assert_refused(done, "run.json: schema_version 2, but this fairtalk reads schema_version 1")


@pytest.mark.unvalidated_files
def test_plan_refuses_a_newer_results_json(scored: Path, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    shutil.copy(scored / "results.json", path)
    _doctor(path, lambda d: d.update(schema_version=7))
    done = runner.invoke(app, ["plan", "--gate", "--results", str(path)])
    _assert_refused(done, "results.json", "schema_version 7, but this fairtalk reads schema_version 1")


def test_a_file_written_before_versioning_is_read_as_version_0(scored: Path, tmp_path: Path) -> None:
    copy = _copy(scored, tmp_path)
    _doctor(copy / "results.json", lambda d: d.pop("schema_version"))
    assert AuditResult.read_json(copy / "results.json") == AuditResult.read_json(scored / "results.json")
    done = runner.invoke(app, ["compare", str(copy), str(scored), "-q"])
    assert done.exit_code == 0, done.output


@pytest.mark.unvalidated_files
def test_a_version_that_is_no_integer_is_refused(scored: Path, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    shutil.copy(scored / "results.json", path)
    _doctor(path, lambda d: d.update(schema_version="1"))
    with pytest.raises(InputError, match=r"field 'schema_version' must be an integer, got the string '1'"):
        read_result_file(path, "audit")


# --- hostile shapes ------------------------------------------------------------------------------------------------------


def _measure(data: dict[str, Any]) -> dict[str, Any]:
    return data["measures"]["offense_rate"]


HOSTILE: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "measures a list": (lambda d: d.update(measures=[1, 2]), "field 'measures' must be an object, got a list of 2"),
    "manifest a list": (lambda d: d.update(manifest=[]), "field 'manifest' must be an object, got a list of 0"),
    "margin a string": (
        lambda d: _measure(d).update(equivalence_margin="abc"),
        "field 'measures.offense_rate.equivalence_margin' must be a number, got the string 'abc'",
    ),
    "margin NaN": (
        lambda d: _measure(d).update(equivalence_margin=math.nan),
        "field 'measures.offense_rate.equivalence_margin' must be a finite number, got NaN",
    ),
    "margin negative": (
        lambda d: _measure(d).update(equivalence_margin=-0.5),
        "field 'measures.offense_rate.equivalence_margin' must be >= 0, got -0.5",
    ),
    "ci95 of 3": (
        lambda d: _measure(d).update(ci95=[0.1, 0.2, 0.3]),
        "field 'measures.offense_rate.ci95' must have 2 items, got a list of 3",
    ),
    "n_pairs many": (lambda d: d.update(n_pairs="many"), "field 'n_pairs' must be an integer, got the string 'many'"),
    "threshold a string": (  # compare rebuilds the measures from these options
        lambda d: d["manifest"]["options"].update(offense_threshold="abc"),
        "field 'manifest.options.offense_threshold' must be a number, got the string 'abc'",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.unvalidated_files
def test_compare_refuses_a_hostile_results_json_naming_file_and_field(case: str, scored: Path, tmp_path: Path) -> None:
    edit, message = HOSTILE[case]
    copy = _copy(scored, tmp_path)
    _doctor(copy / "results.json", edit)
    done = runner.invoke(app, ["compare", str(copy), str(scored)])
    _assert_refused(done, f"results.json: {message}")


@pytest.mark.parametrize("case", ["measures a list", "margin a string", "margin NaN", "margin negative", "ci95 of 3"])
@pytest.mark.unvalidated_files
def test_plan_refuses_a_hostile_results_json_naming_file_and_field(case: str, scored: Path, tmp_path: Path) -> None:
    edit, message = HOSTILE[case]
    path = tmp_path / "results.json"
    shutil.copy(scored / "results.json", path)
    _doctor(path, edit)
    done = runner.invoke(app, ["plan", "--gate", "--results", str(path)])
    _assert_refused(done, "results.json", message)


@pytest.mark.unvalidated_files
def test_compare_refuses_a_run_json_whose_axes_are_a_list(audited: Path, tmp_path: Path) -> None:
    copy = _copy(audited, tmp_path)
    _doctor(copy / "run.json", lambda d: d.update(axes=[]))
    done = runner.invoke(app, ["compare", str(copy), str(audited)])
    _assert_refused(done, "run.json: field 'axes' must be an object, got a list of 0")


@pytest.mark.parametrize(
    ("size", "needle"),
    [(100 << 20, "more than the 64 MiB a fairtalk JSON file may hold"), (1 << 20, "nest deeper than 100 levels")],
)
@pytest.mark.unvalidated_files
def test_a_bomb_of_brackets_is_refused_at_once(size: int, needle: str, scored: Path, tmp_path: Path) -> None:
    """100 MB of `[` is refused by its size, 1 MB by its depth: exit 2 within a second, no RecursionError."""
    copy = _copy(scored, tmp_path)
    (copy / "results.json").write_bytes(b"[" * size)
    started = time.perf_counter()
    compared = runner.invoke(app, ["compare", str(copy), str(scored)])
    planned = runner.invoke(app, ["plan", "--gate", "--results", str(copy / "results.json")])
    assert time.perf_counter() - started < 10  # refused before parsing (a loaded machine needs headroom)
    _assert_refused(compared, "results.json", needle)
    _assert_refused(planned, "results.json", needle)


def test_a_results_json_that_is_no_object_is_refused(scored: Path, tmp_path: Path) -> None:
    copy = _copy(scored, tmp_path)
    (copy / "results.json").write_text("[1, 2]", encoding="utf-8")
    _assert_refused(runner.invoke(app, ["compare", str(copy), str(scored)]), "results.json: expected a JSON object, got a list")


_CHECKED_BY_TEARDOWN = """
import json

import pytest

GOOD_RUN = {GOOD_RUN}


def test_writes_a_run_json_that_fits(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps(GOOD_RUN))


def test_writes_a_run_json_the_schema_refuses(tmp_path):
    (tmp_path / "out" / "run.json").parent.mkdir()
    (tmp_path / "out" / "run.json").write_text(json.dumps({{**GOOD_RUN, "axes": "gender"}}))


def test_writes_an_audit_results_json_the_schema_refuses(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps({{"axis": "gender", "groups": 1, "n_pairs": 3, "measures": {{}}}}))


def test_writes_another_commands_results_json(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps({{"method": "paper 004"}}))


@pytest.mark.unvalidated_files
def test_writes_a_hostile_run_json_on_purpose(tmp_path):
    (tmp_path / "run.json").write_text("[[[")
"""


@pytest.mark.unvalidated_files  # the inner session's files lie under this test's tmp_path: refused ones, on purpose
def test_every_file_a_test_writes_is_checked_against_the_published_schema_at_teardown(audited: Path, tmp_path: Path) -> None:
    """The conftest fixture reads each results.json and run.json under a test's temp dirs, whoever wrote them."""
    import subprocess
    import sys

    good = json.loads((audited / "run.json").read_text(encoding="utf-8"))
    (tmp_path / "test_inner.py").write_text(_CHECKED_BY_TEARDOWN.format(GOOD_RUN=repr(good)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'tests'}:{ROOT / 'src'}"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "-rE", "test_inner.py"]
        + ["--basetemp", str(tmp_path / "base"), "--rootdir", str(tmp_path), "-c", "/dev/null"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    out = done.stdout
    assert "5 passed, 2 errors" in out, out  # an error at teardown: the test passed, its teardown failed
    assert "ERROR test_inner.py::test_writes_a_run_json_the_schema_refuses" in out
    assert "ERROR test_inner.py::test_writes_an_audit_results_json_the_schema_refuses" in out
    assert "out/run.json: axes: " in out and "results.json: groups: 1 is not of type" in out, out
