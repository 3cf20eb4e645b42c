"""Tests for fairtalk.prompts._robustness: cosine draws, the shuffled-labels null and the variance decomposition."""

from __future__ import annotations

import numpy as np
import pytest

from fairtalk.prompts import robustness, robustness_null, variance_decomposition
from fairtalk.prompts._robustness import cell_sums


def test_identical_structures_are_perfectly_similar() -> None:
    sums = np.tile([[1.0, -2.0, 3.0]], (8, 1))
    counts = np.full((8, 3), 4)
    out = robustness(sums, counts, seed=0, n_sampled=4, n_draws=20)
    assert out.single.mean == pytest.approx(1.0) and out.halves.mean == pytest.approx(1.0)
    assert out.n_structures == 8 and out.single.n == 20


def test_halves_more_similar_than_single_structures_with_noise() -> None:
    rng = np.random.default_rng(0)
    base = np.array([0.3, 0.1, -0.4, 0.2])
    means = base + rng.normal(0, 0.3, size=(100, 4))
    out = robustness(means * 50, np.full((100, 4), 50), seed=1, n_sampled=10, n_draws=50)
    assert out.halves.mean > out.single.mean
    assert out.relative_increase > 0
    assert out == robustness(means * 50, np.full((100, 4), 50), seed=1, n_sampled=10, n_draws=50)


def test_structures_missing_a_group_are_left_out() -> None:
    counts = np.array([[1, 1], [1, 0], [1, 1]])
    out = robustness(np.ones((3, 2)), counts, seed=0, n_draws=2)
    assert out.n_structures == 2


def test_variance_decomposition_balanced() -> None:
    a = np.repeat([0, 1], 4)
    b = np.tile([0, 1], 4)
    y = 2.0 * a + 1.0 * b
    out = variance_decomposition(y, {"a": a, "b": b})
    assert out.share["a"] == pytest.approx(0.8) and out.share["b"] == pytest.approx(0.2)
    assert out.share["residual"] == pytest.approx(0.0, abs=1e-12)
    assert out.n_levels == {"a": 2, "b": 2}


def test_cell_sums() -> None:
    sums, counts = cell_sums(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), np.array([1, 1, 0]), 2, 2)
    assert sums.tolist() == [[0, 3], [3, 0]] and counts.tolist() == [[0, 2], [1, 0]]


def test_the_null_shuffles_structure_labels_within_each_group() -> None:
    rng = np.random.default_rng(2)
    groups = np.repeat([0, 1], 200)
    structures = np.tile(np.arange(10), 40)
    regard = rng.choice([-1.0, 0.0, 1.0], size=400)

    def score(sums: np.ndarray, counts: np.ndarray):  # noqa: ANN202
        return robustness(sums, counts, seed=0, n_sampled=4, n_draws=5)

    null = robustness_null(regard, groups, structures, 2, 10, score, seed=0, n_shuffles=3)
    assert null.how == "structure labels shuffled within each group" and null.n_shuffles == 3
    assert null.single is not None and -1.0 <= null.single <= 1.0 and null.halves is not None
    assert null == robustness_null(regard, groups, structures, 2, 10, score, seed=0, n_shuffles=3)
