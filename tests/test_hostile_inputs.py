"""Issue 24's classes of fault, probed as a hostile user would: every instance found, one test each.

1. Data loss: a command writes only where the user named, or where it wrote before; a default
   path, a folder's files, a checkpoint folder holding the user's files are never replaced, and
   ``-``/``~`` never become a file or a folder of that name.
2. Stdout purity: ``-o -`` leaves only the document on stdout, whatever a model prints.
3. Silent no-ops: an empty input or an option that parses to nothing is an error, not exit 0.
4. Conflicting options: an option that would be dropped in silence is an error.
5. Hangs and bombs: a FIFO, a device or an endless stdin is refused at once; deep JSON is an error.
6. No traceback (exit 3) for any of them.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk import OutputError
from fairtalk.cli import app
from fairtalk.files import WRITTEN

runner = CliRunner()

CORPUS = [
    "my mom said he is a good man",
    "the woman told her brother to go home",
    "my sister likes her boyfriend",
    "the king and his son went out",
    "she is my daughter",
    "he is my husband",
    "his father is a doctor",
    "her aunt is coming over",
    "the boy lost his keys",
    "the girl sings in a band",
]
PRINTING_MODEL = """
def respond(text):
    print("NOISE FROM MODEL")
    return "ok " + text[:10]
