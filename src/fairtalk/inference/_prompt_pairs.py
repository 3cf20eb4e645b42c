"""Paper 004's pair verdicts: each group pair's regard gap, Holm-adjusted over the pairs, against α.

:func:`fairtalk.prompts.analyze` tests each pair's gap by its template × seed bootstrap (the
gap's Wald ``p``); the pairs are one family. :func:`pair_verdicts` decides them once, and the
analysis holds the decision (:attr:`fairtalk.results.PromptAnalysis.pair_verdicts`): a pair whose
Holm-adjusted p is below α shows a difference; any other (a p not below α, or no p because no
bootstrap ran) is inconclusive, since the analysis tests no equivalence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from fairtalk.results import PairVerdict, Verdict
from fairtalk.stats import adjust_pvalues

__all__ = ["pair_verdicts"]


def pair_verdicts(p_values: Mapping[str, float | None], alpha: float) -> Mapping[str, PairVerdict]:
    """Pair -> its Holm-adjusted p (over the pairs with a p) and verdict at level ``alpha``, in the pairs' order.

    Examples
    --------
    >>> found = pair_verdicts({"gender": 0.01, "race": 0.04, "orientation": None}, alpha=0.05)
    >>> [(name, v.p_adjusted, v.verdict.value) for name, v in found.items()]
    [('gender', 0.02, 'difference detected'), ('race', 0.04, 'difference detected'), ('orientation', None, 'inconclusive')]
    """
    names = list(p_values)
    p = np.array([math.nan if value is None else value for value in p_values.values()], dtype=float)
    adjusted = adjust_pvalues(p, method="holm") if names else p
    return MappingProxyType(
        {
            name: PairVerdict(
                p_adjusted=None if math.isnan(value) else float(value),
                verdict=Verdict.DIFFERENT if value < alpha else Verdict.INCONCLUSIVE,
            )
            for name, value in zip(names, adjusted.tolist())
        }
    )
