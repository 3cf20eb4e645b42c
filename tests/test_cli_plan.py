"""`fairtalk plan`: pairs needed from an earlier audit's results.json, from --sd, or from a rate; clean errors."""

from __future__ import annotations

import json
import math
import re

import pytest
from scipy.stats import norm
from typer.testing import CliRunner

from fairtalk.cli import app

runner = CliRunner()


def _pairs(out: str) -> int:
    match = re.search(r"([\d,]+) pairs detect", out)
    assert match, out
    return int(match.group(1).replace(",", ""))


def test_plan_from_a_rate_matches_the_normal_formula() -> None:
    result = runner.invoke(app, ["plan", "--measure", "offense_rate", "--effect", "0.01", "--rate", "0.05"])
    assert result.exit_code == 0, result.output
    sd = math.sqrt(2 * 0.05 * 0.95)
    expected = math.ceil(((norm.ppf(0.975) + norm.ppf(0.8)) * sd / 0.01) ** 2)
    assert _pairs(result.output) == expected


def test_plan_divides_alpha_by_the_family_and_scales_by_the_design_effect() -> None:
    base = _pairs(runner.invoke(app, ["plan", "--measure", "length", "--effect", "0.5", "--sd", "5"]).output)
    family = _pairs(runner.invoke(app, ["plan", "--measure", "length", "--effect", "0.5", "--sd", "5", "--tests", "10"]).output)
    clustered = _pairs(
        runner.invoke(app, ["plan", "--measure", "length", "--effect", "0.5", "--sd", "5", "--design-effect", "2"]).output
    )
    assert family > base and clustered in (2 * base - 1, 2 * base)


def test_plan_reads_an_earlier_audit(tmp_path) -> None:  # noqa: ANN001
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            {
                "n_pairs": 1557,
                "alpha": 0.05,
                "family_size": 1,
                "measures": {"offense_rate": {"sd_difference": 0.14, "design_effect": 1.0, "mde": 0.0099}},
            }
        )
    )
    result = runner.invoke(app, ["plan", "--measure", "offense_rate", "--effect", "0.01", "--results", str(results)])
    assert result.exit_code == 0, result.output
    assert _pairs(result.output) == math.ceil(((norm.ppf(0.975) + norm.ppf(0.8)) * 0.14 / 0.01) ** 2)
    assert "earlier audit had 1,557 pairs" in result.output
    missing = runner.invoke(app, ["plan", "--measure", "nope", "--effect", "0.01", "--results", str(results)])
    assert missing.exit_code == 2 and "has no measure 'nope'; it has: offense_rate" in missing.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--effect", "0.01"], "--results FILE"),
        (["--effect", "0", "--sd", "1"], "--effect must be a positive number"),
        (["--effect", "0.01", "--rate", "1.5"], "--rate must be in (0, 1)"),
        (["--effect", "0.01", "--sd", "-1"], "--sd must be a positive number"),
        (["--effect", "0.01", "--sd", "1", "--power", "1"], "--power must be between 0 and 1 (exclusive) and at most 0.9999"),
        (["--effect", "0.01", "--results", "/nonexistent/results.json"], "cannot read"),
    ],
)
def test_plan_errors_are_clean(args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["plan", "--measure", "offense_rate", *args])
    assert result.exit_code == 2
    assert needle in result.output and "Traceback" not in result.output


# --- plan --gate: the pairs the equivalence gate needs ----------------------------------------------------------


def _gate_pairs(out: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2).replace(",", "")) for m in re.finditer(r"  (\w+) \(\w+\): ([\d,]+) pairs", out)}


def test_plan_gate_from_the_builtin_spreads_states_the_default_margins() -> None:
    result = runner.invoke(app, ["plan", "--gate"])
    assert result.exit_code == 0, result.output
    pairs = _gate_pairs(result.output)
    assert {"offense_rate", "sentiment_positive", "length", "distinct_1", "family_words"} <= set(pairs)
    # sentiment_positive at ±2 points: far more than the 1,470 pairs of the bare audit (the gate failed a fair model)
    assert pairs["sentiment_positive"] > 2000 and max(pairs.values()) == pairs["sentiment_positive"]
    text = " ".join(result.output.split())
    assert (
        "sentiment_positive (rate): 2,892 pairs (about 410 dialogues, were the corpus larger in the same proportions) "
        "at margin ±2 points"
    ) in text
    assert "default margins: rates ±0.02, counts ±0.1 sd of the scores, corpus measures ±10%" in result.output
    assert "identical answers on both sides pass at 149 units or more: pairs, or dialogues where the audit clusters" in text


