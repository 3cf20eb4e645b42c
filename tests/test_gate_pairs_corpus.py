"""`plan --gate` for the corpus keys (distinct_1, distinct_2, diversity): planned from how their margin over the
permutation interval's standard error grows with the pairs, not from the normal formula (issue 39, item 2).

The normal formula assumed a fixed margin and a standard error falling as ``1 / sqrt(n)``; a corpus key's default
margin (±10% of its value) shrinks as the corpus grows. On the bare audit's answers it planned distinct_1 at 463
pairs and distinct_2 at 256, where a fair model passed the gate 0.99 and 1.00 of the time (bench/gate_power.py).
"""

from __future__ import annotations

import json
import math
import re

import pytest
from scipy.stats import norm
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.stats import CORPUS_LEAST_PAIRS, pairs_for_corpus_equivalence, power_corpus_equivalence

runner = CliRunner()
TARGET = float(norm.ppf(0.95) + norm.ppf(0.9))  # margin / SE at power 0.8, α 0.05


def _gate_pairs(out: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2).replace(",", "")) for m in re.finditer(r"  (\w+) \(\w+\): ([\d,]+) pairs", out)}


def test_power_of_the_permutation_tost_is_the_normal_tost_of_its_ratio() -> None:
    assert power_corpus_equivalence(TARGET) == pytest.approx(0.8)
    assert power_corpus_equivalence(1.0) == 0.0  # a margin narrower than z_0.95 standard errors never passes
    assert power_corpus_equivalence(6.0) > 0.999


def test_pairs_scale_the_ratio_by_its_exponent() -> None:
    # the ratio reaches the target exactly at the pilot's size
    assert pairs_for_corpus_equivalence(TARGET, 1000, exponent=0.25) == 1000
    # half the target: (2)^(1 / 0.25) = 16 times the pilot's pairs, where the normal formula (exponent ½) says 4
    assert pairs_for_corpus_equivalence(TARGET / 2, 1000, exponent=0.25) == pytest.approx(16_000, abs=1)
    assert pairs_for_corpus_equivalence(TARGET / 2, 1000, exponent=0.5) == pytest.approx(4_000, abs=1)
    # far above the target: the fewest planned, whatever the exponent
    assert pairs_for_corpus_equivalence(3 * TARGET, 1000, exponent=0.05) == CORPUS_LEAST_PAIRS


def test_a_ratio_that_does_not_grow_enough_is_beyond_any_audit() -> None:
    with pytest.raises(ValueError, match="needs more than"):
        pairs_for_corpus_equivalence(TARGET / 2, 1000, exponent=0.0)
    with pytest.raises(ValueError, match="needs more than"):
        pairs_for_corpus_equivalence(TARGET / 4, 1000, exponent=0.05)  # 4^20 times the pilot's pairs
    with pytest.raises(ValueError, match="must be > 0"):
        pairs_for_corpus_equivalence(0.0, 1000, exponent=0.25)


def test_plan_gate_plans_the_builtin_corpus_keys_at_their_default_margin() -> None:
    result = runner.invoke(app, ["plan", "--gate"])
    assert result.exit_code == 0, result.output
    pairs = _gate_pairs(result.output)
    text = " ".join(result.output.split())
    # distinct_1: 5.18 standard errors at 1,470 pairs, growing as n^0.24: (2.926 / 5.18)^(1 / 0.24) of 1,470
    expected = math.ceil(1470 * (TARGET / (0.01206 / (0.0893 / math.sqrt(1470)))) ** (1 / 0.24))
    assert pairs["distinct_1"] == expected and 100 < expected < 200  # the normal formula said 463
    assert "distinct_1 (corpus): " + f"{expected:,}" + " pairs at its default margin, ±10% of its value" in text
    # distinct_2 and diversity: above the target at the fewest pairs planned; plan says so rather than a size
    for key in ("distinct_2", "diversity"):
        assert pairs[key] == CORPUS_LEAST_PAIRS
        assert f"{key} (corpus): 25 pairs at its default margin" in text
    assert text.count("above 0.80 at any size from 25 pairs (the fewest planned): it cannot be planned nearer") == 2


def _pilot(tmp_path, margins: dict[str, float]) -> str:  # noqa: ANN001
    results = tmp_path / "results.json"
    se = 0.004  # the permutation interval's standard error at the pilot's 400 pairs
    row = {"kind": "corpus", "ci95": [-1.959964 * se, 1.959964 * se], "equivalence_margin": 0.02, "primary": True}
    data = {"n_pairs": 400, "alpha": 0.05, "measures": {"distinct_1": row}, "manifest": {"margins": margins}}
    results.write_text(json.dumps(data))
    return str(results)


def test_plan_gate_reads_a_pilots_corpus_key_default_or_fixed_margin(tmp_path) -> None:  # noqa: ANN001
    default = runner.invoke(app, ["plan", "--gate", "--results", _pilot(tmp_path, {})])
    assert default.exit_code == 0, default.output
    # the margin is 5 standard errors at 400 pairs; at the default margin the ratio grows as n^0.24
    assert _gate_pairs(default.output)["distinct_1"] == math.ceil(400 * (TARGET / 5) ** (1 / 0.24))
    assert "at its default margin" in default.output
    fixed = runner.invoke(app, ["plan", "--gate", "--results", _pilot(tmp_path, {"distinct_1": 0.02})])
    assert fixed.exit_code == 0, fixed.output
    # a margin the pilot fixed (--margin) does not shrink with the corpus: the ratio grows as n^0.63
    assert _gate_pairs(fixed.output)["distinct_1"] == math.ceil(400 * (TARGET / 5) ** (1 / 0.63))
    assert "pairs at margin ±2 points (the pilot's --margin, the same at any size)" in " ".join(fixed.output.split())
