"""Score()'s per-response measures as a build for :class:`~fairtalk.models.ray._scoring.RayScorer`.

Measures score each response on its own (the statistics come after, on the whole set), so a large
response set splits into batches of :attr:`~fairtalk.models.RayEngine.score_batch` distinct texts, each
scored by a Ray task. A task's worker builds the measures once from the recipe (their names and
the run's :class:`~fairtalk.measures.MeasureOptions`, or the measure objects themselves, sent by value). A judge (``judge:SPEC``)
stays in this process: it asks its own model, which scales on its own server; so do the corpus
measures, which need every response at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from fairtalk.measures import AnyMeasure, Judge, Measure, MeasureOptions

__all__ = ["measures_scorer", "remote_items"]


def measures_scorer(
    items: Sequence[str | AnyMeasure] | None, options: MeasureOptions
) -> Callable[[list[str]], dict[str, np.ndarray]]:
    """Build a recipe's per-response measures (corpus measures and judges are not sent) and score texts with all of them."""
    from fairtalk.measures import score_unique
    from fairtalk.run._measures import build_measures

    measures = [m for m in build_measures(items, options) if isinstance(m, Measure)]

    def scores(texts: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for measure in measures:
            out.update(score_unique(measure, texts))
        return out

    return scores


def remote_items(measures: Sequence[str | AnyMeasure] | None, built: Sequence[AnyMeasure]) -> tuple[str | AnyMeasure, ...] | None:
    """What the workers build: every measure name or object of score()'s list, less judges; None for the defaults."""
    if measures is None:
        return None
    local = {id(m) for m in built if isinstance(m, Judge)}
    return tuple(m for m in measures if not (isinstance(m, str) and m.startswith("judge:")) and id(m) not in local)
