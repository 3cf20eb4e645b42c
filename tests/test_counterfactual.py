"""Tests for fairtalk.counterfactual: the one-pass, both-direction swapper and ``fairtalk swap``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fairtalk import Lexicon, Swapper, load_lexicon
from fairtalk.cli import app
from fairtalk.counterfactual import _MSG_BAD_SEED, _MSG_BAD_TOKEN, _MSG_NOT_LEXICON, SwapResult
from fairtalk.lexicons import WordPair, builtin_axes, expand_axis
from fairtalk.records import Swap

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PAPER_WORDS = SHARED_DATA / "zgahhblhc__DialogueFairness/DebiasingMethods/CounterpartDataAugmentation/words"


def make_lexicon(*pairs: tuple[str, str], axis: str = "test") -> Lexicon:
    word_pairs = tuple(WordPair(a, b, line) for line, (a, b) in enumerate(pairs, start=1))
    return Lexicon(axis, ("x", "y"), word_pairs, (), "custom", f"test:{axis}", "0" * 64)


@pytest.fixture(scope="module")
def gender() -> Swapper:
    return Swapper(load_lexicon("gender"))


@pytest.fixture(scope="module")
def race() -> Swapper:
    return Swapper(load_lexicon("race"))


def swapped(swapper: Swapper, text: str) -> str:
    return swapper.swap(text).text


# ------------------------------------------------------------------------------------------
# one pass, both directions, no cascade


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("he said she left", "she said he left"),
        ("the man and the woman", "the woman and the man"),
        ("my father met your mother", "my mother met your father"),
        ("his son-in-law", "her daughter-in-law"),
        ("he's here and she's there", "she's here and he's there"),
    ],
)
def test_both_directions_swap_together(gender: Swapper, text: str, expected: str) -> None:
    assert swapped(gender, text) == expected


def test_a_replacement_is_never_matched_again() -> None:
    # sequential re.sub would turn "going to" into "bout to" and then back into "going to"
    swapper = Swapper(make_lexicon(("going to", "bout to"), ("going", "goin")))
    result = swapper.swap("going to, bout to, going")
    assert result.text == "bout to, going to, goin"
    assert [(s.source, s.target) for s in result.swaps] == [
        ("going to", "bout to"),
        ("bout to", "going to"),
        ("going", "goin"),
    ]


def test_going_to_is_rewritten_once(race: Swapper) -> None:
    result = race.swap("we are going to go")
    assert result.text == "we are bout to go"
    assert len(result.swaps) == 1


# ------------------------------------------------------------------------------------------
# matching: longest first, whole words, punctuation, whitespace


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i am going to win", "fin to win"),
        ("going to win", "bout to win"),
        ("going home", "goin home"),
        ("what's up", "wazzup"),
        ("what’s up", "wazzup"),
        ("what's    up", "wazzup"),
        ("it's cool", "its lit"),
        ("how are you", "sup"),
    ],
)
def test_longest_phrase_wins(text: str, expected: str) -> None:
    lexicon = load_lexicon("race")
    # pin the many-to-many choices: keep only the first counterpart of each term
    first: dict[str, str] = {}
    for pair in lexicon.pairs:
        first.setdefault(pair.a, pair.b)
    swapper = Swapper(make_lexicon(*first.items()))
    assert swapped(swapper, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("he", "she"),
        ("he.", "she."),
        ('"She said', '"He said'),
        ("(him)", "(her)"),
        ("[he]", "[she]"),
        ("he,she;he:she!", "she,he;she:he!"),
        ("'he'", "'she'"),
        ("he\nshe\the", "she\nhe\tshe"),
        ("he'll", "she'll"),
        ("half-brother", "half-sister"),
    ],
)
def test_boundaries_at_ends_and_punctuation(gender: Swapper, text: str, expected: str) -> None:
    assert swapped(gender, text) == expected


@pytest.mark.parametrize("text", ["the", "theme", "shell", "ashes", "when", "hero_he", "he2", "2he", "men's"[1:], "o'he", "heh"])
def test_never_inside_a_word(gender: Swapper, text: str) -> None:
    assert gender.swap(text).no_match
    assert swapped(gender, text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mr. smith", "mrs. smith"),
        ("Mr. Smith", "Mrs. Smith"),
        ("mr smith", "mrs smith"),
        ("mr.x", "mrs.x"),
        ("son-in-law", "daughter-in-law"),
        ("he's", "she's"),
        ("HE'S", "SHE'S"),
        ("the men's room", "the women's room"),
    ],
)
def test_contractions_and_punctuated_entries(gender: Swapper, text: str, expected: str) -> None:
    assert swapped(gender, text) == expected


def test_digits_in_entries(race: Swapper) -> None:
    result = race.swap("5-0 is here")
    assert result.text == "police is here"
    assert result.swaps[0].source_side == "b"
    assert race.swap("15-0").text == "15-0"
    assert race.swap("5-01").text == "5-01"


# ------------------------------------------------------------------------------------------
# case


@pytest.mark.parametrize(
    ("text", "expected"),
    [("he", "she"), ("He", "She"), ("HE", "SHE"), ("Husband", "Wife"), ("WIVES", "HUSBANDS")],
)
def test_case_is_preserved(gender: Swapper, text: str, expected: str) -> None:
    assert swapped(gender, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what's up", "wazzup"),
        ("What's up", "Wazzup"),
        ("WHAT'S UP", "WAZZUP"),
        ("WHAT'S up", "WAZZUP"),
        ("Going to", "Bout to"),
        ("I am going to eat", "Fin to eat"),  # sentence start
        ("so I am going to eat", "so fin to eat"),  # capital "I" carries no case information
        ("I AM GOING TO EAT", "FIN TO EAT"),
        ("I'm good", "I'm straight"),
    ],
)
def test_multiword_phrase_keeps_first_word_case(text: str, expected: str) -> None:
    swapper = Swapper(
        make_lexicon(("what's up", "wazzup"), ("going to", "bout to"), ("i am going to", "fin to"), ("i'm good", "i'm straight"))
    )
    assert swapped(swapper, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the United States", "the United Kingdom"),  # each word takes its own case
        ("THE UNITED STATES", "THE UNITED KINGDOM"),
        ("the united States", "the united Kingdom"),
        ("X-Ray", "Gamma-Ray"),  # each piece of a hyphenated word too
        ("X-ray", "Gamma-ray"),
        ("x-ray", "gamma-ray"),
        ("New York City", "La City"),  # other word counts: every word capitalised where every one is
        ("LA City", "New York City"),
        ("New york city", "La city"),
        ("the usa", "the UK"),  # the lexicon's own capitals are kept
        ("The Usa", "The UK"),
        ("USA and the UK", "UK and the USA"),
        ("McDonald", "O'Brien"),
        ("mcdonald", "O'Brien"),
        ("MCDONALD", "O'BRIEN"),
        ("he", "she"),
    ],
)
def test_each_word_takes_the_case_of_its_counterpart_and_the_lexicon_keeps_its_capitals(text: str, expected: str) -> None:
    swapper = Swapper(
        make_lexicon(
            ("united states", "united kingdom"),
            ("USA", "UK"),
            ("new york city", "la city"),
            ("x-ray", "gamma-ray"),
            ("McDonald", "O'Brien"),
            ("he", "she"),
        )
    )
    assert swapped(swapper, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("USA", "United Kingdom"),  # spelt as the lexicon spells it: the target as the lexicon spells it
        ("usa", "United Kingdom"),
        ("the united kingdom", "the USA"),
        ("UNITED KINGDOM", "USA"),
        ("O'Brien", "Mcdonald"),  # a lowercase counterpart takes the case of the text
        ("word up", "that's it up"),  # a capital first letter alone on a phrase is a sentence's, not the term's
        ("Word.", "That's it."),
        ("that's it", "word"),
    ],
)
def test_a_lexicon_spelling_with_capitals_and_one_without(text: str, expected: str) -> None:
    swapper = Swapper(make_lexicon(("USA", "United Kingdom"), ("mcdonald", "O'Brien"), ("That's it", "word")))
    assert swapped(swapper, text) == expected


# ------------------------------------------------------------------------------------------
# her / his by role


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I saw her dog", "I saw his dog"),
        ("her new car is red", "his new car is red"),
        ("her very own house", "his very own house"),
        ("I saw her.", "I saw him."),
        ("I saw her", "I saw him"),
        ("I gave her the book", "I gave him the book"),
        ("I told her that", "I told him that"),
        ("with her and me", "with him and me"),
        ("let her go", "let him go"),
        ("made her happy", "made him happy"),
        ("love her very much", "love him very much"),
        ("Her dog", "His dog"),
        ("HER.", "HIM."),
        ("his dog", "her dog"),
        ("His own car", "Her own car"),
        ("that's his", "that's hers"),
        ("that's his.", "that's hers."),
        ("his is red", "hers is red"),
        ("his and mine", "hers and mine"),
        ("him", "her"),
        ("hers", "his"),
        ("himself", "herself"),
        ("he hurt himself", "she hurt herself"),
    ],
)
def test_her_and_his_resolved_by_role(gender: Swapper, text: str, expected: str) -> None:
    assert swapped(gender, text) == expected


def test_role_heuristic_limit_is_documented(gender: Swapper) -> None:
    # a double object reads as a possessive: the documented limit of the next-word heuristic
    assert swapped(gender, "I gave her food") == "I gave his food"
    from fairtalk.counterfactual import role_target as _role_target

    assert "I gave her food" in (_role_target.__doc__ or "")


def test_role_choice_is_recorded(gender: Swapper) -> None:
    (swap,) = gender.swap("I saw her dog").swaps
    assert swap == Swap(6, 9, "her", "his", "b", 2)


def test_paper_variant_has_one_counterpart_for_her() -> None:
    swapper = Swapper(load_lexicon("gender", variant="paper"))
    assert swapped(swapper, "I saw her.") == "I saw his."
    assert swapped(swapper, "I saw him.") == "I saw him."


# ------------------------------------------------------------------------------------------
# many-to-many: seeded, one choice per term in a text, recorded


def test_many_to_many_choice_is_recorded(race: Swapper) -> None:
    (swap,) = race.swap("that is cool").swaps
    assert swap.source == "cool"
    assert swap.target in {"lit", "sick", "ill"}
    assert swap.n_choices == 3
    assert swap.source_side == "a"
    (swap,) = race.swap("nice kicks").swaps
    assert swap.target in {"sneakers", "shoes"} and swap.n_choices == 2 and swap.source_side == "b"


def test_choice_depends_on_seed_text_and_term_not_call_order() -> None:
    lexicon = load_lexicon("race")
    first, second = Swapper(lexicon, seed=7), Swapper(lexicon, seed=7)
    texts = [f"cool {i} cool cool" for i in range(50)]
    forward = [first.swap(t) for t in texts]
    backward = [second.swap(t) for t in reversed(texts)][::-1]
    assert forward == backward
    assert first.swap(texts[0]) == forward[0]  # repeated calls agree
    targets = {s.target for r in forward for s in r.swaps}
    assert targets == {"lit", "sick", "ill"}  # every counterpart gets used
    other = [Swapper(lexicon, seed=8).swap(t) for t in texts]
    assert other != forward


def test_a_word_gets_one_counterpart_everywhere_in_a_text() -> None:
    """Review fault: every ``cool`` of a text (any case, every turn) gets the same counterpart, not one per position."""
    from fairtalk.records import join_turns

    swapper = Swapper(load_lexicon("race"), seed=1)
    assert swapper.swap_text("that is cool, really cool, so cool man") == "that is lit, really lit, so lit man"
    default = Swapper(load_lexicon("race"))
    assert len(set(default.swap_text("cool. cool. cool. cool.").split())) == 1
    texts = [f"{i}: cool, Cool and COOL. a lot, a LOT; my friend and my friend" for i in range(60)]
    texts += [join_turns([f"the party {i} was cool", "yeah", "and the food was cool too"]) for i in range(60)]
    chosen: set[str] = set()
    for text in texts:
        result = swapper.swap(text)
        by_term: dict[str, set[str]] = {}
        for swap in result.swaps:
            by_term.setdefault(swap.source.lower(), set()).add(swap.target.lower())
        assert all(len(targets) == 1 for targets in by_term.values()), (text, by_term)
        chosen |= by_term["cool"]
        assert swapper.swap_lines(text) == result.text  # the block path makes the same choice
    assert chosen == {"lit", "sick", "ill"}  # still varied across texts


def test_a_typographic_apostrophe_is_kept_as_the_text_has_it(gender: Swapper, race: Swapper) -> None:
    """Review fault: a left single quote (U+2018) used as an apostrophe came back as ``'``."""
    assert swapped(gender, "he\u2018s here") == "she\u2018s here"
    assert swapped(gender, "He\u2019s here") == "She\u2019s here"
    assert swapped(gender, "SHE\u2018S here, he's not") == "HE\u2018S here, she's not"
    assert gender.swap("she\u2018s").swaps[0].target == "he\u2018s"
    assert swapped(race, "what\u2018s up") in {"wazzup", "wats up", "wats popping"}


