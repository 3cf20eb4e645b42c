"""A bad margin or primary key of an ``audit --config`` file names the file, as the file's other errors do.

Review finding: ``margins = {offense_rat = 0.01}`` in a file said ``unknown margin measure key
'offense_rat'`` without the file's name, unlike ``typo.toml: unknown audit option 'n_pair'``. The
same key given with ``--margin`` or ``--primary`` is the command line's: no file named.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from fairtalk.cli import app

runner = CliRunner()

_AUDIT = ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "5"]
_UNKNOWN_MARGIN = "unknown margin measure key 'offense_rat'; did you mean 'offense_rate'?"
_RATE_MARGIN = "offense_rate's margin is a fraction: 2 would allow any difference; for 2 pp give 0.02"
_UNKNOWN_PRIMARY = "unknown primary measure key 'nosuch'"


def _error(done: Result) -> str:
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    return line


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("margins = {offense_rat = 0.01}\n", _UNKNOWN_MARGIN),
        ("margins = {offense_rate = 2}\n", _RATE_MARGIN),
        ('primary = ["nosuch"]\n', _UNKNOWN_PRIMARY),
        ('[score]\nprimary = ["nosuch"]\n', _UNKNOWN_PRIMARY),
    ],
)
def test_a_bad_key_of_the_file_names_the_file(tmp_path: Path, toml: str, message: str) -> None:
    config, out = tmp_path / "keys.toml", tmp_path / "out"
    config.write_text(toml)
    done = runner.invoke(app, [*_AUDIT, "--config", str(config), "-o", str(out)])
    assert done.exit_code == 2, done.output
    assert _error(done).startswith(f"error: {config}: {message}"), done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--margin", "offense_rat=0.01"], _UNKNOWN_MARGIN),
        (["--margin", "offense_rate=2"], _RATE_MARGIN),
        (["--primary", "nosuch"], _UNKNOWN_PRIMARY),
    ],
)
def test_a_bad_key_of_the_command_line_names_no_file(tmp_path: Path, flags: list[str], message: str) -> None:
    config, out = tmp_path / "keys.toml", tmp_path / "out"
    config.write_text("n_resamples = 100\n")  # a good file beside the bad flag
    for given in ([], ["--config", str(config)]):
        done = runner.invoke(app, [*_AUDIT, *given, *flags, "-o", str(out)])
        assert done.exit_code == 2, done.output
        assert _error(done).startswith(f"error: {message}"), (given, done.stderr)
        assert not out.exists()


def test_a_flag_over_the_file_s_key_is_the_flag_s_and_a_bad_key_left_in_the_file_still_names_it(tmp_path: Path) -> None:
    config, out = tmp_path / "keys.toml", tmp_path / "out"
    config.write_text("margins = {offense_rat = 0.01}\n")
    beside = runner.invoke(app, [*_AUDIT, "--config", str(config), "--margin", "distinct_1=0.1", "-o", str(out)])
    assert beside.exit_code == 2 and _error(beside).startswith(f"error: {config}: {_UNKNOWN_MARGIN}"), beside.stderr
    over = runner.invoke(app, [*_AUDIT, "--config", str(config), "--margin", "offense_rat=0.5", "-o", str(out)])
    assert over.exit_code == 2 and _error(over).startswith(f"error: {_UNKNOWN_MARGIN}"), over.stderr
    assert not out.exists()
