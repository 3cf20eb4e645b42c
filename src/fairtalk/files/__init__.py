"""Writing outputs safely: atomic files, staged folders swapped in whole, and never over an input.

Every file fairtalk writes goes through here, so that a kill or a full disk never leaves a
truncated or empty output, and a run's folder never mixes two runs:

- :func:`atomic_writer` writes to a temporary file in the target's folder, flushes and
  fsyncs it, then renames it over the target; on any error the temporary file is removed
  and the old target is untouched. The temporary file names the writer's pid, and the next
  write of the same target removes those a killed writer left. It refuses a target that is not a regular file (a device,
  a FIFO, a socket): a rename would replace the node itself (:func:`check_regular`).
- :func:`check_output_file` is the rule of every single output file (``-o FILE``, ``--junit``):
  never an input, never another output of the same run, never a device, and never an existing
  file fairtalk does not recognise as its own output of that kind; :func:`append_text` appends
  to a file another program owns (a CI job summary) without ever blocking (see ``_single.py``).
- :func:`staged_folder` gives a hidden folder beside the outputs; everything of one run is
  written there first, and :func:`commit_staged` swaps the entries in by renames (the old
  entries go to a trash folder that is removed afterwards). An error midway undoes the swap;
  a kill midway is undone by the next run (:func:`recover_folder`), which also removes the
  leftovers of a crashed process.
- :func:`check_default_output` refuses to replace, at a place the user did not name (a default
  ``-o``), a file that is not of the kind fairtalk writes there.
- :func:`check_not_input` refuses an output that resolves to one of the run's inputs, and
  :func:`check_outside` refuses inputs that live inside an entry a run would replace.
- A run replaces only what fairtalk wrote: each swap leaves :data:`WRITTEN` in the folder, the
  list of what fairtalk's swaps put there, and refuses to replace anything it does not list
  (see ``_owned.py``). :func:`check_output_folder` makes that check before any work, and
  refuses the file system's root, the home folder and a folder holding one of the inputs, and
  :func:`check_output_name` an output given as ``-`` or a quoted ``~`` (no file of that name is made).
- :class:`StoreHold` is held by every run while it has a run store file open, so that a run never
  removes an empty store file another run has open; :func:`hold_output` locks an output for the
  command's :func:`output_scope`, so that two commands (two processes, or two threads of one) never write one
  output at once (see ``_holders.py``).

``OSError`` becomes :class:`~fairtalk.errors.OutputError` naming the path and the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from fairtalk.errors import OutputError
from fairtalk.files._holders import StoreHold, hold_output, is_lock_file, output_lock_path, output_scope
from fairtalk.files._inputs import check_not_input, same_file
from fairtalk.files._owned import (
    FOLDER_KINDS,
    WRITTEN,
    check_folder_kind,
    check_not_in_run,
    check_output_name,
    check_owned,
    check_place,
    mark_written,
    written_files,
)
from fairtalk.files._owned import present as _present
from fairtalk.files._single import append_text, check_output_file, check_regular

__all__ = [
    "FOLDER_KINDS",
    "StoreHold",
    "WRITTEN",
    "append_text",
    "atomic_writer",
    "check_default_output",
    "check_folder_kind",
    "check_not_in_run",
    "check_not_input",
    "check_output_file",
    "check_output_folder",
    "check_output_name",
    "check_outside",
    "check_owned",
    "check_regular",
    "commit_staged",
    "discard_staged",
    "ensure_folder",
    "hold_output",
    "is_lock_file",
    "output_lock_path",
    "output_scope",
    "recover_folder",
    "same_file",
    "staged",
    "staged_folder",
    "write_text_atomic",
    "written_files",
]

STAGING_PREFIX = ".fairtalk-staging-"
TRASH_PREFIX = ".fairtalk-old-"
#: The file in a trash folder that names the staging folder and the entries a swap moves in.
JOURNAL = ".fairtalk-journal.json"
_MSG_WRITE = "cannot write ({reason})"
#: The middle of a writer's temporary file name: its pid and mkstemp's 8 characters (an older fairtalk: no pid).
_TEMP_WITH_PID, _TEMP_WITHOUT_PID = re.compile(r"[0-9]+-[A-Za-z0-9_]{8}"), re.compile(r"[A-Za-z0-9_]{8}")
#: A temporary file without a pid is stale once it has not changed for this long.
_STALE_SECONDS = 3600
_MSG_INSIDE = "{name} {path} lies inside {entry}, which this run replaces; move it or write the output elsewhere"
_MSG_NOT_FOLDER = "is a file, not a folder (give a folder for the outputs)"
_MSG_NOT_OURS = (
    "not a {what} fairtalk wrote, and this command writes its {what} here when {option} is not given; "
    "move it, or give {option} PATH"
)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def check_default_output(path: str | os.PathLike[str], *, ours: Callable[[Path], bool], what: str, option: str) -> None:
    """Raise OutputError, before any work, when a file the user did not name would be replaced and is not fairtalk's.

    ``path`` is where a command writes when ``option`` is not given (``pairs.jsonl`` in the
    working folder, ``pairs_check.json`` beside the pairs). Something there is replaced only
    when ``ours`` recognises it as a file of the kind fairtalk writes (``what``, e.g. "pairs
    file"); a folder, a link or any other file is the user's and is refused.
    """
    target = Path(path)
    if not _present(target):
        return
    if target.is_symlink() or not target.is_file() or not ours(target):
        raise OutputError(_MSG_NOT_OURS.format(what=what, option=option), path=str(target))


def check_outside(folder: str | os.PathLike[str], entries: Iterable[str], inputs: Mapping[str, Any]) -> None:
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


def check_output_folder(
    folder: str | os.PathLike[str],
    inputs: Mapping[str, Any] | None = None,
    *,
    replaces: Iterable[str] = (),
    hold: bool = True,
    option: str = "-o",
) -> None:
    """Raise OutputError, before any work, for a folder a run must not write its outputs into.

    Refused: a file, the file system's root, the home folder (also as ``.``) or a folder holding
    it, ``-`` or a path starting with a quoted ``~``, and a folder that is or holds one of
    ``inputs`` (what it is -> its path; None and paths that do not exist, such as ``builtin:``
    specs, are skipped), and a folder this process cannot write in (or, when it does not exist
    yet, the nearest folder above it: a file there is refused too). Then each of ``replaces`` (the entries the run will replace) that is
    there must be fairtalk's (:func:`check_owned`), once a swap a kill cut short is undone.

    With ``hold`` (an output of the command, not a cache folder runs share), the folder is
    locked for the command's :func:`output_scope` before the entries are looked at: one that
    another fairtalk process is writing is refused, naming ``option`` (:func:`hold_output`).
    """
    check_place(folder, inputs or {})
    if Path(folder).exists() and not Path(folder).is_dir():
        raise OutputError(_MSG_NOT_FOLDER, path=str(folder))
    _check_writable(Path(folder))
    if hold:
        hold_output(folder, option=option)
    entries = tuple(replaces)
    if entries and Path(folder).is_dir():
        recover_folder(folder)
        check_owned(folder, entries)


def _check_writable(folder: Path) -> None:
    """OutputError unless a file can be made in ``folder`` or, when it does not exist yet, in the nearest folder above it."""
    place = folder
    while not place.exists() and not place.is_symlink() and place != place.parent:
        place = place.parent
    if not place.is_dir():
        raise OutputError(_MSG_WRITE.format(reason=f"{place} is not a folder"), path=str(folder))
    try:  # the real test: a file can be made there (read-only mounts, ACLs, root included)
        fd, probe = tempfile.mkstemp(prefix=".fairtalk-probe-", dir=place)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(folder)) from exc


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
    r"""Open a temporary file beside ``path`` for writing; on success it replaces ``path`` atomically.

    ``path`` must be new or a regular file (a link to one): a device, a FIFO or a socket is
    refused (OutputError), never replaced by the rename.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_writer(target) as handle:
    ...     _ = handle.write("done\n")
    >>> target.read_text()
    'done\n'
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(_MSG_WRITE.format(reason="it is a folder"), path=str(target))
    check_regular(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = "a part of its folder path is a file" if isinstance(exc, FileExistsError | NotADirectoryError) else _reason(exc)
        raise OutputError(_MSG_WRITE.format(reason=reason), path=str(target)) from exc
    _remove_stale_temps(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent)
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
        check_regular(target)  # again: a device or a FIFO made there while the file was written
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(target)) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove_stale_temps(target: Path) -> None:
    """Remove the temporary files of ``target`` that a killed writer left (``.NAME.PID-XXXXXXXX.tmp``).

    A temporary file is stale when the process named in it no longer runs; one of an older
    fairtalk, without a pid (``.NAME.XXXXXXXX.tmp``), when it has not changed for an hour.
    """
    prefix = f".{target.name}."
    try:
        names = [entry.name for entry in os.scandir(target.parent) if entry.name.startswith(prefix)]
    except OSError:
        return
    for name in names:
        middle = name[len(prefix) : -len(".tmp")] if name.endswith(".tmp") else ""
        if _TEMP_WITH_PID.fullmatch(middle):
            stale = not _owner_alive(middle, "")
        elif _TEMP_WITHOUT_PID.fullmatch(middle):
            try:
                stale = time.time() - os.lstat(target.parent / name).st_mtime > _STALE_SECONDS
            except OSError:
                continue
        else:
            continue
        if stale:
            with contextlib.suppress(OSError):
                (target.parent / name).unlink()


def write_text_atomic(path: str | os.PathLike[str], text: str, *, newline: str | None = "\n") -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path."""
    with atomic_writer(path, newline=newline) as handle:
        handle.write(text)
    return Path(path)


def _owner_alive(name: str, prefix: str) -> bool:
    """Whether the process that made a staging/trash folder (pid in its name) still runs."""
    pid_text = name[len(prefix) :].split("-", 1)[0]
    if not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _plain_name(name: object) -> bool:
    """A name directly inside a folder: no separator, not empty, ``.`` or ``..``."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "\0" not in name
        and not any(sep in name for sep in ("/", "\\", os.sep, os.altsep or "/"))
    )


