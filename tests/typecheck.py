"""Type-check a user's snippet against fairtalk with mypy, as fast as the check allows (shared by the typing tests).

mypy follows the snippet into every ``fairtalk`` module it imports, so a public signature is checked as a user's
type checker sees it. It reads no third-party package (torch, transformers, ray, mlflow: over 7,000 modules, more
than a minute of CPU): those names become ``Any``, which can only hide errors in the snippet's other lines, never
add one, nor change what mypy makes of fairtalk's own signatures. Typeshed's stubs (the standard library, numpy's
``.pyi``) are still read. The snippet itself is checked with ``strict``, as ``make lint`` checks ``src/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_CONFIG = """\
[mypy]
strict = True
no_error_summary = True
follow_imports = skip

[mypy-fairtalk,fairtalk.*]
follow_imports = silent
"""


def type_errors(source: str, tmp_path: Path) -> tuple[list[str], str]:
    """Check ``source`` (a module's text) with mypy; return its ``error:`` lines and the whole output.

    Skips when mypy is not installed. ``fairtalk`` modules are read with ``follow_imports = silent``: their own
    errors are ``make lint``'s business, not the snippet's.
    """
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(source, encoding="utf-8")
    config = tmp_path / "mypy.ini"
    config.write_text(_CONFIG, encoding="utf-8")
    out, err, _ = api.run([str(snippet), "--config-file", str(config), "--cache-dir", str(tmp_path / "mypy-cache")])
    assert not err, err  # a crash or a bad flag, not a type error
    return [line for line in out.splitlines() if ": error:" in line], out
