"""The multi-way lexicon format (one column a group): its ``#`` lines follow the two-group format's rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk.lexicons._load as lexicons
from fairtalk.cli import app
from fairtalk.errors import LexiconError
from fairtalk.lexicons import _format as F
from fairtalk.lexicons import load_lexicon
from fairtalk.lexicons._load import parse_multiway
from fairtalk.lexicons._multiway import (
    _MSG_BAD_GROUPS,
    _MSG_COLUMNS,
    _MSG_EMPTY_CELL,
    _MSG_NO_GROUPS,
    _MSG_NO_ROWS,
    _MSG_NO_WORD,
)

SOURCE = "mine.tsv"
HEAD = "# axis: faith\n# groups: x y z\n"
_MULTIWAY_KNOWN = "axis, groups, variant, keep, needs-determiner, attributes"


def parse(text: str | bytes):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse_multiway(data, source=SOURCE, stem="stem")


def after_rows(key: str) -> str:
    return F._MSG_SETTING_AFTER_PAIRS.format(key=key, entry="row", entries="rows")


def unknown(key: str, near: str) -> str:
    return F._MSG_UNKNOWN_SETTING.format(key=key, near=near, known=_MULTIWAY_KNOWN)


def not_read(key: str) -> str:
    return F._MSG_SETTING_NOT_READ.format(key=key, kind="multi-way lexicon", known=_MULTIWAY_KNOWN)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        # a misspelt setting is an error, never a comment (as in a two-group file)
        (HEAD + "# kep: holy cow\na\tb\tc\n", 3, unknown("kep", "keep")),
        (HEAD + "# atributes: career\na\tb\tc\n", 3, unknown("atributes", "attributes")),
        ("# axes: faith\n# groups: x y z\na\tb\tc\n", 1, unknown("axes", "axis")),
        ("# group: x y z\na\tb\tc\n", 1, unknown("group", "groups")),
        # a setting of the two-group format only is not read here: an error, never silently dropped
        (HEAD + "# both-sides: a\na\tb\tc\n", 3, not_read("both-sides")),
        (HEAD + "# needs-cue: a\na\tb\tc\n", 3, not_read("needs-cue")),
        (HEAD + "# markers-a: q\na\tb\tc\n", 3, not_read("markers-a")),
        (HEAD + "# both_side: a\na\tb\tc\n", 3, not_read("both_side")),
        # settings go before the first row
        (HEAD + "a\tb\tc\n# keep: a b\n", 4, after_rows("keep")),
        (HEAD + "a\tb\tc\n\n# Groups: u v w\n", 5, after_rows("groups")),
        (HEAD + "a\tb\tc\n# axis: other\n", 4, after_rows("axis")),
        (HEAD + "a\tb\tc\n# variant: default\n", 4, after_rows("variant")),
        (HEAD + "a\tb\tc\n# kep: a\n", 4, unknown("kep", "keep")),
        # the groups: once, first, three or more distinct names usable in AXIS:A-B
        (HEAD + "# groups: x y z\na\tb\tc\n", 3, F._MSG_SETTING_TWICE.format(key="groups", first=2)),
        (HEAD + "# axis: faith\na\tb\tc\n", 3, F._MSG_SETTING_TWICE.format(key="axis", first=1)),
        ("# axis: faith\na\tb\tc\n# groups: x y z\n", 2, _MSG_NO_GROUPS),
        ("a\tb\tc\n", 1, _MSG_NO_GROUPS),
        ("# groups: x y x\na\tb\tc\n", 1, _MSG_BAD_GROUPS),
        ("# groups: x y\na\tb\n", 1, _MSG_BAD_GROUPS),
        ("# groups: x y non-z\na\tb\tc\n", 1, _MSG_BAD_GROUPS),
        ("# groups:\n", 1, _MSG_BAD_GROUPS),
        ("# axis: two words\n# groups: x y z\na\tb\tc\n", 1, F._MSG_BAD_AXIS),
        ("# axis:\n# groups: x y z\na\tb\tc\n", 1, F._MSG_BAD_AXIS),
        # rows
        (HEAD + "a\tb\tc\n-\t-\t-\n", 4, _MSG_NO_WORD),
        (HEAD + "a\t\tc\n", 3, _MSG_EMPTY_CELL.format(group="y")),
        (HEAD + "a\tb\n", 3, _MSG_COLUMNS.format(n=3, got=2)),
        (HEAD + "a\tb\x01\tc\n", 3, F._MSG_FORBIDDEN_CHARACTER.format(code="U+0001")),
        (HEAD + "# only a comment\n", None, _MSG_NO_ROWS),
    ],
)
def test_a_multiway_file_is_read_by_the_two_group_rules(text: str, line: int | None, message: str) -> None:
    with pytest.raises(LexiconError) as info:
        parse(text)
    assert (info.value.path, info.value.line) == (SOURCE, line)
    assert str(info.value) == (f"{SOURCE}:{line}: {message}" if line else f"{SOURCE}: {message}")


def test_a_file_that_is_not_utf8_is_a_lexicon_error_with_its_line() -> None:
    with pytest.raises(LexiconError) as info:
        parse(HEAD.encode() + b"a\t\xffb\tc\n")
    assert (info.value.path, info.value.line) == (SOURCE, 3)
    assert str(info.value) == f"{SOURCE}:3: " + F._MSG_NOT_UTF8.format(byte=0xFF)


def test_settings_and_comments_before_the_rows_are_read_and_comments_after_them_stay_comments() -> None:
    text = (
        "\ufeff# My faiths: a note\n# Source: my notes\n# axis: faith\n# groups: x y z\n# variant: default\n"
        "# keep: holy cow\n# keep: holy moly\n# attributes: career\n#\n"
        "a\tb\tc\n# Note: more below\n# https://example.org/x\nd\t-\tf\n"
    )
    multi = parse(text)
    assert (multi.axis, multi.groups) == ("faith", ("x", "y", "z"))
    assert multi.rows == (("a", "b", "c"), ("d", None, "f"))
    assert multi.header == ("# keep: holy cow", "# keep: holy moly", "# attributes: career")
    assert parse("# groups: x y z\na\tb\tc\n").axis == "stem"


def test_the_two_group_format_takes_axis_and_groups_once_too(tmp_path: Path) -> None:
    path = tmp_path / "twice.tsv"
    path.write_text("# groups: m f\n# groups: male female\nhe\tshe\n", encoding="utf-8")
    with pytest.raises(LexiconError) as info:
        load_lexicon(path)
    assert str(info.value) == f"{path}:2: " + F._MSG_SETTING_TWICE.format(key="groups", first=1)
    path.write_text("# axis: g\n# Axis: h\nhe\tshe\n", encoding="utf-8")
    with pytest.raises(LexiconError, match="given twice"):
        load_lexicon(path)


def test_the_shipped_multiway_axis_reads_as_before() -> None:
    multi = lexicons._load_multiway("religion")
    assert multi.groups == ("christian", "muslim", "jewish", "hindu", "buddhist", "atheist")
    assert multi.header == ("# keep: christmas tree, christmas trees, church street, temple run, holy cow",)
    assert all(len(row) == 6 and any(row) for row in multi.rows)


@pytest.fixture()
def broken_religion(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """The built-in religion file replaced by the bytes the test puts in the list (the loader's cache cleared)."""
    given: list[bytes] = []
    builtin = lexicons._builtin_bytes
    monkeypatch.setattr(lexicons, "_builtin_bytes", lambda name: given[0] if name == "religion.tsv" else builtin(name))
    lexicons._load_multiway.cache_clear()
    yield given
    lexicons._load_multiway.cache_clear()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"# groups: x y z\n# kep: holy cow\na\tb\tc\n", "error: builtin:religion:2: '# kep:' is not a setting"),
        (b"# groups: x y z\na\tb\tc\n# keep: a\n", "error: builtin:religion:3: " + after_rows("keep")),
        (b"# groups: x y z\na\t\xff\tc\n", "error: builtin:religion:2: " + F._MSG_NOT_UTF8.format(byte=0xFF)),
    ],
)
def test_a_broken_multiway_file_reaches_the_command_line_as_one_error_line(
    broken_religion: list[bytes], tmp_path: Path, data: bytes, expected: str
) -> None:
    broken_religion.append(data)
    args = ["audit", "--model", "builtin:echo", "--axis", "religion:x-y", "--pairs", "20", "-o", str(tmp_path / "out")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(expected)
    assert not (tmp_path / "out").exists()
