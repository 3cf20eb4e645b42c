"""`compare --margin KEY=VALUE` over several axes: a key applies on the axes that have it; a key no axis has is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.errors import SpecError
from fairtalk.pipeline import compare_runs

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An audit of gender and race: attribute_words gives each axis its own keys (career_words; pleasant_words)."""
    out = tmp_path_factory.mktemp("margin_keys") / "run"
    args = ["audit", "--model", "builtin:echo", "--axis", "gender,race", "--pairs", "20", "--measures", "attribute_words"]
    done = runner.invoke(app, [*args, "--resamples", "50", "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    return out


def test_a_key_of_one_axis_applies_there(run: Path) -> None:
    """Review finding: compare refused race's pleasant_words, checking it against gender's keys (audit accepts it)."""
    result = compare_runs(run, run, margins={"pleasant_words": 0.1, "career_words": 0.2})
    margins = {(row.axis, row.key): row.margin for row in result.changes}
    assert margins[("race", "pleasant_words")] == 0.1 and margins[("gender", "career_words")] == 0.2
    assert margins[("race", "unpleasant_words")] != 0.1 and ("gender", "pleasant_words") not in margins


def test_the_command_takes_it_too(run: Path, tmp_path: Path) -> None:
    done = runner.invoke(app, ["compare", str(run), str(run), "-o", str(tmp_path / "c"), "--margin", "pleasant_words=0.1"])
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize(
    ("margins", "axes", "message"),
    [
        ({"pleasant_word": 0.1}, None, r"unknown margin key 'pleasant_word'.*did you mean 'pleasant_words'"),
        ({"nosuchkey": 0.1}, None, r"unknown margin key 'nosuchkey'.*career_words.*pleasant_words"),
        ({"pleasant_words": 0.1}, ["gender"], r"unknown margin key 'pleasant_words'"),  # no compared axis has it
    ],
)
def test_a_key_no_compared_axis_has_is_refused(
    run: Path, margins: dict[str, float], axes: list[str] | None, message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        compare_runs(run, run, margins=margins, axes=axes)
