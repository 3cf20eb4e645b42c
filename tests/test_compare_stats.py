"""``fairtalk.stats._change``: the δ−/δ+ rule, non-inferiority by intersection-union, identical runs, and the level under the null."""

from __future__ import annotations

import numpy as np
import pytest

from fairtalk.stats import (
    Contrast,
    adjust_pvalues,
    gap_change,
    identical_units_needed,
    newcombe_interval,
    non_inferior,
    score_interval,
    score_test,
)


def _point(value: float) -> Contrast:
    """A contrast known exactly (a zero-width interval): isolates the rule from the sampling."""
    return Contrast(value, (value - 1e-9, value + 1e-9), 0.0, "exact")


def test_non_inferiority_is_exactly_the_gap_condition() -> None:
    """min(δ−, δ+) < m and max(δ−, δ+) > −m holds exactly when |g_c| < |g_b| + m (g_c = (δ+ + δ−)/2, g_b = (δ+ − δ−)/2)."""
    rng = np.random.default_rng(0)
    margin = 0.05
    for u, v in rng.uniform(-0.3, 0.3, size=(4000, 2)):
        g_c, g_b = (v + u) / 2, (v - u) / 2
        if abs(abs(g_c) - abs(g_b) - margin) < 1e-6:
            continue
        assert non_inferior(_point(u), _point(v), margin) == (abs(g_c) < abs(g_b) + margin), (u, v)


def test_magnitude_rule_reads_the_signs() -> None:
    """|g_c|² − |g_b|² = δ−·δ+: same signs mean a larger gap, opposite signs a smaller one."""
    n = 400
    base_a = np.r_[np.ones(60), np.zeros(n - 60)]
    zeros = np.zeros(n)
    smaller = gap_change(base_a, zeros, zeros, zeros, kind="rate", margin=0.02)
    larger = gap_change(zeros, zeros, base_a, zeros, kind="rate", margin=0.02)
    flipped = gap_change(base_a, zeros, zeros, base_a, kind="rate", margin=0.02)  # the gap reverses, same size
    assert smaller.direction == "smaller" and smaller.p_magnitude < 0.001 and smaller.non_inferior
    assert larger.direction == "larger" and larger.p_magnitude < 0.001 and not larger.non_inferior
    assert flipped.total.identical and flipped.p_magnitude == 1.0  # δ+ is 0 on every pair: no change in size
    assert smaller.change.estimate == pytest.approx(-0.15) and smaller.change.high < 0


def test_swapping_the_runs_negates_the_change() -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.poisson(3.0, 300).astype(float) for _ in range(4)]
    forward = gap_change(*arrays, kind="count", margin=0.3)
    backward = gap_change(arrays[2], arrays[3], arrays[0], arrays[1], kind="count", margin=0.3)
    assert backward.change.estimate == pytest.approx(-forward.change.estimate)
    assert backward.total.estimate == pytest.approx(forward.total.estimate)
    assert backward.within_margin == forward.within_margin  # unchanged-within-margin is symmetric


def _sides(n: int, seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.random(n) < 0.3).astype(float), (rng.random(n) < 0.3).astype(float)


def test_identical_runs_are_unchanged_and_non_inferior_on_as_many_units_as_the_exact_bound_needs() -> None:
    """A pair moves a rate's change in gap by up to 2, so at ±0.02 the share that could differ must be below 1%: 299 pairs."""
    assert identical_units_needed(alpha=0.05, margin=0.02, max_difference=2.0) == 299
    a, b = _sides(299)
    same = gap_change(a, b, a, b, kind="rate", margin=0.02)
    assert same.identical and same.change.ci == (0.0, 0.0) and same.change.p == 1.0
    assert same.non_inferior and same.within_margin and same.units_needed is None
    assert same.notes[0].startswith("the same gap on all 299 pairs in both runs: at most 0.997% of pairs could differ")
    a, b = a[:298], b[:298]
    short = gap_change(a, b, a, b, kind="rate", margin=0.02)
    assert not short.non_inferior and not short.within_margin and short.units_needed == 299
    assert short.notes[0].endswith("too few pairs for that bound to show non-inferiority: identical gaps need 299 pairs (1 more)")


@pytest.mark.parametrize("n", [2, 5, 10, 20])
def test_identical_runs_on_a_handful_of_pairs_are_not_shown_non_inferior(n: int) -> None:
    a, b = _sides(n)
    few = gap_change(a, b, a, b, kind="rate", margin=0.02)
    assert few.identical and few.non_inferior is False and few.within_margin is False and few.units_needed == 299


