"""A run store deleted or replaced mid-run, and a damaged one, are said, never used silently.

Review findings: ``rm -rf OUT`` during an audit went on writing into the deleted file and ended
with exit 0 and a report but no store; Ctrl-C after it said "no answer had been generated yet"
though answers were; a store with corrupt pages was opened and written into.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.errors import StoreError
from fairtalk.models import DecodingSettings
from fairtalk.store import RunStore, context_hash, store_written

runner = CliRunner()


def _rows(n: int, start: int = 0) -> list[tuple[bytes, int, str, str | None, str | None]]:
    return [(context_hash(f"c{i}"), 0, f"c{i}", f"r{i}", None) for i in range(start, start + n)]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_write_into_a_deleted_or_replaced_store_is_an_error_naming_the_answers_lost(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        run = store.run_id("m", DecodingSettings())
        store.write(run, _rows(3))
        assert store_written(path) == (3, False)
        path.unlink()
        with pytest.raises(StoreError, match=r"deleted or replaced during the run: the 3 answer\(s\) this run wrote"):
            store.write(run, _rows(2, start=3))
        assert store_written(path) == (3, True)
    with RunStore(path) as store:  # a new file at the path: a new store, and another file than the one written
        store.write(store.run_id("m", DecodingSettings()), _rows(1))
    assert store_written(path) == (1, False)
    other = tmp_path / "other.sqlite"
    with RunStore(path) as store:
        run = store.run_id("m", DecodingSettings())
        with RunStore(other):
            pass
        other.replace(path)  # replaced by another file
        with pytest.raises(StoreError, match="deleted or replaced during the run, before this run wrote an answer"):
            store.write(run, _rows(1, start=9))


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    from audit_toys import write_corpus

    return write_corpus(tmp_path)


def _audit(corpus: Path, model: str, out: Path) -> list[str]:
    return ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", model, "--resamples", "200", "-q", "-o", str(out)]


def test_an_audit_whose_store_is_deleted_stops_with_an_error_and_no_report(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    bot = tmp_path / "deleting_bot.py"
    bot.write_text(f"import shutil\n\ndef reply(text):\n    shutil.rmtree({str(out)!r}, ignore_errors=True)\n    return 'nice'\n")
    result = runner.invoke(app, _audit(corpus, f"python:{bot}:reply", out))
    assert result.exit_code == 2, result.output
    said = _flat(result.stderr)
    assert f"error: {out / 'store.sqlite'}: the run store was deleted or replaced during the run" in said, said
    assert not (out / "index.html").exists() and not (out / "run.json").exists()


def test_ctrl_c_after_the_store_was_deleted_says_its_answers_are_lost(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"

    def deleted_then_interrupted(*args: object, **kwargs: object) -> None:  # rm -rf OUT, then Ctrl-C
        shutil.rmtree(out)
        raise KeyboardInterrupt

    monkeypatch.setattr("fairtalk.run._audit.write_run", deleted_then_interrupted)
    result = runner.invoke(app, _audit(corpus, "builtin:echo", out))
    assert result.exit_code == 130, result.output
    said = _flat(result.stderr)
    assert "no answer had been generated yet" not in said, said
    assert f"the run store {out / 'store.sqlite'} was deleted or replaced during the run: the 80 answer(s)" in said, said


def test_a_damaged_store_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        run = store.run_id("m", DecodingSettings())
        for start in range(0, 4000, 500):
            store.write(run, [(h, s, c * 20, r, e) for h, s, c, r, e in _rows(500, start)])
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    size = path.stat().st_size
    assert size > 40000
    with path.open("r+b") as handle:  # random bytes into the data pages, as dd did
        handle.seek(32768)
        handle.write(bytes(range(256)) * 16)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="the run store is damaged .*move it away"):
        RunStore(path)
    assert path.read_bytes() == before
    result = runner.invoke(
        app,
        [
            "audit",
            "--axis",
            "gender",
            "--model",
            "builtin:echo",
            "--pairs",
            "10",
            "-o",
            str(tmp_path / "o"),
            "--store",
            str(path),
        ],
    )
    assert result.exit_code == 2 and "the run store is damaged" in _flat(result.stderr), result.output
    assert path.read_bytes() == before


def test_a_truncated_store_is_said_damaged(tmp_path: Path) -> None:
    """Review: ``truncate -s 4096 store.sqlite`` gave a bare "cannot open run store: database disk image is malformed"."""
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        run = store.run_id("m", DecodingSettings())
        for start in range(0, 2000, 500):
            store.write(run, [(h, s, c * 20, r, e) for h, s, c, r, e in _rows(500, start)])
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    with path.open("r+b") as handle:
        handle.truncate(4096)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"s.sqlite: the run store is damaged \(.*\).*move it away"):
        RunStore(path)
    assert path.read_bytes() == before


def _foreign(path: Path, script: str) -> dict[str, bytes]:
    """Another program's SQLite database at ``path``, made by ``script``; the files of its folder, as they are."""
    with sqlite3.connect(path) as db:
        db.executescript(script)
    db.close()
    return {p.name: p.read_bytes() for p in path.parent.iterdir()}


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (  # the reviewer's: fairtalk's table names among others, and rows
            "CREATE TABLE responses (id INTEGER PRIMARY KEY, prompt TEXT, answer TEXT); CREATE TABLE meta (key TEXT, value TEXT);"
            " CREATE TABLE users (name); INSERT INTO responses (prompt, answer) VALUES ('hi', 'hello');",
            "other tables: meta, responses, users",
        ),
        ("CREATE TABLE meta (key TEXT, value TEXT); CREATE TABLE responses (x);", "responses table has other columns: x"),
        (
            "CREATE TABLE meta (key TEXT, value TEXT); CREATE TABLE runs (run_id, fingerprint, settings_hash, settings);"
            " CREATE TABLE responses (run_id, context_hash, seed, context, response, error, created, extra);",
            "responses table has other columns: context, context_hash, created, error, extra",
        ),
        ("CREATE TABLE meta (k, v); CREATE TABLE responses (x); PRAGMA journal_mode=WAL;", "meta table has other columns: k, v"),
        ("CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('a', 'b');", "other tables: meta"),
    ],
)
def test_another_programs_database_is_refused_unchanged(tmp_path: Path, script: str, said: str) -> None:
    """Review: such a file got fairtalk's columns, tables, view, WAL mode or version row before it was refused."""
    path = tmp_path / "theirs.db"
    before = _foreign(path, script)
    with pytest.raises(StoreError, match=f"theirs.db: not a fairtalk run store .*{said}.*; give a new file"):
        RunStore(path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no -wal nor -shm left either
    result = runner.invoke(
        app,
        [
            "audit",
            "--axis",
            "gender",
            "--model",
            "builtin:echo",
            "--pairs",
            "10",
            "-o",
            str(tmp_path / "o"),
            "--store",
            str(path),
        ],
    )
    assert result.exit_code == 2 and "not a fairtalk run store" in _flat(result.stderr), result.output
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "o"} == before


