"""What a command shows besides its results: ``-q``/``-v``, the library's log lines and its progress bars, on stderr.

The library never prints: it logs to the ``fairtalk`` loggers and reports progress as
:class:`fairtalk.progress.ProgressEvent` values. Every command runs inside :func:`output_options`
(attached by ``_app.py``; both print through ``_console.py``), which sets up one log handler on ``err_console`` for the length of
the command; :func:`progress_bars` turns events into rich bars on the same console, so log
lines print above the bars. When stderr is not a terminal (a CI log, a file), bars would show
nothing until the end, so progress becomes a plain line per stage every
``FAIRTALK_PROGRESS_SECONDS`` seconds (default 10): a run killed midway still leaves a trail.
Those lines come from a timer thread as well as from events, so a stage that sends none for
minutes (a model loading, a first batch on a CPU) still gets its line on time
(``loading model builtin:smollm2… 20 s``, ``gender: responses: 0/160 responses (0%), 30 s``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from fairtalk.cli._console import command_paths, err_console, is_quiet, json_output, set_quiet, terminal_safe, wrap_prose

if TYPE_CHECKING:
    from fairtalk.progress import ProgressCallback, ProgressEvent
    from fairtalk.results import Provenance

__all__ = ["loading_model", "output_options", "progress_bars", "show_log"]

#: The library's loggers all sit under this one.
LIBRARY_LOGGER = "fairtalk"
_LEVELS = (logging.WARNING, logging.INFO, logging.DEBUG)
_STYLES = {logging.DEBUG: "dim", logging.WARNING: "yellow", logging.ERROR: "bold red"}
_INTERVAL_ENV = "FAIRTALK_PROGRESS_SECONDS"
_DEFAULT_INTERVAL = 10.0
#: Loggers whose level a command changed, with the level to restore when it ends.
_RESTORE: list[tuple[logging.Logger, int]] = []


class _LogHandler(logging.Handler):
    """A log record as one line on stderr: ``warning: …`` (INFO lines bare), control sequences removed.

    Wrapped as :func:`~fairtalk.cli._console.say` wraps: between words at the console's width, the
    next lines indented two columns, a word wider than that (a long path) whole; the command's path
    arguments, and the record's arguments that are paths, are never broken at a space.
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = terminal_safe(record.getMessage())
        except Exception:  # noqa: BLE001 - a malformed record must not end the command
            self.handleError(record)
            return
        level = record.levelno
        prefix = "" if level == logging.INFO else f"{logging.getLevelName(level).lower()}: "
        style = _STYLES.get(logging.ERROR if level >= logging.ERROR else level)
        keep = [*command_paths(), *_path_args(record)]
        shown = wrap_prose(prefix + message, err_console.width, keep=keep)
        err_console.print(shown, style=style, markup=False, highlight=False, soft_wrap=True)


def _path_args(record: logging.LogRecord) -> list[str]:
    """The arguments of ``record`` (``logger.warning("… %s", path)``) that are paths: a ``Path``, or text holding a ``/``."""
    args = record.args.values() if isinstance(record.args, Mapping) else record.args or ()
    return [terminal_safe(os.fspath(a)) for a in args if isinstance(a, os.PathLike) or (isinstance(a, str) and "/" in a)]


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
    """A :data:`fairtalk.progress.ProgressCallback` that draws each stage as a rich progress bar on stderr."""

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
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[metrics]}"),
            console=err_console,
        )
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


