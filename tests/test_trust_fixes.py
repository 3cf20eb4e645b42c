"""Regression tests for the review of issue 9 ("trust the run"): each failed against the code before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus, write_models
from fairtalk.cli import app

runner = CliRunner()
FAST = ["--resamples", "200", "--quiet"]
GENDER_TSV = Path(__file__).resolve().parents[1] / "src" / "fairtalk" / "lexicons" / "gender.tsv"


def _lexicon(path: Path, axis: str) -> Path:
    """The built-in gender lexicon under another axis name, written to ``path``."""
    body = "\n".join(line for line in GENDER_TSV.read_text().splitlines() if not line.startswith("# axis:"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# axis: {axis}\n{body}\n")
    return path


def _audit(corpus: Path, model: str, out: Path, *extra: str) -> list[str]:
    return ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", model, "-o", str(out), *FAST, *extra]


@pytest.fixture()
def toys(tmp_path: Path) -> tuple[Path, Path]:
    return write_corpus(tmp_path), write_models(tmp_path)


# --- 1. only a run.json fairtalk wrote names entries a new run displaces -------------------------------------


@pytest.mark.unvalidated_files
def test_a_hand_made_run_json_displaces_none_of_the_users_folders(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    out = tmp_path / "mine"
    (out / "photos").mkdir(parents=True)
    (out / "photos" / "cat.jpg").write_text("meow")
    (out / "run.json").write_text(json.dumps({"run_id": "x", "axes": {"photos": {"folder": "photos"}}}))
    result = runner.invoke(app, _audit(corpus, "builtin:echo", out))
    assert result.exit_code == 2 and "run.json: not written by fairtalk" in result.stderr, result.output  # issue 24
    assert (out / "photos" / "cat.jpg").read_text() == "meow" and json.loads((out / "run.json").read_text())["run_id"] == "x"


@pytest.mark.unvalidated_files
def test_run_json_carries_fairtalks_mark_and_only_plain_axis_folders_are_displaced(tmp_path: Path) -> None:
    from fairtalk.report import previous_entries
    from fairtalk.report._index import GENERATOR

    out = tmp_path / "out"
    for name in ("gender", "photos", "store.sqlite"):
        (out / name).mkdir(parents=True)
    (tmp_path / "outside").mkdir()

    def entries(data: dict[str, object]) -> tuple[str, ...]:
        (out / "run.json").write_text(json.dumps(data))
        return previous_entries(out)

    axes = {
        "gender": {"folder": "gender"},
        "x": {"folder": "photos"},
        "y": {"folder": "../outside"},
        "../outside": {"folder": "../outside"},
        "store.sqlite": {"folder": "store.sqlite"},
        "a/b": {"folder": "a/b"},
    }
    assert entries({"axes": axes, "run_id": "r1"}) == ()  # no mark: nothing is trusted
    assert entries({"generator": GENERATOR, "axes": axes}) == ()  # no run id
    assert entries({"generator": GENERATOR, "run_id": "r1", "axes": axes}) == ("index.html", "run.json", "gender")
    (out / "run.json").write_text("{not json")
    assert previous_entries(out) == ()


def test_a_written_run_json_is_marked(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    out = tmp_path / "r"
    assert runner.invoke(app, _audit(corpus, "builtin:echo", out)).exit_code == 0
    data = json.loads((out / "run.json").read_text())
    assert data["generator"] == "fairtalk" and data["run_id"]


def test_audit_counts_a_lexicon_file_as_an_input(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    out = tmp_path / "r"
    assert runner.invoke(app, _audit(corpus, "builtin:echo", out)).exit_code == 0
    lexicon = _lexicon(out / "gender" / "religion.tsv", "religion")
    before = lexicon.read_bytes()
    args = _audit(corpus, "builtin:echo", out)
    args[args.index("--axis") + 1] = f"gender,{lexicon}"  # --axis given once
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "--axis file" in result.stderr and "which this run replaces" in result.stderr
    assert lexicon.read_bytes() == before


# --- 3. outputs never overwrite a model's files or a lexicon file --------------------------------------------


def _pairs(corpus: Path, tmp_path: Path) -> Path:
    pairs = tmp_path / "pairs.jsonl"
    assert runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(pairs)]).exit_code == 0
    return pairs


def test_respond_refuses_to_overwrite_the_models_files(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    pairs = _pairs(corpus, tmp_path)
    replay = tmp_path / "replay.jsonl"
    assert (
        runner.invoke(app, ["respond", "--pairs", str(pairs), "--model", f"python:{models}:fair", "-o", str(replay)]).exit_code
        == 0
    )
    # the module is no responses file, so it is refused before the model loads (issue 38); the replay file is one
    refused = {models: "is not a responses file fairtalk wrote", replay: "is also the input the model file"}
    for model, target in ((f"python:{models}:fair", models), (f"replay:{replay}", replay)):
        before = target.read_bytes()
        result = runner.invoke(app, ["respond", "--pairs", str(pairs), "--model", model, "-o", str(target)])
        assert result.exit_code == 2, result.output
        assert refused[target] in result.stderr
        assert target.read_bytes() == before
        result = runner.invoke(
            app, ["respond", "--pairs", str(pairs), "--model", model, "-o", str(tmp_path / "x.jsonl"), "--store", str(target)]
        )
        assert result.exit_code == 2 and "--store" in result.stderr and target.read_bytes() == before


def test_pairs_augment_and_pool_filter_refuse_to_overwrite_a_lexicon_file(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    lexicon = _lexicon(tmp_path / "religion.tsv", "religion")
    before = lexicon.read_bytes()
    jsonl = tmp_path / "dialogues.jsonl"
    jsonl.write_text(json.dumps({"context": "he is here", "response": "she is nice"}) + "\n")
    pool = tmp_path / "pool.txt"
    pool.write_text("nice to meet you\nshe is a nurse\n")
    commands = (
        ["pairs", "--corpus", str(corpus), "--axis", str(lexicon), "-o", str(lexicon)],
        ["pairs", "--corpus", str(corpus), "--lexicon", str(lexicon), "-o", str(lexicon)],
        ["augment", "--corpus", f"jsonl:{jsonl}", "--axis", str(lexicon), "-o", str(lexicon)],
        ["augment", "--corpus", f"jsonl:{jsonl}", "--lexicon", str(lexicon), "-o", str(lexicon)],
        ["pool-filter", "--pool", str(pool), "--axis", str(lexicon), "--drop", "group_words", "-o", str(lexicon)],
    )
    for argv in commands:
        result = runner.invoke(app, argv)
        assert result.exit_code == 2, (argv, result.output)
        assert "it would be overwritten" in result.stderr, result.stderr
        assert lexicon.read_bytes() == before


# --- 9. respond checks -o before generating ------------------------------------------------------------------


def test_respond_checks_its_output_before_generating(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    pairs = _pairs(corpus, tmp_path)
    marker = tmp_path / "called"
    model = tmp_path / "marking.py"
    model.write_text(f"def reply(context):\n    open({str(marker)!r}, 'a').write('x')\n    return 'ok'\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("x")
    for output, message in ((tmp_path / "folder", "is a folder"), (tmp_path / "afile" / "sub" / "r.jsonl", "is not a folder")):
        result = runner.invoke(app, ["respond", "--pairs", str(pairs), "--model", f"python:{model}:reply", "-o", str(output)])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
        assert not marker.exists()  # refused before the model answered anything
    result = runner.invoke(
        app,
        [
            "respond",
            "--pairs",
            str(pairs),
            "--model",
            f"python:{model}:reply",
            "-o",
            str(tmp_path / "r.jsonl"),
            "--store",
            str(tmp_path / "folder"),
        ],
    )
    assert result.exit_code == 2 and "--store is a folder" in result.stderr, result.output
    assert not marker.exists()


# --- 10. an interrupted run without a store file says the answers are lost ------------------------------------


@pytest.mark.parametrize("store", [None, ":memory:"])
def test_interrupt_without_a_store_file_says_the_answers_are_lost(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str | None
) -> None:
    import fairtalk

    corpus, _ = toys
    pairs = _pairs(corpus, tmp_path)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fairtalk, "respond", interrupted)
    extra = [] if store is None else ["--store", store]
    result = runner.invoke(
        app, ["respond", "--pairs", str(pairs), "--model", "builtin:echo", "-o", str(tmp_path / "r.jsonl"), *extra]
    )
    assert result.exit_code == 130
    assert "were not kept" in result.stderr and "re-run" not in result.stderr, result.stderr


def test_interrupt_with_a_store_file_says_where_the_answers_are(
    toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fairtalk

    corpus, _ = toys
    pairs = _pairs(corpus, tmp_path)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fairtalk, "respond", interrupted)
    store = tmp_path / "s.sqlite"
    command = [
        "respond",
        "--pairs",
        str(pairs),
        "--model",
        "builtin:echo",
        "-o",
        str(tmp_path / "r.jsonl"),
        "--store",
        str(store),
    ]
    result = runner.invoke(app, command)
    assert result.exit_code == 130 and "no answer had been generated yet" in " ".join(result.stderr.split())  # no store
    store.write_bytes(b"")  # a store that holds answers from an earlier run
    result = runner.invoke(app, command)
    assert result.exit_code == 130 and f"kept in {store}" in " ".join(result.stderr.split())  # the lines joined


# --- 4. a swap cut short is undone: by the process on an error, by the next run after a kill -----------------

OLD = {
    "gender/results.json": "old",
    "race/results.json": "old race",
    "run.json": "old run",
    "index.html": "old index",
    "notes.txt": "mine",
}
NEW = {"gender/results.json": "new", "run.json": "new run", "index.html": "new index", "notes.txt": "mine"}
SWAP = """
import os, sys
from pathlib import Path
import fairtalk.files as files

