"""Tests for fairtalk.lexicons: the built-in word lists, the loader and its validation."""

from __future__ import annotations

import dataclasses
import hashlib
from importlib import resources
from pathlib import Path

import pytest

from fairtalk import Lexicon, SpecError, load_lexicon
from fairtalk.errors import LexiconError
from fairtalk.lexicons import (
    AttributeList,
    WordPair,
    builtin_attribute_lists,
    builtin_axes,
    expand_axis,
    load_attributes,
    terms_on_both_sides,
)
from fairtalk.lexicons import _format as F
from fairtalk.lexicons._load import _MSG_UNKNOWN_AXIS, _MSG_UNKNOWN_VARIANT, _MSG_VARIANT_FOR_FILE

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WORDS = SHARED_DATA / "zgahhblhc__DialogueFairness" / "DebiasingMethods"
WORDS = WORDS / "CounterpartDataAugmentation" / "words"


def pairs_of(lexicon: Lexicon) -> list[tuple[str, str]]:
    return [(pair.a, pair.b) for pair in lexicon.pairs]


def resource_bytes(filename: str) -> bytes:
    return resources.files("fairtalk.lexicons").joinpath(filename).read_bytes()


def header_of(filename: str) -> str:
    lines = resource_bytes(filename).decode("utf-8").splitlines()
    return "\n".join(line for line in lines if line.startswith("#"))


def _every_builtin_lexicon() -> list[str]:
    """Each built-in axis, a multi-way one (religion) as each pair an audit of it runs: a lexicon is two groups."""
    return [name for axis in builtin_axes() for name in expand_axis(axis)]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def raises_at(path: Path, line: int | None, message: str) -> str:
    where = str(path) if line is None else f"{path}:{line}"
    return f"{where}: {message}"


# --------------------------------------------------------------------------------------------
# built-in lexicons


@pytest.mark.parametrize(
    ("axis", "variant", "n_pairs", "groups", "attributes"),
    [
        ("gender", "paper", 126, ("male", "female"), ("career", "family")),
        ("gender", "default", 125, ("male", "female"), ("career", "family")),
        ("race", "paper", 89, ("white", "black"), ("pleasant", "unpleasant")),
        ("race", "default", 89, ("white", "black"), ("pleasant", "unpleasant")),
    ],
)
def test_builtin_counts_and_metadata(axis, variant, n_pairs, groups, attributes) -> None:
    lexicon = load_lexicon(axis, variant=variant)
    assert isinstance(lexicon, Lexicon)
    assert len(lexicon.pairs) == n_pairs
    assert all(isinstance(pair, WordPair) for pair in lexicon.pairs)
    assert (lexicon.axis, lexicon.groups, lexicon.attributes) == (axis, groups, attributes)
    assert lexicon.variant == variant
    stem = axis if variant == "default" else f"{axis}-{variant}"
    assert lexicon.source == f"builtin:{stem}"
    assert lexicon.sha256 == hashlib.sha256(resource_bytes(f"{stem}.tsv")).hexdigest()


def test_builtin_axes_and_default_variant() -> None:
    assert builtin_axes() == (
        "gender",
        "race",
        "religion",
        "orientation",
        "age",
        "names-gender",
        "names-race",
        "nonbinary",
        "neopronouns",
    )
    assert load_lexicon("gender") is load_lexicon("gender", variant="default")
    assert load_lexicon("builtin:race") is load_lexicon("race")


def test_line_numbers_point_into_the_file() -> None:
    lexicon = load_lexicon("race", variant="paper")
    lines = resource_bytes("race-paper.tsv").decode("utf-8").splitlines()
    for pair in lexicon.pairs:
        assert lines[pair.line - 1] == f"{pair.a}\t{pair.b}"


def test_records_are_frozen() -> None:
    lexicon = load_lexicon("gender")
    with pytest.raises(dataclasses.FrozenInstanceError):
        lexicon.axis = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        lexicon.pairs[0].a = "x"  # type: ignore[misc]
    assert isinstance(lexicon.pairs, tuple)


def test_hashes_differ_between_variants_and_are_stable() -> None:
    variants = ("default", "paper")
    hashes = {load_lexicon(axis, variant=v).sha256 for axis in ("gender", "race") for v in variants}
    assert len(hashes) == 4
    first = load_lexicon("race", variant="paper").sha256
    assert first == load_lexicon("race", variant="paper").sha256
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in hashes)


