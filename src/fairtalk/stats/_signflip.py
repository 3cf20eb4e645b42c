"""The studentized sign-flip randomization test of a mean difference: the mean test when differences are few, tied or discrete.

Under the null of no difference, each independent unit's difference (a pair's, or a whole
dialogue's sum) is as likely to carry either sign. The test flips the signs of the units at
random and recomputes the **studentized** statistic, the (CR2 cluster-robust) t of the flipped
sample, not its raw sum: studentizing keeps the test valid for a mean difference when the units
differ in size and spread (Chung and Romano 2013; Good 2005, ch. 3), and makes it the paired t
test's own randomization distribution.

- **When** (:func:`randomization_applies`): the t reference is replaced when at most
  :data:`FEW_UNITS` units differ ("few": the t's tails then depend on the shape of the
  differences), or when their non-zero values take at most :data:`DISCRETE_VALUES` distinct
  sizes ("tied or discrete": 0/±1 rate differences, small word counts). There the t
  distribution is a poor stand-in for a lumpy one: 21 pairs that differ by ±1 gave the t test
  an exact size of 0.078 at α = 0.05.
- **Exact** where the sign patterns can be counted: without clusters, |t| grows with the
  absolute sum of the flipped differences (their sum of squares is fixed), so the exact null
  distribution is that of the sum, computed on the integer lattice of the differences for any
  number of units (:data:`LATTICE_MAX_STEPS`); otherwise all ``2^m`` patterns up to
  :data:`EXACT_MAX_UNITS` differing units (2^20, about a million, in well under a second).
- **Monte Carlo** beyond that: :data:`N_FLIPS` random patterns drawn from the run's seed (so
  the p-value is deterministic), ``p = (1 + #{|t*| >= |t|}) / (N_FLIPS + 1)``, a valid p-value.
  It cannot go below its floor ``1 / (N_FLIPS + 1)`` (about 1e-4), which is above the first
  boundaries of an O'Brien-Fleming design of 3 or more looks (4 looks: p < 1.5e-5). So when no
  random pattern reaches the observed statistic, ``p`` is **Hoeffding's bound** on the
  sign-flip tail of the sum, ``2 exp(-S^2 / (2 sum S_i^2))`` (exact for any number of units,
  no approximation), where it lies below the floor. The test stays valid: at a level below the
  floor it rejects only when that bound does, which happens with probability at most the
  level; at a level at or above the floor it rejects exactly when the Monte Carlo p does.
- With clusters whole dialogues are flipped, and the statistic is the CR2 t of each flipped sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fairtalk.stats._core import Units, rng

__all__ = [
    "DISCRETE_VALUES",
    "EXACT_MAX_UNITS",
    "FEW_UNITS",
    "LATTICE_MAX_STEPS",
    "N_FLIPS",
    "SignFlip",
    "hoeffding_p",
    "randomization_applies",
    "signflip_test",
]

FEW_UNITS = 50
""""Few": at most this many differing units use the randomization test whatever their values."""
DISCRETE_VALUES = 10
""""Tied or discrete": non-zero unit differences of at most this many distinct sizes use it at any number of units."""
EXACT_MAX_UNITS = 20
"""All ``2^m`` sign patterns are enumerated up to this many differing units."""
N_FLIPS = 10_000
"""Random sign patterns of the Monte Carlo test (beyond exact enumeration)."""
#: The lattice computation (no clusters) runs while units × lattice points stays below this.
LATTICE_MAX_STEPS = 50_000_000
_CHUNK = 2048
_RELATIVE_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class SignFlip:
    """A sign-flip test's outcome: ``exact`` (every pattern counted) or Monte Carlo, its statistic (the sum) and ``p``."""

    exact: bool
    statistic: float
    p: float


def _nonzero(u: Units) -> np.ndarray:
    out: np.ndarray = u.sums[u.sums != 0]
    return out


def randomization_applies(u: Units) -> bool:
    """Whether the mean test uses the sign-flip randomization reference rather than t (see the module docstring)."""
    nonzero = _nonzero(u)
    if nonzero.size == 0:
        return False
    if nonzero.size <= FEW_UNITS:
        return True
    return int(np.unique(np.round(np.abs(nonzero), 12)).size) <= DISCRETE_VALUES


