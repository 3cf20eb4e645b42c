"""Tests for cli/_axes.py: every ``--axis`` help and the missing-axis message list the registry's axes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.cli._axes import AUDIT_AXES, AXES, axes_text
from fairtalk.lexicons import builtin_axes

runner = CliRunner()

#: Every command with an ``--axis`` option.
AXIS_COMMANDS = (
    ("pairs",),
    ("swap",),
    ("audit",),
    ("score",),
    ("augment",),
    ("pool-filter",),
    ("train",),
    ("reproduce", "debias"),
)


@pytest.fixture()
def pets_axis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh axis registry with one more axis, ``pets``, registered at run time."""
    import fairtalk.lexicons._load as lexicons

    monkeypatch.setattr(lexicons, "AXES", lexicons.AXES.fresh())
    path = tmp_path / "pets.tsv"
    path.write_text("# axis: pets\n# groups: cat dog\nkitten\tpuppy\n", encoding="utf-8")
    lexicons.register_axis("pets", lambda variant: fairtalk.load_lexicon(str(path)))
    return "pets"


def _axis_help(path: tuple[str, ...]) -> str:
    """The ``--axis`` help of a command in full (``--help`` shows its first sentence), borders and line breaks taken out."""
    result = runner.invoke(app, [*path, "--help-full"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, (path, result.output)
    lines = [line.strip(" │") for line in result.stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("--axis"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("-") or not lines[i])
    return " ".join(" ".join(lines[start:end]).split())


def _lists(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


@pytest.mark.parametrize("path", AXIS_COMMANDS, ids=" ".join)
def test_every_axis_help_lists_every_registered_axis(path: tuple[str, ...], pets_axis: str) -> None:
    text = _axis_help(path)
    assert AXES not in text and AUDIT_AXES not in text and "{" not in text
    missing = [name for name in fairtalk.axis_names() if not _lists(text, name)]
    assert missing == [], text
    assert _lists(text, pets_axis) and _lists(text, "nonbinary") and _lists(text, "neopronouns")
    assert "religion:A-B for two of christian, muslim, jewish, hindu, buddhist, atheist" in text


def test_audit_help_says_what_a_multiway_axis_audits() -> None:
    assert "religion (every group against christian; religion:A-B" in _axis_help(("audit",))
    pairs = "religion (religion:A-B for two of christian, muslim, jewish, hindu, buddhist, atheist; a bare religion only in audit"
    assert pairs in _axis_help(("pairs",))


def test_axes_text_puts_the_builtin_axes_first_in_their_order(pets_axis: str) -> None:
    names = [part.split(" (")[0] for part in re.sub(r" \([^)]*\)", "", axes_text()).split(", ")]
    assert names == [*builtin_axes(), pets_axis]


def test_without_an_axis_the_message_lists_every_registered_axis(tmp_path: Path, pets_axis: str) -> None:
    from fairtalk.cli._app import _MSG_NO_AXIS

    (tmp_path / "c.txt").write_text("he is here\n")
    result = runner.invoke(app, ["pairs", "--corpus", str(tmp_path / "c.txt")])
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert f"error: {_MSG_NO_AXIS} (choose from: " in message
    missing = [name for name in (*builtin_axes(), pets_axis) if not _lists(message, name)]
    assert missing == [], message


def test_help_of_the_app_reads_no_axis_registry() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from fairtalk.cli import app\n"
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0\n"
        "print('fairtalk.lexicons' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
