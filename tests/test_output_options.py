"""Every output option keeps one rule (issue 38): never an input, a device, a FIFO or a file fairtalk did not write.

1. One walk over the typer app finds every command's output options (``-o``, ``--junit``,
   ``--check``, ``--store``, ``--cache`` and any option whose help says it writes), so an output
   option added later is held to the rule until it has tiny inputs here (``OUTPUT_ARGS``); each is
   pointed at an input of its command, a FIFO, a device and the user's own file, and must
   refuse with exit 2, leaving the target as it was (a FIFO still a FIFO, the device a device).
2. ``--junit`` is never a report of the same run nor inside a baseline's folder, and replaces only
   a JUnit file fairtalk wrote.
3. The atomic writer and the run store never replace or open a device or a FIFO.
4. ``$GITHUB_STEP_SUMMARY`` is best effort: an unusable one is a warning and the gate's exit code stands;
   it is never appended to an input and never blocks.
5. Messages print paths and user text verbatim: no ``:x:`` emoji, no ``[bold]`` markup.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_corpus, write_responses
from cli_walk import commands, flag
from fairtalk import OutputError
from fairtalk.cli import app
from fairtalk.errors import StoreError

runner = CliRunner()

#: The flags of an output option; any other option whose help says it writes (``Folder for …``, ``… to write``) is one too.
OUTPUT_FLAGS = frozenset({"-o", "--output", "--junit", "--check", "--store", "--cache"})
_WRITES = re.compile(r"^(also write|write|where to write|folder for)\b|\bto write\b", re.IGNORECASE)
#: What a refusal of an output says (one of them).
REFUSALS = (
    "is also the input",
    "lies inside",
    "which this run writes",
    "not a regular file",
    "is a file, not a folder",
    "fairtalk wrote",
    "holds",
)


_commands, _flag = commands, flag


def _output_options() -> list[tuple[tuple[str, ...], str]]:
    found = []
    for path, command in _commands():
        for param in command.params:
            if param.param_type_name != "option" or getattr(param, "is_flag", False):
                continue
            if OUTPUT_FLAGS & set(param.opts) or _WRITES.search(param.help or ""):
                found.append((path, _flag(param)))
    return found


OUTPUT_OPTIONS = _output_options()


# ---------------------------------------------------------------- tiny inputs of every command with an output


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small input of each kind the commands read, made once (the tests check that none of them changes)."""
    root = tmp_path_factory.mktemp("inputs")
    found = {"corpus": write_corpus(root), "responses": write_responses(root / "responses.jsonl", 12)}
    contexts = ["he told me about his day", "she made dinner for her sister", "my father works at the bank"] * 4
    found["dialogues"] = root / "dialogues.jsonl"
    found["dialogues"].write_text(
        "".join(json.dumps({"context": c, "response": "that is lovely"}) + "\n" for c in contexts), encoding="utf-8"
    )
    found["pairs"] = root / "pairs.jsonl"
    fairtalk.write_pairs(list(fairtalk.build_pairs(contexts, fairtalk.load_lexicon("gender"))), found["pairs"])
    found["pool"] = root / "pool.txt"
    found["pool"].write_text("that is lovely\ni hate it\nwhat a nice day\n", encoding="utf-8")
    found["groups"] = root / "groups.tsv"
    found["groups"].write_text("man\tgender\nwoman\tgender\n", encoding="utf-8")
    found["completions"] = root / "completions.jsonl"
    completion = {"template": "worked as", "structure": "original"}
    found["completions"].write_text(
        "".join(
            json.dumps({"group": g, **completion, "seed": k, "text": f"The {g} worked as a cook.", "label": k % 3 - 1}) + "\n"
            for g in ("man", "woman")
            for k in range(6)
        ),
        encoding="utf-8",
    )
    found["texts"] = root / "texts.jsonl"
    found["texts"].write_text(
        "".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(contexts[:6])), encoding="utf-8"
    )
    found["lines"] = root / "lines.txt"
    found["lines"].write_text("\n".join(contexts[:6]) + "\n", encoding="utf-8")
    labels = ("negative", "neutral", "positive", "neutral", "negative", "positive")
    found["gold"] = root / "gold.jsonl"
    found["gold"].write_text(
        "".join(json.dumps({"id": str(i), "label": v, "text": f"XYZ was {v}"}) + "\n" for i, v in enumerate(labels)),
        encoding="utf-8",
    )
    found["predicted"] = root / "predicted.jsonl"
    found["predicted"].write_text(
        "".join(json.dumps({"id": str(i), "label": v}) + "\n" for i, v in enumerate(reversed(labels))), encoding="utf-8"
    )
    found["regard"] = root / "regard.tsv"
    found["regard"].write_text(
        "".join(f"{v}\tXYZ was {w} {i}\n" for i in range(4) for v, w in ((-1, "awful"), (0, "there"), (1, "great"))),
        encoding="utf-8",
    )
    for name in ("base", "cand"):
        out = root / name
        score = ["score", "--responses", str(found["responses"]), "--axis", "gender", "--measures", "length", "-o", str(out)]
        done = runner.invoke(app, [*score, "--resamples", "20", "-q"])
        assert done.exit_code == 0, done.output
        found[name] = out
    return found


