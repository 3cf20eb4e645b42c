"""Review finding: a rate's margin and bounds read as fractions in the gate's text beside points in the tables.

report.md's gate section said "not shown within the margin ±0.02" beside the table's "±2.00 pp"; the
identical-answers note "so |A - B| <= 0.0202"; the console "offense_rate (detectable: 0.0521)" where
report.md's MDE column says "5.21 pp". A person reads a rate in percentage points everywhere;
results.json keeps fractions.
"""

from __future__ import annotations

import pytest

from fairtalk.gates import evaluate
from fairtalk.results import AuditResult, MeasureResult, TestedKey, Verdict
from fairtalk.stats import direction_equivalence, share_equivalence


def _key(name: str, kind: str) -> TestedKey:
    return TestedKey(name, kind, 0.1, 0.3, None, None, None, 0.001, "mcnemar_exact", (-0.3, -0.1), None, "")


def test_the_equivalence_gate_states_a_rate_s_margin_in_points_and_a_count_s_in_its_units() -> None:
    rate = MeasureResult(
        _key("offense_rate", "rate"),
        p_adjusted=0.001,
        equivalence_margin=0.02,
        p_equivalence=1.0,
        equivalent=False,
        equivalence_test="TOST (Newcombe)",
        verdict=Verdict.DIFFERENT,
    )
    count = MeasureResult(
        _key("length", "count"),
        p_adjusted=0.001,
        equivalence_margin=2.0,
        p_equivalence=1.0,
        equivalent=False,
        equivalence_test="TOST (t)",
        verdict=Verdict.DIFFERENT,
    )
    outcome = evaluate({"gender": AuditResult("gender", ("m", "f"), 200, (rate, count))}, "fail-unless-equivalent")
    reasons = {d.key: d.reason for d in outcome.decisions}
    assert reasons["offense_rate"] == "difference detected, not shown within the margin ±2.00 pp (TOST p 1)"
    assert "±0.02" not in reasons["offense_rate"]
    assert reasons["length"] == "difference detected, not shown within the margin ±2 (TOST p 1)"


def test_a_rate_s_exact_bounds_state_its_gap_in_points() -> None:
    identical = share_equivalence(147, alpha=0.05, margin=0.02, max_difference=1.0, units="dialogues")
    assert identical.note is not None and "so |A - B| <= 2.02 pp;" in identical.note
    few = direction_equivalence(5, 0, 4, alpha=0.05, margin=0.02)
    assert few.note is not None and "so |A - B| <= 98.98 pp;" in few.note


def test_the_console_names_a_rate_s_detectable_difference_in_points(capsys: pytest.CaptureFixture[str]) -> None:
    from fairtalk.cli._test_options import report_gates

    rate = MeasureResult(_key("offense_rate", "rate"), mde=0.0521, p_adjusted=0.3, verdict=Verdict.INCONCLUSIVE)
    count = MeasureResult(_key("length", "count"), mde=0.4321, p_adjusted=0.3, verdict=Verdict.INCONCLUSIVE)
    report_gates(
        {"gender": AuditResult("gender", ("m", "f"), 5, (rate, count))},
        alpha=0.05,
        fail_on_bias=False,
        fail_unless_equivalent=False,
    )
    out = " ".join(capsys.readouterr().out.split())
    assert "offense_rate (detectable: 5.21 pp)" in out
    assert "length (detectable: 0.4321)" in out
    assert "0.0521" not in out
