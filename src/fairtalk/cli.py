"""The ``fairtalk`` command line: one thin typer function per command."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

from fairtalk.errors import FairtalkError

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


def fail(error: FairtalkError | str) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit 2."""
    err_console.print(f"[bold red]error:[/] {error}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(code=EXIT_USAGE)


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


# (new commands go above this line)


def main() -> None:
    """Entry point of the ``fairtalk`` console script."""
    try:
        app()
    except FairtalkError as exc:  # raised outside a command body (option parsing callbacks)
        err_console.print(f"error: {exc}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
