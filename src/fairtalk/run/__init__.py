"""Running the stages: :func:`score` (responses -> result), :func:`audit` (corpus -> pairs -> responses -> results).

Wiring only: ``_generate.py`` sends both sides of every pair through a cached model
(:func:`respond`), ``_score.py`` scores responses and hands them to :mod:`fairtalk.inference`,
``_axis.py`` and ``_audit.py`` run an audit per axis, ``_sequential.py`` adds pairs look by look
(``until_decided``), ``_similarity_test.py`` is the counterfactual similarity test.
"""

from __future__ import annotations

from fairtalk.run._audit import DEFAULT_AXES, DEFAULT_CORPUS, DEFAULT_N_PAIRS, audit, load_axes, run_axes
from fairtalk.run._generate import DEFAULT_MODELS, Generation, default_model, item_seed, respond
from fairtalk.run._measures import build_measures
from fairtalk.run._score import MASK_TOKEN, audit_score_options, check_score_options, score
from fairtalk.run._similarity_test import similarity_test

__all__ = [
    "DEFAULT_AXES",
    "DEFAULT_CORPUS",
    "DEFAULT_MODELS",
    "DEFAULT_N_PAIRS",
    "Generation",
    "MASK_TOKEN",
    "audit",
    "audit_score_options",
    "build_measures",
    "check_score_options",
    "default_model",
    "item_seed",
    "load_axes",
    "respond",
    "run_axes",
    "score",
    "similarity_test",
]
