"""Issue 27: the printed minimum detectable effect is detected with the stated power (80% ± 5%), and plan --gate's pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from calibration import chitchat_population, mde_power
from fairtalk.stats import (
    PowerBasis,
    mde,
    minimum_detectable_effect,
    newcombe_interval,
    pairs_for_equivalence,
    power_mcnemar,
    power_mean,
    tost_mean,
    units,
)


def test_mean_mde_is_the_noncentral_t_of_the_tests_df() -> None:
    effect = mde(PowerBasis("mean", n=30, se=0.5, df=9.0), alpha=0.05)  # few dialogues: 9 Bell-McCaffrey df
    assert effect is not None and power_mean(effect / 0.5, 9.0, 0.05) == pytest.approx(0.8, abs=1e-6)
    normal = (norm.ppf(0.975) + norm.ppf(0.8)) * 0.5  # the old formula: too small at 9 df
    assert power_mean(normal / 0.5, 9.0, 0.05) < 0.72
    assert mde(PowerBasis("mean", n=30, se=0.0, df=29.0), alpha=0.05) is None


def test_defect_rate_mde_lets_the_discordance_grow_with_the_effect() -> None:
    # Issue 27: at the printed MDE of a rare rate, the exact McNemar test had about 50% power.
    n, discordant = 1470, 30  # offense-like: 15 discordant pairs each way
    a = np.array([1.0] * 15 + [0.0] * 15 + [0.0] * (n - 30))
    b = np.array([0.0] * 15 + [1.0] * 15 + [0.0] * (n - 30))
    level = 0.05 / 11
    new = mde(PowerBasis("mcnemar_exact", n=n, discordance=discordant / n), alpha=level)
    assert new is not None
    half = discordant / n / 2
    assert power_mcnemar(n, half + new, half, level) == pytest.approx(0.8, abs=1e-3)
    old = minimum_detectable_effect(newcombe_interval(a, b).bounds, alpha=level)
    assert old is not None and power_mcnemar(n, half + old, half, level) < 0.65


def test_pairs_for_equivalence_gives_the_tost_its_power() -> None:
    n = pairs_for_equivalence(1.0, 0.1)
    assert n == math.ceil(((norm.ppf(0.95) + norm.ppf(0.9)) / 0.1) ** 2) + 2  # t quantiles add about 2 pairs
    rng = np.random.default_rng(0)
    shown = [bool(tost_mean(units(rng.normal(0, 1, n), None), margin=0.1, alpha=0.05).equivalent) for _ in range(400)]
    assert 0.75 <= float(np.mean(shown)) <= 0.85  # sd of the estimate at 400 runs: 2 points
    assert pairs_for_equivalence(1.0, 0.1, design_effect=2.0) >= 2 * n - 4  # fewer t df to pay for


# Real chitchat turn pairs, sides swapped (the null), an effect of exactly the printed MDE planted, tested at
# α / 11 (the bare audit's family). 400 runs give the power estimate a sd of 2 points, so 80% ± 5% is ±2.5 sd.
_RUNS = 400


@pytest.fixture(scope="module")
def population():  # type: ignore[no-untyped-def]
    pytest.importorskip("chitchat_dataset")
    return chitchat_population(600)


@pytest.mark.parametrize(
    ("key", "kind", "clustered"),
    [("negative", "rate", False), ("negative", "rate", True), ("positive", "rate", True), ("words", "count", True)],
)
def test_injecting_the_printed_mde_is_detected_80_percent_of_the_time(
    population,
    key: str,
    kind: str,  # type: ignore[no-untyped-def]
    clustered: bool,
) -> None:
    if key == "negative":  # a rare rate, like offense_rate: VADER compound <= -0.5
        a, b = (population.a["compound"] <= -0.5).astype(float), (population.b["compound"] <= -0.5).astype(float)
    else:
        a, b = population.a[key], population.b[key]
    cluster = population.cluster if clustered else None
    check = mde_power(a, b, cluster, kind=kind, n_units=150 if clustered else 1000, runs=_RUNS, seed=11, family=11)
    assert 0.75 <= check.power <= 0.85, check
    if kind == "rate":
        assert check.power_old < check.power - 0.05, check  # the old normal formula promised more than it gave


def test_a_rate_with_every_pair_discordant_has_no_mde_rather_than_an_error() -> None:
    assert mde(PowerBasis("mcnemar_exact", n=30, discordance=1.0), alpha=0.05) is None
    assert power_mcnemar(30, 0.5 + 1e-9, 0.5, 0.05) >= 0.0


@pytest.mark.parametrize(
    ("plan", "args", "kwargs"),
    [
        ("pairs_to_detect", (1e-9, math.sqrt(0.18)), {"test": "rate_mean", "alpha": 0.05, "discordance": 0.18}),
        ("pairs_to_detect", (0.0005, 1.0), {"test": "mean", "alpha": 0.05}),
        ("pairs_to_detect", (1e-6, 0.0), {"test": "mcnemar_exact", "alpha": 0.05, "discordance": 0.5}),
        ("pairs_for_rate_equivalence", (0.09, 1e-5), {}),
        ("pairs_spanning", (20_000_000,), {}),
        ("pairs_spanning", (6_000_000,), {"pairs_per_unit": 2.0}),
    ],
    ids=["rate", "mean", "mcnemar", "rate-equivalence", "spanning", "spanning-dialogues"],
)
def test_planners_refuse_a_size_beyond_any_audit_rather_than_return_it(plan: str, args: tuple, kwargs: dict) -> None:
    """Review finding: pairs_to_detect returned 1.4e18 (a rate) and 31 million (a mean) past its cap of ten million.

    McNemar's search began at the normal formula's trillions of pairs, computing its exact power there (it had not
    ended after two minutes); it now begins at the cap.
    """
    import fairtalk.stats

    with pytest.raises(ValueError, match=r"exceed|needs more than"):
        getattr(fairtalk.stats, plan)(*args, **kwargs)
