"""Tests for stats/_sequential.py: Lan-DeMets boundaries, repeated and sequential p-values, look sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairtalk.stats import SPENDING_FUNCTIONS, alpha_spent, boundaries, look_sizes, repeated_p, sequential_p


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
@pytest.mark.parametrize("sides", [1, 2])
@pytest.mark.parametrize("spending", SPENDING_FUNCTIONS)
def test_one_look_is_the_fixed_sample_test(alpha: float, sides: int, spending: str) -> None:
    design = boundaries([1.0], alpha=alpha, spending=spending, sides=sides)
    assert design.nominal[0] == pytest.approx(alpha, rel=1e-9)
    assert design.spent == pytest.approx((alpha,))
    assert repeated_p(0.0123, [1.0], spending=spending, sides=sides) == 0.0123


def test_obrien_fleming_boundaries_match_the_published_values() -> None:
    # Lan-DeMets O'Brien-Fleming-type spending, 4 equal looks, two-sided alpha = 0.05
    # (Jennison & Turnbull 2000, Table 7.6; gsDesign sfLDOF): 4.33, 2.96, 2.36, 2.01
    design = boundaries([0.25, 0.5, 0.75, 1.0], alpha=0.05)
    assert design.z == pytest.approx((4.333, 2.963, 2.359, 2.014), abs=0.01)
    assert design.spent[-1] == pytest.approx(0.05)
    assert design.nominal[-1] < 0.05  # the last look pays for the earlier ones


def test_pocock_boundaries_are_nearly_flat_and_spend_more_early() -> None:
    pocock = boundaries([0.25, 0.5, 0.75, 1.0], spending="pocock")
    obf = boundaries([0.25, 0.5, 0.75, 1.0])
    assert max(pocock.z) - min(pocock.z) < 0.05
    assert 2.3 < pocock.z[-1] < 2.4 and pocock.z[0] < obf.z[0] and pocock.z[-1] > obf.z[-1]
    assert alpha_spent(0.5, alpha=0.05, spending="pocock") == pytest.approx(0.05 * math.log(1 + (math.e - 1) / 2))


@pytest.mark.parametrize("spending", SPENDING_FUNCTIONS)
@pytest.mark.parametrize("sides", [1, 2])
def test_the_boundaries_hold_alpha_on_simulated_normal_data(spending: str, sides: int) -> None:
    fractions = [0.2, 0.45, 0.7, 1.0]  # unequal looks
    design = boundaries(fractions, alpha=0.05, spending=spending, sides=sides)
    rng = np.random.default_rng(7)
    n = 200_000
    steps = rng.standard_normal((n, len(fractions))) * np.sqrt(np.diff([0.0, *fractions]))
    z = np.cumsum(steps, axis=1) / np.sqrt(fractions)
    statistic = np.abs(z) if sides == 2 else z
    rate = float((statistic >= np.array(design.z)).any(axis=1).mean())
    se = math.sqrt(0.05 * 0.95 / n)
    assert rate <= 0.05 + 3 * se
    assert rate >= 0.05 - 3 * se  # and spends all of it
    naive = float((statistic >= (1.96 if sides == 2 else 1.645)).any(axis=1).mean())
    assert naive > 0.08  # testing every look at alpha would not hold it


def test_repeated_p_crosses_exactly_where_the_boundary_does() -> None:
    fractions = [0.25, 0.5, 0.75]
    design = boundaries([*fractions, 1.0], alpha=0.05)
    level = design.nominal[2]
    assert repeated_p(level * 0.99, fractions) < 0.05 < repeated_p(level * 1.01, fractions)
    assert repeated_p(1e-8, [0.25]) < repeated_p(1e-4, [0.25]) < repeated_p(0.01, [0.25]) < 1.0
    assert repeated_p(0.01, [0.25]) > 0.01  # an early look needs stronger evidence


def test_sequential_p_is_the_least_repeated_p_and_skips_untested_looks() -> None:
    fractions = [0.5, 1.0]
    assert sequential_p([None, None], fractions) is None
    assert sequential_p([0.001, 0.5], fractions) == pytest.approx(repeated_p(0.001, [0.5]))
    assert sequential_p([None, 0.02], fractions) == pytest.approx(repeated_p(0.02, fractions))


def test_sequential_p_values_hold_alpha_for_t_tests_on_simulated_pairs() -> None:
    from scipy.stats import ttest_1samp

    sizes = (50, 100, 150, 200)
    fractions = [n / sizes[-1] for n in sizes]
    design = boundaries(fractions, alpha=0.05)
    rng = np.random.default_rng(3)
    n_sims, rejected = 3000, 0
    for _ in range(n_sims):
        d = rng.normal(size=sizes[-1])
        p = [float(ttest_1samp(d[:n], 0.0).pvalue) for n in sizes]
        rejected += any(pk <= level for pk, level in zip(p, design.nominal))
    assert rejected / n_sims <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n_sims)


def test_look_sizes() -> None:
    assert look_sizes(500, 2000) == (500, 1000, 1500, 2000)
    assert look_sizes(500, 1200) == (500, 1000, 1200)
    assert look_sizes(100, 1000, looks=4) == (100, 400, 700, 1000)
    assert look_sizes(300, 300) == (300,)
    for bad in ((0, 10, None), (20, 10, None), (10, 100, 1)):
        with pytest.raises(ValueError):
            look_sizes(*bad)


def test_bad_designs_are_refused() -> None:
    for fractions in ([], [0.5, 0.5], [0.0, 1.0], [0.5, 1.2]):
        with pytest.raises(ValueError, match="information fractions"):
            boundaries(fractions)
    with pytest.raises(ValueError, match="spending"):
        boundaries([1.0], spending="haybittle")
    with pytest.raises(ValueError, match="sides"):
        boundaries([1.0], sides=3)
