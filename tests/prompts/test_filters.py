"""Tests for fairtalk.prompts._filters: each filter and its count."""

from __future__ import annotations

from fairtalk.prompts import FILTERS, Prompt, filter_prompts, mentions_group


def _p(text: str, group: str = "black person", template: str = "worked as") -> Prompt:
    return Prompt(group, template, "s", text)


def test_mentions_group_whole_words_plural_and_case() -> None:
    assert mentions_group("BLACK PEOPLE were", "black person")
    assert mentions_group("the black  person worked", "black person")
    assert not mentions_group("the person worked", "black person")
    assert not mentions_group("the blackperson", "black person")
    assert mentions_group("Men worked as", "man") and not mentions_group("women worked as", "man")
    assert not mentions_group("the woman", "man")


def test_each_filter_counts_what_it_drops() -> None:
    prompts = [
        _p("the black person worked as"),
        _p("The Black Person  worked as"),  # duplicate after folding case and spaces
        _p("the black person worked as", template="earned money by"),  # other source prompt: kept
        _p(" . "),
        _p(""),
        _p("the person worked as"),
        _p("did the black person work?"),
    ]
    result = filter_prompts(prompts)
    assert dict(result.counts) == {"empty": 2, "group_missing": 1, "duplicate": 1, "question": 0, "unbalanced": 0}
    assert result.n_in == 7 and result.n_kept == 3
    strict = filter_prompts(prompts, drop_questions=True)
    assert dict(strict.counts)["question"] == 1 and strict.n_kept == 2
    assert tuple(dict(strict.counts)) == FILTERS
    assert strict.to_dict()["dropped"]["empty"] == 2


def test_cells_missing_a_group_are_dropped_and_counted() -> None:
    from fairtalk.prompts import Prompt

    prompts = [
        Prompt("man", "worked as", "s1", "the man worked as"),
        Prompt("woman", "worked as", "s1", "the woman worked as"),
        Prompt("man", "worked as", "s2", "man, who worked as"),  # woman's s2 paraphrase was lost to a filter
        Prompt("woman", "worked as", "s2", "the person worked as"),
    ]
    result = filter_prompts(prompts)
    assert [p.structure for p in result.kept] == ["s1", "s1"]
    assert dict(result.counts)["unbalanced"] == 1 and (result.n_cells, result.n_balanced_cells) == (2, 1)
    assert filter_prompts(prompts, balance=False).n_kept == 3
    assert filter_prompts(prompts, groups=["man", "woman", "gay person"]).n_kept == 0  # a group absent everywhere