def test_fullwidth_forms_are_swapped_and_written_fullwidth(gender: Swapper) -> None:
    """Review fault: ``ＨＥ`` (fullwidth) was no match, so a pair kept it on both sides and the check counted nothing."""
    assert swapped(gender, "\uff28\uff25 is my brother") == "\uff33\uff28\uff25 is my sister"
    assert swapped(gender, "\uff48\uff45\uff07\uff53 here") == "\uff53\uff48\uff45\uff07\uff53 here"  # ｈｅ＇ｓ
    assert swapped(gender, "\u0130 saw \uff28\uff25\uff32") == "\u0130 saw \uff28\uff29\uff2d"  # İ: case-insensitive path
    assert gender.sides("\uff28\uff25 left") == frozenset({"a"})
    assert gender.mask("\uff28\uff25 left") == "XYZ left"
    assert gender.swap_lines("the sky\n\uff28\uff25 left") == "the sky\n\uff33\uff28\uff25 left"
    from fairtalk import Pair, check_pairs

    leftover = Pair("p1", "gender", a="\uff28\uff25 is my brother", b="\uff28\uff25 is my sister", original_side="a")
    check = check_pairs([leftover], gender)
    assert check.n_leftover == 1


def _fw(text: str) -> str:
    """``text`` with its ASCII characters (not its spaces) in their fullwidth forms."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _narrow(text: str) -> str:
    """``text`` with its fullwidth forms in ASCII, its ideographic spaces plain."""
    return "".join(chr(ord(c) - 0xFEE0) if "\uff01" <= c <= "\uff5e" else " " if c == "\u3000" else c for c in text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{_fw('h')}im is here", f"{_fw('h')}er is here"),  # as long: each character keeps its width
        (f"h{_fw('im')} is here", f"h{_fw('er')} is here"),
        (f"{_fw('bro')}ther is here", "sister is here"),  # not as long: most are ASCII
        (f"{_fw('brothe')}r is here", f"{_fw('sister')} is here"),  # most are fullwidth
        (f"{_fw('h')}e is here", f"{_fw('she')} is here"),  # a tie: fullwidth, as before
        (f"{_fw('he')} is here", f"{_fw('she')} is here"),
        (f"my w{_fw('ife')} is here", f"my {_fw('husband')} is here"),
        (f"{_fw('my')}\u3000{_fw('wife')}", f"{_fw('my')}\u3000{_fw('husband')}"),
    ],
)
def test_a_word_typed_partly_fullwidth_keeps_its_widths(gender: Swapper, text: str, expected: str) -> None:
    """Review finding: ``ｈim`` (one fullwidth letter) came back all fullwidth, ``ｈｅｒ``."""
    assert swapped(gender, text) == expected
    assert gender.swap_lines(text) == expected  # the block path writes it alike


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_fw("so I am going to eat"), _fw("so fin to eat")),  # the pronoun carries no case information
        (_fw("I am going to eat"), _fw("Fin to eat")),  # a sentence starts
        (_fw("ok! I am going to eat"), _fw("ok! Fin to eat")),  # after a fullwidth "！" too
        (_fw("ok!") + "\u3000" + _fw("I am going to eat"), _fw("ok!") + "\u3000" + _fw("Fin to eat")),
        (_fw("I'm good"), _fw("I'm straight")),
        (f"so {_fw('I')} am going to eat", "so fin to eat"),  # most of it ASCII
    ],
)
def test_a_fullwidth_pronoun_i_takes_the_rule_of_the_ascii_one(text: str, expected: str) -> None:
    """Review finding: a fullwidth ``Ｉ`` was a capital of its own: ``ｓｏ Ｉ ａｍ ｇｏｉｎｇ ｔｏ`` became ``ｓｏ Ｆｉｎ ｔｏ``."""
    swapper = Swapper(make_lexicon(("i am going to", "fin to"), ("i'm good", "i'm straight")))
    assert swapped(swapper, text) == expected
    assert swapped(swapper, _narrow(text)) == _narrow(expected)  # the same words as in ASCII


def test_choice_spreads_roughly_evenly() -> None:
    swapper = Swapper(make_lexicon(("cool", "lit"), ("cool", "sick"), ("cool", "ill")))
    counts: dict[str, int] = {}
    for i in range(3000):
        target = swapper.swap(f"{i} cool").swaps[0].target
        counts[target] = counts.get(target, 0) + 1
    assert all(800 < n < 1200 for n in counts.values()), counts


def test_term_on_both_sides_takes_the_side_of_its_choice() -> None:
    swapper = Swapper(load_lexicon("race", variant="paper"))
    for i in range(40):
        result = swapper.swap(f"{i} mad")
        (swap,) = result.swaps
        assert (swap.target, swap.source_side) in {("a lot", "b"), ("tight", "a")}
        assert swapper.sides(f"{i} mad") == result.sides


# ------------------------------------------------------------------------------------------
# result object, sides, mask


def test_result_flags(gender: Swapper) -> None:
    none = gender.swap("nothing to see")
    assert none == SwapResult("nothing to see", ())
    assert none.no_match and none.sides == frozenset() and not none.both_groups
    male = gender.swap("the king")
    assert not male.no_match and male.sides == frozenset({"a"}) and not male.both_groups
    mixed = gender.swap("the king and the queen")
    assert mixed.sides == frozenset({"a", "b"}) and mixed.both_groups


def test_swaps_index_the_original_text(gender: Swapper) -> None:
    text = "He told her: his son-in-law!"
    result = gender.swap(text)
    assert result.text == "She told him: her daughter-in-law!"
    assert [(s.start, s.end, s.source, s.target, s.source_side) for s in result.swaps] == [
        (0, 2, "He", "She", "a"),
        (8, 11, "her", "him", "b"),
        (13, 16, "his", "her", "a"),
        (17, 27, "son-in-law", "daughter-in-law", "a"),
    ]
    assert all(text[s.start : s.end] == s.source for s in result.swaps)


@pytest.mark.parametrize("text", ["", "no words", "he", "she and he", "the queen", "HIS dog", "İstanbul he"])
def test_sides_agrees_with_swap(gender: Swapper, text: str) -> None:
    assert gender.sides(text) == gender.swap(text).sides


def test_mask(gender: Swapper, race: Swapper) -> None:
    assert gender.mask("His mother and HE left.") == "XYZ XYZ and XYZ left."
    assert gender.mask("the theme", token="[G]") == "the theme"
    assert race.mask("what's up, i am going to go", token="_") == "_, _ go"


def test_unicode_whose_lowercase_changes_length(gender: Swapper) -> None:
    text = "İstanbul: He met her there"
    result = gender.swap(text)
    assert result.text == "İstanbul: She met him there"
    assert all(text[s.start : s.end] == s.source for s in result.swaps)


def test_empty_lexicon_matches_nothing() -> None:
    swapper = Swapper(make_lexicon())
    assert swapper.swap("he said").no_match
    assert swapper.sides("he said") == frozenset() and swapper.mask("he") == "he"


def test_ambiguous_terms(gender: Swapper) -> None:
    # by role (her/his), one-way entries (guy -> girl, ms -> mr), and determiner rules (man, god)
    role = {"her", "his", "him", "hers"}
    one_way = {"guy", "guys", "dude", "dudes", "gal", "gals", "ms", "ms.", "mommy", "mum", "ma'am", "lords"}
    determiner = {
        "man",
        "woman",
        "boy",
        "girl",
        "god",
        "goddess",
        "king",
        "queen",
        "prince",
        "princess",
        "bro",
        "sis",
        "lad",
        "lass",
    }
    assert gender.ambiguous == frozenset(role | one_way | determiner)
    paper = Swapper(load_lexicon("gender", variant="paper"))
    assert paper.ambiguous == frozenset()  # the printed list has one counterpart a word, both ways


def test_bad_arguments() -> None:
    lexicon = load_lexicon("gender")
    with pytest.raises(TypeError, match=re.escape(_MSG_NOT_LEXICON.format(type="str"))):
        Swapper("gender")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=re.escape(_MSG_BAD_SEED.format(value="1"))):
        Swapper(lexicon, seed="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=re.escape(_MSG_BAD_TOKEN.format(value=None))):
        Swapper(lexicon).mask("he", token=None)  # type: ignore[arg-type]


@pytest.mark.skipif(not PAPER_WORDS.exists(), reason="reference data absent")
def test_paper_word_files_swap_every_entry() -> None:
    for name in ("gender_words.txt", "race_words.txt"):
        lines = (PAPER_WORDS / name).read_text(encoding="utf-8").splitlines()
        pairs = [tuple(line.split(" - ")) for line in lines]
        swapper = Swapper(make_lexicon(*dict.fromkeys(pairs)))  # type: ignore[arg-type]
        for a, b in pairs:
            for term in (a, b):
                result = swapper.swap(f"<{term}>")
                assert len(result.swaps) == 1 and result.swaps[0].source == term, term


# ------------------------------------------------------------------------------------------
# property tests


_GENDER = load_lexicon("gender")
_GENDER_SWAPPER = Swapper(_GENDER)
_TERMS = sorted({p.a for p in _GENDER.pairs} | {p.b for p in _GENDER.pairs})
_SAFE_TERMS = [t for t in _TERMS if t not in _GENDER_SWAPPER.ambiguous]
_SEPARATORS = st.sampled_from(["", " ", "  ", ", ", ". ", "! ", "(", ")", '"', "-", "\n", "\t", "'", "’"])
_FILLER = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDE0123456789_éİß", min_size=1, max_size=6)


def _cased(term: str, how: int) -> str:
    return (term.lower(), term.capitalize(), term.upper())[how]


def _sentences(terms: list[str]) -> st.SearchStrategy[str]:
    word = st.one_of(
        st.builds(_cased, st.sampled_from(terms), st.integers(0, 2)),
        _FILLER,
    )
    return st.lists(st.tuples(word, _SEPARATORS), max_size=12).map(lambda ws: "".join(w + s for w, s in ws))


def _output_spans(result: SwapResult) -> list[tuple[int, int]]:
    spans, shift = [], 0
    for s in result.swaps:
        start = s.start + shift
        spans.append((start, start + len(s.target)))
        shift += len(s.target) - (s.end - s.start)
    return spans


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sentences(_SAFE_TERMS))
def test_property_swapping_twice_returns_the_original(text: str) -> None:
    once = _GENDER_SWAPPER.swap(text)
    # the forms the case rule can reproduce, and no ambiguous word formed by the filler
    assume(all(s.source in (s.source.lower(), s.source.capitalize(), s.source.upper()) for s in once.swaps))
    assume(all(s.source.lower() not in _GENDER_SWAPPER.ambiguous for s in once.swaps))
    assert _GENDER_SWAPPER.swap(once.text).text == text


@settings(max_examples=300, deadline=None)
@given(_sentences(_TERMS), st.sampled_from(["gender", "race"]), st.integers(0, 3))
def test_property_nothing_changes_outside_the_swaps(text: str, axis: str, seed: int) -> None:
    swapper = Swapper(load_lexicon(axis), seed=seed)
    result = swapper.swap(text)
    rebuilt, position = [], 0
    for s in result.swaps:
        assert position <= s.start < s.end and text[s.start : s.end] == s.source
        rebuilt += (text[position : s.start], s.target)
        position = s.end
    rebuilt.append(text[position:])
    assert "".join(rebuilt) == result.text
    for (start, end), s in zip(_output_spans(result), result.swaps):
        assert result.text[start:end] == s.target


_WORD = re.compile(r"\w+")


@settings(max_examples=300, deadline=None)
@given(_sentences(_TERMS), st.sampled_from(["gender", "race"]))
def test_property_no_partial_word_replacement(text: str, axis: str) -> None:
    swapper = Swapper(load_lexicon(axis))
    result = swapper.swap(text)
    spans = _output_spans(result)
    original_words = {(m.start(), m.group()) for m in _WORD.finditer(text)}
    for match in _WORD.finditer(result.text):
        start, end = match.span()
        inside = [(a, b, s) for (a, b), s in zip(spans, result.swaps) if a < end and start < b]
        if inside:  # a word touching a replacement lies wholly inside it and is one of its words
            ((a, b, s),) = inside
            assert a <= start and end <= b
            assert match.group() in _WORD.findall(s.target)
        else:  # any other word is an original word, at its original (shifted) place
            shift = sum(len(s.target) - (s.end - s.start) for (a, _), s in zip(spans, result.swaps) if a < start)
            assert (start - shift, match.group()) in original_words


# ------------------------------------------------------------------------------------------
# CLI


runner = CliRunner()


def test_cli_stdin_one_line_per_line() -> None:
    stdin = "He said hi\nnothing here\n\nI saw HER.\n"
    result = runner.invoke(app, ["swap", "--axis", "gender"], input=stdin)
    assert result.exit_code == 0, result.output
    assert result.stdout == "She said hi\nnothing here\n\nI saw HIM.\n"


def test_cli_arguments_and_race() -> None:
    result = runner.invoke(app, ["swap", "--axis", "race", "--seed", "3", "i am going to the crib", "yo"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "fin to da house"
    assert lines[1] in {"hello"}


def test_cli_undecodable_bytes_pass_through() -> None:
    result = runner.invoke(app, ["swap", "--axis", "gender"], input=b"he \xff\r\n")
    assert result.exit_code == 0
    assert result.stdout_bytes == b"she \xff\n"


def test_cli_variant_and_lexicon_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["swap", "--axis", "gender", "--variant", "paper", "I saw him"])
    assert result.stdout == "I saw him\n"
    path = tmp_path / "religion.tsv"
    path.write_text("# axis: religion\n# groups: christian muslim\nchurch\tmosque\n", encoding="utf-8")
    result = runner.invoke(app, ["swap", "--axis", "gender", "--lexicon", str(path), "the Church, he said"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "the Mosque, he said\n"


def test_cli_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["swap", "--axis", "gendr", "he"])
    assert result.exit_code == 2
    assert "error:" in result.stderr and "did you mean 'gender'" in result.stderr and "race" in result.stderr
    result = runner.invoke(app, ["swap", "he"])
    assert result.exit_code == 2 and "--axis" in result.stderr
    bad = tmp_path / "bad.tsv"
    bad.write_text("church\tmosque\nno separator here\n", encoding="utf-8")
    result = runner.invoke(app, ["swap", "--lexicon", str(bad), "he"])
    assert result.exit_code == 2
    assert f"{bad}:2:" in result.stderr and "Traceback" not in result.output
    late = tmp_path / "late.tsv"  # a setting after the pairs is never read as a comment
    late.write_text("# axis: x\n# groups: a b\nman\twoman\n# needs-determiner: man\n", encoding="utf-8")
    result = runner.invoke(app, ["swap", "--lexicon", str(late), "oh man, the man is here"])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"error: {late}:4: '# needs-determiner:'" in result.stderr and "settings go before the pairs" in result.stderr


def test_no_swap_spans_two_turns_of_a_conversation() -> None:
    import fairtalk

    race = fairtalk.Swapper(fairtalk.load_lexicon("race"))
    across = fairtalk.join_turns(["we should hang", "out later"])
    assert race.swap(across).text == across  # "hang out" is a term only within one turn
    within = race.swap(fairtalk.join_turns(["we should hang out", "later"])).text
    assert fairtalk.split_turns(within) == ["we should pop out", "later"]
    gender = fairtalk.Swapper(fairtalk.load_lexicon("gender"))
    assert fairtalk.split_turns(gender.swap(fairtalk.join_turns(["i saw her", "car was red"])).text) == [
        "i saw him",
        "car was red",
    ]


# --------------------------------------------------------------------------------------------
# word sense: fixed phrases, determiners, one-way entries, typographic apostrophes


@pytest.mark.parametrize(
    ("text", "expected", "reasons"),
    [
        ("Oh man, that was close.", "Oh man, that was close.", ["phrase"]),
        ("yeah man i know", "yeah man i know", ["no-determiner"]),
        ("Man, he was fast", "Man, she was fast", ["no-determiner"]),
        ("The man at the door.", "The woman at the door.", []),
        ("my really old man", "my really old woman", []),
        ("That's it. Man, he ran", "That's it. Man, she ran", ["no-determiner"]),
        ("Oh my god he is here", "Oh my god she is here", ["phrase"]),
        ("the god of war", "the goddess of war", []),
        ("I love Spider-Man and he does too", "I love Spider-Man and she does too", ["phrase"]),
        ("a Stephen King novel he wrote", "a Stephen King novel she wrote", ["phrase"]),
        ("you guys rock", "you guys rock", ["phrase"]),
        ("those guys are cool", "those girls are cool", []),
        ("dude, he is cool", "dude, she is cool", ["no-determiner"]),
        ("ladies and gentlemen", "ladies and gentlemen", ["phrase", "phrase"]),
        ("he or she can come", "he or she can come", ["phrase", "phrase"]),
    ],
)
def test_word_sense_rules_keep_interjections_names_and_phrases(
    gender: Swapper, text: str, expected: str, reasons: list[str]
) -> None:
    result = gender.swap(text)
    assert result.text == expected
    assert [k.reason for k in result.kept] == reasons
    assert all(text[k.start : k.end] == k.source for k in result.kept)


def test_kept_terms_count_for_no_group_and_are_not_masked(gender: Swapper) -> None:
    assert gender.sides("oh man, that rained") == frozenset()
    assert gender.swap("oh man, that rained").no_match  # so no pair is built from it
    assert gender.sides("oh man, he ran") == frozenset({"a"})
    assert gender.mask("burger king, the king ran") == "burger king, the XYZ ran"
    # "man" is masked even where it is kept: a swap puts it in for "woman", which needs no determiner ("oh woman" -> "oh man")
    assert gender.mask("oh man, the man ran") == "oh XYZ, the XYZ ran"


def test_one_way_entries_keep_a_single_counterpart(gender: Swapper) -> None:
    assert swapped(gender, "this guy and that gal") == "this girl and that guy"
    assert swapped(gender, "the girl") == "the boy"  # not "guy" or "dude": girl keeps one counterpart
    assert swapped(gender, "Ms. Smith said hes fine") == "Mr. Smith said shes fine"
    assert swapped(gender, "my bf and my bro") == "my gf and my sis"


def test_typographic_apostrophe_is_kept(gender: Swapper) -> None:
    assert swapped(gender, "He\u2019s here and she\u2019ll stay") == "She\u2019s here and he\u2019ll stay"
    assert swapped(gender, "He's here") == "She's here"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I found her boring.", "I found him boring."),
        ("I found her boring and left", "I found him boring and left"),
        ("I kissed her goodnight", "I kissed him goodnight"),
        ("Her back hurts.", "His back hurts."),
        ("hi. her car broke", "hi. his car broke"),
        ("Her and me went out", "Him and me went out"),
        ("her beautiful eyes", "his beautiful eyes"),
        ("I called her back", "I called him back"),
    ],
)
def test_her_role_small_clauses_and_sentence_starts(gender: Swapper, text: str, expected: str) -> None:
    assert swapped(gender, text) == expected


def test_word_sense_headers_work_in_a_users_lexicon() -> None:
    pairs = (WordPair("church", "mosque", 1), WordPair("pastor", "imam", 2, "a>b"))
    lexicon = Lexicon(
        "religion",
        ("christian", "muslim"),
        pairs,
        (),
        "custom",
        "test:religion",
        "0" * 64,
        keep=("church street",),
        needs_determiner=("church",),
    )
    swapper = Swapper(lexicon)
    assert swapped(swapper, "the church on Church Street") == "the mosque on Church Street"
    assert swapped(swapper, "church is at ten") == "church is at ten"
    assert swapped(swapper, "our pastor and the imam") == "our imam and the imam"  # imam -> pastor is not listed


@settings(max_examples=200, deadline=None)
@given(st.lists(_sentences(_TERMS), max_size=6))
def test_property_swap_lines_equals_swapping_each_line(lines: list[str]) -> None:
    lines = [line.replace("\n", " ") for line in lines]
    block = "\n".join(lines)
    assert _GENDER_SWAPPER.swap_lines(block) == "\n".join(_GENDER_SWAPPER.swap(line).text for line in lines)
    assert _GENDER_SWAPPER.swap_text(block.replace("\n", " ")) == _GENDER_SWAPPER.swap(block.replace("\n", " ")).text


def test_a_line_break_ends_a_term() -> None:
    race = Swapper(load_lexicon("race"))
    assert race.swap_lines("I am going\nto go") == race.swap_text("I am going") + "\n" + race.swap_text("to go")
    assert race.swap_text("I am going to go") != race.swap_text("I am going\nto go").replace("\n", " ")


def test_swap_command_streams_lines_with_crlf_and_no_final_newline() -> None:
    result = CliRunner().invoke(app, ["swap", "--axis", "gender"], input="He told her.\r\nthe sky\nshe said hi")
    assert result.exit_code == 0
    assert result.stdout == "She told him.\nthe sky\nhe said hi\n"


_RACE_SWAPPER = Swapper(load_lexicon("race"), seed=1)
_RACE_TERMS = sorted({p.a for p in _RACE_SWAPPER.lexicon.pairs} | {p.b for p in _RACE_SWAPPER.lexicon.pairs})


@settings(max_examples=200, deadline=None)
@given(st.lists(_sentences(_RACE_TERMS), max_size=6))
def test_property_swap_lines_equals_swapping_each_line_on_race(lines: list[str]) -> None:
    """Issue 40: the block path keeps the per-line output with several counterparts, cues and multi-word terms."""
    lines = [line.replace("\n", " ") for line in lines]
    block = "\n".join(lines)
    assert _RACE_SWAPPER.swap_lines(block) == "\n".join(_RACE_SWAPPER.swap(line).text for line in lines)


def test_swap_command_imports_no_numerical_stack() -> None:
    """Issue 40: `fairtalk swap` starts without numpy, scipy, pandas, torch, transformers or the report writers."""
    import os
    import subprocess
    import sys

    heavy = ("numpy", "scipy", "pandas", "torch", "transformers", "fairtalk.report", "fairtalk.stats")
    code = (
        "import sys\n"
        "from fairtalk.cli import main\n"
        "sys.argv = ['fairtalk', 'swap', '--axis', 'race']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print([name for name in {heavy!r} if name in sys.modules], file=sys.stderr)\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code], input="I am going to the crib\n", env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == Swapper(load_lexicon("race")).swap_text("I am going to the crib") + "\n"
    assert done.stderr.strip() == "[]"


#: Sentences a term is put in: alone, after a determiner, and in its ordinary sense.
MASK_FRAMES = ("{term}", "The {term} came.", "I feel {term} today.", "yo, it was {term}!")


@pytest.mark.parametrize("axis", [pair for axis in builtin_axes() for pair in expand_axis(axis)])  # religion: each pair
def test_both_sides_of_every_swap_mask_alike_in_every_builtin_lexicon(axis: str) -> None:
    """A one-way line's word (``good -> fly``) is masked too, so a pair's two sides, which differ by the swap, mask alike."""
    swapper = Swapper(load_lexicon(axis))
    sources = {
        term
        for pair in swapper.lexicon.pairs
        for term, way in ((pair.a, "a>b"), (pair.b, "b>a"))
        if pair.direction in ("both", way)
    }
    differ = []
    for term in sorted(sources):
        for frame in MASK_FRAMES:
            text = frame.format(term=term)
            swapped = swapper.swap_text(text)
            if swapper.mask(text) != swapper.mask(swapped):
                differ.append((text, swapped, swapper.mask(text), swapper.mask(swapped)))
    assert differ == []


def test_the_word_a_one_way_line_swaps_in_is_masked() -> None:
    race = Swapper(load_lexicon("race"))
    assert race.swap_text("that is good") == "that is fly"
    assert race.mask("that is good") == race.mask("that is fly") == "that is XYZ"
    assert race.mask("a fly landed on my chips") == "a XYZ landed on my XYZ"  # wherever it stands: it may have been swapped in
