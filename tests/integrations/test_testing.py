"""``fairtalk.testing``: the bias assertions, on real audits of a fair and a biased reply function."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.integrations._toys import SMALL, biased, fair

import fairtalk
from fairtalk.testing import BiasAssertionError, assert_no_bias, assert_not_worse, audit_options


def test_a_fair_model_passes_and_its_report_is_where_asked(tmp_path: Path) -> None:
    run = assert_no_bias(fair, **SMALL, out_dir=tmp_path / "out")
    assert run.detected() == ()
    page = (tmp_path / "out" / "gender" / "report.md").read_text(encoding="utf-8")
    assert "Gate fail-on-bias: passed" in page


def test_a_biased_model_fails_naming_each_measure_its_gap_interval_p_and_the_report(tmp_path: Path) -> None:
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(biased, **SMALL, out_dir=tmp_path / "out")
    error = caught.value
    assert isinstance(error, AssertionError)
    assert error.failing == ("gender/offense_rate", "gender/length")
    assert error.report == tmp_path / "out" / "index.html" and error.report.is_file()
    lines = str(error).splitlines()
    assert (
        lines[0].startswith("fairtalk: bias detected in python:")
        and "(fail-on-bias, alpha 0.05; pairs per axis: gender 20)" in lines[0]
    )
    assert re.fullmatch(
        r"  gender/offense_rate: A 0 vs B 0\.\d+, gap -0\.\d+ \(95% CI -0\.\d+ to -0\.\d+\), "
        r"adjusted p [\d.e-]+ \(\w+\), margin ±0\.02, equivalence p [\d.]+: difference detected",
        lines[1],
    ), lines[1]
    assert lines[-1] == f"report: {tmp_path / 'out' / 'index.html'}"
    page = (tmp_path / "out" / "gender" / "report.md").read_text(encoding="utf-8")
    assert "## Gate requested" in page and "Gate fail-on-bias: FAILED" in page, "the report states the gate it raised on"
    assert "fail-on-bias" in error.report.read_text(encoding="utf-8")


def test_the_interval_is_called_the_95_percent_one_it_is_whatever_the_alpha(tmp_path: Path) -> None:
    """Review finding: with alpha 0.1 the assertion called results.json's ``ci95`` bounds a "90% CI"."""
    config = fairtalk.AuditConfig.from_mapping({"alpha": 0.1})
    with pytest.raises(BiasAssertionError) as caught:
        assert_no_bias(biased, **SMALL, config=config, out_dir=tmp_path)
    lines = str(caught.value).splitlines()
    assert "(fail-on-bias, alpha 0.1; pairs per axis: gender 20)" in lines[0], lines[0]
    low, high = json.loads((tmp_path / "gender" / "results.json").read_text(encoding="utf-8"))["measures"]["offense_rate"]["ci95"]
    assert f"(95% CI {low:.4g} to {high:.4g})" in lines[1], lines[1]
    assert "90% CI" not in str(caught.value)


def test_a_margin_makes_the_gate_equivalence(tmp_path: Path) -> None:
    """With a margin the gate is fail-unless-equivalent: 20 pairs cannot show a ±0.01 equivalence."""
    with pytest.raises(BiasAssertionError, match="measures not shown equivalent .*fail-unless-equivalent") as caught:
        assert_no_bias(fair, **SMALL, margin={"offense_rate": 0.01}, out_dir=tmp_path)
    assert "gender/offense_rate" in caught.value.failing
    assert "margin ±0.01" in str(caught.value)
    assert assert_no_bias(fair, **SMALL, margin={"offense_rate": 0.01}, gate="fail-on-bias", out_dir=tmp_path / "b")


def test_an_unknown_gate_is_refused_before_any_work() -> None:
    with pytest.raises(ValueError, match="unknown gate 'fail-if-worse'; choose one of: fail-on-bias, fail-unless-equivalent"):
        assert_no_bias(fair, gate="fail-if-worse")  # type: ignore[arg-type]


def test_options_layer_over_a_config() -> None:
    config = fairtalk.AuditConfig.from_mapping({"axes": "race", "n_pairs": 50, "margins": {"length": 0.5}})
    resolved = audit_options(config, n_pairs=20, margin={"offense_rate": 0.01}, measures="offense")
    assert resolved.axes == ("race",) and resolved.n_pairs == 20 and resolved.score.measures == ("offense",)
    assert dict(resolved.score.margins) == {"length": 0.5, "offense_rate": 0.01}
    assert audit_options(None) == fairtalk.AuditConfig()


def production(text: str) -> str:
    """The baseline of the comparisons: another model, with ``fair``'s answers."""
    return "that is lovely, i am so happy for you"


def test_not_worse_fails_identical_answers_on_20_pairs_saying_how_many_more_and_fails_a_regression(
    tmp_path: Path,
) -> None:
    """A model's answers identical to the baseline's on 20 pairs show nothing: the gate says how many more it needs."""
    with pytest.raises(BiasAssertionError) as same:
        assert_not_worse(fair, production, **SMALL, out_dir=tmp_path / "same")
    assert same.value.failing == ("gender/offense_rate", "gender/length")
    assert re.search(
        r"  gender/offense_rate: baseline gap .*, margin 0\.02: inconclusive; not shown non-inferior: the same gap on "
        r"all \d+ (pairs|dialogues) in both runs, too few for the exact identical-answers bound \(it needs 299 \w+, \d+ more",
        str(same.value),
    ), str(same.value)
    assert (tmp_path / "same" / "comparison" / "report.md").is_file()
    with pytest.raises(BiasAssertionError) as caught:
        assert_not_worse(biased, fair, **SMALL, out_dir=tmp_path / "worse")
    text = str(caught.value)
    assert text.startswith("fairtalk: python:") and "is not shown non-inferior to python:" in text
    assert re.search(
        r"gender/offense_rate: baseline gap 0 \(95% CI [-\d.]+ to [\d.]+\), candidate gap -0\.\d+ "
        r"\(95% CI -[\d.]+ to -[\d.]+\), change -0\.\d+ \(95% CI .*\), adjusted p [\d.e-]+, margin 0\.02: regressed",
        text,
    )
    assert caught.value.report == tmp_path / "worse" / "comparison" / "report.md"
    assert text.endswith(f"report: {caught.value.report}")


def test_not_worse_refuses_the_candidate_as_its_own_baseline(tmp_path: Path) -> None:
    """Review finding: ``assert_not_worse(f, f)`` passed; one model cannot be shown not worse than itself.

    On 40 pairs at ±0.2 the identical-answers bound is met: another model with the same answers passes.
    """
    options = {"axes": "gender", "n_pairs": 40, "measures": ("offense",), "margin": {"offense_rate": 0.2}}
    assert assert_not_worse(fair, production, **options, out_dir=tmp_path / "two").same_run is None
    with pytest.raises(BiasAssertionError) as same:
        assert_not_worse(fair, fair, **options, out_dir=tmp_path / "one")
    assert same.value.failing == ("run",)
    assert (
        "the baseline and the candidate are two runs of the same model python:tests.integrations._toys:fair with the same "
        "decoding settings: a model cannot be shown not worse than itself"
    ) in str(same.value)
