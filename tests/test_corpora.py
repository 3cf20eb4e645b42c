"""Tests for fairtalk.corpora: every format, every bad-input case, and the chitchat built-in."""

from __future__ import annotations

import gzip
import itertools
import tracemalloc
from pathlib import Path

import pytest

from fairtalk import Context, CorpusError, SpecError, read_corpus
from fairtalk.corpora import HELDOUT_PERCENT, MAX_LINE_BYTES, chitchat_split


def _write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def _texts(corpus) -> list[str]:
    return [c.text for c in corpus]


# ---------------------------------------------------------------------------- plain text


def test_text_one_context_per_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.txt", "  he is here \nshe left\r\n")
    corpus = read_corpus(path)
    contexts = list(corpus)
    assert [c.text for c in contexts] == ["he is here", "she left"]
    assert contexts[0] == Context(id="c.txt:1", text="he is here", origin=f"{path}:1", response=None)
    assert corpus.summary.n_read == 2 and corpus.summary.n_yielded == 2 and corpus.summary.skipped == ()


def test_a_turn_separator_or_role_mark_in_a_plain_text_is_no_turn(tmp_path: Path) -> None:
    """Review fault: a text line holding U+001E became a two-turn context; in every plain format it is one turn."""
    from fairtalk.records import split_turns, turn_roles

    files = {
        "c.txt": "my brother\x1ehe is here\n\x11she\x12 left\n",
        "c.tsv": "text\tn\nmy brother\x1ehe is here\t1\n\x11she\x12 left\t2\n",
        "c.csv": 'text,n\n"my brother\x1ehe is here",1\n\x11she\x12 left,2\n',
        "twitter:c.tw": "my brother\x1ehe is here\nok\n\x11she\x12 left\nbye\n",
        "parlai:c.parlai": "text:my brother\x1ehe is here\tlabels:ok\ntext:\x11she\x12 left\tlabels:bye\n",
    }
    for name, data in files.items():
        scheme, _, filename = name.rpartition(":")
        path = _write(tmp_path / filename, data)
        contexts = list(read_corpus(f"{scheme}:{path}" if scheme else path))
        assert [c.text for c in contexts] == ["my brother he is here", "she  left"], name
        assert all(split_turns(c.text) == [c.text] and turn_roles(c.text) == ["user"] for c in contexts), name
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"text": ["my brother\x1ehe is here"]}), tmp_path / "c.parquet")
    assert [c.text for c in read_corpus(tmp_path / "c.parquet")] == ["my brother he is here"]


