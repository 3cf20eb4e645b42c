"""Tests for fairtalk._responses: JSONL and two-file readers, counting, malformed input, round trip."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import fairtalk
import fairtalk._responses as responses_module
from fairtalk import InputError, Response, read_responses, write_responses
from fairtalk._responses import ResponseSet


def _write_jsonl(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _rec(pair_id: object, side: str, response: object = "ok", context: str = "hi", **extra: object) -> dict:
    return {"pair_id": pair_id, "side": side, "context": context, "response": response, **extra}


def test_reads_jsonl_pairs_in_first_appearance_order_and_keeps_extra(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "r.jsonl",
        [
            _rec("p2", "b", "B2", context="she", model="m1"),
            _rec("p1", "a", "A1", context="he"),
            _rec("p2", "a", "A2", context="he"),
            _rec(7, "b", "B1"),
            _rec("p1", "b", "B1", context="she"),
            _rec(7, "a", "A7"),
        ],
    )
    rs = read_responses(path)
    assert rs.pair_ids == ("p2", "p1", "7")
    assert [r.response for r in rs.a] == ["A2", "A1", "A7"]
    assert [r.response for r in rs.b] == ["B2", "B1", "B1"]
    assert rs.b[0].extra == (("model", "m1"),)
    assert rs.a[1] == Response("p1", "a", "he", "A1")
    assert len(rs) == rs.n_pairs == 3
    assert list(rs)[0] == (rs.a[0], rs.b[0])
    assert rs.summary["n_records"] == 6 and rs.summary["n_pairs"] == 3
    assert rs.sources == ((str(path), hashlib.sha256(path.read_bytes()).hexdigest()),)


def test_missing_sides_duplicates_and_blank_lines_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    lines = [
        json.dumps(_rec("1", "a", "x")),
        json.dumps(_rec("1", "b", "y")),
        "",
        json.dumps(_rec("1", "a", "x")),  # duplicate, same text
        json.dumps(_rec("1", "b", "y")),  # duplicate, same text
        json.dumps(_rec("2", "a", "only a")),  # pair 2 misses side b
        "   ",
        json.dumps(_rec("3", "b", "only b")),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rs = read_responses(path)
    assert rs.pair_ids == ("1",)
    assert rs.b[0].response == "y"
    assert dict(rs.summary) == {
        "n_records": 6,
        "n_blank_lines": 2,
        "n_pairs": 1,
        "n_missing_side": 2,
        "n_duplicates": 2,
        "n_conflicting_duplicates": 0,
        "n_empty": 0,
        "n_empty_dropped": 0,
        "n_lost_a_only": 1,  # pair 3 lacks side a
        "n_lost_b_only": 1,  # pair 2 lacks side b
    }


def test_empty_responses_are_kept_unless_drop_empty(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "r.jsonl",
        [
            _rec("1", "a", ""),
            _rec("1", "b", "fine"),
            _rec("2", "a", "ok"),
            _rec("2", "b", "  "),
            _rec("3", "a", "x"),
            _rec("3", "b", "y"),
        ],
    )
    kept = read_responses(path)
    assert kept.pair_ids == ("1", "2", "3")
    assert kept.a[0].response == ""
    assert kept.summary["n_empty"] == 2 and kept.summary["n_empty_dropped"] == 0
    dropped = read_responses(path, drop_empty=True)
    assert dropped.pair_ids == ("3",)
    assert dropped.summary["n_empty"] == 2 and dropped.summary["n_empty_dropped"] == 2
    assert dropped.summary["n_pairs"] == 1
    assert (dropped.summary["n_lost_a_only"], dropped.summary["n_lost_b_only"]) == (1, 1)  # which side each drop lost
    assert "n_lost_a_only" not in kept.summary  # nothing dropped: nothing lost
    again = read_responses(kept, drop_empty=True)
    assert again.pair_ids == ("3",) and again.summary["n_empty_dropped"] == 2
    assert (again.summary["n_lost_a_only"], again.summary["n_lost_b_only"]) == (1, 1)
    assert read_responses(kept) is kept


@pytest.mark.parametrize(
    ("line", "template_fragment"),
    [
        ('{"pair_id": "1", "side": "a"', "malformed JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('"just a string"', "expected a JSON object, got str"),
        ('{"side": "a", "response": "x"}', "missing field 'pair_id'"),
        ('{"pair_id": "1", "response": "x"}', "missing field 'side'"),
        ('{"pair_id": "1", "side": "a"}', "missing field 'response'"),
        ('{"pair_id": "1", "side": "c", "response": "x"}', "field 'side' must be \"a\" or \"b\", got 'c'"),
        ('{"pair_id": "1", "side": "A", "response": "x"}', "got 'A'"),
        ('{"pair_id": "1", "side": "a", "response": null}', "field 'response' is null without an 'error'"),
        ('{"pair_id": "1", "side": "a", "response": null, "error": 5}', "its 'error' is a number, not a non-empty string"),
        ('{"pair_id": "1", "side": "a", "response": null, "error": ""}', "its 'error' is an empty string, not a"),
        ('{"pair_id": "1", "side": "a", "response": null, "error": null}', "its 'error' is null, not a non-empty"),
        (
            '{"pair_id": "1", "side": "a", "response": "x", "axis": 3}',
            "the pair answered (`fairtalk respond` copies it from the pairs), got a number",
        ),
        ('{"pair_id": "1", "side": "a", "response": "x", "axis": ""}', "field 'axis' must be a non-empty string"),
        ('{"pair_id": "1", "side": "a", "response": 3}', "field 'response' must be a string, got int"),
        ('{"pair_id": "1", "side": "a", "response": "x", "context": ["c"]}', "field 'context' must be a string, got list"),
        ('{"pair_id": 1.5, "side": "a", "response": "x"}', "field 'pair_id' must be a non-empty string or an integer"),
        ('{"pair_id": "", "side": "a", "response": "x"}', "field 'pair_id' must be"),
        ('{"pair_id": true, "side": "a", "response": "x"}', "got True"),
    ],
)
def test_malformed_lines_name_path_and_line(tmp_path: Path, line: str, template_fragment: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(_rec("0", "a")) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_responses(path)
    assert str(info.value).startswith(f"{path}:3: ")
    assert template_fragment in str(info.value)
    assert info.value.line == 3 and info.value.path == str(path)


def test_message_templates_are_module_constants() -> None:
    assert responses_module._MSG_BAD_SIDE.format(value="c") == "field 'side' must be \"a\" or \"b\", got 'c'"
    assert "{path_a}" in responses_module._MSG_LINE_COUNTS


def test_non_utf8_names_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(json.dumps(_rec("1", "a")).encode() + b"\n" + b'{"pair_id": "1", "side": "b", "response": "caf\xe9"}\n')
    with pytest.raises(InputError) as info:
        read_responses(path)
    assert str(info.value).startswith(f"{path}:2: not valid UTF-8 (byte 0xe9")


def test_utf8_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    body = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in [_rec("1", "a", "café"), _rec("1", "b", "naïve")])
    path.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8") + b"\r\n")
    rs = read_responses(path)
    assert (rs.a[0].response, rs.b[0].response) == ("café", "naïve")


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nope.jsonl: responses file not found"):
        read_responses(tmp_path / "nope.jsonl")


def test_two_file_layout_aligns_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("he is great\n\nsure\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("she is great\nno\nsure", encoding="utf-8")  # no final newline
    for source in ((tmp_path / "a.txt", tmp_path / "b.txt"), [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], tmp_path):
        rs = read_responses(source)
        assert rs.pair_ids == ("1", "2", "3")
        assert rs.a[1] == Response("2", "a", "", "")
        assert rs.b[0].response == "she is great"
        assert rs.summary["n_records"] == 6 and rs.summary["n_empty"] == 1
        assert [p for p, _ in rs.sources] == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert read_responses(tmp_path, drop_empty=True).pair_ids == ("1", "3")


def test_two_file_layout_with_unequal_line_counts(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("one\ntwo\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_responses((tmp_path / "a.txt", tmp_path / "b.txt"))
    assert f"{tmp_path / 'a.txt'} has 3 lines but {tmp_path / 'b.txt'} has 2" in str(info.value)


def test_two_file_layout_non_utf8_and_bad_arguments(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    (tmp_path / "b.txt").write_bytes(b"one\n\xff\n")
    with pytest.raises(InputError, match=r"b\.txt:2: not valid UTF-8"):
        read_responses(tmp_path)
    with pytest.raises(InputError, match="exactly two paths"):
        read_responses((tmp_path / "a.txt",))
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(InputError, match="must hold a.txt and b.txt"):
        read_responses(empty_dir)


def test_reads_response_records() -> None:
    records = [
        Response("x", "a", "c", "1"),
        Response("x", "b", "c", "2"),
        Response("x", "b", "c", "2"),
        Response("y", "a", "c", "4"),
    ]
    rs = read_responses(records)
    assert rs.pair_ids == ("x",) and rs.b[0].response == "2"
    assert rs.summary["n_duplicates"] == 1 and rs.summary["n_conflicting_duplicates"] == 0
    assert rs.summary["n_missing_side"] == 1
    with pytest.raises(InputError, match="item 1 is not a Response but str"):
        read_responses([Response("x", "a", "c", "1"), "nope"])  # type: ignore[list-item]


def test_response_set_is_frozen_and_validated() -> None:
    rs = read_responses([Response("x", "a", "c", "1"), Response("x", "b", "c", "2")])
    with pytest.raises(AttributeError):
        rs.pair_ids = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        rs.summary["n_pairs"] = 5  # type: ignore[index]
    with pytest.raises(ValueError, match="not its a and b sides"):
        ResponseSet(("x",), (Response("x", "b", "", ""),), (Response("x", "a", "", ""),))


def test_write_then_read_round_trips(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "in.jsonl",
        [_rec("1", "a", "héllo", model="m", score=0.5), _rec("1", "b", "wörld"), _rec("2", "a", ""), _rec("2", "b", "x")],
    )
    rs = read_responses(path)
    out = write_responses(rs, tmp_path / "out.jsonl")
    back = read_responses(out)
    assert back.pair_ids == rs.pair_ids and back.a == rs.a and back.b == rs.b
    assert back.a[0].extra == (("model", "m"), ("score", 0.5))
    assert "héllo" in out.read_text(encoding="utf-8")
    write_responses(list(rs.a) + list(rs.b), tmp_path / "flat.jsonl")
    assert read_responses(tmp_path / "flat.jsonl").pair_ids == ("1", "2")


def test_conflicting_duplicates_are_an_input_error(tmp_path: Path) -> None:
    """A pair's side answered twice with different texts: which one counts would decide the verdict."""
    path = _write_jsonl(
        tmp_path / "r.jsonl",
        [
            _rec("1", "a", "x"),
            _rec("1", "b", "y"),
            _rec("2", "a", "x"),
            _rec("2", "b", "y"),
            _rec("1", "b", "other"),
            _rec("2", "b", "another"),
        ],
    )
    with pytest.raises(InputError, match=r"2 conflicting duplicate record\(s\): pair '1' side b at line 5 .* line 2") as caught:
        read_responses(path)
    assert caught.value.path == str(path)
    records = [Response("x", "a", "c", "1"), Response("x", "b", "c", "2"), Response("x", "b", "c", "3")]
    with pytest.raises(InputError, match=r"1 conflicting duplicate record\(s\): pair 'x' side b at item 2 .* item 1"):
        read_responses(records)
    with pytest.raises(InputError, match="conflicting duplicate"):
        fairtalk.score(records, axis="gender")