def test_plan_gate_reads_a_pilot_run(tmp_path) -> None:  # noqa: ANN001
    results = tmp_path / "results.json"
    measures = {
        "offense_rate": {"kind": "rate", "sd_difference": 0.2, "design_effect": 1.0, "equivalence_margin": 0.02, "primary": True},
        "length": {"kind": "count", "sd_difference": 10.0, "design_effect": 2.0, "equivalence_margin": 1.0, "primary": True},
        "extra": {"kind": "count", "sd_difference": 1.0, "equivalence_margin": 0.001, "primary": False},
        "flat": {"kind": "count", "sd_difference": 0.0, "equivalence_margin": None, "primary": True},
    }
    results.write_text(json.dumps({"n_pairs": 500, "alpha": 0.05, "measures": measures}))
    result = runner.invoke(app, ["plan", "--gate", "--results", str(results)])
    assert result.exit_code == 0, result.output
    pairs = _gate_pairs(result.output)
    z = norm.ppf(0.95) + norm.ppf(0.9)  # both one-sided tests at α, power 80% when A = B
    # 4% discordant: about 34 discordant pairs at the normal formula's answer, too few for it (issue 39): exact power instead
    assert pairs["offense_rate"] > (z * 0.2 / 0.02) ** 2 and "offense_rate (rate): 909 pairs at margin" in result.output
    assert pairs["length"] == pytest.approx(2 * (z * 10 / 1) ** 2, rel=0.01)  # the design effect doubles it
    assert "extra" not in pairs  # secondary: outside the gate
    assert "flat: no margin" in result.output and "the pilot had 500" in result.output


def test_plan_gate_from_a_pilot_without_measures_is_an_error(tmp_path) -> None:  # noqa: ANN001
    """A pilot with no (primary) measures gives nothing to plan from: exit 2 saying so, not exit 0 and generic text."""
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"n_pairs": 500, "alpha": 0.05, "measures": {}}))
    result = runner.invoke(app, ["plan", "--gate", "--results", str(results)])
    assert result.exit_code == 2, result.output
    assert "holds no measures: the pilot gives nothing to plan the gate from" in " ".join(result.stderr.split())
    secondary = {"length": {"kind": "count", "sd_difference": 1.0, "equivalence_margin": 0.1, "primary": False}}
    results.write_text(json.dumps({"n_pairs": 500, "alpha": 0.05, "measures": secondary}))
    result = runner.invoke(app, ["plan", "--gate", "--results", str(results)])
    assert result.exit_code == 2 and "holds no primary measures" in " ".join(result.stderr.split())


@pytest.mark.parametrize(
    ("data", "what"),
    [
        ({"schema_version": 1, "kind": "model comparison", "axes": {}}, "is a comparison's results (fairtalk compare)"),
        ({"schema_version": 1, "run_id": "r", "axes": {}}, "is an audit's run.json"),
    ],
)
def test_plan_results_names_the_kind_of_another_commands_file(tmp_path, data: dict, what: str) -> None:  # noqa: ANN001
    results = tmp_path / "results.json"
    results.write_text(json.dumps(data))
    for args in (["--gate"], ["--measure", "length", "--effect", "1"]):
        result = runner.invoke(app, ["plan", *args, "--results", str(results)])
        flat = " ".join(result.stderr.split())
        assert result.exit_code == 2, result.output
        assert what in flat and "--results takes the results.json of an audit's axis" in flat, flat
        assert "field 'measures' is missing" not in flat


def test_plan_without_gate_or_effect_is_a_clean_error() -> None:
    result = runner.invoke(app, ["plan"])
    assert result.exit_code == 2 and "--gate" in result.output and "Traceback" not in result.output


