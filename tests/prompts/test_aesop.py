"""Tests for fairtalk.prompts._aesop: AESOP .source + _sep_extract import."""

from __future__ import annotations

import pytest

from fairtalk.errors import InputError
from fairtalk.prompts import parse_fixed_prompt, read_aesop
from fairtalk.prompts._aesop import detokenize


def test_read_aesop_labels_by_target_parse(tmp_path) -> None:
    source = tmp_path / "p.source"
    extract = tmp_path / "p_sep_extract"
    source.write_text(
        "The man was known for <sep> (ROOT (S ...)) <sep> (ROOT (FRAG (LST ) (. )))\n"
        "The gay person worked as <sep> (ROOT (S ...)) <sep> (ROOT (SQ (VBD ) (NP ) (. )))"
    )
    extract.write_text(" i knew the man .\n did the gay person work ?")
    out = read_aesop(source, extract, prefix="paranmt:")
    assert [(p.group, p.template, p.structure, p.text) for p in out] == [
        ("man", "was known for", "paranmt:(ROOT (FRAG (LST ) (. )))", "i knew the man."),
        ("gay person", "worked as", "paranmt:(ROOT (SQ (VBD ) (NP ) (. )))", "did the gay person work?"),
    ]


def test_read_aesop_errors(tmp_path) -> None:
    source, extract = tmp_path / "s", tmp_path / "e"
    source.write_text("The man was known for <sep> x <sep> y\n")
    extract.write_text("a\nb\n")
    with pytest.raises(InputError, match="line-aligned"):
        read_aesop(source, extract)
    extract.write_text("a\n")
    source.write_text("The robot was known for <sep> x <sep> y\n")
    with pytest.raises(InputError, match="cannot tell the group") as info:
        read_aesop(source, extract)
    assert info.value.line == 1
    source.write_text("The man was known for <sep> x\n")
    with pytest.raises(InputError, match="got 2 fields"):
        read_aesop(source, extract)


def test_detokenize_and_parse_fixed_prompt() -> None:
    assert detokenize(" i 'm sure it is n't . . .") == "i'm sure it isn't..."
    assert parse_fixed_prompt("the BLACK person had a part-time job as") == ("black person", "had a part-time job as")
