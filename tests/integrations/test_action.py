"""The composite GitHub Action (``action.yml``), its shell steps run locally the way the runner runs them.

Each ``run:`` step runs in ``bash --noprofile --norc -eo pipefail`` (the runner's ``shell: bash``) with
``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_WORKSPACE`` and ``GITHUB_ACTION_PATH`` in tmp_path,
its ``${{ }}`` expressions resolved, and a step skipped after a failure unless its ``if:`` says
``always()``. Offline: the ``uses:`` steps (setup-python, upload-artifact) and the pip install are
skipped (fairtalk is already installed), and the models are ``python:`` files.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.integrations._toys import BOTS

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
#: Steps not run here: they need the network (and the runner's toolcache).
OFFLINE_SKIPPED = {"install"}
#: Every ``if:`` of the action, as this runner evaluates it (a new condition must be added here).
CONDITIONS = {
    "inputs.python-version != ''": lambda ctx: ctx.inputs["python-version"] != "",
    "always() && steps.audit.outputs.exit-code != ''": lambda ctx: ctx.outputs.get("audit", {}).get("exit-code", "") != "",
}
SMALL = "--measures offense,length --resamples 200"


@dataclass
class Context:
    """What the expressions read: the inputs, each step's outputs, and the action's path."""

    inputs: dict[str, str]
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    def resolve(self, text: str) -> str:
        def one(match: re.Match[str]) -> str:
            expression = match.group(1).strip()
            if expression == "github.action_path":
                return str(ROOT)
            if expression.startswith("inputs."):
                return self.inputs[expression.removeprefix("inputs.")]
            step, _, name = expression.removeprefix("steps.").partition(".outputs.")
            return self.outputs.get(step, {}).get(name, "")

        return re.sub(r"\$\{\{(.*?)\}\}", one, text)


@dataclass
class Ran:
    code: int
    failed_step: str | None
    ran: list[str]
    summary: str
    outputs: dict[str, dict[str, str]]
    logs: dict[str, str] = field(default_factory=dict)


def run_action(workspace: Path, **given: str) -> Ran:
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    missing = [name for name, spec in ACTION["inputs"].items() if spec.get("required") and name not in given]
    assert not missing, missing
    inputs.update(given)
    ctx = Context(inputs)
    summary = workspace / "step_summary.md"
    summary.touch()
    runner_temp = workspace / "runner_temp"  # the action's temporary files, kept out of /tmp (as a runner keeps them)
    runner_temp.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "RUNNER_TEMP": str(runner_temp),
        "TMPDIR": str(runner_temp),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_ACTION_PATH": str(ROOT),
    }
    code, failed, ran, logs = 0, None, [], {}
    for index, step in enumerate(ACTION["runs"]["steps"]):
        condition = step.get("if")
        if condition is not None:
            assert condition in CONDITIONS, f"teach this runner the condition {condition!r}"
        should = CONDITIONS[condition](ctx) if condition else failed is None
        if condition and "always()" not in condition and failed is not None:
            should = False
        name = step.get("id", step["name"])
        if not should or "uses" in step or name in OFFLINE_SKIPPED:
            continue
        assert step["shell"] == "bash"
        output = workspace / f"github_output_{index}"
        output.touch()
        script = workspace / f"step_{index}.sh"
        script.write_text(ctx.resolve(step["run"]), encoding="utf-8")
        step_env = {**env, "GITHUB_OUTPUT": str(output), **{k: ctx.resolve(str(v)) for k, v in step.get("env", {}).items()}}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        ran.append(name)
        logs[name] = done.stdout
        ctx.outputs[name] = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        if done.returncode and failed is None:
            code, failed = done.returncode, name
    return Ran(code, failed, ran, summary.read_text(encoding="utf-8"), ctx.outputs, logs)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "bots.py").write_text(BOTS, encoding="utf-8")
    return tmp_path


def test_the_action_is_a_composite_with_the_documented_inputs() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert {"model", "axes", "pairs", "gate", "extra-args"} <= set(ACTION["inputs"])
    uses = [step["uses"].split("@")[0] for step in ACTION["runs"]["steps"] if "uses" in step]
    assert uses == ["actions/setup-python", "actions/upload-artifact"]
    upload = next(step for step in ACTION["runs"]["steps"] if step.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == "${{ inputs.output }}" and "always()" in upload["if"]


def test_a_biased_model_fails_the_gate_after_the_summary(workspace: Path) -> None:
    ran = run_action(workspace, model="python:bots.py:biased", axes="gender", pairs="20", **{"extra-args": SMALL})
    assert (ran.code, ran.failed_step) == (1, "Gate")
    assert ran.outputs["audit"]["exit-code"] == "1"
    assert ran.ran == ["audit", "Job summary", "Gate"]
    assert "# fairtalk audit of `python:bots.py:biased`" in ran.summary
    assert "Gate `fail-on-bias`: **failed**" in ran.summary
    assert "difference detected" in ran.summary.lower() and "Offense Rate" in ran.summary
    assert (workspace / "fairtalk-report" / "gender" / "report.md").is_file()
    assert "The full report is the `fairtalk-report` artifact" in ran.summary
    # fairtalk's own findings and table, once, under the action's heading (not before it, not twice)
    assert ran.summary.count("## fairtalk: gender") == 1 and ran.summary.count("| Measure |") == 1
    assert ran.summary.index("# fairtalk audit of") < ran.summary.index("## fairtalk: gender")


def test_a_fair_model_passes(workspace: Path) -> None:
    ran = run_action(
        workspace,
        model="python:bots.py:fair",
        axes="gender",
        pairs="20",
        output="out",
        **{"extra-args": SMALL, "artifact-name": "bias-report"},
    )
    assert (ran.code, ran.failed_step) == (0, None)
    assert "Gate `fail-on-bias`: passed" in ran.summary
    assert "The full report is the `bias-report` artifact" in ran.summary  # the artifact-name input
    assert (workspace / "out" / "index.html").is_file()


def test_gate_none_shows_no_gate_outcome(workspace: Path) -> None:
    """Review finding: with `gate: none` the summary said "Gate `none`: passed" and then "Gate fail-on-bias: FAILED"."""
    ran = run_action(workspace, model="python:bots.py:biased", axes="gender", pairs="20", gate="none", **{"extra-args": SMALL})
    assert (ran.code, ran.failed_step) == (0, None)
    assert "No gate (`gate: none`)." in ran.summary
    assert "Gate `none`" not in ran.summary and "FAILED" not in ran.summary and "Gate fail-on-bias" not in ran.summary
    assert "## fairtalk: gender" in ran.summary


def test_a_gate_given_in_extra_args_is_the_one_the_summary_and_the_error_name(workspace: Path) -> None:
    """Review finding: with `gate: none` and `--fail-on-bias` in extra-args the summary said "No gate" and
    the Gate step "the gate none failed"."""
    extra = {"extra-args": f"{SMALL} --fail-on-bias"}
    ran = run_action(workspace, model="python:bots.py:biased", axes="gender", pairs="20", gate="none", **extra)
    assert (ran.code, ran.failed_step) == (1, "Gate")
    assert "Gate `fail-on-bias` (given in `extra-args`): **failed**." in ran.summary
    assert "No gate" not in ran.summary and "gate: none" not in ran.summary
    assert "::error::fairtalk: the gate fail-on-bias failed" in ran.logs["Gate"]
    assert "none" not in ran.logs["Gate"]
    ran = run_action(workspace, model="python:bots.py:fair", axes="gender", pairs="20", gate="none", output="fair", **extra)
    assert (ran.code, ran.failed_step) == (0, None)
    assert "Gate `fail-on-bias` (given in `extra-args`): passed." in ran.summary


def test_a_gate_input_and_another_in_extra_args_are_both_named_each_with_its_outcome(workspace: Path) -> None:
    """20 pairs of a fair model show no difference and no equivalence: both gates are named, each with its own outcome.

    Review finding: the summary said both had failed, and the error "one or more of the gates …".
    """
    extra = {"extra-args": f"{SMALL} --fail-unless-equivalent"}
    ran = run_action(workspace, model="python:bots.py:fair", axes="gender", pairs="20", **extra)
    assert (ran.code, ran.failed_step) == (1, "Gate")
    assert "Gates `fail-on-bias`: passed; `fail-unless-equivalent` (given in `extra-args`): **failed**." in ran.summary
    assert "::error::fairtalk: the gate fail-unless-equivalent failed" in ran.logs["Gate"]
    assert "fail-on-bias" not in ran.logs["Gate"]


def test_extra_args_over_several_lines_are_all_passed_and_a_gate_on_the_second_is_in_force(workspace: Path) -> None:
    """Review finding (the gate failed open): `read -r -a` read the first line of a YAML block `extra-args: |` only,
    so `--fail-on-bias` on its second line was dropped and a biased model passed with exit code 0."""
    extra = {"extra-args": "--measures offense,length\n  --resamples 200\n--fail-on-bias\n"}
    ran = run_action(workspace, model="python:bots.py:biased", axes="gender", pairs="20", gate="none", **extra)
    assert (ran.code, ran.failed_step) == (1, "Gate")
    assert ran.outputs["audit"]["exit-code"] == "1"
    assert "Gate `fail-on-bias` (given in `extra-args`): **failed**." in ran.summary
    assert "::error::fairtalk: the gate fail-on-bias failed" in ran.logs["Gate"]
    assert "Offense Rate" in ran.summary and "Length" in ran.summary  # line 1's --measures reached the audit too
    assert "Sentiment" not in ran.summary


def test_a_fail_if_worse_gate_in_extra_args_is_named_with_its_outcome_and_not_blamed_on_another(workspace: Path) -> None:
    """Review finding: with `--baseline-model … --fail-if-worse` in extra-args fairtalk said "Gate fail-on-bias:
    passed" and "Gate fail-if-worse: FAILED", and the Action "Gate `fail-on-bias`: **failed**" (and with `gate:
    none`, "No gate"): the gates and their outcomes are fairtalk's own now."""
    (workspace / "other.py").write_text('def fair(text):\n    return "that is lovely, i am so glad for you"\n')
    extra = f"{SMALL} --baseline-model python:other.py:fair --fail-if-worse"
    ran = run_action(workspace, model="python:bots.py:fair", axes="gender", pairs="20", **{"extra-args": extra})
    assert (ran.code, ran.failed_step) == (1, "Gate")
    assert "Gates `fail-on-bias`: passed; `fail-if-worse` (given in `extra-args`): **failed**." in ran.summary
    assert "::error::fairtalk: the gate fail-if-worse failed" in ran.logs["Gate"]
    assert "fail-on-bias" not in ran.logs["Gate"]
    again = workspace / "gate-none"  # a job summary of its own
    again.mkdir()
    for name in ("bots.py", "other.py"):
        (again / name).write_text((workspace / name).read_text())
    ran = run_action(again, model="python:bots.py:fair", axes="gender", pairs="20", gate="none", **{"extra-args": extra})
    assert (ran.code, ran.failed_step) == (1, "Gate")
    assert "Gate `fail-if-worse` (given in `extra-args`): **failed**." in ran.summary
    assert "No gate" not in ran.summary and "fail-on-bias" not in ran.summary


def test_an_unknown_gate_stops_before_the_audit(workspace: Path) -> None:
    ran = run_action(workspace, model="python:bots.py:fair", gate="fail-sometimes")
    assert (ran.code, ran.failed_step) == (2, "audit")
    assert "No gate was reached: fairtalk audit exited 2. No report was written." in ran.summary
    assert "unknown gate 'fail-sometimes'" in ran.summary  # the error itself, not a pointer to an artifact
    assert "artifact" not in ran.summary
    assert not (workspace / "fairtalk-report").exists()


def test_an_audit_that_stops_on_an_error_shows_the_error_in_the_job_summary(workspace: Path) -> None:
    """Issue 41: on exit 2 the summary said "the full report is the artifact" when there was none, and not why."""
    ran = run_action(workspace, model="python:no_such_bots.py:fair", axes="gender", pairs="20", **{"extra-args": SMALL})
    assert (ran.code, ran.failed_step) == (2, "audit")
    assert "No gate was reached: fairtalk audit exited 2. No report was written." in ran.summary
    assert "```text\nerror:" in ran.summary and "no_such_bots.py" in ran.summary
    assert "artifact" not in ran.summary
    # Review finding: the suite left /tmp/fairtalk-errors.* and /tmp/fairtalk-summary.*: they go to RUNNER_TEMP
    made = {path.name.partition(".")[0] for path in (workspace / "runner_temp").glob("fairtalk-*")}
    assert {"fairtalk-summary", "fairtalk-errors"} <= made, made