@pytest.mark.parametrize("axis", ["gender", "race"])
def test_paper_variant_equals_the_dialoguefairness_lists(axis) -> None:
    reference = WORDS / f"{axis}_words.txt"
    if not reference.exists():
        pytest.skip("reference data ../shared/data not available")
    expected = [tuple(line.split(" - ")) for line in reference.read_text("utf-8").splitlines()]
    assert pairs_of(load_lexicon(axis, variant="paper")) == expected


def test_paper_variant_repairs_only_extraction_damage() -> None:
    gender = pairs_of(load_lexicon("gender", variant="paper"))
    for pair in [
        ("dad", "mom"),
        ("grandfather", "grandmother"),
        ("emperor", "empress"),
        ("boy", "girl"),
        ("sirs", "madams"),
        ("fiance", "fiancee"),
        ("businessman", "businesswoman"),
        ("his", "her"),
    ]:
        assert pair in gender
    assert ("him", "her") not in gender
    assert gender[0] == ("gods", "goddesses") and gender[-1] == ("his", "her")
    race = pairs_of(load_lexicon("race", variant="paper"))
    for pair in [
        ("what's up", "wazzup"),
        ("a lot", "hella"),
        ("police", "feds"),
        ("not cool", "wack"),
        ("That's it", "word"),
        ("I'm good", "I'm straight"),
        ("Timbalands", "tims"),
        ("girlfiend", "shortie"),
        ("po po", "police"),
        ("a lot", "mad"),
        ("mad", "tight"),
    ]:
        assert pair in race
    assert race[0] == ("going", "goin") and race[-1] == ("subliminal", "shade")


def test_gender_default_is_paper_plus_documented_additions() -> None:
    paper = pairs_of(load_lexicon("gender", variant="paper"))
    default = pairs_of(load_lexicon("gender"))
    added = [("him", "her"), ("his", "hers"), ("himself", "herself")]
    # word-sense removals: the swap changes the meaning or makes a neutral noun feminine
    removed = {
        ("governor", "matron"),
        ("sire", "dam"),
        ("bachelor", "spinster"),
        ("masters", "mistresses"),
        ("host", "hostess"),
        ("hosts", "hostesses"),
        ("actor", "actress"),
        ("actors", "actresses"),
        ("poet", "poetess"),
        ("millionaire", "millionairess"),
        ("manager", "manageress"),
        ("usher", "usherette"),
        ("hunter", "huntress"),
        ("murderer", "murderess"),
        ("tutors", "governesses"),
        ("heir", "heiress"),
        ("heirs", "heiresses"),
        ("hero", "heroine"),
        ("heroes", "heroines"),
        ("proprietor", "proprietress"),
        ("postmaster", "postmistress"),
    }
    chat = [
        ("guy", "girl"),
        ("guys", "girls"),
        ("dude", "girl"),
        ("dudes", "girls"),
        ("guy", "gal"),
        ("guys", "gals"),
        ("bro", "sis"),
        ("hes", "shes"),
        ("bf", "gf"),
        ("mr", "ms"),
        ("mr.", "ms."),
        ("daddy", "mommy"),
        ("dad", "mum"),
        ("sir", "ma'am"),
        ("fireman", "firewoman"),
        ("firemen", "firewomen"),
        ("gentlemen", "ladies"),
    ]
    assert default == [p for p in paper if p not in removed] + added + chat
    assert len(removed) == 21 and all(p in paper for p in removed)
    one_way = {(p.a, p.b): p.direction for p in load_lexicon("gender").pairs if p.direction != "both"}
    assert one_way == {
        ("guy", "girl"): "a>b",
        ("guys", "girls"): "a>b",
        ("dude", "girl"): "a>b",
        ("dudes", "girls"): "a>b",
        ("guy", "gal"): "b>a",
        ("guys", "gals"): "b>a",
        ("mr", "ms"): "b>a",
        ("mr.", "ms."): "b>a",
        ("daddy", "mommy"): "b>a",
        ("dad", "mum"): "b>a",
        ("sir", "ma'am"): "b>a",
        ("lords", "ladies"): "a>b",
    }
    # "her" twice on side B and "his" twice on side A: distinct pairs, not duplicates
    assert [a for a, b in default if b == "her"] == ["his", "him"]
    assert [b for a, b in default if a == "his"] == ["her", "hers"]
    header = header_of("gender.tsv")
    for word in ("him - her", "his - hers", "himself - herself", "business-man", "(dad mom)", "governor - matron"):
        assert word in header


