"""The entry names of earlier versions, kept in one place: each lives in the package of its concept.

``score()``, ``audit()``, ``respond()`` and ``similarity_test()`` run the stages (:mod:`fairtalk.run`);
``ScoreOptions`` and ``AuditConfig`` are the options, declared once (:mod:`fairtalk.config`);
``compare_runs()`` compares two runs (:mod:`fairtalk.compare`); ``reproduce_debias()`` and
``reproduce_planted()`` reproduce the papers (:mod:`fairtalk.experiments`).
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
