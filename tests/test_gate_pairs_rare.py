"""Issue 39 item 2: `plan --gate` plans a rare rate from the power of the gate's own test, not the normal formula.

The normal formula planned 136, 193 and 31 pairs for the bare audit's sentiment_negative,
refusal_rate and degenerate_rate, where the gate passed a fair model 0-4% of the time. Here the
power of the planned size is computed independently: every 2x2 table of a fair model, weighted by
its probability, decided by the gate's own functions (``tost_rate``; ``share_equivalence`` when
no pair differs).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.stats import share_equivalence, tost_rate

runner = CliRunner()
ALPHA, MARGIN = 0.05, 0.02


def _gate_power(n: int, q: float, *, design_effect: float = 1.0, units: int | None = None) -> float:
    """P(the gate passes) on n pairs, q of them discordant (half each way) and none positive on both sides: enumerated."""
    total = 0.0
    for k in range(int(binom.isf(1e-7, n, q)) + 2):
        weight = float(binom.pmf(k, n, q))
        if k == 0:
            passed = share_equivalence(units or n, alpha=ALPHA, margin=MARGIN, max_difference=1.0).equivalent
            total += weight * bool(passed)
            continue
        for n10 in range(k // 2 + 1):  # (n10, n01) and (n01, n10) mirror each other: the interval flips sign
            p = weight * float(binom.pmf(n10, k, 0.5)) * (1 if 2 * n10 == k else 2)
            if p < 1e-8:
                continue
            a = np.repeat([1.0, 0.0, 0.0], [n10, k - n10, n - k])
            b = np.repeat([0.0, 1.0, 0.0], [n10, k - n10, n - k])
            total += p * bool(tost_rate(a, b, margin=MARGIN, alpha=ALPHA, design_effect=design_effect).equivalent)
    return total


def _pilot(tmp_path: Path, q: float, *, n: int = 1000, clusters: int | None = None, deff: float = 1.0) -> Path:
    """A pilot results.json with one rate whose discordant share is q (split evenly: A = B), none positive on both sides."""
    sd = math.sqrt(q * n / (n - 1))  # the sd of A - B (ddof 1) of n differences, q n of them ±1 and summing to 0
    row = {"kind": "rate", "a": q / 2, "b": q / 2, "sd_difference": sd, "design_effect": deff}
    row |= {"equivalence_margin": MARGIN, "primary": True}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"n_pairs": n, "n_clusters": clusters, "alpha": ALPHA, "measures": {"refusal_rate": row}}))
    return path


def _planned(path: Path) -> int:
    result = runner.invoke(app, ["plan", "--gate", "--results", str(path)])
    assert result.exit_code == 0, result.output
    found = re.search(r"refusal_rate \(rate\): ([\d,]+) pairs", result.output)
    assert found, result.output
    return int(found.group(1).replace(",", ""))


@pytest.mark.parametrize("q", [0.02, 0.025])
def test_plan_gate_gives_a_rare_rate_the_power_of_the_gates_own_test(tmp_path: Path, q: float) -> None:
    n = _planned(_pilot(tmp_path, q))
    assert 0.75 <= _gate_power(n, q) <= 0.85, n  # the normal formula: 431 and 538 pairs, 0.67 and 0.72


def test_plan_gate_counts_dialogues_where_the_audit_clusters(tmp_path: Path) -> None:
    """Half a percent discordant: few pairs ever differ, so identical answers on 149 dialogues carry much of the power."""
    q, per_dialogue, deff = 0.005, 5, 1.2
    path = _pilot(tmp_path, q, clusters=200, deff=deff)
    n = _planned(path)
    assert 0.75 <= _gate_power(n, q, design_effect=deff, units=n // per_dialogue) <= 0.85, n
    output = runner.invoke(app, ["plan", "--gate", "--results", str(path)]).output
    assert f"{n:,} pairs (about {math.ceil(n / per_dialogue):,} dialogues at 5 pairs each)" in " ".join(output.split())


def test_the_builtin_rare_rates_need_more_pairs_than_the_normal_formula_said() -> None:
    result = runner.invoke(app, ["plan", "--gate"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    pairs = {m.group(1): int(m.group(2).replace(",", "")) for m in re.finditer(r"(\w+) \(rate\): ([\d,]+) pairs", text)}
    assert pairs["sentiment_negative"] > 136 and pairs["refusal_rate"] > 193 and pairs["degenerate_rate"] > 31, pairs
    assert "the built-in gender axis gives" in text and "1,470 pairs" in text


def test_pairs_for_a_rate_with_many_discordant_pairs_keep_the_normal_formula() -> None:
    from fairtalk.stats import pairs_for_equivalence, pairs_for_rate_equivalence

    q = 0.12  # about 300 discordant pairs at the answer: the normal formula holds
    assert pairs_for_rate_equivalence(q, MARGIN) == pairs_for_equivalence(math.sqrt(q), MARGIN)


def test_pairs_for_a_rate_refuses_what_no_audit_reaches() -> None:
    from fairtalk.stats import pairs_for_rate_equivalence

    with pytest.raises(ValueError, match="discordance must be in"):
        pairs_for_rate_equivalence(0.0, MARGIN)
    with pytest.raises(ValueError, match="discordance must be in"):
        pairs_for_rate_equivalence(1.0, MARGIN)