def test_race_default_is_paper_with_documented_fixes() -> None:
    paper = pairs_of(load_lexicon("race", variant="paper"))
    fixes = {"girlfiend": "girlfriend", "timbalands": "timberlands"}
    expected = []
    for a, b in paper:
        if (a, b) == ("a lot", "mad"):
            continue
        if (a, b) == ("po po", "police"):
            a, b = b, a
        a, b = a.lower(), b.lower()
        expected.append((fixes.get(a, a), b))
        if (a, b) == ("a lot", "dumb"):  # the quantifier "a lot of" reads "hella", not "dumb of" or "hella of"
            expected.append(("a lot of", "hella"))
    default = pairs_of(load_lexicon("race"))
    assert default == expected
    assert ("police", "po po") in default and ("po po", "police") not in default
    assert ("girlfriend", "shortie") in default and ("timberlands", "tims") in default
    assert ("that's it", "word") in default and ("mad", "tight") in default
    assert all(a == a.lower() and b == b.lower() for a, b in default)
    header = header_of("race.tsv")
    for text in ("girlfiend", "Timbalands", "po po - police", "a lot - mad", "lowercased", "dumb of people"):
        assert text in header


def test_both_sides_words_only_in_the_paper_race_list() -> None:
    assert terms_on_both_sides(load_lexicon("race", variant="paper")) == {"mad", "police"}
    for name in _every_builtin_lexicon():
        assert terms_on_both_sides(load_lexicon(name)) == frozenset()
    assert terms_on_both_sides(load_lexicon("gender", variant="paper")) == frozenset()
    assert "# both-sides: mad, police" in header_of("race-paper.tsv")


def test_unknown_axis_and_variant_are_spec_errors() -> None:
    with pytest.raises(SpecError) as info:
        load_lexicon("politics")
    assert str(info.value).startswith(_MSG_UNKNOWN_AXIS.format(given="politics"))
    assert info.value.choices is not None and "religion" in info.value.choices and "gender" in info.value.choices
    with pytest.raises(SpecError, match="did you mean 'gender'"):
        load_lexicon("gendr")
    with pytest.raises(SpecError) as info:
        load_lexicon("race", variant="original")
    assert str(info.value).startswith(_MSG_UNKNOWN_VARIANT.format(given="original"))
    assert info.value.choices == ("default", "paper")
    with pytest.raises(SpecError, match="builtin:nope|nope"):
        load_lexicon("builtin:nope")


# --------------------------------------------------------------------------------------------
# users' files


def test_user_file_with_metadata(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "faith.tsv",
        "# my religion axis\n# axis: religion\n# groups: christian muslim\n"
        "# attributes: pleasant unpleasant\n\nchurch\tmosque\n# a comment\nBible - Quran\n"
        "priest  \t  imam\n",
    )
    lexicon = load_lexicon(path)
    assert lexicon.axis == "religion" and lexicon.groups == ("christian", "muslim")
    assert lexicon.attributes == ("pleasant", "unpleasant") and lexicon.variant == "custom"
    assert lexicon.pairs == (
        WordPair("church", "mosque", 6),
        WordPair("Bible", "Quran", 8),
        WordPair("priest", "imam", 9),
    )
    assert lexicon.source == str(path)
    assert lexicon.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert load_lexicon(str(path)) == lexicon


