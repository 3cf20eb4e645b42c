"""The consoles of the command line and what every command prints through them: plain lines, ``-q``, ``--json``.

The lowest module of ``cli/``: ``_app.py`` (the typer app) and ``_output.py`` (log lines and
progress bars) both print through it, and neither imports the other at import time.
"""

from __future__ import annotations

import re
import textwrap

from rich.console import Console

__all__ = ["console", "err_console", "info", "is_quiet", "json_output", "say", "set_quiet", "terminal_safe", "wrap_prose"]

#: Neither console reads markup (``[bold]``) or emoji codes (``:x:``) in what it prints: paths, file contents and a
#: model's answers are user text, printed as they are (``no:x:such.jsonl`` stays ``no:x:such.jsonl``). Styles are
#: given as ``style=`` and rich objects (``Text``), never inside the text.
err_console = Console(stderr=True, markup=False, emoji=False)
console = Console(markup=False, emoji=False)

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


def wrap_prose(text: str, width: int) -> str:
    """``text`` wrapped between words to ``width`` columns, each line on its own; a word wider than that is not cut.

    A line's continuation is indented two columns past the line's own indent, so a wrapped
    finding reads as one item. A word wider than ``width`` (a long path) stays whole on a line of
    its own, and a line that fits is left exactly as it is.

    Examples
    --------
    >>> print(wrap_prose("gender: difference detected: offense_rate, sentiment_negative, length", 40))
    gender: difference detected:
      offense_rate, sentiment_negative,
      length
    >>> print(wrap_prose("wrote /a/very/long/path/that/does/not/fit/report.html", 20))
    wrote
      /a/very/long/path/that/does/not/fit/report.html
    """
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip(" "))] + _HANGING_INDENT
        lines.extend(textwrap.wrap(line, width=width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False))
    return "\n".join(lines)


def say(text: object, *, style: str | None = None, stderr: bool = False) -> None:
    """Print a message as plain text (no markup, no highlighting), with control sequences removed.

    It wraps between words at the console's width (a terminal's, else ``COLUMNS``, else 80 as in a
    CI log): see :func:`wrap_prose`.
    """
    target = err_console if stderr or _MESSAGES_TO_STDERR[0] else console
    shown = wrap_prose(terminal_safe(text), target.width)
    target.print(shown, style=style, markup=False, highlight=False, soft_wrap=True)


def info(text: object, *, style: str | None = None, stderr: bool = False) -> None:
    """Like :func:`say`, for a message that is not a result ("wrote …", what was loaded): nothing under ``-q``."""
    if not _QUIET[0]:
        say(text, style=style, stderr=stderr)


def json_output(enabled: bool) -> None:
    """Send messages (:func:`say`, :func:`info`) to stderr, or back to stdout; :func:`json_mode` sets it for ``--json``."""
    _MESSAGES_TO_STDERR[0] = enabled