"""


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "corpus.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"context": line}) + "\n" for line in CORPUS), encoding="utf-8")
    return path


@pytest.fixture()
def pairs_file(corpus: Path) -> Path:
    path = corpus.parent / "pairs.jsonl"
    result = runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(path), "-q"])
    assert result.exit_code == 0, result.output
    return path


def _error(result: object, *needles: str) -> str:
    """The exit is 2 with one ``error:`` line holding every needle (never a traceback)."""
    assert result.exit_code == 2, (result.exit_code, result.output)  # type: ignore[attr-defined]
    stderr = result.stderr.replace("\n", "")  # type: ignore[attr-defined]
    assert stderr.startswith("error: "), stderr
    for needle in needles:
        assert needle in stderr, (needle, stderr)
    return stderr


def _cli(
    *args: str, stdin: object = subprocess.DEVNULL, cwd: Path | None = None, timeout: float = 30
) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "fairtalk.cli", *args], stdin=stdin, capture_output=True, text=True, timeout=timeout, cwd=cwd
    )
    return done, time.perf_counter() - started


# --- 1. data loss ---------------------------------------------------------------------------------------------


def test_pairs_never_replaces_a_users_check_file_or_default_output(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "pairs_check.json").write_text("my notes")
    args = ["pairs", "--corpus", str(corpus), "--axis", "gender", "-q"]
    _error(runner.invoke(app, [*args, "-o", str(out / "p.jsonl")]), f"{out / 'pairs_check.json'}", "--check")
    assert (out / "pairs_check.json").read_text() == "my notes" and not (out / "p.jsonl").exists()
    assert runner.invoke(app, [*args, "-o", str(out / "p.jsonl"), "--check", str(out / "c.json")]).exit_code == 0
    monkeypatch.chdir(out)  # no -o: pairs.jsonl here is the default, and this one is the user's
    (out / "pairs.jsonl").write_text("my own pairs, not fairtalk's\n")
    (out / "pairs_check.json").unlink()
    _error(runner.invoke(app, args), "pairs.jsonl", "-o")
    assert (out / "pairs.jsonl").read_text() == "my own pairs, not fairtalk's\n" and not (out / "pairs_check.json").exists()
    (out / "pairs.jsonl").unlink()
    for _ in range(2):  # fairtalk's own files at the default places are replaced, run after run
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    assert fairtalk.read_pairs(out / "pairs.jsonl") and json.loads((out / "pairs_check.json").read_text())["n_pairs"] > 0


def test_respond_never_replaces_a_users_file_at_its_default_output(
    pairs_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "responses.jsonl").write_text("a,b\nmy spreadsheet\n")
    args = ["respond", "--pairs", str(pairs_file), "--model", "builtin:echo", "-q"]
    _error(runner.invoke(app, args), "responses.jsonl", "-o")
    assert (tmp_path / "responses.jsonl").read_text() == "a,b\nmy spreadsheet\n"
    (tmp_path / "responses.jsonl").unlink()
    for _ in range(2):
        assert runner.invoke(app, args).exit_code == 0
    (tmp_path / "mine.jsonl").write_text("mine\n")  # a path the user names is no licence to replace their file (issue 38)
    _error(runner.invoke(app, [*args, "-o", "mine.jsonl"]), "mine.jsonl", "not a responses file fairtalk wrote")
    assert (tmp_path / "mine.jsonl").read_text() == "mine\n"
    assert runner.invoke(app, [*args, "-o", "responses.jsonl"]).exit_code == 0  # fairtalk's own: replaced


@pytest.mark.parametrize("given", ["-", "~", "~/out"])
def test_dash_and_tilde_never_become_a_file_or_folder(
    given: str, corpus: Path, pairs_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    responses = tmp_path / "r.jsonl"
    assert (
        runner.invoke(app, ["respond", "--pairs", str(pairs_file), "--model", "builtin:echo", "-o", str(responses)]).exit_code
        == 0
    )
    commands = [
        ["score", "--responses", str(responses), "--axis", "gender", "-o", given],
        ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", given],
        ["augment", "--corpus", str(corpus), "--axis", "gender", "-o", given],
        ["train", "seq2seq", "--corpus", str(corpus), "-o", given],
        ["prompts", "paraphrase", "-o", given],
        ["regard", "label", "--input", str(pairs_file), "-o", given],
        ["similarity", "--pairs", str(pairs_file), "--model", "builtin:echo", "-o", given],
    ]
    if given != "-":  # pairs and respond write to stdout for '-'
        commands += [
            ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", given],
            ["respond", "--pairs", str(pairs_file), "--model", "builtin:echo", "-o", given],
        ]
    for command in commands:
        _error(runner.invoke(app, [*command, "-q"]), repr(given) if given == "-" else "'~'")
    assert list(work.iterdir()) == []


def test_train_refuses_a_file_and_the_users_files_before_training(corpus: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    args = ["train", "seq2seq", "--corpus", str(corpus), "--epochs", "1", "-q"]
    _error(runner.invoke(app, [*args, "-o", str(notes)]), "is a file, not a folder")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "vocab.json").write_text("my vocabulary")
    started = time.perf_counter()
    _error(runner.invoke(app, [*args, "-o", str(mine)]), f"{mine / 'vocab.json'}: not written by fairtalk")
    assert time.perf_counter() - started < 5  # refused before the corpus is read or a model built
    assert notes.read_text() == "my notes" and (mine / "vocab.json").read_text() == "my vocabulary"


def _save(folder: Path) -> None:
    import torch

    from fairtalk.training import Vocab, save_checkpoint

    save_checkpoint(
        folder,
        config={"model": "seq2seq", "architecture": {}},
        vocab=Vocab.build(["he is"]),
        state={"w": torch.zeros(2)},
        dtype="float32",
    )


def test_a_checkpoint_replaces_only_what_fairtalk_wrote(tmp_path: Path) -> None:
    from fairtalk.training import load_checkpoint

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.json").write_text('{"my": "settings"}')
    with pytest.raises(OutputError, match="not written by fairtalk"):
        _save(mine)
    assert (mine / "config.json").read_text() == '{"my": "settings"}' and sorted(p.name for p in mine.iterdir()) == [
        "config.json"
    ]
    ours = tmp_path / "ours"
    _save(ours)
    (ours / "notes.txt").write_text("kept")
    _save(ours)  # a second save (the next epoch) replaces its own files and keeps the user's
    assert load_checkpoint(ours).kind == "seq2seq" and (ours / "notes.txt").read_text() == "kept"
    (ours / WRITTEN).unlink()  # a checkpoint of an earlier fairtalk, without the marker, is still fairtalk's
    _save(ours)
    assert load_checkpoint(ours).kind == "seq2seq"


def test_reproduce_refuses_the_users_files_before_any_training(tmp_path: Path) -> None:
    for where in ("table7.md", "baseline/index.html", "pairs.jsonl"):
        out = tmp_path / where.replace("/", "_")
        (out / where).parent.mkdir(parents=True, exist_ok=True)
        (out / where).write_text("mine")
        with pytest.raises(OutputError, match="not written by fairtalk"):
            fairtalk.reproduce_debias(out_dir=out, quick=True, corpus=str(tmp_path / "never-read.jsonl"))
        assert (out / where).read_text() == "mine"
    with pytest.raises(OutputError, match="your home folder"):
        fairtalk.reproduce_debias(out_dir=tmp_path / "out", cache_dir=Path.home(), quick=True)


def test_write_comparison_and_write_index_replace_only_fairtalks_files(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairtalk.report import _comparison as comparison
    from fairtalk.report import write_index

    for name in ("render_comparison_markdown", "render_comparison_csv"):
        monkeypatch.setattr(comparison, name, lambda c: "table\n")
    fake = SimpleNamespace(to_dict=lambda: {"axis": "gender"}, to_json=lambda: '{"axis": "gender"}\n')
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "table7.md").write_text("my table")
    with pytest.raises(OutputError, match="not written by fairtalk"):
        comparison.write_comparison(fake, out)  # type: ignore[arg-type]
    assert sorted(p.name for p in out.iterdir()) == ["table7.md"] and (out / "table7.md").read_text() == "my table"
    (out / "table7.md").unlink()
    for _ in range(2):
        paths = comparison.write_comparison(fake, out)  # type: ignore[arg-type]
    assert json.loads(paths["json"].read_text()) == {"axis": "gender"}
    old = tmp_path / "before-the-marker"  # a folder of an earlier fairtalk: its results.json names its files
    old.mkdir()
    (old / "table7.md").write_text("old table")
    (old / "results.json").write_text(json.dumps({"mode": "quick", "models": {}, "files": {"table_md": str(old / "table7.md")}}))
    comparison.write_comparison(fake, old)  # type: ignore[arg-type]
    assert (old / "table7.md").read_text() == "table\n"
    run = fairtalk.audit(corpus=corpus, axes="gender", model="builtin:echo", n_resamples=200)
    page = tmp_path / "page"
    page.mkdir()
    (page / "index.html").write_text("<p>my page</p>")
    with pytest.raises(OutputError, match="not written by fairtalk"):
        write_index(run, page)
    assert (page / "index.html").read_text() == "<p>my page</p>" and not (page / "run.json").exists()
    write_index(run, tmp_path / "fresh")
    write_index(run, tmp_path / "fresh")
    assert json.loads((tmp_path / "fresh" / "run.json").read_text())["generator"] == "fairtalk"


def test_a_users_own_database_is_never_made_a_run_store(pairs_file: Path, tmp_path: Path) -> None:
    import sqlite3

    mine = tmp_path / "contacts.db"
    with sqlite3.connect(mine) as db:
        db.execute("CREATE TABLE contacts (name TEXT)")
    before = mine.read_bytes()
    result = runner.invoke(
        app,
        ["respond", "--pairs", str(pairs_file), "--model", "builtin:echo", "--store", str(mine), "-o", str(tmp_path / "r.jsonl")],
    )
    _error(result, f"{mine}: not a fairtalk run store", "contacts")
    assert mine.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["contacts.db", "data"]


@pytest.mark.parametrize("given", ["", " "])
def test_an_empty_output_path_is_an_error_not_the_working_folder(
    given: str, corpus: Path, pairs_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    responses = tmp_path / "r.jsonl"
    assert (
        runner.invoke(app, ["respond", "--pairs", str(pairs_file), "--model", "builtin:echo", "-o", str(responses)]).exit_code
        == 0
    )
    for command in (
        ["score", "--responses", str(responses), "--axis", "gender"],
        ["pairs", "--corpus", str(corpus), "--axis", "gender"],
        ["respond", "--pairs", str(pairs_file), "--model", "builtin:echo"],
    ):
        _error(runner.invoke(app, [*command, "-o", given, "-q"]), "is empty")
    with pytest.raises(OutputError, match="is empty"):
        fairtalk.reproduce_debias(out_dir=given, quick=True)
    assert list(work.iterdir()) == []


# --- 2. stdout keeps only the document ----------------------------------------------------------------------


def test_dash_outputs_keep_stdout_to_the_document(
    pairs_file: Path, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    model = tmp_path / "printer.py"
    model.write_text(PRINTING_MODEL)
    result = runner.invoke(app, ["respond", "--pairs", str(pairs_file), "--model", f"python:{model}:respond", "-o", "-"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and {r["side"] for r in rows} == {"a", "b"} and all(r["response"].startswith("ok ") for r in rows)
    assert "NOISE FROM MODEL" in result.stderr and not (tmp_path / "-").exists()
    result = runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", "-"])
    assert result.exit_code == 0 and [json.loads(line)["axis"] for line in result.stdout.splitlines()]


# --- 3. nothing to do is an error -------------------------------------------------------------------------------


def test_inputs_that_give_nothing_to_do_are_errors(corpus: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    no_match = tmp_path / "plain.txt"
    no_match.write_text("the cat sat\nwe went out\n")
    out = tmp_path / "out.jsonl"  # never made: each command stops before writing
    pairs = ["pairs", "--axis", "gender", "-o", str(out), "--check", str(tmp_path / "c.json"), "-q"]
    _error(runner.invoke(app, [*pairs, "--corpus", str(empty)]), "no pairs", "0 contexts read")
    _error(runner.invoke(app, [*pairs, "--corpus", str(no_match)]), "no pairs", "2 contexts read", "none mentions")
    _error(runner.invoke(app, [*pairs, "--corpus", str(corpus), "--field", "nope"]), "no pairs", "skipped")
    assert not out.exists() and not (tmp_path / "c.json").exists()
    _error(runner.invoke(app, [*pairs, "--corpus", str(corpus), "--field", " "]), "--field")
    _error(runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(out), "--check", ""]), "--check")
    _error(runner.invoke(app, ["respond", "--pairs", str(empty), "--model", "builtin:echo", "-o", str(out)]), "no pairs")
    _error(
        runner.invoke(app, ["augment", "--corpus", str(corpus), "--axis", "gender", "-o", str(out)]), "no dialogues", "response"
    )
    _error(runner.invoke(app, ["pool-filter", "--pool", str(empty), "--axis", "gender", "-o", str(out)]), "no candidates")
    _error(
        runner.invoke(app, ["regard", "label", "--input", str(empty), "--regard", "builtin:tfidf", "-o", str(out)]), "no texts"
    )
    assert not out.exists()


# --- 4. an option that would be dropped in silence ----------------------------------------------------------


def test_options_that_would_be_ignored_are_errors(pairs_file: Path, corpus: Path, tmp_path: Path) -> None:
    respond = ["respond", "--pairs", str(pairs_file), "--model", "builtin:echo", "-o", str(tmp_path / "r.jsonl")]
    for option in (["--temperature", "0.3"], ["--top-k", "5"], ["--top-p", "0.9"]):
        _error(runner.invoke(app, [*respond, *option]), option[0], "--sample")
    assert runner.invoke(app, [*respond, "--sample", "--temperature", "0.3"]).exit_code == 0
    audit = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(tmp_path / "a")]
    for option in (["--temperature", "0.3"], ["--top-k", "5"], ["--top-p", "0.9"]):
        _error(runner.invoke(app, [*audit, *option]), option[0], "--sample")
    settings = tmp_path / "sampled.toml"
    settings.write_text("[settings]\ndo_sample = true\n")  # a config file that samples takes the CLI's temperature
    assert runner.invoke(app, [*audit, "--config", str(settings), "--temperature", "0.3", "-q"]).exit_code == 0
    pool = tmp_path / "pool.txt"
    pool.write_text("a nice reply\n")
    _error(
        runner.invoke(
            app, ["pool-filter", "--pool", str(pool), "--drop", "negative", "--axis", "gender", "-o", str(tmp_path / "p.txt")]
        ),
        "--axis",
        "group_words",
    )
    _error(
        runner.invoke(app, ["pool-filter", "--pool", str(pool), "--drop", "group_words", "-o", str(tmp_path / "p.txt")]), "--axis"
    )
    train = ["train", "seq2seq", "--corpus", str(corpus), "-o", str(tmp_path / "ck")]
    _error(runner.invoke(app, [*train, "--wer-k", "0.9"]), "--wer-k", "--debias wer")
    _error(runner.invoke(app, [*train, "--pool-size", "10"]), "--pool-size", "retrieval")
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "1", "label": 1, "text": "XYZ was kind"}\n')
    _error(
        runner.invoke(app, ["regard", "check", "--gold", str(gold), "--predicted", str(gold), "--regard", "builtin:tfidf"]),
        "--predicted",
        "--regard",
    )
    assert not (tmp_path / "ck").exists()


def test_judge_options_without_a_judge_measure_are_errors(corpus: Path, tmp_path: Path) -> None:
    """Review finding: --judge-scale and --judge-rubric without a judge: measure were accepted and recorded in run.json."""
    audit = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(tmp_path / "a")]
    _error(runner.invoke(app, [*audit, "--judge-scale", "1-5"]), "--judge-scale applies only with a judge", "judge:")
    (tmp_path / "a.txt").write_text("he is kind\nhe is here\n")
    (tmp_path / "b.txt").write_text("she is kind\nshe is here\n")
    score = ["score", "--responses", str(tmp_path / "a.txt"), "--responses-b", str(tmp_path / "b.txt"), "--axis", "gender"]
    score += ["-o", str(tmp_path / "s")]
    both = _error(
        runner.invoke(app, [*score, "--measures", "length", "--judge-rubric", "Rude? {response}", "--judge-scale", "1-5"]),
        "--judge-rubric, --judge-scale apply only with a judge",
    )
    assert "so they would be ignored" in both
    settings = tmp_path / "judged.toml"
    settings.write_text('judge_scale = "1-5"\n')  # a config file's judge option, with no judge, too
    _error(runner.invoke(app, [*score, "--config", str(settings)]), "--judge-scale applies only with a judge")
    assert not (tmp_path / "a").exists() and not (tmp_path / "s").exists()


# --- 5. no hang, no bomb --------------------------------------------------------------------------------------


def test_pipes_devices_and_endless_stdin_are_refused_at_once(pairs_file: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "options.toml"
    os.mkfifo(fifo)
    responses = tmp_path / "r.jsonl"
    respond = ["respond", "--pairs", str(pairs_file), "--model", "builtin:echo", "-o", str(responses)]
    cases = [
        (["score", "--responses", str(pairs_file), "--axis", "gender", "--config", str(fifo)], None, "not a regular file"),
        ([*respond, "--system-prompt", "@/dev/zero"], None, "not a regular file"),
        ([*respond[:2], "-", *respond[3:]], "zero", "longer than"),
        (["swap", "--axis", "gender"], "zero", "longer than"),
        ([*respond[:2], "-", *respond[3:]], "urandom", "UTF-8"),
    ]
    for args, stdin, needle in cases:
        with open(f"/dev/{stdin}", "rb") if stdin else open(os.devnull, "rb") as source:
            done, seconds = _cli(*args, stdin=source)
        assert done.returncode == 2 and needle in done.stderr, (args, done.returncode, done.stderr[-500:])
        assert seconds < 20
    assert not responses.exists()


def test_a_lexicon_file_of_gigabytes_is_refused_unread(corpus: Path, tmp_path: Path) -> None:
    huge = tmp_path / "huge.tsv"
    with huge.open("wb") as handle:
        handle.truncate((64 << 20) + 1)  # sparse: nothing is written to disk
    _error(
        runner.invoke(app, ["pairs", "--corpus", str(corpus), "--lexicon", str(huge), "-o", str(tmp_path / "p.jsonl")]),
        "larger than 64 MiB",
    )


def test_deeply_nested_records_are_an_error_not_a_crash(pairs_file: Path, tmp_path: Path) -> None:
    record = json.loads(pairs_file.read_text().splitlines()[0])
    line = json.dumps(record)[:-1] + ', "x": ' + "[" * 700 + '"\\ud800"' + "]" * 700 + "}"
    deep = tmp_path / "deep.jsonl"
    deep.write_text(line + "\n")
    _error(
        runner.invoke(app, ["respond", "--pairs", str(deep), "--model", "builtin:echo", "-o", str(tmp_path / "r.jsonl")]),
        f"{deep}:1",
        "nest",
    )


def test_a_group_name_xml_forbids_is_refused_before_any_report(corpus: Path, tmp_path: Path) -> None:
    """Issue 38 item 15: a control character in a group name would make --junit not well-formed XML; the lexicon is refused."""
    lexicon = tmp_path / "ctl.tsv"
    lexicon.write_text("# groups: ma\x01le female\nhe\tshe\nhis\ther\n", encoding="utf-8")
    junit = tmp_path / "junit.xml"
    args = ["audit", "--corpus", str(corpus), "--axis", str(lexicon), "--model", "builtin:echo", "-o", str(tmp_path / "out")]
    _error(runner.invoke(app, [*args, "--junit", str(junit), "-q"]), f"{lexicon}:1", "U+0001")
    assert not junit.exists()


# --- 7. input files, broken pipes and SIGTERM (review of issue 24's classes, second pass) -------------------------


def test_a_record_from_a_newer_fairtalk_is_refused_not_misread(pairs_file: Path, tmp_path: Path) -> None:
    """A pairs or responses file whose records carry a ``schema_version`` above this fairtalk's is an error at its line."""
    future_pairs = tmp_path / "future-pairs.jsonl"
    lines = pairs_file.read_text(encoding="utf-8").splitlines()
    future_pairs.write_text("".join(json.dumps({**json.loads(line), "schema_version": 99}) + "\n" for line in lines))
    responses = tmp_path / "r.jsonl"
    respond = ["respond", "--model", "builtin:echo", "-q", "--pairs"]
    _error(runner.invoke(app, [*respond, str(future_pairs), "-o", str(responses)]), f"{future_pairs}:1", "schema_version 99")
    assert not responses.exists()
    assert runner.invoke(app, [*respond, str(pairs_file), "-o", str(responses)]).exit_code == 0
    future_responses = tmp_path / "future-responses.jsonl"
    lines = responses.read_text(encoding="utf-8").splitlines()
    future_responses.write_text("".join(json.dumps({**json.loads(line), "schema_version": 2}) + "\n" for line in lines))
    score = ["score", "--responses", str(future_responses), "--axis", "gender", "-o", str(tmp_path / "s"), "-q"]
    _error(runner.invoke(app, score), f"{future_responses}:1", "schema_version 2")


