"""Writing outputs safely: atomic files, staged folders swapped in whole, and never over an input.

Every file fairtalk writes goes through here, so that a kill or a full disk never leaves a
truncated or empty output, and a run's folder never mixes two runs:

- :func:`atomic_writer` writes to a temporary file in the target's folder, flushes and
  fsyncs it, then renames it over the target; on any error the temporary file is removed
  and the old target is untouched.
- :func:`staged_folder` gives a hidden folder beside the outputs; everything of one run is
  written there first, and :func:`commit_staged` swaps the entries in by renames (the old
  entries go to a trash folder that is removed afterwards). Leftovers of a crashed process
  are cleaned up by the next run.
- :func:`check_not_input` refuses an output that resolves to one of the run's inputs, and
  :func:`check_outside` refuses inputs that live inside an entry a run would replace.

``OSError`` becomes :class:`~fairtalk.errors.OutputError` naming the path and the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from fairtalk.errors import OutputError

__all__ = [
    "atomic_writer",
    "check_not_input",
    "check_outside",
    "commit_staged",
    "discard_staged",
    "ensure_folder",
    "same_file",
    "staged",
    "staged_folder",
    "write_text_atomic",
]

STAGING_PREFIX = ".fairtalk-staging-"
TRASH_PREFIX = ".fairtalk-old-"
_MSG_WRITE = "cannot write ({reason})"
_MSG_IS_INPUT = "{option} {path} is also the input {name}; it would be overwritten (write the output elsewhere)"
_MSG_INSIDE = "{name} {path} lies inside {entry}, which this run replaces; move it or write the output elsewhere"
_MSG_NOT_FOLDER = "is a file, not a folder (give a folder for the report)"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same file (the same inode when both exist, else the same resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def check_not_input(output: str | os.PathLike[str], inputs: dict[str, Any], *, option: str = "-o") -> None:
    """Raise OutputError if ``output`` is one of ``inputs`` (a name -> path mapping; None paths are skipped)."""
    for name, path in inputs.items():
        if path is not None and same_file(output, path):
            raise OutputError(_MSG_IS_INPUT.format(option=option, path=output, name=name))


def check_outside(folder: str | os.PathLike[str], entries: Iterable[str], inputs: dict[str, Any]) -> None:
    """Raise OutputError if an input lies at or under ``folder/entry`` for an entry a run replaces."""
    base = Path(folder).resolve()
    for entry in entries:
        replaced = base / entry
        for name, path in inputs.items():
            if path is None:
                continue
            resolved = Path(path).resolve()
            if resolved == replaced or resolved.is_relative_to(replaced):
                raise OutputError(_MSG_INSIDE.format(name=name, path=path, entry=replaced))


def ensure_folder(folder: str | os.PathLike[str]) -> Path:
    """Create ``folder`` with its parents; a file in the way or an OS error is an OutputError."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise OutputError(_MSG_NOT_FOLDER, path=str(path))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(path)) from exc
    return path


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, binary: bool = False, newline: str | None = "\n") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path`` atomically.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_writer(target) as handle:
    ...     _ = handle.write("done\\n")
    >>> target.read_text()
    'done\\n'
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(_MSG_WRITE.format(reason="it is a folder"), path=str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = "a part of its folder path is a file" if isinstance(exc, FileExistsError | NotADirectoryError) else _reason(exc)
        raise OutputError(_MSG_WRITE.format(reason=reason), path=str(target)) from exc
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(target)) from exc
    try:
        mode = "wb" if binary else "w"
        kwargs: dict[str, Any] = {} if binary else {"encoding": "utf-8", "newline": newline}
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(target)) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str, *, newline: str | None = "\n") -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path."""
    with atomic_writer(path, newline=newline) as handle:
        handle.write(text)
    return Path(path)


def _owner_alive(name: str, prefix: str) -> bool:
    """Whether the process that made a staging/trash folder (pid in its name) still runs."""
    pid_text = name[len(prefix):].split("-", 1)[0]
    if not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove_leftovers(folder: Path) -> None:
    """Remove staging and trash folders left by a crashed fairtalk process."""
    for entry in folder.iterdir():
        for prefix in (STAGING_PREFIX, TRASH_PREFIX):
            if entry.name.startswith(prefix) and entry.is_dir() and not _owner_alive(entry.name, prefix):
                shutil.rmtree(entry, ignore_errors=True)


def staged_folder(folder: str | os.PathLike[str]) -> Path:
    """A new hidden staging folder inside ``folder`` (created), for outputs swapped in by :func:`commit_staged`."""
    parent = ensure_folder(folder)
    try:
        _remove_leftovers(parent)
        return Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=parent))
    except OSError as exc:
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(parent)) from exc


def discard_staged(staging: Path) -> None:
    """Remove a staging folder after a failed write (the outputs in place stay as they were)."""
    shutil.rmtree(staging, ignore_errors=True)


def commit_staged(staging: Path, folder: str | os.PathLike[str], *, displace: Iterable[str] = (),
                  last: Iterable[str] = ()) -> None:  # fmt: skip
    """Move every entry of ``staging`` into ``folder``, replacing what is there; then remove ``staging``.

    ``displace`` names old entries to remove although the new run has none of that name (an
    earlier run's axis folder); ``last`` names entries moved in after all others (the index).
    Each move is a rename, so the swap takes microseconds; a crash in between leaves the new
    entries and the trash folder, which the next run removes.
    """
    target = Path(folder)
    late = tuple(last)
    names = sorted((p.name for p in staging.iterdir()), key=lambda n: (n in late, late.index(n) if n in late else 0, n))
    try:
        trash = Path(tempfile.mkdtemp(prefix=f"{TRASH_PREFIX}{os.getpid()}-", dir=target))
        for name in sorted(set(displace) - set(names)):
            if (target / name).exists() or (target / name).is_symlink():
                os.replace(target / name, trash / name)
        for name in names:
            dest, source = target / name, staging / name
            if (dest.exists() or dest.is_symlink()) and (source.is_dir() or (dest.is_dir() and not dest.is_symlink())):
                os.replace(dest, trash / name)  # a folder is swapped whole; a file replaces a file in one rename
            os.replace(source, dest)
    except OSError as exc:
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(target)) from exc
    shutil.rmtree(trash, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def staged(folder: str | os.PathLike[str], *, displace: Iterable[str] = (), last: Iterable[str] = ()) -> Iterator[Path]:
    """Yield a staging folder inside ``folder``; on success its entries replace those in ``folder``.

    On an error nothing in ``folder`` changes and the staging folder is removed.
    """
    staging = staged_folder(folder)
    try:
        yield staging
    except BaseException:
        discard_staged(staging)
        raise
    try:
        commit_staged(staging, folder, displace=displace, last=last)
    except BaseException:
        discard_staged(staging)
        raise
