"""One model is one model however its ``python:`` spec is spelled.

Review finding: ``audit --model python:mybot.py:reply --baseline-model python:./mybot.py:reply
--fail-if-worse`` passed ("identical on all 800 pairs"), as did an absolute path against the module
form, ``compare`` of two such runs and ``assert_not_worse``: the rule compared the specs' text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus
from fairtalk.cli import app
from fairtalk.compare import python_target, same_model, same_model_configs
from fairtalk.config import AuditConfig
from fairtalk.gates import evaluate
from fairtalk.pipeline import compare_runs
from fairtalk.testing import BiasAssertionError, assert_not_worse

runner = CliRunner()

MODEL = """
def reply(context):
    return "that is lovely, i am so happy for you"
"""
MARGIN = ("--margin", "offense_rate=0.2")
SETTINGS = {"do_sample": False}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the corpus and a model file named for this test (its module name is new to ``sys.modules``)."""
    (tmp_path / f"spelt_{tmp_path.name}.py").write_text(MODEL, encoding="utf-8")
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _module(here: Path) -> str:
    return f"spelt_{here.name}"


def _fingerprint(target: str, code: str = "637f1904116fee20", **more: object) -> str:
    fields = {"batched": False, "code": code, **more}
    return f"python:{target} " + json.dumps(fields, sort_keys=True, separators=(",", ":"))


def test_a_python_target_resolves_to_one_file_whatever_its_spelling(here: Path) -> None:
    module = _module(here)
    real = f"{(here / f'{module}.py').resolve()}:reply"
    spellings = (f"{module}.py:reply", f"./{module}.py:reply", f"{here}/{module}.py:reply", f"{module}:reply")
    assert {python_target(s) for s in spellings} == {real}
    assert python_target("no_such_module_here:reply") == "no_such_module_here:reply"
    assert python_target(f"{module}.py:other") != real  # another function of the file is another model


@pytest.mark.parametrize("spelling", ["./{m}.py:reply", "{here}/{m}.py:reply", "{m}:reply"])
def test_same_model_compares_the_resolved_target_and_every_identity_field(here: Path, spelling: str) -> None:
    module = _module(here)
    base = _fingerprint(f"{module}.py:reply")
    other = spelling.format(m=module, here=here)
    why = same_model((base, SETTINGS), (_fingerprint(other), SETTINGS))
    assert why == (
        f"two runs of the same model python:{module}.py:reply (spelled python:{other} in the candidate) "
        "with the same decoding settings"
    )
    # another code hash, another batched, another field (a state digest): another model
    assert same_model((base, SETTINGS), (_fingerprint(other, code="0000000000000000"), SETTINGS)) is None
    assert same_model((base, SETTINGS), (_fingerprint(other, state="ab12"), SETTINGS)) is None
    assert same_model((_fingerprint(f"{module}.py:reply", state="ab12"), SETTINGS), (_fingerprint(other, state="ab12"), SETTINGS))
    assert same_model((base, SETTINGS), (_fingerprint(other), {"do_sample": True})) is None
    # other kinds compare as written
    assert same_model(("hf:./gpt2", SETTINGS), ("hf:gpt2", SETTINGS)) is None


@pytest.mark.parametrize("spelling", ["./{m}.py:reply", "{here}/{m}.py:reply", "{m}:reply"])
def test_audit_refuses_a_baseline_model_that_is_the_candidate_spelled_another_way(here: Path, spelling: str) -> None:
    module = _module(here)
    other = spelling.format(m=module, here=here)
    args = ["audit", "--corpus", "toy.txt", "--axis", "gender", "--measures", "offense", *MARGIN, "--fail-if-worse"]
    done = runner.invoke(app, [*args, "--model", f"python:{module}.py:reply", "--baseline-model", f"python:{other}", "-o", "out"])
    assert done.exit_code == 2, done.output
    said = " ".join(done.output.split())
    assert f"error: --baseline-model: the baseline and the candidate would be two runs of the same model python:{other}" in said
    assert f"(spelled python:{module}.py:reply in the candidate)" in said
    assert not (here / "out").exists()
    configs = [AuditConfig(model=f"python:{m}", corpus="toy.txt") for m in (other, f"{module}.py:reply")]
    assert same_model_configs(*configs) is not None
    assert same_model_configs(configs[0], AuditConfig(model=f"python:{module}.py:reply", model_version="2")) is None


