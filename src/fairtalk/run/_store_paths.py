"""The run store a generation opens: in memory or a file, and the file and folders to remove when a run created them and stored nothing (and no other run has the file open)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from fairtalk.errors import FairtalkError
from fairtalk.files import StoreHold
from fairtalk.store import RunStore

__all__ = ["holds_nothing", "new_paths", "open_store", "remove_new_store"]

_LOG = logging.getLogger(__name__)


def open_store(store: str | os.PathLike[str] | RunStore | None) -> tuple[RunStore, bool]:
    """The run store (in memory when None) and whether the caller owns (must close) it."""
    if isinstance(store, RunStore):
        return store, False
    return RunStore(":memory:" if store is None else store), True


def new_paths(store: str | os.PathLike[str] | RunStore | None) -> tuple[Path, ...]:
    """The store file and the folders above it that do not exist yet (none for a store that exists or is not a file)."""
    if not isinstance(store, (str, os.PathLike)) or str(store) == ":memory:":
        return ()
    path = Path(store)
    missing: list[Path] = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return tuple(missing)


def holds_nothing(store: RunStore) -> bool:
    """Whether the store holds no answer and no error (False when it cannot be read: then it is kept)."""
    try:
        return store.count() == 0 and store.count(errors=True) == 0
    except FairtalkError:
        return False


def remove_new_store(created: Sequence[Path], hold: StoreHold, *, file: bool = True) -> None:
    """Remove a store file this run created (with its WAL and journal files), then the folders it created, if empty.

    The file only when no other fairtalk run has a store of its folder open (:meth:`StoreHold.alone`):
    two runs given one new ``--store`` share the file, and the one that stops first must not take
    the other's answers with it; nor without a hold (its folder could not be locked). ``file``
    False: the folders only, when empty (a store that could not open may be another run's).
    """
    if not created:
        return
    store, folders = created[0], created[1:]
    if file and store.exists():
        if not hold.alone():
            _LOG.debug("kept %s: another run has it open", store)
            return
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                store.with_name(store.name + suffix).unlink(missing_ok=True)
    for folder in folders:  # deepest first
        try:
            folder.rmdir()
        except OSError:
            _LOG.debug("kept %s: not empty", folder)
            return
