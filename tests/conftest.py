"""Fixtures shared by the test modules: this test session's own local Ray cluster."""

from __future__ import annotations

import importlib.util
import logging
import shutil
import tempfile
from pathlib import Path

import pytest

#: Whether Ray is installed (the dev extra installs it; ``pip install 'fairtalk[ray]'``).
HAVE_RAY = importlib.util.find_spec("ray") is not None
#: The longest Ray temp dir: Ray's socket paths (``<temp dir>/session_<date>_<pid>/sockets/plasma_store``) add about
#: 70 characters to it, and a socket path has at most 107.
_MAX_TEMP_DIR = 36


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
    ray.init(address="local", _temp_dir=str(temp_dir), num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)  # fmt: skip
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)
