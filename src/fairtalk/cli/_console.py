"""The consoles of the command line and what every command prints through them: plain lines, ``-q``, ``--json``.

The lowest module of ``cli/``: ``_app.py`` (the typer app) and ``_output.py`` (log lines and
progress bars) both print through it, and neither imports the other at import time.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterable
from typing import IO

from rich.console import Console

__all__ = [
    "command_paths",
    "console",
    "err_console",
    "info",
    "is_quiet",
    "json_output",
    "say",
    "set_quiet",
    "terminal_safe",
    "to_null_device",
    "wrap_prose",
]

#: Neither console reads markup (``[bold]``) or emoji codes (``:x:``) in what it prints: paths, file contents and a
#: model's answers are user text, printed as they are (``no:x:such.jsonl`` stays ``no:x:such.jsonl``). Styles are
#: given as ``style=`` and rich objects (``Text``), never inside the text.


class _Console(Console):
    """A rich console that stops printing when its reader is gone, and lets the command carry on.

    rich's own :meth:`~rich.console.Console.on_broken_pipe` ends the program with exit 1 at the first
    line that finds the pipe closed: ``fairtalk compare … --fail-if-worse --junit cj.xml | head -1``
    would skip the rest of the work (the JUnit file, the gate). Here the console falls silent (``quiet``,
    and the null device put on its stream's descriptor, so that no later write or the flush at exit
    finds the broken pipe) and the command goes on: it writes every file, and its exit code is the one
    it would have had (a failed gate's 1, else 0).
    """

    def on_broken_pipe(self) -> None:
        self.quiet = True
        del self._buffer[:]
        to_null_device(self.file)


def to_null_device(stream: IO[str]) -> None:
    """Put the null device on ``stream``'s descriptor (its reader is gone): later writes, and the flush at exit, find no broken pipe.

    A stream with no descriptor (a test's capture) is left as it is.
    """
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


err_console = _Console(stderr=True, markup=False, emoji=False)
console = _Console(markup=False, emoji=False)

#: Terminal control sequences (CSI, OSC, other ESC sequences) and C0/C1 control characters but tab and newline.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: object) -> str:
    r"""``text`` without terminal control sequences: what a model or a server wrote cannot drive the terminal.

    Examples
    --------
    >>> terminal_safe("ok\x1b]0;pwned\x07 \x1b[31mred\x1b[0m\r!")
    'ok red!'
    """
    return _CONTROL.sub("", str(text))


#: With ``--json`` stdout carries only the JSON document: every message goes to stderr.
_MESSAGES_TO_STDERR: list[bool] = [False]
#: ``-q``: no info messages (see :func:`info`) and no progress bars.
_QUIET: list[bool] = [False]


def set_quiet(quiet: bool) -> None:
    """``-q`` for the command now running (``output_options`` sets and resets it)."""
    _QUIET[0] = quiet


def is_quiet() -> bool:
    """Whether ``-q`` was given."""
    return _QUIET[0]


#: How much further than its first line a wrapped line's next lines are indented.
_HANGING_INDENT = "  "
#: Where a kept span's spaces are held while a line is wrapped: the first of these its text does not hold.
_GLUE = tuple(map(chr, range(0xE000, 0xE100)))


def wrap_prose(text: str, width: int, *, keep: Iterable[str] = (), indent: str = _HANGING_INDENT) -> str:
    """``text`` wrapped between words to ``width`` columns, each line on its own; a word wider than that is not cut.

    A line's continuation is indented ``indent`` (two columns) past the line's own indent, so a wrapped
    finding reads as one item. A word wider than ``width`` (a long path) stays whole on a line of
    its own, and a line that fits is left exactly as it is. Each span of ``keep`` (a path, a command to
    rerun) is one word: no line breaks at its spaces, so it can be copied from a log; one wider than
    ``width`` runs past it, whole.

    Examples
    --------
    >>> print(wrap_prose("gender: difference detected: offense_rate, sentiment_negative, length", 40))
    gender: difference detected:
      offense_rate, sentiment_negative,
      length
    >>> print(wrap_prose("wrote /a/very/long/path/that/does/not/fit/report.html", 20))
    wrote
      /a/very/long/path/that/does/not/fit/report.html
    >>> print(wrap_prose("wrote /tmp/my runs/a b/report.html", 24, keep=["/tmp/my runs/a b"], indent="    "))
    wrote
        /tmp/my runs/a b/report.html
    """
    glue = next((c for c in _GLUE if c not in text), None)
    if glue is not None:  # (a text holding all 256 is not one a command prints)
        for span in sorted({s for s in keep if " " in s}, key=len, reverse=True):
            text = text.replace(span, span.replace(" ", glue))
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        hanging = line[: len(line) - len(line.lstrip(" "))] + indent
        lines.extend(textwrap.wrap(line, width=width, subsequent_indent=hanging, break_long_words=False, break_on_hyphens=False))
    shown = "\n".join(lines)
    return shown if glue is None else shown.replace(glue, " ")


def command_paths() -> list[str]:
    """The running command's arguments that name a file or folder (hold a ``/``), kept whole when a line wraps.

    A path the command prints (``OUTPUT/gender/report.html``, the store under ``OUTPUT``) begins with one
    of them, so a space the user put in ``-o "my runs"`` never breaks it across two lines.
    """
    import click

    found: list[str] = []
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        for value in ctx.params.values():
            for one in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(one, (str, os.PathLike)) and ("/" in str(one) or os.sep in str(one)):
                    found.append(terminal_safe(os.fspath(one)))
        ctx = ctx.parent
    return found


def say(
    text: object, *, style: str | None = None, stderr: bool = False, keep: Iterable[object] = (), indent: str = _HANGING_INDENT
) -> None:
    """Print a message as plain text (no markup, no highlighting), with control sequences removed.

    It wraps between words at the console's width (a terminal's, else ``COLUMNS``, else 80 as in a
    CI log): see :func:`wrap_prose`. ``keep`` (paths, a command line) and the command's own path
    arguments (:func:`command_paths`) stay whole on one line; ``indent``: the wrapped lines' indent.
    """
    target = err_console if stderr or _MESSAGES_TO_STDERR[0] else console
    spans = [*(terminal_safe(k) for k in keep), *command_paths()]
    shown = wrap_prose(terminal_safe(text), target.width, keep=spans, indent=indent)
    target.print(shown, style=style, markup=False, highlight=False, soft_wrap=True)


def info(text: object, *, style: str | None = None, stderr: bool = False, keep: Iterable[object] = ()) -> None:
    """Like :func:`say`, for a message that is not a result ("wrote …", what was loaded): nothing under ``-q``."""
    if not _QUIET[0]:
        say(text, style=style, stderr=stderr, keep=keep)


def json_output(enabled: bool) -> None:
    """Send messages (:func:`say`, :func:`info`) to stderr, or back to stdout; :func:`json_mode` sets it for ``--json``."""
    _MESSAGES_TO_STDERR[0] = enabled
