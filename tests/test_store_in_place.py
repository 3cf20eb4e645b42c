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
