"""The run store: a SQLite cache of responses (WAL mode) and the CachingResponder that uses it.

Every response is keyed by ``(fingerprint, context_hash, seed, settings_hash)``.
:class:`CachingResponder` wraps any responder: it serves stored responses, sends
only the misses to the model in batches, and commits each batch in one
transaction as soon as it returns, so a run killed at any point resumes where it
stopped, without gaps or duplicates (the primary key forbids them).

Per-item failures (after the adapter's own retries) are stored with their message
but never served from the cache: the next run retries them. A stored success is
never overwritten. When more than ``max_errors`` items have failed, the wrapper
raises :class:`~fairtalk.errors.ResponderError` after committing what it has.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from fairtalk.errors import ResponderError, StoreError
from fairtalk.models.base import DecodingSettings, Responder, check_batch, respond_each

__all__ = ["SCHEMA_VERSION", "CachingResponder", "RunStore", "StoredResponse", "context_hash"]

SCHEMA_VERSION = 1
_MSG_OPEN = "cannot open run store: {error}"
_MSG_IS_DIR = "cannot open run store: it is a directory"
_MSG_VERSION = "run store has schema version {found}, this fairtalk reads version {expected}"
_MSG_SQL = "run store failed: {error}"
_MSG_CLOSED = "run store is closed"
_MSG_TOO_MANY = "{n_errors} responses failed, more than max_errors={max_errors}; last error: {last}"
_MSG_BATCH_SIZE = "batch_size must be >= 1, got {value!r}"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    settings_hash TEXT NOT NULL,
    settings TEXT NOT NULL,
    UNIQUE (fingerprint, settings_hash)
);
CREATE TABLE IF NOT EXISTS responses (
    run_id INTEGER NOT NULL REFERENCES runs (run_id),
    context_hash BLOB NOT NULL,
    seed INTEGER NOT NULL,
    context TEXT NOT NULL,
    response TEXT,
    error TEXT,
    created REAL NOT NULL,
    UNIQUE (run_id, context_hash, seed)
);
CREATE VIEW IF NOT EXISTS responses_view AS
    SELECT runs.fingerprint, hex(responses.context_hash) AS context_hash, responses.seed, runs.settings_hash,
           responses.context, responses.response, responses.error, responses.created
    FROM responses JOIN runs USING (run_id);
"""
# A success is final; an error row is replaced by the next attempt's outcome.
_UPSERT = """
INSERT INTO responses (run_id, context_hash, seed, context, response, error, created)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, context_hash, seed) DO UPDATE SET
    response = excluded.response, error = excluded.error, created = excluded.created
WHERE responses.error IS NOT NULL
"""
_LOOKUP_CHUNK = 500


