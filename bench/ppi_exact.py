"""Exact coverage of intervals for a paired difference of proportions at small n: the labels-only interval of ppi_mean.

With fewer than 10 labelled pairs that disagree with the scorer, :func:`fairtalk.stats.ppi_mean` gives the labels'
own interval for the mean of their per-pair differences ``y_a - y_b`` (values -1, 0, +1). This script enumerates the
multinomial of ``n`` labelled pairs (``a`` pairs at +1, ``b`` at -1, the rest 0; unclustered) and gives each
candidate interval's exact coverage of the true gap ``p+ - p-`` and its mean width:

- **score**: Tango's score interval (1998), what ``ppi_mean`` uses (:func:`fairtalk.stats.score_interval` on -1, 0, 1;
  here its closed form, checked against the library at one n);
- **bonett-price**: Bonett and Price's adjusted Wald (2012): 1 added to each discordant count, ``n + 2``;
- **agresti-min**: Agresti and Min's adjusted Wald (2005): 0.5 added to each of the four cells, ``n + 2``;
- **newcombe**: Newcombe's hybrid score (1998, method 10: Wilson intervals of the two marginals, square and add with
  the continuity-corrected phi). It needs the concordant cells too (both sides positive), not only the differences:
  the rare cells use their design's share, the grid none (every concordant pair 0/0);
- **wald-t**: the t interval on the differences (with the exact bound when none differs), for reference;
- **likelihood-ratio**: the profile likelihood-ratio interval (the restricted MLE is Tango's);
- **jeffreys**: the equal-tailed Bayesian interval under the Jeffreys prior Dirichlet(1/2, 1/2, 1/2) on the three values;
- **exact-uncond**, **midp-uncond**: the exact unconditional test of ``p+ - p- = D`` ordered by Tango's statistic
  (Sidik 2003), its p the largest over the nuisance share (a grid of it), and its mid-p version, inverted: coverage only
  (the acceptance of the true gap), no width (each test enumerates all ``(n + 1)(n + 2) / 2`` outcomes).

Two tables: the six cells of bench/ppi.py's rare design (side a offensive at 3%, side b at 3% or 6% plus 1% of its
unflagged answers: gaps -0.010 and -0.039; 50, 100, 200 labels), and a grid of 30-200 labels and discordant shares
0.5-6% each way (each interval's lowest coverage, where, and its mean coverage and width over the grid).
A candidate fits when all six rare cells are in 0.93-0.97 and its grid minimum is no lower than the score interval's.

Run: ``.venv/bin/python bench/ppi_exact.py [--grid-labels 30 40 ...] [--no-exact]``.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln
from scipy.stats import norm
from scipy.stats import t as student_t

ALPHA = 0.05
Z = float(norm.ppf(1 - ALPHA / 2))
BAND = (0.93, 0.97)
GRID_LABELS = (30, 40, 50, 60, 80, 100, 120, 150, 200)
GRID_SHARES = (0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06)
#: bench/ppi.py's rare design: side a offensive at 3%; side b at 3% or 6%, plus 1% of its (all) unflagged answers.
RARE_P_A, RARE_P_B, RARE_HIDDEN = 0.03, (0.03, 0.06), 0.01
RARE_LABELS = (50, 100, 200)

Interval = Callable[[int, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _outcomes(n: int, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(a, b)`` with ``a, b <= cap`` and ``a + b <= n``: the counts of +1 and -1 differences."""
    a, b = np.meshgrid(np.arange(min(n, cap) + 1), np.arange(min(n, cap) + 1), indexing="ij")
    keep = a + b <= n
    return a[keep].astype(float), b[keep].astype(float)


def _log_pmf(n: int, counts: tuple[np.ndarray, ...], shares: tuple[float, ...]) -> np.ndarray:
    """The multinomial log-probability of each outcome (the last cell is ``n`` minus the others)."""
    rest = n - sum(counts)
    out = gammaln(n + 1) - gammaln(rest + 1) + rest * math.log(1 - sum(shares))
    for c, s in zip(counts, shares, strict=True):
        out = out - gammaln(c + 1) + (c * math.log(s) if s > 0 else np.where(c > 0, -np.inf, 0.0))
    return np.asarray(out)


