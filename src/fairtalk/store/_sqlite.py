"""The SQLite run store: schema, WAL mode, batched upserts and lookups."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fairtalk._jsonl import replace_surrogates
from fairtalk.errors import OutputError, StoreError, path_argument
from fairtalk.files import check_regular
from fairtalk.models import Closing, DecodingSettings, Reply, finish_reason

__all__ = [
    "ROWS_PER_STATEMENT",
    "SCHEMA_VERSION",
    "RunStore",
    "StoredResponse",
    "context_hash",
    "is_run_store",
    "store_written",
]

SCHEMA_VERSION = 1
_MSG_OPEN = "cannot open run store: {error}"
_MSG_IS_DIR = "cannot open run store: it is a directory"
_MSG_FOLDER_NAME = "cannot open run store: the path ends in a slash, the name of a folder; give the name of a file"
_MSG_VERSION = "run store has schema version {found}, this fairtalk reads version {expected}"
_MSG_NO_VERSION = (
    "run store holds answers but no schema version (its meta table has no schema_version row), this fairtalk reads "
    "version {expected}: it cannot tell what wrote them; give a new file"
)
_MSG_SQL = "run store failed: {error}"
_MSG_CLOSED = "run store is closed"
_MSG_GONE = (
    "the run store was deleted or replaced during the run{lost}; keep the store (and its folder) in place while a "
    "run writes it, and re-run the command to generate the answers again"
)
_MSG_GONE_LOST = ": the {n:,} answer(s) this run wrote to it are lost with it (and any it held before)"
_MSG_GONE_NONE = ", before this run wrote an answer to it"
_MSG_DAMAGED = (
    "the run store is damaged ({problem}): its answers cannot be trusted; move it away (or delete it) and re-run, "
    "which starts a new store"
)
_MSG_NOT_STORE = "not a fairtalk run store (a SQLite database with other tables: {tables}); give a new file"
_MSG_NOT_STORE_COLUMNS = (
    "not a fairtalk run store (a SQLite database whose {table} table has other columns: {columns}); give a new file"
)

#: Per store file (its absolute path) that a RunStore of this process opened: the file (device, inode), the answers
#: written there, and whether it was found deleted or replaced (:func:`store_written`). While a store is open its
#: file's inode cannot be reused, so the identity tells; a store that closes finds out for good.
_WRITTEN: dict[str, tuple[tuple[int, int], int, bool]] = {}

#: How every SQLite database file begins.
_SQLITE_HEADER = b"SQLite format 3\x00"
#: The tables of a database, less SQLite's own (sqlite_sequence, sqlite_stat1).
_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"

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
    finish_reason TEXT,
    served_model TEXT,
    UNIQUE (run_id, context_hash, seed)
);
"""
#: Columns added to ``responses`` after version 1 was first written, with their type: a store written before one
#: existed gets it on opening (NULL in its rows: unknown), and the view is rebuilt to show it. Adding a column
#: keeps the schema version (an older fairtalk reads and writes such a store as before; its rows leave it NULL).
_ADDED_COLUMNS = (("finish_reason", "TEXT"), ("served_model", "TEXT"))


@functools.cache
def _schema_columns() -> dict[str, frozenset[str]]:
    """The columns of each table of :data:`_SCHEMA`, ``responses`` less :data:`_ADDED_COLUMNS` (as version 1 first had them)."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.executescript(_SCHEMA)
        tables = [name for (name,) in db.execute(_TABLES + " ORDER BY rowid")]
        columns = {table: frozenset(row[1] for row in db.execute(f"PRAGMA table_info({table})")) for table in tables}
    return {**columns, "responses": columns["responses"] - {name for name, _ in _ADDED_COLUMNS}}


_VIEW = """
DROP VIEW IF EXISTS responses_view;
CREATE VIEW responses_view AS
    SELECT runs.fingerprint, hex(responses.context_hash) AS context_hash, responses.seed, runs.settings_hash,
           responses.context, responses.response, responses.error, responses.created, responses.finish_reason,
           responses.served_model
    FROM responses JOIN runs USING (run_id);
