"""Whether two runs are of one ``python:`` model does not depend on the folder ``compare`` runs in.

Review finding: ``compare`` resolved a relative ``python:`` target (``bot.py:reply``) against its
own current folder, as the runs did not record what their target named. ``bot.py`` audited in
``proj/`` and ``proj/bot.py`` audited from its parent were two models when compared from a third
folder, and two files named ``bot.py`` in two folders could be one. A run now records its target as
it resolved it (``run.json``'s ``model_target``), and the rule of one model uses it.

Second review finding: that rule alone let the gate pass a model compared with itself where the
old rule had caught it (a run recorded before beside one recorded now, one code in two
checkouts spelled two ways, a hand-edited target). Any one rule now suffices: the same code
(function name and code hash among equal fields), the recorded targets, or the targets resolved
here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus
from fairtalk.cli import app
from fairtalk.compare import same_model
from fairtalk.models import as_responder
from fairtalk.pipeline import compare_runs

runner = CliRunner()

MODEL = """
def reply(context):
    return "that is lovely, i am so happy for you"
"""
#: One code, its answer read from the folder it lies in: two copies are two models with one code hash.
MODEL_WITH_DATA = """
from pathlib import Path

REPLY = (Path(__file__).parent / "reply.txt").read_text(encoding="utf-8").strip()


def reply(context):
    return REPLY
"""
MARGIN = ("--margin", "offense_rate=0.2")
SETTINGS = {"do_sample": False}
NOT_ITSELF = "a model cannot be shown not worse than itself"


def _audit(model: str, corpus: str, out: Path, *more: str) -> Path:
    args = ["audit", "--corpus", corpus, "--axis", "gender", "--measures", "offense", "--resamples", "50", *more]
    done = runner.invoke(app, [*args, "--model", model, "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    return out


def _recorded(run: Path) -> dict[str, object]:
    data = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _compare(baseline: Path, candidate: Path) -> tuple[str | None, int, str]:
    """What compare calls the two runs, and the exit code and output of ``compare --fail-if-worse``."""
    comparison = compare_runs(baseline, candidate, margins={"offense_rate": 0.2})
    done = runner.invoke(app, ["compare", str(baseline), str(candidate), "--fail-if-worse", *MARGIN])
    return comparison.same_run, done.exit_code, " ".join(done.output.split())


def _fingerprint(target: str, code: str | None = "637f1904116fee20") -> str:
    fields = {"batched": False} if code is None else {"batched": False, "code": code}
    return f"python:{target} " + json.dumps(fields, sort_keys=True, separators=(",", ":"))


def test_one_file_audited_from_two_folders_is_one_model_compared_from_a_third(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj, runs, elsewhere = tmp_path / "proj", tmp_path / "runs", tmp_path / "elsewhere"
    for folder in (proj, runs, elsewhere):
        folder.mkdir()
    module = f"bot_{tmp_path.name}"  # a module name new to sys.modules
    (proj / f"{module}.py").write_text(MODEL, encoding="utf-8")
    write_corpus(proj)
    monkeypatch.chdir(proj)
    first = _audit(f"python:{module}.py:reply", "toy.txt", runs / "first")
    modular = _audit(f"python:{module}:reply", "toy.txt", runs / "modular")
    monkeypatch.chdir(tmp_path)
    second = _audit(f"python:proj/{module}.py:reply", "proj/toy.txt", runs / "second")
    real = f"{(proj / f'{module}.py').resolve()}:reply"
    assert [_recorded(run)["model_target"] for run in (first, second, modular)] == [real, real, real]

    monkeypatch.chdir(elsewhere)  # neither relative target names a file here
    for other, spelled in ((second, f"proj/{module}.py:reply"), (modular, f"{module}:reply")):
        same, code, said = _compare(first, other)
        assert same == (
            f"two runs of the same model python:{module}.py:reply (spelled python:{spelled} in the candidate) "
            "with the same decoding settings"
        )
        assert code == 1 and NOT_ITSELF in said, said

    # runs recorded before runs kept their target, or one of each: still one code, so one model, from anywhere
    old = shutil.copytree(first, first.parent / "old_first")
    for run in (old, second, modular):
        data = _recorded(run)
        del data["model_target"]
        (run / "run.json").write_text(json.dumps(data), encoding="utf-8")
    for baseline, candidate in ((old, second), (old, modular), (first, second)):
        same, code, said = _compare(baseline, candidate)
        assert same is not None and code == 1 and NOT_ITSELF in said, said
    # a hand-edited target names nothing: the code still says one model
    data = _recorded(first)
    data["model_target"] = "/no/such/bot.py:reply"
    (first / "run.json").write_text(json.dumps(data), encoding="utf-8")
    same, code, said = _compare(first, second)
    assert same is not None and code == 1 and NOT_ITSELF in said, said


def test_two_files_of_one_relative_name_in_two_folders_are_two_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folders = {name: tmp_path / name for name in ("a", "b", "elsewhere")}
    for folder in folders.values():
        folder.mkdir()
    replies = {"a": "that is lovely, i am so happy for you", "b": "that sounds fine to me"}
    for name, text in replies.items():
        (folders[name] / "bot.py").write_text(f"def reply(context):\n    return {text!r}\n", encoding="utf-8")
        write_corpus(folders[name])
    runs = {}
    for name in replies:
        monkeypatch.chdir(folders[name])
        runs[name] = _audit("python:bot.py:reply", "toy.txt", tmp_path / f"run_{name}")
        assert _recorded(runs[name])["model_target"] == f"{(folders[name] / 'bot.py').resolve()}:reply"
    for where in ("elsewhere", "a"):  # from a folder without bot.py, and from the folder of one of them
        monkeypatch.chdir(folders[where])
        same, _, said = _compare(runs["a"], runs["b"])
        assert same is None
        assert NOT_ITSELF not in said, said


def test_two_copies_of_one_code_spelled_two_ways_in_two_folders_are_one_model_unless_versioned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One code (one code hash) in two checkouts, spelled ``bot.py`` and ``./bot.py``: one model, so the gate fails.

    Here each copy reads its own folder's reply.txt, which its code does not show: ``--model-version`` tells the two
    apart, and then the gate compares their answers.
    """
    folders = {name: tmp_path / name for name in ("a", "b", "elsewhere")}
    for folder in folders.values():
        folder.mkdir()
    for name, text in (("a", "that is lovely, i am so happy for you"), ("b", "that sounds fine to me")):
        (folders[name] / "bot.py").write_text(MODEL_WITH_DATA, encoding="utf-8")
        (folders[name] / "reply.txt").write_text(text, encoding="utf-8")
        write_corpus(folders[name])
    runs = {}
    for name, spelled in (("a", "bot.py"), ("b", "./bot.py")):
        monkeypatch.chdir(folders[name])
        runs[name] = _audit(f"python:{spelled}:reply", "toy.txt", tmp_path / f"run_{name}")
        runs[f"{name}_v"] = _audit(f"python:{spelled}:reply", "toy.txt", tmp_path / f"run_{name}_v", "--model-version", name)
    fields = [str(_recorded(runs[name])["model"]).partition(" ")[2] for name in ("a", "b")]
    assert fields[0] == fields[1]  # one code: only the file the target named tells them apart
    for where in ("elsewhere", "a", "b"):
        monkeypatch.chdir(folders[where])
        same, code, said = _compare(runs["a"], runs["b"])
        assert same is not None and code == 1 and NOT_ITSELF in said, said
        same, _, said = _compare(runs["a_v"], runs["b_v"])
        assert same is None and NOT_ITSELF not in said, said


