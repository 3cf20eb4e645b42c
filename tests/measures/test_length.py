"""Tests for measures/_length.py."""

from __future__ import annotations

import pytest

from fairtalk.measures import Length, Measure


def test_length_counts_words_not_punctuation() -> None:
    scores = Length().score(["Hi there!!", "", "don't stop me now", "?!", "one"])
    assert scores["length"].tolist() == [2.0, 0.0, 4.0, 0.0, 1.0]


def test_length_declares_its_protocol_fields() -> None:
    length = Length()
    assert isinstance(length, Measure)
    assert length.keys == ("length",) and length.kind == "count"
    assert dict(length.higher_is_better) == {"length": None}


def test_length_rejects_a_single_string() -> None:
    with pytest.raises(TypeError):
        Length().score("not a list")  # type: ignore[arg-type]
