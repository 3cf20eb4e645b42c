"""The ``slow`` list (``tests/slow_tests.txt``): every entry names a test that exists, and ``-m`` sees the mark."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from slow_list import slow_tests

ROOT = Path(__file__).resolve().parents[1]


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_listed_slow_test_exists() -> None:
    stale = []
    for entry in sorted(slow_tests()):
        file, _, name = entry.partition("::")
        path = ROOT / file
        if not path.is_file() or name.split("::")[-1] not in _functions(path):
            stale.append(entry)
    assert not stale, f"tests/slow_tests.txt names tests that no longer exist (rerun tools/slow_tests.py): {stale}"


def test_a_listed_test_is_left_out_by_not_slow_and_chosen_by_slow() -> None:
    listed = "tests/test_axes.py::test_religion_audits_every_group_against_the_reference_in_one_family"
    assert listed in slow_tests()

    def collected(marks: str) -> str:
        args = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-o", "addopts=", "-p", "no:cacheprovider", "-m", marks]
        done = subprocess.run([*args, "tests/test_axes.py"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        return done.stdout

    assert listed not in collected("not slow")
    assert listed in collected("slow")
