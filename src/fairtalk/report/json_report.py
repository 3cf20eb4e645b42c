"""``results.json``: ``AuditResult.to_dict()`` as strict JSON (NaN and infinities become null)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fairtalk.files import write_text_atomic
from fairtalk.results import AuditResult

__all__ = ["jsonable", "render_json", "write_json"]


def jsonable(value: Any) -> Any:
    """A copy of ``value`` that strict JSON accepts: non-finite floats -> None, tuples -> lists.

    NumPy scalars and arrays (``.item()`` / ``.tolist()``) and paths are converted too;
    anything else unknown becomes its ``str``.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=str)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist"):  # numpy arrays and scalars, without importing numpy here
        return jsonable(value.tolist())
    return str(value)


def render_json(result: AuditResult) -> str:
    """The ``results.json`` text: strict JSON, indented, keys in schema order."""
    return json.dumps(jsonable(result.to_dict()), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(result: AuditResult, path: str | os.PathLike) -> Path:
    """Write ``results.json`` to ``path`` and return it."""
    path = Path(path)
    return write_text_atomic(path, render_json(result))
