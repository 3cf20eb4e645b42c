"""The ``fairtalk augment`` and ``fairtalk pool-filter`` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app

RUNNER = CliRunner()
_BOX = str.maketrans(dict.fromkeys("│┃┌┐└┘─━┬┴├┤┼", " "))


def _flat(output: str) -> str:
    """The output with table borders removed and whitespace collapsed."""
    return " ".join(output.translate(_BOX).split())


def _corpus(tmp_path: Path) -> Path:
    rows = [
        {"context": "he is a doctor", "response": "that is great"},
        {"context": "how are you", "response": "she said hi"},
        {"context": "hello there", "response": "hi"},
        {"context": "no reply"},
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + "not json\n", encoding="utf-8")
    return path


def test_augment_writes_counterparts_and_reports_counts(tmp_path: Path) -> None:
    source = _corpus(tmp_path)
    out = tmp_path / "augmented.jsonl"
    result = RUNNER.invoke(app, ["augment", "--corpus", f"jsonl:{source}", "--axis", "gender", "-o", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["context"], r["response"], r["augmented"]) for r in records] == [
        ("he is a doctor", "that is great", False),
        ("she is a doctor", "that is great", True),
        ("how are you", "she said hi", False),
        ("how are you", "he said hi", True),
        ("hello there", "hi", False),
    ]
    text = _flat(result.output)
    assert "records read 4" in text and "without a response 1" in text
    assert "dialogues in 3" in text and "counterparts added 2" in text and "dialogues out 5" in text
    assert "× 1.67" in text and "skipped: malformed JSON 1" in text
    # the output is a corpus again
    back = [(c.text, c.response) for c in fairtalk.read_corpus(out)]
    assert back == [(r["context"], r["response"]) for r in records]


def test_augmenting_an_augmented_corpus_again_is_refused_unless_asked_for(tmp_path: Path) -> None:
    out = tmp_path / "augmented.jsonl"
    result = RUNNER.invoke(app, ["augment", "--corpus", f"jsonl:{_corpus(tmp_path)}", "--axis", "gender", "-o", str(out)])
    assert result.exit_code == 0, result.output
    twice = tmp_path / "twice.jsonl"
    for corpus in (str(out), f"jsonl:{out}"):
        result = RUNNER.invoke(app, ["augment", "--corpus", corpus, "--axis", "gender", "-o", str(twice)])
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and said.startswith(f"error: {out}: an augmented corpus fairtalk wrote"), said
        assert "twins of its twins" in said and "--again" in said and "Traceback" not in said
        assert not twice.exists()
    result = RUNNER.invoke(app, ["augment", "--corpus", str(out), "--axis", "gender", "-o", str(twice), "--again"])
    assert result.exit_code == 0, result.output
    assert len(twice.read_text(encoding="utf-8").splitlines()) == 9  # every record's twin: asked for


def test_augment_refuses_its_own_input(tmp_path: Path) -> None:
    source = _corpus(tmp_path)
    before = source.read_bytes()
    result = RUNNER.invoke(app, ["augment", "--corpus", f"jsonl:{source}", "--axis", "gender", "-o", str(source)])
    assert result.exit_code == 2
    assert "error:" in result.output and "is also the input --corpus" in result.output
    assert "Traceback" not in result.output
    assert source.read_bytes() == before


def test_augment_user_errors_exit_2(tmp_path: Path) -> None:
    out = str(tmp_path / "out.jsonl")
    cases = (
        ["augment", "--corpus", str(tmp_path / "missing.jsonl"), "--axis", "gender", "-o", out],
        ["augment", "--corpus", "builtin:chitchat", "-o", out],
        ["augment", "--corpus", "builtin:chitchat", "--axis", "gendr", "-o", out],
    )
    for args in cases:
        result = RUNNER.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "error:" in result.output and "Traceback" not in result.output


def test_pool_filter(tmp_path: Path) -> None:
    pool = tmp_path / "pool.txt"
    pool.write_text("nice to meet you\nshe is a nurse\nyou are a fucking idiot\nhave a lovely day\n", encoding="utf-8")
    out = tmp_path / "kept.txt"
    args = ["pool-filter", "--pool", str(pool), "-o", str(out), "--drop", "offensive,group_words", "--axis", "gender"]
    result = RUNNER.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").splitlines() == ["nice to meet you", "have a lovely day"]
    text = _flat(result.output)
    assert "pool before 4" in text and "pool after 2" in text and "dropped: group_words 1" in text


def test_pool_filter_with_a_multiway_axis_drops_every_groups_words(tmp_path: Path) -> None:
    """A bare religion drops candidates naming any of its six groups, not only its first pair's (once refused)."""
    pool = tmp_path / "pool.txt"
    lines = ["we met at church", "the hindu temple is old", "she is an atheist", "the buddhist sutras", "hello there"]
    pool.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "kept.txt"
    args = ["pool-filter", "--pool", str(pool), "-o", str(out), "--drop", "group_words", "--axis", "religion"]
    result = RUNNER.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").splitlines() == ["hello there"]
    assert "dropped: group_words 4" in _flat(result.output)
    one_pair = RUNNER.invoke(app, [*args[:-1], "religion:christian-muslim"])
    assert one_pair.exit_code == 0, one_pair.output  # church only: temple, atheist and sutras are not its words
    assert out.read_text(encoding="utf-8").splitlines() == lines[1:]


