"""Fixtures shared by the test modules: a local Ray cluster (one per module that asks for it)."""

from __future__ import annotations

import importlib.util
import logging

import pytest

#: Whether Ray is installed (the dev extra installs it; ``pip install 'fairtalk[ray]'``).
HAVE_RAY = importlib.util.find_spec("ray") is not None


@pytest.fixture(scope="module")
def cluster():
    """A local two-CPU Ray cluster for the module's tests, shut down after them (skips without Ray)."""
    if not HAVE_RAY:
        pytest.skip("ray is not installed")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    yield ray
    ray.shutdown()