def context_hash(context: str) -> bytes:
    """Stable 128-bit hash of a context's text (16 bytes; stored as a BLOB)."""
    return hashlib.blake2b(context.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """One row of the run store; ``response`` is None when ``error`` holds the failure message.

    ``context_hash`` is the upper-case hex of :func:`context_hash`.
    """

    fingerprint: str
    context_hash: str
    seed: int
    settings_hash: str
    context: str
    response: str | None
    error: str | None
    created: float


class RunStore:
    """A SQLite run store in WAL mode; a context manager. Parent folders are created.

    Raises
    ------
    StoreError
        When the path cannot be created or opened, is not a fairtalk store, or a
        read or write fails.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._run_ids: dict[tuple[str, str], int] = {}
        if self.path.is_dir():
            raise StoreError(f"{self.path}: {_MSG_IS_DIR}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db: sqlite3.Connection | None = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: " + _MSG_OPEN.format(error=exc)) from exc
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif row[0] != str(SCHEMA_VERSION):
                raise StoreError(f"{self.path}: " + _MSG_VERSION.format(found=row[0], expected=SCHEMA_VERSION))
        except sqlite3.Error as exc:
            self._db.close()
            self._db = None
            raise StoreError(f"{self.path}: " + _MSG_OPEN.format(error=exc)) from exc
        except StoreError:
            self._db.close()
            self._db = None
            raise

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (StoreError once closed)."""
        if self._db is None:
            raise StoreError(f"{self.path}: {_MSG_CLOSED}")
        return self._db

    def run_id(self, fingerprint: str, settings: DecodingSettings) -> int:
        """Return the id of the (model fingerprint, decoding settings) run, creating it if new."""
        key = (fingerprint, settings.digest)
        found = self._run_ids.get(key)
        if found is not None:
            return found
        try:
            self.db.execute(
                "INSERT OR IGNORE INTO runs (fingerprint, settings_hash, settings) VALUES (?, ?, ?)",
                (fingerprint, settings.digest, settings.key),
            )
            (found,) = self.db.execute(
                "SELECT run_id FROM runs WHERE fingerprint = ? AND settings_hash = ?", key
            ).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc
        self._run_ids[key] = int(found)
        return int(found)

    def lookup(self, run_id: int, keys: Sequence[tuple[bytes, int]]) -> dict[tuple[bytes, int], str]:
        """Return the stored successful responses among ``keys`` (``(context_hash, seed)`` pairs)."""
        wanted = set(keys)
        found: dict[tuple[bytes, int], str] = {}
        try:
            if not wanted or self.db.execute("SELECT 1 FROM responses WHERE run_id = ? LIMIT 1", (run_id,)).fetchone() is None:
                return found  # a fresh run: nothing to look up
            hashes = sorted({h for h, _ in wanted})
            for start in range(0, len(hashes), _LOOKUP_CHUNK):
                chunk = hashes[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self.db.execute(
                    "SELECT context_hash, seed, response FROM responses WHERE run_id = ?"
                    f" AND error IS NULL AND context_hash IN ({marks})",
                    (run_id, *chunk),
                )
                for h, seed, response in rows:
                    if (h, seed) in wanted:
                        found[(h, seed)] = response
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc
        return found

    def write(self, run_id: int, rows: Sequence[tuple[bytes, int, str, str | None, str | None]]) -> None:
        """Commit ``(context_hash, seed, context, response, error)`` rows in one transaction."""
        now = time.time()
        params = [(run_id, h, seed, ctx, resp, err, now) for h, seed, ctx, resp, err in rows]
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(_UPSERT, params)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc

    def count(self, fingerprint: str | None = None, *, errors: bool = False) -> int:
        """Number of stored successes (or, with ``errors=True``, failures), optionally for one model."""
        where = "error IS NOT NULL" if errors else "error IS NULL"
        sql, args = f"SELECT COUNT(*) FROM responses WHERE {where}", ()
        if fingerprint is not None:
            sql += " AND run_id IN (SELECT run_id FROM runs WHERE fingerprint = ?)"
            args = (fingerprint,)
        try:
            return int(self.db.execute(sql, args).fetchone()[0])
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc

    def iter_responses(self, fingerprint: str | None = None) -> Iterator[StoredResponse]:
        """Yield stored rows (successes and errors), optionally for one model."""
        sql, args = "SELECT * FROM responses_view", ()
        if fingerprint is not None:
            sql, args = sql + " WHERE fingerprint = ?", (fingerprint,)
        try:
            for row in self.db.execute(sql, args):
                yield StoredResponse(*row)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"


class CachingResponder:
    """Wrap a responder with a run store: serve hits, generate misses, commit each batch.

    Parameters
    ----------
    responder : Responder
        The model under test; its ``fingerprint`` keys the cache.
    store : RunStore
        Where responses are kept (the caller owns and closes it).
    batch_size : int
        Misses sent to the model, and committed, per batch.
    max_errors : int, optional
        Raise ResponderError once more items than this have failed (None: never).
    progress : callable, optional
        Called with the number of items just finished (cached ones included).

    Attributes ``n_cached``, ``n_generated`` and ``n_errors`` count items over the
    wrapper's lifetime; duplicate requests within one call count once.
    """

    def __init__(
        self,
        responder: Responder,
        store: RunStore,
        *,
        batch_size: int = 64,
        max_errors: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise StoreError(_MSG_BATCH_SIZE.format(value=batch_size))
        self.responder = responder
        self.store = store
        self.batch_size = batch_size
        self.max_errors = max_errors
        self.progress = progress
        self.n_cached = 0
        self.n_generated = 0
        self.n_errors = 0

    @property
    def fingerprint(self) -> str:
        """The wrapped responder's fingerprint."""
        return self.responder.fingerprint

    def _advance(self, n: int) -> None:
        if self.progress is not None and n:
            self.progress(n)

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Return per item the response or the ResponderError it failed with, in order."""
        check_batch(contexts, seeds)
        run_id = self.store.run_id(self.fingerprint, settings)
        todo: dict[tuple[bytes, int], list[int]] = {}
        for i, (context, seed) in enumerate(zip(contexts, seeds)):
            todo.setdefault((context_hash(context), int(seed)), []).append(i)
        results: list[str | ResponderError | None] = [None] * len(contexts)
        hits = self.store.lookup(run_id, list(todo))
        n_served = 0
        for key, response in hits.items():
            for i in todo.pop(key):
                results[i] = response
                n_served += 1
        self.n_cached += len(hits)
        self._advance(n_served)
        misses = list(todo.items())
        for start in range(0, len(misses), self.batch_size):
            batch = misses[start : start + self.batch_size]
            batch_contexts = [contexts[indices[0]] for _, indices in batch]
            out = respond_each(self.responder, batch_contexts, settings, seeds=[seed for (_, seed), _ in batch])
            rows = []
            last_error: ResponderError | None = None
            for ((h, seed), indices), context, item in zip(batch, batch_contexts, out):
                if isinstance(item, ResponderError):
                    rows.append((h, seed, context, None, f"{type(item).__name__}: {item}"))
                    self.n_errors += 1
                    last_error = item
                else:
                    rows.append((h, seed, context, item, None))
                    self.n_generated += 1
                for i in indices:
                    results[i] = item
            self.store.write(run_id, rows)
            self._advance(sum(len(indices) for _, indices in batch))
            if last_error is not None and self.max_errors is not None and self.n_errors > self.max_errors:
                raise ResponderError(
                    _MSG_TOO_MANY.format(n_errors=self.n_errors, max_errors=self.max_errors, last=last_error)
                ) from last_error
        return results  # type: ignore[return-value]

    def respond(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str]:
        """Return one response per context; raise the first item's error if any failed."""
        out = self.respond_each(contexts, settings, seeds=seeds)
        for item in out:
            if isinstance(item, ResponderError):
                raise item
        return out  # type: ignore[return-value]

    def close(self) -> None:
        """Close the wrapped responder (the store belongs to the caller)."""
        self.responder.close()

    def __enter__(self) -> CachingResponder:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CachingResponder({self.responder!r}, {self.store!r})"