def test_a_store_of_another_version_or_of_answers_without_one_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        store.write(store.run_id("m", DecodingSettings()), _rows(2))
    for change, said in [
        ("UPDATE meta SET value = '2' WHERE key = 'schema_version'", "schema version 2, this fairtalk reads version 1"),
        ("DELETE FROM meta", "holds answers but no schema version"),
    ]:
        with sqlite3.connect(path) as db:
            db.execute(change)
            db.execute("PRAGMA journal_mode=DELETE")  # a store another tool rewrote: no -wal left for fairtalk
        db.close()
        before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
        with pytest.raises(StoreError, match=said):
            RunStore(path)
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_store_whose_creation_was_cut_short_opens(tmp_path: Path) -> None:
    """Only some of fairtalk's tables, all empty: a creation under way in another run, or cut short by a kill."""
    path = tmp_path / "s.sqlite"
    _foreign(path, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);")
    with RunStore(path) as store:
        store.write(store.run_id("m", DecodingSettings()), _rows(2))
        assert store.count() == 2
        assert store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)


@pytest.mark.parametrize(
    ("output", "store", "said"), [("x1", "x1", "--store and -o name the same path"), ("x1/sub", "./x1", "-o lies under --store")]
)
def test_a_store_that_is_the_output_folder_is_refused_before_anything_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str, store: str, said: str
) -> None:
    """Review: ``-o x1 --store x1`` said "x1: is a file, not a folder" after creating and removing the store file."""
    monkeypatch.chdir(tmp_path)
    made: list[str] = []
    monkeypatch.setattr(RunStore, "__init__", lambda self, *a, **k: made.append("store"))  # the store is never opened
    args = ["audit", "--axis", "gender", "--model", "builtin:echo", "--pairs", "10", "-o", output, "--store", store]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and said in _flat(result.stderr), result.output
    assert list(tmp_path.iterdir()) == [] and made == []


def test_a_store_path_ending_in_a_slash_is_refused_not_made_a_file(tmp_path: Path) -> None:
    """``--store runs/`` made a store file named ``runs``."""
    with pytest.raises(StoreError, match="runs/: cannot open run store: the path ends in a slash"):
        RunStore(f"{tmp_path}/runs/")
    assert list(tmp_path.iterdir()) == []
