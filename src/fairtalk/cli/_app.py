"""The typer app, the consoles and the error convention shared by every command."""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, NoReturn

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

_MSG_NO_AXIS = "give --axis (gender, race, or a lexicon file) or --lexicon FILE"


def fail(error: FairtalkError | str) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit 2."""
    err_console.print(f"[bold red]error:[/] {error}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(code=EXIT_USAGE)


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
        err_console.print(f"error: {exc}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_USAGE)