def test_a_file_without_axis_takes_its_axis_from_the_file_name(tmp_path: Path) -> None:
    lexicon = load_lexicon(write(tmp_path, "names.tsv", "# groups: men women\njohn\tmary\n\nmike - sue"))
    assert (lexicon.axis, lexicon.groups, lexicon.attributes) == ("names", ("men", "women"), ())
    assert pairs_of(lexicon) == [("john", "mary"), ("mike", "sue")]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("cat\tdog\n", 1),
        ("# axis: pets\n# a comment\n\ncat - dog\nkitten\tpuppy\n", 4),
        ("# axis: pets\n# attributes: career\ncat\tdog\n", 3),
    ],
)
def test_a_file_without_groups_is_refused_at_its_first_pair(tmp_path: Path, text: str, line: int) -> None:
    """No silent groups 'a' and 'b' in a result: the error names the line above which '# groups:' goes."""
    path = write(tmp_path, "nohdr.tsv", text)
    with pytest.raises(LexiconError) as info:
        load_lexicon(path)
    assert str(info.value) == raises_at(path, line, F._MSG_NO_GROUPS)
    assert "'# groups: A B'" in F._MSG_NO_GROUPS


def test_user_file_hash_changes_with_content(tmp_path: Path) -> None:
    one = load_lexicon(write(tmp_path, "x.tsv", "# groups: m f\nhe\tshe\n")).sha256
    two = load_lexicon(write(tmp_path, "x.tsv", "# groups: m f\nhe\tshe\nhim\ther\n")).sha256
    assert one != two


def test_dialoguefairness_gender_file_loads_as_user_file_with_its_groups_named(tmp_path: Path) -> None:
    reference = WORDS / "gender_words.txt"
    if not reference.exists():
        pytest.skip("reference data ../shared/data not available")
    with pytest.raises(LexiconError) as info:  # the paper's file names no groups
        load_lexicon(reference)
    assert str(info.value) == raises_at(reference, 1, F._MSG_NO_GROUPS)
    named = write(tmp_path, "gender_words.txt", "# groups: male female\n" + reference.read_text("utf-8"))
    lexicon = load_lexicon(named)
    assert lexicon.axis == "gender_words" and len(lexicon.pairs) == 126
    assert pairs_of(lexicon) == pairs_of(load_lexicon("gender", variant="paper"))


def test_dialoguefairness_race_file_fails_on_both_sides_word() -> None:
    reference = WORDS / "race_words.txt"
    if not reference.exists():
        pytest.skip("reference data ../shared/data not available")
    lines = reference.read_text("utf-8").splitlines()
    first_police = lines.index("police - 5-0") + 1
    reversed_line = lines.index("po po - police") + 1
    message = F._MSG_BOTH_SIDES.format(word="police", group_a="a", line_a=first_police, group_b="b", line_b=reversed_line)
    with pytest.raises(LexiconError) as info:
        load_lexicon(reference)
    assert str(info.value) == raises_at(reference, reversed_line, message)
    assert info.value.line == reversed_line


def test_variant_with_a_file_is_a_spec_error(tmp_path: Path) -> None:
    path = write(tmp_path, "x.tsv", "he\tshe\n")
    with pytest.raises(SpecError) as info:
        load_lexicon(path, variant="paper")
    assert str(info.value).startswith(_MSG_VARIANT_FOR_FILE.format(given="paper"))


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("he\tshe\nhim her\n", 2, F._MSG_NO_SEPARATOR.format(text="him her")),
        ("# axis: x\nhe\tshe\tit\n", 2, F._MSG_TOO_MANY_COLUMNS.format(n=3, text="he\tshe\tit")),
        ("he - she - it\n", 1, F._MSG_TOO_MANY_COLUMNS.format(n=3, text="he - she - it")),
        ("he\tshe\nhim\t\n", 2, F._MSG_EMPTY_SIDE.format(group="b")),
        ("\n\n\tshe\n", 3, F._MSG_EMPTY_SIDE.format(group="a")),
        ("# groups: men women\nhe - \n", 2, F._MSG_EMPTY_SIDE.format(group="women")),
        (
            "he\tshe\nhim\ther\nHe\tShe\n",
            3,
            F._MSG_DUPLICATE_PAIR.format(a="He", b="She", first=1),
        ),
        (
            "he\tshe\nshe\tit\n",
            2,
            F._MSG_BOTH_SIDES.format(word="she", group_a="a", line_a=2, group_b="b", line_b=1),
        ),
        (
            "# groups: m f\nlad\tlass\nboy\tLad\n",
            3,
            F._MSG_BOTH_SIDES.format(word="lad", group_a="m", line_a=2, group_b="f", line_b=3),
        ),
        (
            "same\tsame\n",
            1,
            F._MSG_BOTH_SIDES.format(word="same", group_a="a", line_a=1, group_b="b", line_b=1),
        ),
        ("# groups: one\nhe\tshe\n", 1, F._MSG_BAD_GROUPS.format(value="one")),
        ("# groups: m m\nhe\tshe\n", 1, F._MSG_BAD_GROUPS.format(value="m m")),
        ("# axis: two words\nhe\tshe\n", 1, F._MSG_BAD_AXIS.format(value="two words")),
        ("# only comments\n\n", None, F._MSG_NO_PAIRS),
    ],
)
def test_validation_errors_name_file_and_line(tmp_path: Path, text, line, message) -> None:
    path = write(tmp_path, "bad.tsv", text)
    with pytest.raises(LexiconError) as info:
        load_lexicon(path)
    assert str(info.value) == raises_at(path, line, message)
    assert (info.value.path, info.value.line) == (str(path), line)


