"""The test functions marked ``slow``: ``tests/slow_tests.txt``, written by ``tools/slow_tests.py`` (3 s or more each)."""

from __future__ import annotations

from pathlib import Path

#: One ``path::function`` a line; ``#`` starts a comment line.
SLOW_TESTS_FILE = Path(__file__).with_name("slow_tests.txt")


def slow_tests() -> frozenset[str]:
    """The ``path::function`` ids listed in :data:`SLOW_TESTS_FILE` (comments and blank lines skipped)."""
    lines = SLOW_TESTS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))
