"""Tests for fairtalk.stats: hand-computed values, edge cases, and a seeded calibration simulation."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from scipy.stats import norm, ttest_rel, wilcoxon
from statsmodels.stats.multitest import multipletests

import fairtalk.stats as stats_module
from fairtalk.stats import (
    CorpusBootstrap,
    PairedTest,
    adjust_pvalues,
    cohens_d_paired,
    cohens_h,
    corpus_bootstrap,
    paired_bootstrap_ci,
    paired_test,
    relative_difference,
    z_test,
)


def test_docstring_examples_run() -> None:
    failures, _ = doctest.testmod(stats_module)
    assert failures == 0


# --- the paper's Z test --------------------------------------------------------------------


def test_z_test_matches_hand_computation() -> None:
    # means 3 and 4, sample variances 2.5 each, n = 5: se = sqrt(0.5 + 0.5) = 1, so z = -1
    z, p = z_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 6])
    assert z == pytest.approx(-1.0)
    assert p == pytest.approx(2 * norm.sf(1.0))
    assert p == pytest.approx(0.3173105, abs=1e-7)  # two-sided; one-sided would be 0.1587


def test_z_test_is_two_sided_and_symmetric() -> None:
    b = np.array([1.0, 2, 3, 4, 5])
    z, p = z_test(b + 1.96, b)  # se = 1, so z = 1.96 exactly
    assert z == pytest.approx(1.96)
    assert p == pytest.approx(0.05, abs=1e-3)
    z_rev, p_rev = z_test(b, b + 1.96)
    assert z_rev == pytest.approx(-z)
    assert p_rev == pytest.approx(p)


def test_z_test_uses_sample_variances_per_side() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.3, 1, 50), rng.normal(0, 2, 50)
    se = math.sqrt(a.var(ddof=1) / 50 + b.var(ddof=1) / 50)
    z, _ = z_test(a, b)
    assert z == pytest.approx((a.mean() - b.mean()) / se)


def test_z_test_degenerate_variance() -> None:
    assert z_test([1, 1, 1], [1, 1, 1]) == (0.0, 1.0)
    assert z_test([2, 2, 2], [1, 1, 1]) == (math.inf, 0.0)
    assert z_test([0, 0, 0], [1, 1, 1]) == (-math.inf, 0.0)


def test_z_test_single_value_is_nan_and_empty_raises() -> None:
    z, p = z_test([1.0], [0.0])
    assert math.isnan(z) and math.isnan(p)
    with pytest.raises(ValueError, match="at least one pair"):
        z_test([], [1.0])


# --- paired tests --------------------------------------------------------------------------


def _table(n11: int, n10: int, n01: int, n00: int) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([1] * n11 + [1] * n10 + [0] * n01 + [0] * n00, dtype=float)
    b = np.array([1] * n11 + [0] * n10 + [1] * n01 + [0] * n00, dtype=float)
    return a, b


def test_mcnemar_on_a_hand_made_table() -> None:
    a, b = _table(5, 8, 2, 5)  # discordant: 8 (a only) vs 2 (b only), n = 10
    exact = paired_test(a, b, kind="rate", method="mcnemar_exact")
    assert exact == PairedTest("mcnemar_exact", 2.0, pytest.approx(112 / 1024))  # 2 * (1 + 10 + 45) / 2^10
    midp = paired_test(a, b, kind="rate")
    assert midp.name == "mcnemar_midp"
    assert midp.statistic == 2.0
    assert midp.p == pytest.approx(67 / 1024)  # exact minus P(X = 2) = 45 / 1024
    assert paired_test(b, a, kind="rate").p == pytest.approx(midp.p)


def test_mcnemar_without_discordant_pairs_has_p_one() -> None:
    a, b = _table(4, 0, 0, 6)
    assert paired_test(a, b, kind="rate").p == 1.0
    assert paired_test(a, b, kind="rate", method="mcnemar_exact").p == 1.0
    a, b = _table(0, 3, 3, 0)  # balanced discordance: mid-p is exactly 1
    assert paired_test(a, b, kind="rate").p == pytest.approx(1.0)


def test_rate_test_rejects_non_binary_scores() -> None:
    with pytest.raises(ValueError, match="must be 0 or 1"):
        paired_test([0, 1, 2], [0, 1, 1], kind="rate")


def test_wilcoxon_all_zero_differences_gives_p_one() -> None:
    result = paired_test([1, 2, 3], [1, 2, 3], kind="count")
    assert result == PairedTest("wilcoxon", 0.0, 1.0)


def test_wilcoxon_matches_scipy() -> None:
    a = np.array([3, 5, 2, 8, 4, 6, 7, 1, 9, 4, 5, 5], dtype=float)
    b = np.array([2, 3, 2, 5, 4, 4, 6, 2, 5, 3, 1, 5], dtype=float)
    expected = wilcoxon(a - b, zero_method="pratt", method="approx")
    result = paired_test(a, b, kind="count")
    assert result.p == pytest.approx(expected.pvalue)
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p < 0.05


def test_paired_t_test_matches_scipy_and_handles_constant_differences() -> None:
    a = np.array([3.0, 5, 2, 8, 4, 6])
    b = np.array([2.0, 3, 2, 5, 4, 4])
    result = paired_test(a, b, kind="count", method="ttest")
    expected = ttest_rel(a, b)
    assert (result.statistic, result.p) == pytest.approx((expected.statistic, expected.pvalue))
    assert paired_test([2, 3], [1, 2], kind="count", method="ttest") == PairedTest("ttest", math.inf, 0.0)
    assert paired_test([2, 3], [2, 3], kind="count", method="ttest") == PairedTest("ttest", 0.0, 1.0)


def test_paired_test_validates_arguments() -> None:
    with pytest.raises(ValueError, match="choose from: wilcoxon, ttest"):
        paired_test([1], [1], kind="count", method="mcnemar_midp")
    with pytest.raises(ValueError, match="unknown measure kind"):
        paired_test([1], [1], kind="corpus")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="differ in length: 2 and 1"):
        paired_test([1, 0], [1], kind="rate")


# --- bootstrap -----------------------------------------------------------------------------


@pytest.mark.parametrize("discrete", [True, False], ids=["multinomial", "indices"])
def test_paired_bootstrap_ci_contains_true_difference_and_is_seeded(discrete: bool) -> None:
    rng = np.random.default_rng(3)
    latent = rng.normal(size=3000)
    if discrete:  # few distinct differences: the multinomial path
        a = rng.poisson(np.exp(latent * 0.3) * 2.5)
        b = rng.poisson(np.exp(latent * 0.3) * 2.0)
        true = 0.5 * np.exp(0.3**2 / 2)
    else:
        a = latent + rng.normal(0.2, 1, 3000)
        b = latent + rng.normal(0.0, 1, 3000)
        true = 0.2
    low, high = paired_bootstrap_ci(a, b, seed=11)
    assert low < true < high
    assert low < np.mean(a - b) < high
    assert paired_bootstrap_ci(a, b, seed=11) == (low, high)
    assert paired_bootstrap_ci(a, b, seed=12) != (low, high)
    low90, high90 = paired_bootstrap_ci(a, b, seed=11, level=0.90)
    assert low <= low90 <= high90 <= high


def test_paired_bootstrap_ci_validates_level() -> None:
    with pytest.raises(ValueError, match="level must be in"):
        paired_bootstrap_ci([1], [1], seed=0, level=95)


def _distinct_share(n_words: np.ndarray):
    """A toy corpus statistic: distinct texts present over total words, plus the corpus size."""

    def stat(weights: np.ndarray) -> dict[str, float]:
        return {"distinct": float(np.count_nonzero(weights)) / float(weights @ n_words), "size": float(weights.sum())}

    return stat


def test_corpus_bootstrap_identical_sides_and_weights() -> None:
    n_words = np.array([3, 4, 5, 2, 6])
    stat = _distinct_share(n_words)
    index = np.array([0, 1, 2, 3, 4, 0, 1, 2, 0, 0])
    result = corpus_bootstrap(stat, stat, index, index, 5, 5, keys=("distinct", "size"), seed=0, n_resamples=200)
    assert result["distinct"] == CorpusBootstrap((0.0, 0.0), 1.0)
    assert result["size"].ci == (0.0, 0.0)  # every resample holds exactly n pairs per side


def test_corpus_bootstrap_detects_a_difference_and_is_seeded() -> None:
    rng = np.random.default_rng(5)
    n_pairs = 400
    n_words = np.full(300, 5)
    index_a = rng.integers(0, 200, n_pairs)  # side A draws from 200 texts, side B from only 20
    index_b = rng.integers(200, 220, n_pairs)
    stat = _distinct_share(n_words)
    args = (stat, stat, index_a, index_b, 300, 300)
    result = corpus_bootstrap(*args, keys=("distinct",), seed=1, n_resamples=300)["distinct"]
    observed = stat(np.bincount(index_a, minlength=300))["distinct"] - stat(np.bincount(index_b, minlength=300))["distinct"]
    assert 0 < result.ci[0] < observed < result.ci[1]
    assert result.p == pytest.approx(1 / 301)  # no side swap comes close: the smallest p, 1 / (B + 1)
    assert corpus_bootstrap(*args, keys=("distinct",), seed=1, n_resamples=300)["distinct"] == result
    assert corpus_bootstrap(*args, keys=("distinct",), seed=2, n_resamples=300)["distinct"] != result


def test_corpus_bootstrap_needs_one_shared_text_index() -> None:
    stat = _distinct_share(np.ones(3))
    with pytest.raises(ValueError, match="one shared set"):
        corpus_bootstrap(stat, stat, [0, 1], [0, 2], 2, 3, keys=("distinct",), seed=0)


# --- corrections and effect sizes ----------------------------------------------------------


def test_holm_and_bh_match_statsmodels_on_a_known_vector() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    holm = adjust_pvalues(p, method="holm")
    bh = adjust_pvalues(p, method="bh")
    assert holm.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert bh.tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert holm.tolist() == pytest.approx(multipletests(p, method="holm")[1].tolist())
    assert bh.tolist() == pytest.approx(multipletests(p, method="fdr_bh")[1].tolist())
    assert np.all(holm >= np.asarray(p)) and np.all(bh >= np.asarray(p))


def test_adjust_pvalues_is_nan_safe_and_validates() -> None:
    out = adjust_pvalues([0.01, math.nan, 0.04], method="holm")
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    assert np.isnan(adjust_pvalues([math.nan], method="bh")).all()
    with pytest.raises(ValueError, match="choose from: holm, bh"):
        adjust_pvalues([0.1], method="bonferroni")


def test_effect_sizes() -> None:
    assert cohens_h(0.5, 0.25) == pytest.approx(math.pi / 6)
    assert cohens_h(0.25, 0.5) == pytest.approx(-math.pi / 6)
    assert cohens_h(0.3, 0.3) == 0.0
    assert cohens_d_paired([2, 3, 4], [1, 1, 1]) == pytest.approx(2.0)
    assert cohens_d_paired([1, 2], [1, 2]) == 0.0
    assert cohens_d_paired([1, 2], [2, 3]) == -math.inf


def test_relative_difference() -> None:
    assert relative_difference(0.2, 0.1) == pytest.approx(0.5)
    assert relative_difference(0.1, 0.2) == pytest.approx(-1.0)
    assert relative_difference(0.0, 0.3) is None


# --- calibration simulation ----------------------------------------------------------------
# Every null below has both sides from the same distribution. Paired nulls draw exchangeable
# pairs: a shared latent per pair plus independent noise, so the sides are correlated but
# have the same marginal. With 4000 runs the rejection rate's sd is ~0.34%, so 4-6% is about
# +-3 sd; with fixed seeds the outcome is deterministic. Sample sizes are ones where each test
# is calibrated: exact McNemar is conservative, so the default mid-p is checked, with ~100
# discordant pairs; the percentile bootstrap is slightly liberal for small n, so n = 200.

_RUNS = 4000


def _rejection_rate(p_values: list[float], alpha: float = 0.05) -> float:
    return float(np.mean(np.asarray(p_values) < alpha))


def _binary_pairs(rng: np.random.Generator, n: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    latent = rng.normal(size=n)
    a = (latent + rng.normal(size=n) + shift > 1).astype(float)
    b = (latent + rng.normal(size=n) > 1).astype(float)
    return a, b


def _count_pairs(rng: np.random.Generator, n: int, ratio: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    rate = np.exp(rng.normal(size=n) * 0.5)
    return rng.poisson(rate * ratio).astype(float), rng.poisson(rate).astype(float)


@pytest.mark.slow
def test_simulation_null_rejection_rates_are_near_alpha() -> None:
    rng = np.random.default_rng(20240601)
    rates = {}
    rates["z"] = _rejection_rate([z_test(rng.normal(size=200), rng.normal(size=200))[1] for _ in range(_RUNS)])
    rates["mcnemar_midp"] = _rejection_rate(
        [paired_test(*_binary_pairs(rng, 400), kind="rate").p for _ in range(_RUNS)]
    )
    wilcoxon_p, t_p = [], []
    for _ in range(_RUNS):
        a, b = _count_pairs(rng, 100)
        wilcoxon_p.append(paired_test(a, b, kind="count").p)
        t_p.append(paired_test(a, b, kind="count", method="ttest").p)
    rates["wilcoxon"], rates["ttest"] = _rejection_rate(wilcoxon_p), _rejection_rate(t_p)
    outside = []
    for run in range(_RUNS // 2):  # 2000 runs (sd ~0.49%): each runs a whole bootstrap
        low, high = paired_bootstrap_ci(*_count_pairs(rng, 200), seed=run, n_resamples=1000)
        outside.append(not low <= 0 <= high)
    rates["bootstrap_ci"] = float(np.mean(outside))
    assert all(0.04 <= r <= 0.06 for r in rates.values()), rates


@pytest.mark.slow
def test_simulation_known_shift_is_detected() -> None:
    rng = np.random.default_rng(7)
    runs = 200
    assert _rejection_rate([z_test(rng.normal(0.5, 1, 200), rng.normal(size=200))[1] for _ in range(runs)]) > 0.95
    assert _rejection_rate([paired_test(*_binary_pairs(rng, 400, 0.5), kind="rate").p for _ in range(runs)]) > 0.95
    pairs = [_count_pairs(rng, 200, ratio=1.5) for _ in range(runs)]
    assert _rejection_rate([paired_test(a, b, kind="count").p for a, b in pairs]) > 0.95
    assert _rejection_rate([paired_test(a, b, kind="count", method="ttest").p for a, b in pairs]) > 0.95
    cis = [paired_bootstrap_ci(a, b, seed=i, n_resamples=500) for i, (a, b) in enumerate(pairs)]
    assert np.mean([low > 0 for low, _ in cis]) > 0.95


@pytest.mark.slow
def test_simulation_corpus_statistic_null_and_shift() -> None:
    # Zipf-distributed responses; a pair repeats the same response half the time.
    rng = np.random.default_rng(99)
    vocab = 500
    freq = 1 / np.arange(1, vocab + 1) ** 1.1
    freq /= freq.sum()
    stat = _distinct_share(rng.integers(1, 10, vocab).astype(float))

    def draw(n: int, zipf_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        shared = rng.choice(vocab, n, p=freq)
        same = rng.random(n) < 0.5
        return np.where(same, shared, rng.choice(vocab, n, p=freq)), np.where(same, shared, rng.choice(vocab, n, p=zipf_b))

    def p_value(index_a: np.ndarray, index_b: np.ndarray, seed: int) -> float:
        return corpus_bootstrap(stat, stat, index_a, index_b, vocab, vocab, keys=("distinct",), seed=seed, n_resamples=99)[
            "distinct"
        ].p

    null = [p_value(*draw(150, freq), seed=i) for i in range(600)]
    assert 0.02 <= _rejection_rate(null) <= 0.07  # sd ~0.9% at 600 runs; exact test, so at most ~5%
    narrow = np.zeros(vocab)
    narrow[:20] = 1 / 20  # side B repeats a few stock responses
    shifted = [p_value(*draw(150, narrow), seed=i) for i in range(100)]
    assert _rejection_rate(shifted) > 0.95
