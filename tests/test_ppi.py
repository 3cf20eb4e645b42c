"""Prediction-powered inference (stats/_ppi.py): valid intervals whatever the scorer's error, narrower than labels alone."""

from __future__ import annotations

import numpy as np
import pytest

from bench_scripts import load_bench
from fairtalk.stats._ppi import labels_needed, ppi_mean


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
    assert perfect.lam > 0.9 and perfect.effective_labels > 1000  # 200 labels worth ~3000 with a perfect scorer
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