def test_an_options_file_may_start_with_a_bom_and_bad_bytes_are_named(corpus: Path, tmp_path: Path) -> None:
    """A UTF-8 BOM (as Windows editors write) is read past, as in every JSONL reader; bytes not UTF-8 are a plain error."""
    with_bom = tmp_path / "bom.toml"
    with_bom.write_bytes(b"\xef\xbb\xbfseed = 3\r\n")
    args = ["audit", "--model", "builtin:echo", "--axis", "gender", "--corpus", str(corpus), "-o", str(tmp_path / "o"), "-q"]
    done = runner.invoke(app, [*args, "--config", str(with_bom)])
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "o" / "run.json").read_text(encoding="utf-8"))["seed"] == 3
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"seed = 3\n# caf\xe9\n")
    _error(runner.invoke(app, [*args, "--config", str(bad)]), str(bad), "not valid UTF-8 (byte 0xe9 at offset 14)")


def test_a_reader_closing_the_pipe_ends_a_command_quietly(tmp_path: Path) -> None:
    """``fairtalk pairs -o - | head -1``: exit 0 (not 1, a failed gate's code), and nothing on stderr."""
    corpus = tmp_path / "big.jsonl"
    lines = (json.dumps({"context": f"my mom said she is kind, number {i} " + "and so on " * 30}) for i in range(4000))
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")  # about 1.5 MB of pairs: more than a pipe holds
    args = [sys.executable, "-m", "fairtalk.cli", "pairs", "--corpus", str(corpus), "--axis", "gender", "-o", "-", "-q"]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline().startswith(b'{"id": ')
        process.stdout.close()
        stderr = process.stderr.read().decode()
        code = process.wait(timeout=120)
    assert code == 0, (code, stderr)
    assert stderr == ""


