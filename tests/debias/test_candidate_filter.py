"""Retrieval pool filtering: reasons, counts, order, and the pool file format."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairtalk.counterfactual import Swapper
from fairtalk.debias import DROP_REASONS, PoolLines, filter_pool, pool_lexicons, read_pool, read_pool_lines, write_pool
from fairtalk.errors import InputError, OutputError, SpecError
from fairtalk.lexicons import expand_axis, load_lexicon

POOL = (
    "nice to meet you",
    "she is a nurse",
    "you are a fucking idiot",
    "the funeral was tragic and painful, i cried",
    "his fucking car",  # group words and offensive: counted under group_words
    "have a lovely day",
    "nice to meet you",
)


def test_drops_each_reason_once_in_checking_order() -> None:
    result = filter_pool(POOL, swapper="gender")
    assert result.kept == ("nice to meet you", "have a lovely day", "nice to meet you")
    assert result.kept_indices == (0, 5, 6)
    assert result.dropped_by == {"group_words": 2, "offensive": 1, "negative": 1}
    assert (result.n_before, result.n_after, result.n_dropped) == (7, 3, 4)
    assert sum(result.dropped_by.values()) == result.n_dropped


def test_only_the_chosen_reasons_apply() -> None:
    result = filter_pool(POOL, drop=["offensive"])
    assert result.dropped_by == {"offensive": 2}
    assert "she is a nurse" in result.kept and "the funeral was tragic and painful, i cried" in result.kept
    result = filter_pool(POOL, drop=("negative",), negative_threshold=-0.95)
    assert result.dropped_by == {"negative": 0} and result.n_after == len(POOL)
    assert filter_pool(POOL, drop=()).kept == POOL


def test_swapper_may_be_a_swapper_lexicon_or_axis() -> None:
    for axis in (Swapper(load_lexicon("gender")), load_lexicon("gender"), "gender"):
        assert filter_pool(POOL, drop="group_words", swapper=axis).dropped_by == {"group_words": 2}


def test_a_multiway_axis_name_looks_for_every_groups_words() -> None:
    pool = ["the hindu temple", "an atheist friend", "a church", "hello"]
    assert filter_pool(pool, drop="group_words", swapper="religion").kept == ("hello",)
    assert filter_pool(pool, drop="group_words", swapper="religion:christian-muslim").kept == tuple(pool[:2] + pool[3:])


def test_the_lexicons_of_a_pool_are_the_axis_own_or_each_pair_of_a_multiway_axis() -> None:
    """The multi-way expansion lives in the library once (pool-filter's CLI used to repeat it)."""
    assert [lexicon.axis for lexicon in pool_lexicons("religion")] == list(expand_axis("religion"))
    assert pool_lexicons("religion:christian-muslim") == (load_lexicon("religion:christian-muslim"),)
    assert pool_lexicons("gender") == (load_lexicon("gender"),)
    pool = ["the hindu temple", "an atheist friend", "a church", "hello"]
    assert filter_pool(pool, drop="group_words", swapper=pool_lexicons("religion")).kept == ("hello",)
    with pytest.raises(SpecError, match="dropping group_words needs an axis"):
        filter_pool(pool, drop="group_words", swapper=[])  # no lexicon: nothing would be dropped


def test_offense_threshold_is_used() -> None:
    strict = filter_pool(POOL, drop=["offensive"], offense_threshold=0.0)
    assert strict.n_after == 0


def test_errors() -> None:
    with pytest.raises(SpecError, match=r"unknown pool-filter reason 'ofensive'; did you mean 'offensive'\?"):
        filter_pool(POOL, drop=["ofensive"])
    with pytest.raises(SpecError) as info:
        filter_pool(POOL, drop=["x"])
    assert info.value.choices == tuple(sorted(DROP_REASONS))
    with pytest.raises(SpecError, match="needs an axis"):
        filter_pool(POOL, drop=["group_words"])
    with pytest.raises(TypeError, match="candidate 1 is not a string"):
        filter_pool(["a", None], drop=())  # type: ignore[list-item]


def test_empty_pool() -> None:
    result = filter_pool([], swapper="gender")
    assert result.kept == () and result.n_before == 0 and result.dropped_by == dict.fromkeys(DROP_REASONS, 0)


def test_pool_files(tmp_path: Path) -> None:
    source = tmp_path / "pool.txt"
    source.write_bytes(b"one\n\n  two  \nthree\r\n")
    assert read_pool(source) == ["one", "two", "three"]
    out = tmp_path / "out.txt"
    assert write_pool(["a\nb", "c"], out) == 2
    assert out.read_text(encoding="utf-8") == "a b\nc\n"
    with pytest.raises(OutputError, match="refusing to overwrite the input pool"):
        write_pool(["x"], source, input_path=source)
    with pytest.raises(InputError, match="candidate pool file not found"):
        read_pool(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\n")
    with pytest.raises(InputError, match=r"bad.txt:2: the candidate pool is not valid UTF-8"):
        read_pool(bad)


def test_read_pool_lines_counts_the_blank_lines_read_pool_leaves_out(tmp_path: Path) -> None:
    source = tmp_path / "pool.txt"
    source.write_bytes(b"one\n\n  two  \n \t \r\nthree")
    assert read_pool_lines(source) == PoolLines(candidates=("one", "two", "three"), n_blank=2)
    assert read_pool_lines(source).n_lines == 5 and read_pool(source) == ["one", "two", "three"]
