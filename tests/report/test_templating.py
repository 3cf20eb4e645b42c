"""Tests for _templating.py: the one jinja2 environment of every HTML page."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from markupsafe import Markup

from fairtalk._templating import TEMPLATES
from fairtalk.report import jinja_environment


def test_values_are_escaped_and_cleaned_of_control_characters() -> None:
    env = jinja_environment()
    assert env.from_string("{{ t }}").render(t="<i>a\x1b[31m\x00b</i>") == "&lt;i&gt;a[31mb&lt;/i&gt;"
    assert env.from_string("{{ t }}").render(t=Markup("<i>x\x07</i>")) == "<i>x</i>"  # Markup stays markup


def test_a_missing_name_fails_instead_of_rendering_empty() -> None:
    with pytest.raises(jinja2.UndefinedError):
        jinja_environment().from_string("{{ nope }}").render()


def test_loads_the_report_templates_or_another_folder(tmp_path: Path) -> None:
    assert jinja_environment().get_template("report.html.j2").filename == str(TEMPLATES / "report.html.j2")
    (tmp_path / "page.j2").write_text("{% if x %}\n  <p>{{ x }}</p>\n{% endif %}\n")
    assert jinja_environment(tmp_path).get_template("page.j2").render(x="a&b") == "  <p>a&amp;b</p>\n"


def test_the_turns_of_a_conversation_are_shown_and_other_controls_dropped() -> None:
    from fairtalk import join_turns
    from fairtalk.report import jinja_environment

    shown = jinja_environment().from_string("{{ text }}").render(text=join_turns(["hi", "hello\x1b[31m"]))
    assert shown == "hi \u23ce hello[31m"
