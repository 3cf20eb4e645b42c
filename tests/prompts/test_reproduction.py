"""Reproduction of Aggarwal et al. (2022) on the published outputs: Table 2 (KL) and Fig. 2(b) (label %).

Paper numbers are read from the paper text (Table 2; Fig. 2(b) as flattened bar labels):
rows/columns M, W, S, G, B, Wh. KL is KL(row || column), unsmoothed, "other" excluded.
"""

from __future__ import annotations

import pytest

from fairtalk.prompts import analyze, read_published

from .conftest import ROBUST

pytestmark = pytest.mark.skipif(not ROBUST.is_dir(), reason="reference data absent")

ORDER = ("man", "woman", "straight person", "gay person", "black person", "white person")
TABLE_2 = (
    (0.00, 0.02, 0.01, 0.31, 0.19, 0.18),
    (0.02, 0.00, 0.01, 0.20, 0.09, 0.08),
    (0.01, 0.01, 0.00, 0.31, 0.15, 0.14),
    (0.29, 0.21, 0.32, 0.00, 0.16, 0.15),
    (0.14, 0.07, 0.11, 0.15, 0.00, 0.00),
    (0.14, 0.06, 0.11, 0.14, 0.00, 0.00),
)
#: Fig. 2(b) (all structures): percentages (neutral, negative, positive) for all, then each group.
FIG_2B = {
    "all": (55, 27, 18),
    "man": (48, 21, 31),
    "woman": (54, 23, 23),
    "straight person": (54, 18, 28),
    "gay person": (40, 51, 9),
    "black person": (65, 26, 9),
    "white person": (64, 26, 10),
}


@pytest.fixture(scope="module")
def result():
    return analyze(read_published(ROBUST / "generated-outputs").frame, smoothing=0.0, n_draws=20)


def test_kl_matches_table_2(result) -> None:
    for i, a in enumerate(ORDER):
        for j, b in enumerate(ORDER):
            assert result.kl.at[a, b] == pytest.approx(TABLE_2[i][j], abs=0.01), (a, b)


def test_label_percentages_match_fig_2b(result) -> None:
    for group, (neutral, negative, positive) in FIG_2B.items():
        dist = result.distribution.loc[group]
        assert 100 * dist["neutral"] == pytest.approx(neutral, abs=1.0), group
        assert 100 * dist["negative"] == pytest.approx(negative, abs=1.0), group
        assert 100 * dist["positive"] == pytest.approx(positive, abs=1.0), group


def test_gaps_favour_the_advantaged_groups_except_race(result) -> None:
    assert result.gaps["orientation"].all > 0.4 and result.gaps["gender"].all > 0
    assert result.robustness.halves.mean > 0.99 > result.robustness.single.mean


def test_shipped_regard_agreement_with_published_labels() -> None:
    """Agreement of fairtalk's shipped classifier with the published labels (1,000 rows of one seed; ~200 texts/s)."""
    from fairtalk.prompts import label_completions

    frame = read_published(ROBUST / "generated-outputs").frame
    frame = frame[frame["seed"] == 3].sample(1000, random_state=0)
    ours = label_completions(frame)["label"].to_numpy()
    published = frame["label"].to_numpy()
    agreement = float((ours == published).mean())
    print(f"\nshipped regard vs published labels (seed 3, {len(frame)} rows): agreement {agreement:.3f}")
    assert 0.2 < agreement < 1.0  # recorded in the README; the published labels come from Sheng et al.'s BERT
