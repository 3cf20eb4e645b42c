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


@pytest.mark.parametrize(
    "args",
    [
        ["pairs", "--corpus", "builtin:chitchat", "-o", "p.jsonl"],
        ["swap", "my church is near"],
        ["score", "--responses", "r.jsonl"],
        ["augment", "--corpus", "builtin:chitchat", "-o", "aug.jsonl"],
        ["train", "seq2seq", "--debias", "cda", "-o", "ckpt"],
        ["reproduce", "debias", "--quick", "-o", "rep"],
    ],
    ids=lambda args: args[0] if args[0] != "reproduce" else "reproduce debias",
)
def test_a_single_pair_command_refuses_a_bare_multiway_axis(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding: `pairs --axis religion` took christian vs muslim, one fifth of what `audit --axis religion` runs.

    (pool-filter takes a bare multi-way axis: it drops every group's words, tests/debias/test_cli_debias.py.)
    """
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "pool.txt").write_text("hello there\n", encoding="utf-8")
    result = runner.invoke(app, [*args, "--axis", "religion"], env={"COLUMNS": "500"})
    assert result.exit_code == 2, result.output
    said = _flat(result.output)
    assert "error: --axis religion has 6 groups and this command compares two: choose a pair (religion:christian-muslim, " in said
    assert "religion:christian-atheist, or religion:A-B for any two of christian, muslim" in said
    assert "`fairtalk audit --axis religion` runs christian against each" in said
    assert [p.name for p in tmp_path.iterdir()] == ["inputs"]  # nothing written


def test_a_single_pair_command_takes_a_named_pair_of_a_multiway_axis() -> None:
    result = runner.invoke(app, ["swap", "--axis", "religion:christian-jewish", "my church is near"])
    assert result.exit_code == 0, result.output
    assert "synagogue" in result.output


def test_an_axis_named_twice_is_said_so_and_two_files_of_one_axis_name_get_the_rename_hint(tmp_path: Path) -> None:
    """Review finding: `audit --axis gender,gender` said to rename one of the axes (its '# axis:' header)."""
    out = tmp_path / "r"
    twice = runner.invoke(app, ["audit", "--axis", "gender,gender", "--model", "builtin:echo", "-o", str(out)])
    assert twice.exit_code == 2, twice.output
    said = _flat(twice.output)
    assert "error: axis 'gender' is given twice: give each axis once" in said and "rename" not in said
    files = []
    for name in ("one", "two"):
        path = tmp_path / f"{name}.tsv"
        path.write_text("# axis: kin\n# groups: male female\nfather\tmother\n", encoding="utf-8")
        files.append(str(path))
    same = runner.invoke(app, ["audit", "--axis", ",".join(files), "--model", "builtin:echo", "-o", str(out)])
    assert same.exit_code == 2, same.output
    assert f"{files[0]} and {files[1]} both name the axis 'kin'; rename one (its '# axis:' header)" in _flat(same.output)
    assert not out.exists()


def _help(*command: str, flag: str = "--help") -> str:
    result = runner.invoke(app, [*command, flag], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.output


def test_quiet_names_json_output_only_where_the_command_has_json() -> None:
    """Review finding: `--quiet` said '--json output stays' in pairs, respond, swap, which have no --json."""
    for command in ("pairs", "respond", "swap", "label"):
        text = _help(command, flag="--help-full")
        assert "Errors and results stay" in text and "--json" not in text, command
    assert "Errors, results and --json output stay" in _help("audit", flag="--help-full")


def test_pairs_help_shows_its_pair_options_in_the_pairs_panel_and_engine_its_default() -> None:
    """Review finding: `pairs --help` put --mixed/--balance under Statistics and --turns under Model and decoding."""
    text = _help("pairs")
    assert "Statistics" not in text and "Model and decoding" not in text
    panel = text[text.index("─ Pairs and measures ─") :]
    assert all(flag in panel for flag in ("--mixed", "--balance", "--turns"))
    assert "[default: (local)]" in " ".join(_help("respond").split())


def test_a_bare_multiway_name_given_as_lexicon_is_refused_too() -> None:
    """`swap --lexicon religion` silently meant christian vs muslim, as `--axis religion` once did."""
    result = runner.invoke(app, ["swap", "--lexicon", "religion", "my church is near"], env={"COLUMNS": "500"})
    assert result.exit_code == 2, result.output
    assert "error: --lexicon religion has 6 groups and this command compares two" in _flat(result.output)
    named = runner.invoke(app, ["swap", "--lexicon", "religion:christian-jewish", "my church is near"])
    assert named.exit_code == 0 and "synagogue" in named.output