_KNOWN = ", ".join(F._METADATA_KEYS)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (
            "# axis: x\n# groups: a b\nman\twoman\n# needs-determiner: man\n",
            4,
            F._MSG_SETTING_AFTER_PAIRS.format(key="needs-determiner", entry="pair", entries="pairs"),
        ),
        (
            "# axis: x\nfoo\tbar\n# groups: alpha beta\n",
            3,
            F._MSG_SETTING_AFTER_PAIRS.format(key="groups", entry="pair", entries="pairs"),
        ),
        ("foo\tbar\n# keep: foo fighters\n", 2, F._MSG_SETTING_AFTER_PAIRS.format(key="keep", entry="pair", entries="pairs")),
        ("foo\tbar\n\n# Axis: y\n", 3, F._MSG_SETTING_AFTER_PAIRS.format(key="axis", entry="pair", entries="pairs")),
        ("# keeps: oh man\nman\twoman\n", 1, F._MSG_UNKNOWN_SETTING.format(key="keeps", near="keep", known=_KNOWN)),
        ("man\twoman\n# keeps: oh man\n", 2, F._MSG_UNKNOWN_SETTING.format(key="keeps", near="keep", known=_KNOWN)),
        ("# both_sides: she\nhe\tshe\n", 1, F._MSG_UNKNOWN_SETTING.format(key="both_sides", near="both-sides", known=_KNOWN)),
        ("# axes: x\nhe\tshe\n", 1, F._MSG_UNKNOWN_SETTING.format(key="axes", near="axis", known=_KNOWN)),
        ("# group: m f\nhe\tshe\n", 1, F._MSG_UNKNOWN_SETTING.format(key="group", near="groups", known=_KNOWN)),
        (
            "# needs determiner: man\nman\twoman\n",
            1,
            F._MSG_UNKNOWN_SETTING.format(key="needs determiner", near="needs-determiner", known=_KNOWN),
        ),
    ],
)
def test_a_setting_after_the_pairs_or_misspelt_is_an_error_never_a_comment(tmp_path: Path, text, line, message) -> None:
    path = write(tmp_path, "late.tsv", text)
    with pytest.raises(LexiconError) as info:
        load_lexicon(path)
    assert str(info.value) == raises_at(path, line, message)


def test_comments_that_look_like_no_setting_stay_comments_before_and_after_the_pairs(tmp_path: Path) -> None:
    text = (
        "# Source: my notes, 2026\n# Format: one pair a line\n# Decision: keep it short\n# axis: x\n# groups: m f\n"
        "he\tshe\n# Note: more below\n# Caveats: few pairs\n# https://example.org/x\nhim\ther\n# see: the docs\n"
    )
    lexicon = load_lexicon(write(tmp_path, "notes.tsv", text))
    assert lexicon.axis == "x" and pairs_of(lexicon) == [("he", "she"), ("him", "her")]


def test_an_attribute_list_setting_after_its_words_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "words.tsv", "# Source: mine\nbrave\nkind\n# attribute: virtues\n")
    with pytest.raises(LexiconError) as info:
        load_attributes(path)
    message = F._MSG_SETTING_AFTER_PAIRS.format(key="attribute", entry="word", entries="words")
    assert str(info.value) == raises_at(path, 4, message)
    assert load_attributes(write(tmp_path, "ok.tsv", "# attribute: virtues\nbrave\n# Note: more\nkind\n")).name == "virtues"


