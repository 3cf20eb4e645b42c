"""Who holds what: a shared lock on a run store's folder while a run has the store open, and an output's lock.

**Outputs.** Two commands given one output (``audit -o OUT`` twice at once, ``respond -o FILE``)
would each write it, and the last swap would win: one run's results lost although it said where
they were, or a folder holding parts of both. So a command holds an exclusive ``flock`` on each
output it writes, from its check before any work (:func:`hold_output`, called by
:func:`~fairtalk.files.check_output_folder` and :func:`~fairtalk.files.check_output_file`) to
its end (:func:`output_scope`, one per CLI command and per :func:`fairtalk.audit` call). A second
command given an output that another fairtalk process holds stops there with an OutputError
naming that process' pid. The lock is a file beside the output, ``.NAME.fairtalk-lock`` (the
folders it lives in are made if missing, and removed again if still empty); it is removed when
the command ends. One that a kill left behind is harmless: the kernel let go of its lock with
the process, and the next command takes it. Outside a scope (a library call of a check alone)
the check only asks whether another process (or thread) holds the output, and holds nothing.

**Threads.** A hold belongs to the thread that took it, not to its whole process: two threads of
one process (two :func:`fairtalk.audit` calls given one ``out_dir``) are two runs, and the second
is refused as a second process is, with the same OutputError (naming this process' pid), never
let in beside the first. A thread's own holds nest: an output it holds already (an inner step
checking its call's folder again) passes. Each thread has its own scopes, so a hold goes to the
innermost scope of the thread that takes it.

**Nested outputs.** An output inside another run's output (``--junit A/index.html`` or ``-o
A/nested`` while a run writes ``-o A``), or one holding another run's output (``-o A`` while a
run writes ``A/nested``), would mix two runs' files: one run's folder swap then fails, or holds
the other's files. So each held output is also listed in a small registry of this user's
outputs, a folder in the temporary folder (:func:`registry_folder`): one entry per held output,
a file that its holder keeps under an exclusive ``flock`` and that names the holder's pid and the
output's path. Before taking an output, a command looks through the live entries (those locked:
a killed holder's entry is unlocked, and removed by the next command that looks) and stops with
an OutputError naming the holder's pid and its output when one is inside this output, or holds
it. The look and the listing happen under one more lock (the registry's ``.guard``), so of two
commands starting at once, one sees the other. A call's own outputs (those its thread holds)
are never in its way here; those another thread of this process holds are, as another process'
are. Outputs are compared where they really are (links resolved).

**Stores.**

A run that created a store file and stored nothing in it removes the file when it stops
(:func:`fairtalk.run` does, on Ctrl-C or an error before the first answer). Another run may have
the same file open by then (two runs given one new ``--store``): removing it would lose every
answer that run goes on to store, in a file no folder lists any more. So each run holds a
:class:`StoreHold` while it has a store file open: a shared ``flock`` on the store's folder,
taken before the store is opened. The run that would remove the file first turns its hold
exclusive without waiting; it removes the file only when that succeeds, that is when no other
fairtalk run holds a store of that folder open, and keeps it otherwise. A run that opens a store
while another removes one there waits for the removal, then opens (or creates) the file anew.

The lock is on the folder, not on the database file: SQLite's own (POSIX) locks on the file
would be dropped when this process closed any other descriptor of it. Programs other than
fairtalk (the ``sqlite3`` shell) take no hold: keep them off a store while a run starts.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from fairtalk.errors import OutputError

__all__ = [
    "LOCK_SUFFIX",
    "StoreHold",
    "hold_output",
    "is_lock_file",
    "output_lock_path",
    "output_scope",
]

_LOG = logging.getLogger(__name__)
#: How often an opener tries again when the folder it locked was removed meanwhile (by a run removing its empty store).
_ATTEMPTS = 20
#: The end of an output's lock file's name: ``.NAME.fairtalk-lock`` beside the output NAME.
LOCK_SUFFIX = ".fairtalk-lock"
_MSG_BUSY = "{target} is being written by another fairtalk run{pid}; wait for it or give another {option}"
_MSG_INSIDE = (
    "{target} is inside {other}, which another fairtalk run (pid {pid}) is writing; wait for it or give another {option}"
)
_MSG_HOLDS = "{target} holds {other}, which another fairtalk run (pid {pid}) is writing; wait for it or give another {option}"
#: The registry's lock, taken while a command looks through the entries and adds its own.
_GUARD_NAME = ".guard"
_ENTRY_NUMBERS = itertools.count()


class StoreHold:
    """A shared lock on a store file's folder, held while the store is open (see the module's docstring).

    ``path`` None or ``":memory:"``: a store in memory, which nothing else can open: the hold is empty.
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = None if path is None or str(path) == ":memory:" else Path(path)
        self._fd: int | None = None

    def acquire(self) -> StoreHold:
        """Make the store's folder (with its parents) and lock it shared; waits while a run removes a store there.

        A folder that cannot be made or opened is left alone (no hold): opening the store then says what is wrong.
        """
        if self.path is None or self._fd is not None:
            return self
        folder = self.path.parent
        for _ in range(_ATTEMPTS):
            try:
                folder.mkdir(parents=True, exist_ok=True)
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            except OSError as exc:
                _LOG.debug("no hold on %s: %s", folder, exc)
                return self
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
                if os.path.samestat(os.fstat(fd), os.stat(folder)):  # not removed while this run waited
                    self._fd = fd
                    return self
            except OSError as exc:
                _LOG.debug("folder %s changed while locking it: %s", folder, exc)
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        return self

    @property
    def held(self) -> bool:
        """Whether this run holds the lock (shared or exclusive)."""
        return self._fd is not None

    def alone(self) -> bool:
        """Turn the hold exclusive without waiting: True when no other fairtalk run has a store of this folder open.

        False when another run holds it, or this run holds no lock; a failed attempt may leave this run without one.
        """
        if self._fd is None:
            return False
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            _LOG.debug("another run has a store in %s open", None if self.path is None else self.path.parent)
            return False
        return True

    def release(self) -> None:
        """Let go of the lock (closing the folder's descriptor); again: nothing."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> StoreHold:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def output_lock_path(target: str | os.PathLike[str]) -> Path:
    """The lock file of an output (a file or a folder): ``.NAME.fairtalk-lock`` beside it, where it really is (links resolved)."""
    try:
        place = Path(target).resolve()
    except (OSError, RuntimeError):  # a loop of links
        place = Path(os.path.abspath(target))
    return place.parent / f".{place.name}{LOCK_SUFFIX}"


def is_lock_file(name: str) -> bool:
    """Whether an entry's name is that of an output's lock file (never the user's, never part of a run's outputs)."""
    base = name.rsplit("/", 1)[-1]
    return base.startswith(".") and base.endswith(LOCK_SUFFIX) and len(base) > len(LOCK_SUFFIX) + 1


class _Held:
    """An output lock one thread of this process holds: the lock file's descriptor, the folders made, its registry entry."""

    __slots__ = ("entry", "fd", "made", "owner", "path", "shown", "where")

    def __init__(self, path: Path, fd: int, made: list[Path]) -> None:
        self.path, self.fd, self.made = path, fd, made
        self.entry: tuple[Path, int] | None = None
        #: The thread that holds it (its ident), and the output: where it really is, and its path as given, made absolute.
        self.owner = threading.get_ident()
        self.where, self.shown = Path(), ""

    def release(self) -> None:
        """Remove the lock file (still held: no other process can take it meanwhile), let go, remove the folders made."""
        with contextlib.suppress(OSError):
            if os.path.samestat(os.fstat(self.fd), os.stat(self.path)):
                os.unlink(self.path)
        with contextlib.suppress(OSError):
            os.close(self.fd)
        _remove_folders(self.made)
        if self.entry is not None:
            entry, self.entry = self.entry, None
            _drop_entry(*entry)


