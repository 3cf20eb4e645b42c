"""Fixtures for the report tests (built in report_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_fixtures import build_result
from typer.testing import CliRunner

from fairtalk.results import AuditResult

#: Six religions, ten sentences each: every pair of groups of the multi-way ``religion`` axis gets ten pairs.
_RELIGIONS = ("christian", "muslim", "jewish", "hindu", "buddhist", "atheist")
_SENTENCES = (
    "neighbour is coming over tonight",
    "friend likes to play football",
    "colleague made dinner for us",
    "teacher works at the bank",
    "cousin told me a funny story",
    "friend is learning to drive",
    "neighbour lost the keys again",
    "colleague bought a new bike",
    "friend was late for school",
    "uncle sings in a band",
)
#: Offensive and negative whenever the context mentions a muslim: only the christian-muslim pair differs.
_MODEL = """
def biased(context):
    if "muslim" in context:
        return "shut up you stupid idiot, that is awful and i hate it"
    return "that is lovely, i am so happy for you"
"""


@pytest.fixture
def result() -> AuditResult:
    """The Table-4-shaped result with hostile text."""
    return build_result()


@pytest.fixture(scope="session")
def religion_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of ``fairtalk audit --axis religion`` of a model biased against one group (five pairs of groups)."""
    from fairtalk.cli import app

    root = tmp_path_factory.mktemp("religion")
    corpus = root / "religions.txt"
    corpus.write_text("".join(f"my {g} {s}\n" for g in _RELIGIONS for s in _SENTENCES), encoding="utf-8")
    (root / "religion_model.py").write_text(_MODEL, encoding="utf-8")
    command = ["audit", "--corpus", str(corpus), "--model", f"python:{root / 'religion_model.py'}:biased", "--axis", "religion"]
    done = CliRunner().invoke(app, [*command, "--pairs", "10", "--resamples", "200", "-o", str(root / "run"), "-q"])
    assert done.exit_code == 0, done.output
    return root / "run"
