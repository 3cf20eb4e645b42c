"""What a command shows besides its results: ``-q``/``-v``, the library's log lines and its progress bars, on stderr.

The library never prints: it logs to the ``fairtalk`` loggers and reports progress as
:class:`fairtalk.ProgressEvent` values. Every command runs inside :func:`output_options`
(attached by ``_app.py``), which sets up one log handler on ``err_console`` for the length of
the command; :func:`progress_bars` turns events into rich bars on the same console, so log
lines print above the bars.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fairtalk.cli._app import err_console, is_quiet, json_output, set_quiet, terminal_safe

if TYPE_CHECKING:
    from fairtalk import ProgressCallback, ProgressEvent

__all__ = ["output_options", "progress_bars", "show_log"]

#: The library's loggers all sit under this one.
LIBRARY_LOGGER = "fairtalk"
_LEVELS = (logging.WARNING, logging.INFO, logging.DEBUG)
_STYLES = {logging.DEBUG: "dim", logging.WARNING: "yellow", logging.ERROR: "bold red"}
#: Loggers whose level a command changed, with the level to restore when it ends.
_RESTORE: list[tuple[logging.Logger, int]] = []


class _LogHandler(logging.Handler):
    """A log record as one line on stderr: ``warning: …`` (INFO lines bare), control sequences removed."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = terminal_safe(record.getMessage())
        except Exception:  # noqa: BLE001 - a malformed record must not end the command
            self.handleError(record)
            return
        level = record.levelno
        prefix = "" if level == logging.INFO else f"{logging.getLevelName(level).lower()}: "
        style = _STYLES.get(logging.ERROR if level >= logging.ERROR else level)
        err_console.print(prefix + message, style=style, markup=False, highlight=False, soft_wrap=True)


@contextlib.contextmanager
def output_options(*, quiet: bool, verbose: int) -> Iterator[None]:
    """For the length of a command: ``-q`` (no bars, no info lines) or ``-v``/``-vv`` (library log at INFO/DEBUG)."""
    logger = logging.getLogger(LIBRARY_LOGGER)
    saved = (logger.level, logger.propagate)
    handler = _LogHandler()
    logger.setLevel(_LEVELS[min(verbose, len(_LEVELS) - 1)])
    logger.addHandler(handler)
    logger.propagate = False  # the handler above renders them; no second copy from the root logger
    set_quiet(quiet)
    json_output(False)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        while _RESTORE:
            named, level = _RESTORE.pop()
            named.setLevel(level)
        set_quiet(False)


def show_log(*names: str) -> None:
    """Show these library loggers' INFO lines even without ``-v`` (a command's own report, e.g. training epochs)."""
    if is_quiet():
        return
    for name in names:
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() > logging.INFO:
            _RESTORE.append((logger, logger.level))
            logger.setLevel(logging.INFO)


class _Bars:
    """A :data:`fairtalk.ProgressCallback` that draws each stage as a rich progress bar on stderr."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[metrics]}"), console=err_console,
        )  # fmt: skip
        self._tasks: dict[str, Any] = {}
        self._open: set[str] = set()
        self._started = False

    def __call__(self, event: ProgressEvent) -> None:
        if not self._started:
            self._progress.start()
            self._started = True
        stage = terminal_safe(event.stage)
        if stage not in self._open:  # a new stage, or one that runs again (the next model of reproduce)
            self._tasks[stage] = self._progress.add_task(stage, total=event.total, metrics="")
            self._open.add(stage)
        task = self._tasks[stage]
        metrics = "  ".join(f"{name} {value:.3f}" for name, value in event.metrics)
        if event.finished:
            done = max(event.total or 0, event.done, 1)
            self._progress.update(task, total=done, completed=done)
            self._open.discard(stage)
        else:
            if metrics:
                self._progress.update(task, total=event.total, completed=event.done, metrics=metrics)
            else:
                self._progress.update(task, total=event.total, completed=event.done)

    def stop(self) -> None:
        if self._started:
            self._progress.stop()
            self._started = False


@contextlib.contextmanager
def progress_bars() -> Iterator[ProgressCallback | None]:
    """The ``progress=`` callback for a library call: rich bars on stderr, or None under ``-q``."""
    if is_quiet():
        yield None
        return
    bars = _Bars()
    try:
        yield bars
    finally:
        bars.stop()
