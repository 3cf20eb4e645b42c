"""Issue 39, "a verdict and its interval from one test": an audit's rate row takes its p and its 95% CI from one procedure.

The default rate test is the score test of a zero mean difference, and the printed interval is
the score interval that test inverts (Tango's; by dialogue, counts over the design effect, with
clusters), so ``p_paired < 0.05`` exactly when the interval leaves 0 out. Before, the p came from
McNemar's exact test (or the sign-flip test by dialogue) and the interval from Newcombe's: at 5
pairs the negative bot printed ``[-96.378, -19.259]`` beside McNemar p 0.125. A user who asks for
McNemar (``--binary-test exact``) keeps it, beside Newcombe's interval, and the report's ‡.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairtalk
from fairtalk.inference import Inference, KeyMeta, compare_scored
from fairtalk.report import render_markdown
from fairtalk.report._table import CI_TEST_MARK, ci_test_note, ci_vs_test
from fairtalk.results import MeasureResult, Verdict

_RATE = KeyMeta("rate")


def _excludes_zero(ci: tuple[float | None, float | None]) -> bool:
    low, high = ci
    assert low is not None and high is not None
    return low > 0 or high < 0


def _negative_bot(text: str) -> str:
    """Negative whenever the context mentions a woman, except on the fifth context: 4 of 5 pairs one way."""
    if "she" in text.split() and not text.endswith("4"):
        return "that is awful, i hate it, terrible"
    return "that is lovely, i am so happy for you"


def test_the_five_pair_negative_bot_shows_no_interval_its_test_contradicts(tmp_path: Path) -> None:
    corpus = tmp_path / "five.txt"
    corpus.write_text("".join(f"he likes tea {i}\n" for i in range(5)), encoding="utf-8")
    run = fairtalk.audit(
        corpus=f"text:{corpus}",
        axes="gender",
        model=_negative_bot,
        measures="sentiment",
        primary="sentiment_negative",  # a family of one: the verdict is the test's
        clusters=False,
        n_resamples=20,
    )
    result = run.results["gender"]
    m = result.measure("sentiment_negative")
    assert (m.a, m.b) == (0.0, pytest.approx(0.8))
    assert m.paired_test == "score" and m.ci_method == "score"
    # McNemar's asymptotic test (0 - 4) / sqrt(4) = -2: p 0.0455, and its inversion leaves 0 out
    assert m.p_paired == pytest.approx(0.0455, abs=1e-4)
    assert m.ci95[1] is not None and m.ci95[1] < 0  # Tango's interval, -96.4 to -1.8 points
    assert m.verdict is Verdict.DIFFERENT  # before: McNemar p 0.125, inconclusive beside [-96.378, -19.259]
    assert not ci_vs_test(m) and ci_test_note(result) is None
    assert CI_TEST_MARK not in render_markdown(result)


def _table(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, tuple[str, ...] | None]:
    n = draw(st.integers(2, 40))
    a = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    b = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    clustered = draw(st.booleans())
    clusters = tuple(f"d{draw(st.integers(0, max(1, n // 3)))}" for _ in range(n)) if clustered else None
    return a, b, clusters


tables = st.composite(_table)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(tables())
def test_the_default_rate_test_rejects_exactly_when_its_interval_leaves_zero_out(
    table: tuple[np.ndarray, np.ndarray, tuple[str, ...] | None],
) -> None:
    a, b, clusters = table
    row = compare_scored("offense_rate", _RATE, a, b, Inference(clusters=clusters)).tested
    assert row.paired_test == ("cluster_score" if clusters is not None else "score")
    assert row.p_paired is not None
    assert (row.p_paired < 0.05) == _excludes_zero(row.ci95), (row.p_paired, row.ci95)
    assert not ci_vs_test(MeasureResult(row, p_adjusted=row.p_paired))


def test_a_chosen_mcnemar_keeps_its_test_newcombes_interval_and_the_mark() -> None:
    a, b = np.zeros(5), np.array([1.0, 1.0, 1.0, 1.0, 0.0])  # the negative bot's five pairs
    default = compare_scored("offense_rate", _RATE, a, b, Inference()).tested
    chosen = compare_scored("offense_rate", _RATE, a, b, Inference(binary_test="exact")).tested
    assert (default.paired_test, default.ci_method) == ("score", "score")
    assert not ci_vs_test(MeasureResult(default, p_adjusted=default.p_paired))
    assert (chosen.paired_test, chosen.ci_method) == ("mcnemar_exact", "newcombe")
    assert chosen.p_paired == pytest.approx(0.125) and _excludes_zero(chosen.ci95)
    marked = MeasureResult(chosen, p_adjusted=chosen.p_paired, verdict=Verdict.INCONCLUSIVE)
    assert ci_vs_test(marked)
    # with clusters McNemar gives way to the cluster mean test, still beside Newcombe's interval
    clustered = compare_scored("offense_rate", _RATE, a, b, Inference(binary_test="exact", clusters=("x", "y", "z", "u", "v")))
    assert clustered.tested.paired_test.startswith("cluster_signflip") and clustered.tested.ci_method == "newcombe"
