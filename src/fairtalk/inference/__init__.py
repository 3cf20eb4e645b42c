"""The statistical policy over :mod:`fairtalk.stats`: which test for which measure, the correction, the verdicts.

Pure functions over arrays and records: the paired test, interval, equivalence and power of one
result key (``_measure_tests.py``), the multiple-testing family (``_family.py``), the scorer check
(``_scorer_check.py``), labels by prediction-powered inference (``_gold.py``), bias over turns
(``_by_turn.py``), answers cut at the token limit (``_truncation.py``), the counterfactual
similarity test's rows (``_similarity.py``) and the verdicts of paper 004's group pairs
(``_prompt_pairs.py``).
"""

from __future__ import annotations

from fairtalk.inference._by_turn import by_turn, check_multi_turn
from fairtalk.inference._family import KeyScores, Scored, adjust_family, correct_families, finalize
from fairtalk.inference._gold import GoldEstimates, OtherAnswersError, check_gold, gold_estimates
from fairtalk.inference._measure_tests import (
    METHODS,
    Inference,
    KeyMeta,
    KeyTest,
    check_finite,
    compare_scored,
    complete_means,
    corpus_margin,
    corpus_row,
    corpus_rows,
)
from fairtalk.inference._prompt_pairs import pair_verdicts
from fairtalk.inference._scorer_check import PROBES, certify, check_scorers, probe_pairs
from fairtalk.inference._similarity import similarity_rows
from fairtalk.inference._truncation import check_truncation, token_limit_rows
from fairtalk.stats import MAX_PERMUTATIONS

__all__ = [
    "PROBES",
    "probe_pairs",
    "GoldEstimates",
    "Inference",
    "KeyMeta",
    "KeyScores",
    "KeyTest",
    "MAX_PERMUTATIONS",
    "METHODS",
    "OtherAnswersError",
    "Scored",
    "adjust_family",
    "correct_families",
    "by_turn",
    "certify",
    "check_scorers",
    "check_finite",
    "check_gold",
    "check_multi_turn",
    "check_truncation",
    "compare_scored",
    "complete_means",
    "corpus_margin",
    "corpus_row",
    "corpus_rows",
    "finalize",
    "gold_estimates",
    "pair_verdicts",
    "similarity_rows",
    "token_limit_rows",
]
