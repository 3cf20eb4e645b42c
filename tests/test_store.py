"""Tests for store.py: the SQLite run store and CachingResponder (resume, errors, crash safety)."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from fairtalk import ResponderError
from fairtalk.errors import StoreError
from fairtalk.models import DecodingSettings, Reply, Responder, load_responder
from fairtalk.store import CachingResponder, RunStore, context_hash
from fairtalk.store._sqlite import ROWS_PER_STATEMENT

S = DecodingSettings()


class _Counting(Responder):
    """Echo model that records every context it was asked, failing those listed in ``fail``."""

    def __init__(self, fail: Sequence[str] = ()) -> None:
        self.asked: list[str] = []
        self.fail = set(fail)

    @property
    def fingerprint(self) -> str:
        return "test:counting"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        if any(c in self.fail for c in contexts):
            raise ResponderError("refused " + ",".join(c for c in contexts if c in self.fail))
        self.asked.extend(contexts)
        return [f"{c}/{s}" for c, s in zip(contexts, seeds)]


def test_cache_hits_misses_order_and_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "store.db"
    contexts = ["a", "b", "a", "c", "d"]
    seeds = [0, 0, 0, 0, 1]
    with RunStore(path) as store:
        model = _Counting()
        progress: list[int] = []
        cr = CachingResponder(model, store, batch_size=2, progress=progress.append)
        assert cr.respond(contexts, S, seeds=seeds) == ["a/0", "b/0", "a/0", "c/0", "d/1"]
        assert model.asked == ["a", "b", "c", "d"]  # the duplicate "a" generated once
        assert (cr.n_cached, cr.n_generated, cr.n_errors) == (0, 4, 0)
        assert sum(progress) == 5
        assert cr.respond(["d", "a", "e"], S, seeds=[1, 0, 0]) == ["d/1", "a/0", "e/0"]
        assert model.asked[4:] == ["e"] and cr.n_cached == 2
        cr.respond(["a"], S, seeds=[5])  # new seed: a miss
        cr.respond(["a"], DecodingSettings(max_new_tokens=3), seeds=[0])  # new settings: a miss
        assert model.asked[5:] == ["a", "a"]
        assert store.count() == 7 and store.count("test:counting") == 7 and store.count("other") == 0
    assert path.exists()
    with RunStore(path) as again:  # persisted
        cr = CachingResponder(_Counting(), again)
        assert cr.respond(contexts, S, seeds=seeds) == ["a/0", "b/0", "a/0", "c/0", "d/1"]
        assert cr.n_generated == 0
        rows = list(again.iter_responses("test:counting"))
        assert len(rows) == 7 and rows[0].fingerprint == "test:counting" and len(rows[0].context_hash) == 32


def test_errors_are_recorded_counted_and_retried(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        cr = CachingResponder(_Counting(fail=["x", "y"]), store, batch_size=4)
        out = cr.respond_each(["a", "x", "b", "y", "c"], S, seeds=[0] * 5)
        assert out[0] == "a/0" and out[2] == "b/0" and out[4] == "c/0"
        assert isinstance(out[1], ResponderError) and "refused x" in str(out[1])
        assert (cr.n_generated, cr.n_errors) == (3, 2)
        assert store.count() == 3 and store.count(errors=True) == 2
        errors = [r for r in store.iter_responses() if r.error]
        assert {r.context for r in errors} == {"x", "y"} and all(r.response is None for r in errors)
        assert all(r.error.startswith("ResponderError: refused") for r in errors)
        with pytest.raises(ResponderError, match="refused"):
            cr.respond(["x"], S, seeds=[0])
        healed = _Counting(fail=["y"])
        cr2 = CachingResponder(healed, store)
        out = cr2.respond_each(["a", "x", "y"], S, seeds=[0] * 3)
        assert out[:2] == ["a/0", "x/0"] and isinstance(out[2], ResponderError)
        assert healed.asked == ["x"] and cr2.n_cached == 1
        assert store.count() == 4 and store.count(errors=True) == 1


def test_a_success_is_never_overwritten(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        run = store.run_id("fp", S)
        h = context_hash("c")
        store.write(run, [(h, 0, "c", "first", None)])
        store.write(run, [(h, 0, "c", None, "Err: later failure"), (h, 0, "c", "second", None)])
        assert store.lookup(run, [(h, 0)]) == {(h, 0): "first"}
        assert store.count() == 1 and store.count(errors=True) == 0


def test_max_errors_raises_after_committing(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        cr = CachingResponder(_Counting(fail=["x1", "x2", "x3"]), store, batch_size=2, max_errors=1)
        with pytest.raises(ResponderError, match=r"2 responses failed, more than max_errors=1"):
            cr.respond_each(["a", "x1", "b", "x2", "c", "x3"], S, seeds=[0] * 6)
        assert store.count() == 2  # a and b were committed before the raise
        cr0 = CachingResponder(_Counting(fail=["x1"]), store, max_errors=1)
        assert isinstance(cr0.respond_each(["x1"], S, seeds=[0])[0], ResponderError)


def test_unusable_paths_give_store_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="it is a directory"):
        RunStore(tmp_path)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="garbage.db: cannot open run store"):
        RunStore(garbage)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot open run store"):
        RunStore(blocker / "store.db")
    old = tmp_path / "old.db"
    RunStore(old).close()
    with sqlite3.connect(old) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 99"):
        RunStore(old)
    store = RunStore(tmp_path / "closed.db")
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.count()
    with pytest.raises(StoreError, match="batch_size"):
        CachingResponder(_Counting(), RunStore(tmp_path / "b.db"), batch_size=0)


def test_wal_mode(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_echo_through_the_store(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store, CachingResponder(load_responder("builtin:echo"), store) as cr:
        contexts = [f"context {i} here" for i in range(500)]
        first = cr.respond(contexts, S, seeds=[0] * 500)
        assert first == cr.respond(contexts, S, seeds=[0] * 500)
        assert (cr.n_generated, cr.n_cached) == (500, 500)


# --- crash safety: kill -9 a run midway, resume, compare with an uninterrupted run ----------

SLOW_MODEL = """
import time

