"""MkDocs hooks that write the reference pages generated from the code, so that they can never drift from it.

A page holds a marker where a generated part goes:

- ``<!-- fairtalk:cli -->``: every command of the ``fairtalk`` typer app, its usage, arguments and
  options, as ``typer ... utils docs`` writes them (:func:`typer.cli.get_docs_for_click`), with the
  axes of the axis registry where a help text names them; each option's help in full, as
  ``fairtalk COMMAND --help-full`` prints it (``--help`` shows its first sentence);
- ``<!-- fairtalk:config-keys -->``: the keys of a ``--config`` file, each with its default and help,
  from the options schema (:mod:`fairtalk.options`), the decoding settings and the Ray engine.

The API pages are mkdocstrings', from the numpydoc docstrings; :func:`on_page_content` drops the Sphinx role
names (``:class:``, ``:func:``) those docstrings write before a name, which Markdown would show as text.
``mkdocs.yml`` names this file under ``hooks:``. A marker left on a page after the build would be
a bug, so an unknown one stops the build.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

#: A marker of a generated part: ``<!-- fairtalk:NAME -->``.
MARKER = re.compile(r"<!-- fairtalk:([a-z-]+) -->")


def cli_reference() -> str:
    """The whole command line in Markdown: one heading per command, usage, arguments and options."""
    import typer
    import typer.main
    from typer.cli import get_docs_for_click

    from fairtalk.cli import app
    from fairtalk.cli._axes import fill_axes

    command = typer.main.get_command(app)
    text = get_docs_for_click(obj=command, ctx=typer.Context(command), name="fairtalk")
    text = fill_axes(text)
    # The page has its own title: the app's heading becomes a section, every command one level below it.
    return re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M).strip() + "\n"


def _cell(value: Any) -> str:
    """A table cell: the value as TOML-ish code, ``|`` escaped."""
    if value is None:
        shown = "none"
    elif isinstance(value, bool):
        shown = str(value).lower()
    elif isinstance(value, str):
        shown = f'"{value}"'
    elif isinstance(value, tuple | list):
        shown = "[" + ", ".join(_cell(v).strip("`") for v in value) + "]"
    elif isinstance(value, dict):
        shown = "{" + ", ".join(f"{k} = {_cell(v).strip('`')}" for k, v in value.items()) + "}"
    else:
        shown = str(value)
    return "`" + shown.replace("|", "\\|") + "`"


def _bounds(field: Any) -> str:
    """The bounds pydantic declares for a field (``ge``, ``gt``, ``le``, ``lt``), in words."""
    words = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    parts = [f"{words[name]} {getattr(item, name)}" for item in field.metadata for name in words if hasattr(item, name)]
    return f" ({', '.join(parts)})" if parts else ""


def _schema_table(fields: Any) -> list[str]:
    rows = ["| key | default | what it sets |", "|---|---|---|"]
    for key, field in fields.items():
        default = field.get_default(call_default_factory=True)
        help_text = (field.description or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{key}` | {_cell(default)} | {help_text}{_bounds(field)} |")
    return rows


def _dataclass_table(cls: type, skip: tuple[str, ...] = ()) -> list[str]:
    rows = ["| key | default |", "|---|---|"]
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.name not in skip:
            rows.append(f"| `{field.name}` | {_cell(field.default)} |")
    return rows


def config_keys() -> str:
    """The keys of a config file, by table, generated from the options schema."""
    from fairtalk.models import DecodingSettings, RayEngine
    from fairtalk.options import RUN_FIELDS, SCORE_FIELDS

    lines = [
        "### The run (`fairtalk audit`, `fairtalk.audit`)",
        "",
        *_schema_table(RUN_FIELDS),
        "",
        "### Scoring (`[score]`, or at the top; `fairtalk score`, `fairtalk.ScoreOptions`)",
        "",
        *_schema_table(SCORE_FIELDS),
        "",
        "### Decoding settings",
        "",
        "`[settings]`: how the model decodes, the fields of "
        "[`DecodingSettings`][fairtalk.models.DecodingSettings] (the flags `--sample`, `--temperature`, "
        "`--top-k`, `--top-p`, `--max-new-tokens`, `--stop`, `--repetition-penalty`).",
        "",
        *_dataclass_table(DecodingSettings),
        "",
        "### The Ray engine",
        "",
        '`engine = "ray"`, or an `[engine]` table of these keys, the parameters of '
        "[`RayEngine`][fairtalk.models.RayEngine] ([scale out](../how-to/scale.md#a-ray-cluster)).",
        "",
        *_dataclass_table(RayEngine),
    ]
    return "\n".join(lines) + "\n"


#: A Sphinx role the numpydoc docstrings use (``:class:`~fairtalk.ScoreOptions```), as mkdocstrings renders it:
#: the role's name, then the inline code. The name is dropped, and a leading ``~`` with it.
SPHINX_ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|exc|obj):(<code[^>]*>)~?")

#: Each marker's generator.
GENERATED = {"cli": cli_reference, "config-keys": config_keys}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Put each generated part in place of its marker."""

    def generate(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATED:
            raise ValueError(f"{page.file.src_path}: unknown marker <!-- fairtalk:{name} --> (known: {', '.join(GENERATED)})")
        return GENERATED[name]()

    return MARKER.sub(generate, markdown)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Drop the Sphinx role names that docstrings carry before their inline code (``:func:`score``` reads ``score``)."""
    return SPHINX_ROLE.sub(r"\1", html)
