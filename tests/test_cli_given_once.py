"""A list option (--axis, --primary, --measures, --similarity) given twice is an error: click kept the last.

``--axis race --axis gender`` audited gender alone, and ``--primary offense_rate --primary diversity``
gated on diversity alone, so a release gate could pass on less than was asked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--axis", "race", "--axis", "gender"], "--axis is given 2 times"),
        (["--axis", "gender", "--primary", "offense_rate", "--primary", "diversity"], "--primary is given 2 times"),
        (["--axis", "gender", "--measures", "offense", "--measures=length,diversity"], "--measures is given 2 times"),
        (["--axis=gender", "--axis", "race", "--axis", "gender"], "--axis is given 3 times"),
    ],
)
def test_an_option_of_one_value_given_twice_is_an_error_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: list[str], said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["audit", "--model", "builtin:echo", *given])
    assert done.exit_code == 2, done.output
    message = " ".join(done.stderr.split())
    option = said.split()[0]
    assert message == f"error: {said}, and only the last would be read: give it once, its values comma-separated ({option} a,b)"
    assert not any(tmp_path.iterdir())  # no report folder, no store


def test_options_read_many_times_one_value_options_given_again_and_values_like_options_are_left_alone(
    tmp_path: Path,
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    done = runner.invoke(app, ["pairs", "--corpus", "builtin:chitchat", "--axis", "gender", "--limit", "3", "-o", str(pairs)])
    assert done.exit_code == 0, done.output
    out = tmp_path / "r.jsonl"
    command = ["respond", "--pairs", str(pairs), "--model", "builtin:echo", "--stop", "--axis", "--stop", "x"]
    command += ["--batch-size", "4", "--batch-size", "8"]  # an option of one value given again: the last wins, as ever
    done = runner.invoke(app, [*command, "-o", str(out)])
    assert done.exit_code == 0, done.output  # --stop is read many times, and its value "--axis" is no --axis
    assert out.exists()