@pytest.fixture()
def fresh(files: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """A copy of the inputs for one test: a command that did write over one spoils no other test."""
    root = files["corpus"].parent
    shutil.copytree(root, tmp_path / "inputs")
    return {name: tmp_path / "inputs" / path.relative_to(root) for name, path in files.items()}


#: Per command with an output option: its arguments, the output options it is always given (a place in ``out``, so that a
#: default never lands in the working folder) and one of its input files (None: it reads none).
Args = tuple[list[str], dict[str, str], Path | None]
OUTPUT_ARGS: dict[tuple[str, ...], Callable[[dict[str, Path], Path], Args]] = {
    ("audit",): lambda f, out: (
        ["--corpus", str(f["corpus"]), "--axis", "gender", "--model", "builtin:echo", "--pairs", "12", "--measures", "length"],
        {"--output": str(out / "run")},
        f["corpus"],
    ),
    ("augment",): lambda f, out: (
        ["--corpus", f"jsonl:{f['dialogues']}", "--axis", "gender"],
        {"--output": str(out / "augmented.jsonl")},
        f["dialogues"],
    ),
    ("compare",): lambda f, out: ([str(f["base"]), str(f["cand"])], {}, f["base"] / "results.json"),
    ("label",): lambda f, out: (
        [str(f["lines"]), "--measure", "offense_rate"],
        {"--output": str(out / "gold.jsonl")},
        f["lines"],
    ),
    ("pairs",): lambda f, out: (
        ["--corpus", str(f["corpus"]), "--axis", "gender"],
        {"--output": str(out / "pairs.jsonl")},
        f["corpus"],
    ),
    ("pool-filter",): lambda f, out: (
        ["--pool", str(f["pool"]), "--drop", "negative"],
        {"--output": str(out / "pool.txt")},
        f["pool"],
    ),
    ("prompts", "analyze"): lambda f, out: (
        ["--completions", str(f["completions"]), "--groups", str(f["groups"]), "--draws", "2", "--resamples", "10"],
        {"--output": str(out / "analysis")},
        f["completions"],
    ),
    ("prompts", "generate"): lambda f, out: (
        ["--model", "builtin:echo", "--groups", str(f["groups"]), "--seeds", "1"],
        {"--output": str(out / "completions.jsonl")},
        f["groups"],
    ),
    ("prompts", "paraphrase"): lambda f, out: (["--groups", str(f["groups"])], {"--output": str(out / "p.jsonl")}, f["groups"]),
    ("regard", "check"): lambda f, out: (["--gold", str(f["gold"]), "--predicted", str(f["predicted"])], {}, f["gold"]),
    ("regard", "label"): lambda f, out: (
        ["--input", str(f["texts"]), "--regard", "builtin:tfidf"],
        {"--output": str(out / "labels.jsonl")},
        f["texts"],
    ),
    ("regard", "train"): lambda f, out: (["--data", str(f["regard"])], {"--output": str(out / "scorer")}, f["regard"]),
    ("reproduce", "debias"): lambda f, out: (
        ["--corpus", f"jsonl:{f['dialogues']}", "--quick"],
        {"--output": str(out / "debias")},
        f["dialogues"],
    ),
    ("reproduce", "planted"): lambda f, out: ([], {"--output": str(out / "planted")}, None),
    ("respond",): lambda f, out: (
        ["--pairs", str(f["pairs"]), "--model", "builtin:echo"],
        {"--output": str(out / "responses.jsonl")},
        f["pairs"],
    ),
    ("score",): lambda f, out: (
        ["--responses", str(f["responses"]), "--axis", "gender", "--measures", "length", "--resamples", "20"],
        {"--output": str(out / "report")},
        f["responses"],
    ),
    ("similarity",): lambda f, out: (
        ["--pairs", str(f["pairs"]), "--model", "builtin:echo", "--methods", "exact"],
        {},
        f["pairs"],
    ),
    ("train",): lambda f, out: (
        ["seq2seq", "--corpus", f"jsonl:{f['dialogues']}", "--epochs", "1"],
        {"--output": str(out / "model")},
        f["dialogues"],
    ),
}


def test_the_output_options_are_found() -> None:
    found = {(" ".join(path), flag) for path, flag in OUTPUT_OPTIONS}
    assert {
        ("score", "--junit"),
        ("audit", "--junit"),
        ("compare", "--junit"),
        ("pairs", "--output"),
        ("pairs", "--check"),
        ("respond", "--output"),
        ("respond", "--store"),
        ("label", "--output"),
        ("reproduce planted", "--cache"),
    } <= found
    assert ("label", "--annotator") not in found and ("audit", "--similarity") not in found


def test_every_command_with_an_output_has_inputs_here() -> None:
    assert {path for path, _ in OUTPUT_OPTIONS} == set(OUTPUT_ARGS), "give the new command tiny inputs in OUTPUT_ARGS"


def _device(folder: Path) -> Path:
    """A character device no test can harm: ``/dev/null`` when this process cannot replace it, else a null device made here.

    As root a rename over ``/dev/null`` would succeed (the bug of issue 38), so a test that failed would replace the
    machine's ``/dev/null``; its own node in ``folder`` is at stake instead.
    """
    if os.geteuid() != 0:
        return Path(os.devnull)
    node = folder / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError:
        pytest.skip("cannot make a device node here")
    return node


def _state(path: Path) -> tuple[object, ...]:
    """What must not change: the kind of node, a device's number, a file's bytes."""
    mode = os.lstat(path).st_mode
    if stat.S_ISREG(mode):
        return ("file", path.read_bytes())
    return (stat.S_IFMT(mode), os.lstat(path).st_rdev)


@pytest.mark.parametrize("target", ["an input", "a FIFO", "a device", "the user's file"])
@pytest.mark.parametrize(("path", "flag"), OUTPUT_OPTIONS, ids=[f"{' '.join(p)} {f}" for p, f in OUTPUT_OPTIONS])
def test_no_output_option_writes_over_an_input_a_device_or_a_users_file(
    path: tuple[str, ...], flag: str, target: str, fresh: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairtalk.gold import LabelServer

    monkeypatch.setattr(LabelServer, "serve_forever", _no_serving)  # a label page that opened would wait for Ctrl-C
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    args, given, source = OUTPUT_ARGS[path](fresh, tmp_path / "out")
    if target == "an input":
        if source is None:
            pytest.skip(f"{' '.join(path)} reads no file")
        aim = source
    elif target == "a FIFO":
        aim = tmp_path / "fifo"
        os.mkfifo(aim)
    elif target == "a device":
        aim = _device(tmp_path)
    else:
        aim = tmp_path / "notes.txt"
        aim.write_text("my own notes, not fairtalk's\n", encoding="utf-8")
    before = _state(aim)
    options = [item for key, value in {**given, flag: str(aim)}.items() for item in (key, value)]
    done = runner.invoke(app, [*path, *args, *options, "-q"])
    message = " ".join(done.stderr.split())
    assert done.exit_code == 2, (done.exit_code, done.output)
    assert message.startswith("error: ") and str(aim) in message, message
    assert any(phrase in message for phrase in REFUSALS), message
    assert _state(aim) == before


def _no_serving(self: object, poll_interval: float = 0.5) -> None:
    raise KeyboardInterrupt


# ---------------------------------------------------------------- 2. --junit: never a report of the run, only its own file


def _score(files: dict[str, Path], out: Path, *extra: str) -> Any:
    args = ["score", "--responses", str(files["responses"]), "--axis", "gender", "--measures", "length"]
    return runner.invoke(app, [*args, "--resamples", "20", "-o", str(out), "-q", *extra])


def test_junit_is_never_a_file_the_same_run_writes(fresh: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = _score(fresh, out, "--junit", str(out / "results.json"))
    assert done.exit_code == 2 and "which this run writes" in done.stderr, done.output
    assert not out.exists()
    done = _score(fresh, out, "--junit", str(out))
    assert done.exit_code == 2 and "is the output folder" in done.stderr, done.output
    assert not out.exists()
    corpus = ["--corpus", str(fresh["corpus"]), "--axis", "gender", "--model", "builtin:echo", "--pairs", "12"]
    run = tmp_path / "run"
    done = runner.invoke(
        app, ["audit", *corpus, "--measures", "length", "-o", str(run), "--junit", str(run / "gender" / "results.json")]
    )
    assert done.exit_code == 2 and "which this run writes" in done.stderr, done.output
    assert not run.exists()


def test_junit_is_never_inside_the_baseline_run(fresh: dict[str, Path]) -> None:
    before = sorted(p.name for p in fresh["base"].iterdir())
    done = runner.invoke(app, ["compare", str(fresh["base"]), str(fresh["cand"]), "--junit", str(fresh["base"] / "junit.xml")])
    assert done.exit_code == 2 and "lies inside BASELINE" in done.stderr, done.output
    assert sorted(p.name for p in fresh["base"].iterdir()) == before


def test_junit_replaces_only_a_junit_file_fairtalk_wrote(fresh: dict[str, Path], tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    for _ in range(2):  # fairtalk's own file is replaced, run after run
        done = _score(fresh, tmp_path / "report", "--junit", str(junit))
        assert done.exit_code == 0, done.output
    assert junit.read_text(encoding="utf-8").startswith('<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="fairtalk"')
    theirs = tmp_path / "theirs.xml"
    theirs.write_text('<?xml version="1.0"?>\n<testsuites name="pytest"></testsuites>\n', encoding="utf-8")
    done = _score(fresh, tmp_path / "report", "--junit", str(theirs))
    assert done.exit_code == 2 and "not a JUnit file fairtalk wrote" in done.stderr, done.output
    assert "pytest" in theirs.read_text(encoding="utf-8")


# ---------------------------------------------------------------- 3. no writer renames over a device or opens a FIFO


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_the_atomic_writers_refuse_what_is_not_a_regular_file(kind: str, tmp_path: Path) -> None:
    from fairtalk.files import atomic_writer
    from fairtalk.report import write_junit

    if kind == "device":
        target = _device(tmp_path)
    else:
        target = tmp_path / "fifo"
        os.mkfifo(target)
    before = _state(target)
    with pytest.raises(OutputError, match="not a regular file"), atomic_writer(target) as handle:
        handle.write("x")
    with pytest.raises(OutputError, match="not a regular file"):
        write_junit({}, target)
    with pytest.raises(OutputError, match="not a regular file"):
        fairtalk.write_pairs([], target)
    assert _state(target) == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left beside it


def test_the_run_store_never_opens_a_fifo(tmp_path: Path) -> None:
    from fairtalk.store import RunStore

    fifo = tmp_path / "store.sqlite"
    os.mkfifo(fifo)
    with pytest.raises(StoreError, match="not a regular file"):
        RunStore(fifo)  # SQLite would wait for a writer on it forever
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ---------------------------------------------------------------- 4. the job summary: best effort, never an input


@pytest.fixture(scope="module")
def gate_code(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> int:
    """The exit code of the gated score run without a job summary: what every run below must keep."""
    done = _score(files, tmp_path_factory.mktemp("gate") / "report", "--fail-on-bias")
    assert done.exit_code in (0, 1), done.output
    return int(done.exit_code)


def _summary_place(kind: str, files: dict[str, Path], tmp_path: Path) -> Path:
    if kind == "a folder":
        (tmp_path / "summary").mkdir()
        return tmp_path / "summary"
    if kind == "a FIFO nobody reads":
        os.mkfifo(tmp_path / "summary")
        return tmp_path / "summary"
    if kind == "/dev/full":
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full here")
        return Path("/dev/full")
    if kind == "a missing folder":
        return tmp_path / "missing" / "summary.md"
    if kind == "a read-only file":
        if os.geteuid() == 0:
            pytest.skip("root writes a read-only file")
        (tmp_path / "summary.md").write_text("", encoding="utf-8")
        (tmp_path / "summary.md").chmod(0o444)
        return tmp_path / "summary.md"
    return files["responses"]  # the input itself


@pytest.mark.parametrize(
    "kind", ["a folder", "a FIFO nobody reads", "/dev/full", "a missing folder", "a read-only file", "the --responses input"]
)
def test_an_unusable_step_summary_is_a_warning_and_the_gate_decides_the_exit_code(
    kind: str, fresh: dict[str, Path], gate_code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    place = _summary_place(kind, fresh, tmp_path)
    before = _state(place) if os.path.lexists(place) else None
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(place))
    junit = tmp_path / "junit.xml"
    done = _score(fresh, tmp_path / "report", "--fail-on-bias", "--junit", str(junit))
    assert done.exit_code == gate_code, done.output
    assert "warning: the job summary was not appended" in " ".join(done.stderr.split())
    assert (tmp_path / "report" / "results.json").is_file() and junit.is_file()  # every report is written
    assert (_state(place) if os.path.lexists(place) else None) == before


def test_a_usable_step_summary_is_appended(fresh: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    done = _score(fresh, tmp_path / "report")
    assert done.exit_code == 0 and "warning" not in done.stderr, done.output
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and "## fairtalk: gender" in text


# ---------------------------------------------------------------- 5. paths and user text printed verbatim


@pytest.mark.parametrize("name", ["no:x:such.jsonl", "[bold]mine[/bold]:thumbs_up:.jsonl"])
def test_error_messages_print_paths_verbatim(name: str, tmp_path: Path) -> None:
    done = runner.invoke(app, ["score", "--responses", str(tmp_path / name), "--axis", "gender"])
    assert done.exit_code == 2
    assert str(tmp_path / name) in " ".join(done.stderr.split()), done.stderr
    assert "❌" not in done.stderr and "👍" not in done.stderr


def test_error_messages_print_file_contents_verbatim(fresh: dict[str, Path], tmp_path: Path) -> None:
    lexicon = tmp_path / "root:x:0:passwd.txt"  # a name rich's emoji codes would have turned into root❌0
    lexicon.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    done = runner.invoke(app, ["score", "--responses", str(fresh["responses"]), "--lexicon", str(lexicon)])
    assert done.exit_code == 2
    assert "root:x:0:passwd.txt:1" in done.stderr and "❌" not in done.stderr, done.stderr
    assert "/bin/bash" not in done.stderr  # a malformed line is named by its number, never quoted (issue 38 item 18)