def respond(text, seed):
    time.sleep(0.01)
    return f"{text[::-1]}#{seed}"
"""
RUNNER = """
import json, sys
from fairtalk.models import DecodingSettings, load_responder
from fairtalk.store import CachingResponder, RunStore

store_path, model_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
contexts = [f"context number {i} " * 2 for i in range(n)]
seeds = [i % 3 for i in range(n)]
with RunStore(store_path) as store:
    cr = CachingResponder(load_responder(f"python:{model_path}:respond"), store, batch_size=5)
    out = cr.respond(contexts, DecodingSettings(), seeds=seeds)
print(json.dumps({"n_cached": cr.n_cached, "n_generated": cr.n_generated, "out": out}))
"""
N_CRASH = 150


def _run(tmp_path: Path, store: Path) -> dict:
    done = subprocess.run(
        [sys.executable, str(tmp_path / "runner.py"), str(store), str(tmp_path / "slow.py"), str(N_CRASH)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def _count(path: Path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_kill_9_midway_then_resume(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(SLOW_MODEL)
    (tmp_path / "runner.py").write_text(RUNNER)
    crashed = tmp_path / "crashed.db"
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "runner.py"), str(crashed), str(tmp_path / "slow.py"), str(N_CRASH)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while _count(crashed) < 30 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    n_before = _count(crashed)
    assert 30 <= n_before < N_CRASH

    resumed = _run(tmp_path, crashed)
    assert resumed["n_cached"] == n_before and resumed["n_generated"] == N_CRASH - n_before
    clean = _run(tmp_path, tmp_path / "clean.db")
    assert clean["n_cached"] == 0
    assert resumed["out"] == clean["out"]
    with RunStore(crashed) as store:
        rows = list(store.iter_responses())
    keys = [(r.context_hash, r.seed) for r in rows]
    assert len(rows) == N_CRASH and len(set(keys)) == N_CRASH  # no gaps, no duplicates
    assert all(r.error is None for r in rows)
    assert sorted(r.response for r in rows) == sorted(clean["out"])


class _RecordingStore(RunStore):
    """A RunStore that records the size of every committed write."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.commits: list[int] = []

    def write(self, run_id, rows):  # type: ignore[no-untyped-def]
        self.commits.append(len(rows))
        super().write(run_id, rows)


