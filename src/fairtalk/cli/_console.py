"""The consoles of the command line and what every command prints through them: plain lines, ``-q``, ``--json``.

The lowest module of ``cli/``: ``_app.py`` (the typer app) and ``_output.py`` (log lines and
progress bars) both print through it, and neither imports the other at import time.
"""

from __future__ import annotations

import re

from rich.console import Console

__all__ = ["console", "err_console", "info", "is_quiet", "json_output", "say", "set_quiet", "terminal_safe"]

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


def say(text: object, *, style: str | None = None, stderr: bool = False) -> None:
    """Print one line as plain text (no markup, no highlighting), with control sequences removed."""
    to_stderr = stderr or _MESSAGES_TO_STDERR[0]
    (err_console if to_stderr else console).print(terminal_safe(text), style=style, markup=False, highlight=False, soft_wrap=True)


def info(text: object, *, style: str | None = None, stderr: bool = False) -> None:
    """Like :func:`say`, for a message that is not a result ("wrote …", what was loaded): nothing under ``-q``."""
    if not _QUIET[0]:
        say(text, style=style, stderr=stderr)


def json_output(enabled: bool) -> None:
    """Send messages (:func:`say`, :func:`info`) to stderr, or back to stdout; :func:`json_mode` sets it for ``--json``."""
    _MESSAGES_TO_STDERR[0] = enabled