def test_identical_runs_count_dialogues_when_clustered_and_take_the_identical_share_without_a_margin() -> None:
    a, b = _sides(600)
    clusters = np.arange(600) // 4  # 150 dialogues: as many pairs as would pass, too few units
    clustered = gap_change(a, b, a, b, kind="rate", margin=0.02, clusters=clusters)
    assert clustered.n_units == 150 and not clustered.non_inferior and clustered.units_needed == 299
    assert "too few dialogues for that bound" in clustered.notes[0] and "(149 more)" in clustered.notes[0]
    constant = np.zeros(148)
    no_margin = gap_change(constant, constant, constant, constant, kind="count", margin=None)
    assert not no_margin.non_inferior and no_margin.units_needed == 149  # the 2% identical share: 149 pairs
    constant = np.zeros(149)
    assert gap_change(constant, constant, constant, constant, kind="count", margin=None).non_inferior


def test_a_constant_nonzero_change_has_no_interval_and_is_not_shown_non_inferior() -> None:
    n = 30
    base = gap_change(np.zeros(n), np.zeros(n), np.ones(n), np.zeros(n), kind="count", margin=0.1)
    assert base.change.ci == (None, None) and base.non_inferior is False
    assert any("no interval" in note for note in base.notes)


def test_inputs_are_checked() -> None:
    with pytest.raises(ValueError, match="one value per pair"):
        gap_change(np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(4), kind="rate", margin=0.02)
    with pytest.raises(ValueError, match="at least 2 pairs"):
        gap_change(np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1), kind="rate", margin=0.02)
    with pytest.raises(ValueError, match="alpha"):
        gap_change(np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), kind="rate", margin=0.02, alpha=1.5)


def test_the_test_of_no_change_holds_its_level_under_random_side_swaps() -> None:
    """Sides swapped at random within each pair of both runs: the change test rejects near α (300 runs of 200 pairs)."""
    rng = np.random.default_rng(3)
    n, runs = 200, 300
    base = rng.poisson(4.0, (n, 2)).astype(float)
    cand = base + rng.poisson(1.0, (n, 2))
    rejected = 0
    for _ in range(runs):
        sb, sc = rng.random(n) < 0.5, rng.random(n) < 0.5
        b_a, b_b = np.where(sb, base[:, 0], base[:, 1]), np.where(sb, base[:, 1], base[:, 0])
        c_a, c_b = np.where(sc, cand[:, 0], cand[:, 1]), np.where(sc, cand[:, 1], cand[:, 0])
        rejected += gap_change(b_a, b_b, c_a, c_b, kind="count", margin=0.5).change.p < 0.05
    assert 0.02 <= rejected / runs <= 0.09


def test_holm_over_the_magnitude_p_values_is_what_decides() -> None:
    """p_magnitude = max(p−, p+) is the p the family is corrected over (a valid p of an intersection-union test)."""
    n = 400
    zeros = np.zeros(n)
    strong = gap_change(np.r_[np.ones(60), np.zeros(n - 60)], zeros, zeros, zeros, kind="rate", margin=0.02)
    assert strong.p_magnitude == max(strong.change.p, strong.total.p)
    assert adjust_pvalues([strong.p_magnitude, 1.0])[0] < 0.05


def _ni_at_margin_rate(n: int, p: float, margin: float, runs: int, seed: int) -> float:
    """How often NI is shown when ``|g_c| = |g_b| + margin`` exactly: rare independent events, the candidate's A raised by ``margin``."""
    rng = np.random.default_rng(seed)
    shown = 0
    for _ in range(runs):
        b_a, b_b, c_b = (rng.random((3, n)) < p).astype(float)
        c_a = (rng.random(n) < p + margin).astype(float)
        shown += bool(gap_change(b_a, b_b, c_a, c_b, kind="rate", margin=margin).non_inferior)
    return shown / runs


def test_non_inferiority_holds_its_level_at_the_margin_for_rare_rates() -> None:
    """A 0.2% base rate, 300 pairs, the candidate exactly one margin worse: NI shown at most α + 3 SE.

    The t bound of the old contrast showed it 9% of the time here (its SE shrinks with the few
    events seen); the score bound (variance under the null mean) stays at α.
    """
    runs = 600
    rate = _ni_at_margin_rate(300, 0.002, 0.02, runs, seed=5)
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs), rate


def test_rate_contrasts_use_the_score_interval_and_counts_the_t() -> None:
    rng = np.random.default_rng(6)
    rates = [(rng.random(200) < 0.1).astype(float) for _ in range(4)]
    counts = [rng.poisson(3.0, 200).astype(float) for _ in range(4)]
    rate = gap_change(*rates, kind="rate", margin=0.02)
    count = gap_change(*counts, kind="count", margin=0.3)
    assert rate.change.interval == rate.total.interval == "score"
    assert count.change.interval == "t"
    assert rate.change.low < rate.change.estimate < rate.change.high
    one_sided = gap_change(
        np.zeros(300), np.zeros(300), np.r_[np.ones(3), np.zeros(297)], np.zeros(300), kind="rate", margin=0.02
    )
    low, high = one_sided.change.ci  # 3 events of one sign among 300: 0 is inside, and the score test does not reject
    assert low < 0 < 0.01 < 0.02 < high and one_sided.change.p > 0.05 and one_sided.non_inferior is False
    assert one_sided.change.test == "score" and count.change.test == "paired_t"


