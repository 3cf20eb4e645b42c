"""Tests for fairtalk.prompts._analysis on hand-built frames with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import entropy

from fairtalk.errors import InputError, SpecError
from fairtalk.prompts import GroupPair, GroupSet, analyze, kl_matrix, read_published


def _frame(rows: list[tuple[str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"group": g, "template": "worked as", "structure": s, "seed": i % 2, "label": lab} for i, (g, s, lab) in enumerate(rows)]
    )


GROUPS = GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),))


def test_distribution_regard_gap_and_kl_by_hand() -> None:
    rows = [
        ("a", "original", 1),
        ("a", "original", 0),
        ("a", "x", 1),
        ("a", "x", 2),
        ("b", "original", -1),
        ("b", "original", 0),
        ("b", "x", 0),
        ("b", "x", 1),
    ]
    result = analyze(_frame(rows), groups=GROUPS, smoothing=0.0, n_draws=3)
    assert result.distribution.loc["a"].to_dict() == pytest.approx({"negative": 0.0, "neutral": 1 / 3, "positive": 2 / 3})
    assert result.distribution.loc["b"].to_dict() == pytest.approx({"negative": 0.25, "neutral": 0.5, "positive": 0.25})
    assert result.distribution.at["all", "neutral"] == pytest.approx(3 / 7)
    assert result.baseline_distribution.loc["a"].to_dict() == pytest.approx({"negative": 0.0, "neutral": 0.5, "positive": 0.5})
    assert result.counts.loc["a"].to_dict() == {"negative": 0, "neutral": 1, "positive": 2}
    assert result.regard["a"].mean == pytest.approx(2 / 3) and result.regard["a"].n == 3
    assert result.regard["b"].std == pytest.approx(np.std([-1, 0, 0, 1], ddof=1))
    assert result.gaps["ab"].all == pytest.approx(2 / 3)
    assert result.gaps["ab"].baseline == pytest.approx(0.5 - (-0.5))
    # KL(a || b) is finite (b has no zero cell); KL(b || a) is infinite (a has no negatives): null in results.json
    assert result.kl.at["a", "b"] == pytest.approx(entropy([0, 1 / 3, 2 / 3], [0.25, 0.5, 0.25]))
    assert result.kl.at["b", "a"] == np.inf and result.kl.at["a", "a"] == 0.0
    assert result.to_dict()["kl"]["b"]["a"] is None
    # ... and the reason is given (review finding: "n/a" and null with no reason), once per table
    (why,) = [w for w in result.warnings if "KL divergence(s) of all structures are infinite" in w]
    assert "KL(b ‖ a): a has no 'negative' label where b has some" in why and "--smoothing" in why
    assert "KL(a ‖ b)" not in why and result.to_dict()["warnings"] == list(result.warnings)
    (base,) = [w for w in result.warnings if "of the baseline are infinite" in w]
    assert "KL(b ‖ a): a has no 'negative' label" in base and "KL(a ‖ b): b has no 'positive' label" in base
    smoothed = analyze(_frame(rows), groups=GROUPS, smoothing=1e-3, n_draws=3)
    assert np.isfinite(smoothed.kl.at["b", "a"]) and not any("infinite" in w for w in smoothed.warnings)
    assert result.by_structure.loc["x"].to_dict() == pytest.approx({"a": 1.0, "b": 0.5})
    assert result.structure_counts == {"original": 4, "x": 4}


def test_include_other_adds_a_category() -> None:
    rows = [("a", "original", 2), ("a", "original", 1), ("b", "original", 0), ("b", "original", 2)]
    result = analyze(_frame(rows), groups=GROUPS, include_other=True, n_draws=2)
    assert result.labels == ("negative", "neutral", "positive", "other")
    assert result.distribution.at["a", "other"] == pytest.approx(0.5)
    assert result.regard["a"].n == 1  # "other" never enters a mean regard


def test_reversing_structures_best_and_worst() -> None:
    rows = []
    for structure, (la, lb) in {"s1": (1, -1), "s2": (1, 0), "s3": (-1, 0), "original": (0, 0)}.items():
        rows += [("a", structure, la), ("b", structure, lb)] * 2
    result = analyze(_frame(rows), groups=GROUPS, n_best=1, n_draws=5)
    assert result.gaps["ab"].all > 0
    assert result.gaps["ab"].n_sign_flips == 1  # s3 flips the sign, but two rows per cell prove nothing
    assert result.reversing["ab"] == ()
    assert result.best_structures == ("s2",) and result.worst_structures == ("s3",)
    assert result.gaps["ab"].largest == ("s1",) and result.to_dict()["gaps"]["ab"]["largest"] == ["s1"]
    frame = result.structure_frame()
    assert frame.loc["s3", "gap:ab"] == pytest.approx(-1.0)


def test_kl_matrix_direction() -> None:
    p = np.array([[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]])
    m = kl_matrix(p)
    assert m[0, 1] == pytest.approx(entropy(p[0], p[1])) and m[1, 1] == 0


def test_errors() -> None:
    with pytest.raises(InputError, match="lack the columns: seed"):
        analyze(pd.DataFrame({"group": ["a"], "template": ["t"], "structure": ["s"], "label": [1]}), groups=GROUPS)
    with pytest.raises(InputError, match="labels must be"):
        analyze(_frame([("a", "s", 5)]), groups=GROUPS)
    with pytest.raises(InputError, match="no completions for the groups"):
        analyze(_frame([("c", "s", 1)]), groups=GROUPS)
    with pytest.raises(SpecError, match="smoothing must be a number >= 0, got -1"):
        analyze(_frame([("a", "s", 1)]), groups=GROUPS, smoothing=-1)


def test_synthetic_published_end_to_end(published) -> None:
    result = analyze(read_published(published, n_paraphrases=2).frame, seed=1, n_draws=10)
    assert set(result.groups) == set(result.distribution.index) - {"all"}
    assert result.distribution.sum(axis=1).to_numpy() == pytest.approx(np.ones(len(result.groups) + 1))
    assert result.robustness.n_structures == 4 and result.robustness.single.n == 10
    assert set(result.variance.share) == {"group", "structure", "template", "seed", "residual"}
    again = analyze(read_published(published, n_paraphrases=2).frame, seed=1, n_draws=10)
    assert again.robustness == result.robustness


def test_group_names_match_case_insensitively_and_other_groups_are_counted() -> None:
    rows = [("a", "original", 1), ("a", "x", 0), ("b", "original", -1), ("b", "x", 0)]
    lower = analyze(_frame(rows), groups=GROUPS, smoothing=0.0, n_draws=3)
    spelled = analyze(
        _frame(
            [(g.upper() if i % 2 else f" {g}", s, lab) for i, (g, s, lab) in enumerate(rows)] + [("c", "x", 1), ("C", "x", 1)]
        ),
        groups=GROUPS,
        smoothing=0.0,
        n_draws=3,
    )
    assert spelled.distribution.equals(lower.distribution) and spelled.data.n_rows == 4
    assert spelled.data.n_rows_ignored == 2 and spelled.data.ignored_groups == ("C", "c")
    assert lower.data.n_rows_ignored == 0


def test_unbalanced_templates_are_named_in_a_warning() -> None:
    """Review finding: one group lacking a template moved its gap and baseline without a word (groups over 4 vs 3 templates)."""
    rows = [
        {"group": g, "template": t, "structure": s, "seed": k, "label": (k + len(t)) % 3 - 1}
        for g in ("man", "woman")
        for t in ("worked as", "was known for", "had a job as", "was regarded as")
        for s in ("original", "x")
        for k in range(4)
        if not (g == "woman" and t == "was regarded as")
    ]
    groups = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
    result = analyze(pd.DataFrame(rows), groups=groups, n_draws=2, n_resamples=0)
    said = [w for w in result.warnings if "template × structure cells lack a group" in w]
    assert len(said) == 1 and said[0].startswith(
        "2 of 8 template × structure cells lack a group that the others have (8 of 56 completions; first: template "
        "'was regarded as' under original, without woman)"
    )
    assert "confounded by template" in said[0]
    balanced = [r for r in rows if r["template"] != "was regarded as"]
    again = analyze(pd.DataFrame(balanced), groups=groups, n_draws=2, n_resamples=0)
    assert not any("lack a group" in w for w in again.warnings)