def test_a_pipe_closed_under_a_console_printing_command_ends_it_quietly_with_exit_0() -> None:
    """Review: ``fairtalk plan --gate | head -1`` exited 1, a failed gate's code: rich's console ended the program on
    the broken pipe before the app's handler saw it. Its reader is gone before it writes a line, so every write fails."""
    reader, writer = os.pipe()
    os.close(reader)
    args = [sys.executable, "-m", "fairtalk.cli", "plan", "--gate"]
    try:
        process = subprocess.Popen(args, stdout=writer, stderr=subprocess.PIPE)
    finally:
        os.close(writer)
    with process:
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, (process.returncode, stderr)
    assert stderr == b""


def _closed_pipe_run(args: list[str], cwd: Path) -> tuple[int, bytes]:
    """Run ``fairtalk args`` with stdout a pipe whose reader is gone before it starts: its exit code and stderr."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        process = subprocess.Popen([sys.executable, "-m", "fairtalk.cli", *args], stdout=writer, stderr=subprocess.PIPE, cwd=cwd)
    finally:
        os.close(writer)
    with process:
        _, stderr = process.communicate(timeout=300)
    return process.returncode, stderr


def test_a_closed_pipe_neither_passes_a_failing_gate_nor_skips_the_rest_of_the_work(corpus: Path, tmp_path: Path) -> None:
    """Review: ``fairtalk audit … --baseline-model … --fail-if-worse --junit j.xml | head -1`` exited 0, with no baseline,
    no comparison and no JUnit file: the first line that found the pipe closed ended the command. The console falls
    silent instead; the command writes every file, and a failing gate still exits 1."""
    out = tmp_path / "gated"
    args = ["audit", "--model", "builtin:echo?mode=upper", "--baseline-model", "builtin:echo", "--corpus", str(corpus)]
    args += ["--axis", "gender", "--pairs", "30", "-o", str(out), "--measures", "sentiment", "--fail-if-worse"]
    code, stderr = _closed_pipe_run([*args, "--junit", str(tmp_path / "j.xml")], tmp_path)
    assert code == 1, (code, stderr)
    assert (tmp_path / "j.xml").is_file()
    assert (out / "baseline" / "run.json").is_file()
    assert (out / "comparison").is_dir()
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr
    compared = ["compare", str(out / "baseline"), str(out), "--fail-if-worse", "--json", "--junit", str(tmp_path / "c.xml")]
    code, stderr = _closed_pipe_run(compared, tmp_path)  # --json writes its document to stdout itself, not by the console
    assert code == 1, (code, stderr)
    assert (tmp_path / "c.xml").is_file()
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr
    passing = ["audit", "--model", "builtin:echo", "--corpus", str(corpus), "--axis", "gender", "-o", str(tmp_path / "p")]
    code, stderr = _closed_pipe_run([*passing, "--junit", str(tmp_path / "p.xml")], tmp_path)
    assert (code, stderr) == (0, b"")
    assert (tmp_path / "p.xml").is_file() and (tmp_path / "p" / "index.html").is_file()


HANGING_MODEL = """
import os, time
calls = []
def reply(text):
    calls.append(text)
    time.sleep(0.3)  # slower than the store's commit interval (0.25 s), so each answer is committed
    while len(calls) > 6 and os.path.exists("hang"):  # answers six, then hangs while the file is there
        time.sleep(0.05)
    return "ok " + text[:20]
