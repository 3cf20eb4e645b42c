"""The report's opening paragraph: each finding in plain words, with its direction, size and adjusted p."""

from __future__ import annotations

import fairtalk
from fairtalk.report import plain_summary, render_markdown
from fairtalk.results import SimilarityResult, SimilarityRow, Verdict


def _result(rude_b: int) -> fairtalk.AuditResult:
    a = [f"thanks for asking, it went fine number {i}" for i in range(200)]
    b = [f"shut up you idiot number {i}" if i < rude_b else f"thanks for asking, it went fine number {i}" for i in range(200)]
    return fairtalk.score(a, b, axis="gender", measures=["offense", "length"], n_resamples=200)


def test_a_difference_is_said_with_its_direction_size_and_p_and_the_rest_as_equivalent_or_not() -> None:
    sentences = plain_summary(_result(rude_b=60))
    offense = next(s for s in sentences if s.startswith("Offense Rate"))
    assert offense.startswith("Offense Rate is higher for female: 0.0% (male) vs 30.0% (female), a difference of -30.0 pp")
    assert "adjusted p < 1e-5" in offense
    assert not any(s.startswith("No measure differs") for s in sentences)
    calm = plain_summary(_result(rude_b=0))
    assert "No measure differs between male and female after the multiple-testing correction." in calm
    assert any(s.startswith("Shown equivalent within their margins: Offense Rate (±") for s in calm)


def test_the_similarity_test_leads_and_the_markdown_report_opens_with_the_summary() -> None:
    row = SimilarityRow(
        method="exact",
        n_pairs=200,
        counterfactual=0.031,
        baseline=0.029,
        difference=-0.002,
        ci95=(-0.01, 0.006),
        test="paired_t",
        p=0.6,
        p_adjusted=0.6,
        verdict=Verdict.INCONCLUSIVE,
    )
    similarity = SimilarityResult(axis="gender", model="m", alpha=0.05, seed=0, n_pairs=200, n_clusters=None, rows=(row,))
    result = _result(rude_b=0)
    sentences = plain_summary(result, similarity)
    assert sentences[0] == (
        "When only the group changes (male ↔ female), the answer changes in 3.1% of pairs, against "
        "2.9% when one context is asked twice: no more than the model's own sampling noise "
        "(adjusted p 0.600)."
    )
    page = render_markdown(result, similarity=similarity)
    assert page.index("When only the group changes") < page.index("| Measure |")


def _with(result: fairtalk.AuditResult, name: str, **tested: object) -> fairtalk.AuditResult:
    """``result`` with the tested figures of measure ``name`` replaced (a detected difference kept detected)."""
    import dataclasses

    measures = tuple(
        dataclasses.replace(m, tested=dataclasses.replace(m.tested, **tested)) if m.name == name else m for m in result.measures
    )
    return dataclasses.replace(result, measures=measures)


def _interval(sentence: str) -> tuple[str, str]:
    low, high = sentence.split("95% CI [", 1)[1].split("]", 1)[0].split(", ")
    return low, high


def test_a_small_gap_is_said_in_the_precision_its_size_needs_and_its_interval_never_looks_zero_width() -> None:
    """Review finding: "Distinct-1 … 0.3% vs 0.7%, a difference of -0.4 pp, 95% CI [-0.4, -0.4]" where the table
    says [-0.404, -0.354] pp (a share of distinct words, in percent: its gap in percentage points)."""
    result = _with(_result(rude_b=60), "offense_rate", kind="corpus", a=0.00333, b=0.00712, ci95=(-0.00404, -0.00354))
    offense = next(s for s in plain_summary(result) if s.startswith("Offense Rate"))
    assert "0.33% (male) vs 0.71% (female), a difference of -0.38 pp, 95% CI [-0.40, -0.35]" in offense
    close = _with(_result(rude_b=60), "offense_rate", a=0.0, b=0.3, ci95=(-0.30004, -0.30001))
    low, high = _interval(next(s for s in plain_summary(close) if s.startswith("Offense Rate")))
    assert low != high and (float(low), float(high)) == (-30.004, -30.001)


def test_a_count_gap_and_its_interval_share_one_precision() -> None:
    """Review finding: Length "+0.85, 95% CI [+0.8, +0.9]" (the table: [+0.7998, +0.9002])."""
    result = _with(_result(rude_b=60), "offense_rate", kind="count", a=6.0, b=5.15, ci95=(0.7998, 0.9002))
    offense = next(s for s in plain_summary(result) if s.startswith("Offense Rate"))
    assert "6 (male) vs 5.15 (female), a difference of +0.850, 95% CI [+0.800, +0.900]" in offense
    narrow = _with(_result(rude_b=60), "offense_rate", kind="count", a=6.0, b=5.15, ci95=(0.84991, 0.85012))
    low, high = _interval(next(s for s in plain_summary(narrow) if s.startswith("Offense Rate")))
    assert low != high and (float(low), float(high)) == (0.8499, 0.8501)