def _write_journal(trash: Path, staging: Path, names: list[str]) -> None:
    """Record in the trash folder which staging folder's entries a swap moves in, so a crash can be undone."""
    data = {"staging": staging.name, "names": names}
    with open(trash / JOURNAL, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())


def _roll_back(target: Path, trash: Path, staging: Path, names: Iterable[str]) -> bool:
    """Undo a swap that did not finish: new entries go back to ``staging``, the old ones come back from ``trash``.

    A name no longer in ``staging`` was moved into ``target`` (a rename moves it whole), so it is
    moved back out; then every entry in ``trash`` returns to its place. Returns whether every
    move succeeded (the trash folder is then removed; otherwise it stays for the next run).
    """
    ok = True
    for name in reversed(list(names)):
        if not _present(staging / name) and _present(target / name):
            try:
                os.replace(target / name, staging / name)
            except OSError:
                ok = False
    try:
        kept = sorted(trash.iterdir())
    except OSError:
        return False
    for entry in kept:
        if entry.name == JOURNAL:
            continue
        if _present(target / entry.name):
            ok = False  # never overwrite: something took the old entry's place
            continue
        try:
            os.replace(entry, target / entry.name)
        except OSError:
            ok = False
    if ok:
        shutil.rmtree(trash, ignore_errors=True)
    return ok


