"""The frozen result objects of fairtalk: built once, with ``to_dict()`` (the JSON schemas) and ``to_frame()``.

- ``AuditResult``: one axis scored (per measure a ``MeasureResult``, plus divergent pairs);
- ``AuditRun``: a whole audit (per axis an ``AxisRun``: result, coverage, generation counts,
  pairs and responses);
- ``DebiasComparison``: baseline and debiased models audited on the same pairs.
"""

from __future__ import annotations

from fairtalk.results._audit import (
    AuditResult,
    DivergentPair,
    JudgeAnswer,
    MaskedComparison,
    MeasureResult,
    ScorerCheck,
)
from fairtalk.results._debias import ComparedModel, DebiasComparison
from fairtalk.results._run import (
    RESERVED_NAMES,
    AuditRun,
    AxisRun,
    GenerationSummary,
    axis_folder,
    check_axis_folders,
)
from fairtalk.results._similarity import (
    VERDICT_DIFFERS,
    VERDICT_DISAGREE,
    VERDICT_NOT_SHOWN,
    SimilarityResult,
    SimilarityRow,
)

__all__ = [
    "RESERVED_NAMES",
    "VERDICT_DIFFERS",
    "VERDICT_DISAGREE",
    "VERDICT_NOT_SHOWN",
    "AuditResult",
    "ScorerCheck",
    "AuditRun",
    "AxisRun",
    "ComparedModel",
    "DebiasComparison",
    "DivergentPair",
    "GenerationSummary",
    "JudgeAnswer",
    "MaskedComparison",
    "MeasureResult",
    "SimilarityResult",
    "SimilarityRow",
    "axis_folder",
    "check_axis_folders",
]
