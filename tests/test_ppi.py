"""Prediction-powered inference (stats/_ppi.py): valid intervals whatever the scorer's error, narrower than labels alone."""

from __future__ import annotations

import numpy as np
import pytest

from bench_scripts import load_bench
from fairtalk.stats import labels_needed, ppi_mean


def _bench():  # noqa: ANN202
    return load_bench("ppi")


def test_a_scorer_whose_error_differs_by_group_fakes_a_gap_that_ppi_corrects() -> None:
    """Scorer-only intervals miss the true gap; PPI covers it at 95% and is narrower than the labels alone."""
    bench = _bench()
    coverage = bench.simulate(bench.Design(), runs=500, seed=1)
    assert coverage.scorer[0] < 0.2  # the scorer flags 8% of group B's clean answers, 2% of group A's
    assert abs(coverage.ppi[0] - 0.95) < 0.03  # 500 runs: SE 0.01
    assert coverage.ppi[1] < 0.85 * coverage.labels[1]


def test_a_useless_scorer_gets_no_weight_and_a_perfect_one_all_of_it() -> None:
    rng = np.random.default_rng(3)
    y = rng.binomial(1, 0.4, 3000).astype(float)
    labels = np.where(np.arange(3000) < 200, y, np.nan)
    noise = ppi_mean(rng.random(3000), labels)
    assert noise.lam < 0.2 and abs(noise.estimate - noise.labels_estimate) < 0.02
    perfect = ppi_mean(y, labels)
    # 200 labels that all agree with the scorer cannot tell how often it errs: no "worth N labels" figure, and an
    # interval no narrower than the exact bound on the disagreement share allows (issue 39 item 1)
    assert perfect.lam > 0.9 and perfect.n_disagreements == 0 and perfect.too_few_disagreements
    assert np.isnan(perfect.effective_labels) and "only 0 of 200 labelled units disagree" in perfect.method
    assert perfect.ci95[1] - perfect.ci95[0] > 0.02 and perfect.ci95[0] < y.mean() < perfect.ci95[1]
    assert abs(perfect.estimate - y.mean()) < 0.01
    classic = ppi_mean(rng.random(3000), labels, power_tuned=False)
    assert classic.lam == 1.0 and classic.se > noise.se  # classic PPI pays for a bad scorer; PPI++ does not


def test_clusters_widen_the_interval_when_items_of_a_cluster_agree() -> None:
    rng = np.random.default_rng(4)
    clusters = np.repeat(np.arange(100), 20)
    effect = rng.normal(0, 1, 100)[clusters]
    y = effect + rng.normal(0, 0.2, 2000)
    f = y + rng.normal(0, 0.5, 2000) + 0.3 * effect  # scorer error shared within each cluster
    labels = np.where(rng.random(2000) < 0.2, y, np.nan)
    plain, clustered = ppi_mean(f, labels), ppi_mean(f, labels, clusters=clusters)
    assert clustered.se > 1.5 * plain.se


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="one value per item"):
        ppi_mean([0.1, 0.2], [1.0])
    with pytest.raises(ValueError, match="at least 2 labelled"):
        ppi_mean([0.1, 0.2, 0.3], [1.0, np.nan, np.nan])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([0.1, np.inf, 0.3], [1.0, 0.0, np.nan])
    assert labels_needed(0.05, 0.3) == 139 and labels_needed(0.025, 0.3) == 554


def test_labels_that_all_agree_give_an_honest_interval_not_a_point() -> None:
    """80 labelled pairs with no difference at all: the interval is the exact bound on the share that could differ."""
    scores = np.r_[np.ones(20), np.zeros(180)]  # the scorer sees a gap on 20 of 200 pairs
    labels = np.r_[np.zeros(80), np.full(120, np.nan)]  # a person labels 80 pairs, none of them differs
    est = ppi_mean(scores, labels)
    assert est.ci95[0] < est.estimate < est.ci95[1] and est.ci95[1] - est.ci95[0] > 0.05
    assert est.labels_ci95[1] == pytest.approx(1 - 0.025 ** (1 / 80), rel=1e-6)  # rule of three at 95%, two-sided
    assert np.isfinite(est.effective_labels) and est.p > 0.05


@pytest.mark.parametrize(("n_labels", "low", "high"), [(50, 0.93, 1.0), (100, 0.93, 1.0), (200, 0.93, 1.0)])
def test_a_rare_scorer_error_no_longer_shrinks_the_interval_below_its_level(n_labels: int, low: float, high: float) -> None:
    """Issue 39 item 1: a scorer right but for 1% of group B's unflagged answers; before, PPI covered 0.73 at 50 labels."""
    bench = _bench()
    design = bench.Design(p_a=0.03, p_b=0.03, n_labels=n_labels, **bench.RARE)
    coverage = bench.simulate(design, 300, seed=11)
    assert low <= coverage.ppi[0] <= high, coverage
    assert coverage.ppi[1] < 1.2 * coverage.labels[1]  # still no wider than about the labels alone


def test_few_disagreements_get_a_t_interval_on_the_labelled_units_and_a_warning() -> None:
    rng = np.random.default_rng(5)
    y = rng.binomial(1, 0.3, 1000).astype(float)
    f = y.copy()
    f[:3] = 1 - f[:3]  # the scorer errs on 3 of the 50 labelled items
    estimate = ppi_mean(f, np.where(np.arange(1000) < 50, y, np.nan))
    assert estimate.n_disagreements == 3 and estimate.too_few_disagreements and np.isnan(estimate.effective_labels)
    many = rng.binomial(1, 0.3, 1000).astype(float)
    noisy = np.where(rng.random(1000) < 0.2, 1 - many, many)
    fine = ppi_mean(noisy, np.where(np.arange(1000) < 200, many, np.nan))
    assert fine.n_disagreements is not None and fine.n_disagreements >= 10 and not fine.too_few_disagreements
    assert fine.effective_labels > 200 and fine.method == "PPI++ (t interval)"
