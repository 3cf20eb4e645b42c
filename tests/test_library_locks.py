"""The library's writing calls hold their output folder's lock for the whole call, as the commands do.

``train_model``, ``reproduce_debias`` and ``reproduce_planted`` are each paused, after their
checks, at a point of their own (a training batch, the audit's pairs, an answer); there a second call on
the same folder, in another process, must be refused naming this process, and once the first
call ends the folder is free again. The second call is given an input that fails right after
the folder's check, so that without the lock it stops at once too (on another error).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import fairtalk
from fairtalk.files import output_lock_path
from fairtalk.pipeline import reproduce_planted

#: What a second call must say while the first one holds the folder.
_BUSY = "another fairtalk run (pid {pid})"


class _Paused(Exception):
    """Ends the first call where the test paused it."""


def _second_call(code: str) -> str:
    """Run ``code`` (a call of fairtalk's that should fail) in another process: ``TypeName: message`` of its error."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(Path(fairtalk.__file__).parents[1]), os.environ.get("PYTHONPATH")) if p),
    }
    script = f"import fairtalk, fairtalk.pipeline\ntry:\n    {code}\nexcept Exception as exc:\n    print(f'{{type(exc).__name__}}: {{exc}}')\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


def _free(out: Path) -> bool:
    """Whether no fairtalk run holds ``out`` (a lock of the test's own, taken and let go, goes through)."""
    from fairtalk.files import hold_output, output_scope

    with output_scope():
        hold_output(out)
    return not output_lock_path(out).exists()


def test_train_model_holds_its_checkpoint_folder_until_it_returns(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "model"
    said: list[str] = []

    def second_call_at_the_first_batch(event: object) -> None:
        said.append(_second_call(f"fairtalk.train_model([], fairtalk.TrainConfig(model='seq2seq'), {str(out)!r})"))
        raise _Paused

    sizes = {"emb_dim": 16, "hidden": 32, "layers": 1, "dropout": 0.0}
    config = fairtalk.TrainConfig(model="seq2seq", epochs=1, batch_size=16, min_count=1, val_size=20, threads=1, sizes=sizes)
    dialogues = [fairtalk.Context(id=f"c{i % 30}/{i}", text=f"is he a doctor {i % 7}?", response="yes") for i in range(120)]
    with pytest.raises(_Paused):
        fairtalk.train_model(dialogues, config, out, progress=second_call_at_the_first_batch)
    assert said[0].startswith("OutputError:") and _BUSY.format(pid=os.getpid()) in said[0], said
    assert _free(out)


def test_reproduce_debias_holds_its_output_folder_until_it_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairtalk.experiments import _reproduce

    out = tmp_path / "debias"
    said: list[str] = []

    def second_call_at_the_pairs(*args: object, **kwargs: object) -> None:
        missing = f"jsonl:{tmp_path / 'missing.jsonl'}"  # without the lock: a CorpusError right after the folder's check
        said.append(_second_call(f"fairtalk.reproduce_debias(out_dir={str(out)!r}, corpus={missing!r})"))
        raise _Paused

    monkeypatch.setattr(_reproduce, "_audit_pairs", second_call_at_the_pairs)
    with pytest.raises(_Paused):
        fairtalk.reproduce_debias(out_dir=out, quick=True)
    assert said[0].startswith("OutputError:") and _BUSY.format(pid=os.getpid()) in said[0], said
    assert _free(out)


def test_reproduce_planted_holds_its_output_folder_until_it_returns(tmp_path: Path) -> None:
    from fairtalk.models import EchoResponder

    out = tmp_path / "planted"
    said: list[str] = []

    def second_call_at_the_first_answer(event: object) -> None:
        # cache_dir=out: without the lock, an OutputError of another kind right after the folder's check
        said.append(_second_call(f"fairtalk.pipeline.reproduce_planted(out_dir={str(out)!r}, cache_dir={str(out)!r})"))
        raise _Paused

    with pytest.raises(_Paused):
        reproduce_planted(
            out_dir=out, quick=True, n_pairs=2, base_model=EchoResponder(), progress=second_call_at_the_first_answer
        )
    assert said[0].startswith("OutputError:") and _BUSY.format(pid=os.getpid()) in said[0], said
    assert _free(out)
