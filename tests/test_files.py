"""Tests for files.py: atomic files, staged folders swapped in whole, and outputs that never replace an input."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from fairtalk import OutputError
from fairtalk.files import (
    WRITTEN,
    atomic_writer,
    check_not_input,
    check_outside,
    check_owned,
    commit_staged,
    same_file,
    staged,
    staged_folder,
    write_text_atomic,
    written_files,
)


def _disk_full(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.unvalidated_files  # writes a results.json that is deliberately not whole
def test_atomic_write_replaces_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "sub" / "results.json"
    write_text_atomic(target, "old\n")
    assert target.read_text() == "old\n" and oct(target.stat().st_mode & 0o777) == "0o644"
    monkeypatch.setattr(os, "fsync", _disk_full)
    with pytest.raises(OutputError, match=r"results.json: cannot write \(No space left on device\)"):
        write_text_atomic(target, "new\n")
    assert target.read_text() == "old\n"  # untouched
    assert sorted(p.name for p in target.parent.iterdir()) == ["results.json"]  # no temporary file left


def test_an_exception_while_writing_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write("half")
        raise RuntimeError("killed midway")
    assert target.read_text() == "old" and len(list(tmp_path.iterdir())) == 1
    with pytest.raises(OutputError, match="it is a folder"):
        write_text_atomic(tmp_path, "x")


def test_same_file_sees_links_and_dot_segments(tmp_path: Path) -> None:
    source = tmp_path / "corpus.txt"
    source.write_text("x")
    link = tmp_path / "link.txt"
    link.symlink_to(source)
    assert same_file(source, link) and same_file(tmp_path / "." / "corpus.txt", source)
    assert same_file(tmp_path / "new.txt", tmp_path / "sub" / ".." / "new.txt")  # neither exists yet
    assert not same_file(source, tmp_path / "other.txt")
    with pytest.raises(OutputError, match=r"-o .*link.txt is also the input --corpus; it would be overwritten"):
        check_not_input(link, {"--corpus": source, "--lexicon": None})


def test_check_outside_refuses_inputs_inside_replaced_entries(tmp_path: Path) -> None:
    (tmp_path / "gender").mkdir()
    kept = tmp_path / "gender" / "responses.jsonl"
    kept.write_text("x")
    with pytest.raises(OutputError, match="the model file .*responses.jsonl lies inside .*gender, which this run replaces"):
        check_outside(tmp_path, ["gender", "index.html"], {"the model file": kept})
    check_outside(tmp_path, ["race"], {"the model file": kept})  # another entry: fine


def test_staged_commit_swaps_folders_and_files_and_displaces_old_ones(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with staged(out) as staging:  # an earlier run: what fairtalk wrote, a later run may replace
        (staging / "gender").mkdir()
        (staging / "gender" / "old.txt").write_text("old run")
        (staging / "race").mkdir()
        (staging / "index.html").write_text("old index")
    assert written_files(out) == {"gender", "gender/old.txt", "race", "index.html"}
    (out / "notes.txt").write_text("the user's own file")
    with staged(out, displace=("race", "index.html"), last=("index.html",)) as staging:
        (staging / "gender").mkdir()
        (staging / "gender" / "new.txt").write_text("new run")
        (staging / "index.html").write_text("new index")
    assert sorted(p.name for p in out.iterdir()) == [WRITTEN, "gender", "index.html", "notes.txt"]
    assert [p.name for p in (out / "gender").iterdir()] == ["new.txt"]
    assert (out / "index.html").read_text() == "new index" and (out / "notes.txt").read_text() == "the user's own file"
    assert written_files(out) == {"gender", "gender/new.txt", "index.html"}  # race is gone, notes.txt never listed


def test_a_swap_never_replaces_what_fairtalk_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "report"
    (out / "gender").mkdir(parents=True)
    (out / "gender" / "b.txt").write_text("mine")
    (out / "index.html").write_text("my page")
    with (
        pytest.raises(OutputError, match=r"report/gender/b.txt: not written by fairtalk, and this run would replace it"),
        staged(out) as staging,
    ):
        (staging / "gender").mkdir()
        (staging / "index.html").write_text("new index")
    assert sorted(p.name for p in out.iterdir()) == ["gender", "index.html"]  # no staging, trash or marker left
    assert (out / "gender" / "b.txt").read_text() == "mine" and (out / "index.html").read_text() == "my page"
    (out / "race" / "empty").mkdir(parents=True)
    with pytest.raises(OutputError, match=r"report/race: not written by fairtalk"):
        check_owned(out, ["race", "pairs.jsonl"])  # no file below: the first folder is named
    with pytest.raises(OutputError, match=r"report/index.html: not written by fairtalk"), staged(out, displace=("index.html",)):
        pass
    check_owned(out, ["results.json", WRITTEN])  # absent entries and the marker itself are fine


def test_the_marker_keeps_what_an_earlier_swap_wrote_and_is_still_there(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with staged(out) as staging:
        (staging / "results.json").write_text("{}")
        (staging / "old.csv").write_text("x")
    (out / "old.csv").unlink()  # gone: a later file of that name is not vouched for
    with staged(out) as staging:
        (staging / "table").mkdir()
        (staging / "table" / "a.csv").write_text("a")
    assert written_files(out) == {"results.json", "table", "table/a.csv"}
    (out / "old.csv").write_text("the user's")
    with pytest.raises(OutputError, match="old.csv: not written by fairtalk"), staged(out) as staging:
        (staging / "old.csv").write_text("y")
    assert (out / "old.csv").read_text() == "the user's"


@pytest.mark.unvalidated_files  # writes a results.json that is deliberately not whole
def test_a_failed_stage_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "results.json").write_text("old")
    with pytest.raises(OutputError), staged(out) as staging:
        (staging / "results.json").write_text("half")
        raise OutputError("disk full")
    assert [p.name for p in out.iterdir()] == ["results.json"] and (out / "results.json").read_text() == "old"


def test_leftovers_of_a_crashed_process_are_removed(tmp_path: Path) -> None:
    dead = tmp_path / ".fairtalk-staging-999999999-abc"
    dead.mkdir()
    (tmp_path / ".fairtalk-old-999999999-abc").mkdir()
    alive = tmp_path / f".fairtalk-staging-{os.getpid()}-live"
    alive.mkdir()
    staging = staged_folder(tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert dead.name not in names and ".fairtalk-old-999999999-abc" not in names
    assert alive.name in names and staging.name in names  # a live process' folder is left alone
    commit_staged(staging, tmp_path)
    assert not staging.exists()


def test_a_file_where_the_folder_should_be_is_a_clear_error(tmp_path: Path) -> None:
    report = tmp_path / "report"
    report.write_text("not a folder")
    with pytest.raises(OutputError, match="report: is a file, not a folder"), staged(report):
        pass
    assert report.read_text() == "not a folder"
