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


#: Result files written in this process that do not fit the published JSON Schema: (file kind, error), see
#: :func:`written_results_fit_the_published_schema`.
_SCHEMA_PROBLEMS: list[tuple[str, str]] = []
_DOCS = Path(__file__).resolve().parents[1] / "docs" / "reference"


def _schema_checker(kind: str):
    """A validator of the published ``docs/reference/<kind>.schema.json`` (the file the docs link, not the models)."""
    import json

    import jsonschema

    schema = json.loads((_DOCS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="session", autouse=True)
def _check_written_results():
    """Check every ``results.json`` and ``run.json`` that fairtalk writes in this process against the published schema.

    ``AuditResult.to_json`` (an audit's and ``score``'s ``results.json``) and the run index's writer are wrapped; what
    does not fit is recorded, and :func:`written_results_fit_the_published_schema` fails the test that wrote it. (A CLI
    run in a subprocess is not seen here; its files are read back through the same schema by the tests that read them.)
    """
    import json

    from fairtalk.report import _index
    from fairtalk.results import AuditResult

    checkers = {"results": _schema_checker("results"), "run": _schema_checker("run")}
    to_json, write_text_atomic = AuditResult.to_json, _index.write_text_atomic

    def check(kind: str, text: str) -> None:
        error = jsonschema_error(checkers[kind], json.loads(text))
        if error is not None:
            _SCHEMA_PROBLEMS.append((kind, error))

    def checked_to_json(self: AuditResult) -> str:
        text = to_json(self)
        check("results", text)
        return text

    def checked_write(path, text: str, *args, **kwargs):
        if Path(path).name == _index.RUN_FILE:
            check("run", text)
        return write_text_atomic(path, text, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AuditResult, "to_json", checked_to_json)
        patch.setattr(_index, "write_text_atomic", checked_write)
        yield


def jsonschema_error(checker, data: object) -> str | None:
    """The first error of ``data`` against a JSON Schema validator, as ``field: message``; None when it fits."""
    import jsonschema

    error = jsonschema.exceptions.best_match(checker.iter_errors(data))
    if error is None:
        return None
    message = error.message if len(error.message) <= 300 else f"{error.message[:120]} ... {error.message[-160:]}"
    return f"{'.'.join(str(p) for p in error.absolute_path) or '(top)'}: {message}"


@pytest.fixture(autouse=True)
def written_results_fit_the_published_schema():
    """Fail a test whose run wrote a ``results.json`` or ``run.json`` that the published JSON Schema refuses."""
    before = len(_SCHEMA_PROBLEMS)
    yield
    new = _SCHEMA_PROBLEMS[before:]
    del _SCHEMA_PROBLEMS[before:]
    assert not new, f"result files written by this test do not fit docs/reference/*.schema.json: {new}"


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
