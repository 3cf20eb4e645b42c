"""The typer app, the consoles and the error convention shared by every command."""

from __future__ import annotations

import dataclasses
import re
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console

from fairtalk.errors import FairtalkError

if TYPE_CHECKING:
    from fairtalk import Lexicon

app = typer.Typer(
    name="fairtalk",
    help="Audit dialogue systems and text generators for demographic bias.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
err_console = Console(stderr=True)
console = Console()

#: Exit code for a user error (bad input, unknown spec).
EXIT_USAGE = 2
#: Exit code when ``--fail-on-bias`` finds a significant difference.
EXIT_BIAS = 1

#: Exit code when the run is interrupted (Ctrl-C), as a shell reports SIGINT.
EXIT_INTERRUPTED = 130

_MSG_NO_AXIS = "give --axis (gender, race, or a lexicon file) or --lexicon FILE"
#: Terminal control sequences (CSI, OSC, other ESC sequences) and C0/C1 control characters but tab and newline.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: object) -> str:
    """``text`` without terminal control sequences: what a model or a server wrote cannot drive the terminal.

    Examples
    --------
    >>> terminal_safe("ok\\x1b]0;pwned\\x07 \\x1b[31mred\\x1b[0m\\r!")
    'ok red!'
    """
    return _CONTROL.sub("", str(text))


def say(text: object, *, style: str | None = None, stderr: bool = False) -> None:
    """Print one line as plain text (no markup, no highlighting), with control sequences removed."""
    (err_console if stderr else console).print(terminal_safe(text), style=style, markup=False, highlight=False,
                                               soft_wrap=True)  # fmt: skip


def fail(error: FairtalkError | str) -> NoReturn:
    """Print ``error: <message>`` on stderr (control sequences removed) and exit 2."""
    err_console.print("error: ", style="bold red", end="", markup=False, highlight=False)
    err_console.print(terminal_safe(error), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code=EXIT_USAGE)


def interrupted(store: Any = None) -> NoReturn:
    """Ctrl-C: say where the answers so far are kept, and exit 130."""
    where = f"; the answers so far are kept in {store}: re-run the same command to resume" if store else ""
    say(f"interrupted{where}", style="yellow", stderr=True)
    raise typer.Exit(code=EXIT_INTERRUPTED)


def resolve_lexicon(axis: str | None, lexicon: str | None, *, variant: str = "default") -> Lexicon:
    """The lexicon named by ``--axis``/``--lexicon``; ``--axis`` renames a ``--lexicon`` file's axis."""
    import fairtalk

    if lexicon is not None:
        loaded = fairtalk.load_lexicon(lexicon, variant=variant)
        return loaded if axis is None else dataclasses.replace(loaded, axis=axis)
    if axis is not None:
        return fairtalk.load_lexicon(axis, variant=variant)
    raise fairtalk.SpecError(_MSG_NO_AXIS, choices=fairtalk.builtin_axes())


def _print_version(value: bool) -> None:
    if value:
        from fairtalk import __version__

        console.print(f"fairtalk {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Audit dialogue systems and text generators for demographic bias."""


def main() -> None:
    """Entry point of the ``fairtalk`` console script."""
    try:
        app()
    except FairtalkError as exc:  # raised outside a command body (option parsing callbacks)
        err_console.print(f"error: {terminal_safe(exc)}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(EXIT_USAGE)
