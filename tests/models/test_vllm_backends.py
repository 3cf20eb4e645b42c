"""Tests for models/vllm/_backends.py: vllm: with data_parallel_size > 1, one engine per Ray actor."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairtalk import FairtalkError
from fairtalk.models import load_responder

from .vllm_fakes import FAKE_VLLM_PACKAGE, SAMPLED, FakeLLM, FakeRay, install_fake_vllm, params_of


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[FakeLLM]:
    return install_fake_vllm(monkeypatch)


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRay]:
    ray = FakeRay(n_gpus=4)
    monkeypatch.setitem(sys.modules, "ray", ray)
    yield ray


def test_data_parallel_runs_one_engine_per_ray_actor(fake_vllm: type[FakeLLM], fake_ray: FakeRay) -> None:
    contexts = [f"c{i}" for i in range(7)]
    with load_responder("vllm:org/tiny?data_parallel_size=2&tensor_parallel_size=2&chunk_size=2") as model:
        assert fake_ray.started and fake_ray.actor_options == [{"num_gpus": 2}]
        assert [llm.kwargs["distributed_executor_backend"] for llm in fake_vllm.instances] == ["mp", "mp"]
        assert "data_parallel_size" not in model.fingerprint  # how fast, not what
        out = model.respond(contexts, SAMPLED, seeds=list(range(7)))
        streamed = dict(i for i in model.respond_stream(contexts, SAMPLED, seeds=list(range(7))) if i is not None)
    assert out == [streamed[i] for i in range(7)] == [f"echo:<bos>c{i}" for i in range(7)]
    first, second = fake_vllm.instances
    assert [len(p) for p, _ in first.calls][0] == 3 and [len(p) for p, _ in second.calls][0] == 4  # equal shares
    seeds = sorted(p["seed"] for llm in fake_vllm.instances for p in params_of(llm))
    assert seeds == sorted(list(range(7)) * 2)  # every item sampled with its own seed, wherever it ran
    assert len(fake_ray.killed) == 2  # close() stops the actors


def test_data_parallel_needs_the_gpus_and_ray(fake_vllm: type[FakeLLM], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", FakeRay(n_gpus=1))
    with pytest.raises(
        FairtalkError, match="data_parallel_size=2 x tensor_parallel_size=1 needs 2 GPUs, but the Ray cluster has 1"
    ):
        load_responder("vllm:org/tiny?data_parallel_size=2")
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(FairtalkError, match=r"data_parallel_size=2 runs one engine per replica as a Ray actor and needs Ray"):
        load_responder("vllm:org/tiny?data_parallel_size=2")


def test_a_replica_that_cannot_load_stops_them_all(fake_vllm: type[FakeLLM], fake_ray: FakeRay) -> None:
    with pytest.raises(FairtalkError, match="cannot load vllm model 'missing/model': OSError: no such model"):
        load_responder("vllm:missing/model?data_parallel_size=2")
    assert len(fake_ray.killed) == 2


@pytest.mark.slow
def test_data_parallel_on_a_local_ray_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real Ray actors (two logical GPUs, no CUDA needed), each loading a fake vllm package from disk."""
    ray = pytest.importorskip("ray")
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text(FAKE_VLLM_PACKAGE, encoding="utf-8")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    if ray.is_initialized():
        ray.shutdown()
    ray.init(
        num_cpus=2,
        num_gpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}},
    )
    try:
        contexts = [f"c{i}" for i in range(9)]
        with load_responder("vllm:org/tiny?data_parallel_size=2&chunk_size=2") as model:
            out = model.respond(contexts, SAMPLED, seeds=list(range(9)))
            each = model.respond_each(contexts, SAMPLED, seeds=list(range(9)))  # five chunks over the two replicas
    finally:
        ray.shutdown()
    expected = [f"c{i} seed={i}" for i in range(9)]
    assert [r.split(" gpu=")[0] for r in out] == [r.split(" gpu=")[0] for r in each] == expected
    assert {r.split(" gpu=")[1] for r in out} == {r.split(" gpu=")[1] for r in each} == {"0", "1"}  # a GPU each
