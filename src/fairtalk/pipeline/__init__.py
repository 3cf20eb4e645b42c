"""Wiring the stages together: ``score()`` (responses -> results) and ``audit()`` (corpus -> pairs -> responses -> results).

This package is the only place that joins stages: ``_options.py`` and ``_config.py`` hold
the validated options (``ScoreOptions``, ``AuditConfig``); ``_score.py`` scores responses to
parallel pairs; ``_generate.py`` sends both sides of every pair through a cached model
(``respond()``, generation alone); ``_run.py`` runs the whole audit per axis; ``_compare.py``
compares two audits of the same pairs (``compare_runs()``: per key, the change in gap);
``_reproduce.py`` and ``_reproduce_planted.py`` run the debiasing experiment and the planted-bias check.
"""

from __future__ import annotations

from fairtalk.compare import compare_prompt_analyses, compare_runs, is_prompt_analysis
from fairtalk.config import CORRECTIONS, AuditConfig, ScoreOptions
from fairtalk.experiments import PLANTED_CONFIGS, reproduce_debias, reproduce_planted
from fairtalk.inference import MAX_PERMUTATIONS
from fairtalk.run import (
    DEFAULT_AXES,
    DEFAULT_CORPUS,
    DEFAULT_MODELS,
    DEFAULT_N_PAIRS,
    MASK_TOKEN,
    Generation,
    audit,
    default_model,
    item_seed,
    respond,
    score,
    similarity_test,
)

__all__ = [
    "CORRECTIONS",
    "DEFAULT_AXES",
    "DEFAULT_CORPUS",
    "DEFAULT_MODELS",
    "DEFAULT_N_PAIRS",
    "MASK_TOKEN",
    "MAX_PERMUTATIONS",
    "PLANTED_CONFIGS",
    "AuditConfig",
    "Generation",
    "ScoreOptions",
    "audit",
    "compare_prompt_analyses",
    "compare_runs",
    "default_model",
    "is_prompt_analysis",
    "item_seed",
    "reproduce_debias",
    "reproduce_planted",
    "respond",
    "score",
    "similarity_test",
]
