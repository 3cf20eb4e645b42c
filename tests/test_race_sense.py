"""Race word sense (issue 30): AAE words that are also ordinary English swap only in their slang sense."""

from __future__ import annotations

import pytest

from fairtalk import Swapper, load_lexicon


@pytest.fixture(scope="module")
def race() -> Swapper:
    return Swapper(load_lexicon("race"))


#: Issue 30's seven nonsense swaps (AAE -> Standard English in the word's ordinary sense).
ORDINARY = [
    "I want some ice cream",  # was "jewelry cream"
    "potato chips",  # was "potato money"
    "a blood test",  # was "a family test"
    "I feel sick",  # was "I feel cool"
    "borrow a pen",  # was "borrow a prison"
    "world peace",  # was "world goodbye"
    "a cop pulled me over",  # was "a buy pulled me over"
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_senses_are_kept_and_mark_no_group(race: Swapper, text: str) -> None:
    result = race.swap(text)
    assert result.text == text and result.swaps == ()
    assert race.sides(text) == frozenset()
    # masked all the same: each word is one a swap puts in (diamonds -> ice), so a pair's other side may hold it
    assert race.mask(text) != text
    # the list as printed still makes the nonsense swap
    assert Swapper(load_lexicon("race", variant="paper")).swap(text).text != text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("that party was sick", "that party was cool"),
        ("That's sick!", "That's cool!"),
        ("oh my that is so sick!", "oh my that is so cool!"),
        ("that would be sick", "that would be cool"),
        ("I think it's sick", "I think it's cool"),
        ("Sick.", "Cool."),
        ("My dorm is lit!", "My dorm is cool!"),
        ("it was pretty lit", "it was pretty cool"),
        ("Lit?", "Cool?"),
        ("Word.", "That's it."),
        ("Peace!", "Goodbye!"),
        ("I'm out.", "Goodbye."),
        ("You playing?", "You joke a lot?"),
        ("trucks are dope", "trucks are good"),
        ("yo got you", "hello got you"),
    ],
)
def test_slang_senses_still_swap_to_standard_english(race: Swapper, text: str, expected: str) -> None:
    result = race.swap(text)
    assert result.text == expected and result.kept == ()
    assert race.sides(text) == frozenset({"b"})


@pytest.mark.parametrize(
    "text",
    [
        "Are you sick of it",
        "I was sick",
        "I would be sick",
        "she is sick",
        "we got sick",
        "a well lit room",
        "English lit",
        "what a word",
        "Word count",
        "rest in peace",
        "I'm out of milk",
        "are you playing games",
    ],
)
def test_ordinary_senses_of_cued_terms_are_kept_with_the_reason(race: Swapper, text: str) -> None:
    result = race.swap(text)
    assert result.text == text and result.swaps == ()
    assert [k.reason for k in result.kept] == ["no-cue"]
    assert race.swap(text.upper()).text == text.upper()


@pytest.mark.parametrize(
    ("text", "counterparts"),
    [
        ("my jewelry", {"my ice"}),
        ("lots of money", {"lots of chips"}),
        ("my family", {"my blood"}),
        ("in prison", {"in pen"}),
        ("buy it", {"cop it"}),
        ("that's good", {"that's dope", "that's fly"}),
        ("it's so cool", {"it's so lit", "it's so sick", "it's so ill"}),
        ("I'm good", {"I'm straight"}),
        ("that happens to a lot of people", {"that happens to hella people"}),  # not "dumb of people"
        ("I like it a lot", {"I like it hella", "I like it dumb"}),
    ],
)
def test_standard_english_still_swaps_to_the_aae_word(race: Swapper, text: str, counterparts: set[str]) -> None:
    result = race.swap(text)
    assert result.text in counterparts and race.sides(text) == frozenset({"a"})


def test_both_directions_where_the_lexicon_has_both(race: Swapper) -> None:
    for i in range(30):  # every counterpart of "cool"; the cued ones swap back after a cue
        there = race.swap(f"{i} that's cool").text
        back = race.swap(there).text
        if there.endswith(("lit", "sick")):
            assert back == f"{i} that's cool"
        else:  # "ill" is one way: "ill" is mostly "I'll" in chat
            assert there.endswith("ill") and back == there
    assert race.swap("yo, peace!").text == "hello, peace!"  # a comma does not end the clause: not alone
    assert race.swap("goodbye").text in {"peace", "i'm out"}


def test_one_word_cue_after_a_personal_subject_does_not_count(race: Swapper) -> None:
    assert race.swap("they'd be sick").text == "they'd be sick"
    assert race.swap("it'd be lit").text == "it'd be cool"
    assert race.swap("I'd say that is sick").text == "I'd say that is cool"  # a two-word cue names its subject


def test_yo_yo_is_a_toy_not_a_greeting(race: Swapper) -> None:
    result = race.swap("grab my yo-yo")
    assert result.text == "grab my yo-yo" and {k.reason for k in result.kept} == {"phrase"}


def test_ambiguous_includes_cued_and_one_way_terms(race: Swapper) -> None:
    assert {"sick", "lit", "word", "peace", "jewelry", "money"} <= race.ambiguous
    assert "ice" not in race.ambiguous  # one way: no longer a term


def test_gender_swapper_has_no_cue_terms() -> None:
    gender = Swapper(load_lexicon("gender"))
    assert gender.swap("I feel sick, oh man").text == "I feel sick, oh man"
    assert gender.swap("that's sick, he said").text == "that's sick, she said"
