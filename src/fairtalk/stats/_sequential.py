"""Group-sequential inference: Lan-DeMets alpha spending, look boundaries, repeated and sequential p-values.

An audit that adds pairs until its measures are decided looks at its data several times;
testing each look at α would reject a true null far more often than α. The group-sequential
design keeps the level: the analysis is planned at information fractions ``t_1 < ... < t_K = 1``
(``t_k = n_k / N``, the pairs of look ``k`` over the budget ``N``), and an alpha-spending
function ``α(t)`` (Lan & DeMets 1983) says how much of α may be spent by each look. The
critical value ``c_k`` of look ``k`` solves

    P(no crossing at looks 1..k-1, crossing at look k) = α(t_k) - α(t_{k-1})

under the joint normal distribution of the look statistics ``Z_1..Z_K`` (canonical joint
distribution: ``corr(Z_i, Z_j) = sqrt(t_i / t_j)``, i <= j), computed by the recursive
numerical integration of Armitage, McPherson & Rowe (1969) as laid out in Jennison & Turnbull
(2000, ch. 19): the score ``S_k = Z_k sqrt(t_k)`` has independent normal increments.

Spending functions (:data:`SPENDING_FUNCTIONS`):

- ``"obrien-fleming"`` (the default): ``α(t) = 2 - 2 Φ(z_{1-α/2} / sqrt(t))``, spending almost
  nothing early (4 equal looks, two-sided α = 0.05: ``|z|`` 4.33, 2.96, 2.36, 2.01);
- ``"pocock"``: ``α(t) = α log(1 + (e - 1) t)``, nearly equal boundaries at every look.

``sides=1`` gives a one-sided (upper) test, as each of the two one-sided tests of a TOST
equivalence test; ``sides=2`` the symmetric two-sided test (a difference in either direction),
each side spending ``α / 2`` by the spending function, as gsDesign, EAST and Jennison &
Turnbull's tables do.

A look's boundary turned into a p-value scale is its **nominal level** (``2 (1 - Φ(c_k))``
two-sided). The **repeated p-value** of a look (Jennison & Turnbull 2000, §9.1) is the
smallest α at which the design would have crossed at that look; the **sequential p-value**
is its minimum over the looks so far. ``P(sequential p <= a) <= a`` for every ``a`` under the
null, however the looks end (stopping early only gives up the α not yet spent), so sequential
p-values can be corrected over a family by Holm or Bonferroni like any p-values: Holm on them
is the group-sequential Holm procedure of Maurer & Bretz (2013) tested at the current look.

Every function here is pure and deterministic (no Monte Carlo integration).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from fairtalk._codec import Codec, via

__all__ = [
    "SPENDING_FUNCTIONS",
    "Boundaries",
    "alpha_spent",
    "boundaries",
    "look_sizes",
    "repeated_p",
    "sequential_p",
]

SPENDING_FUNCTIONS = ("obrien-fleming", "pocock")
"""The alpha-spending functions, by name (Lan-DeMets O'Brien-Fleming-type, the default, and Pocock-type)."""
_MSG_SPENDING = "unknown spending function {given!r}; choose one of {choices}"
_MSG_FRACTIONS = "information fractions must increase strictly within (0, 1], got {fractions!r}"
_MSG_ALPHA = "alpha must lie in (0, 1), got {alpha!r}"
_MSG_SIDES = "sides must be 1 or 2, got {sides!r}"
_MSG_LOOKS = "looks must be an int >= 2, got {looks!r}"
_MSG_SIZES = "the first look ({first}) must be a positive int no larger than the budget ({maximum})"
#: Critical values are searched within (0, this); a look that spends nothing gets an infinite one.
_Z_MAX = 40.0
#: The score grid truncates an unbounded continuation region this many standard deviations out.
_TAIL = 10.0
#: Repeated p-values are resolved within [this, 1).
_P_FLOOR = 1e-15


def _check(fractions: Sequence[float], alpha: float, spending: str, sides: int) -> tuple[float, ...]:
    if spending not in SPENDING_FUNCTIONS:
        raise ValueError(_MSG_SPENDING.format(given=spending, choices=", ".join(SPENDING_FUNCTIONS)))
    if not 0.0 < alpha < 1.0:
        raise ValueError(_MSG_ALPHA.format(alpha=alpha))
    if sides not in (1, 2):
        raise ValueError(_MSG_SIDES.format(sides=sides))
    t = tuple(float(x) for x in fractions)
    if not t or any(not 0.0 < x <= 1.0 for x in t) or any(b <= a for a, b in zip(t, t[1:])):
        raise ValueError(_MSG_FRACTIONS.format(fractions=fractions))
    return t


def alpha_spent(t: float, *, alpha: float, spending: str = "obrien-fleming") -> float:
    """The α spent by information fraction ``t`` (0 at ``t = 0``, ``alpha`` at ``t = 1``).

    Examples
    --------
    >>> round(alpha_spent(0.5, alpha=0.05), 5)
    0.00557
    >>> round(alpha_spent(0.5, alpha=0.05, spending="pocock"), 5)
    0.03101
    """
    from scipy.stats import norm

    if spending not in SPENDING_FUNCTIONS:
        raise ValueError(_MSG_SPENDING.format(given=spending, choices=", ".join(SPENDING_FUNCTIONS)))
    if t <= 0.0:
        return 0.0
    t = min(t, 1.0)
    if spending == "pocock":
        return float(alpha * math.log1p((math.e - 1.0) * t))
    return float(2.0 * norm.sf(norm.isf(alpha / 2.0) / math.sqrt(t)))


#: Critical values in JSON: an infinite ``z`` (a look that spends nothing) as null.
_Z = via(
    lambda values: [None if math.isinf(z) else z for z in values],
    lambda values: tuple(math.inf if z is None else float(z) for z in values),
)


@dataclass(frozen=True, slots=True)
class Boundaries(Codec):
    """A group-sequential design's boundaries: per look its critical ``|z|``, nominal level and α spent so far.

    ``z[k]`` is the critical value of look ``k`` (``inf`` when the look spends nothing);
    ``nominal[k]`` the same as a p-value threshold (two-sided for ``sides=2``): a look's test
    crosses when its p-value is at or below it; ``spent[k]`` the cumulative α spent by look ``k``.
    """

    fractions: tuple[float, ...]
    z: tuple[float, ...] = field(metadata=_Z)
    nominal: tuple[float, ...]
    spent: tuple[float, ...]
    alpha: float
    spending: str
    sides: int


def boundaries(
    fractions: Sequence[float], *, alpha: float = 0.05, spending: str = "obrien-fleming", sides: int = 2
) -> Boundaries:
    """The critical values of a group-sequential test at ``alpha`` with looks at ``fractions``.

    Parameters
    ----------
    fractions : sequence of float
        The information fraction of each look, increasing, in (0, 1]; the design spends all of
        ``alpha`` only when the last is 1.
    alpha : float
        The overall level (two-sided for ``sides=2``).
    spending : {"obrien-fleming", "pocock"}
        The Lan-DeMets spending function.
    sides : {1, 2}
        A symmetric two-sided test, or a one-sided (upper) test.

    Returns
    -------
    Boundaries

    Raises
    ------
    ValueError
        Fractions that do not increase within (0, 1], an ``alpha`` outside (0, 1), an unknown
        spending function or ``sides``.

    Examples
    --------
    >>> [round(z, 2) for z in boundaries([0.25, 0.5, 0.75, 1.0]).z]
    [4.33, 2.96, 2.36, 2.01]
    >>> round(boundaries([1.0], alpha=0.05).nominal[0], 12)
    0.05
    """
    t = _check(fractions, alpha, spending, sides)
    return _boundaries(t, float(alpha), spending, sides)


@lru_cache(maxsize=4096)
def _boundaries(t: tuple[float, ...], alpha: float, spending: str, sides: int) -> Boundaries:
    from scipy.optimize import brentq
    from scipy.stats import norm

    spent = [sides * alpha_spent(x, alpha=alpha / sides, spending=spending) for x in t]  # each side spends α / sides
    z: list[float] = []
    nominal: list[float] = []
    grid = weights = density = None  # the continuation density of the score on its grid, after each look
    previous_t = 0.0
    for k, (tk, target) in enumerate(zip(t, np.diff([0.0, *spent]))):
        step = tk - previous_t
        if grid is None or density is None or weights is None:  # the first look: closed form
            c = float(norm.isf(target / sides)) if target > 0 else math.inf
        elif target <= 1e-300:
            c = math.inf
        else:
            mass, sd = weights * density, math.sqrt(step)

            def excess(
                c_: float, g: np.ndarray = grid, m: np.ndarray = mass, s: float = sd, r: float = tk, goal: float = float(target)
            ) -> float:
                return _crossing(c_, g, m, s, r, sides) - goal

            if excess(_Z_MAX) >= 0:  # a look that may spend next to nothing
                c = math.inf
            else:
                lowest = 0.0 if sides == 2 else -_Z_MAX  # a one-sided test at a level above 1/2 has c < 0
                c = float(brentq(excess, lowest, _Z_MAX, xtol=1e-10))
        z.append(c)
        nominal.append(float(sides * norm.sf(c)) if math.isfinite(c) else 0.0)
        if k == len(t) - 1:
            break
        high = min(c, _TAIL) * math.sqrt(tk)  # the continuation region, truncated _TAIL sd out
        low = -high if sides == 2 else -_TAIL * math.sqrt(tk)
        high = max(high, low + 1e-6)
        new_grid, new_weights = _simpson(low, high, _n_points(high - low, t))
        if grid is None or density is None or weights is None:
            new_density = norm.pdf(new_grid / math.sqrt(tk)) / math.sqrt(tk)
        else:
            sd = math.sqrt(step)
            kernel = norm.pdf((new_grid[:, None] - grid[None, :]) / sd) / sd
            new_density = kernel @ (weights * density)
        grid, weights, density = new_grid, new_weights, new_density
        previous_t = tk
    return Boundaries(
        fractions=t,
        z=tuple(z),
        nominal=tuple(nominal),
        spent=tuple(float(s) for s in spent),
        alpha=alpha,
        spending=spending,
        sides=sides,
    )


def _crossing(c: float, grid: np.ndarray, mass: np.ndarray, sd: float, t: float, sides: int) -> float:
    """P(no crossing so far, crossing at critical value ``c`` now): the continuation mass on ``grid`` moved by N(0, sd²)."""
    from scipy.stats import norm

    h = c * math.sqrt(t)
    up = norm.sf((h - grid) / sd)
    down = norm.cdf((-h - grid) / sd) if sides == 2 else 0.0
    return float(np.sum(mass * (up + down)))


def _n_points(width: float, t: tuple[float, ...]) -> int:
    """An odd number of grid points, about 12 per standard deviation of the smallest increment (at least 401)."""
    smallest = min(b - a for a, b in zip((0.0, *t), t))
    n = max(401, int(math.ceil(width / (math.sqrt(smallest) / 12.0))))
    return min(n, 4001) | 1


def _simpson(low: float, high: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Simpson's rule on ``n`` (odd) equally spaced points of ``[low, high]``: the points and their weights."""
    points = np.linspace(low, high, n)
    h = (high - low) / (n - 1)
    weights = np.full(n, 2.0)
    weights[1::2] = 4.0
    weights[0] = weights[-1] = 1.0
    return points, weights * h / 3.0


def repeated_p(p: float, fractions: Sequence[float], *, spending: str = "obrien-fleming", sides: int = 2) -> float:
    """The repeated p-value of the last look in ``fractions``: the smallest α whose design crosses there at ``p``.

    ``p`` is the look's fixed-sample p-value (two-sided for ``sides=2``). At a single look at
    ``t = 1`` it is ``p`` itself. Values below ``1e-15`` are reported as ``1e-15``, and 1 when
    even α near 1 does not cross.

    Examples
    --------
    >>> repeated_p(0.03, [1.0])
    0.03
    >>> round(repeated_p(0.01, [0.5]), 4)  # p = 0.01 at half the pairs is weak evidence early on
    0.0943
    """
    t = _check(fractions, 0.5, spending, sides)
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    if len(t) == 1 and t[0] == 1.0:
        return float(p)
    if p <= 0.0:
        return _P_FLOOR

    def level(a: float) -> float:
        return _boundaries(t, a, spending, sides).nominal[-1]

    from scipy.optimize import brentq

    low, high = _P_FLOOR, 1.0 - 1e-9
    if p <= level(low):
        return low
    if p >= level(high):
        return 1.0
    root = brentq(
        lambda x: math.log(max(level(math.exp(x)), 1e-300)) - math.log(p), math.log(low), math.log(high), xtol=1e-9, rtol=1e-9
    )
    return float(min(1.0, math.exp(root)))


def sequential_p(
    pvalues: Sequence[float | None], fractions: Sequence[float], *, spending: str = "obrien-fleming", sides: int = 2
) -> float | None:
    """The sequential p-value after ``len(pvalues)`` looks: the least repeated p-value over them.

    ``pvalues[k]`` is look ``k``'s fixed-sample p-value (None: untested at that look);
    ``fractions`` the design's information fractions (at least as many as ``pvalues``). None
    when no look has a p-value.

    Examples
    --------
    >>> round(sequential_p([0.01, 0.2], [0.5, 1.0]), 4)
    0.0943
    """
    t = _check(fractions, 0.5, spending, sides)
    best: float | None = None
    for k, p in enumerate(pvalues):
        if p is None:
            continue
        value = repeated_p(p, t[: k + 1], spending=spending, sides=sides)
        best = value if best is None else min(best, value)
    return best


def look_sizes(first: int, maximum: int, looks: int | None = None) -> tuple[int, ...]:
    """The pairs at each look: ``first``, then equal steps up to ``maximum``.

    Without ``looks``, each step adds ``first`` pairs (the last look may add fewer); with it,
    ``looks`` looks from ``first`` to ``maximum`` in equal steps (rounded up). Repeated sizes
    collapse, so ``first == maximum`` is a single, fixed-sample look.

    Examples
    --------
    >>> look_sizes(500, 2000)
    (500, 1000, 1500, 2000)
    >>> look_sizes(500, 1200)
    (500, 1000, 1200)
    >>> look_sizes(100, 1000, looks=4)
    (100, 400, 700, 1000)
    """
    for value in (first, maximum):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(_MSG_SIZES.format(first=first, maximum=maximum))
    if first < 1 or first > maximum:
        raise ValueError(_MSG_SIZES.format(first=first, maximum=maximum))
    if looks is not None and (isinstance(looks, bool) or not isinstance(looks, int) or looks < 2):
        raise ValueError(_MSG_LOOKS.format(looks=looks))
    if looks is None:
        sizes = list(range(first, maximum, first)) + [maximum]
    else:
        sizes = [first + math.ceil((maximum - first) * k / (looks - 1)) for k in range(looks)]
    return tuple(dict.fromkeys(sizes))