def test_same_model_takes_any_rule_that_shows_one_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    real = "/srv/proj/bot.py:reply"
    one, other = (_fingerprint("bot.py:reply"), SETTINGS), (_fingerprint("proj/bot.py:reply"), SETTINGS)
    # one code hash and one function: one model, whatever the targets
    assert same_model(one, other) is not None
    assert same_model(one, other, targets=(real, "/srv/other/bot.py:reply")) is not None
    assert same_model(one, (_fingerprint("proj/bot.py:answer"), SETTINGS)) is None  # another function
    # another code hash, another model, whatever the targets
    assert same_model(one, (_fingerprint("proj/bot.py:reply", code="0" * 16), SETTINGS), targets=(real, real)) is None
    # a model version after the fields: one tag is one model, two are two
    versioned = (f"{one[0]} version=v2", SETTINGS)
    assert same_model(versioned, (f"{other[0]} version=v2", SETTINGS), targets=(real, real)) is not None
    assert same_model(versioned, (f"{other[0]} version=v3", SETTINGS), targets=(real, real)) is None
    assert same_model(one, versioned, targets=(real, real)) is None
    # fields without a code hash: the targets decide, recorded (where kept) or resolved here
    bare, bare_other = (
        (_fingerprint("bot.py:reply", code=None), SETTINGS),
        (_fingerprint("proj/bot.py:reply", code=None), SETTINGS),
    )
    assert same_model(bare, bare_other) is None  # resolved here: bot.py and proj/bot.py are two targets
    assert same_model(bare, bare_other, targets=(real, real)) is not None
    assert same_model(bare, bare_other, targets=(real, "/srv/other/bot.py:reply")) is None
    (tmp_path / "bot.py").write_text(MODEL, encoding="utf-8")
    here = f"{(tmp_path / 'bot.py').resolve()}:reply"
    assert same_model(bare, bare_other, targets=(None, here)) is None  # bot.py resolved here is not /srv/proj/…
    assert same_model(bare, (_fingerprint(here, code=None), SETTINGS), targets=(None, None)) is not None
    # a target recorded beside another kind of model is not read
    assert same_model(("hf:./gpt2", SETTINGS), ("hf:gpt2", SETTINGS), targets=(real, real)) is None


def test_a_python_model_knows_its_resolved_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mine.py").write_text(MODEL, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    real = f"{(tmp_path / 'sub' / 'mine.py').resolve()}:reply"
    for spelling in ("sub/mine.py:reply", "./sub/../sub/mine.py:reply", f"{tmp_path}/sub/mine.py:reply"):
        with as_responder(f"python:{spelling}") as model:
            assert model.resolved_target == real
    with as_responder(_fingerprint) as function:  # a function: its module's file and its name
        assert function.resolved_target == f"{Path(__file__).resolve()}:_fingerprint"
    assert as_responder("builtin:echo").resolved_target is None
