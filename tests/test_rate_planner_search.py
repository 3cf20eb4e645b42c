"""Issue 40: the rate planner's search (the report's "pairs the gate needs") costs less and plans the same sizes.

The bare audit spent about 3 s of CPU planning its rate keys: every size the search read ran the
few-units convolution over the corpus' dialogue sizes, with 126,000 log-gammas per size. Now the
log-gammas are looked up (the same floats), a size class of ``c`` dialogues convolves only cells
of at most ``c`` units (the others add exact zeros), and a size whose power is surely below the
target (an upper bound: the chance of spanning the dialogues the rule needs, plus the many part)
is not convolved at all. The references below are the code before, term for term.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.special import gammaln, xlogy

from fairtalk.cli._plan import BUILTIN_GENDER_DIALOGUE_SIZES
from fairtalk.stats import _power, pairs_for_rate_equivalence

SMALL = ((1, 5), (3, 2), (7, 1))
SPREAD = ((1, 300), (4, 50), (30, 2))


def _old_dialogue_draws(n: int, sizes: _power.ClusterSizes) -> tuple[np.ndarray, np.ndarray]:
    """``_dialogue_draws`` before: log C from three log-gammas per element."""
    m = np.array([size for size, _ in sizes])
    count = np.array([c for _, c in sizes])
    total = int(m @ count)
    k = np.arange(int(m.max()) + 1)
    full, drawn = divmod(n, total) if n > total else (0, n)

    def log_choose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1), dtype=float)

    kk, mm = k[None, :], m[:, None]
    whole = (kk == mm).astype(float)
    possible = (kk <= mm) & (drawn - kk >= 0) & (drawn - kk <= total - mm)
    kk, nk = np.where(possible, kk, 0), np.where(possible, drawn - kk, 0)
    log_pmf = log_choose(mm + 0 * kk, kk) + log_choose(total - mm + 0 * kk, nk) - log_choose(np.array(total), np.array(drawn))
    draws = np.where(possible, np.exp(log_pmf), 0.0)
    if full:
        draws = np.vstack([whole, draws])
        count = np.concatenate([full * count, count])
    return draws, count


def _old_few_by_sizes(null: _power._RateNull, n: int) -> tuple[float, float]:
    """``_RateNull._few_by_sizes`` before: every term per cell, every pair of cells convolved for every class."""
    q = null.discordance
    cells, left, right, target = _power._few_cells()
    draws, count = _old_dialogue_draws(n, null.cluster_sizes)
    k = np.arange(draws.shape[1])
    none, no_a = (1 - q) ** k, (1 - q / 2) ** k
    one, both = draws @ (no_a - none), draws @ np.maximum(0.0, 1 - 2 * no_a + none)
    rest = np.maximum(1e-300, 1.0 - 2 * one - both)
    used = cells.sum(axis=1)
    left_over = np.maximum(count[:, None] - used[None, :], 0)
    log_p = (
        gammaln(count + 1)[:, None]
        - gammaln(left_over + 1)
        - gammaln(cells + 1).sum(axis=1)[None, :]
        + xlogy((cells[:, 0] + cells[:, 1])[None, :], one[:, None])
        + xlogy(cells[None, :, 2], both[:, None])
        + xlogy(left_over, rest[:, None])
    )
    weights = np.where(count[:, None] >= used[None, :], np.exp(log_p), 0.0)
    table: np.ndarray = np.zeros(len(cells))
    table[0] = 1.0
    for row in weights:
        table = np.asarray(np.bincount(target, weights=table[left] * row[right], minlength=len(cells)), dtype=np.float64)
    worst = np.maximum(cells[:, 0], cells[:, 1]) + cells[:, 2]
    return float(table @ null._reach(n)[worst]), float(table.sum())


@dataclass(frozen=True)
class Key:
    """One rate key as the planner sees it."""

    discordance: float
    rate: float | None = None
    design_effect: float = 1.0
    pairs_per_unit: float = 1.0
    sizes: _power.ClusterSizes = ()
    margin: float = 0.02
    power: float = 0.8


def _old_search(key: Key) -> int | str:
    """``pairs_for_rate_equivalence`` before: the same search, every size's power computed in full."""
    q, margin, power = key.discordance, key.margin, key.power
    null = _power._rate_null(q, margin, 0.05, key.rate, key.design_effect, key.pairs_per_unit, key.sizes)
    guess = _power.pairs_for_equivalence(math.sqrt(q), margin, alpha=0.05, power=power, design_effect=null.design_effect)
    if guess * q >= _power.FEW_DISCORDANT:
        return guess
    low = max(1, guess // 2)
    while low > 1 and null.power(low) >= power:
        low //= 2
    high = low
    while True:
        high = max(low + 1, math.ceil(low * _power._SCAN_STEP))
        if high > _power.MAX_RATE_PAIRS:
            return "ValueError"
        if null.power(high) >= power:
            break
        low = high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if null.power(mid) >= power else (mid, high)
    if null.power(high) <= power + _power.POWER_TOLERANCE:
        return high
    for tooth in reversed(null.steps(high)):
        if null.power(tooth) >= power - _power.POWER_TOLERANCE:
            return tooth
        break
    return high


def _new_search(key: Key) -> int | str:
    try:
        return pairs_for_rate_equivalence(
            key.discordance,
            key.margin,
            power=key.power,
            rate=key.rate,
            design_effect=key.design_effect,
            pairs_per_unit=key.pairs_per_unit,
            cluster_sizes=key.sizes,
        )
    except ValueError:
        return "ValueError"


@pytest.mark.parametrize("sizes", [BUILTIN_GENDER_DIALOGUE_SIZES, SMALL, SPREAD, ((2, 2),)])
def test_the_few_units_part_is_the_same_float_as_computed_term_by_term(sizes: _power.ClusterSizes) -> None:
    total = sum(m * count for m, count in sizes)
    for n in sorted({1, 2, 3, 7, 50, 333, total - 1, total, total + 1, 2 * total + 3, 5 * total} - {0}):
        draws, count = _power._dialogue_draws(n, sizes)
        old_draws, old_count = _old_dialogue_draws(n, sizes)
        assert np.array_equal(draws, old_draws) and np.array_equal(count, old_count), n
        for q, rate in itertools.product((0.0005, 0.004, 0.03, 0.3), (None, 0.2)):
            null = _power._rate_null(q, 0.02, 0.05, rate, 1.1, 3.0, sizes)
            assert null._few_by_sizes(n) == _old_few_by_sizes(null, n), (n, q, rate)


# The bare audit's rate keys (gender: its dialogue sizes; discordant shares and rates as in a bare audit's results).
BARE_KEYS = [
    (0.0265, 0.0235, 1.06),
    (0.0041, 0.0048, 1.36),
    (0.0095, 0.0068, 1.0),
    (0.0014, 0.0014, 1.0),
    (0.0005, 0.00125, 1.0),
]


@pytest.mark.parametrize(("q", "rate", "deff"), BARE_KEYS)
def test_the_bare_audits_keys_plan_the_sizes_of_the_search_that_computes_every_power(q: float, rate: float, deff: float) -> None:
    key = Key(q, rate, deff, 7.14, BUILTIN_GENDER_DIALOGUE_SIZES)
    assert _new_search(key) == _old_search(key)


@pytest.mark.slow
def test_a_wide_grid_plans_the_sizes_of_the_search_that_computes_every_power() -> None:
    clustering = [(1.0, ()), (6.5, ()), (7.14, BUILTIN_GENDER_DIALOGUE_SIZES), (2.0, SMALL), (1.4, SPREAD)]
    grid = itertools.product(clustering, (0.0004, 0.003, 0.015, 0.04), (None, 0.2), (1.0, 1.3), (0.02, 0.05))
    keys = [Key(q, rate, deff, per_unit, sizes, margin) for (per_unit, sizes), q, rate, deff, margin in grid]
    assert [key for key in keys if _new_search(key) != _old_search(key)] == []


def test_the_search_convolves_only_sizes_that_may_reach_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    read: set[int] = set()
    convolved: list[int] = []
    reach, few = _power._RateNull._reach, _power._RateNull._few_by_sizes

    def counted_reach(self: _power._RateNull, n: int) -> np.ndarray:
        read.add(n)
        return reach(self, n)

    def counted_few(self: _power._RateNull, n: int) -> tuple[float, float]:
        convolved.append(n)
        return few(self, n)

    monkeypatch.setattr(_power._RateNull, "_reach", counted_reach)
    monkeypatch.setattr(_power._RateNull, "_few_by_sizes", counted_few)
    planned = pairs_for_rate_equivalence(
        0.0005, 0.02, rate=0.00125, pairs_per_unit=7.14, cluster_sizes=BUILTIN_GENDER_DIALOGUE_SIZES
    )
    assert planned > 100 and len(read) > 50
    assert len(convolved) == len(set(convolved))  # each size at most once
    assert len(convolved) < len(read) / 3  # most of the sizes the search reads are far below the target