def _recover_trash(folder: Path, trash: Path) -> None:
    """A dead process' trash folder: undo its swap if it did not finish, else just remove it."""
    try:
        data = json.loads((trash / JOURNAL).read_text(encoding="utf-8"))
        staging_name, names = data["staging"], data["names"]
        valid = (
            _plain_name(staging_name)
            and str(staging_name).startswith(STAGING_PREFIX)
            and isinstance(names, list)
            and all(_plain_name(n) for n in names)
        )
    except (OSError, ValueError, TypeError, KeyError):
        valid = False
    if not valid:  # no journal: nothing was moved yet (or an older fairtalk's trash)
        shutil.rmtree(trash, ignore_errors=True)
        return
    staging = folder / staging_name
    unfinished = staging.is_dir() and any(_present(staging / name) for name in names)
    if unfinished:
        if _roll_back(folder, trash, staging, names):
            shutil.rmtree(staging, ignore_errors=True)
    else:  # every new entry was moved in: the swap finished, only the cleanup was cut short
        shutil.rmtree(trash, ignore_errors=True)


def recover_folder(folder: str | os.PathLike[str]) -> None:
    """Finish or undo what a crashed fairtalk process left in ``folder``.

    A swap cut short (a kill between the renames of :func:`commit_staged`) is undone: the
    entries already moved in go back out and the previous entries return from the trash
    folder, so the folder holds the previous run whole again. A swap whose renames all
    happened only loses its trash folder. Staging folders of dead processes are removed.
    Folders of a process that still runs are left alone. Does nothing when ``folder`` is not
    a folder.
    """
    path = Path(folder)
    try:
        entries = sorted(path.iterdir()) if path.is_dir() else []
    except OSError:
        return
    for entry in entries:
        if (
            entry.name.startswith(TRASH_PREFIX)
            and entry.is_dir()
            and not entry.is_symlink()
            and not _owner_alive(entry.name, TRASH_PREFIX)
        ):
            _recover_trash(path, entry)
    for entry in entries:
        if (
            entry.name.startswith(STAGING_PREFIX)
            and entry.is_dir()
            and not entry.is_symlink()
            and not _owner_alive(entry.name, STAGING_PREFIX)
        ):
            shutil.rmtree(entry, ignore_errors=True)


