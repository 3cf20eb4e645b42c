"""An output folder is fairtalk's only where fairtalk wrote it (issue 24): a run never replaces the user's files.

A run may replace only the files a marked fairtalk run wrote (``.written-by-fairtalk.json`` lists
them); anything else in its way is refused with exit 2, naming the file, before any answer is
generated. The root, the home folder and a folder holding an input are refused as output folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_corpus
from fairtalk import OutputError
from fairtalk.cli import app
from fairtalk.files import WRITTEN, check_output_folder, written_files

runner = CliRunner()
FAST = ["--resamples", "200", "--quiet"]
NOT_OURS = "not written by fairtalk, and this run would replace it; move it, or write the output elsewhere"


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    return write_corpus(data)


def _audit(corpus: Path, out: Path | str, *extra: str, model: str = "builtin:echo", axis: str = "gender") -> list[str]:
    return ["audit", "--corpus", str(corpus), "--axis", axis, "--model", model, "-o", str(out), *FAST, *extra]


def _run_id(out: Path) -> str:
    return str(json.loads((out / "run.json").read_text())["run_id"])


def _refused(result: object, path: Path) -> None:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    stderr = result.stderr.replace("\n", "")  # type: ignore[attr-defined]
    assert stderr.startswith("error: ") and f"{path}: {NOT_OURS}" in stderr, stderr


# --- 1. the user's own files are never replaced -------------------------------------------------------------


def test_user_files_where_the_run_writes_are_refused_before_any_work(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "userdir"
    (out / "gender").mkdir(parents=True)
    (out / "gender" / "my_notes.txt").write_text("my notes")
    (out / "index.html").write_text("<p>my page</p>")
    result = runner.invoke(app, _audit(corpus, out))
    _refused(result, out / "gender" / "my_notes.txt")
    assert (out / "gender" / "my_notes.txt").read_text() == "my notes"
    assert (out / "index.html").read_text() == "<p>my page</p>"
    assert sorted(p.name for p in out.iterdir()) == ["gender", "index.html"]  # no store: refused before any answer
    (out / "gender" / "my_notes.txt").unlink()
    (out / "gender").rmdir()
    _refused(runner.invoke(app, _audit(corpus, out)), out / "index.html")
    assert (out / "index.html").read_text() == "<p>my page</p>"


def test_an_empty_folder_of_the_user_is_not_replaced_either(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "userdir"
    (out / "gender").mkdir(parents=True)
    _refused(runner.invoke(app, _audit(corpus, out)), out / "gender")
    assert (out / "gender").is_dir()


def test_user_files_beside_the_run_are_kept(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "userdir"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = runner.invoke(app, _audit(corpus, out))
    assert result.exit_code == 0, result.output
    assert (out / "notes.txt").read_text() == "mine" and (out / "gender" / "results.json").is_file()
    listed = written_files(out)
    assert {"index.html", "run.json", "gender", "gender/results.json", "gender/responses.jsonl"} <= listed
    assert "notes.txt" not in listed and not any(name.startswith("store.sqlite") for name in listed)


# --- 2. what fairtalk wrote, it replaces -------------------------------------------------------------------


def test_a_rerun_replaces_a_fairtalk_folder_cleanly_and_keeps_the_store(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    lexicon = tmp_path / "gender2.tsv"
    gender = (Path(fairtalk.__file__).parent / "lexicons" / "gender.tsv").read_text()
    lexicon.write_text("# axis: gender2\n" + "\n".join(x for x in gender.splitlines() if not x.startswith("# axis:")))
    first = runner.invoke(app, _audit(corpus, out, axis=f"gender,{lexicon}"))
    assert first.exit_code == 0, first.output
    first_id = _run_id(out)
    second = runner.invoke(app, _audit(corpus, out))
    assert second.exit_code == 0, second.output
    assert _run_id(out) != first_id and not (out / "gender2").exists()  # the earlier run's axis folder is gone
    assert (out / "store.sqlite").is_file()  # the store is fairtalk's, outside the swap: never removed
    third = runner.invoke(app, _audit(corpus, out))
    assert third.exit_code == 0 and "0 generated, 80 from the store" in third.output
    listed = written_files(out)
    assert "gender2" not in listed and "gender/report.html" in listed
    assert not [p.name for p in out.iterdir() if p.name.startswith(".fairtalk-")]


def test_a_run_into_the_folder_of_an_earlier_one_says_it_replaced_it_and_which_axes(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    lexicon = tmp_path / "gender2.tsv"
    gender = (Path(fairtalk.__file__).parent / "lexicons" / "gender.tsv").read_text()
    lexicon.write_text("# axis: gender2\n" + "\n".join(x for x in gender.splitlines() if not x.startswith("# axis:")))
    first = runner.invoke(app, _audit(corpus, out, axis=f"gender,{lexicon}"))
    assert first.exit_code == 0, first.output
    assert "replaced the earlier run" not in first.output  # a new folder: nothing replaced
    second = runner.invoke(app, _audit(corpus, out))  # under --quiet too: an earlier axis' report is gone
    assert second.exit_code == 0, second.output
    assert f"replaced the earlier run in {out} (axes: gender, gender2)" in " ".join(second.output.split())
    assert not (out / "gender2").exists()
    assert fairtalk.report.previous_axes(out) == ("gender",) and fairtalk.report.previous_axes(tmp_path / "none") == ()


def test_a_user_file_added_inside_a_fairtalk_folder_is_refused(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert runner.invoke(app, _audit(corpus, out)).exit_code == 0
    run_id = _run_id(out)
    mine = out / "gender" / "mine.txt"
    mine.write_text("my analysis")
    _refused(runner.invoke(app, _audit(corpus, out)), mine)
    assert mine.read_text() == "my analysis" and _run_id(out) == run_id  # nothing changed
    mine.unlink()
    assert runner.invoke(app, _audit(corpus, out)).exit_code == 0


def test_a_user_file_in_a_folder_the_run_would_displace_is_refused(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    lexicon = tmp_path / "gender2.tsv"
    gender = (Path(fairtalk.__file__).parent / "lexicons" / "gender.tsv").read_text()
    lexicon.write_text("# axis: gender2\n" + "\n".join(x for x in gender.splitlines() if not x.startswith("# axis:")))
    assert runner.invoke(app, _audit(corpus, out, axis=f"gender,{lexicon}")).exit_code == 0
    mine = out / "gender2" / "mine.txt"
    mine.write_text("keep")
    _refused(runner.invoke(app, _audit(corpus, out)), mine)
    assert mine.read_text() == "keep" and (out / "gender2" / "results.json").is_file()


def test_a_folder_of_an_earlier_version_is_replaced_only_where_its_run_json_says(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert runner.invoke(app, _audit(corpus, out)).exit_code == 0
    (out / WRITTEN).unlink()  # as fairtalk 0.1 left it: a marked run.json listing each axis' files, no marker
    assert {"index.html", "run.json", "gender", "gender/results.json"} <= written_files(out)
    mine = out / "gender" / "mine.txt"
    mine.write_text("keep")
    _refused(runner.invoke(app, _audit(corpus, out)), mine)
    mine.unlink()
    assert runner.invoke(app, _audit(corpus, out)).exit_code == 0
    assert (out / WRITTEN).is_file()
    (out / WRITTEN).write_text("{damaged")  # a marker that cannot be read vouches for nothing
    _refused(runner.invoke(app, _audit(corpus, out)), out / "gender" / "pairs.jsonl")


def test_score_never_replaces_a_users_results_json(tmp_path: Path, corpus: Path) -> None:
    run = tmp_path / "run"
    assert runner.invoke(app, _audit(corpus, run)).exit_code == 0
    out = tmp_path / "mine"
    out.mkdir()
    (out / "results.json").write_text("{}")
    command = [
        "score",
        "--responses",
        str(run / "gender" / "responses.jsonl"),
        "--axis",
        "gender",
        "-o",
        str(out),
        "--resamples",
        "100",
    ]
    _refused(runner.invoke(app, command), out / "results.json")
    assert (out / "results.json").read_text() == "{}"
    (out / "results.json").unlink()
    assert runner.invoke(app, command).exit_code == 0
    assert runner.invoke(app, command).exit_code == 0  # its own report it replaces


# --- 3. no run into the root, the home folder or a folder holding an input ----------------------------------


@pytest.fixture()
def no_pairs(tmp_path: Path) -> Path:
    """A corpus without a group word: on code without the checks, a run fails before writing anything."""
    path = tmp_path / "data" / "plain.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text("the weather is nice\nwhat time is it\n")
    return path


def test_the_root_and_the_home_folder_are_refused(no_pairs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    store = ["--store", str(tmp_path / "s.sqlite")]
    result = runner.invoke(app, _audit(no_pairs, "/", *store))
    assert result.exit_code == 2 and "error: /: the output folder is the root of the file system" in result.stderr
    result = runner.invoke(app, _audit(no_pairs, home, *store))
    assert result.exit_code == 2 and f"error: {home}: the output folder is your home folder" in result.stderr
    monkeypatch.chdir(home)
    result = runner.invoke(app, _audit(no_pairs, ".", *store))
    assert result.exit_code == 2 and f"error: {home}: the output folder is your home folder" in result.stderr
    assert list(home.iterdir()) == [] and not (tmp_path / "s.sqlite").exists()
    with pytest.raises(OutputError, match="holds your home folder"):
        check_output_folder(tmp_path)
    result = runner.invoke(app, ["score", "--responses", str(no_pairs), "--axis", "gender", "-o", "/"])
    assert result.exit_code == 2 and "the output folder is the root of the file system" in result.stderr


def test_the_library_refuses_the_root_too(no_pairs: Path) -> None:
    with pytest.raises(OutputError, match="^/: the output folder is the root of the file system"):
        fairtalk.audit(corpus=no_pairs, axes="gender", model="builtin:echo", out_dir="/")
    with pytest.raises(OutputError, match="the output folder is the root of the file system"):
        fairtalk.audit(fairtalk.AuditConfig(corpus=str(no_pairs), axes=("gender",), model="builtin:echo", out_dir="/"))
    with pytest.raises(OutputError, match="the output folder is the root of the file system"), fairtalk.files.staged("/"):
        pass


def test_an_output_folder_holding_an_input_is_refused(corpus: Path, tmp_path: Path) -> None:
    data = corpus.parent
    result = runner.invoke(app, _audit(corpus, data))
    assert result.exit_code == 2, result.output
    assert f"error: {data}: the output folder holds the corpus {corpus}" in result.stderr.replace("\n", "")
    assert sorted(p.name for p in data.iterdir()) == ["toy.txt"]
    out = tmp_path / "out"
    out.mkdir()
    config = out / "audit.toml"
    config.write_text('axes = ["gender"]\n')
    result = runner.invoke(app, [*_audit(corpus, out), "--config", str(config)])
    assert result.exit_code == 2 and "the output folder holds --config" in result.stderr.replace("\n", "")
    run = tmp_path / "run"
    assert runner.invoke(app, _audit(corpus, run)).exit_code == 0
    result = runner.invoke(
        app, ["score", "--responses", str(run / "gender" / "responses.jsonl"), "--axis", "gender", "-o", str(run)]
    )
    assert result.exit_code == 2 and "the output folder holds --responses" in result.stderr.replace("\n", "")
    with pytest.raises(OutputError, match="the output folder holds the corpus"):
        fairtalk.audit(corpus=corpus, axes="gender", model="builtin:echo", out_dir=tmp_path)
    with pytest.raises(OutputError, match="the output folder is --published"):
        check_output_folder(data, {"--published": data})
    check_output_folder(tmp_path / "elsewhere", {"--corpus": corpus, "a spec": "builtin:chitchat", "none": None})


def test_training_and_reproduce_refuse_such_folders_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    data = tmp_path / "labelled" / "regard.tsv"
    data.parent.mkdir()
    data.write_text("1\tXYZ was kind\n-1\tXYZ was rude\n")
    result = runner.invoke(app, ["regard", "train", "--data", str(data), "-o", str(data.parent)])
    assert result.exit_code == 2 and f"the output folder holds --data {data}" in result.stderr.replace("\n", "")
    result = runner.invoke(app, ["train", "seq2seq", "--corpus", str(tmp_path / "missing.jsonl"), "-o", str(home)])
    assert result.exit_code == 2 and "the output folder is your home folder" in result.stderr
    with pytest.raises(OutputError, match="the output folder is the root of the file system"):
        fairtalk.reproduce_debias(out_dir="/", quick=True, axis="no-such-axis")  # refused before the axis is read
    assert list(home.iterdir()) == [] and sorted(p.name for p in data.parent.iterdir()) == ["regard.tsv"]
