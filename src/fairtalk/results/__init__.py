"""The frozen result objects of fairtalk: built once, each a :class:`Result` with the same nouns and verbs.

Every result answers ``verdicts`` (key -> :class:`Verdict`), ``detected()``, ``to_frame()``,
``to_dict()``/``from_dict()``, ``write(path)`` and ``read_json(path)`` (:mod:`._protocol`):

- ``AuditResult``: one axis scored (per measure a ``MeasureResult``, holding the key's ``TestedKey``
  as inference built it, plus divergent pairs);
- ``AuditRun``: a whole audit (per axis an ``AxisRun``: result, coverage, generation counts,
  pairs and responses);
- ``SimilarityResult``: the counterfactual similarity test against its no-effect baseline;
- ``DebiasComparison``: baseline and debiased models audited on the same pairs;
- ``ModelComparison``: a baseline and a candidate model compared, per key the change in gap;
- ``PromptAnalysis``: paper 004's analysis of labelled completions (per group pair a ``PairVerdict``);
- ``ByTurnResult``: a multi-turn audit's gaps by the turns since the identity appeared;
- ``PlantedRecovery``: planted gaps of known size set beside what the audit recovered;
- ``Provenance``: where an ``AuditResult`` came from (versions, hashes, settings, seeds), typed.

Every result file carries ``"schema_version": SCHEMA_VERSION`` (:func:`versioned` puts it
first), and every reader of one goes through :func:`read_result_file`.
"""

from __future__ import annotations

from fairtalk.results._audit import (
    NOTE_NO_VARIATION,
    AuditResult,
    DivergentPair,
    JudgeAnswer,
    MaskedComparison,
    MeasureResult,
    PairLosses,
    ScorerCheck,
    TestedKey,
)
from fairtalk.results._by_turn import BY_TURN_COLUMNS, ByTurnResult, TurnBucket, TurnGap
from fairtalk.results._debias import ComparedModel, DebiasComparison
from fairtalk.results._model_comparison import KIND as COMPARISON_KIND
from fairtalk.results._model_comparison import Change, ComparedAxis, GapChange, ModelComparison
from fairtalk.results._planted import DebiasedGap, PlantedGap, PlantedRecovery, RankerPool
from fairtalk.results._prompt_analysis import PairVerdict, PromptAnalysis
from fairtalk.results._protocol import Result, Verdict
from fairtalk.results._provenance import (
    AuditProvenance,
    GoldProvenance,
    InputProvenance,
    LexiconProvenance,
    MeasureProvenance,
    Provenance,
    ScoringEngine,
    ScoringSettings,
    SequentialProvenance,
    ServedProvenance,
    SourceRecord,
    TruncationProvenance,
    is_requested_model,
)
from fairtalk.results._run import (
    RESERVED_NAMES,
    AuditRun,
    AxisRun,
    GenerationSummary,
    axis_folder,
    check_axis_folders,
)
from fairtalk.results._schema import SCHEMA_VERSION, read_result_file, versioned
from fairtalk.results._similarity_test import SimilarityResult, SimilarityRow

__all__ = [
    "COMPARISON_KIND",
    "NOTE_NO_VARIATION",
    "RankerPool",
    "BY_TURN_COLUMNS",
    "RESERVED_NAMES",
    "SCHEMA_VERSION",
    "AuditProvenance",
    "AuditResult",
    "AuditRun",
    "AxisRun",
    "ByTurnResult",
    "Change",
    "ComparedAxis",
    "ComparedModel",
    "DebiasComparison",
    "DebiasedGap",
    "DivergentPair",
    "PairLosses",
    "PairVerdict",
    "GapChange",
    "GenerationSummary",
    "GoldProvenance",
    "InputProvenance",
    "JudgeAnswer",
    "LexiconProvenance",
    "MaskedComparison",
    "MeasureProvenance",
    "MeasureResult",
    "ModelComparison",
    "PlantedGap",
    "PlantedRecovery",
    "PromptAnalysis",
    "Provenance",
    "Result",
    "ScorerCheck",
    "ScoringEngine",
    "ScoringSettings",
    "SequentialProvenance",
    "ServedProvenance",
    "SimilarityResult",
    "SimilarityRow",
    "SourceRecord",
    "TestedKey",
    "TurnBucket",
    "TurnGap",
    "TruncationProvenance",
    "Verdict",
    "axis_folder",
    "check_axis_folders",
    "is_requested_model",
    "read_result_file",
    "versioned",
]
