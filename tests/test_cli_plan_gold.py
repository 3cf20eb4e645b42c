"""`fairtalk plan --gold`: labels needed beyond the run's pairs, --power refused, a labels-only run's spread named as such."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fairtalk.cli import app

runner = CliRunner()


def _run(tmp_path: Path, **ppi: object) -> Path:
    """A score --gold run's results.json with an offense_rate PPI estimate (``ppi`` overrides its fields)."""
    row = {
        **{"estimate": 0.015, "ci95": [-0.09, 0.12], "p": 0.78, "se": 0.054, "n_labels": 100, "n_items": 120, "lam": 0.15},
        **{"scorer_estimate": 0.017, "labels_estimate": 0.0, "labels_ci95": [-0.13, 0.13], "effective_labels": 145.5},
        **{"n_disagreements": 13, "method": "PPI++ (t interval)", "se_labelled": 0.05169, "se_scorer": 0.01549},
        **ppi,
    }
    results = tmp_path / "results.json"
    measures = {"offense_rate": {"kind": "rate", "sd_difference": 0.3, "a": 0.1, "b": 0.1, "primary": True, "ppi": row}}
    results.write_text(json.dumps({"n_pairs": 120, "n_clusters": 61, "measures": measures}))
    return results


def _plan(*args: str) -> tuple[int, str]:
    done = runner.invoke(app, ["plan", *args])
    return done.exit_code, " ".join(done.output.split())


def test_plan_gold_says_when_the_labels_are_more_than_the_runs_pairs(tmp_path: Path) -> None:
    """Review finding: 651 labelled pairs for a 120-pair run, "a floor", and label --n 1302 then failed."""
    results = _run(tmp_path)
    code, text = _plan("--gold", "0.05", "--measure", "offense_rate", "--results", str(results))
    assert code == 0 and "651 labelled pairs give" in text, text
    assert f"warning: 651 labelled pairs are more than the 120 pairs {results} scored" in text
    assert "audit at least 651 pairs and label 651 of them (label --n 1,302" in text
    assert "was measured at the run's 120 pairs and shrinks as more are scored" in text
    assert "as few as 411 labels may do" in text  # (1.96 x 0.5169 / 0.05)^2, the scorer's term gone
    code, text = _plan("--gold", "0.2", "--measure", "offense_rate", "--results", str(results))
    assert code == 0 and "more than the" not in text, text  # within the run's pairs: no warning


def test_plan_gold_refuses_power_as_it_refuses_the_other_unused_options() -> None:
    """Review finding: plan --gold ... --power 0.99 printed the same as without, where --tests was refused."""
    done = runner.invoke(app, ["plan", "--gold", "0.02", "--measure", "offense_rate", "--sd", "0.3", "--power", "0.99"])
    assert done.exit_code == 2 and "error: --power does not apply to --gold" in " ".join(done.stderr.split()), done.output
    plain = runner.invoke(app, ["plan", "--gold", "0.02", "--measure", "offense_rate", "--sd", "0.3"])
    assert plain.exit_code == 0 and "865 labelled pairs" in plain.output
    default = runner.invoke(app, ["plan", "--measure", "offense_rate", "--effect", "0.01", "--sd", "0.3"])
    given = runner.invoke(app, ["plan", "--measure", "offense_rate", "--effect", "0.01", "--sd", "0.3", "--power", "0.8"])
    assert default.exit_code == 0 and default.output == given.output and "with power 80%" in default.output


def test_plan_gold_calls_a_labels_only_runs_spread_the_labels_own_and_warns(tmp_path: Path) -> None:
    """Review finding: a run whose PPI was "labels only (PPI++'s interval was no narrower…)" gave "the scorer's per-pair
    error", with no warning, where fewer than 10 disagreements did warn."""
    method = "labels only (PPI++'s interval was no narrower: 0.6231 wide against the labels' 0.564), score interval"
    alone = {"lam": 0.0, "effective_labels": None, "n_disagreements": 14, "method": method, "se_scorer": 0.0}
    results = _run(tmp_path, n_labels=30, se=0.1439, se_labelled=0.1439, **alone)
    code, text = _plan("--gold", "0.5", "--measure", "offense_rate", "--results", str(results))
    assert code == 0 and "spread of the labels' own per-pair gap 0.788" in text, text
    assert "scorer's per-pair error" not in text
    assert f"warning: the labelled estimate in {results} is the labels' alone (PPI++'s interval was no narrower)" in text


def test_plan_shows_a_tiny_effect_with_the_digits_it_needs() -> None:
    """Review finding: plan --effect 1e-9 printed "a difference of 0.00 pp" (an effect no audit detects: now refused)."""
    code, text = _plan("--measure", "offense_rate", "--effect", "4e-5", "--sd", "0.001")
    assert code == 0 and "a difference of 0.004 pp" in text and "0.00 pp" not in text, text
    code, text = _plan("--measure", "offense_rate", "--effect", "1e-9", "--sd", "0.3")
    assert code == 2 and "beyond any audit" in text, text
    code, text = _plan("--measure", "length", "--effect", "1e-5", "--sd", "0.001")
    assert code == 0 and "a difference of 1e-05 with" in text and "0.0000" not in text, text
    code, text = _plan("--measure", "offense_rate", "--effect", "0.01", "--sd", "0.3")
    assert code == 0 and "a difference of 1.00 pp" in text, text  # as the report writes it, where that holds it