"""
# A success is final; an error row is replaced by the next attempt's outcome.
_INSERT = (
    "INSERT INTO responses (run_id, context_hash, seed, context, response, error, created, finish_reason, served_model) VALUES "
)
_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
#: Parameters of one row.
_N_PARAMS = _ROW.count("?")
_ON_CONFLICT = """
ON CONFLICT (run_id, context_hash, seed) DO UPDATE SET
    response = excluded.response, error = excluded.error, created = excluded.created,
    finish_reason = excluded.finish_reason, served_model = excluded.served_model
WHERE responses.error IS NOT NULL
"""
#: Rows per INSERT statement of a write (9 parameters each: 576, within the 999 of old SQLite builds). A
#: statement per row releases and retakes the GIL per row (sqlite3 steps without it), and with the ``openai:``
#: adapter's request thread busy that cost ~30 us of CPU per row at ~1,100 rows/s (bench/README.md, scale).
ROWS_PER_STATEMENT = 64
_LOOKUP_CHUNK = 500


@functools.cache
def _upsert(n_rows: int) -> str:
    """The upsert of ``n_rows`` rows in one statement (a power of two up to :data:`ROWS_PER_STATEMENT`)."""
    return _INSERT + ", ".join([_ROW] * n_rows) + _ON_CONFLICT


def context_hash(context: str) -> bytes:
    """Stable 128-bit hash of a context's text (16 bytes; stored as a BLOB)."""
    return hashlib.blake2b(context.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """One row of the run store; ``response`` is None when ``error`` holds the failure message.

    ``context_hash`` is the upper-case hex of :func:`context_hash`; ``finish_reason`` is why the
    model stopped (``"length"``: cut off at the token limit), None when the model did not say;
    ``served_model`` is the model the server said answered (its reply's ``model``), None when it
    did not say, or when the row was stored by a fairtalk that did not keep it.
    """

    fingerprint: str
    context_hash: str
    seed: int
    settings_hash: str
    context: str
    response: str | None
    error: str | None
    created: float
    finish_reason: str | None = None
    served_model: str | None = None


def _served_model(item: object) -> str | None:
    """The model a server said answered, of a :class:`~fairtalk.models.Reply`; None for a plain string or an error."""
    model = item.model if isinstance(item, Reply) else None
    return replace_surrogates(model)[0] if isinstance(model, str) and model else None


def is_run_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a SQLite database (a run store, or an empty file one can become): what ``--store`` may open.

    Which tables it holds, :class:`RunStore` checks when it opens it (another program's
    database is refused there, unchanged).
    """
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_SQLITE_HEADER))
    except OSError:
        return False
    return head in (b"", _SQLITE_HEADER)


def _sqlite_header(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` begins as a SQLite database does (one that then fails to read is damaged)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:
        return False


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``, or None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def store_written(path: str | os.PathLike[str]) -> tuple[int, bool]:
    """The answers RunStores of this process wrote to the store file at ``path``, and whether that file is gone.

    Gone: deleted or replaced by another file since (then those answers are lost with it).
    ``(0, False)`` for a path no RunStore of this process wrote to.

    Examples
    --------
    >>> store_written("never-written.sqlite")
    (0, False)
    """
    written = _WRITTEN.get(os.path.abspath(path))
    if written is None:
        return 0, False
    identity, n, gone = written
    return n, gone or _identity(path) != identity


class RunStore(Closing):
    """A SQLite run store in WAL mode; a context manager. Parent folders are created.

    Raises
    ------
    StoreError
        When the path cannot be created or opened, is not a fairtalk store or is damaged
        (an existing store fails SQLite's ``PRAGMA quick_check``), a read or write fails, or
        the file was deleted or replaced while the store was open (checked at each write).
    SpecError
        When ``path`` is not a str or os.PathLike (None, a number).
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        given = path_argument(path, "RunStore: path")
        self.path = Path(given)
        self._run_ids: dict[tuple[str, str], int] = {}
        #: Answers (successes) this store wrote, and the file it opened (None in memory).
        self.n_written = 0
        self._opened: tuple[int, int] | None = None
        self._key = os.path.abspath(self.path)
        if self.path.is_dir():
            raise StoreError(f"{self.path}: {_MSG_IS_DIR}")
        if given.endswith(("/", os.sep)):  # "runs/": a folder to be, which SQLite would make a file named "runs"
            raise StoreError(f"{given}: {_MSG_FOLDER_NAME}")
        try:
            check_regular(self.path)  # a device or a FIFO: SQLite would write into it, or wait on it forever
        except OutputError as exc:
            raise StoreError(f"{self.path}: " + _MSG_OPEN.format(error=exc.message)) from None
        existing = str(self.path) != ":memory:" and self.path.is_file() and self.path.stat().st_size > 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db: sqlite3.Connection | None = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: " + _MSG_OPEN.format(error=exc)) from exc
        try:
            self._identify(existing)  # read only: another program's database is refused unchanged
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
            for name, kind in _ADDED_COLUMNS:
                if name not in columns:
                    self._db.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")
            self._db.executescript(_VIEW)
            self._check_version()
            self._opened = None if str(self.path) == ":memory:" else _identity(self.path)
            self._register()
        except sqlite3.Error as exc:
            self._db.close()
            self._db = None
            raise StoreError(f"{self.path}: " + _MSG_OPEN.format(error=exc)) from exc
        except StoreError:
            self._db.close()
            self._db = None
            raise

    def _identify(self, existing: bool) -> None:
        """StoreError, before anything is written, for a file that is not a fairtalk store this fairtalk may write.

        Read only: another program's database (other tables, or fairtalk's table names with
        other columns), a damaged store, one of another schema version, and one holding answers
        without a version are refused as they are. A store written before a column of
        :data:`_ADDED_COLUMNS` existed passes (opening adds the column); so does one holding no
        table yet, or only some of fairtalk's tables, all empty (its creation under way, or cut short).
        """
        try:
            found = {name for (name,) in self.db.execute(_TABLES)}
        except sqlite3.DatabaseError as exc:  # a truncated store: "database disk image is malformed"
            if existing and _sqlite_header(self.path):
                raise StoreError(f"{self.path}: " + _MSG_DAMAGED.format(problem=" ".join(str(exc).split()))) from None
            raise
        if existing:
            self._check_intact()
        if not found:
            return
        expected = _schema_columns()
        if not found <= set(expected) or "meta" not in found:
            raise StoreError(f"{self.path}: " + _MSG_NOT_STORE.format(tables=", ".join(sorted(found)[:5])))
        for table in sorted(found, key=list(expected).index):  # meta first: its version row is read next
            columns = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            added = {name for name, _ in _ADDED_COLUMNS} if table == "responses" else set()
            if not expected[table] <= columns <= expected[table] | added:
                listed = ", ".join(sorted(columns)[:8])
                raise StoreError(f"{self.path}: " + _MSG_NOT_STORE_COLUMNS.format(table=table, columns=listed))
            if table == "meta":
                self._check_version_row()
        rows = any(self.db.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0] for table in sorted(found))
        if rows and found != set(expected):
            raise StoreError(f"{self.path}: " + _MSG_NOT_STORE.format(tables=", ".join(sorted(found))))
        if rows and self._version_row() is None:
            raise StoreError(f"{self.path}: " + _MSG_NO_VERSION.format(expected=SCHEMA_VERSION))

    def _version_row(self) -> tuple[str] | None:
        """The store's ``schema_version`` row of ``meta``, None when it has none."""
        row: tuple[str] | None = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return row

    def _check_version_row(self) -> None:
        """StoreError for a version row that names a version other than :data:`SCHEMA_VERSION` (none passes here)."""
        row = self._version_row()
        if row is not None and row[0] != str(SCHEMA_VERSION):
            raise StoreError(f"{self.path}: " + _MSG_VERSION.format(found=row[0], expected=SCHEMA_VERSION))

    def _check_intact(self) -> None:
        """StoreError for an existing store SQLite finds damaged (``PRAGMA quick_check``): never written into, nor read."""
        try:
            problems = [row[0] for row in self.db.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as exc:  # "database disk image is malformed", before the check could run
            problems = [str(exc)]
        if problems != ["ok"]:
            raise StoreError(f"{self.path}: " + _MSG_DAMAGED.format(problem="; ".join(" ".join(p.split()) for p in problems)))

    def _register(self) -> None:
        """Count this store's answers under its file (:func:`store_written`): a file other than the one counted starts anew."""
        self._key = os.path.abspath(self.path)
        if self._opened is None:
            return
        written = _WRITTEN.get(self._key)
        if written is None or written[0] != self._opened or written[2]:
            _WRITTEN[self._key] = (self._opened, 0, False)

    def in_place(self) -> bool:
        """Whether the store's file is still the one it opened (True in memory): not deleted nor replaced since."""
        return self._opened is None or _identity(self.path) == self._opened

    def _check_in_place(self) -> None:
        """StoreError when the store's file was deleted or replaced since it was opened (its answers went with it)."""
        if not self.in_place():
            lost = _MSG_GONE_LOST.format(n=self.n_written) if self.n_written else _MSG_GONE_NONE
            raise StoreError(f"{self.path}: " + _MSG_GONE.format(lost=lost))

    def _check_version(self) -> None:
        """Stamp a store that holds nothing yet with this schema version; StoreError for any other version, or none.

        A store without a version row but with runs or answers is refused: something removed the
        row, and what wrote those rows cannot be told. One with fairtalk's tables and nothing in
        them is stamped: a new file another run is creating at this moment, or whose creation a
        kill cut short, holds nothing that could be misread.
        """
        db = self.db
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            if db.execute("SELECT EXISTS (SELECT 1 FROM runs) OR EXISTS (SELECT 1 FROM responses)").fetchone()[0]:
                raise StoreError(f"{self.path}: " + _MSG_NO_VERSION.format(expected=SCHEMA_VERSION))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None or row[0] != str(SCHEMA_VERSION):
            found = "none" if row is None else row[0]
            raise StoreError(f"{self.path}: " + _MSG_VERSION.format(found=found, expected=SCHEMA_VERSION))

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
            (found,) = self.db.execute("SELECT run_id FROM runs WHERE fingerprint = ? AND settings_hash = ?", key).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc
        self._run_ids[key] = int(found)
        return int(found)

    def lookup(self, run_id: int, keys: Sequence[tuple[bytes, int]]) -> dict[tuple[bytes, int], str]:
        """Return the stored successful responses among ``keys`` (``(context_hash, seed)`` pairs).

        A response whose finish reason or served model was stored comes back as a
        :class:`~fairtalk.models.Reply` (its ``finish_reason`` and ``model``).
        """
        return self.lookup_outcomes(run_id, keys)[0]

    def lookup_outcomes(
        self, run_id: int, keys: Sequence[tuple[bytes, int]]
    ) -> tuple[dict[tuple[bytes, int], str], dict[tuple[bytes, int], str]]:
        """The stored successes among ``keys`` (as :meth:`lookup`), and the kind each stored failure among them failed with.

        A failure's kind is its error's class name, what its message begins with
        (``"ResponderError: ..."`` gives ``"ResponderError"``): the kind it would fail with again.
        """
        wanted = set(keys)
        found: dict[tuple[bytes, int], str] = {}
        failed: dict[tuple[bytes, int], str] = {}
        try:
            if not wanted or self.db.execute("SELECT 1 FROM responses WHERE run_id = ? LIMIT 1", (run_id,)).fetchone() is None:
                return found, failed  # a fresh run: nothing to look up
            hashes = sorted({h for h, _ in wanted})
            for start in range(0, len(hashes), _LOOKUP_CHUNK):
                chunk = hashes[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self.db.execute(
                    "SELECT context_hash, seed, response, finish_reason, served_model, error FROM responses WHERE run_id = ?"
                    f" AND context_hash IN ({marks})",
                    (run_id, *chunk),
                )
                for h, seed, response, reason, served, error in rows:
                    if (h, seed) not in wanted:
                        continue
                    if error is not None:
                        failed[(h, seed)] = error.partition(":")[0]
                    elif reason is None and served is None:
                        found[(h, seed)] = response
                    else:
                        found[(h, seed)] = Reply(response, reason, served)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc
        return found, failed

    def write(self, run_id: int, rows: Sequence[tuple[bytes, int, str, str | None, str | None]]) -> None:
        """Commit ``(context_hash, seed, context, response, error)`` rows in one transaction.

        A response that is a :class:`~fairtalk.models.Reply` also stores its finish reason and the
        model its server said answered (``model``). Rows
        go :data:`ROWS_PER_STATEMENT` to a statement (then 32, 16, ... for the rest), applied in
        order as one statement per row would be: a later row for the same key replaces an error.
        """
        now = time.time()
        params: list[object] = []
        for h, seed, ctx, resp, err in rows:
            text = None if resp is None else str(resp)
            params += (run_id, h, seed, ctx, text, err, now, finish_reason(resp), _served_model(resp))
        db = self.db
        self._check_in_place()  # one stat per commit: answers written into a deleted file would be lost unsaid
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                start, n_rows = 0, len(rows)
                while start < n_rows:
                    size = min(ROWS_PER_STATEMENT, 1 << ((n_rows - start).bit_length() - 1))
                    db.execute(_upsert(size), params[_N_PARAMS * start : _N_PARAMS * (start + size)])
                    start += size
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc
        n_answers = sum(1 for row in rows if row[4] is None)
        self.n_written += n_answers
        written = _WRITTEN.get(self._key)
        if self._opened is not None and written is not None and written[0] == self._opened:
            _WRITTEN[self._key] = (self._opened, written[1] + n_answers, written[2])

    def count(self, fingerprint: str | None = None, *, errors: bool = False) -> int:
        """Number of stored successes (or, with ``errors=True``, failures), optionally for one model."""
        where = "error IS NOT NULL" if errors else "error IS NULL"
        sql, args = f"SELECT COUNT(*) FROM responses WHERE {where}", tuple[str, ...]()
        if fingerprint is not None:
            sql += " AND run_id IN (SELECT run_id FROM runs WHERE fingerprint = ?)"
            args = (fingerprint,)
        try:
            return int(self.db.execute(sql, args).fetchone()[0])
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc

    def iter_responses(self, fingerprint: str | None = None) -> Iterator[StoredResponse]:
        """Yield stored rows (successes and errors), optionally for one model."""
        sql, args = "SELECT * FROM responses_view", tuple[str, ...]()
        if fingerprint is not None:
            sql, args = sql + " WHERE fingerprint = ?", (fingerprint,)
        try:
            for row in self.db.execute(sql, args):
                yield StoredResponse(*row)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: " + _MSG_SQL.format(error=exc)) from exc

    def close(self) -> None:
        """Close the connection (idempotent); a file found deleted or replaced is recorded so (:func:`store_written`)."""
        if self._db is not None:
            written = _WRITTEN.get(self._key)
            if written is not None and written[0] == self._opened and not self.in_place():
                _WRITTEN[self._key] = (written[0], written[1], True)
            self._db.close()
            self._db = None

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"
