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
