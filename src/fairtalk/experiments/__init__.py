"""Reproducing the papers: :func:`reproduce_debias` (paper 001's Table 7) and :func:`reproduce_planted` (a bias of known size)."""

from __future__ import annotations

from fairtalk.experiments._reproduce import reproduce_debias
from fairtalk.experiments._reproduce_planted import PLANTED_CONFIGS, reproduce_planted

__all__ = [
    "PLANTED_CONFIGS",
    "reproduce_debias",
    "reproduce_planted",
]