def test_pool_filter_errors(tmp_path: Path) -> None:
    pool = tmp_path / "pool.txt"
    pool.write_text("hi\n", encoding="utf-8")
    out = str(tmp_path / "out.txt")
    for args, message in (
        (["--drop", "offensiv"], "did you mean 'offensive'"),
        (["--drop", "group_words"], "needs an axis"),
        (["--drop", ","], "comma-separated"),
    ):
        result = RUNNER.invoke(app, ["pool-filter", "--pool", str(pool), "-o", out, *args])
        assert result.exit_code == 2 and message in result.output, result.output
    result = RUNNER.invoke(app, ["pool-filter", "--pool", str(pool), "-o", str(pool), "--drop", "negative"])
    assert result.exit_code == 2 and "is also the input --pool" in result.output


def test_augment_counts_the_system_messages_it_leaves_out_with_the_skipped_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def chat(*turns: tuple[str, str]) -> str:
        return json.dumps({"messages": [{"role": role, "content": text} for role, text in turns]}) + "\n"

    from fairtalk.cli._console import console, err_console

    monkeypatch.chdir(tmp_path)  # a short location column: the reason's cell is not wrapped at any width
    for made in (console, err_console):  # one table row a line, whatever width the consoles were made with (xdist)
        monkeypatch.setattr(made, "_width", 400)
    source = Path("chats.jsonl")
    source.write_text(
        chat(("system", "be kind"), ("user", "is he here?"), ("assistant", "yes")) + chat(("user", "hi"), ("assistant", "hello"))
    )
    out = tmp_path / "augmented.jsonl"
    argv = ["augment", "--corpus", f"jsonl:{source}", "--axis", "gender", "-o", str(out)]
    result = RUNNER.invoke(app, argv, env={"COLUMNS": "400"})  # one table row a line
    assert result.exit_code == 0, result.output
    text = _flat(result.output)
    assert "dialogues in 2" in text and "counterparts added 1" in text
    # the reason's cell may wrap beside the count's at a narrow terminal: its words, the count and the place
    assert "kept without a part: system messages (left out)" in text and "--system-prompt" not in text, text
    assert f"1 first at {source}:1" in text, text


