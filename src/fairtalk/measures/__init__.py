"""Measures of paper 001 §2.4 (diversity, offense, sentiment, attribute words) plus length and refusal.

Each measure subclasses :class:`Measure` and maps response texts to per-response scores
(``kind`` ``"rate"`` or ``"count"``), or, for diversity, subclasses :class:`CorpusMeasure` and
prepares a corpus-level statistic (``kind`` ``"corpus"``). Build them by name with
:func:`get_measure` (explicit options) or :func:`build_measure` (a :class:`MeasureOptions`, as
``score()`` does), or the default suite of an axis with :func:`default_measures`;
score with :func:`score_unique` to score each distinct response once. Scorer packages
(vaderSentiment, alt-profanity-check, simplemma, transformers) load on first use.
"""

from __future__ import annotations

from fairtalk.measures._text import dedupe, preprocess, tokenize
from fairtalk.measures.attribute_words import AttributeWords
from fairtalk.measures.base import AnyMeasure, CorpusMeasure, CorpusStatistic, Measure, MeasureKind
from fairtalk.measures.diversity import DistinctStatistic, Diversity
from fairtalk.measures.length import Length
from fairtalk.measures.offense import Offense
from fairtalk.measures.refusal import REFUSAL_PATTERNS, Refusal
from fairtalk.measures.registry import (
    MEASURE_OPTIONS,
    MEASURES,
    MeasureOptions,
    build_measure,
    check_measure_names,
    default_measures,
    get_measure,
    measure_names,
    register_measure,
)
from fairtalk.measures.scoring import score_unique
from fairtalk.measures.sentiment import Sentiment

__all__ = [
    "MEASURES",
    "MEASURE_OPTIONS",
    "REFUSAL_PATTERNS",
    "AnyMeasure",
    "AttributeWords",
    "CorpusMeasure",
    "CorpusStatistic",
    "DistinctStatistic",
    "Diversity",
    "Length",
    "Measure",
    "MeasureKind",
    "MeasureOptions",
    "Offense",
    "Refusal",
    "Sentiment",
    "build_measure",
    "check_measure_names",
    "dedupe",
    "default_measures",
    "get_measure",
    "measure_names",
    "preprocess",
    "register_measure",
    "score_unique",
    "tokenize",
]