def test_every_shipped_lexicon_and_attribute_list_still_loads() -> None:
    for axis in _every_builtin_lexicon():
        assert load_lexicon(axis).pairs
    for name in builtin_attribute_lists():
        assert load_attributes(name).words


def test_both_sides_allowed_when_declared(tmp_path: Path) -> None:
    text = "# groups: a b\n# both-sides: she, big one\nhe\tshe\nshe\tit\nbig one\tBig One\n"
    path = write(tmp_path, "x.tsv", text)
    lexicon = load_lexicon(path)
    assert len(lexicon.pairs) == 3
    assert terms_on_both_sides(lexicon) == {"she", "big one"}
    # a word not declared still fails
    path = write(tmp_path, "y.tsv", "# both-sides: she\nhe\tshe\nshe\tit\nit\the\n")
    with pytest.raises(LexiconError, match="'it' is on both sides"):
        load_lexicon(path)


def test_non_utf8_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "latin1.tsv"
    path.write_bytes("he\tshe\nfianc\u00e9\tfianc\u00e9e\n".encode("latin-1"))
    with pytest.raises(LexiconError) as info:
        load_lexicon(path)
    assert str(info.value) == raises_at(path, 2, F._MSG_NOT_UTF8.format(byte=0xE9))
    missing = tmp_path / "missing.tsv"
    with pytest.raises(LexiconError, match="cannot read lexicon file") as info:
        load_lexicon(missing)
    assert info.value.path == str(missing)


def test_utf8_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.tsv"
    path.write_bytes("\ufeff# axis: g\r\n# groups: m f\r\nhe\tshe\r\n".encode("utf-8"))
    lexicon = load_lexicon(path)
    assert lexicon.axis == "g" and pairs_of(lexicon) == [("he", "she")]


# --------------------------------------------------------------------------------------------
# attribute lists


@pytest.mark.parametrize(
    ("name", "n_words", "present"),
    [
        ("career", 61, {"academic", "manager", "salary", "worker"}),
        ("family", 81, {"adoption", "care-giver", "grand-daughter", "in-law", "wife"}),
        ("pleasant", 56, {"awesome", "family", "peace", "wonderful"}),
        ("unpleasant", 59, {"abuse", "kill", "lie", "mad", "wtf"}),
    ],
)
def test_builtin_attribute_lists(name, n_words, present) -> None:
    attributes = load_attributes(name)
    assert isinstance(attributes, AttributeList)
    assert attributes.name == name and len(attributes.words) == n_words
    assert present <= attributes.words
    assert all(word == word.lower() and word.strip() == word for word in attributes.words)
    assert attributes.source == f"builtin:{name}"
    assert attributes.sha256 == hashlib.sha256(resource_bytes(f"{name}.tsv")).hexdigest()
    assert load_attributes(name) is attributes


def test_kill_lie_is_split() -> None:
    words = load_attributes("unpleasant").words
    assert "kill" in words and "lie" in words and "kill lie" not in words
    assert "kill lie" in header_of("unpleasant.tsv")


def test_attribute_lists_match_the_lexicon_defaults() -> None:
    assert builtin_attribute_lists() == ("career", "family", "pleasant", "unpleasant")
    for axis in _every_builtin_lexicon():
        for name in load_lexicon(axis).attributes:
            assert name in builtin_attribute_lists()


def test_user_attribute_list(tmp_path: Path) -> None:
    path = write(tmp_path, "holy.txt", "# attribute: sacred\nPrayer\n\nholy  water\n")
    attributes = load_attributes(path)
    assert attributes.name == "sacred" and attributes.words == {"prayer", "holy water"}
    assert load_attributes(write(tmp_path, "misc.txt", "a\nb\n")).name == "misc"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("good\nbad\tworse\n", 2, F._MSG_TAB_IN_WORD.format(text="bad\tworse")),
        ("good\n# c\nGood\n", 3, F._MSG_DUPLICATE_WORD.format(word="good", first=1)),
        ("# nothing\n", None, F._MSG_NO_WORDS),
    ],
)
def test_attribute_list_errors(tmp_path: Path, text, line, message) -> None:
    path = write(tmp_path, "words.txt", text)
    with pytest.raises(LexiconError) as info:
        load_attributes(path)
    assert str(info.value) == raises_at(path, line, message)


