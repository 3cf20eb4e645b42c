"""Wiring the stages together: ``score()`` (responses -> results) and ``audit()`` (corpus -> pairs -> responses -> results).

This package is the only place that joins stages: ``_score.py`` scores responses to
parallel pairs; ``_generate.py`` sends both sides of every pair through a cached model;
``_run.py`` runs the whole audit per axis.
"""

from __future__ import annotations

from fairtalk.audit._score import CORRECTIONS, MASK_TOKEN, MAX_PERMUTATIONS, score

__all__ = ["CORRECTIONS", "MASK_TOKEN", "MAX_PERMUTATIONS", "score"]
