"""Tests for fairtalk.training._vocab: tokenizer, vocabulary limits, JSON round trip."""

from __future__ import annotations

import pytest

from fairtalk import InputError, SpecError
from fairtalk.training import Vocab
from fairtalk.training._vocab import SPECIALS, detokenize, tokenize


def test_tokenize_lowercases_and_keeps_apostrophes() -> None:
    assert tokenize("Don't worry, I’m FINE!!") == ["don't", "worry", ",", "i'm", "fine", "!", "!"]
    assert tokenize("") == []


def test_detokenize_attaches_punctuation() -> None:
    assert detokenize(tokenize("I'm fine, thanks! (really)")) == "i'm fine, thanks! (really)"


def test_build_orders_by_count_then_word_and_respects_limits() -> None:
    vocab = Vocab.build(["b a a", "c b a", "d"], min_count=2, max_size=10)
    assert vocab.tokens == SPECIALS + ("a", "b")
    assert len(Vocab.build(["a b c d e"], min_count=1, max_size=6)) == 6
    with pytest.raises(SpecError, match="min_count must be >= 1"):
        Vocab.build([], min_count=0)


def test_encode_decode_and_unknown_words() -> None:
    vocab = Vocab.build(["hello there , friend", "hello"], min_count=1)
    ids = vocab.encode("Hello stranger, friend")
    assert ids[1] == vocab.unk_id
    assert vocab.decode(ids + [vocab.eos_id, vocab.index["hello"]]) == "hello <unk>, friend"
    assert vocab.encode("hello there friend", max_len=2, keep="end") == [vocab.index["there"], vocab.index["friend"]]
    assert set(vocab.words) == {"hello", "there", ",", "friend"}


def test_json_round_trip_and_errors(tmp_path) -> None:
    vocab = Vocab.build(["a b b c"], min_count=1)
    vocab.save(tmp_path / "v.json")
    again = Vocab.load(tmp_path / "v.json")
    assert again == vocab and again.n_texts == 1
    with pytest.raises(InputError, match="vocabulary file not found"):
        Vocab.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(InputError, match="not a fairtalk vocabulary file"):
        Vocab.load(tmp_path / "bad.json")
    (tmp_path / "bad2.json").write_text('{"tokens": ["a"]}')
    with pytest.raises(InputError, match="not a fairtalk vocabulary file"):
        Vocab.load(tmp_path / "bad2.json")
