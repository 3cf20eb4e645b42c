"""The commands that README.md and the docs name in running text (`` `fairtalk audit --axis my_axis.tsv` ``) use only
options the command has: a page must not promise an option that does not exist.

The fenced blocks run (tests/test_readme_examples.py); these inline ones are only checked against the typer app. Their
required options are not asked for: running text names a command by the option it is about (`` `fairtalk score -o` ``).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer

from fairtalk.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: An inline code span that runs a fairtalk command.
INLINE = re.compile(r"(?<!`)`(fairtalk [a-z][a-z-]*(?: [^`]*)?)`(?!`)")


def _commands() -> dict[str, Any]:
    """Each command (and ``group sub``) of the app, as typer builds it (its own click, so told apart by duck type)."""
    found: dict[str, Any] = {}
    for name, command in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        found[name] = command
        found.update({f"{name} {sub}": c for sub, c in getattr(command, "commands", {}).items()})
    return found


def _spans() -> list[tuple[str, str]]:
    spans = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # the fenced blocks run elsewhere
        spans += [(f"{page.relative_to(ROOT)}", m.group(1)) for m in INLINE.finditer(text)]
    return spans


COMMANDS = _commands()
SPANS = _spans()


def _problems(span: str) -> list[str]:
    try:
        words = shlex.split(span)[1:]
    except ValueError:
        return []
    name = " ".join(words[:2]) if " ".join(words[:2]) in COMMANDS else words[0]
    command = COMMANDS.get(name)
    if command is None or hasattr(command, "commands"):
        return [] if command is not None else [f"no command {name!r}"]
    options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    given = {word.split("=")[0] for word in words if word.startswith("-") and word not in ("-", "--")}
    return [f"{name} has no option {option}" for option in sorted(given - options)]


def test_the_pages_name_inline_commands() -> None:
    assert any("fairtalk pairs" in span for _, span in SPANS)


@pytest.mark.parametrize(("page", "span"), SPANS, ids=[f"{page}:{span[:40]}" for page, span in SPANS])
def test_an_inline_command_uses_only_options_its_command_has(page: str, span: str) -> None:
    assert not _problems(span), f"{page}: `{span}`: {_problems(span)}"