_GUARD = threading.Lock()
#: The output locks this process holds (by lock file, each with its thread), and each thread's open scopes (by the
#: thread's ident), innermost last, with the locks each took.
_HELD: dict[Path, _Held] = {}
_SCOPES: dict[int, list[list[Path]]] = {}


@contextlib.contextmanager
def output_scope() -> Iterator[None]:
    """Hold the outputs :func:`hold_output` locks within the block until it ends (a command's life); nests.

    A lock an outer scope holds already is kept by it; the others are let go (their lock files
    removed) when this block ends, however it ends.
    """
    mine: list[Path] = []
    thread = threading.get_ident()
    with _GUARD:
        _SCOPES.setdefault(thread, []).append(mine)
    try:
        yield
    finally:
        with _GUARD:
            scopes = _SCOPES.get(thread, [])
            for i in range(len(scopes) - 1, -1, -1):
                if scopes[i] is mine:
                    del scopes[i]
                    break
            if not scopes:
                _SCOPES.pop(thread, None)
            for path in reversed(mine):
                held = _HELD.pop(path, None)
                if held is not None:
                    held.release()


def hold_output(target: str | os.PathLike[str], *, option: str = "-o") -> None:
    """Lock the output ``target`` for the innermost :func:`output_scope`; OutputError when another process holds it.

    The error names the holder's pid and ``option`` (what to give instead). Re-entrant per
    thread: an output this thread holds already passes; one another thread of this process
    holds is refused as one another process holds (its pid: this process'), and so is an output
    inside one another thread holds, or holding one. Outside any scope of this thread, it only
    checks (and holds nothing). A lock file that cannot be made (a read-only folder) takes no
    lock: writing the output then says what is wrong.
    """
    path = output_lock_path(target)
    thread = threading.get_ident()
    with _GUARD:
        if path in _HELD:
            if _HELD[path].owner == thread:
                return
            raise OutputError(_MSG_BUSY.format(target=os.fspath(target), pid=f" (pid {os.getpid()})", option=option))
        _check_threads(target, option)
        with _registry() as registry:
            if registry is not None:
                _check_nesting(registry, target, option)
            held = _take(path, target, option)
            if held is None:
                return
            scopes = _SCOPES.get(thread)
            if scopes:
                held.where, held.shown = _where(target), os.path.abspath(target)
                if registry is not None:
                    held.entry = _add_entry(registry, target)
                _HELD[path] = held
                scopes[-1].append(path)
            else:
                held.release()


