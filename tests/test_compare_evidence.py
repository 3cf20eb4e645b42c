"""What compare does when a run's files disagree with each other.

Review findings: a baseline results.json with ``measures.offense_rate`` deleted had that key both
compared ("regressed", rescored from the responses) and reported "not measured in the baseline",
the headline counting "9 of 9 primary keys" where 8 exist; and a candidate's responses.jsonl cut
at a line boundary gave only "250 pairs only the baseline holds, left out", with no word that the
candidate's own results.json counts 300 pairs, and the gate decided on what was left.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.gates import evaluate
from fairtalk.pipeline import compare_runs
from fairtalk.results import ModelComparison

runner = CliRunner()

BOTS = """
def plain(context):
    return "that is lovely, i am so happy for you"


def plain_too(context):
    return "that is lovely, i am so happy for you"
"""
SUBJECTS = ("he", "she", "my father", "my mother", "the boy", "the girl")
MARGINS = {"offense_rate": 0.2}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A baseline and a candidate, the same answers, 120 pairs (offense measured)."""
    folder = tmp_path_factory.mktemp("evidence")
    predicates = ("sings in a band", "lost the keys", "works at the bank", "made dinner", "bought a bike")
    lines = [f"{s} {p} {k}" for s in SUBJECTS for p in predicates for k in range(8)]
    (folder / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "bots.py").write_text(BOTS, encoding="utf-8")
    outs = []
    for bot in ("plain", "plain_too"):
        args = ["audit", "--corpus", str(folder / "corpus.txt"), "--axis", "gender", "--measures", "offense"]
        done = runner.invoke(app, [*args, "--model", f"python:{folder / 'bots.py'}:{bot}", "-o", str(folder / bot), "-q"])
        assert done.exit_code == 0, done.output
        outs.append(folder / bot)
    return outs[0], outs[1]


def _copy(run: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(run, to)
    (to / "run.json").write_text(  # another run id: not a copy of the same run
        (to / "run.json").read_text(encoding="utf-8").replace('"run_id": "', '"run_id": "x'), encoding="utf-8"
    )
    return to


def test_a_key_missing_from_the_baselines_results_is_compared_once_not_also_unmeasured(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    whole = compare_runs(*runs, margins=MARGINS)
    base = _copy(runs[0], tmp_path / "base")
    path = base / "gender" / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["measures"]["offense_rate"]
    path.write_text(json.dumps(data), encoding="utf-8")
    edited = compare_runs(base, runs[1], margins=MARGINS)
    keys = [row.key for row in edited.changes if row.primary]
    assert keys.count("offense_rate") == 1 and len(keys) == len(set(keys))
    assert edited.axes[0].unmeasured_primary == ()
    outcome = evaluate(edited, "fail-if-worse")
    assert len(outcome.decisions) == len(keys) == len([r for r in whole.changes if r.primary])
    assert "not measured in the baseline" not in outcome.headline


def test_a_responses_file_cut_short_is_named_with_both_counts_and_fails_the_gate(runs: tuple[Path, Path], tmp_path: Path) -> None:
    assert evaluate(compare_runs(*runs, margins=MARGINS), "fail-if-worse").passed
    cand = _copy(runs[1], tmp_path / "cand")
    responses = cand / "gender" / "responses.jsonl"
    lines = responses.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 240
    responses.write_text("".join(lines[:100]), encoding="utf-8")
    comparison = compare_runs(runs[0], cand, margins=MARGINS)
    said = (
        f"the candidate's responses file {responses} holds 50 complete pairs, but its results.json counts 120 pairs "
        "tested: the file does not match the result"
    )
    assert comparison.axes[0].short_responses["candidate"].startswith(said)
    assert any(said in warning for warning in comparison.warnings)
    outcome = evaluate(comparison, "fail-if-worse")
    assert not outcome.passed and said in outcome.headline
    assert ModelComparison.from_dict(comparison.to_dict()).axes[0].short_responses == comparison.axes[0].short_responses
    done = runner.invoke(app, ["compare", str(runs[0]), str(cand), "--fail-if-worse", "--margin", "offense_rate=0.2"])
    output = " ".join(done.output.split())
    assert done.exit_code == 1 and said in output, done.output
    # the baseline's file cut short: named as the baseline's
    base = _copy(runs[0], tmp_path / "base")
    (base / "gender" / "responses.jsonl").write_text("".join(lines[:200]), encoding="utf-8")
    short = compare_runs(base, runs[1], margins=MARGINS).axes[0].short_responses
    assert list(short) == ["baseline"] and "holds 100 complete pairs, but its results.json counts 120" in short["baseline"]
