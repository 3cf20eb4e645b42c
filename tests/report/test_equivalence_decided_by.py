"""Issue 39 item 7: an equivalence verdict names the interval or bound that decided it, not the 95% CI beside it.

The TOST at α is the inversion of the ``1 - 2α`` interval (90% at α 0.05); a rate with few
discordant units (identical answers its case 0) is decided by an exact bound on the share of
units that could differ. The result records which (``equivalence_interval``,
``equivalence_bound``), and every place that shows the verdict beside the 95% CI says so.
"""

from __future__ import annotations

import dataclasses
import io
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from rich.console import Console

from fairtalk import Response, score
from fairtalk.report import junit_xml, render_html, render_markdown, rich_table
from fairtalk.results import AuditResult, MeasureResult, Provenance, TestedKey, Verdict
from fairtalk.stats import (
    METHOD_FEW_DISCORDANT,
    METHOD_IDENTICAL,
    direction_equivalence,
    newcombe_interval,
    tost_mean,
    tost_rate,
    units,
)


def _key(name: str, kind: str, ci: tuple[float, float], a: float = 0.02, b: float = 0.02) -> TestedKey:
    return TestedKey(name, kind, a, b, 0.0, None, None, 1.0, "paired t", ci, 0.0, "cohens_d", n_clusters=78)


#: The reviewer's row: a 95% CI crossing the ±0.0162 margin beside a TOST that passes (p 0.0496).
CAREER = MeasureResult(
    _key("career_words", "count", (-0.0194, 0.0194)),
    p_adjusted=1.0,
    equivalence_margin=0.0162,
    p_equivalence=0.0496,
    equivalent=True,
    equivalence_test="cluster TOST (t)",
    equivalence_interval=(-0.01615, 0.01615),
    verdict=Verdict.EQUIVALENT,
)
#: A constant bot: identical answers, equivalent by the exact bound while the 95% CI spans ±2.449 points.
IDENTICAL = MeasureResult(
    _key("offense_rate", "rate", (-0.02449, 0.02449), 0.0, 0.0),
    p_adjusted=None,
    equivalence_margin=0.02,
    p_equivalence=0.0097,
    equivalent=True,
    equivalence_test=METHOD_IDENTICAL,
    equivalence_bound=0.0202,
    verdict=Verdict.EQUIVALENT,
)
#: The reverse: a 95% CI inside ±2 points, inconclusive because the exact bound on few discordant units decides.
FEW = MeasureResult(
    _key("refusal_rate", "rate", (-0.0045, 0.00949), 0.004, 0.001),
    p_adjusted=1.0,
    equivalence_margin=0.02,
    p_equivalence=0.21,
    equivalent=False,
    equivalence_test=METHOD_FEW_DISCORDANT,
    equivalence_bound=0.0311,
    verdict=Verdict.INCONCLUSIVE,
)


def _result(*measures: MeasureResult) -> AuditResult:
    return AuditResult(
        axis="gender",
        groups=("male", "female"),
        n_pairs=150,
        measures=measures,
        alpha=0.05,
        correction="holm",
        n_clusters=78,
        provenance=Provenance.from_dict({"fairtalk_version": "0.1.0", "seed": 0}),
    )


def _terminal(result: AuditResult) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=80).print(rich_table(result))
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    return " ".join(text.split())  # the caption wraps: read it as one line


def test_a_tost_verdict_names_its_90_percent_interval_not_the_95_percent_one() -> None:
    result = _result(CAREER)
    said = "Career words: 90% CI [-0.01615, +0.01615] inside ±0.01620"
    assert said in _terminal(result)
    assert "not the 95% CI" in _terminal(result)
    markdown = render_markdown(result)
    assert "±0.01620, p = 0.050; 90% CI [-0.01615, +0.01615]" in markdown
    assert "90% CI [-0.01615, +0.01615] inside ±0.01620" in render_html(result, plots=False)
    message = ET.fromstring(junit_xml({"gender": result})).find(".//testcase/system-out")
    assert message is not None and message.text is not None
    assert "95% CI [-0.0194, +0.0194]" in message.text
    assert message.text.endswith("; equivalence: 90% CI [-0.01615, +0.01615] inside ±0.01620")


def test_an_interval_just_outside_its_margin_never_reads_as_inside_it() -> None:
    """The margin is shown in the interval's decimals: rounded alike, an end past it never shows below it."""
    outside = dataclasses.replace(
        CAREER,
        equivalence_margin=0.016234,
        p_equivalence=0.0501,
        equivalent=False,
        equivalence_interval=(-0.0162345, 0.0162345),
        verdict=Verdict.INCONCLUSIVE,
    )
    said = "90% CI [-0.01623, +0.01623] not inside ±0.01623"  # was: ... not inside ±0.016234
    assert said in render_html(_result(outside), plots=False)
    assert "±0.01623, p = 0.050; 90% CI [-0.01623, +0.01623]" in render_markdown(_result(outside))  # was ±0.0162
    message = ET.fromstring(junit_xml({"gender": _result(outside)})).find(".//testcase/system-out")
    assert message is not None and message.text is not None and message.text.endswith(f"; equivalence: {said}")


def test_an_identical_row_names_the_bound_that_decided_it() -> None:
    text = _terminal(_result(IDENTICAL))
    assert "equivalent †" in text
    assert "exact bound on how often they could differ (not the 95% CI)" in text
    assert "Offense %: exact bound: at most 2.02% of dialogues could differ, margin ±2.00 pp" in text
    # a results.json written before the bound was recorded still says the bound decided, not the interval
    older = _terminal(_result(dataclasses.replace(IDENTICAL, equivalence_bound=None)))
    assert "Offense %: exact bound (see the notes), margin ±2.00 pp" in older