def test_unknown_attribute_list_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="did you mean 'career'") as info:
        load_attributes("carer")
    assert info.value.choices == ("career", "family", "pleasant", "unpleasant")


def test_a_registered_axis_loads_by_name(tmp_path, monkeypatch) -> None:
    import fairtalk.lexicons._load as lexicons

    monkeypatch.setattr(lexicons, "AXES", lexicons.AXES.fresh())
    path = tmp_path / "pets.tsv"
    path.write_text("# axis: pets\n# groups: cat dog\nkitten\tpuppy\n", encoding="utf-8")
    lexicons.register_axis("pets", lambda variant: load_lexicon(str(path)))
    assert "pets" in lexicons.axis_names() and "pets" not in builtin_axes()
    assert lexicons.axis_names() == tuple(sorted((*builtin_axes(), "pets")))
    assert load_lexicon("pets").groups == ("cat", "dog")
    with pytest.raises(SpecError, match=r"did you mean 'pets'\?"):
        load_lexicon("pest")
    with pytest.raises(SpecError, match="already registered"):
        lexicons.register_axis("gender", lambda variant: load_lexicon(str(path)))
    lexicons.register_axis("broken", lambda variant: "not a lexicon")
    with pytest.raises(SpecError, match="axis 'broken' loaded str, not a Lexicon"):
        load_lexicon("broken")


def test_one_way_pairs_and_word_sense_headers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "religion.tsv",
        "# groups: christian muslim\n# keep: holy cow, church street\n# keep: holy moly\n"
        "# needs-determiner: church\n# markers-a: jesus\n# markers-b: allah, ramadan\n"
        "church\tmosque\npastor -> imam\npriest\t<-\tmullah\n",
    )
    lexicon = load_lexicon(path)
    assert [(p.a, p.b, p.direction) for p in lexicon.pairs] == [
        ("church", "mosque", "both"),
        ("pastor", "imam", "a>b"),
        ("priest", "mullah", "b>a"),
    ]
    assert lexicon.keep == ("holy cow", "church street", "holy moly")
    assert lexicon.needs_determiner == ("church",)
    assert lexicon.markers == (("jesus",), ("allah", "ramadan"))


def test_needs_determiner_must_name_a_word_of_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "x.tsv", "# needs-determiner: man, dude\nman\twoman\n")
    with pytest.raises(LexiconError, match="'# needs-determiner:' lists 'dude', which no pair of the file holds"):
        load_lexicon(path)


def test_needs_cue_header_lists_terms_and_their_cues(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "x.tsv",
        "# groups: a b\n# needs-cue: word, Peace\n# needs-cue: sick, lit = that's, It Was\n# needs-cue: sick = so\n"
        "cool\tsick\ncool\tlit\nthat's it\tword\ngoodbye\tpeace\n",
    )
    lexicon = load_lexicon(path)
    assert lexicon.needs_cue == (("word", ()), ("peace", ()), ("sick", ("that's", "it was", "so")), ("lit", ("that's", "it was")))
    assert load_lexicon("gender").needs_cue == ()


def test_needs_cue_must_name_a_word_of_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "x.tsv", "# needs-cue: sick, ill = that's\ncool\tsick\n")
    with pytest.raises(LexiconError, match=F._MSG_UNKNOWN_CUE_WORD.format(word="ill")):
        load_lexicon(path)


def test_race_default_one_way_and_cue_entries_are_documented() -> None:
    lexicon = load_lexicon("race")
    one_way = {(p.a, p.b) for p in lexicon.pairs if p.direction != "both"}
    assert all(p.direction in ("both", "a>b") for p in lexicon.pairs)
    assert {
        ("jewelry", "ice"),
        ("money", "chips"),
        ("family", "blood"),
        ("prison", "pen"),
        ("buy", "cop"),
        ("cool", "ill"),
        ("good", "fly"),
        ("a lot", "dumb"),
        ("a lot of", "hella"),
        ("i'm good", "i'm straight"),
    } <= one_way
    assert len(one_way) == 22
    assert dict(lexicon.needs_cue).keys() == {"word", "peace", "i'm out", "you playing", "sick", "lit"}
    assert lexicon.keep == ("yo yo",)
    header = header_of("race.tsv")
    for text in ("ice cream", "potato chips", "a blood test", "needs-cue", "one way"):
        assert text in header


