"""The typer app's commands and their flags, walked: shared by the tests that check every command's options."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer

from fairtalk.cli import app


def commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command of the app with its path of names (``("prompts", "analyze")``), groups walked."""
    command = command if command is not None else typer.main.get_command(app)
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    for name, sub in sorted(subcommands.items()):
        yield from commands(sub, (*path, name))


def flag(param: Any) -> str:
    """An option's longest ``--`` name (its first name when it has none)."""
    return max((o for o in param.opts if o.startswith("--")), key=len, default=param.opts[0])