def _excludes_zero(ci: tuple[float | None, float | None]) -> bool:
    low, high = ci
    return (low is not None and low > 0) or (high is not None and high < 0)


def test_seven_events_of_one_sign_are_no_change_shown_as_their_interval_says() -> None:
    """7 of 300 pairs +1, the rest 0: the exact sign-flip p is 2^-6 = 0.016, but the score interval holds 0.

    The p of a contrast was the paired mean test's (sign-flip) while its interval was the score
    interval, so a "regressed" verdict stood beside an interval covering 0 (issue 39). The p is
    now the score test that interval inverts.
    """
    n = 300
    zeros = np.zeros(n)
    events = np.r_[np.ones(7), np.zeros(n - 7)]
    for clusters in (None, np.repeat(np.arange(n // 3), 3)):
        t = gap_change(zeros, zeros, events, zeros, kind="rate", margin=0.02, clusters=clusters)
        for c in (t.change, t.total):
            assert c.low is not None and c.high is not None and c.low < 0 < c.high
            assert c.p is not None and c.p >= 0.05 and c.test.endswith("score")
        assert t.p_magnitude is not None and t.p_magnitude >= 0.05
    eight = gap_change(zeros, zeros, np.r_[np.ones(8), np.zeros(n - 8)], zeros, kind="rate", margin=0.02)
    assert eight.change.low is not None and eight.change.low > 0 and eight.p_magnitude is not None and eight.p_magnitude < 0.05


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_a_contrasts_p_is_below_alpha_exactly_when_its_interval_excludes_zero(alpha: float) -> None:
    """Rates (rare and common, one-signed, with and without clusters) and counts (Poisson and sparse): p < α ⇔ 0 ∉ CI."""
    rng = np.random.default_rng(11)
    n = 240
    clusterings = (None, np.repeat(np.arange(n // 4), 4))
    seen = {True: 0, False: 0}
    for trial in range(40):
        rate = (0.01, 0.05, 0.3)[trial % 3]
        rates = [(rng.random(n) < rate * (1 + (i == 2) * trial / 20)).astype(float) for i in range(4)]
        sparse = [np.where(rng.random(n) < 0.03, rng.integers(1, 4, n), 0).astype(float) for _ in range(4)]
        counts = [rng.poisson(3.0 + (i == 2) * trial / 40, n).astype(float) for i in range(4)]
        clusters = clusterings[trial % 2]
        for kind, arrays in (("rate", rates), ("count", sparse), ("count", counts)):
            t = gap_change(*arrays, kind=kind, margin=0.02, clusters=clusters, alpha=alpha)
            for c in (t.change, t.total):
                if c.identical or c.ci == (None, None):
                    continue
                assert c.p is not None and (c.p < alpha) == _excludes_zero(c.ci), (trial, kind, c)
                seen[c.p < alpha] += 1
    assert min(seen.values()) >= 10  # both outcomes were exercised


def test_the_score_test_is_the_inversion_of_the_score_interval_at_its_ends() -> None:
    """At α = p the interval's nearer end is 0: the test is the one the interval inverts, not merely a close one."""
    d = np.r_[np.full(9, 1.0), np.full(2, -1.0), np.full(1, 2.0), np.zeros(288)]
    p = score_test(d)
    assert p is not None and 0.001 < p < 0.5
    low, _ = score_interval(d, alpha=p)
    assert low == pytest.approx(0.0, abs=1e-9)
    assert score_test(np.r_[0.5, np.zeros(9)]) is None  # not a rate contrast


def test_a_baseline_gap_of_zero_on_every_pair_leaves_two_intervals_of_one_gap() -> None:
    """Issue 39 item 7: with the baseline's gap 0 on every pair the change equals the candidate's gap pair by pair;
    the candidate's gap keeps the audit's interval (since issue 39 "one test", the score interval on the
    gap's values -1, 0, 1), the change the score interval its test inverts (on the change's -2 ... 2)."""
    zeros = np.zeros(50)
    cand_b = np.r_[np.ones(33), np.zeros(17)]  # the candidate insults side B on 33 of 50 pairs
    t = gap_change(zeros, zeros, zeros, cand_b, kind="rate", margin=0.02)
    assert t.change.estimate == pytest.approx(t.candidate_gap) == pytest.approx(-0.66)
    assert t.candidate_ci == score_interval(zeros - cand_b, alpha=0.05, support=(-1.0, 0.0, 1.0))
    assert t.candidate_ci != newcombe_interval(zeros, cand_b).bounds  # the audit's interval before issue 39 "one test"
    assert t.change.ci == score_interval(zeros - cand_b, alpha=0.05) and t.change.interval == "score"
    assert t.candidate_ci[0] == pytest.approx(t.change.ci[0], abs=1e-6)  # the lower ends agree ...
    assert t.change.ci[1] is not None and t.candidate_ci[1] is not None
    assert t.change.ci[1] > t.candidate_ci[1] + 0.04  # ... the upper differ: -47.02 against -52.15 points