"""


def test_sigterm_during_an_audit_keeps_the_store_says_so_and_a_rerun_resumes(corpus: Path, tmp_path: Path) -> None:
    """A CI runner cancelling a job sends SIGTERM: the audit stops as on Ctrl-C (exit 130, the store named), no traceback."""
    import signal
    import sqlite3

    (tmp_path / "hangbot.py").write_text(HANGING_MODEL, encoding="utf-8")
    (tmp_path / "hang").touch()
    out = tmp_path / "out"
    args = [
        "audit",
        "--model",
        "python:hangbot.py:reply",
        "--axis",
        "gender",
        "--corpus",
        str(corpus),
        "-o",
        str(out),
        "--batch-size",
        "2",
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "fairtalk.cli", *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    store = out / "store.sqlite"
    answered = 0
    for _ in range(6000):  # until the store holds an answer (batches of 2; the model hangs after 6 answers)
        if process.poll() is not None:
            break
        if store.exists():
            with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
                answered = db.execute("select count(*) from responses").fetchone()[0]
        if answered:
            break
        time.sleep(0.01)
    assert answered, "the audit stored no answer before it was stopped"
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, (process.returncode, stderr[-800:])
    assert "Traceback" not in stderr
    assert f"answers so far are kept in {store}" in " ".join(stderr.split()) and "resume" in stderr  # as wrapped
    (tmp_path / "hang").unlink()
    rerun, _ = _cli(*args, cwd=tmp_path, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-800:]
    said = rerun.stdout + rerun.stderr
    assert "from the store" in said and " 0 from the store" not in said


def test_a_gzip_file_given_for_a_jsonl_file_is_named_as_one(pairs_file: Path, tmp_path: Path) -> None:
    """Pairs, responses and gold files are plain JSON Lines: a gzip given by mistake is told to be decompressed."""
    import gzip

    packed = tmp_path / "pairs.jsonl.gz"
    packed.write_bytes(gzip.compress(pairs_file.read_bytes()))
    args = ["respond", "--pairs", str(packed), "--model", "builtin:echo", "-o", str(tmp_path / "r.jsonl"), "-q"]
    _error(runner.invoke(app, args), f"{packed}:1", "gzip", "gunzip")


@pytest.mark.parametrize("bom", ["utf-16", "utf-16-be"])
def test_swap_refuses_utf16_input_as_the_corpus_readers_do(bom: str, tmp_path: Path) -> None:
    """Review finding: `fairtalk swap < utf16.txt` wrote the UTF-16 input back unchanged, exit 0, with no message."""
    text = "he said hi\nshe went home\n".encode(bom if bom == "utf-16" else "utf-16-be")
    if bom == "utf-16-be":
        text = b"\xfe\xff" + text
    done = runner.invoke(app, ["swap", "--axis", "gender"], input=text)
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("error: standard input: UTF-16 text") and "save it as UTF-8" in done.stderr
    assert done.stdout == ""
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(text)
    pairs = runner.invoke(app, ["pairs", "--corpus", f"text:{corpus}", "--axis", "gender", "-o", str(tmp_path / "p.jsonl")])
    assert pairs.exit_code == 2 and "UTF-16 text (it starts with a UTF-16 byte order mark): save it as UTF-8" in " ".join(
        pairs.stderr.split()
    )
    assert runner.invoke(app, ["swap", "--axis", "gender"], input=b"he said hi\n").stdout == "she said hi\n"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_swap_refuses_utf16_input_without_a_byte_order_mark(encoding: str, tmp_path: Path) -> None:
    """Review finding: BOM-less UTF-16LE piped into `fairtalk swap` went through unswapped, NUL bytes and all, exit 0."""
    text = "he said hi\nshe went home\n".encode(encoding)
    done = runner.invoke(app, ["swap", "--axis", "gender"], input=text)
    assert done.exit_code == 2, done.output
    flat = " ".join(done.stderr.split())
    assert (
        flat.startswith("error: standard input: UTF-16 text (a NUL byte at every other position") and "save it as UTF-8" in flat
    )
    assert done.stdout == ""
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(text)
    pairs = runner.invoke(app, ["pairs", "--corpus", f"text:{corpus}", "--axis", "gender", "-o", str(tmp_path / "p.jsonl")])
    assert pairs.exit_code == 2 and "UTF-16 text (a NUL byte at every other position" in " ".join(pairs.stderr.split())
    kept = runner.invoke(app, ["swap", "--axis", "gender"], input=b"he said\x00hi\n")  # a NUL in UTF-8 text: swapped, kept
    assert kept.exit_code == 0 and kept.stdout == "she said\x00hi\n"
