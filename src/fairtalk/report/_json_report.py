"""``results.json``: ``AuditResult.to_json()``, its ``to_dict()`` as strict JSON (NaN and infinities become null)."""

from __future__ import annotations

import os
from pathlib import Path

from fairtalk.results import AuditResult

__all__ = ["render_json", "write_json"]


def render_json(result: AuditResult) -> str:
    """The ``results.json`` text: strict JSON, indented, keys in schema order (``result.to_json()``)."""
    return result.to_json()


def write_json(result: AuditResult, path: str | os.PathLike[str]) -> Path:
    """Write ``results.json`` to ``path`` (``result.write(path)``) and return it."""
    return result.write(path)