def _studentized(l1: np.ndarray, l2: np.ndarray, q: float, k: float, n: float) -> np.ndarray:
    """|t| of flipped samples from their two linear forms (see :func:`signflip_test`)."""
    estimate = l1 / n
    variance = np.maximum(q - 2.0 * estimate * l2 + estimate * estimate * k, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(estimate) / np.sqrt(variance)
    return np.where(variance > 0, t, np.where(estimate != 0, np.inf, 0.0))


def _lattice_integers(values: np.ndarray) -> np.ndarray | None:
    """``values`` as integer multiples of one step (their greatest common step), or None when they are not on a lattice."""
    for scale in (1.0, 10.0, 100.0, 1000.0):
        scaled = values * scale
        rounded = np.round(scaled)
        if np.all(np.abs(scaled - rounded) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            ints = np.abs(rounded).astype(np.int64)
            return ints // int(np.gcd.reduce(ints))
    return None


def _lattice_p(values: np.ndarray) -> float | None:
    """Exact two-sided sign-flip p of the sum of ``values`` on their integer lattice; None when too costly or no lattice."""
    ints = _lattice_integers(np.abs(values))
    if ints is None:
        return None
    total = int(ints.sum())
    if ints.size * (2 * total + 1) > LATTICE_MAX_STEPS:
        return None
    from scipy.stats import binom

    dist = np.zeros(2 * total + 1)
    dist[total] = 1.0
    reach = 0
    sizes, counts = np.unique(ints, return_counts=True)
    for size, count in zip(sizes.tolist(), counts.tolist()):
        weights = binom.pmf(np.arange(count + 1), count, 0.5)
        out = np.zeros_like(dist)
        low, high = total - reach, total + reach + 1
        for j, weight in enumerate(weights):  # j of the ``count`` units flipped to +: shift by size * (2j - count)
            shift = size * (2 * j - count)
            out[low + shift : high + shift] += weight * dist[low:high]
        dist = out
        reach += size * count
    signed = np.round(values / np.abs(values)).astype(np.int64) * ints
    observed = abs(int(signed.sum()))
    lattice = np.abs(np.arange(-total, total + 1))
    return float(min(1.0, dist[lattice >= observed].sum()))


def _forms(u: Units) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """The differing units' sums ``S``, ``w^2 n S``, and the constants ``Q``, ``K``, ``N`` of the CR2 t of a flipped sample.

    With signs ``s``: ``estimate = sum(s S) / N`` and
    ``N^2 SE^2 = Q - 2 estimate sum(s w^2 n S) + estimate^2 K``, where ``Q = sum(w^2 S^2)``,
    ``K = sum(w^2 n^2)`` over every unit and ``w`` the CR2 weights.
    """
    weights = u._weights() ** 2
    keep = u.sums != 0
    sums = u.sums[keep]
    weighted = (weights * u.sizes)[keep] * sums
    q = float(np.dot(weights[keep], sums * sums))
    k = float(np.dot(weights, u.sizes * u.sizes))
    return sums, weighted, q, k, float(u.sizes.sum())


def _enumerate(values: np.ndarray) -> np.ndarray:
    """``sum(s * values)`` over all ``2^len(values)`` sign patterns ``s``."""
    sums = np.zeros(1)
    for v in values:
        sums = np.concatenate([sums + v, sums - v])
    return sums


def signflip_test(u: Units, *, seed: int = 0) -> SignFlip:
    """The studentized sign-flip test of ``E[a - b] == 0`` on the units ``u`` (whole clusters flipped when clustered).

    Exact on the lattice (no clusters) or by enumeration up to :data:`EXACT_MAX_UNITS` differing
    units; else :data:`N_FLIPS` random patterns from ``seed``.

    Examples
    --------
    >>> from fairtalk.stats._core import units
    >>> signflip_test(units(np.array([1.0, 1.0, 1.0, 1.0]), None)).p  # four pairs all +1: 2 of 16 patterns
    0.125
    """
    sums, weighted, q, k, n = _forms(u)
    statistic = float(sums.sum())
    m = int(sums.size)
    if m == 0:
        return SignFlip(True, 0.0, 1.0)
    if not u.clustered:
        p = _lattice_p(sums)
        if p is not None:
            return SignFlip(True, statistic, p)
    observed = float(_studentized(np.array([statistic]), np.array([float(weighted.sum())]), q, k, n)[0])
    threshold = observed * (1.0 - _RELATIVE_TOLERANCE) if math.isfinite(observed) else math.inf
    if m <= EXACT_MAX_UNITS:
        t = _studentized(_enumerate(sums), _enumerate(weighted), q, k, n)
        return SignFlip(True, statistic, float(np.count_nonzero(t >= threshold) / t.size))
    generator = rng(seed)
    exceed = 0
    for start in range(0, N_FLIPS, _CHUNK):
        size = min(_CHUNK, N_FLIPS - start)
        bits = np.unpackbits(np.frombuffer(generator.bytes(size * ((m + 7) // 8)), dtype=np.uint8))
        signs = bits.reshape(size, -1)[:, :m].astype(float) * 2.0 - 1.0
        exceed += int(np.count_nonzero(_studentized(signs @ sums, signs @ weighted, q, k, n) >= threshold))
    p = (1 + exceed) / (N_FLIPS + 1)
    if exceed == 0:  # beyond every random pattern: the floor is no p-value of its own, Hoeffding's bound may be lower
        p = min(p, hoeffding_p(sums))
    return SignFlip(False, statistic, float(p))


def hoeffding_p(sums: np.ndarray) -> float:
    """Hoeffding's bound on the two-sided sign-flip tail of ``sum(sums)``: ``P(|sum s_i S_i| >= |S|) <= 2 exp(-S^2 / (2 sum S_i^2))``.

    A valid (conservative) p-value of the sign-flip test of the sum, for any number of units.

    Examples
    --------
    >>> f"{hoeffding_p(np.ones(100)):.2g}"  # 100 units all +1: 2 exp(-50)
    '3.9e-22'
    >>> hoeffding_p(np.array([1.0, -1.0]))
    1.0
    """
    total, squares = float(sums.sum()), float(np.dot(sums, sums))
    if squares == 0.0:
        return 1.0
    return float(min(1.0, 2.0 * math.exp(-total * total / (2.0 * squares))))
