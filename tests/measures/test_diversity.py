"""Tests for measures/_diversity.py: distinct-n under both definitions, with resampling weights."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from fairtalk.errors import SpecError
from fairtalk.measures import CorpusMeasure, Diversity

# "the cat sat" / "the cat ran" / "the dog!!": 8 words, 6 bigrams.
# unigrams: the cat sat ran dog -> 5 distinct; bigrams: the-cat cat-sat cat-ran the-dog -> 4 distinct.
TEXTS = ["The cat sat.", "the cat ran", "the dog!!"]


def test_paper_definition_divides_both_counts_by_total_words() -> None:
    result = Diversity().compute(TEXTS)
    assert result["distinct_1"] == pytest.approx(5 / 8)
    assert result["distinct_2"] == pytest.approx(4 / 8)
    assert result["diversity"] == pytest.approx((5 / 8 + 4 / 8) / 2)


def test_standard_definition_divides_by_number_of_ngrams() -> None:
    result = Diversity(definition="standard").compute(TEXTS)
    assert result["distinct_1"] == pytest.approx(5 / 8)
    assert result["distinct_2"] == pytest.approx(4 / 5)  # 2 + 2 + 1 bigrams
    assert result["diversity"] == pytest.approx((5 / 8 + 4 / 5) / 2)


def test_bigrams_do_not_cross_response_boundaries() -> None:
    # "a b" + "c" would give the bigram b-c if joined; only a-b exists.
    assert Diversity().compute(["a b", "c"])["distinct_2"] == pytest.approx(1 / 3)


def test_weights_are_multiplicities_of_a_resample() -> None:
    stat = Diversity().prepare(TEXTS)
    # text 0 twice, text 2 once, text 1 absent: words 3+3+2 = 8; unigrams the cat sat dog = 4;
    # bigrams the-cat cat-sat the-dog = 3.
    result = stat(np.array([2, 0, 1]))
    assert result["distinct_1"] == pytest.approx(4 / 8)
    assert result["distinct_2"] == pytest.approx(3 / 8)
    standard = Diversity(definition="standard").prepare(TEXTS)(np.array([2, 0, 1]))
    assert standard["distinct_2"] == pytest.approx(3 / 5)  # 2 + 2 + 1 bigrams
    # all-ones weights equal the plain computation
    assert stat(np.ones(3)) == pytest.approx(Diversity().compute(TEXTS))


def test_repeated_texts_count_their_words_each_time() -> None:
    result = Diversity().compute(["a b", "a b", "a b"])
    assert result["distinct_1"] == pytest.approx(2 / 6)
    assert result["distinct_2"] == pytest.approx(1 / 6)
    stat = Diversity().prepare(["a b", "a b", "c"])
    assert stat(np.array([0, 3, 0]))["distinct_1"] == pytest.approx(2 / 6)


@pytest.mark.parametrize("n_words", [8, 400])  # mostly shared n-grams / mostly n-grams of one text
def test_matches_a_brute_force_count_on_random_resamples(n_words: int) -> None:
    rng = np.random.default_rng(n_words)
    vocabulary = [f"w{i}" for i in range(n_words)]
    texts = [" ".join(rng.choice(vocabulary, size=rng.integers(0, 6))) for _ in range(60)]
    texts += texts[:20]  # repeats
    for definition in ("paper", "standard"):
        stat = Diversity(definition=definition).prepare(texts)
        for _ in range(20):
            weights = rng.multinomial(len(texts), np.full(len(texts), 1 / len(texts)))
            tokens = [t.split() for t, w in zip(texts, weights) for _ in range(w)]
            n_words = sum(len(t) for t in tokens)
            unigrams = {w for t in tokens for w in t}
            bigrams = {b for t in tokens for b in pairwise(t)}
            n_bigrams = sum(max(len(t) - 1, 0) for t in tokens)
            total_2 = n_words if definition == "paper" else n_bigrams
            result = stat(weights)
            assert result["distinct_1"] == pytest.approx(len(unigrams) / n_words)
            assert result["distinct_2"] == pytest.approx(len(bigrams) / total_2)


def test_empty_corpus_and_zero_words_give_zero() -> None:
    zero = {"distinct_1": 0.0, "distinct_2": 0.0, "diversity": 0.0}
    assert Diversity().compute([]) == zero
    assert Diversity().compute(["", "!!!"]) == zero
    assert Diversity().prepare(TEXTS)(np.zeros(3)) == zero
    single = Diversity(definition="standard").compute(["hello"])  # words but no bigrams
    assert single == {"distinct_1": 1.0, "distinct_2": 0.0, "diversity": 0.5}


def test_protocol_fields_definition_and_validation() -> None:
    diversity = Diversity(definition="standard")
    assert isinstance(diversity, CorpusMeasure)
    assert diversity.kind == "corpus" and diversity.keys == ("distinct_1", "distinct_2", "diversity")
    assert all(diversity.higher_is_better.values())
    assert diversity.definition == "standard" and diversity.config["definition"] == "standard"
    assert diversity.prepare(TEXTS).definition == "standard"
    with pytest.raises(SpecError, match="unknown distinct definition 'papr'; did you mean 'paper'"):
        Diversity(definition="papr")
    with pytest.raises(ValueError, match="weights must have shape"):
        Diversity().prepare(TEXTS)(np.ones(2))
