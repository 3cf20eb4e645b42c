"""Corpus readers on malformed inputs: unclosed CSV quotes, extra columns, odd Parquet columns, dialogue ids, UTF-16."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk import CorpusError, read_corpus
from fairtalk.cli import app
from fairtalk.corpora import REASONS, kept_in_part

# ---------------------------------------------------------------------------- CSV quotes


def test_a_csv_quote_never_closed_costs_its_record_not_the_rest_of_the_file(tmp_path: Path) -> None:
    rows = [f'{i},"she said hi to her mom' if i == 5 else f"{i},row {i} he left" for i in range(1, 201)]
    path = tmp_path / "big.csv"
    path.write_text("id,context\n" + "\n".join(rows) + "\n", encoding="utf-8")
    corpus = read_corpus(path)
    texts = [c.text for c in corpus]
    assert texts == [f"row {i} he left" for i in range(1, 201) if i != 5]
    assert corpus.summary.n_read == 200 and corpus.summary.n_yielded == 199
    assert dict(corpus.summary.skipped) == {"malformed CSV": 1}
    assert corpus.summary.where("malformed CSV") == f"{path}:6"  # the line where the quote opened


def test_a_stray_quote_closed_lines_later_costs_only_its_record(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text('id,context\n1,"he left\n2,she came\n3,"his dad" said hi\n4,her mom\n', encoding="utf-8")
    corpus = read_corpus(path)
    assert [c.text for c in corpus] == ["she came", "her mom"]
    assert corpus.summary.count("malformed CSV") == 2  # line 2 (the quote), then line 4 (text after a quote)


def test_a_quoted_field_spanning_lines_is_still_one_record(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text('id,context\n1,"he said\nhi"\n2,"she ""left"""\n', encoding="utf-8")
    corpus = read_corpus(path)
    assert [c.text for c in corpus] == ["he said\nhi", 'she "left"']
    assert corpus.summary.skipped == ()


def test_csv_lines_read_again_are_not_counted_twice(tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_bytes(b'id,context\n1,"he left\n2,\xff bad\n\n3,she came\n')
    corpus = read_corpus(path)
    assert [c.text for c in corpus] == ["she came"]
    assert dict(corpus.summary.skipped) == {"malformed CSV": 1, "not UTF-8": 1, "empty line": 1}


# ---------------------------------------------------------------------------- extra columns


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("e.csv", "id,context\n1,well, he told me his dad left\n2,she came\n"),
        ("e.tsv", "id\tcontext\n1\twell\the told me his dad left\n2\tshe came\n"),
    ],
)
def test_rows_with_more_cells_than_the_header_are_counted(tmp_path: Path, name: str, data: str) -> None:
    path = tmp_path / name
    path.write_text(data, encoding="utf-8")
    corpus = read_corpus(path)
    assert [c.text for c in corpus] == ["she came"]
    assert dict(corpus.summary.skipped) == {"too many columns": 1}
    assert corpus.summary.where("too many columns") == f"{path}:2"
    assert "too many columns" in REASONS and not kept_in_part("too many columns")


