"""`--json` on score, audit and prompts analyze: stdout is exactly one JSON document; messages go to stderr."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from audit_toys import write_corpus, write_models, write_responses
from fairtalk.cli import app

runner = CliRunner()


def _responses(path: Path) -> Path:
    return write_responses(path, 30)


def test_score_json_is_the_results_document(tmp_path: Path) -> None:
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(_responses(tmp_path / "r.jsonl")),
            "--axis",
            "gender",
            "-o",
            str(tmp_path / "out"),
            "--resamples",
            "50",
            "--json",
        ],
    )
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    assert document == json.loads((tmp_path / "out" / "results.json").read_text())
    assert "wrote" in done.stderr


def test_audit_json_holds_the_run_and_every_axis(tmp_path: Path) -> None:
    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    done = runner.invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--axis",
            "gender",
            "--model",
            f"python:{models}:fair",
            "-o",
            str(tmp_path / "run"),
            "--resamples",
            "50",
            "--quiet",
            "--json",
        ],
    )
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    assert document["run"]["run_id"] and set(document["results"]) == {"gender"}
    assert document["results"]["gender"]["n_pairs"] > 0


def test_prompts_analyze_json_is_the_analysis(tmp_path: Path) -> None:
    completions = tmp_path / "c.jsonl"
    completions.write_text(
        "".join(
            json.dumps(
                {
                    "group": g,
                    "template": "worked as",
                    "structure": "original",
                    "seed": k,
                    "text": f"The {g} worked as a cook.",
                    "label": k % 3 - 1,
                }
            )
            + "\n"
            for g in ("man", "woman")
            for k in range(6)
        )
    )
    groups = tmp_path / "g.tsv"
    groups.write_text("man\tgender\nwoman\tgender\n")
    done = runner.invoke(
        app,
        [
            "prompts",
            "analyze",
            "--completions",
            str(completions),
            "--groups",
            str(groups),
            "-o",
            str(tmp_path / "rep"),
            "--draws",
            "2",
            "--resamples",
            "10",
            "--json",
        ],
    )
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    assert set(document["groups"]) == {"man", "woman"} and "gender" in document["gaps"]


def test_responses_and_pairs_from_standard_input(tmp_path: Path) -> None:
    text = _responses(tmp_path / "r.jsonl").read_text()
    done = runner.invoke(
        app,
        ["score", "--responses", "-", "--axis", "gender", "-o", str(tmp_path / "out"), "--resamples", "50", "--json"],
        input=text,
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["n_pairs"] == 30
    pairs = tmp_path / "pairs.jsonl"
    made = runner.invoke(app, ["pairs", "--corpus", str(write_corpus(tmp_path)), "--axis", "gender", "-o", str(pairs)])
    assert made.exit_code == 0, made.output
    out = tmp_path / "responses.jsonl"
    responded = runner.invoke(
        app, ["respond", "--pairs", "-", "--model", "builtin:echo", "-o", str(out)], input=pairs.read_text()
    )
    assert responded.exit_code == 0, responded.output
    assert len(out.read_text().splitlines()) == 2 * len(pairs.read_text().splitlines())
