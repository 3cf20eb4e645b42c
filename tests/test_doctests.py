"""Every example in fairtalk's docstrings runs: the ``Examples`` sections the API reference publishes (mkdocstrings).

The modules are found by walking ``src/fairtalk`` for a ``>>>`` line, without importing anything at collection, so a
module that gains its first example is tested with no edit here, and no test names a private module to reach its
examples. The few modules whose examples load a model or the built-in corpus run in :func:`test_heavy_examples_run`,
which ``tests/slow_tests.txt`` lists.
"""

from __future__ import annotations

import doctest
import importlib
import logging
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Modules whose examples take seconds (a model or the built-in corpus loads), and what loads.
HEAVY = {
    "fairtalk.measures._regard": "the regard classifier",
    "fairtalk.corpora": "the built-in chitchat corpus",
    "fairtalk.gold._agreement": "Krippendorff's alpha on sampled labels",
    "fairtalk.measures._offense": "the profanity classifier",
    "fairtalk.debias._wer": "a word-embedding model",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_with_examples() -> list[str]:
    """Every fairtalk module whose source holds a ``>>>`` line (``__main__`` modules run the CLI on import)."""
    return sorted(
        _module_name(path)
        for path in (SRC / "fairtalk").rglob("*.py")
        if path.stem != "__main__" and any(line.lstrip().startswith(">>>") for line in path.read_text().splitlines())
    )


def _run_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module(name)
    # A handler on the root logger (inspect_ai installs one when it is imported) would print into the examples' output.
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [test for test in doctest.DocTestFinder().find(module) if test.examples]
    for test in tests:
        runner.run(test, out=report.append)
    assert tests, f"{name} has a '>>>' line but doctest finds no example in it"
    assert runner.failures == 0, f"{name}: {runner.failures} of {runner.tries} examples failed:\n" + "".join(report)


@pytest.mark.parametrize("name", [name for name in modules_with_examples() if name not in HEAVY])
def test_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _run_examples(name, monkeypatch)


@pytest.mark.parametrize("name", sorted(HEAVY))
def test_heavy_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _run_examples(name, monkeypatch)


def test_the_walk_finds_the_modules_with_examples() -> None:
    found = modules_with_examples()
    assert set(HEAVY) <= set(found), "a HEAVY module lost its examples: take it off the list"
    # Spot checks across the layers: a base module, a package namespace, a subpackage's private module.
    assert {"fairtalk._jsonl", "fairtalk.stats._core", "fairtalk.gold._sample", "fairtalk.models.vllm._engine"} <= set(found)
    assert not any(name.endswith("__main__") for name in found)


def test_a_failing_example_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "doc_example_module.py").write_text('def f():\n    """\n    >>> 1 + 1\n    3\n    """\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AssertionError, match="1 of 1 examples failed"):
        _run_examples("doc_example_module", monkeypatch)