class _Lines:
    """A :data:`fairtalk.progress.ProgressCallback` for logs: per stage, a plain line every ``interval`` seconds and at its end.

    A stage that ends within the interval prints nothing, so short commands stay quiet. With
    :meth:`heartbeat` on, a timer thread repeats the latest open stage's last state once it has
    said nothing for ``interval`` seconds: a stage without events (a model loading, a first batch
    that takes minutes) still gets a line every ``interval`` seconds.
    """

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._started: dict[str, float] = {}
        self._said: dict[str, float] = {}
        self._current: tuple[str, ProgressEvent] | None = None  # the stage the timer repeats, and its last event
        self._lock = threading.Lock()  # events (the command's thread) and the timer thread
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, event: ProgressEvent) -> None:
        with self._lock:
            now = time.monotonic()
            stage = terminal_safe(event.stage)
            started = self._started.setdefault(stage, now)
            said = self._said.setdefault(stage, now)
            self._current = None if event.finished else (stage, event)
            if event.finished:
                if now - started >= self.interval:
                    self._say(stage, event, now - started, "done")
                del self._started[stage], self._said[stage]
            elif now - said >= self.interval:
                self._said[stage] = now
                self._say(stage, event, now - started, "")

    def heartbeat(self) -> None:
        """Start the timer thread (not with an interval of 0: then every event prints already)."""
        if self.interval > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="fairtalk-progress", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        while not self._stopped.wait(min(1.0, self.interval / 4)):
            with self._lock:
                if self._current is None:
                    continue
                stage, event = self._current
                now = time.monotonic()
                if now - self._said[stage] >= self.interval:
                    self._said[stage] = now
                    self._say(stage, event, now - self._started[stage], "")

    @staticmethod
    def _say(stage: str, event: ProgressEvent, seconds: float, state: str) -> None:
        share = f" ({100 * event.done / event.total:.0f}%)" if event.total else ""
        counted = f"{event.done}/{event.total}" if event.total is not None else str(event.done)
        metrics = "".join(f", {name} {value:.3f}" for name, value in event.metrics)
        if event.total is None and not event.done and not metrics:  # a stage of no steps: loading a model
            line = f"{stage}… {seconds:.0f} s{' · ' + state if state else ''}"
        else:
            line = f"{stage}: {counted} {event.unit}{share}{metrics}, {seconds:.0f} s{' · ' + state if state else ''}"
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            self._started.clear()
            self._said.clear()
            self._current = None


def _interval() -> float:
    """Seconds between progress lines in a log: ``FAIRTALK_PROGRESS_SECONDS`` (a number >= 0), else 10."""
    try:
        value = float(os.environ.get(_INTERVAL_ENV, _DEFAULT_INTERVAL))
    except ValueError:
        return _DEFAULT_INTERVAL
    return value if value >= 0 else _DEFAULT_INTERVAL


@contextlib.contextmanager
def progress_bars() -> Iterator[ProgressCallback | None]:
    """The ``progress=`` callback for a library call: rich bars on a terminal, plain lines in a log, None under ``-q``."""
    if is_quiet():
        yield None
        return
    bars: _Bars | _Lines = _Bars() if err_console.is_terminal else _Lines(_interval())
    if isinstance(bars, _Lines):
        bars.heartbeat()
    try:
        yield bars
    finally:
        bars.stop()


@contextlib.contextmanager
def loading_model(spec: str | None) -> Iterator[None]:
    """A command loading its model itself: a progress stage (``loading model SPEC``) with its own heartbeat.

    The spec is shown without its ``?options`` and a URL's ``user:password@``. A load that fails
    leaves the stage unfinished: the error follows, not a "done".
    """
    from fairtalk.progress import ProgressEvent

    label = "loading the default model" if spec is None else "loading model " + re.sub(r"//[^/?#@]*@", "//", spec.split("?")[0])
    with progress_bars() as progress:
        if progress is not None:
            progress(ProgressEvent(label, 0))
        yield
        if progress is not None:
            progress(ProgressEvent(label, 0, finished=True))


def scoring_line(provenance: Provenance, asked: bool) -> str | None:
    """Where an axis was scored, when ``--engine ray`` was asked for: on Ray, or here and why; None otherwise."""
    where = provenance.scoring_engine if asked else None
    if where is None:
        return None
    n = where.distinct_responses or 0
    if where.name == "ray":
        return f"scored on Ray: {n:,} distinct responses in {where.batches or 0:,} batches, {where.tasks_at_once} tasks at once"
    return (
        f"scored in this process: {n:,} distinct responses, fewer than two Ray batches (score_batch), "
        "where starting the tasks would cost more than it saves"
    )
