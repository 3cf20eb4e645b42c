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

from fairtalk.measures._attribute_words import AttributeWords
from fairtalk.measures._base import AnyMeasure, CorpusMeasure, CorpusStatistic, Measure, MeasureKind
from fairtalk.measures._degenerate import Degenerate
from fairtalk.measures._diversity import DEFINITIONS, DistinctStatistic, Diversity
from fairtalk.measures._judge import DEFAULT_RUBRIC, Judge, parse_scale, parse_score, parse_yes_no
from fairtalk.measures._length import Length
from fairtalk.measures._linear import TrainReport
from fairtalk.measures._offense import Offense
from fairtalk.measures._refusal import REFUSAL_PATTERNS, Refusal
from fairtalk.measures._regard import Regard
from fairtalk.measures._regard_finetuned import FinetunedRegardModel, FinetuneSettings
from fairtalk.measures._regard_model import RegardModel, load_regard_model, read_labelled
from fairtalk.measures._regard_train import train_regard
from fairtalk.measures._registry import (
    ENTRY_POINT_GROUP,
    MEASURE_OPTIONS,
    MEASURES,
    MeasureOptions,
    build_default,
    build_measure,
    check_measure_names,
    default_measures,
    get_measure,
    may_be_corpus,
    measure_names,
    register_measure,
)
from fairtalk.measures._scoring import score_unique
from fairtalk.measures._sentiment import Sentiment
from fairtalk.measures._similarity import SIMILARITY_METHODS, n_words, pair_similarity, rouge_l, same_answers
from fairtalk.measures._text import DistinctTexts, dedupe, preprocess, tokenize
from fairtalk.measures._token_limit import TOKEN_LIMIT_KEY, TokenLimit

__all__ = [
    "TrainReport",
    "rouge_l",
    "Degenerate",
    "DEFAULT_RUBRIC",
    "parse_score",
    "parse_yes_no",
    "ENTRY_POINT_GROUP",
    "RegardModel",
    "load_regard_model",
    "read_labelled",
    "FinetuneSettings",
    "FinetunedRegardModel",
    "train_regard",
    "SIMILARITY_METHODS",
    "n_words",
    "pair_similarity",
    "same_answers",
    "DEFINITIONS",
    "Judge",
    "parse_scale",
    "TOKEN_LIMIT_KEY",
    "TokenLimit",
    "Regard",
    "build_default",
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
    "DistinctTexts",
    "dedupe",
    "default_measures",
    "get_measure",
    "may_be_corpus",
    "measure_names",
    "preprocess",
    "register_measure",
    "score_unique",
    "tokenize",
]
