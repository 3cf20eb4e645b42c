"""No command writes into another command's output folder (one fairtalk's marker marks).

`fairtalk pairs -o run/gender/pairs.jsonl` would replace the audit's pairs (a pairs file fairtalk
wrote, so its content passes) while the audit's results, run.json and report still describe the
old ones; `regard train -o run/gender` would leave a model and its own marker among the audit's
files. Both are refused before any work, naming whose folder it is; a marker found below a
folder a run replaces is named for what it is.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus
from fairtalk import OutputError
from fairtalk.cli import app
from fairtalk.files import WRITTEN, check_not_in_run

runner = CliRunner()
IN_AUDIT = "lies inside {folder}, an audit's run (run.json), the output folder of another fairtalk command"
REGARD_ROWS = ["-1\tXYZ was a thief", "-1\tXYZ was cruel", "0\tXYZ drove a car", "0\tXYZ lived here"]
REGARD_ROWS += ["1\tXYZ was kind", "1\tXYZ was brave", "2\tthe sky", "2\t?,?,?"]


@pytest.fixture()
def audited(tmp_path: Path) -> tuple[Path, Path]:
    """(an audit's output folder, its corpus): builtin:echo on the toy corpus, axis gender."""
    data = tmp_path / "data"
    data.mkdir()
    corpus = write_corpus(data)
    out = tmp_path / "run1"
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(out)]
    result = runner.invoke(app, [*args, "--resamples", "200", "--quiet"])
    assert result.exit_code == 0, result.output
    return out, corpus


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def _said(output: str) -> str:
    return " ".join(output.split())


def test_pairs_refuses_to_replace_the_pairs_of_another_runs_axis_folder(audited: tuple[Path, Path]) -> None:
    out, corpus = audited
    before = _digests(out)
    target = out / "gender" / "pairs.jsonl"
    result = runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "--limit", "5", "-o", str(target)])
    assert result.exit_code == 2
    said = _said(result.output)
    assert said.startswith(f"error: {target}: -o {IN_AUDIT.format(folder=out)}"), said
    assert "give a path outside it" in said and "Traceback" not in said
    assert _digests(out) == before  # the audit's pairs and pairs_check.json are what its results describe


def test_pairs_refuses_a_check_or_a_new_file_inside_another_run(audited: tuple[Path, Path], tmp_path: Path) -> None:
    out, corpus = audited
    before = _digests(out)
    args = ["pairs", "--corpus", str(corpus), "--axis", "gender"]
    check = runner.invoke(app, [*args, "-o", str(tmp_path / "mine.jsonl"), "--check", str(out / "check.json")])
    assert check.exit_code == 2 and f"--check {IN_AUDIT.format(folder=out)}" in _said(check.output)
    new = runner.invoke(app, [*args, "-o", str(out / "more" / "pairs.jsonl")])
    assert new.exit_code == 2 and f"-o {IN_AUDIT.format(folder=out)}" in _said(new.output)
    assert _digests(out) == before and not (tmp_path / "mine.jsonl").exists()


def test_pairs_still_replaces_its_own_pairs_file_outside_any_run(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path)
    target = tmp_path / "mine" / "pairs.jsonl"
    args = ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(target)]
    assert runner.invoke(app, [*args, "--limit", "5"]).exit_code == 0
    again = runner.invoke(app, [*args, "--limit", "7"])
    assert again.exit_code == 0, again.output
    assert len(target.read_text().splitlines()) == 7


def test_regard_train_refuses_another_runs_folder_and_any_folder_inside_it(audited: tuple[Path, Path], tmp_path: Path) -> None:
    out, _ = audited
    data = tmp_path / "train.tsv"
    data.write_text("\n".join(REGARD_ROWS * 2) + "\n")
    before = _digests(out)
    inside = runner.invoke(app, ["regard", "train", "--data", str(data), "-o", str(out / "gender"), "--cv", "2"])
    assert inside.exit_code == 2
    assert _said(inside.output).startswith(f"error: {out / 'gender'}: -o {IN_AUDIT.format(folder=out)}"), inside.output
    itself = runner.invoke(app, ["regard", "train", "--data", str(data), "-o", str(out), "--cv", "2"])
    assert itself.exit_code == 2
    assert "-o holds an audit's run (run.json); regard train writes its model into a folder of its own" in _said(itself.output)
    assert _digests(out) == before


def test_an_audit_names_another_commands_marker_in_its_folder_for_what_it_is(audited: tuple[Path, Path], tmp_path: Path) -> None:
    out, corpus = audited
    data = tmp_path / "train.tsv"
    data.write_text("\n".join(REGARD_ROWS * 2) + "\n")
    model = tmp_path / "model"
    trained = runner.invoke(app, ["regard", "train", "--data", str(data), "-o", str(model), "--cv", "2"])
    assert trained.exit_code == 0, trained.output
    for path in model.iterdir():  # as an older fairtalk let `regard train -o run1/gender` write
        shutil.copy(path, out / "gender" / path.name)
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(out), "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    said = _said(result.output)
    assert f"error: {out / 'gender' / WRITTEN}: the marker of another fairtalk command's outputs" in said
    assert "(it lists config.json, vocabulary.json, weights.npz)" in said and "not written by fairtalk" not in said


def test_check_not_in_run_names_a_folder_whose_marker_cannot_be_read(tmp_path: Path) -> None:
    marked = tmp_path / "outputs"
    (marked / "deep").mkdir(parents=True)
    (marked / WRITTEN).write_text("{damaged")
    with pytest.raises(OutputError, match=r"-o lies inside .*outputs, a folder of fairtalk's outputs \(\.written-by"):
        check_not_in_run(marked / "deep" / "pairs.jsonl", option="-o")
    check_not_in_run(marked, option="-o")  # the folder itself: its own earlier output is the caller's to check
    check_not_in_run(tmp_path / "elsewhere" / "pairs.jsonl", option="-o")


def test_respond_refuses_to_write_its_responses_into_another_runs_folder(audited: tuple[Path, Path]) -> None:
    out, _ = audited
    before = _digests(out)
    target = out / "gender" / "responses.jsonl"
    pairs = out / "gender" / "pairs.jsonl"
    result = runner.invoke(app, ["respond", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(target)])
    assert result.exit_code == 2
    said = _said(result.output)
    assert said.startswith(f"error: {target}: -o {IN_AUDIT.format(folder=out)}"), said
    assert _digests(out) == before  # the audit's responses are what its results describe
