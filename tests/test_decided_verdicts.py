"""Verdicts decided once, in inference/: the prompts analysis' pair verdicts and the similarity test's rows.

The result records hold what inference decided and re-decide nothing when read; the layer rule
itself is checked in ``tests/test_layers.py`` (``test_verdicts_are_decided_in_inference_not_in_results_or_run``).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fairtalk.errors import InputError
from fairtalk.inference import pair_verdicts, similarity_rows
from fairtalk.prompts import GroupPair, GroupSet, analyze
from fairtalk.results import PairVerdict, PromptAnalysis, Verdict


@pytest.fixture(scope="module")
def analysis() -> PromptAnalysis:
    """Three groups: a's regard well below b's and c's, b and c alike."""
    rng = np.random.default_rng(0)
    shares = {"a": (0.6, 0.2, 0.2), "b": (0.2, 0.2, 0.6), "c": (0.25, 0.2, 0.55)}
    rows = pd.DataFrame(
        [
            {"group": g, "template": f"t{t}", "structure": s, "seed": k, "label": int(rng.choice([-1, 0, 1], p=p))}
            for g, p in shares.items()
            for t in range(6)
            for s in ("original", "x", "y")
            for k in range(3)
        ]
    )
    pairs = (GroupPair("ab", "a", "b"), GroupPair("ac", "a", "c"), GroupPair("bc", "b", "c"))
    return analyze(rows, groups=GroupSet(("a", "b", "c"), pairs), n_draws=2, n_resamples=300)


def test_pair_verdicts_holm_over_the_pairs_against_alpha() -> None:
    found = pair_verdicts({"x": 0.01, "y": 0.03, "z": 0.2, "none": None}, alpha=0.05)
    assert list(found) == ["x", "y", "z", "none"]
    assert [v.p_adjusted for v in found.values()] == pytest.approx([0.03, 0.06, 0.2, None])  # 3 in the family, not 4
    assert [v.verdict for v in found.values()] == [Verdict.DIFFERENT, *[Verdict.INCONCLUSIVE] * 3]
    assert pair_verdicts({"y": 0.03}, alpha=0.05)["y"].verdict is Verdict.DIFFERENT  # alone, 0.03 < 0.05
    assert pair_verdicts({}, alpha=0.05) == {}


def test_the_analysis_holds_its_decided_verdicts_and_writes_them(analysis: PromptAnalysis) -> None:
    p = {name: gap.p for name, gap in analysis.gaps.items()}
    assert analysis.pair_verdicts == pair_verdicts(p, analysis.inference.alpha)  # type: ignore[union-attr]
    assert analysis.verdicts == {"ab": Verdict.DIFFERENT, "ac": Verdict.DIFFERENT, "bc": Verdict.INCONCLUSIVE}
    assert analysis.detected() == ("ab", "ac")
    written = json.loads(analysis.to_json())["pair_verdicts"]
    assert written["bc"]["verdict"] == "inconclusive" and written["ab"]["verdict"] == "difference detected"
    assert written["ab"]["p_adjusted"] == pytest.approx(analysis.pair_verdicts["ab"].p_adjusted)  # type: ignore[index]


def test_a_read_analysis_keeps_the_written_verdicts_and_decides_none_itself(analysis: PromptAnalysis) -> None:
    data = json.loads(analysis.to_json())
    for gap in data["gaps"].values():  # p-values that no longer fit the verdicts: reading must not re-decide
        gap["p"] = 1.0
    data["inference"]["alpha"] = 1e-9
    read = PromptAnalysis.from_dict(data)
    assert read.verdicts == analysis.verdicts and read.detected() == ("ab", "ac")
    assert read.pair_verdicts["ab"] == PairVerdict(analysis.pair_verdicts["ab"].p_adjusted, "difference detected")  # type: ignore[index]


def test_a_file_written_before_the_verdicts_reads_and_writes_back_unchanged(analysis: PromptAnalysis) -> None:
    older = {k: v for k, v in json.loads(analysis.to_json()).items() if k != "pair_verdicts"}
    read = PromptAnalysis.from_dict(older)
    assert read.pair_verdicts is None
    for undecided in (lambda: read.verdicts, read.detected):  # nothing decided in that file: not read as inconclusive
        with pytest.raises(InputError, match="written before fairtalk recorded its pair verdicts"):
            undecided()
    assert json.loads(read.to_json()) == older


def test_without_a_bootstrap_no_pair_is_tested() -> None:
    rows = pd.DataFrame(
        [
            {"group": g, "template": f"t{t}", "structure": "original", "seed": 0, "label": label}
            for g, label in (("a", -1), ("b", 1))
            for t in range(4)
        ]
    )
    found = analyze(rows, groups=GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),)), n_draws=2, n_resamples=0)
    assert found.pair_verdicts == {"ab": PairVerdict(None, Verdict.INCONCLUSIVE)}


def test_similarity_rows_test_each_method_and_leave_one_without_variation_out_of_the_family() -> None:
    n = 12
    counterfactual = {"exact": np.ones(n), "rouge_l": np.full(n, 0.5), "length_ratio": np.zeros(n)}
    rows = similarity_rows(counterfactual, {m: np.zeros(n) for m in counterfactual}, alpha=0.05)
    assert [r.method for r in rows] == ["exact", "rouge_l", "length_ratio"]
    exact, rouge, length = rows
    assert exact.verdict is Verdict.DIFFERENT and rouge.verdict is Verdict.DIFFERENT
    assert exact.p is not None and exact.p_adjusted == pytest.approx(min(1.0, 2 * exact.p))  # Holm over two, not three
    assert length.p_adjusted is None and length.verdict is Verdict.INCONCLUSIVE
    assert length.note is not None and "left out of the Holm family" in length.note
    assert (exact.n_pairs, exact.counterfactual, exact.baseline, exact.difference) == (n, 1.0, 0.0, 1.0)
    strict = similarity_rows(counterfactual, {m: np.zeros(n) for m in counterfactual}, alpha=exact.p_adjusted / 2)
    assert strict[0].verdict is not Verdict.DIFFERENT  # the level is the caller's alpha