def test_text_scheme_overrides_extension(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.data", "hello\n")
    assert _texts(read_corpus(f"text:{path}")) == ["hello"]


def test_empty_lines_are_counted_with_first_location(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.txt", "a\n\n   \nb\n\n")
    corpus = read_corpus(path)
    assert _texts(corpus) == ["a", "b"]
    summary = corpus.summary
    assert summary.count("empty line") == 3
    assert summary.where("empty line") == f"{path}:2"
    assert summary.n_read == summary.n_yielded + summary.n_skipped == 5


def test_non_utf8_line_is_skipped_and_counted(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.txt", b"good one\nbad \xff\xfe here\nstill good\n")
    corpus = read_corpus(path)
    assert _texts(corpus) == ["good one", "still good"]
    assert corpus.summary.skipped == (("not UTF-8", 1),)
    assert corpus.summary.where("not UTF-8") == f"{path}:2"


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.txt", b"\xef\xbb\xbfhello\n")
    assert _texts(read_corpus(path)) == ["hello"]


def test_gzip_file_is_read_by_extension(tmp_path: Path) -> None:
    path = tmp_path / "c.txt.gz"
    path.write_bytes(gzip.compress(b"he said\nshe said\n"))
    assert _texts(read_corpus(path)) == ["he said", "she said"]


def test_ten_megabyte_line_is_skipped_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    with open(path, "wb") as fh:
        fh.write(b"before\n")
        fh.write(b"x" * (10 * 1024 * 1024) + b"\n")
        fh.write(b"after\n")
    corpus = read_corpus(path)
    tracemalloc.start()
    try:
        texts = _texts(corpus)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert texts == ["before", "after"]
    assert corpus.summary.skipped == (("line too long", 1),)
    assert corpus.summary.where("line too long") == f"{path}:2"
    assert peak < 4 * MAX_LINE_BYTES  # never the whole 10 MB line


def test_line_at_the_limit_is_kept(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.txt", b"y" * MAX_LINE_BYTES + b"\nz\n")
    assert [len(t) for t in _texts(read_corpus(path))] == [MAX_LINE_BYTES, 1]


def test_corpus_is_reiterable_and_summary_resets(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.txt", "a\n\nb\n")
    corpus = read_corpus(path)
    first = list(corpus)
    second = list(corpus)
    assert first == second
    assert corpus.summary.n_read == 3 and corpus.summary.count("empty line") == 1


# ---------------------------------------------------------------------------- TSV / CSV


def test_tsv_header_with_text_column_is_default(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.tsv", "label\ttext\n1\the is tall\n0\tshe is short\n")
    contexts = list(read_corpus(path))
    assert [c.text for c in contexts] == ["he is tall", "she is short"]
    assert contexts[0].origin == f"{path}:2"


def test_tsv_without_header_defaults_to_first_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.tsv", "he is tall\t1\nshe is short\t0\n")
    assert _texts(read_corpus(path)) == ["he is tall", "she is short"]


def test_tsv_column_by_index_and_by_name(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.tsv", "-1\tXYZ was mean\n1\tXYZ was kind\n")
    assert _texts(read_corpus(path, column="1")) == ["XYZ was mean", "XYZ was kind"]
    named = _write(tmp_path / "n.tsv", "id\tutterance\n7\thi there\n")
    assert _texts(read_corpus(named, column="Utterance")) == ["hi there"]


def test_missing_named_column_lists_available_columns(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.tsv", "id\tutterance\n7\thi there\n")
    with pytest.raises(CorpusError) as info:
        list(read_corpus(path, column="context"))
    message = str(info.value)
    assert message.startswith(f"{path}:1: no column 'context'")
    assert "id, utterance" in message


def test_column_index_out_of_range_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.tsv", "a\tb\n")
    with pytest.raises(CorpusError, match=r":1: column 5 is out of range: the first row has 2 column"):
        list(read_corpus(path, column="5"))


def test_short_rows_and_empty_values_are_counted(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.tsv", "x\tone\ny\n\t\nz\t  \nw\ttwo\n")
    corpus = read_corpus(path, column="1")
    assert _texts(corpus) == ["one", "two"]
    assert dict(corpus.summary.skipped) == {"too few columns": 1, "empty line": 1, "empty value": 1}
    assert corpus.summary.where("too few columns") == f"{path}:2"


def test_csv_quoting_and_multiline_fields(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.csv", 'id,context\n1,"he said, ""hi"""\n2,"two\nlines"\n3,plain\n')
    corpus = read_corpus(path)
    assert _texts(corpus) == ['he said, "hi"', "two\nlines", "plain"]
    assert corpus.summary.n_read == 3


def test_csv_missing_column_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.csv", "id,utterance\n1,hi\n")
    with pytest.raises(CorpusError, match=r"c\.csv:1: no column 'speech'; the header has: id, utterance"):
        list(read_corpus(path, column="speech"))


def test_csv_blank_rows_and_non_utf8_are_counted(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.csv", b"text\nhi\n\n,\nbad\xff\nbye\n")
    corpus = read_corpus(path)
    assert _texts(corpus) == ["hi", "bye"]
    assert dict(corpus.summary.skipped) == {"empty line": 2, "not UTF-8": 1}


# ---------------------------------------------------------------------------- JSONL


def test_jsonl_default_fields_and_response(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "c.jsonl",
        '{"context": "he is here", "response": "ok"}\n{"text": "she left", "context_id": 3}\n',
    )
    contexts = list(read_corpus(path))
    assert [(c.text, c.response) for c in contexts] == [("he is here", "ok"), ("she left", None)]


def test_jsonl_chosen_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.json", '{"utterance": "hello", "text": "no"}\n')
    assert _texts(read_corpus(path, field="utterance")) == ["hello"]


def test_jsonl_bad_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    lines = [
        '{"context": "good"}',
        '{"context": "broken',  # malformed JSON
        "[1, 2]",  # not an object
        '{"other": "x"}',  # missing field
        '{"context": 5}',  # not a string
        "",  # empty line
        '{"context": "   "}',  # empty value
        "not json at all",  # malformed JSON again
        '{"context": "also good"}',
    ]
    path = _write(tmp_path / "c.jsonl", "\n".join(lines) + "\n")
    corpus = read_corpus(path)
    assert _texts(corpus) == ["good", "also good"]
    summary = corpus.summary
    assert dict(summary.skipped) == {
        "malformed JSON": 2,
        "JSON line is not an object": 1,
        "missing field": 1,
        "field is not a string": 1,
        "empty line": 1,
        "empty value": 1,
    }
    assert summary.where("malformed JSON") == f"{path}:2"
    assert summary.where("missing field") == f"{path}:4"
    assert summary.skipped[0] == ("malformed JSON", 2)  # most frequent first
    assert summary.n_read == 9 and summary.n_yielded == 2


# ---------------------------------------------------------------------------- Parquet


def test_parquet_columns_batches_and_nulls(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    n = 20_000  # more than one record batch
    texts = [f"he said {i}" if i % 1000 else None for i in range(n)]
    table = pa.table({"id": list(range(n)), "text": texts, "other": ["x"] * n})
    path = tmp_path / "c.parquet"
    pq.write_table(table, path, row_group_size=5000)
    corpus = read_corpus(path)
    first = next(iter(corpus))
    assert first.text == "he said 1" and first.origin == f"{path}:2"
    contexts = list(corpus)
    assert len(contexts) == n - 20
    assert corpus.summary.count("empty value") == 20
    assert _texts(read_corpus(f"parquet:{path}", column="other"))[:2] == ["x", "x"]


def test_parquet_missing_or_non_text_column_is_an_error(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"id": [1, 2], "utterance": ["a", "b"]}), path)
    with pytest.raises(CorpusError, match=r"no column 'context'; the Parquet file has: id, utterance"):
        list(read_corpus(path, column="context"))
    with pytest.raises(CorpusError, match=r"column 'id' holds int64, not text"):
        list(read_corpus(path, column="id"))


def test_parquet_garbage_file_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.parquet", b"not parquet at all")
    with pytest.raises(CorpusError, match="not a readable Parquet file"):
        list(read_corpus(path))


# ---------------------------------------------------------------------------- Twitter, ParlAI


def test_twitter_alternating_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.txt", "he is late\nno he is not\nshe won\nyay\nlonely tweet\n")
    corpus = read_corpus(f"twitter:{path}")
    contexts = list(corpus)
    assert [(c.text, c.response) for c in contexts] == [
        ("he is late", "no he is not"),
        ("she won", "yay"),
        ("lonely tweet", None),
    ]
    assert contexts[1].origin == f"{path}:3"
    assert corpus.summary.count("reply: missing (odd number of lines)") == 1


def test_twitter_bad_lines_keep_alignment(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.txt", b"ctx one\n\xff bad reply\n\xff bad ctx\nreply two\nctx three\nreply three\n")
    corpus = read_corpus(f"twitter:{path}")
    contexts = list(corpus)
    assert [(c.text, c.response) for c in contexts] == [("ctx one", None), ("ctx three", "reply three")]
    assert dict(corpus.summary.skipped) == {"not UTF-8": 1, "reply: not UTF-8": 1}


def test_parlai_text_and_labels(tmp_path: Path) -> None:
    lines = [
        "text:your persona: i like cats.\\nhi, how is he?\tlabels:he is fine|he is great\tepisode_done:False",
        "text:a __PIPE__ b\teval_labels:ok",
        "labels:no text here",
        "id:x\ttext:   \tlabels:y",
        "text:last one\tepisode_done:True",
    ]
    path = _write(tmp_path / "p.txt", "\n".join(lines) + "\n")
    corpus = read_corpus(f"parlai:{path}")
    contexts = list(corpus)
    assert [(c.text, c.response) for c in contexts] == [
        ("your persona: i like cats.\nhi, how is he?", "he is fine"),
        ("a | b", "ok"),
        ("last one", None),
    ]
    assert dict(corpus.summary.skipped) == {"no text: field": 1, "empty value": 1}
    assert corpus.summary.where("no text: field") == f"{path}:3"


# ---------------------------------------------------------------------------- specs


@pytest.mark.parametrize(
    ("spec", "pattern"),
    [
        ("jsnl:data.jsonl", r"unknown corpus format 'jsnl'.*did you mean 'jsonl:'.*choose from"),
        ("builtin:chitchatt", r"unknown built-in corpus 'chitchatt'.*builtin:chitchat"),
    ],
)
def test_unknown_scheme_or_builtin_lists_choices(spec: str, pattern: str) -> None:
    with pytest.raises(SpecError, match=pattern):
        read_corpus(spec)


def test_unknown_extension_is_a_spec_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.xml", "<a/>")
    with pytest.raises(SpecError, match="cannot tell the corpus format") as info:
        read_corpus(path)
    assert "text:" in info.value.choices


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(CorpusError) as info:
        read_corpus(missing)
    assert str(info.value) == f"{missing}: corpus file not found"
    with pytest.raises(CorpusError, match="nope.txt: corpus file not found"):
        read_corpus(f"twitter:{tmp_path / 'nope.txt'}")


def test_directory_is_not_a_corpus(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not a file"):
        read_corpus(f"text:{tmp_path}")


def test_options_that_do_not_apply_are_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.txt", "a\n")
    with pytest.raises(SpecError, match="field does not apply to text corpora"):
        read_corpus(path, field="x")
    with pytest.raises(SpecError, match="column does not apply to text corpora"):
        read_corpus(path, column="1")
    with pytest.raises(SpecError, match="only available for builtin:chitchat"):
        read_corpus(path, split="heldout")
    with pytest.raises(SpecError, match="unknown split 'test'"):
        read_corpus("builtin:chitchat", split="test")


# ---------------------------------------------------------------------------- chitchat


@pytest.fixture(scope="module")
def chitchat_ids() -> dict[str, set[str]]:
    pytest.importorskip("chitchat_dataset")
    out = {}
    for split in ("train", "heldout"):
        out[split] = {c.id for c in read_corpus("builtin:chitchat", split=split)}
    return out


def test_chitchat_yields_turn_pairs_with_responses() -> None:
    pytest.importorskip("chitchat_dataset")
    corpus = read_corpus("builtin:chitchat")
    head = list(itertools.islice(corpus, 3))
    assert all(c.response for c in head)
    assert head[0].response == head[1].text  # adjacent turns chain
    assert head[0].origin.startswith("builtin:chitchat#") and head[0].id.startswith("chitchat:")


def test_chitchat_split_is_deterministic_disjoint_and_about_ten_percent(chitchat_ids) -> None:
    train, heldout = chitchat_ids["train"], chitchat_ids["heldout"]
    assert train and heldout and not train & heldout
    assert 0.05 < len(heldout) / (len(train) + len(heldout)) < 0.15
    again = {c.id for c in itertools.islice(read_corpus("builtin:chitchat", split="heldout"), 500)}
    assert again <= heldout
    conv = next(iter(heldout)).split(":", 1)[1].rsplit("/", 1)[0]
    assert chitchat_split(conv) == "heldout"
    assert HELDOUT_PERCENT == 10


# ---------------------------------------------------------------------------- registered formats


def test_a_registered_format_reads_format_path_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fairtalk.corpora as corpora

    monkeypatch.setattr(corpora, "CORPUS_FORMATS", corpora.CORPUS_FORMATS.fresh())

    def read_shouting(tally, *, path, opener):  # noqa: ANN001, ANN202
        with opener() as handle:
            for lineno, raw in enumerate(handle, start=1):
                text = raw.decode("utf-8").strip()
                if not text:
                    tally.skip("empty line", f"{path}:{lineno}")
                    continue
                tally.emit()
                yield Context(id=f"{path}:{lineno}", text=text.upper(), origin=f"{path}:{lineno}")

    corpora.register_corpus_format("shout", read_shouting)
    assert "shout" in corpora.corpus_formats()
    path = _write(tmp_path / "lines.dat", "he said hi\n\nshe said no\n")
    corpus = read_corpus(f"shout:{path}")
    assert _texts(corpus) == ["HE SAID HI", "SHE SAID NO"]
    assert corpus.summary.n_skipped == 1
    with pytest.raises(SpecError, match=r"did you mean 'shout:'\?.*choose from: builtin:, csv:"):
        read_corpus(f"shuot:{path}")
    with pytest.raises(SpecError, match="already registered"):
        corpora.register_corpus_format("jsonl", read_shouting)
    with pytest.raises(SpecError, match="reserved"):
        corpora.register_corpus_format("builtin", read_shouting)
    with pytest.raises(SpecError, match="does not apply to shout corpora"):
        read_corpus(f"shout:{path}", column="text")


def test_jsonl_conversations_become_multi_turn_contexts_and_malformed_ones_are_counted(tmp_path) -> None:  # noqa: ANN001
    import json

    import fairtalk

    rows = [
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "he is late"},
                {"role": "assistant", "content": "oh"},
            ]
        },
        {"messages": [{"role": "tool", "content": "x"}]},
        {"messages": [{"role": "assistant", "content": "only me"}]},
        {"messages": "not a list"},
    ]
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    corpus = fairtalk.read_corpus(path)
    contexts = list(corpus)
    assert len(contexts) == 1 and fairtalk.split_turns(contexts[0].text) == ["hi", "hello", "he is late"]
    assert contexts[0].response == "oh"
    assert (
        dict(corpus.summary.skipped)[
            "malformed messages (a list of {role: user|assistant|system, content: text} with a user turn)"
        ]
        == 3
    )


def test_jsonl_conversations_keep_each_turns_role_and_leave_out_empty_turns(tmp_path) -> None:  # noqa: ANN001
    import json

    import fairtalk
    from fairtalk.records import turn_roles

    def turn(role: str, content: str) -> dict:
        return {"role": role, "content": content}

    rows = [
        [turn("user", "quick question"), turn("user", "is my mom right?")],
        [turn("user", "hello"), turn("assistant", ""), turn("user", "he said no"), turn("assistant", "ok")],
        [turn("user", "hi"), turn("assistant", "hello"), turn("user", "  ")],  # the last user turn has no text
        [turn("assistant", "a"), turn("assistant", "b"), turn("user", "c")],
        [turn("system", "be kind"), turn("assistant", "welcome"), turn("user", "he is here")],
        [turn("user", " "), turn("assistant", "x")],
    ]
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps({"messages": r}) + "\n" for r in rows))
    corpus = fairtalk.read_corpus(path)
    got = [(fairtalk.split_turns(c.text), turn_roles(c.text), c.response) for c in corpus]
    assert got == [
        (["quick question", "is my mom right?"], ["user", "user"], None),
        (["hello", "he said no"], ["user", "user"], "ok"),  # the empty reply shifts no role
        (["hi"], ["user"], "hello"),
        (["a", "b", "c"], ["assistant", "assistant", "user"], None),
        (["welcome", "he is here"], ["assistant", "user"], None),
    ]
    assert [c.text for c in corpus][4] == "welcome\x1ehe is here"  # alternating roles: no marks, the text as before
    assert dict(corpus.summary.skipped) == {
        "empty value": 1,
        "system messages (left out)": 1,
    }


def test_jsonl_system_messages_left_out_are_counted_per_conversation(tmp_path) -> None:  # noqa: ANN001
    import json

    import fairtalk
    from fairtalk.corpora import kept_in_part

    def chat(*turns: tuple[str, str]) -> str:
        return json.dumps({"messages": [{"role": role, "content": text} for role, text in turns]}) + "\n"

    path = tmp_path / "chats.jsonl"
    path.write_text(
        chat(("user", "he is late"), ("assistant", "oh"))
        + chat(("system", "be kind"), ("user", "she is here"), ("system", "be brief"), ("assistant", "hi"))
        + chat(("system", "be kind"), ("user", " "))  # dropped whole (empty value): its system message is not counted
        + chat(("user", "is he ok?"), ("system", "mind the tone"))
    )
    corpus = fairtalk.read_corpus(path)
    assert [c.text for c in corpus] == ["he is late", "she is here", "is he ok?"]
    system = "system messages (left out)"
    summary = corpus.summary
    assert summary.count(system) == 2  # two conversations kept without theirs (three messages)
    assert summary.where(system) == f"{path}:2" and summary.count("empty value") == 1
    assert summary.n_read == 4 and summary.n_yielded == 3  # nothing dropped but the empty one
    assert f"kept without a part: {system} 2, first at {path}:2" in summary.skip_lines()  # as pairs and augment say
    assert system in fairtalk.corpora.REASONS
    assert kept_in_part(system) and not kept_in_part("empty value")


def test_the_audit_says_lines_kept_without_their_system_messages_were_kept(tmp_path) -> None:  # noqa: ANN001
    """A review: the audit said "skipped 300 corpus line(s): system message …" for 300 conversations it audited."""
    import json

    from typer.testing import CliRunner

    from fairtalk.cli import app

    path = tmp_path / "chats.jsonl"
    rows = [
        {"messages": [{"role": "system", "content": "be nice"}, {"role": "user", "content": f"my brother is {i} today"}]}
        for i in range(40)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["audit", "--corpus", f"jsonl:{path}", "--model", "builtin:echo", "--axis", "gender", "--pairs", "20"]
    done = CliRunner().invoke(app, [*argv, "--measures", "length", "-o", str(tmp_path / "out")], env={"COLUMNS": "400"})
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())  # the terminal wraps at its width
    # builtin:echo takes no system prompt: no hint to give it one (tests/test_cli_system_prompt_hint.py)
    assert "gender: kept 40 corpus line(s) without a part: system messages (left out) (first at" in text
    assert "skipped 40" not in text and "--system-prompt" not in text


def test_split_corpus_holds_out_whole_dialogues_by_a_stable_hash(tmp_path) -> None:  # noqa: ANN001
    import json

    from fairtalk.corpora import split_corpus

    rows = [{"context": f"line {i}", "response": "ok", "dialogue_id": f"d{i // 3}"} for i in range(600)]
    rows += [{"context": "said twice", "response": "ok"}] * 2 + [{"context": "no dialogue"}]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + "{not json\n")
    whole = read_corpus(f"jsonl:{path}")
    shares = {split: split_corpus(whole, split) for split in ("train", "heldout")}
    ids = {split: [c.id for c in corpus] for split, corpus in shares.items()}
    assert sorted(ids["train"] + ids["heldout"]) == sorted(c.id for c in whole)  # every context once
    assert ids == {split: [c.id for c in corpus] for split, corpus in shares.items()}  # the same on every pass
    held = list(shares["heldout"])
    assert {c.cluster for c in held}.isdisjoint({c.cluster for c in shares["train"] if c.cluster})  # dialogues whole
    assert all(chitchat_split(c.cluster or c.text) == "heldout" for c in held)
    assert 0.5 * HELDOUT_PERCENT < 100 * len(held) / 603 < 2 * HELDOUT_PERCENT
    assert sum(c.text == "said twice" for c in shares[chitchat_split("said twice")]) == 2
    summary = shares["heldout"].summary
    assert summary.n_yielded == len(held) and summary.count("malformed JSON") == 1 and shares["train"].source == whole.source
    with pytest.raises(SpecError, match="unknown split"):
        split_corpus(whole, "all")


def test_a_missing_reply_is_a_record_without_a_response_not_a_skipped_line(tmp_path) -> None:  # noqa: ANN001
    """Review finding: train said "skipped: reply: missing ... 1" and "without a response 1" for one odd last line."""
    import fairtalk

    path = tmp_path / "odd.txt"
    path.write_text("{not a line\nhi\nhe is here\n\nmy mom\n")  # the second reply is empty, the third missing
    corpus = fairtalk.read_corpus(f"twitter:{path}")
    assert [c.response for c in corpus] == ["hi", None, None]
    summary = corpus.summary
    assert summary.replies == (("reply: empty line", 1), ("reply: missing (odd number of lines)", 1))
    assert summary.skip_lines(replies=False) == []
    assert summary.skip_lines() == [
        f"kept without a part: reply: empty line 1, first at {path}:4",
        f"kept without a part: reply: missing (odd number of lines) 1, first at {path}:5",
    ]
    assert summary.reply_note() == (
        f"of which reply: empty line 1, first at {path}:4; reply: missing (odd number of lines) 1, first at {path}:5"
    )
    said = summary.with_skips("no pairs")
    assert said == f"no pairs; of the records without a response, {summary.reply_note().removeprefix('of which ')}"
    assert "skipped" not in said


def test_with_skips_counts_only_the_lines_skipped_as_skipped(tmp_path) -> None:  # noqa: ANN001
    import json

    import fairtalk

    path = tmp_path / "mixed.jsonl"
    chat = {"messages": [{"role": "system", "content": "be kind"}, {"role": "user", "content": "he is here"}]}
    path.write_text("{bad\n" + json.dumps(chat) + "\n{bad\n")
    corpus = fairtalk.read_corpus(path)
    assert len(list(corpus)) == 1 and corpus.summary.n_skipped == 3  # two lines skipped, one kept without a part
    said = corpus.summary.with_skips("too few")
    assert said == (
        f"too few; the reader skipped 2 line(s) of {path}: malformed JSON 2, first at {path}:1; "
        f"it kept 1 record(s) without a part: system messages (left out) 1, first at {path}:2"
    )
    assert corpus.summary.reply_note() == ""