def registry_folder() -> Path:
    """The folder listing the outputs this user's fairtalk commands hold (see the module's docstring)."""
    return Path(tempfile.gettempdir()) / f"fairtalk-outputs-{os.getuid()}"


@contextlib.contextmanager
def _registry() -> Iterator[Path | None]:
    """Hold the registry's guard for the block: its folder, or None when it cannot be made or locked (no nesting check)."""
    folder = registry_folder()
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        if folder.is_symlink() or folder.stat().st_uid != os.getuid():  # not this user's: another user's made it
            raise OSError(errno.EPERM, "not this user's folder")
        fd = os.open(folder / _GUARD_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        _LOG.debug("no registry of outputs at %s: %s", folder, exc)
        fd = -1
    if fd < 0:
        yield None
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for a look and a listing only: brief
        yield folder
    finally:
        os.close(fd)


def _where(target: str | os.PathLike[str]) -> Path:
    """Where an output really is (links resolved), for comparing outputs."""
    try:
        return Path(target).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(target))


def _shown(place: str) -> str:
    """An output's path as a message shows it: relative to the current folder when inside it, else whole."""
    try:
        rel = os.path.relpath(place)
    except ValueError:
        return place
    return place if rel.startswith("..") else rel


def _check_threads(target: str | os.PathLike[str], option: str) -> None:
    """OutputError when another thread of this process holds an output inside ``target`` or one holding it (under the guard)."""
    mine, thread = _where(target), threading.get_ident()
    for held in _HELD.values():
        if held.owner == thread:
            continue
        if held.where in mine.parents:
            message = _MSG_INSIDE
        elif mine in held.where.parents:
            message = _MSG_HOLDS
        else:
            continue
        raise OutputError(message.format(target=os.fspath(target), other=_shown(held.shown), pid=os.getpid(), option=option))