def _wide(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    from fairtalk.cli._console import console, err_console

    for made in (console, err_console):  # the width the tables are drawn at, whatever the consoles were made with (xdist)
        monkeypatch.setattr(made, "_width", width)


def test_augment_counts_a_missing_reply_once_among_those_without_a_response(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding: the last line of an odd twitter file was "without a response 1" and "skipped: reply: ... 1" too."""
    monkeypatch.chdir(tmp_path)
    _wide(monkeypatch, 400)
    Path("odd.txt").write_text("he is here\nok\nmy mom\n")
    result = RUNNER.invoke(app, ["augment", "--corpus", "twitter:odd.txt", "--axis", "gender", "-o", "o1.jsonl"])
    assert result.exit_code == 0, result.output
    text = _flat(result.output)
    assert (
        "records read 2 without a response 1 left out of which reply 1 missing (odd number of lines), first at odd.txt:3" in text
    )
    assert "skipped: reply" not in text and "kept without a part: reply" not in text
    Path("one.txt").write_text("my mom\n")  # no dialogue at all: the error counts it once too
    result = RUNNER.invoke(app, ["augment", "--corpus", "twitter:one.txt", "--axis", "gender", "-o", "o2.jsonl"])
    flat = _flat(result.output)
    assert result.exit_code == 2 and "1 records read, 1 without a response (1 reply: missing (odd number of lines))" in flat
    assert "skipped" not in flat and not Path("o2.jsonl").exists()


def test_augment_wraps_a_long_output_path_and_location_at_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review finding: the "→ OUTPUT" and "first at ..." cells ended in "…" at 80 columns; they wrap, as pairs' do."""
    _wide(monkeypatch, 80)
    deep = tmp_path / ("a_long_folder_name_" * 4) / ("another_long_folder_" * 3)
    deep.mkdir(parents=True)
    source = deep / "odd_twitter_corpus_file.txt"
    source.write_text("he is here\nok\nmy mom\nok\nhe said\n")
    out = deep / "augmented_corpus_output_file.jsonl"
    result = RUNNER.invoke(app, ["augment", "--corpus", f"twitter:{source}", "--axis", "gender", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output and all(len(line) <= 80 for line in result.output.splitlines())
    joined = "".join(result.output.translate(_BOX).split())  # a folded cell's lines, joined again
    assert f"→{out}" in joined and f"firstat{source}:5" in joined


def test_pool_filter_counts_the_blank_lines_it_skips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review finding: a pool of 12 lines, 2 of them blank, said "pool before 10" and nothing of the other 2."""
    _wide(monkeypatch, 400)
    pool = tmp_path / "pool.txt"
    lines = ["hello there", "", "nice day", "   ", "she is here", "good", "fine", "yes", "no", "ok", "\t", "thanks"]
    pool.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "kept.txt"
    args = ["pool-filter", "--pool", str(pool), "-o", str(out), "--drop", "group_words", "--axis", "gender"]
    result = RUNNER.invoke(app, args)
    assert result.exit_code == 0, result.output
    text = _flat(result.output)
    assert "lines read 12 blank lines skipped 3 pool before 9 dropped: group_words 1 pool after 8" in text, text
    pool.write_text("hello there\nnice day\n", encoding="utf-8")  # none blank: no such rows
    text = _flat(RUNNER.invoke(app, [*args[:4], str(tmp_path / "kept2.txt"), *args[5:]]).output)
    assert "pool before 2" in text and "blank" not in text and "lines read" not in text


def test_pool_filter_that_drops_every_candidate_is_an_error_and_writes_nothing(tmp_path: Path) -> None:
    """Review finding: it wrote a 0-byte pool with exit 0, which ``respond --model builtin:retrieval?pool=`` then refused."""
    pool = tmp_path / "pool.txt"
    pool.write_text("she is here\nhe is ok\n\nmy mom\n", encoding="utf-8")
    out = tmp_path / "kept.txt"
    args = ["pool-filter", "--pool", str(pool), "-o", str(out), "--drop", "group_words,negative", "--axis", "gender"]
    result = RUNNER.invoke(app, args)
    flat = _flat(result.output)
    assert result.exit_code == 2, result.output
    assert "error:" in flat and "every candidate of the pool was dropped (group_words 3); nothing was written" in flat
    assert "give fewer --drop reasons" in flat and not out.exists()
