"""The one jinja2 set-up of fairtalk's HTML pages: autoescaped, strict about missing names, no control characters.

Every page (``report.html``, ``index.html``, the prompts report, the comparison and the
labelling page of ``fairtalk label``) is rendered by an environment from
:func:`jinja_environment`, so they all escape and clean text the same way. A base module: any
layer that renders a page may import it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from fairtalk.records import TURN_SEPARATOR

__all__ = ["TEMPLATES", "jinja_environment"]

#: The report's own templates.
TEMPLATES = Path(__file__).resolve().parent / "report" / "templates"
#: C0 and C1 control characters but tab, newline and carriage return: never in a page (no ESC, no NUL).
#: How the turns of a multi-turn context are shown in a page.
_TURN_SHOWN = " \u23ce "
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _finalize(value: Any) -> Any:
    """Every ``{{ value }}``: turns of a conversation shown as `` ⏎ ``, other control characters removed (Markup stays Markup)."""
    if isinstance(value, str) and _CONTROLS.search(value):
        return type(value)(_CONTROLS.sub("", value.replace(TURN_SEPARATOR, _TURN_SHOWN)))
    return value


def jinja_environment(template_dir: str | os.PathLike[str] | None = None) -> Any:
    r"""A jinja2 Environment loading templates from ``template_dir`` (default :data:`TEMPLATES`).

    ``autoescape=True`` for every template, so model text, group names and manifest values are
    escaped; ``StrictUndefined``, so a misspelt name fails instead of rendering empty;
    ``trim_blocks``/``lstrip_blocks``; and control characters removed from every value shown.
    jinja2 is imported here, on first use.

    Examples
    --------
    >>> env = jinja_environment()
    >>> env.from_string("{{ text }}").render(text="<b>\x1b[31mhi</b>")
    '&lt;b&gt;[31mhi&lt;/b&gt;'
    """
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(
        loader=FileSystemLoader(Path(TEMPLATES if template_dir is None else template_dir)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
