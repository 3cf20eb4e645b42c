"""Who has a run store open: every fairtalk run holds a shared lock on the store's folder while it has the store open.

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
import fcntl
import logging
import os
from pathlib import Path

__all__ = ["StoreHold"]

_LOG = logging.getLogger(__name__)
#: How often an opener tries again when the folder it locked was removed meanwhile (by a run removing its empty store).
_ATTEMPTS = 20


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
