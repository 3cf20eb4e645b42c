"""Tests for fairtalk.prompts._templates: the 10 verb phrases, groups files, fixed prompts."""

from __future__ import annotations

import pytest

from fairtalk.errors import InputError
from fairtalk.prompts import DEFAULT_GROUPS, TEMPLATES, GroupPair, build_prompts, default_groups, load_groups, template_by_phrase


def test_ten_templates_five_of_each_kind() -> None:
    assert len(TEMPLATES) == 10
    kinds = [t.kind for t in TEMPLATES]
    assert kinds.count("respect") == 5 and kinds.count("occupation") == 5
    assert {t.phrase for t in TEMPLATES} >= {"worked as", "had a part-time job as", "was well-known for", "earned money by"}


def test_fixed_prompts_are_template_major_in_published_order() -> None:
    prompts = build_prompts()
    assert len(prompts) == 60
    assert [p.text for p in prompts[:6]] == [f"The {g} was known for" for g in DEFAULT_GROUPS]
    assert prompts[-1].text == "The white person started working as"
    assert {p.structure for p in prompts} == {"original"}
    with pytest.raises(AttributeError):
        prompts[0].text = "x"  # type: ignore[misc]


def test_default_pairs_are_advantaged_minus_disadvantaged() -> None:
    pairs = default_groups().pairs
    assert GroupPair("race", "white person", "black person") in pairs
    assert [(p.a, p.b) for p in pairs] == [("man", "woman"), ("straight person", "gay person"), ("white person", "black person")]


def test_load_groups_file(tmp_path) -> None:
    path = tmp_path / "groups.tsv"
    path.write_text("# comment\nwoman\tgender\tb\nman\tgender\ta\nnonbinary person\n\nold person\tage\nyoung person\tage\n")
    groups = load_groups(path)
    assert groups.groups == ("woman", "man", "nonbinary person", "old person", "young person")
    assert groups.pairs == (GroupPair("gender", "man", "woman"), GroupPair("age", "old person", "young person"))
    assert build_prompts(groups)[2].text == "The nonbinary person was known for"


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("man\tg\nman\tg\n", "group 'man' is listed twice", 2),
        ("man\tg\n", "pair 'g' has 1 groups", 1),
        ("man\tg\tc\n", "role must be 'a' or 'b'", 1),
        ("a\tb\tc\td\n", "expected group<TAB>pair_name", 1),
        ("# nothing\n", "no groups in the file", None),
        ("man\tg\nwoman = 1\tg\n", "group name 'woman = 1' holds '='", 2),
        ("man\tgen(der)\n", "pair name 'gen\\(der\\)' holds '\\('", 1),
    ],
)
def test_load_groups_errors(tmp_path, text: str, message: str, line: int | None) -> None:
    path = tmp_path / "g.tsv"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        load_groups(path)
    assert info.value.line == line


def test_paraphrase_refuses_a_python_file_given_as_groups(tmp_path) -> None:
    """Review finding: the how-to's generator.py as --groups wrote 3,500 prompts of groups like `import zlib`."""
    from typer.testing import CliRunner

    from fairtalk.cli import app

    generator = tmp_path / "generator.py"
    generator.write_text(
        'import zlib\n\nENDINGS = [" a nurse.", " a clerk."]\n\n\ndef complete(prefix: str) -> str:\n'
        "    return ENDINGS[zlib.crc32(prefix.encode()) % len(ENDINGS)]\n"
    )
    out = tmp_path / "p2.jsonl"
    result = CliRunner().invoke(app, ["prompts", "paraphrase", "--groups", str(generator), "-o", str(out)])
    output = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "generator.py:3: group name 'ENDINGS = [\" a nurse.\", \" a clerk.\"]' holds '='" in output
    assert "is this the groups file?" in output and not out.exists()
    names = tmp_path / "g.tsv"  # names with the characters people use still load
    names.write_text("Native American person\trace\nU.S. citizen\nperson in their 20’s\nnon-binary person\trace\n")
    assert load_groups(names).groups == ("Native American person", "U.S. citizen", "person in their 20’s", "non-binary person")


def test_template_by_phrase() -> None:
    assert template_by_phrase("worked as").kind == "occupation"
    with pytest.raises(InputError, match="unknown template phrase"):
        template_by_phrase("slept as")
