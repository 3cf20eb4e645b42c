"""What a newcomer trips on first: --pairs a count in audit and a file elsewhere, a multi-group axis, a doubled axis, help texts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


@pytest.mark.parametrize("command", ["respond", "similarity"])
def test_a_count_given_as_the_pairs_file_says_what_pairs_means_here(command: str, tmp_path: Path) -> None:
    """Review finding: `respond --pairs 200` said only '200: pairs file not found'."""
    result = runner.invoke(app, [command, "--pairs", "200", "--model", "builtin:echo", "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 2, result.output
    said = _flat(result.output)
    assert "error: 200: no such pairs file; --pairs here is a pairs FILE (write one with `fairtalk pairs`)" in said
    assert "audit's --pairs is a count" in said and "Traceback" not in said


def test_a_file_given_as_audit_pairs_says_it_is_a_count(tmp_path: Path) -> None:
    """Review finding: `audit --pairs some/pairs.jsonl` said pydantic's 'Input should be a valid integer', no hint."""
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("{}\n", encoding="utf-8")
    result = runner.invoke(app, ["audit", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    said = _flat(result.output)
    assert f"error: Invalid value for '--pairs': '{pairs}' is a file, but audit's --pairs is a count (pairs per axis)" in said
    assert "`fairtalk respond --pairs FILE`" in said and "`fairtalk score`" in said
    other = runner.invoke(app, ["audit", "--pairs", "many", "--model", "builtin:echo", "-o", str(tmp_path / "r")])
    assert other.exit_code == 2 and "'many' is not a whole number" in _flat(other.output)
    assert not (tmp_path / "r").exists()