def test_fast_models_are_committed_in_large_transactions(tmp_path: Path) -> None:
    contexts = [f"c{i}" for i in range(300)]
    with _RecordingStore(tmp_path / "s.db") as store:
        cr = CachingResponder(_Counting(), store, batch_size=8, commit_rows=100, commit_seconds=3600)
        cr.respond(contexts, S, seeds=[0] * 300)
        assert store.commits == [104, 104, 92]  # whole batches, >= commit_rows each, the rest at the end
        assert store.count() == 300


def test_slow_models_are_committed_every_commit_seconds(tmp_path: Path) -> None:
    contexts = [f"c{i}" for i in range(6)]
    with _RecordingStore(tmp_path / "s.db") as store:
        cr = CachingResponder(_Counting(), store, batch_size=2, commit_rows=1000, commit_seconds=0.0)
        cr.respond(contexts, S, seeds=[0] * 6)
        assert store.commits == [2, 2, 2]  # every batch, as soon as it returns


class _Interrupted(_Counting):
    """Answers the first batch, then is interrupted like a Ctrl-C."""

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        if self.asked:
            raise KeyboardInterrupt
        return super().respond(contexts, settings, seeds=seeds)


def test_finished_items_are_committed_when_the_run_is_interrupted(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        cr = CachingResponder(_Interrupted(), store, batch_size=3, commit_rows=1000, commit_seconds=3600)
        with pytest.raises(KeyboardInterrupt):
            cr.respond([f"c{i}" for i in range(9)], S, seeds=[0] * 9)
        assert store.count() == 3


@pytest.mark.parametrize("option", [{"commit_rows": 0}, {"commit_seconds": -1.0}, {"commit_rows": True}])
def test_commit_policy_is_validated(tmp_path: Path, option: dict) -> None:
    with RunStore(tmp_path / "s.db") as store, pytest.raises(StoreError, match="commit_"):
        CachingResponder(_Counting(), store, **option)


class _Surrogates(Responder):
    """Answers with a lone surrogate, as a server can with one JSON escape."""

    @property
    def fingerprint(self) -> str:
        return "test:surrogates"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        return [f"{c} \ud800\udfff!" for c in contexts]


def test_unstorable_text_is_replaced_counted_and_stored(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.sqlite") as store:
        cached = CachingResponder(_Surrogates(), store)
        out = cached.respond(["a", "b \udc80"], S, seeds=[0, 0])
        assert out == ["a \ufffd\ufffd!", "b \udc80 \ufffd\ufffd!".replace("\udc80", "\ufffd")]
        assert cached.n_unencodable == 5 and cached.n_generated == 2  # 2 + 2, and the echoed context's 1
        again = CachingResponder(_Surrogates(), store)
        assert again.respond(["a"], S, seeds=[0]) == ["a \ufffd\ufffd!"] and again.n_cached == 1


def test_a_store_whose_version_row_was_removed_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with RunStore(path) as store:
        run = store.run_id("fp", DecodingSettings())
        store.write(run, [(context_hash("hi"), 0, "hi", "hello", None)])
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM meta")
    with pytest.raises(StoreError, match="holds answers but no schema version"):
        RunStore(path)
    with sqlite3.connect(path) as db:  # refused, not stamped: the next open refuses it again
        assert db.execute("SELECT COUNT(*) FROM meta").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 1


def test_a_new_file_and_a_store_of_empty_tables_without_a_version_are_stamped(tmp_path: Path) -> None:
    new = tmp_path / "new.sqlite"
    new.touch()
    RunStore(new).close()
    empty = tmp_path / "empty.sqlite"
    RunStore(empty).close()
    with sqlite3.connect(empty) as db:  # another run creating it right now, or a creation a kill cut short
        db.execute("DELETE FROM meta")
    RunStore(empty).close()
    for path in (new, empty):
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)


def test_model_version_keys_the_cache(tmp_path: Path) -> None:
    from fairtalk import SpecError

    with RunStore(tmp_path / "s.sqlite") as store:
        v1 = CachingResponder(load_responder("builtin:echo"), store, model_version="v1")
        assert v1.fingerprint == 'builtin:echo {"mode":"reverse"} version=v1'
        v1.respond(["a b"], S, seeds=[0])
        assert CachingResponder(load_responder("builtin:echo"), store, model_version="v1").respond_each(["a b"], S, seeds=[0])
        v2 = CachingResponder(load_responder("builtin:echo"), store, model_version="v2")
        v2.respond(["a b"], S, seeds=[0])
        assert (v2.n_cached, v2.n_generated) == (0, 1)
        for bad in ("", "  ", "a\nb"):
            with pytest.raises(SpecError, match="model_version must be"):
                CachingResponder(load_responder("builtin:echo"), store, model_version=bad)


def test_a_store_written_before_finish_reasons_opens_and_keeps_its_answers(tmp_path: Path) -> None:
    from fairtalk.models import Reply

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the version-1 layout, as fairtalk wrote it before finish_reason
        db.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO meta VALUES ('schema_version', '1');
            CREATE TABLE runs (run_id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, settings_hash TEXT NOT NULL,
                               settings TEXT NOT NULL, UNIQUE (fingerprint, settings_hash));
            CREATE TABLE responses (run_id INTEGER NOT NULL, context_hash BLOB NOT NULL, seed INTEGER NOT NULL,
                                    context TEXT NOT NULL, response TEXT, error TEXT, created REAL NOT NULL,
                                    UNIQUE (run_id, context_hash, seed));
            CREATE VIEW responses_view AS SELECT runs.fingerprint, hex(responses.context_hash) AS context_hash,
                responses.seed, runs.settings_hash, responses.context, responses.response, responses.error,
                responses.created FROM responses JOIN runs USING (run_id);
        """)
        settings = DecodingSettings()
        db.execute("INSERT INTO runs VALUES (1, 'm', ?, ?)", (settings.digest, settings.key))
        db.execute("INSERT INTO responses VALUES (1, ?, 0, 'hi', 'old answer', NULL, 0)", (context_hash("hi"),))
    with RunStore(path) as store:
        run = store.run_id("m", settings)
        store.write(run, [(context_hash("yo"), 0, "yo", Reply("cut", "length"), None)])
        found = store.lookup(run, [(context_hash("hi"), 0), (context_hash("yo"), 0)])
        assert found[(context_hash("hi"), 0)] == "old answer" and not isinstance(found[(context_hash("hi"), 0)], Reply)
        assert found[(context_hash("yo"), 0)].finish_reason == "length"  # type: ignore[attr-defined]
        assert {r.context: r.finish_reason for r in store.iter_responses()} == {"hi": None, "yo": "length"}


def test_a_write_of_many_rows_upserts_them_in_order_as_one_statement_per_row_would(tmp_path: Path) -> None:
    rng = random.Random(3)
    with RunStore(tmp_path / "s.db") as store:
        run = store.run_id("fp", S)
        expected: dict[tuple[bytes, int], tuple[str | None, str | None, str | None]] = {}
        sizes = [0, 1, ROWS_PER_STATEMENT - 1, ROWS_PER_STATEMENT, ROWS_PER_STATEMENT + 1, 3 * ROWS_PER_STATEMENT + 37, 250]
        for n_rows in sizes:  # across 64-row statements, with the same key often in one write and across writes
            rows = []
            for _ in range(n_rows):
                k = rng.randrange(40)
                ok = rng.random() < 0.5
                response = (
                    Reply(f"r{rng.random()}", "length") if ok and rng.random() < 0.5 else f"r{rng.random()}" if ok else None
                )
                rows.append((context_hash(f"c{k}"), rng.randrange(3), f"c{k}", response, None if ok else f"Err: {rng.random()}"))
            store.write(run, rows)
            for h, seed, _, response, error in rows:
                if (h, seed) not in expected or expected[(h, seed)][1] is not None:  # a success is final
                    reason = getattr(response, "finish_reason", None)
                    expected[(h, seed)] = (None if response is None else str(response), error, reason)
        found = {
            (h, seed): (response, error, reason)
            for h, seed, response, error, reason in store.db.execute(
                "SELECT context_hash, seed, response, error, finish_reason FROM responses"
            )
        }
        assert found == expected and len(found) > 60


class _Naming(Responder):
    """A server-like model: each answer a Reply naming the model that answered (``served_models`` counts them)."""

    requested_model = "asked-model"

    def __init__(self, served: str | None) -> None:
        self.served = served
        self.served_models: dict[str, int] = {}
        self.asked: list[str] = []

    @property
    def fingerprint(self) -> str:
        return "test:naming"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        self.asked.extend(contexts)
        return [Reply(f"{c}!", "stop", self.served) for c in contexts]


def test_the_served_model_is_stored_with_each_answer_and_counted_again_when_the_store_serves_it(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    contexts = ["a", "b", "c", "a"]  # a duplicate request counts once, as it is asked and stored once
    with RunStore(path) as store:
        first = CachingResponder(_Naming("other-model"), store)
        assert first.respond_each(contexts, S, seeds=[0] * 4) == ["a!", "b!", "c!", "a!"]
        assert (first.served_models, first.n_served_unknown, first.requested_model) == ({"other-model": 3}, 0, "asked-model")
    with RunStore(path) as store:
        model = _Naming("never-asked")
        again = CachingResponder(model, store)
        out = again.respond_each(contexts, S, seeds=[0] * 4)
        assert model.asked == [] and again.n_cached == 3
        assert [(r.finish_reason, r.model) for r in out] == [("stop", "other-model")] * 4  # type: ignore[attr-defined]
        assert (again.served_models, again.n_served_unknown) == ({"other-model": 3}, 0)
        assert {r.context: r.served_model for r in store.iter_responses()} == dict.fromkeys("abc", "other-model")
        plain = CachingResponder(_Counting(), store)  # a model that does not say: nothing counted
        plain.respond_each(["a"], S, seeds=[0])
        assert (plain.served_models, plain.n_served_unknown) == (None, 0)


def test_a_store_written_before_served_models_opens_and_counts_its_answers_as_unnamed(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    settings = DecodingSettings()
    with sqlite3.connect(path) as db:  # the version-1 layout with finish_reason, as fairtalk wrote it before served_model
        db.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO meta VALUES ('schema_version', '1');
            CREATE TABLE runs (run_id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, settings_hash TEXT NOT NULL,
                               settings TEXT NOT NULL, UNIQUE (fingerprint, settings_hash));
            CREATE TABLE responses (run_id INTEGER NOT NULL, context_hash BLOB NOT NULL, seed INTEGER NOT NULL,
                                    context TEXT NOT NULL, response TEXT, error TEXT, created REAL NOT NULL,
                                    finish_reason TEXT, UNIQUE (run_id, context_hash, seed));
        """)
        db.execute("INSERT INTO runs VALUES (1, 'test:naming', ?, ?)", (settings.digest, settings.key))
        db.execute("INSERT INTO responses VALUES (1, ?, 0, 'old', 'old answer', NULL, 0, 'stop')", (context_hash("old"),))
    with RunStore(path) as store:
        cached = CachingResponder(_Naming("served-model"), store)
        out = cached.respond_each(["old", "new"], settings, seeds=[0, 0])
        assert out == ["old answer", "new!"] and cached.responder.asked == ["new"]  # type: ignore[attr-defined]
        assert (cached.served_models, cached.n_served_unknown) == ({"served-model": 1}, 1)
        assert {r.context: r.served_model for r in store.iter_responses()} == {"old": None, "new": "served-model"}
        assert store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
