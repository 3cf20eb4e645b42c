"""Fixtures shared by the test modules: this test session's own local Ray cluster; every Ray test on one xdist worker.

``make test`` runs the suite on every core (``pytest -n auto --dist loadgroup``, pytest-xdist). Each worker is a
process with a session of its own, so a session fixture such as :func:`cluster` would start one Ray cluster per worker:
the tests that start Ray (that use :func:`cluster`, live in a ``test_ray_*.py`` file, or carry the ``ray`` mark) are put
in one ``xdist_group``, so that one worker runs them all, one at a time, beside one cluster.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: Whether Ray is installed (the dev extra installs it; ``pip install 'fairtalk[ray]'``).
HAVE_RAY = importlib.util.find_spec("ray") is not None
#: The longest Ray temp dir: Ray's socket paths (``<temp dir>/session_<date>_<pid>/sockets/plasma_store``) add about
#: 70 characters to it, and a socket path has at most 107.
_MAX_TEMP_DIR = 36
#: The xdist group of the tests that start Ray (a cluster, or a process that starts its own).
RAY_GROUP = "ray"

if "PYTEST_XDIST_WORKER" in os.environ:  # one worker per core: a second math thread per worker only contends
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, "1")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``ray`` mark (a test that starts Ray without the :func:`cluster` fixture)."""
    config.addinivalue_line("markers", "ray: starts a Ray cluster (run by one xdist worker with the other Ray tests)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every test that starts Ray in the ``ray`` xdist group (``--dist loadgroup`` runs a group on one worker)."""
    for item in items:
        uses_cluster = isinstance(item, pytest.Function) and "cluster" in item.fixturenames
        if uses_cluster or item.path.name.startswith("test_ray_") or item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.xdist_group(RAY_GROUP))


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """A local two-CPU Ray cluster for this test session, shut down after it (skips without Ray).

    It is started with ``address="local"`` in a temp dir of its own, so that it never joins a cluster another
    process (another pytest run on this machine) started, nor leaves its address where that one would find it.
    """
    if not HAVE_RAY:
        pytest.skip("ray is not installed")
    import ray

    temp_dir = tmp_path_factory.mktemp("ray")
    if len(str(temp_dir)) > _MAX_TEMP_DIR:
        temp_dir = Path(tempfile.mkdtemp(prefix="fairtalk-test-ray-"))
    ray.init(
        address="local",
        _temp_dir=str(temp_dir),
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)
