"""Review finding: a rate's printed 95% CI and its verdict's paired test contradicted each other with no note.

A rate's interval is Newcombe's (with a design effect by dialogue), its test McNemar's exact test
or the sign-flip test by dialogue: two procedures. At 5 pairs the negative bot printed
``[-96.378, -19.259]`` beside McNemar p 0.125 and *inconclusive*. Every report now marks a row
whose interval and unadjusted test disagree about 0 (``‡``) and says once which the verdict follows.
"""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from fairtalk.report import render_html, render_markdown, rich_table, summary_rows
from fairtalk.report._table import CI_TEST_MARK, ci_test_note, ci_vs_test
from fairtalk.results import AuditResult, MeasureResult, Provenance, TestedKey, Verdict
from fairtalk.stats import newcombe_interval, paired_test

#: The reviewer's five pairs: male never offensive, female on four of five.
_A, _B = [0, 0, 0, 0, 0], [1, 1, 1, 1, 0]


def _offense(p: float, ci: tuple[float, float], test: str = "mcnemar_exact") -> MeasureResult:
    key = TestedKey("offense_rate", "rate", 0.0, 0.8, None, -4.0, 6.3e-05, p, test, ci, -2.2, "cohens_h", ci_method="newcombe")
    return MeasureResult(key, p_adjusted=p, verdict=Verdict.DIFFERENT if p < 0.05 else Verdict.INCONCLUSIVE)


def _result(*measures: MeasureResult) -> AuditResult:
    return AuditResult(
        axis="gender",
        groups=("male", "female"),
        n_pairs=5,
        measures=measures,
        alpha=0.05,
        correction="holm",
        provenance=Provenance.from_dict({"fairtalk_version": "0.1.0", "seed": 0}),
    )


def _terminal(result: AuditResult) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=80).print(rich_table(result))
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    return text


def _reviewers_row() -> MeasureResult:
    """The row the real procedures give on the reviewer's five pairs: McNemar p 0.125, a Newcombe CI below 0."""
    test = paired_test(_A, _B, kind="rate", method="mcnemar_exact")
    ci = newcombe_interval(_A, _B)
    assert test.p is not None and ci.low is not None and ci.high is not None
    assert round(test.p, 3) == 0.125 and ci.high < 0  # the two procedures disagree about 0
    return _offense(test.p, (ci.low, ci.high))


def test_a_ci_leaving_0_out_beside_an_inconclusive_test_is_marked_in_every_report() -> None:
    result = _result(_reviewers_row())
    assert ci_vs_test(result.measures[0])
    terminal = _terminal(result)
    row = next(line for line in terminal.splitlines() if line.lstrip().startswith("Offense %"))
    assert "-19.259] ‡" in row and "inconclusive" in row
    said = " ".join(terminal.split())
    assert (
        "‡ the 95% CI and p (paired) disagree about 0 (p ≥ 0.05 while the 95% CI leaves 0 out): the verdict follows the test (McNemar's exact test"
        in said
    )
    assert "not this interval (Newcombe's)" in said
    markdown = render_markdown(result)
    assert "| [-96.378, -19.259] pp ‡ |" in markdown
    assert markdown.count("- ‡ the 95% CI and p (paired) disagree about 0") == 1
    html = render_html(result, plots=False)
    assert html.count("[-96.378, -19.259] pp ‡") == 2  # the at-a-glance table and the full one
    assert html.count("‡ the 95% CI and p (paired) disagree about 0") == 1


def test_a_ci_holding_0_beside_a_test_below_alpha_is_marked_too() -> None:
    m = _offense(0.03, (-0.40, 0.01), test="cluster_signflip_exact")
    assert ci_vs_test(m)
    note = ci_test_note(_result(m))
    assert note is not None and "the exact sign-flip test by dialogue" in note
    assert "(p < 0.05 while the 95% CI holds 0)" in note and "leaves 0 out" not in note


def test_the_note_names_both_cases_when_both_rows_occur() -> None:
    """Review finding: p 0.062 beside a CI leaving 0 out was footnoted "p < 0.05 against the CI leaving 0 out"."""
    holds = _offense(0.03, (-0.40, 0.01))
    leaves = _offense(0.062, (-0.9, -0.1))
    leaves = dataclasses.replace(leaves, tested=dataclasses.replace(leaves.tested, name="k1_rate"))
    note = ci_test_note(_result(holds, leaves))
    assert note is not None
    assert "(p < 0.05 while the 95% CI holds 0 or p ≥ 0.05 while the 95% CI leaves 0 out)" in note
    assert "against the CI" not in note


def test_a_ci_and_a_test_that_agree_are_not_marked() -> None:
    agree = [_offense(0.001, (-0.4, -0.1)), _offense(0.4, (-0.2, 0.1))]
    for m in agree:
        assert not ci_vs_test(m)
    result = _result(
        *(dataclasses.replace(m, tested=dataclasses.replace(m.tested, name=f"k{i}_rate")) for i, m in enumerate(agree))
    )
    assert not any(row.ci_vs_test for row in summary_rows(result))
    assert ci_test_note(result) is None
    assert CI_TEST_MARK not in _terminal(result) and CI_TEST_MARK not in render_markdown(result)
    assert CI_TEST_MARK not in render_html(result, plots=False)
    # an untested key, or one without an interval, has nothing to disagree with
    row = _reviewers_row()
    untested = dataclasses.replace(row, tested=dataclasses.replace(row.tested, not_tested="1 pair scored on both sides"))
    assert not ci_vs_test(untested)
    assert not ci_vs_test(_offense(0.125, (float("nan"), float("nan"))))


def test_the_statistics_doc_no_longer_says_the_interval_inverts_the_test() -> None:
    from pathlib import Path

    text = Path(__file__).resolve().parents[2].joinpath("docs", "statistics.md").read_text(encoding="utf-8")
    assert "The 95% CI printed beside a verdict is the inversion of the paired test" not in text
    assert "McNemar p 0.125" in text and "‡" in text
