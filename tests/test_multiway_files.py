"""A multi-way lexicon file of the user's own: audited like ``religion``, one pair of groups by ``PATH:A-B``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk import SpecError, load_lexicon
from fairtalk.cli import app
from fairtalk.errors import LexiconError
from fairtalk.lexicons import axis_groups, expand_axis, lexicon_by_name
from fairtalk.lexicons._load import _MSG_PAIR_OF_TWO

runner = CliRunner()
PETS = "# axis: pets\n# groups: cat dog fish\nkitten\tpuppy\tfry\ncat\tdog\tfish\ncats\tdogs\t-\n"


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def pets(tmp_path: Path) -> Path:
    path = tmp_path / "mw.tsv"
    path.write_text(PETS, encoding="utf-8")
    return path


def test_a_file_expands_like_religion_to_the_first_group_against_each(pets: Path) -> None:
    assert expand_axis(str(pets)) == (f"{pets}:cat-dog", f"{pets}:cat-fish")
    assert axis_groups(str(pets)) == ("cat", "dog", "fish")
    two = pets.with_name("two.tsv")
    two.write_text("# groups: cat dog\nkitten\tpuppy\n", encoding="utf-8")
    assert expand_axis(str(two)) == (str(two),) and axis_groups(str(two)) == ("cat", "dog")


def test_path_and_two_groups_loads_that_pair_as_a_custom_lexicon_of_the_file(pets: Path) -> None:
    lexicon = load_lexicon(f"{pets}:cat-fish")
    assert (lexicon.axis, lexicon.groups, lexicon.variant, lexicon.source) == (
        "pets:cat-fish",
        ("cat", "fish"),
        "custom",
        str(pets),
    )
    assert [(p.a, p.b) for p in lexicon.pairs] == [("kitten", "fry"), ("cat", "fish")]
    assert lexicon.markers == (("cats",), ())  # no fish counterpart: a marker of its group, as for religion
    assert load_lexicon(f"{pets}:fish-dog").groups == ("fish", "dog")


def test_a_bare_multiway_file_is_refused_naming_its_pairs(pets: Path) -> None:
    with pytest.raises(LexiconError) as info:
        load_lexicon(pets)
    pairs = f"{pets}:cat-dog, {pets}:cat-fish"
    message = (
        f"the file has 3 groups and a lexicon pairs two: choose a pair ({pairs}, or {pets}:A-B for any two of cat, dog, "
        f"fish); an audit of {pets} runs cat against each"
    )
    assert str(info.value) == f"{pets}: {message}"


def test_a_pair_of_groups_the_file_lacks_or_of_a_two_group_file_is_an_error(pets: Path) -> None:
    with pytest.raises(SpecError, match="'pets' has no group 'bird'"):
        load_lexicon(f"{pets}:cat-bird")
    with pytest.raises(SpecError, match="two different groups"):
        load_lexicon(f"{pets}:cat-cat")
    two = pets.with_name("two.tsv")
    two.write_text("# groups: m f\nhe\tshe\n", encoding="utf-8")
    with pytest.raises(LexiconError) as info:
        load_lexicon(f"{two}:m-f")
    assert str(info.value) == f"{two}: " + _MSG_PAIR_OF_TWO.format(path=two, chosen="m-f", groups="m, f")
    with pytest.raises(SpecError, match="unknown lexicon axis"):  # a run folder's name never reads a file
        lexicon_by_name(f"{pets}:cat-dog")


def test_a_file_whose_name_holds_a_colon_is_still_that_file(tmp_path: Path) -> None:
    path = tmp_path / "pets:cat-dog.tsv"
    path.write_text("# groups: cat dog\nkitten\tpuppy\n", encoding="utf-8")
    assert load_lexicon(str(path)).groups == ("cat", "dog")


def test_a_malformed_multiway_file_names_its_line_wherever_it_is_read(pets: Path) -> None:
    pets.write_text("# groups: cat dog fish\nkitten\tpuppy\n", encoding="utf-8")
    for call in (lambda: expand_axis(str(pets)), lambda: load_lexicon(pets), lambda: load_lexicon(f"{pets}:cat-dog")):
        with pytest.raises(LexiconError, match="one column a group"):
            call()


def test_cli_single_pair_commands_take_path_a_b_and_refuse_the_bare_file(pets: Path, tmp_path: Path) -> None:
    done = runner.invoke(app, ["swap", "--lexicon", f"{pets}:cat-fish", "my kitten and my cat"])
    assert done.exit_code == 0, done.output
    assert done.stdout == "my fry and my fish\n"
    pairs = f"{pets}:cat-dog, {pets}:cat-fish"
    as_religion = (
        f"--axis {pets} has 3 groups and this command compares two: choose a pair ({pairs}, or {pets}:A-B for any two of "
        f"cat, dog, fish); `fairtalk audit --axis {pets}` runs cat against each"
    )
    for command in (["swap", "--axis", str(pets), "kitten"], ["pairs", "--corpus", "builtin:chitchat", "--axis", str(pets)]):
        done = runner.invoke(app, command)
        assert done.exit_code == 2 and done.stdout == ""
        assert _flat(done.stderr) == _flat(f"error: {as_religion}")
    done = runner.invoke(app, ["swap", "--lexicon", str(pets), "kitten"])
    assert done.exit_code == 2 and "mw.tsv:cat-fish" in _flat(done.stderr) and "Traceback" not in done.output
    corpus = tmp_path / "c.txt"
    corpus.write_text("my cat is sweet\nthe kitten slept\na dog barked\n", encoding="utf-8")
    out = tmp_path / "p.jsonl"
    done = runner.invoke(app, ["pairs", "--corpus", f"text:{corpus}", "--axis", f"{pets}:cat-fish", "-o", str(out)])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["axis"], r["a"], r["b"]) for r in rows] == [
        ("pets:cat-fish", "my cat is sweet", "my fish is sweet"),
        ("pets:cat-fish", "the kitten slept", "the fry slept"),
    ]


def test_audit_of_a_multiway_file_runs_the_first_group_against_each_with_the_group_table(pets: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(f"my cat is sweet {i}\nthe kitten slept {i}\na dog barked {i}\n" for i in range(12)))
    out = tmp_path / "out"
    args = ["--model", "builtin:echo", "--corpus", f"text:{corpus}", "--axis", str(pets), "--pairs", "10", "-o", str(out)]
    done = runner.invoke(app, ["audit", *args])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["pets_cat-dog", "pets_cat-fish"]
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'data-multiway="pets"' in index
    assert "<th>dog vs cat</th>" in index and "<th>fish vs cat</th>" in index
    result = json.loads((out / "pets_cat-fish" / "results.json").read_text(encoding="utf-8"))
    assert result["groups"] == ["cat", "fish"] and result["manifest"]["lexicon"]["source"] == str(pets)
    assert result["correction_scope"].startswith("multi-way axis pets")