def _audit(model: str, out: str) -> Path:
    args = ["audit", "--corpus", "toy.txt", "--axis", "gender", "--measures", "offense", "--resamples", "50"]
    done = runner.invoke(app, [*args, "--model", model, "-o", out, "-q"])
    assert done.exit_code == 0, done.output
    return Path(out)


def test_compare_fails_the_gate_on_two_runs_of_one_model_spelled_two_ways(here: Path) -> None:
    module = _module(here)
    first = _audit(f"python:{module}.py:reply", "first")
    again = _audit(f"python:{here}/{module}.py:reply", "again")
    modular = _audit(f"python:{module}:reply", "modular")
    for other, spelled in ((again, f"{here}/{module}.py:reply"), (modular, f"{module}:reply")):
        comparison = compare_runs(first, other, margins={"offense_rate": 0.2})
        assert comparison.same_run == (
            f"two runs of the same model python:{module}.py:reply (spelled python:{spelled} in the candidate) "
            "with the same decoding settings"
        )
        assert not evaluate(comparison, "fail-if-worse").passed
        done = runner.invoke(app, ["compare", str(first), str(other), "--fail-if-worse", *MARGIN])
        assert done.exit_code == 1, done.output
        assert "a model cannot be shown not worse than itself" in " ".join(done.output.split())


def test_assert_not_worse_fails_on_the_candidate_spelled_another_way(here: Path) -> None:
    module = _module(here)
    options = {"axes": "gender", "corpus": "toy.txt", "measures": ("offense",), "margin": {"offense_rate": 0.2}}
    with pytest.raises(BiasAssertionError) as same:
        assert_not_worse(f"python:{module}.py:reply", f"python:./{module}.py:reply", **options, out_dir=here / "lib")
    assert same.value.failing == ("run",)
    assert "a model cannot be shown not worse than itself" in str(same.value)


_MINILM = '{"encoder":"minilm-0123456789abcdef","pool":"fedcba9876543210"}'


def test_a_builtin_model_recorded_under_its_store_head_is_the_model_of_its_spec() -> None:
    from fairtalk.models import recorded_specs

    assert recorded_specs() == {
        "retrieval:builtin-minilm": "builtin:minilm-retrieval",
        "retrieval:builtin-transformer": "builtin:retrieval",
    }
    old, new = f"retrieval:builtin-minilm {_MINILM}", f"builtin:minilm-retrieval {_MINILM}"
    assert same_model((old, SETTINGS), (new, SETTINGS)) == (
        "two runs of the same model retrieval:builtin-minilm (spelled builtin:minilm-retrieval in the candidate) "
        "with the same decoding settings"
    )
    assert same_model((new, SETTINGS), (old, SETTINGS)) is not None
    assert same_model(("retrieval:builtin-transformer {}", SETTINGS), ("builtin:retrieval {}", SETTINGS)) is not None
    # another pool, another built-in model, or a user's retrieval pool of another name: another model
    assert same_model((old, SETTINGS), (new.replace("fedcba", "000000"), SETTINGS)) is None
    assert same_model((old, SETTINGS), (f"builtin:retrieval {_MINILM}", SETTINGS)) is None
    assert same_model((f"retrieval:my-pool {_MINILM}", SETTINGS), (new, SETTINGS)) is None


def test_compare_fails_the_gate_on_an_old_run_of_the_minilm_model_and_a_new_one(here: Path) -> None:
    module = _module(here)
    runs = {}
    for out, head in (("old", "retrieval:builtin-minilm"), ("new", "builtin:minilm-retrieval")):
        runs[out] = _audit(f"python:{module}.py:reply", out)
        run_file = runs[out] / "run.json"
        run = json.loads(run_file.read_text(encoding="utf-8"))
        run_file.write_text(json.dumps({**run, "model": f"{head} {_MINILM}"}), encoding="utf-8")  # as each wrote it
    comparison = compare_runs(runs["old"], runs["new"], margins={"offense_rate": 0.2})
    assert comparison.same_run is not None and "two runs of the same model retrieval:builtin-minilm" in comparison.same_run
    done = runner.invoke(app, ["compare", str(runs["old"]), str(runs["new"]), "--fail-if-worse", *MARGIN])
    assert done.exit_code == 1, done.output
    assert "a model cannot be shown not worse than itself" in " ".join(done.output.split())