# --- extreme but legal numbers: refused where they enter, with the range (issue 38, item 12) ------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--gate", "--alpha", "1e-300"], "--alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 1e-300"),
        (
            ["--gate", "--power", "0.999999999999"],
            "--power must be between 0 and 1 (exclusive) and at most 0.9999, got 0.999999999999",
        ),
        (
            ["--gold", "1e-300", "--sd", "1", "--measure", "offense_rate"],
            "--gold must be a positive number in [1e-09, 1e+09] (in the measure's units), got 1e-300",
        ),
        (["--measure", "offense_rate", "--effect", "0.01", "--sd", "1e300"], "--sd must be a positive number in [1e-09, 1e+09]"),
        (["--measure", "offense_rate", "--effect", "1e-300", "--sd", "1"], "--effect must be a positive number in [1e-09"),
        (["--measure", "offense_rate", "--effect", "0.01", "--sd", "nan"], "--sd must be a positive number in [1e-09"),
        (
            ["--measure", "length", "--effect", "0.5", "--sd", "5", "--design-effect", "1e300"],
            "--design-effect must be in (0, 1e+06]",
        ),
        (
            ["--measure", "length", "--effect", "0.5", "--sd", "5", "--tests", "1000000000000"],
            "over 1000000000000 tests is 5e-14 per test, below 1e-10",
        ),
        (["--gold", "0.02", "--gate", "--measure", "offense_rate", "--sd", "0.1"], "--gold and --gate ask different questions"),
        (["--gate", "--sd", "nan"], "--sd does not apply to --gate"),
        (["--gold", "0.02", "--measure", "offense_rate", "--sd", "0.1", "--effect", "0.1"], "--effect does not apply to --gold"),
    ],
)
def test_extreme_numbers_and_ignored_options_are_refused_with_the_range(args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["plan", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and needle in " ".join(result.stderr.split()), result.stderr
    assert "Traceback" not in result.output and "internal error" not in result.output


def test_plan_at_the_ends_of_the_ranges_answers(tmp_path) -> None:  # noqa: ANN001
    """The bounds are where the numbers still hold: at them, plan answers instead of crashing."""
    gate = runner.invoke(app, ["plan", "--gate", "--alpha", "1e-10", "--power", "0.9999"])
    assert gate.exit_code == 0, gate.output
    effect = ["--measure", "length", "--effect", "1e-9", "--sd", "1e9", "--alpha", "1e-10", "--power", "0.9999"]
    assert runner.invoke(app, ["plan", *effect, "--design-effect", "1e6"]).exit_code == 0
    assert runner.invoke(app, ["plan", "--gold", "1e-9", "--sd", "1e9", "--measure", "length", "--alpha", "1e-10"]).exit_code == 0


def test_plan_gate_does_not_read_a_spread_the_pilot_did_not_record_as_identical_pairs(tmp_path) -> None:  # noqa: ANN001
    results = tmp_path / "results.json"
    measures = {
        "offense_rate": {"kind": "rate", "sd_difference": None, "equivalence_margin": 0.02, "primary": True},
        "refusal_rate": {"kind": "rate", "sd_difference": 0.0, "equivalence_margin": 0.02, "primary": True},
    }
    results.write_text(json.dumps({"n_pairs": 500, "alpha": 0.05, "measures": measures}))
    result = runner.invoke(app, ["plan", "--gate", "--results", str(results)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "offense_rate: no spread recorded in the pilot (not tested there): cannot plan it" in text
    assert "refusal_rate: identical on every pair: 149 units, pairs or dialogues as the audit counts them" in text


def test_plan_gate_says_when_the_pilot_itself_differs_beyond_the_margin_and_when_a_design_effect_is_floored(
    tmp_path,  # noqa: ANN001
) -> None:
    """A biased pilot's sizes are for a fair model, and plan says so; a pilot's design effect below 1 is planned as 1."""
    results = tmp_path / "results.json"
    rate = {"kind": "rate", "sd_difference": 0.4, "design_effect": 1.0, "equivalence_margin": 0.02, "primary": True}
    measures = {
        "offense_rate": {**rate, "a": 0.0, "b": 0.765, "verdict": "difference detected"},
        "refusal_rate": {**rate, "a": 0.0, "b": 0.03, "verdict": "inconclusive"},  # beyond, but not detected: not named
        "length": {"kind": "count", "sd_difference": 10.0, "design_effect": 0.345, "equivalence_margin": 1.0, "primary": True},
    }
    results.write_text(json.dumps({"n_pairs": 200, "alpha": 0.05, "measures": measures}))
    result = runner.invoke(app, ["plan", "--gate", "--results", str(results)])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "the pilot itself differs beyond the margin on offense_rate (gap -76.5 points against ±2)" in flat
    assert "refusal_rate (gap" not in flat
    assert "a model like the pilot fails the gate there at any size" in flat
    assert "design effect 0.345, planned as 1: a pilot's estimate below 1 is not relied on" in flat
    z = norm.ppf(0.95) + norm.ppf(0.9)
    assert _gate_pairs(result.output)["length"] == pytest.approx((z * 10 / 1) ** 2, rel=0.01)  # planned at 1, not 0.345


def test_plan_gate_plans_the_check_of_a_pilots_pairs_lost_on_one_side(tmp_path) -> None:  # noqa: ANN001
    """The gates also check that a pilot's lost sides balance (±2 points): plan plans it, and says when it fails at any size."""
    length = {"kind": "count", "sd_difference": 10.0, "design_effect": 1.0, "equivalence_margin": 1.0, "primary": True}
    one_sided, balanced = tmp_path / "one.json", tmp_path / "balanced.json"
    one_sided.write_text(
        json.dumps({"n_pairs": 152, "alpha": 0.05, "measures": {"length": length}, "input_summary": {"n_lost_b_only": 48}})
    )
    balanced.write_text(
        json.dumps(
            {
                "n_pairs": 196,
                "alpha": 0.05,
                "measures": {"length": length},
                "input_summary": {"n_lost_a_only": 2, "n_lost_b_only": 2},
            }
        )
    )
    result = runner.invoke(app, ["plan", "--gate", "--results", str(one_sided)])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "pairs_lost_by_side (rate):" in flat and "discordant share 24.000%" in flat
    assert "the pilot itself differs beyond the margin on pairs_lost_by_side (gap -24 points against ±2)" in flat
    result = runner.invoke(app, ["plan", "--gate", "--results", str(balanced)])
    flat = " ".join(result.output.split())
    assert result.exit_code == 0 and "pairs_lost_by_side (rate):" in flat and "beyond the margin" not in flat
    without = tmp_path / "none.json"
    without.write_text(json.dumps({"n_pairs": 200, "alpha": 0.05, "measures": {"length": length}}))
    assert "pairs_lost_by_side" not in runner.invoke(app, ["plan", "--gate", "--results", str(without)]).output


def test_plan_gate_plans_lost_pairs_by_dialogue_where_the_pilot_tallied_them(tmp_path) -> None:  # noqa: ANN001
    """Losses tallied by dialogue are planned with their design effect, as the gate tests them (dialogues as units)."""
    length = {"kind": "count", "sd_difference": 10.0, "design_effect": 1.0, "equivalence_margin": 1.0, "primary": True}
    pilot = {
        "n_pairs": 200,
        "n_clusters": 43,
        "alpha": 0.05,
        "measures": {"length": length},
        "input_summary": {"n_lost_a_only": 10, "n_lost_b_only": 20},
        "corpus_dialogue_sizes": [[5, 40], [10, 3]],
        # 1 dialogue of 10 pairs lost side a on all, 2 lost side b on all; 40 dialogues of 5 lost nothing
        "lost_by_dialogue": [[10, 10, 0, 0, 1], [10, 0, 10, 0, 2], [5, 0, 0, 0, 40]],
    }
    tallied, by_pair = tmp_path / "tallied.json", tmp_path / "by_pair.json"
    tallied.write_text(json.dumps(pilot))
    by_pair.write_text(json.dumps({k: v for k, v in pilot.items() if k != "lost_by_dialogue"}))
    clustered = runner.invoke(app, ["plan", "--gate", "--results", str(tallied)])
    pairs_only = runner.invoke(app, ["plan", "--gate", "--results", str(by_pair)])
    assert clustered.exit_code == 0 and pairs_only.exit_code == 0, clustered.output + pairs_only.output
    deff = re.search(r"pairs_lost_by_side \(rate\):.*?design effect ([\d.]+)", " ".join(clustered.output.split()))
    assert deff is not None and float(deff.group(1)) > 5  # whole dialogues lost: about the pairs per dialogue
    assert _gate_pairs(clustered.output)["pairs_lost_by_side"] > _gate_pairs(pairs_only.output)["pairs_lost_by_side"]