target, n_renames = Path(sys.argv[1]), int(sys.argv[2])
real, calls = os.replace, [0]

def replace(source, dest):
    calls[0] += 1
    if calls[0] > n_renames:
        os._exit(9)  # a kill: no cleanup, no rollback
    return real(source, dest)

with files.staged(target, displace=("race",), last=("run.json", "index.html")) as staging:
    (staging / "gender").mkdir()
    (staging / "gender" / "results.json").write_text("new")
    (staging / "run.json").write_text("new run")
    (staging / "index.html").write_text("new index")
    os.replace = replace
"""


def _tree(folder: Path) -> dict[str, str]:
    from fairtalk.files import WRITTEN

    return {
        p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file() and p.name != WRITTEN
    }


def _old_run(folder: Path) -> Path:
    from fairtalk.files import WRITTEN

    for name, text in OLD.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    ours = ["gender", "race", *(name for name in OLD if name != "notes.txt")]  # fairtalk wrote them (issue 24)
    (folder / WRITTEN).write_text(json.dumps({"generator": "fairtalk", "files": ours}))
    return folder


@pytest.mark.parametrize("n_renames", range(10))
@pytest.mark.unvalidated_files
def test_a_kill_at_any_point_of_the_swap_is_undone_by_the_next_run(tmp_path: Path, n_renames: int) -> None:
    import subprocess
    import sys

    from fairtalk.files import recover_folder

    out = _old_run(tmp_path / "out")
    script = tmp_path / "swap.py"
    script.write_text(SWAP)
    done = subprocess.run(
        [sys.executable, str(script), str(out), str(n_renames)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode in (0, 9), done.stderr
    recover_folder(out)
    expected = NEW if done.returncode == 0 else OLD  # 9 renames finish the swap (the marker of issue 24 too)
    assert _tree(out) == expected
    assert not [p.name for p in out.iterdir() if p.name.startswith(".fairtalk-")]


@pytest.mark.unvalidated_files
def test_a_kill_after_the_last_rename_keeps_the_new_run(tmp_path: Path) -> None:
    from fairtalk.files import JOURNAL, STAGING_PREFIX, TRASH_PREFIX, recover_folder

    out = tmp_path / "out"
    for name, text in NEW.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    staging, trash = out / f"{STAGING_PREFIX}999999999-x", out / f"{TRASH_PREFIX}999999999-y"
    staging.mkdir()  # emptied: every new entry was moved in
    (trash / "race").mkdir(parents=True)
    (trash / "race" / "results.json").write_text("old race")
    (trash / JOURNAL).write_text(json.dumps({"staging": staging.name, "names": ["gender", "run.json", "index.html"]}))
    recover_folder(out)
    assert _tree(out) == NEW and not list(out.glob(".fairtalk-*"))


@pytest.mark.parametrize("fail_at", range(1, 10))
@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
@pytest.mark.unvalidated_files
def test_an_error_midway_through_the_swap_restores_the_previous_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int, error: BaseException
) -> None:
    import os

    from fairtalk import OutputError
    from fairtalk.files import staged

    out = _old_run(tmp_path / "out")
    real, calls = os.replace, [0]

    def replace(source: object, dest: object) -> None:
        calls[0] += 1
        if calls[0] == fail_at:
            raise error
        real(source, dest)  # type: ignore[arg-type]

    expected = OutputError if isinstance(error, OSError) else KeyboardInterrupt
    with pytest.raises(expected), staged(out, displace=("race",), last=("run.json", "index.html")) as staging:
        (staging / "gender").mkdir()
        (staging / "gender" / "results.json").write_text("new")
        (staging / "run.json").write_text("new run")
        (staging / "index.html").write_text("new index")
        monkeypatch.setattr(os, "replace", replace)
    monkeypatch.undo()
    assert _tree(out) == OLD
    assert not [p.name for p in out.iterdir() if p.name.startswith(".fairtalk-")]


@pytest.mark.unvalidated_files
def test_the_run_folder_check_undoes_a_killed_swap_before_reading_the_previous_run(tmp_path: Path) -> None:
    import subprocess
    import sys

    from fairtalk.report import check_run_folder, previous_entries
    from fairtalk.report._index import GENERATOR

    out = _old_run(tmp_path / "out")
    (out / "run.json").write_text(
        json.dumps({"generator": GENERATOR, "run_id": "r0", "axes": {"race": {"folder": "race"}, "gender": {"folder": "gender"}}})
    )
    script = tmp_path / "swap.py"
    script.write_text(SWAP)
    assert subprocess.run([sys.executable, str(script), str(out), "3"], timeout=60, check=False).returncode == 9
    assert not (out / "run.json").exists()  # mid-swap: the old run.json is in the trash
    check_run_folder(out, ["gender"], {})
    assert previous_entries(out) == ("index.html", "run.json", "race", "gender")


# --- 7. a lexicon that is a pipe or a device is refused at once -----------------------------------------------


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs")
def test_a_fifo_or_a_device_as_lexicon_is_refused_at_once(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    fifo = tmp_path / "axis.tsv"
    os.mkfifo(fifo)
    code = (
        "import sys; from fairtalk.lexicons import load_lexicon, load_attributes\n"
        "for load in (load_lexicon, load_attributes):\n"
        "    for path in sys.argv[1:]:\n"
        "        try:\n            load(path)\n        except Exception as exc:\n            print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(fifo), "/dev/zero"], capture_output=True, text=True, timeout=30, check=False
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and all(line.startswith("LexiconError") and "is not a regular file" in line for line in lines), (
        done.stdout + done.stderr
    )
    result = runner.invoke(app, ["pairs", "--corpus", "builtin:chitchat", "--axis", str(fifo), "-o", str(tmp_path / "p")])
    assert result.exit_code == 2 and "is not a regular file" in result.stderr


# --- 8. an answer longer than a JSONL record is cut, so fairtalk reads its own outputs back ---------------------


def test_an_oversized_answer_is_cut_to_fit_a_record_and_counted(toys: tuple[Path, Path], tmp_path: Path) -> None:
    import fairtalk
    from fairtalk._jsonl import MAX_RECORD_BYTES

    corpus, _ = toys
    pairs = _pairs(corpus, tmp_path)
    model = tmp_path / "verbose.py"
    model.write_text(
        "def reply(context):\n"
        f"    return 'é\\n' * {MAX_RECORD_BYTES // 3} if context.endswith('he likes to play football') "
        "else 'ok'\n"
    )
    generation = fairtalk.respond(str(pairs), model=f"python:{model}:reply")
    assert generation.responses.summary["n_truncated"] == 2
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["respond", "--pairs", str(pairs), "--model", f"python:{model}:reply", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in out.read_bytes().splitlines()) <= MAX_RECORD_BYTES
    score = runner.invoke(
        app, ["score", "--responses", str(out), "--axis", "gender", "-o", str(tmp_path / "s"), "--resamples", "100"]
    )
    assert score.exit_code == 0, score.output
    short = fairtalk.respond(str(pairs), model="builtin:echo")
    assert "n_truncated" not in short.responses.summary