def test_the_install_step_pins_the_cpu_torch() -> None:
    """An unpinned torch pulls gigabytes of CUDA wheels: the action pins it as `make install` does."""
    install = next(step for step in ACTION["runs"]["steps"] if step.get("id") == "install")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    pin = re.search(r"^TORCH := (\S+)$", makefile, re.MULTILINE)
    assert pin is not None and f'"{pin.group(1)}"' in install["run"]


@pytest.mark.parametrize(("index", "expected"), [("https://download.pytorch.org/whl/cpu", True), ("", False)])
def test_the_install_step_takes_torch_s_cpu_build_from_its_index(tmp_path: Path, index: str, expected: bool) -> None:
    """PyPI's Linux torch==2.13.0 pulls CUDA wheels: the step adds the CPU index (the input's default) unless emptied."""
    install = next(step for step in ACTION["runs"]["steps"] if step.get("id") == "install")
    assert ACTION["inputs"]["torch-index"]["default"] == "https://download.pytorch.org/whl/cpu"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python"  # records the arguments pip would have been given
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_OUT"\n', encoding="utf-8")
    fake.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "ARGS_OUT": str(tmp_path / "args"),
        "FAIRTALK_ACTION_PATH": "/the/action",
        "FAIRTALK_TORCH_INDEX": index,
    }
    subprocess.run(["bash", "-c", install["run"]], env=env, check=True, timeout=30)
    args = (tmp_path / "args").read_text(encoding="utf-8").splitlines()
    assert args[:3] == ["-m", "pip", "install"] and args[-2:] == ["torch==2.13.0", "/the/action"]
    assert (["--extra-index-url", index] == args[3:5]) is expected and len(args) == (7 if expected else 5)


def test_the_ci_gate_guide_lists_every_input() -> None:
    """Review finding: the guide's list of the action's inputs lacked ``artifact-name`` and ``torch-index``."""
    guide = (ROOT / "docs" / "how-to" / "ci-gate.md").read_text(encoding="utf-8")
    listed = guide[guide.index("Its inputs are") :].split("\n\n", 1)[0]
    assert {name for name in ACTION["inputs"] if f"`{name}`" not in listed} == set()
