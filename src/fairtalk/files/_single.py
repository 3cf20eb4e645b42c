"""One output file: the rule every file option of fairtalk keeps, and the best-effort append of a CI job summary.

A file fairtalk writes (``-o FILE``, ``--junit FILE``, ``--check FILE``, a run store) is
checked before any work by :func:`check_output_file`:

- it is never one of the run's inputs, nor inside an input folder (a baseline's run folder);
- it is never one of the files the same run writes (``-o``'s report, a run folder's entries);
- an existing one must be a regular file: a device, a FIFO, a socket or a folder is refused
  (a rename over ``/dev/null`` would replace the device node; a FIFO would block);
- an existing one that is not empty must be recognisably fairtalk's output of that kind (its
  ``ours`` test: a JUnit file of fairtalk, a pairs file, a responses file ...): the user's own
  file is never replaced.

:func:`check_regular` is the device rule alone: :func:`fairtalk.files.atomic_writer` and the
run store call it, so no writer of the library renames over a device or opens a FIFO.

:func:`append_text` appends to a file another program owns (``$GITHUB_STEP_SUMMARY``) without
ever blocking: it opens with ``O_NONBLOCK | O_APPEND``, refuses anything but a regular file (or a
new one) and an input, and raises :class:`~fairtalk.errors.OutputError` for any failure, which
the caller reports as a warning.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from fairtalk.errors import OutputError
from fairtalk.files._holders import hold_output
from fairtalk.files._inputs import check_not_input
from fairtalk.files._owned import check_output_name

__all__ = ["append_text", "check_output_file", "check_regular"]

_MSG_NOT_REGULAR = (
    "{option}not a regular file ({kind}); fairtalk writes only a new file or a regular file it wrote, never over "
    "a device, a pipe or a socket"
)
_MSG_IN_INPUT = "{option} {path} lies inside {name} {folder}, an input of this run; write the output elsewhere"
_MSG_IS_OUTPUT = "{option} {path} is {name}, which this run writes too; give the output a path of its own"
_MSG_NOT_OURS = (
    "{option}: this file exists and is not {article} {what} fairtalk wrote; fairtalk replaces only its own {what}: "
    "move it, or give a new path"
)
_MSG_APPEND = "cannot append ({reason})"
_MSG_STAT = "cannot look at it ({reason})"
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _stat(path: str | os.PathLike[str]) -> os.stat_result | None:
    """The file's status, following links; None when nothing is there (or a broken link)."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # a loop of links, a name too long, no permission to look
        raise OutputError(_MSG_STAT.format(reason=exc.strerror or exc), path=os.fspath(path)) from exc


def check_regular(path: str | os.PathLike[str], *, option: str | None = None) -> None:
    """Raise OutputError when something that is not a regular file (a device, a FIFO, a socket, a folder) is at ``path``.

    A new path (nothing there, or a broken link) passes.

    Examples
    --------
    >>> try:
    ...     check_regular("/dev/null")
    ... except OutputError as exc:
    ...     print(exc.message.split(";")[0])
    not a regular file (a character device)
    """
    found = _stat(path)
    if found is not None and not stat.S_ISREG(found.st_mode):
        prefix = "" if option is None else f"{option}: "
        raise OutputError(_MSG_NOT_REGULAR.format(option=prefix, kind=_kind(found.st_mode)), path=os.fspath(path))


def _resolved(path: str | os.PathLike[str]) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def _check_places(path: str | os.PathLike[str], inputs: Mapping[str, Any], outputs: Mapping[str, Any], option: str) -> None:
    """Neither an input (nor inside an input folder) nor one of the run's other outputs (nor inside one)."""
    check_not_input(path, inputs, option=option)
    target = _resolved(path)
    for name, given in inputs.items():
        if isinstance(given, str | os.PathLike) and os.path.isdir(given):
            folder = _resolved(given)
            if target.is_relative_to(folder):
                raise OutputError(_MSG_IN_INPUT.format(option=option, path=os.fspath(path), name=name, folder=given))
    for name, given in outputs.items():
        if given is None:
            continue
        written = _resolved(given)
        if target == written or target.is_relative_to(written):
            raise OutputError(_MSG_IS_OUTPUT.format(option=option, path=os.fspath(path), name=name))


def check_output_file(
    path: str | os.PathLike[str],
    inputs: Mapping[str, Any] | None = None,
    *,
    option: str,
    what: str,
    ours: Callable[[Path], bool],
    outputs: Mapping[str, Any] | None = None,
    hold: bool = True,
) -> None:
    """Raise OutputError, before any work, unless fairtalk may write its ``what`` (e.g. "JUnit file") at ``path``.

    Refused: a path given empty, as ``-`` or with a quoted ``~``; one of ``inputs`` (what it is ->
    its path; None and specs that name no file are skipped) or a path inside an input folder; one
    of ``outputs`` (what else the run writes -> its path, a file or a folder) or a path inside
    one; anything but a regular file (:func:`check_regular`); and an existing file, not empty,
    that ``ours`` does not recognise as a ``what`` fairtalk writes; and, with ``hold``, a file
    another fairtalk process is writing (it is locked for the command's life from here on,
    :func:`~fairtalk.files.hold_output`; a run store, which runs share, is checked without).
    """
    check_output_name(path, option=option, kind="file")
    _check_places(path, inputs or {}, outputs or {}, option)
    check_regular(path, option=option)
    found = _stat(path)
    if found is not None and found.st_size > 0 and not ours(Path(path)):
        article = "an" if what[:1] in "aeiou" else "a"
        raise OutputError(_MSG_NOT_OURS.format(option=option, article=article, what=what), path=os.fspath(path))
    if hold:
        hold_output(path, option=option)


def append_text(path: str | os.PathLike[str], text: str, *, inputs: Mapping[str, Any] | None = None) -> None:
    """Append ``text`` (UTF-8) to ``path``, a regular file or a new one, never blocking; OutputError for any failure.

    Refused without writing: one of ``inputs`` (or a file inside an input folder), and anything
    but a regular file (a FIFO nobody reads, a device, a folder). The file is opened with
    ``O_NONBLOCK``, so neither the open nor a write can wait; a write that cannot be completed
    at once is an error too.
    """
    _check_places(path, inputs or {}, {}, "the file")
    check_regular(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    data = text.encode("utf-8")
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise OutputError(_MSG_APPEND.format(reason=exc.strerror or exc), path=os.fspath(path)) from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # it changed between the check and the open
            raise OutputError(_MSG_NOT_REGULAR.format(option="", kind=_kind(mode)), path=os.fspath(path))
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            if n <= 0:
                raise OSError(0, "nothing written")
            view = view[n:]
    except OSError as exc:
        raise OutputError(_MSG_APPEND.format(reason=exc.strerror or exc), path=os.fspath(path)) from exc
    finally:
        os.close(fd)