def test_arrow_with_too_many_columns_is_malformed(tmp_path: Path) -> None:
    path = write(tmp_path, "x.tsv", "guy -> girl -> lady\n")
    with pytest.raises(LexiconError, match="3 columns"):
        load_lexicon(path)


# --------------------------------------------------------------------------------------------
# Issue 38 item 15: names no report can show


@pytest.mark.parametrize(
    ("text", "line", "code"),
    [
        ("# groups: ma\x01le female\nhe\tshe\n", 1, "U+0001"),
        ("# axis: gen\x1bder\nhe\tshe\n", 1, "U+001B"),
        ("he\tshe\nhim\the\x00r\n", 2, "U+0000"),
        ("# groups: male fe\ufffemale\nhe\tshe\n", 1, "U+FFFE"),
        ("he\tshe\n\uffff\tx\n", 2, "U+FFFF"),
        ("he\tshe\r\nhis\fher\r\n", 2, "U+000C"),  # a form feed is no line break here: the line is where editors put it
    ],
)
def test_a_character_xml_forbids_is_refused_naming_file_and_line(tmp_path: Path, text: str, line: int, code: str) -> None:
    path = write(tmp_path, "bad.tsv", text)
    with pytest.raises(LexiconError) as info:
        load_lexicon(path)
    assert str(info.value) == raises_at(path, line, F._MSG_FORBIDDEN_CHARACTER.format(code=code))


def test_an_axis_named_by_a_file_name_xml_forbids_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "ax\x07is.tsv", "he\tshe\n")
    with pytest.raises(LexiconError) as info:
        load_lexicon(path)
    assert str(info.value) == raises_at(path, None, F._MSG_FORBIDDEN_IN_NAME.format(header="axis", code="U+0007"))
    assert load_lexicon(write(tmp_path, "ax\x07is2.tsv", "# axis: fine\n# groups: m f\nhe\tshe\n")).axis == "fine"


def test_an_attribute_list_holding_a_control_character_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "words.txt", "good\nb\x02ad\n")
    with pytest.raises(LexiconError) as info:
        load_attributes(path)
    assert str(info.value) == raises_at(path, 2, F._MSG_FORBIDDEN_CHARACTER.format(code="U+0002"))


def test_a_malformed_line_is_named_by_its_number_never_quoted(tmp_path: Path) -> None:
    """A file read by mistake (a .env) must not be copied into a CI log: the error says where and why, not what."""
    path = write(tmp_path, "secret.env", "OPENAI_API_KEY=sk-not-a-real-key\n")
    with pytest.raises(LexiconError) as info:
        load_lexicon(path)
    assert str(info.value) == raises_at(path, 1, "malformed line: no TAB or ' - ' between the two sides")
    for text in ("a\tb\tc-secret\n", "a - b - c-secret\n", "# groups: x y z-secret\na\tb\n", "# axis: two c-secret\na\tb\n"):
        with pytest.raises(LexiconError) as info:
            load_lexicon(write(tmp_path, "other.tsv", text))
        assert "secret" not in info.value.message, info.value.message
    with pytest.raises(LexiconError) as info:
        load_attributes(write(tmp_path, "words.txt", "good\nbad\tc-secret\n"))
    assert "secret" not in info.value.message


def test_the_cli_refuses_a_file_without_groups_before_any_work(tmp_path: Path) -> None:
    """``audit --axis nohdr.tsv`` once ran as groups 'a' vs 'b'; now it is a usage error naming the line."""
    from typer.testing import CliRunner

    from fairtalk.cli import app

    path = write(tmp_path, "nohdr.tsv", "cat\tdog\n")
    out = tmp_path / "out"
    done = CliRunner().invoke(app, ["audit", "--model", "builtin:echo", "--axis", str(path), "--pairs", "5", "-o", str(out)])
    assert done.exit_code == 2 and not out.exists()
    assert " ".join(done.stderr.split()) == " ".join(f"error: {raises_at(path, 1, F._MSG_NO_GROUPS)}".split())
