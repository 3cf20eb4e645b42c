"""``results.json``: ``AuditResult.to_dict()`` as strict JSON (NaN and infinities become null)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from fairtalk.files import write_text_atomic
from fairtalk.jsonl import jsonable
from fairtalk.results import AuditResult

__all__ = ["jsonable", "render_json", "write_json"]


def render_json(result: AuditResult) -> str:
    """The ``results.json`` text: strict JSON, indented, keys in schema order."""
    return json.dumps(jsonable(result.to_dict()), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(result: AuditResult, path: str | os.PathLike) -> Path:
    """Write ``results.json`` to ``path`` and return it."""
    path = Path(path)
    return write_text_atomic(path, render_json(result))