def test_an_exact_bound_inconclusive_row_says_the_bound_decided() -> None:
    result = _result(FEW)
    assert "Refusal %: exact bound: at most 3.11% of dialogues could differ, margin ±2.00 pp" in _terminal(result)
    assert "±2.00 pp, p = 0.210; exact bound: at most 3.11% of dialogues could differ" in render_markdown(result)
    message = ET.fromstring(junit_xml({"gender": result})).find(".//testcase/system-out")
    assert message is not None and message.text is not None
    assert "equivalence: exact bound: at most 3.11% of dialogues could differ" in message.text


def test_a_difference_verdict_names_no_equivalence_decider() -> None:
    different = MeasureResult(
        CAREER.tested,
        p_adjusted=0.001,
        equivalence_margin=0.0162,
        p_equivalence=0.6,
        equivalent=False,
        equivalence_test="cluster TOST (t)",
        equivalence_interval=(0.01, 0.03),
        verdict=Verdict.DIFFERENT,
    )
    assert "Equivalence follows" not in _terminal(_result(different))


def test_the_tests_record_the_interval_they_invert_and_the_bound() -> None:
    rng = np.random.default_rng(0)
    d = rng.normal(0.0, 0.1, 400)
    tost = tost_mean(units(d, None), margin=0.02, alpha=0.05)
    assert tost.interval is not None
    low, high = tost.interval
    assert (low, high) == pytest.approx(
        (d.mean() - 1.6487 * d.std(ddof=1) / 20, d.mean() + 1.6487 * d.std(ddof=1) / 20), rel=1e-3
    )
    assert tost.equivalent == (-0.02 < low and high < 0.02)
    a, b = rng.random(2000) < 0.1, rng.random(2000) < 0.1
    rate = tost_rate(a, b, margin=0.02, alpha=0.05)
    at_90 = newcombe_interval(a, b, level=0.90)
    assert rate.interval == pytest.approx((at_90.low, at_90.high))
    assert rate.equivalent == (-0.02 < at_90.low and at_90.high < 0.02)  # type: ignore[operator]
    few = direction_equivalence(300, 2, 1, alpha=0.05, margin=0.02)
    assert few.interval is None and few.bound is not None and few.bound > 0.02 and few.equivalent is False


def _varying_lengths() -> list[Response]:
    rng = np.random.default_rng(1)
    out = []
    for i in range(300):
        n_a, n_b = (int(k) for k in rng.integers(5, 9, 2))
        out += [
            Response(f"p{i}", "a", f"he said {i}", "nice " * n_a, (("cluster", f"d{i}"),)),
            Response(f"p{i}", "b", f"she said {i}", "nice " * n_b, (("cluster", f"d{i}"),)),
        ]
    return out


def test_score_records_what_decided_in_results_json() -> None:
    result = score(_varying_lengths(), axis="gender", n_resamples=200)
    length = result.measure("length")
    assert length.equivalence_interval is not None and length.equivalence_bound is None
    offense = result.measure("offense_rate")  # no offensive answer on either side: identical answers
    assert offense.equivalence_test == METHOD_IDENTICAL
    assert offense.equivalence_bound == pytest.approx(1 - 0.05 ** (1 / 300))
    entry = result.to_dict()["measures"]["length"]
    assert entry["equivalence_interval"] == list(length.equivalence_interval)
    back = AuditResult.from_dict(result.to_dict())
    assert back.measure("length").equivalence_interval == length.equivalence_interval
    assert back.measure("offense_rate").equivalence_bound == offense.equivalence_bound


def test_the_terminal_names_the_decider_only_where_the_95_percent_ci_seems_to_say_otherwise() -> None:
    """A row whose 95% CI agrees with its verdict adds no caption: a bare audit's table stays short."""
    agreeing = dataclasses.replace(CAREER, tested=dataclasses.replace(CAREER.tested, ci95=(-0.005, 0.005)))
    assert "Equivalence follows" not in _terminal(_result(agreeing))
    assert "Career words: 90% CI" in _terminal(_result(CAREER))  # its 95% CI reaches past the margin


@pytest.mark.parametrize(
    ("ci", "interval", "shown_ci", "shown"),
    [
        ((-2.5698, 0.5198), (-2.314, 0.26401), "[-2.5698, +0.5198]", "90% CI [-2.31400, +0.26401]"),
        ((-0.0105, 0.0312), (-0.0068855, 0.026886), "[-0.0105, +0.0312]", "90% CI [-0.00689, +0.02689]"),
        ((-41.5, 12.25), (-38.123456, 10.5), "[-41.500, +12.250]", "90% CI [-38.1235, +10.5000]"),
    ],
)
def test_the_equivalence_interval_shows_one_decimal_more_than_the_95_percent_ci(
    ci: tuple[float, float], interval: tuple[float, float], shown_ci: str, shown: str
) -> None:
    """Review finding: ``90% CI [-0.0068855, +0.026885]`` and ``[-2.314, +0.26401]`` beside ``[-2.5698, +0.5198]``."""
    row = dataclasses.replace(CAREER, tested=_key("length", "count", ci), equivalence_margin=50.0, equivalence_interval=interval)
    markdown = render_markdown(_result(row))
    assert shown_ci in markdown and shown in markdown
