"""Fixtures shared by the test modules: this test session's own local Ray cluster; every Ray test on one xdist worker.

``make test`` runs the suite on every core (``pytest -n auto --dist loadgroup``, pytest-xdist). Each worker is a
process with a session of its own, so a session fixture such as :func:`cluster` would start one Ray cluster per worker:
the tests that start Ray (that use :func:`cluster`, live in a ``test_ray_*.py`` file, or carry the ``ray`` mark) are put
in one ``xdist_group``, so that one worker runs them all, one at a time, beside one cluster.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from slow_list import slow_tests

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
#: The files with a published schema: file name -> schema (``docs/reference/<schema>.schema.json``).
SCHEMA_FILES = {"results.json": "results", "run.json": "run"}
#: The keys that make a ``results.json`` an audit's or ``score``'s (the schema's ``required``): other commands (prompts
#: analyze, compare, reproduce, planted) write a ``results.json`` of their own, which has no published schema.
_AUDIT_RESULT_KEYS = ("axis", "groups", "n_pairs", "measures")
#: Each file checked already, with the (mtime_ns, size) it had then: a file is validated once until it changes.
_CHECKED: dict[Path, tuple[int, int]] = {}
#: The top-level folders of the session's base temp dir that a test's teardown has scanned already.
_SCANNED_ROOTS: set[str] = set()


@functools.cache
def _schema_checker(kind: str) -> Any:
    """A validator of the published ``docs/reference/<kind>.schema.json`` (the file the docs link, not the models)."""
    import jsonschema

    schema = json.loads((_DOCS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="session", autouse=True)
def _check_written_results():
    """Check every ``results.json`` that fairtalk serializes in this process against the published schema.

    ``AuditResult.to_json`` (an audit's and ``score``'s ``results.json``) is wrapped, so that a result serialized but
    never written is checked too; what does not fit is recorded, and :func:`written_results_fit_the_published_schema`
    fails the test that wrote it. The files on disk, a CLI subprocess's included, are checked by
    :func:`written_files_fit_the_published_schema`.
    """
    from fairtalk.results import AuditResult

    to_json = AuditResult.to_json

    def checked_to_json(self: AuditResult) -> str:
        text = to_json(self)
        error = jsonschema_error(_schema_checker("results"), json.loads(text))
        if error is not None:
            _SCHEMA_PROBLEMS.append(("results", error))
        return text

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AuditResult, "to_json", checked_to_json)
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
    """Fail a test whose run serialized a ``results.json`` that the published JSON Schema refuses."""
    before = len(_SCHEMA_PROBLEMS)
    yield
    new = _SCHEMA_PROBLEMS[before:]
    del _SCHEMA_PROBLEMS[before:]
    assert not new, f"result files written by this test do not fit docs/reference/*.schema.json: {new}"


def schema_file_error(path: Path) -> str | None:
    """Why ``path`` (a ``results.json`` or ``run.json``) does not fit its published schema; None when it fits.

    A ``results.json`` without the keys of an audit's result is another command's (no published schema): None.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return f"not JSON ({type(exc).__name__}: {exc})"
    kind = SCHEMA_FILES[path.name]
    if kind == "results" and not (isinstance(data, dict) and all(key in data for key in _AUDIT_RESULT_KEYS)):
        return None
    return jsonschema_error(_schema_checker(kind), data)


def _changed_schema_files(root: Path) -> list[Path]:
    """The files under ``root`` with a published schema that were not checked as they are now (and mark them checked)."""
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            if name not in SCHEMA_FILES:
                continue
            path = Path(folder, name)
            try:
                stat = path.stat()
            except OSError:
                continue
            stamp = (stat.st_mtime_ns, stat.st_size)
            if _CHECKED.get(path) != stamp:
                _CHECKED[path] = stamp
                found.append(path)
    return found


def _test_roots(request: pytest.FixtureRequest, base: Path) -> list[Path]:
    """The base temp dir's top-level folders this test may have written in.

    Those made since the last test's teardown (its ``tmp_path`` and the ``mktemp`` folders of the fixtures it set up),
    and those holding a path one of its fixtures returned (a module fixture's folder the test writes into).
    """
    try:
        names = set(os.listdir(base))
    except OSError:
        return []
    roots = names - _SCANNED_ROOTS
    _SCANNED_ROOTS.update(roots)
    for value in getattr(request.node, "funcargs", {}).values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, Path) and item.is_relative_to(base) and item != base:
                roots.add(item.relative_to(base).parts[0])
    return [base / name for name in sorted(roots) if not (base / name).is_symlink()]  # not pytest's ``<name>current``


@pytest.fixture(autouse=True)
def written_files_fit_the_published_schema(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """At teardown, validate each ``results.json`` and ``run.json`` this test's temp dirs hold against its schema.

    It reads the files, so it sees what a CLI subprocess wrote as well as the library. Each file is validated once
    (until it changes). A test that writes a malformed or hostile one on purpose opts out with
    ``@pytest.mark.unvalidated_files``.
    """
    yield
    base = tmp_path_factory.getbasetemp()
    files = [path for root in _test_roots(request, base) for path in _changed_schema_files(root)]
    if request.node.get_closest_marker("unvalidated_files"):
        return
    problems = [f"{path.relative_to(base)}: {error}" for path in files if (error := schema_file_error(path)) is not None]
    assert not problems, "files written by this test do not fit docs/reference/*.schema.json:\n" + "\n".join(problems)


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``ray`` mark (a test that starts Ray without the :func:`cluster` fixture) and ``unvalidated_files``."""
    config.addinivalue_line("markers", "ray: starts a Ray cluster (run by one xdist worker with the other Ray tests)")
    config.addinivalue_line(
        "markers",
        "unvalidated_files: writes a malformed or hostile results.json / run.json on purpose (no schema check at teardown)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests listed in ``slow_tests.txt`` ``slow`` (before ``-m`` selects), and put the Ray tests in one group."""
    slow = slow_tests()
    for item in items:
        if item.nodeid.split("[")[0] in slow:
            item.add_marker(pytest.mark.slow)
    _group_ray_tests(items)


def _group_ray_tests(items: list[pytest.Item]) -> None:
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
