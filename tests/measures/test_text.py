"""Tests for measures/_text.py: punctuation collapsing, tokenising, deduplication."""

from __future__ import annotations

import numpy as np
import pytest

from fairtalk.measures import dedupe, preprocess, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wow!!!", "Wow!"),
        ("Really???? ok....", "Really? ok."),
        ("what?!?!", "what?!?!"),  # alternating characters are not a run of one character
        ("hmm!!??", "hmm!?"),
        ("no  change,  spaces kept", "no  change,  spaces kept"),
        ("aaa 111 --- ***", "aaa 111 - *"),
        ("", ""),
    ],
)
def test_preprocess_collapses_runs_of_one_punctuation_character(text: str, expected: str) -> None:
    assert preprocess(text) == expected


def test_tokenize_lowercases_strips_punctuation_and_keeps_inner_apostrophes_and_hyphens() -> None:
    assert tokenize("Don't go, my Mother-in-Law's HERE!!") == ["don't", "go", "my", "mother-in-law's", "here"]
    assert tokenize("hello,world") == ["hello", "world"]
    assert tokenize("'quoted' -dash- end-") == ["quoted", "dash", "end"]
    assert tokenize("It\u2019s fine \U0001f600 ok") == ["it's", "fine", "ok"]
    assert tokenize("...!!!") == []
    assert tokenize("snake_case 42") == ["snake", "case", "42"]


def test_dedupe_keeps_first_seen_order_and_inverts() -> None:
    texts = ["b", "a", "b", "c", "a"]
    uniques, inverse = dedupe(texts)
    assert uniques == ["b", "a", "c"]
    assert inverse.tolist() == [0, 1, 0, 2, 1]
    assert [uniques[i] for i in inverse] == texts
    empty_uniques, empty_inverse = dedupe([])
    assert empty_uniques == [] and empty_inverse.shape == (0,) and empty_inverse.dtype == np.intp