def staged_folder(folder: str | os.PathLike[str]) -> Path:
    """A new hidden staging folder inside ``folder`` (created), for outputs swapped in by :func:`commit_staged`.

    The root, the home folder and a folder holding it are refused (:func:`check_output_folder`).
    It takes no lock: a command holds its outputs from its checks on, and a cache folder
    (a model's index) may be written by runs at once, the last swap winning.
    """
    check_output_folder(folder, hold=False)
    parent = ensure_folder(folder)
    try:
        recover_folder(parent)
        return Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=parent))
    except OSError as exc:
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(parent)) from exc


def discard_staged(staging: Path) -> None:
    """Remove a staging folder after a failed write (the outputs in place stay as they were)."""
    shutil.rmtree(staging, ignore_errors=True)


def commit_staged(
    staging: Path, folder: str | os.PathLike[str], *, displace: Iterable[str] = (), last: Iterable[str] = ()
) -> None:
    """Move every entry of ``staging`` into ``folder``, replacing what fairtalk wrote there; then remove ``staging``.

    Every entry it replaces or displaces, and all under it, must be listed in the folder's
    :data:`WRITTEN` (else OutputError names the first file that is not, and nothing changes);
    a new :data:`WRITTEN`, moved in last, lists what the swap brings and what fairtalk wrote
    that stays. ``displace`` names old entries to remove although the new run has none of that
    name (an earlier run's axis folder); ``last`` names entries moved in after all others (the index).
    Every old entry is first renamed into a trash folder, and the old ``last`` entries go
    there before anything else, so while the swap runs the folder has no index; each move is
    a rename, so the swap takes microseconds.

    An error (or Ctrl-C) midway undoes the swap: the new entries go back out and the old ones
    return, so the folder is as it was. A kill midway leaves a journal in the trash folder,
    and the next run into the folder undoes the swap (see :func:`recover_folder`).
    """
    target = Path(folder)
    late = tuple(last)
    try:
        mark_written(staging, target, [*(p.name for p in staging.iterdir() if p.name != WRITTEN), *displace])
    except OSError as exc:
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(target)) from exc
    names = sorted(
        (p.name for p in staging.iterdir()), key=lambda n: (n == WRITTEN, n in late, late.index(n) if n in late else 0, n)
    )
    try:
        trash = Path(tempfile.mkdtemp(prefix=f"{TRASH_PREFIX}{os.getpid()}-", dir=target))
        if staging.parent.resolve() == target.resolve():
            _write_journal(trash, staging, names)
    except OSError as exc:
        raise OutputError(_MSG_WRITE.format(reason=_reason(exc)), path=str(target)) from exc
    aside = [*(n for n in late if n in names), *sorted(set(displace) - set(names))]
    try:
        for name in aside:  # the old index first: until the new one is in, the folder never looks whole
            if _present(target / name):
                os.replace(target / name, trash / name)
        for name in names:
            dest = target / name
            if _present(dest) and not _present(trash / name):
                os.replace(dest, trash / name)
            os.replace(staging / name, dest)
    except BaseException as exc:
        restored = _roll_back(target, trash, staging, names)
        if isinstance(exc, OSError):
            note = "" if restored else f"; the previous entries are in {trash}"
            raise OutputError(_MSG_WRITE.format(reason=_reason(exc)) + note, path=str(target)) from exc
        raise
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
