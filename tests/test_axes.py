"""The axes beyond the paper: religion (multi-way), sexual orientation, age, and first names as proxies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fairtalk
from fairtalk import SpecError, Swapper, load_lexicon
from fairtalk.lexicons import axis_groups, builtin_axes, expand_axis, lexicon_by_name


def swapped(axis: str, text: str) -> str:
    return Swapper(load_lexicon(axis)).swap(text).text


def test_every_builtin_axis_loads_with_its_header() -> None:
    for axis in builtin_axes():
        for name in expand_axis(axis):
            lexicon = load_lexicon(name)
            assert lexicon.pairs and len(lexicon.groups) == 2 and lexicon.variant == "default"
    assert axis_groups("religion") == ("christian", "muslim", "jewish", "hindu", "buddhist", "atheist")


@pytest.mark.parametrize(
    ("axis", "text", "expected"),
    [  # real chitchat lines (builtin:chitchat)
        (
            "religion:christian-muslim",
            "haha that's not in line with the church policy now is it",
            "haha that's not in line with the mosque policy now is it",
        ),
        (
            "religion:christian-muslim",
            "ha ha Okay good to know you have no gifts this Christmas from me",
            "ha ha Okay good to know you have no gifts this Eid from me",
        ),
        ("religion:jewish-hindu", "travel to all the temples", "travel to all the synagogues"),
        (
            "orientation",
            "What Potatoes exist?? I didn't know This is news to me I am gay",
            "What Potatoes exist?? I didn't know This is news to me I am straight",
        ),
        ("age", "Hey, at least I'm not a millennial", "Hey, at least I'm not a boomer"),
        (
            "age",
            "I did not even think about that! They speak like teenagers in English!",
            "I did not even think about that! They speak like senior citizens in English!",
        ),
        ("names-race", "hey Allison! what's up??", "hey Aisha! what's up??"),
        ("names-gender", "I like Imagine by John Lennon.", "I like Imagine by John Lennon."),  # a public figure
    ],
)
def test_new_axes_on_real_chat_lines(axis: str, text: str, expected: str) -> None:
    assert swapped(axis, text) == expected


def test_word_sense_decisions_of_the_new_axes() -> None:
    assert swapped("orientation", "he went straight home") == "he went straight home"  # never read as orientation
    assert swapped("orientation", "a straight couple") == "a gay couple"
    assert swapped("orientation", "my husband is gay") == "my husband is straight"  # partner words stay
    assert swapped("age", "my old phone and a young man") == "my old phone and an old man"
    assert swapped("age", "You moved your senior year?") == "You moved your senior year?"
    assert swapped("religion:christian-muslim", "my Christmas tree") == "my Christmas tree"


def test_a_pair_of_groups_turns_missing_counterparts_into_markers() -> None:
    lexicon = load_lexicon("religion:hindu-buddhist")
    assert lexicon.groups == ("hindu", "buddhist") and lexicon.axis == "religion:hindu-buddhist"
    assert "temple" in lexicon.markers[0] and "temple" in lexicon.markers[1]  # the same word: not swapped
    assert "holi" in lexicon.markers[0]  # no buddhist counterpart
    assert not any(pair.a == "temple" for pair in lexicon.pairs)


def test_multiway_errors_are_clear() -> None:
    with pytest.raises(SpecError, match="'religion' has no group 'pagan'"):
        load_lexicon("religion:christian-pagan")
    with pytest.raises(SpecError, match="two different groups"):
        load_lexicon("religion:muslim-muslim")
    with pytest.raises(SpecError, match="has no paper variant"):
        load_lexicon("age", variant="paper")


@pytest.mark.parametrize("name", ["religion", "builtin:religion"])
def test_a_bare_multiway_axis_is_refused_by_the_library_naming_its_pairs(name: str) -> None:
    """Review finding: ``load_lexicon("religion")`` returned christian vs muslim silently (a bare multi-way *file* was
    refused), so a library caller audited one fifth of the axis thinking it was all of it."""
    pairs = ", ".join(expand_axis("religion"))
    for load in (load_lexicon, lexicon_by_name):
        with pytest.raises(SpecError) as caught:
            load(name)
        said = str(caught.value)
        assert said.startswith("axis religion has 6 groups and a lexicon pairs two: choose a pair (religion:christian-muslim, ")
        assert f"choose a pair ({pairs}, or religion:A-B for any two of christian, muslim, jewish, hindu, " in said
        assert "an audit of religion runs christian against each" in said
    assert load_lexicon(f"{name}:christian-jewish").groups == ("christian", "jewish")


def test_religion_audits_every_group_against_the_reference_in_one_family(tmp_path: Path) -> None:
    run = fairtalk.audit(
        model="builtin:retrieval-paper", axes=("religion",), n_pairs=40, split="all", out_dir=str(tmp_path / "rep"), store=None
    )
    assert list(run.axes) == list(expand_axis("religion"))
    sizes = {r.family_size for r in run.results.values()}
    own = {len([m for m in r.measures if m.primary]) for r in run.results.values()}
    assert len(sizes) == 1 and sizes.pop() > max(own)  # one family over every pair of groups
    assert all(r.correction_scope.startswith("multi-way axis religion") for r in run.results.values())
    index = (tmp_path / "rep" / "index.html").read_text()
    assert 'data-multiway="religion"' in index
    for group in ("muslim", "jewish", "hindu", "buddhist", "atheist"):
        assert f"<th>{group} vs christian</th>" in index
    # a cell: muslim's value, then christian's, in percent, and muslim − christian in points with its CI
    m = next(m for m in run.results["religion:christian-muslim"].measures if m.name == "distinct_1")
    low, high = m.ci95
    assert m.a != m.b and low is not None and high is not None
    assert (
        f"{100 * m.b:.3f} vs {100 * m.a:.3f} (difference {100 * (m.b - m.a):+.3f} pp, "
        f"95% CI [{-100 * high:+.3f}, {-100 * low:+.3f}] pp)"
    ) in index
    assert (tmp_path / "rep" / "religion_christian-muslim" / "report.html").is_file()
    run_json = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert "religion:christian-atheist" in json.dumps(run_json)


@pytest.mark.parametrize(
    ("axis", "text", "expected"),
    [
        ("nonbinary", "He is tired and she likes her dog.", "They are tired and they like their dog."),
        ("nonbinary", "I saw her yesterday. Is she coming?", "I saw them yesterday. Are they coming?"),
        ("nonbinary", "He's been busy, he doesn't care about his car.", "They've been busy, they don't care about their car."),
        ("nonbinary", "That book is hers.", "That book is theirs."),
        ("nonbinary", "they are here", "they are here"),  # plural they is never an original
        # real chitchat lines (builtin:chitchat, held-out split)
        (
            "nonbinary",
            "Me either. That's cool though. Is he at BYU as well?",
            "Me either. That's cool though. Are they at BYU as well?",
        ),
        (
            "nonbinary",
            "You're too kind. Thank you, thank you! Man, he's been racing me.",
            "You're too kind. Thank you, thank you! Man, they've been racing me.",
        ),
        (
            "nonbinary",
            "but he says we need to hear what he says to do well",
            "but they say we need to hear what they say to do well",
        ),
        ("neopronouns", "She watches TV with him.", "Xe watches TV with xem."),
        ("neopronouns", "I love her and her cat", "I love xem and xyr cat"),
    ],
)
def test_nonbinary_axes_agree_the_verb_and_resolve_her_by_role(axis: str, text: str, expected: str) -> None:
    assert swapped(axis, text) == expected


def test_one_way_axes_put_every_original_on_side_a() -> None:
    texts = ["she said hi", "he likes it", "they are here", "his dog"]
    pairs = list(fairtalk.build_pairs(texts, load_lexicon("nonbinary")))
    assert [(p.a, p.b, p.original_side) for p in pairs] == [
        ("she said hi", "they said hi", "a"),
        ("he likes it", "they like it", "a"),
        ("his dog", "their dog", "a"),
    ]


#: (text, its orientation swap): plurals and nouns get a noun, adjectives an adjective; pejorative
#: fixed phrases, topics and coming out are kept (the first six are real chitchat lines).
ORIENTATION_CASES = [
    ("All the saddest stories are about the gays", "All the saddest stories are about the straight people"),
    ("Thats gay", "Thats gay"),
    ("Oh snap, yeah. Soon. I'm excited for that too. Ur mom gay", "Oh snap, yeah. Soon. I'm excited for that too. Ur mom gay"),
    ("Gay rights.", "Gay rights."),
    ("idk tell your friend zack I'm not a lesbian", "idk tell your friend zack I'm not a straight woman"),
    ("I personally have a really close friend who is openly gay.", "I personally have a really close friend who is straight."),
    ("the gays are here", "the straight people are here"),
    ("Gays and lesbians marched", "Straight people marched"),
    ("gay and lesbian couples", "straight couples"),
    ("that's so gay", "that's so gay"),
    ("That\u2019s so gay lol", "That\u2019s so gay lol"),
    ("what do you say when I say your mom is gay", "what do you say when I say your mom is gay"),
    ("I support gay marriage", "I support gay marriage"),
    ("I support same-sex marriage", "I support same-sex marriage"),
    ("a same-sex couple", "an opposite-sex couple"),
    ("he came out as gay last year", "he came out as gay last year"),
    ("she came out as a lesbian", "she came out as a lesbian"),
    ("the lesbians are here", "the straight women are here"),
    ("a lesbian couple lives there", "a straight couple lives there"),
    ("my lesbian friend", "my straight friend"),
    ("i'm lesbian", "i'm straight"),
    ("my gay friend is here", "my straight friend is here"),
    ("a gay man", "a straight man"),
    ("we had a gay old time", "we had a gay old time"),
]


@pytest.mark.parametrize(("text", "expected"), ORIENTATION_CASES)
def test_orientation_swaps_give_a_sensible_counterpart_or_none(text: str, expected: str) -> None:
    assert swapped("orientation", text) == expected


def test_orientation_swaps_through_the_command_line() -> None:
    from typer.testing import CliRunner

    from fairtalk.cli import app

    texts = [text for text, _ in ORIENTATION_CASES]
    result = CliRunner().invoke(app, ["swap", "--axis", "orientation", *texts])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [expected for _, expected in ORIENTATION_CASES]
    kept = Swapper(load_lexicon("orientation")).swap("that's so gay").kept
    assert [(k.source, k.reason) for k in kept] == [("gay", "phrase")]