def tango_z(n: int, a: np.ndarray, b: np.ndarray, delta: np.ndarray | float) -> np.ndarray:
    """Tango's score statistic of ``p+ - p- = delta``: ``(a - b - n delta) / sqrt(n (2 q + delta (1 - delta)))``.

    ``q`` is the restricted MLE of ``p-``, the root of ``2n q² + (delta (2n - a + b) - a - b) q - b delta (1 - delta)``.
    """
    coef_b = delta * (2 * n - a + b) - a - b
    coef_c = -b * delta * (1 - delta)
    q = (-coef_b + np.sqrt(np.maximum(coef_b**2 - 8 * n * coef_c, 0.0))) / (4 * n)
    variance = np.maximum(2 * q + delta * (1 - delta), 1e-300)
    return np.asarray((a - b - n * delta) / np.sqrt(n * variance))


def score(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tango's score interval: where the statistic crosses -z and +z (bisection; it decreases in ``delta``)."""

    def crossing(target: float) -> np.ndarray:
        low, high = np.full(a.shape, -1 + 1e-12), np.full(a.shape, 1 - 1e-12)
        for _ in range(60):
            mid = (low + high) / 2
            above = tango_z(n, a, b, mid) > target
            low, high = np.where(above, mid, low), np.where(above, high, mid)
        return (low + high) / 2

    return crossing(Z), crossing(-Z)


def _adjusted_wald(n: int, plus: np.ndarray, minus: np.ndarray, total: float) -> tuple[np.ndarray, np.ndarray]:
    """``d ± z sqrt((p+ + p- - d²) / total)`` with ``p± = plus/total, minus/total`` (clipped to -1..1)."""
    p_plus, p_minus = plus / total, minus / total
    d = p_plus - p_minus
    half = Z * np.sqrt(np.maximum(p_plus + p_minus - d**2, 0.0) / total)
    return np.maximum(d - half, -1.0), np.minimum(d + half, 1.0)


def bonett_price(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bonett and Price (2012): ``(a + 1) / (n + 2)`` and ``(b + 1) / (n + 2)``."""
    return _adjusted_wald(n, a + 1, b + 1, n + 2)


def agresti_min(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Agresti and Min (2005): 0.5 added to each of the four cells, so ``(a + 0.5) / (n + 2)``."""
    return _adjusted_wald(n, a + 0.5, b + 0.5, n + 2)


def wald_t(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The t interval on the differences; with none differing, the exact bound on the share that could (as ppi_mean)."""
    d = (a - b) / n
    variance = (a + b - n * d**2) / (n - 1) / n
    half = float(student_t.ppf(1 - ALPHA / 2, n - 1)) * np.sqrt(np.maximum(variance, 0.0))
    bound = 1 - (ALPHA / 2) ** (1 / n)
    half = np.where(a + b == 0, bound, half)
    return d - half, d + half


def _signed_root_ends(a: np.ndarray, b: np.ndarray, root: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Where a statistic that decreases in ``delta`` crosses +z and -z (bisection on -1..1)."""

    def crossing(target: float) -> np.ndarray:
        low, high = np.full(a.shape, -1 + 1e-12), np.full(a.shape, 1 - 1e-12)
        for _ in range(60):
            mid = (low + high) / 2
            above = root(mid) > target
            low, high = np.where(above, mid, low), np.where(above, high, mid)
        return (low + high) / 2

    return crossing(Z), crossing(-Z)


def likelihood_ratio(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The profile likelihood-ratio interval: the signed root of the deviance (restricted MLE as Tango's) crosses ±z."""
    from scipy.special import xlogy

    rest = n - a - b

    def loglik(p_plus: np.ndarray, p_minus: np.ndarray) -> np.ndarray:
        return np.asarray(xlogy(a, p_plus) + xlogy(b, p_minus) + xlogy(rest, np.maximum(1 - p_plus - p_minus, 0.0)))

    best = loglik(a / n, b / n)

    def root(delta: np.ndarray) -> np.ndarray:
        coef_b = delta * (2 * n - a + b) - a - b
        coef_c = -b * delta * (1 - delta)
        q = (-coef_b + np.sqrt(np.maximum(coef_b**2 - 8 * n * coef_c, 0.0))) / (4 * n)
        q = np.clip(q, np.maximum(0.0, -delta), (1 - delta) / 2)
        deviance = np.maximum(2 * (best - loglik(q + delta, q)), 0.0)
        return np.asarray(np.sign((a - b) / n - delta) * np.sqrt(deviance))

    return _signed_root_ends(a, b, root)


def jeffreys(n: int, a: np.ndarray, b: np.ndarray, nodes: int = 120) -> tuple[np.ndarray, np.ndarray]:
    """The equal-tailed Bayesian interval under the Jeffreys prior Dirichlet(1/2, 1/2, 1/2) on the three cells.

    ``p+ - p- = s (2u - 1)`` with ``s = p+ + p-`` ~ Beta(a + b + 1, n - a - b + 1/2) and ``u`` ~ Beta(a + 1/2, b + 1/2)
    independent; the posterior CDF is the mean over ``nodes`` quantiles of ``s`` of ``u``'s CDF.
    """
    from scipy.special import betainc
    from scipy.stats import beta

    levels = (np.arange(nodes) + 0.5) / nodes
    s = beta.ppf(levels[None, :], (a + b + 1)[:, None], (n - a - b + 0.5)[:, None])

    def cdf(x: np.ndarray) -> np.ndarray:
        u = np.clip((x[:, None] / s + 1) / 2, 0.0, 1.0)
        return np.asarray(betainc((a + 0.5)[:, None], (b + 0.5)[:, None], u).mean(axis=1))

    def quantile(level: float) -> np.ndarray:
        low, high = np.full(a.shape, -1.0), np.full(a.shape, 1.0)
        for _ in range(40):
            mid = (low + high) / 2
            below = cdf(mid) < level
            low, high = np.where(below, mid, low), np.where(below, high, mid)
        return (low + high) / 2

    return quantile(ALPHA / 2), quantile(1 - ALPHA / 2)


def _wilson(x: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    p = x / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * np.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return centre - half, centre + half


def newcombe(n: int, both: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's method 10 from the full table: ``both`` pairs positive on both sides, ``a`` on a only, ``b`` on b only."""
    neither = n - both - a - b
    x1, x2 = both + a, both + b
    p1, p2 = x1 / n, x2 / n
    l1, u1 = _wilson(x1, n)
    l2, u2 = _wilson(x2, n)
    cross = both * neither - a * b
    product = x1 * (n - x1) * x2 * (n - x2)
    numerator = np.where(cross > n / 2, cross - n / 2, np.where(cross >= 0, 0.0, cross))
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(product > 0, numerator / np.sqrt(np.where(product > 0, product, 1.0)), 0.0)
    d = p1 - p2
    low = d - np.sqrt(np.maximum((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2), 0.0))
    high = d + np.sqrt(np.maximum((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1), 0.0))
    return low, high


DIFFERENCE_INTERVALS: dict[str, Interval] = {
    "score": score,
    "bonett-price": bonett_price,
    "agresti-min": agresti_min,
    "wald-t": wald_t,
    "likelihood-ratio": likelihood_ratio,
    "jeffreys": jeffreys,
}
UNCONDITIONAL = ("exact-uncond", "midp-uncond")
NAMES = (*DIFFERENCE_INTERVALS, "newcombe", *UNCONDITIONAL)


@dataclass(frozen=True)
class Cell:
    """One true design: ``n`` labelled pairs, the shares ``p+`` (a only), ``p-`` (b only) and ``p11`` (both)."""

    n: int
    plus: float
    minus: float
    both: float = 0.0

    @property
    def gap(self) -> float:
        return self.plus - self.minus


def _cap(n: int, share: float) -> int:
    """Counts above this have negligible probability (under 1e-12) at a share up to ``share``."""
    mean = n * share
    return min(n, math.ceil(mean + 9 * math.sqrt(mean + 1) + 6))


class Evaluator:
    """Each difference-only interval's ends over every outcome at ``n``, computed once per ``n``."""

    def __init__(self, max_share: float) -> None:
        self.max_share = max_share
        self._cache: dict[tuple[str, int], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}

    def ends(self, name: str, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        key = (name, n)
        if key not in self._cache:
            a, b = _outcomes(n, _cap(n, self.max_share))
            low, high = DIFFERENCE_INTERVALS[name](n, a, b)
            self._cache[key] = (a, b, low, high)
        return self._cache[key]

    def coverage(self, name: str, cell: Cell) -> tuple[float, float]:
        """Exact coverage of the true gap and mean width (midp-uncond: width NaN)."""
        if name == "newcombe":
            return _newcombe_coverage(cell, self.max_share)
        if name in UNCONDITIONAL:
            return _unconditional_coverage(cell, mid=name == "midp-uncond"), float("nan")
        a, b, low, high = self.ends(name, cell.n)
        p = np.exp(_log_pmf(cell.n, (a, b), (cell.plus, cell.minus)))
        hit = (low <= cell.gap + 1e-12) & (cell.gap - 1e-12 <= high)
        return float(np.sum(p * hit)), float(np.sum(p * (high - low)))


def _newcombe_coverage(cell: Cell, max_share: float) -> tuple[float, float]:
    cap = _cap(cell.n, max_share)
    both_cap = _cap(cell.n, cell.both) if cell.both > 0 else 0
    grid = np.meshgrid(np.arange(both_cap + 1), np.arange(cap + 1), np.arange(cap + 1), indexing="ij")
    both, a, b = (g.ravel().astype(float) for g in grid)
    keep = both + a + b <= cell.n
    both, a, b = both[keep], a[keep], b[keep]
    p = np.exp(_log_pmf(cell.n, (both, a, b), (cell.both, cell.plus, cell.minus)))
    low, high = newcombe(cell.n, both, a, b)
    hit = (low <= cell.gap + 1e-12) & (cell.gap - 1e-12 <= high)
    return float(np.sum(p * hit)), float(np.sum(p * (high - low)))


def _unconditional_coverage(cell: Cell, *, mid: bool, nuisance_points: int = 200) -> float:
    """P(the exact unconditional test at the true gap accepts; ``mid``: its mid-p version), over every outcome (no cap).

    The test orders the outcomes by Tango's statistic at the true gap; each one-sided p is the largest over the
    nuisance share ``p-`` (``nuisance_points`` evenly spaced, and the true one) of ``P(T > t) + P(T = t)`` (exact,
    Sidik 2003) or ``P(T > t) + P(T = t) / 2`` (mid-p); both at least ``alpha / 2`` to accept.
    """
    tie_weight = 0.5 if mid else 1.0
    n, delta = cell.n, cell.gap
    a, b = _outcomes(n, n)
    stat = tango_z(n, a, b, delta)
    order = np.argsort(stat, kind="stable")
    sorted_stat = stat[order]
    q_low, q_high = max(0.0, -delta), (1 - delta) / 2
    qs = np.linspace(q_low, q_high, nuisance_points + 2)[1:-1]
    qs = np.unique(np.r_[qs, cell.minus])
    # tie groups in the ordering (equal statistics up to rounding)
    rounded = np.round(sorted_stat, 9)
    starts = np.r_[0, np.flatnonzero(np.diff(rounded)) + 1]
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, rounded.size]))
    upper = np.zeros(a.size)
    lower = np.zeros(a.size)
    for q in qs:
        pmf = np.exp(_log_pmf(n, (a, b), (q + delta, q)))[order]
        group_mass = np.bincount(group, weights=pmf)
        below = np.cumsum(group_mass) - group_mass  # P(T < t), group by group
        above = group_mass.sum() - below - group_mass  # P(T > t)
        upper = np.maximum(upper, (above + tie_weight * group_mass)[group])  # P(T >= t): a large t rejects delta
        lower = np.maximum(lower, (below + tie_weight * group_mass)[group])
    accept = np.empty(a.size, dtype=bool)
    accept[order] = (upper > ALPHA / 2) & (lower > ALPHA / 2)
    p_true = np.exp(_log_pmf(n, (a, b), (cell.plus, cell.minus)))
    return float(np.sum(p_true * accept))


def rare_cells() -> list[Cell]:
    """bench/ppi.py's rare design: its six cells (side a's answers independent of side b's)."""
    cells = []
    for p_b in RARE_P_B:
        y_b = p_b + (1 - p_b) * RARE_HIDDEN
        for n in RARE_LABELS:
            cells.append(Cell(n, RARE_P_A * (1 - y_b), (1 - RARE_P_A) * y_b, RARE_P_A * y_b))
    return cells


def grid_cells(labels: tuple[int, ...]) -> list[Cell]:
    return [Cell(n, plus, minus) for n in labels for plus in GRID_SHARES for minus in GRID_SHARES]


#: A published example (Cavo et al. 2012 in Fagerland, Lydersen and Laake, *Statistical Analysis of Contingency Tables*,
#: ch. 8; the R package contingencytables' tests): the paired table 59, 6 / 16, 80 and its 95% intervals.
REFERENCE_TABLE = (59, 6, 16, 80)
REFERENCE = {
    "score": (-0.1240, -0.0054),
    "bonett-price": (-0.1195, -0.0032),
    "agresti-min": (-0.1182, -0.0045),
    "newcombe": (-0.1186, -0.0046),
}


def check_references() -> float:
    """The largest difference (4 decimals) between these intervals and :data:`REFERENCE`'s published ones."""
    both, plus, minus, neither = REFERENCE_TABLE
    n = both + plus + minus + neither
    a, b = np.array([float(plus)]), np.array([float(minus)])
    worst = 0.0
    for name, (low, high) in REFERENCE.items():
        ends = newcombe(n, np.array([float(both)]), a, b) if name == "newcombe" else DIFFERENCE_INTERVALS[name](n, a, b)
        worst = max(worst, abs(round(float(ends[0][0]), 4) - low), abs(round(float(ends[1][0]), 4) - high))
    return worst


def check_score_against_library(n: int = 50) -> float:
    """The largest difference between this closed form and fairtalk.stats.score_interval over outcomes at ``n``."""
    from fairtalk.stats import score_interval

    a, b = _outcomes(n, 12)
    low, high = score(n, a, b)
    worst = 0.0
    for i in range(a.size):
        d = np.r_[np.ones(int(a[i])), -np.ones(int(b[i])), np.zeros(n - int(a[i] + b[i]))]
        lib = score_interval(d, alpha=ALPHA, support=(-1.0, 0.0, 1.0))
        assert lib[0] is not None and lib[1] is not None
        worst = max(worst, abs(lib[0] - low[i]), abs(lib[1] - high[i]))
    return worst


def main() -> None:
    from _machine import machine  # bench/ is first on sys.path when run as a script (not when a test loads this file)

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid-labels", type=int, nargs="+", default=list(GRID_LABELS))
    parser.add_argument("--no-exact", action="store_true", help="leave out the exact unconditional tests (slow)")
    args = parser.parse_args()
    started = time.perf_counter()
    names = [name for name in NAMES if not (args.no_exact and name in UNCONDITIONAL)]
    print(machine())
    print(f"closed-form Tango against fairtalk.stats.score_interval, n=50: max |difference| {check_score_against_library():.1e}")
    print(f"against the published intervals of one table (Cavo et al. 2012): max |difference| {check_references():.4f}")
    evaluator = Evaluator(max(GRID_SHARES))
    print("\n| interval | " + " | ".join(f"{c.gap:+.3f}, {c.n}" for c in rare_cells()) + " | in 0.93-0.97 |")
    print("|---|" + "---|" * (len(rare_cells()) + 1))
    fits: dict[str, bool] = {}
    for name in names:
        results = [evaluator.coverage(name, cell) for cell in rare_cells()]
        inside = all(BAND[0] <= cov <= BAND[1] for cov, _ in results)
        fits[name] = inside
        cells = " | ".join(f"{cov:.3f}" + ("" if math.isnan(width) else f" ({width:.3f})") for cov, width in results)
        print(f"| {name} | {cells} | {'yes' if inside else 'no'} |")
    print("\n| interval | grid minimum | at (n, p+, p-) | grid mean coverage | mean width | below 0.93 | above 0.97 |")
    print("|---|---|---|---|---|---|---|")
    cells = grid_cells(tuple(args.grid_labels))
    minimum: dict[str, float] = {}
    for name in names:
        results = [evaluator.coverage(name, cell) for cell in cells]
        covs = np.array([cov for cov, _ in results])
        widths = np.array([width for _, width in results])
        worst = int(np.argmin(covs))
        minimum[name] = float(covs[worst])
        at = cells[worst]
        width = "n/a" if np.isnan(widths).all() else f"{widths.mean():.4f}"
        print(
            f"| {name} | {covs[worst]:.3f} | ({at.n}, {at.plus:.3f}, {at.minus:.3f}) | {covs.mean():.4f} | {width} | "
            f"{int(np.sum(covs < BAND[0]))} | {int(np.sum(covs > BAND[1]))} |"
        )
    print(f"\ngrid: {len(cells)} cells (labels {args.grid_labels}; shares {list(GRID_SHARES)} each way)")
    floor = round(minimum["score"], 3)
    for name in names:
        holds = round(minimum[name], 3) >= floor
        verdict = "fits both" if fits[name] and holds else "does not fit"
        print(
            f"{name}: six rare cells in {BAND[0]}-{BAND[1]}: {fits[name]}; grid minimum >= the score interval's {floor:.3f}: {holds}: {verdict}"
        )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
