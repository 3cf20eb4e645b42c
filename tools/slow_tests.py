"""Write ``tests/slow_tests.txt``: the test functions that take 3 s or more, read off a ``pytest --durations=0`` log.

``make test`` leaves these out (``-m "not slow"``) and ``make test-slow`` runs them; ``.ci/run`` runs both. Regenerate
the list after a full run on a quiet machine::

    .venv/bin/python -m pytest -n auto --dist loadgroup --durations=0 -o addopts="" -q > durations.log
    .venv/bin/python tools/slow_tests.py durations.log > tests/slow_tests.txt

A function's time is the sum of its setup, call and teardown over all its parameters.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

THRESHOLD_SECONDS = 3.0
_LINE = re.compile(r"([\d.]+)s (setup|call|teardown)\s+(\S+)")
_HEADER = """\
# Test functions that take 3 s or more (setup, call and teardown, summed over their parameters), marked `slow` by
# tests/conftest.py: `make test` leaves them out, `make test-slow` runs them, and .ci/run runs both.
# Written by tools/slow_tests.py from a `pytest --durations=0` log; one `path::function` a line.
"""


def slow_functions(log: str, threshold: float = THRESHOLD_SECONDS) -> list[str]:
    """The ``path::function`` ids whose summed durations in ``log`` reach ``threshold`` seconds, sorted."""
    seconds: Counter[str] = Counter()
    for line in log.splitlines():
        if match := _LINE.match(line):
            seconds[match.group(3).split("[")[0]] += float(match.group(1))
    return sorted(name for name, total in seconds.items() if total >= threshold)


def main() -> None:
    """Print the list for the log named on the command line."""
    names = slow_functions(Path(sys.argv[1]).read_text(encoding="utf-8"))
    sys.stdout.write(_HEADER + "".join(f"{name}\n" for name in names))


if __name__ == "__main__":
    main()