def _check_nesting(registry: Path, target: str | os.PathLike[str], option: str) -> None:
    """OutputError when another process holds an output inside ``target`` or one holding it; removes dead entries.

    This process' own entries are skipped: :func:`_check_threads` compares those, by thread.
    """
    mine = _where(target)
    for pid, other, shown in _live_entries(registry):
        if pid == os.getpid():
            continue
        if other in mine.parents:
            message = _MSG_INSIDE
        elif mine in other.parents:
            message = _MSG_HOLDS
        else:
            continue
        raise OutputError(message.format(target=os.fspath(target), other=_shown(shown), pid=pid, option=option))


def _live_entries(registry: Path) -> Iterator[tuple[int, Path, str]]:
    """The registry's live entries (pid, where the output is, its path as given, made absolute); removes dead ones."""
    try:
        names = sorted(os.listdir(registry))
    except OSError:
        return
    for name in names:
        if name == _GUARD_NAME:
            continue
        entry = registry / name
        try:
            fd = os.open(entry, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        try:
            found = _read_entry(entry, fd)
        finally:
            os.close(fd)
        if found is not None:
            yield found


def _read_entry(entry: Path, fd: int) -> tuple[int, Path, str] | None:
    """A registry entry's holder and output while its holder lives; None (and the entry removed) once it died."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
    else:  # nobody holds it: its holder was killed (or is letting go)
        with contextlib.suppress(OSError):
            os.unlink(entry)
        return None
    try:
        lines = os.pread(fd, 65536, 0).decode("utf-8", "replace").split("\n")
    except OSError:
        return None
    if len(lines) < 3 or not lines[0].isdigit():
        return None
    return int(lines[0]), Path(lines[1]), lines[2]


def _add_entry(registry: Path, target: str | os.PathLike[str]) -> tuple[Path, int] | None:
    """List an output this process now holds (under the registry's guard); None when the entry cannot be made."""
    entry = registry / f"{os.getpid()}-{next(_ENTRY_NUMBERS)}"
    try:
        fd = os.open(entry, os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        _LOG.debug("output %s not listed: %s", target, exc)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"{os.getpid()}\n{_where(target)}\n{os.path.abspath(target)}\n".encode())
    except OSError as exc:
        _LOG.debug("output %s not listed: %s", target, exc)
        _drop_entry(entry, fd)
        return None
    return entry, fd


def _drop_entry(entry: Path, fd: int) -> None:
    """Remove a registry entry this process made (still locked: nobody takes it for dead meanwhile), then let go."""
    with contextlib.suppress(OSError):
        os.unlink(entry)
    with contextlib.suppress(OSError):
        os.close(fd)


def _remove_folders(made: list[Path]) -> None:
    """Remove the folders made for a lock file, deepest first; one that holds anything now stays, with those above it."""
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            break


def _make_folders(folder: Path) -> list[Path]:
    """Make ``folder`` with its parents; the folders made, deepest first."""
    made: list[Path] = []
    place = folder
    while not place.exists() and not place.is_symlink() and place != place.parent:
        made.append(place)
        place = place.parent
    folder.mkdir(parents=True, exist_ok=True)
    return made


def _take(path: Path, target: str | os.PathLike[str], option: str) -> _Held | None:
    """Lock ``path`` exclusively without waiting; None when no lock can be made; OutputError when another holds it."""
    for _ in range(_ATTEMPTS):
        made: list[Path] = []
        try:
            made = _make_folders(path.parent)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as exc:
            _LOG.debug("no lock on %s: %s", target, exc)
            _remove_folders(made)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid = _holder(fd) if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES) else None
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                _LOG.debug("no lock on %s: %s", target, exc)
                return None
            shown = "" if pid is None else f" (pid {pid})"
            raise OutputError(_MSG_BUSY.format(target=os.fspath(target), pid=shown, option=option)) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except OSError:
            same = False
        if same:  # not removed by the run that let go of it while this one opened it
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            return _Held(path, fd, made)
        os.close(fd)
    return None


def _holder(fd: int) -> int | None:
    """The pid the holder of a lock file wrote in it; None when it has not written it yet."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