def test_empty_extra_cells_and_headerless_rows_as_wide_as_the_first_are_read(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,context\n1,he left,,\n", encoding="utf-8")
    assert [c.text for c in read_corpus(path)] == ["he left"]
    bare = tmp_path / "bare.tsv"
    bare.write_text("he left\tx\nshe came\ty\nhis dad\ty\tz\n", encoding="utf-8")
    corpus = read_corpus(bare)
    assert [c.text for c in corpus] == ["he left", "she came"]
    assert dict(corpus.summary.skipped) == {"too many columns": 1}


# ---------------------------------------------------------------------------- Parquet


def test_parquet_values_that_are_not_utf8_are_counted_per_row(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "bad.parquet"
    values = pa.array([b"he is here\xff", b"his dad", None, b"she \xfe left"], pa.binary()).cast(pa.string(), safe=False)
    pq.write_table(pa.table({"text": values}), path)
    corpus = read_corpus(path)
    assert [c.text for c in corpus] == ["his dad"]
    assert dict(corpus.summary.skipped) == {"not UTF-8": 2, "empty value": 1}
    assert corpus.summary.where("not UTF-8") == f"{path}:1"


def test_a_parquet_file_without_columns_is_an_error(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "none.parquet"
    pq.write_table(pa.table({}), path)
    with pytest.raises(CorpusError, match="no columns"):
        list(read_corpus(path))


def test_a_parquet_string_view_column_is_read(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    if not hasattr(pa, "string_view"):
        pytest.skip("this pyarrow has no string_view")
    path = tmp_path / "view.parquet"
    pq.write_table(pa.table({"text": pa.array(["he is here", "his dad"], pa.string_view())}), path, store_schema=True)
    assert [c.text for c in read_corpus(path)] == ["he is here", "his dad"]


# ---------------------------------------------------------------------------- dialogue ids


def _dialogues(tmp_path: Path, name: str, ids: list[object]) -> Path:
    path = tmp_path / name
    lines = [json.dumps({"context": f"he said {i}", "dialogue_id": d}) for i, d in enumerate(ids)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_whole_number_float_dialogue_ids_cluster_like_ints(tmp_path: Path) -> None:
    ints = [i // 5 for i in range(100)]
    as_int = read_corpus(_dialogues(tmp_path, "i.jsonl", ints))
    as_float = read_corpus(_dialogues(tmp_path, "f.jsonl", [float(i) for i in ints]))
    clusters = [c.cluster for c in as_int]
    assert clusters == [c.cluster for c in as_float] == [str(i) for i in ints]
    assert len(set(clusters)) == 20 and as_float.summary.skipped == ()


def test_unusable_dialogue_ids_are_counted_and_the_record_kept(tmp_path: Path) -> None:
    corpus = read_corpus(_dialogues(tmp_path, "u.jsonl", [1.5, True, [1], {"a": 1}, None, "", "7", 7]))
    assert [c.cluster for c in corpus] == [None] * 6 + ["7", "7"]
    reason = "dialogue id not text or a whole number (kept as its own dialogue)"
    assert dict(corpus.summary.skipped) == {reason: 6}
    assert corpus.summary.n_yielded == 8 and corpus.summary.n_read == 8
    assert reason in REASONS and kept_in_part(reason)


def test_a_record_without_dialogue_fields_is_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text('{"context": "he left"}\n{"context": "she left", "cluster": null, "dialogue_id": 4.0}\n')
    corpus = read_corpus(path)
    assert [c.cluster for c in corpus] == [None, "4"]
    assert corpus.summary.skipped == ()


# ---------------------------------------------------------------------------- UTF-16


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_text_is_an_error_saying_so(tmp_path: Path, encoding: str) -> None:
    bom = codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE
    path = tmp_path / "u.txt"
    path.write_bytes(bom + "he left\nshe came\n".encode(encoding))
    with pytest.raises(CorpusError, match="UTF-16 text.*save it as UTF-8"):
        list(read_corpus(path))


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("fmt", ["text", "jsonl", "twitter"])
def test_utf16_text_without_a_byte_order_mark_is_an_error_saying_so(tmp_path: Path, encoding: str, fmt: str) -> None:
    """Review finding: UTF-16 without a byte order mark was read as UTF-8, NUL bytes and all, without a word."""
    path = tmp_path / "u.txt"
    lines = ['{"context": "he left"}', '{"context": "she came"}'] if fmt == "jsonl" else ["he left", "she came"]
    path.write_bytes("\n".join(lines).encode(encoding) + "\n".encode(encoding))
    with pytest.raises(CorpusError, match="UTF-16 text .*no byte order mark.*save it as UTF-8"):
        list(read_corpus(f"{fmt}:{path}"))


def test_a_nul_byte_in_utf8_text_is_not_called_utf16(tmp_path: Path) -> None:
    path = tmp_path / "nul.txt"
    path.write_bytes(b"he\x00left\na\x00\nshe came\n")  # NULs, but not at every other position
    assert [c.text for c in read_corpus(f"text:{path}")] == ["he\x00left", "a\x00", "she came"]


# ---------------------------------------------------------------------------- the pairs table


def test_pairs_table_says_kept_without_a_part_for_records_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairtalk.cli._console import err_console

    monkeypatch.setattr(err_console, "_width", 250)  # one table row a line, whatever width the console was made with
    corpus = tmp_path / "c.jsonl"
    lines = [
        {"messages": [{"role": "system", "content": "be nice"}, {"role": "user", "content": "she is a nurse"}]},
        {"context": "he is a nurse", "dialogue_id": 1.5},
        "{bad",
    ]
    corpus.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    result = CliRunner().invoke(
        app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(tmp_path / "p.jsonl")], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.stderr.split())
    assert "kept without a part: system messages" in text
    assert "kept without a part: dialogue id" in text
    assert "skipped: malformed JSON" in text
    assert "skipped: system messages" not in text
