"""The version every result file carries, and how an error message names a JSON value; imported by the reader and the file models alike."""

from __future__ import annotations

import math

from fairtalk.records import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "describe"]


def describe(value: object) -> str:
    """A JSON value as an error message names it: ``a list``, ``the string 'abc'``, ``NaN``, ``-0.5``."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return f"the string {value[:40]!r}" + ("..." if len(value) > 40 else "")
    if isinstance(value, list | tuple):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
