"""Tests that a Ray run without an address starts its own cluster: it never joins, nor stops, another process's."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import fairtalk
from fairtalk import Pair

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install 'fairtalk[ray]')"
)

#: Another user's Ray cluster on this machine: started with its own temp dir, it leaves its address where ray.init()
#: looks for the latest cluster (as `ray start` does), then reports its state for each line it reads.
OTHER_CLUSTER = """
import json, logging, sys
import ray
from ray._private import state
from ray._private.utils import write_ray_address

temp_dir = sys.argv[1]
context = ray.init(address="local", _temp_dir=temp_dir, num_cpus=1, include_dashboard=False, log_to_driver=False,
                   logging_level=logging.WARNING, object_store_memory=80 * 1024 * 1024)
gcs = context.address_info["gcs_address"]
write_ray_address(gcs, temp_dir)


@ray.remote
def ping():
    return "pong"


def report():
    return {"gcs": gcs, "node": ray.get_runtime_context().get_node_id(), "session": context.address_info["session_dir"],
            "jobs": sorted(job["JobID"] for job in state.jobs()), "ping": ray.get(ping.remote(), timeout=60),
            "alive": [node["Alive"] for node in ray.nodes()]}


print(json.dumps(report()), flush=True)
for _ in sys.stdin:
    print(json.dumps(report()), flush=True)
ray.shutdown()
"""


class OtherCluster:
    """The other cluster's process: ``ask()`` returns its state now."""

    def __init__(self, root: Path) -> None:
        self.root = root  # RAY_TMPDIR for a process that should find it: its temp dir is root / "ray"
        self._errors = (root / "other.err").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-c", OTHER_CLUSTER, str(root / "ray")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            text=True,
        )
        self.first = self._read()

    def _read(self, timeout: float = 120) -> dict[str, Any]:
        timer = threading.Timer(timeout, self.process.kill)
        timer.start()
        try:
            line = self.process.stdout.readline()  # type: ignore[union-attr]
        finally:
            timer.cancel()
        assert line, f"the other cluster stopped: {(self.root / 'other.err').read_text()}"
        return json.loads(line)

    def ask(self) -> dict[str, Any]:
        self.process.stdin.write("state\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        return self._read()

    def stop(self) -> None:
        try:
            self.process.stdin.close()  # type: ignore[union-attr]
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._errors.close()


@pytest.fixture(scope="module")
def other_cluster() -> Iterator[OtherCluster]:
    """A Ray cluster in another process, with its own (short: Ray's socket paths are short) temp dir."""
    root = Path(tempfile.mkdtemp(prefix="ft-other-"))
    other = None
    try:
        other = OtherCluster(root)
        yield other
    finally:
        if other is not None:
            other.stop()
        shutil.rmtree(root, ignore_errors=True)


def _pairs() -> list[Pair]:
    return [Pair(f"p{i}", "gender", f"he said {i}", f"she said {i}", "a") for i in range(6)]


@pytest.mark.parametrize("found_by", ["RAY_ADDRESS", "ray_current_cluster"])
def test_a_run_without_an_address_leaves_another_cluster_alone(
    other_cluster: OtherCluster, tmp_path: Path, found_by: str
) -> None:
    before = other_cluster.ask()
    assert before["ping"] == "pong" and before["alive"] == [True]
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    env["RAY_TMPDIR"] = str(other_cluster.root)  # where ray.init() looks for the latest cluster: the other one
    if found_by == "RAY_ADDRESS":
        env["RAY_ADDRESS"] = before["gcs"]
    fairtalk.write_pairs(_pairs(), tmp_path / "pairs.jsonl")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairtalk.cli",
            "respond",
            "--pairs",
            "pairs.jsonl",
            "--model",
            "builtin:echo?mode=upper",
            "-o",
            "out.jsonl",
            "--engine",
            "ray",
            "--ray-actors",
            "1",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "on 1 Ray actor(s)" in done.stderr and len((tmp_path / "out.jsonl").read_text().splitlines()) == 12
    if found_by == "RAY_ADDRESS":  # not joined, and the run says how to join it
        assert "RAY_ADDRESS is set, but no address was given" in done.stderr
    after = other_cluster.ask()
    assert after == before  # same cluster, node and session, still answering, and no driver of ours ever joined it
    assert sorted(p.name for p in other_cluster.root.iterdir()) == ["other.err", "ray"]  # our temp dir is gone


def test_the_test_cluster_is_this_session_s_own(cluster) -> None:
    from ray._private import worker

    temp_dir = worker._global_node.get_temp_dir_path()
    assert Path(temp_dir).name.startswith(("ray", "fairtalk-test-ray-")) and temp_dir != "/tmp/ray"
    assert cluster.cluster_resources()["CPU"] == 2
