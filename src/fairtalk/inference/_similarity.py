"""The counterfactual similarity test's rows: per method the paired test against the baseline, Holm over the methods, the verdicts.

:func:`fairtalk.similarity_test` (:mod:`fairtalk.run._similarity_test`) has the answers and their
per-pair divergences ``1 - similarity``: the counterfactual pairs' and the no-effect baseline's.
:func:`similarity_rows` decides, once, what they show. Per method the divergences are compared
by the paired mean test and t interval of :mod:`fairtalk.stats` (dialogues as units when given);
the p-values are corrected over the methods (Holm) whose divergence differs from the baseline's
on some pair (as the audit leaves out the keys where every pair scores the same). A row counts
as a difference only when the test and its interval agree: the adjusted p below ``alpha`` *and*
0 outside the 95% interval (when there is one). The test is the exact sign-flip test when few
units differ and the interval a t interval, so they can disagree on skewed or sparse
differences; such a row says so (:attr:`Verdict.DISAGREE` and a ``note``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from fairtalk.results import SimilarityRow, Verdict
from fairtalk.stats import adjust_pvalues, difference_interval, paired_test

__all__ = ["similarity_rows"]

_NOTE_NO_VARIATION = "every pair's divergence equals its baseline's: not tested, and left out of the Holm family"
_NOTE_TEST_ONLY = "the paired test rejects (adjusted p {p:.3g}) but its 95% interval includes 0: not counted as a difference"
_NOTE_INTERVAL_ONLY = (
    "the 95% interval excludes 0 but the paired test does not reject (adjusted p {p}): not counted as a difference"
)


def similarity_rows(
    counterfactual: Mapping[str, np.ndarray],
    baseline: Mapping[str, np.ndarray],
    *,
    alpha: float,
    units: Sequence[str] | None = None,
) -> tuple[SimilarityRow, ...]:
    """One :class:`SimilarityRow` per method of ``counterfactual``, in its order: the test against ``baseline`` and its verdict.

    ``counterfactual[method]`` and ``baseline[method]`` are the per-pair divergences (the same
    pairs, in the same order); ``units`` names each pair's dialogue when they are the test's units.

    Examples
    --------
    >>> cf = {"exact": np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]), "length_ratio": np.zeros(6)}
    >>> rows = similarity_rows(cf, {m: np.zeros(6) for m in cf}, alpha=0.05)
    >>> [(r.method, r.verdict.value) for r in rows]
    [('exact', 'difference detected'), ('length_ratio', 'inconclusive')]
    """
    methods = list(counterfactual)
    tests = {m: _compare(counterfactual[m], baseline[m], units) for m in methods}
    # as the audit's family: a method whose every pair's divergence equals its baseline's tests nothing and is left out
    varies = {m: bool(np.any(counterfactual[m] != baseline[m])) for m in methods}
    in_family = [np.nan if t[2] is None or not varies[m] else t[2] for m, t in tests.items()]
    adjusted = adjust_pvalues(np.array(in_family), method="holm")
    out = []
    for (method, (test, interval, p, note)), p_adj in zip(tests.items(), adjusted):
        p_adjusted = None if np.isnan(p_adj) else float(p_adj)
        note = note if varies[method] else "; ".join(n for n in (_NOTE_NO_VARIATION, note) if n)
        verdict, disagreement = _verdict(p_adjusted, interval, alpha)
        out.append(
            SimilarityRow(
                method=method,
                n_pairs=len(counterfactual[method]),
                counterfactual=float(np.mean(counterfactual[method])),
                baseline=float(np.mean(baseline[method])),
                difference=float(np.mean(counterfactual[method] - baseline[method])),
                ci95=interval,
                test=test,
                p=p,
                p_adjusted=p_adjusted,
                verdict=verdict,
                note="; ".join(n for n in (disagreement, note) if n) or None,
            )
        )
    return tuple(out)


def _verdict(p_adjusted: float | None, interval: tuple[float | None, float | None], alpha: float) -> tuple[Verdict, str | None]:
    """``(verdict, note)``: a difference only when the test rejects and the interval (if any) excludes 0."""
    rejects = p_adjusted is not None and p_adjusted < alpha
    low, high = interval
    if low is None or high is None or rejects == (not low <= 0.0 <= high):
        return Verdict.DIFFERENT if rejects else Verdict.INCONCLUSIVE, None
    if rejects:
        return Verdict.DISAGREE, _NOTE_TEST_ONLY.format(p=p_adjusted)
    return Verdict.DISAGREE, _NOTE_INTERVAL_ONLY.format(p="n/a" if p_adjusted is None else f"{p_adjusted:.3g}")


def _compare(
    cf: np.ndarray, bl: np.ndarray, units: Sequence[str] | None
) -> tuple[str, tuple[float | None, float | None], float | None, str | None]:
    """The paired mean test and t interval of counterfactual - baseline divergence."""
    test = paired_test(cf, bl, kind="count", clusters=units)
    interval = difference_interval(cf, bl, kind="count", clusters=units)
    return test.name, (interval.low, interval.high), test.p, test.note or interval.note
