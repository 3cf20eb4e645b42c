"""The decoding line of every report header: the settings the model was actually sent (greedy: no temperature)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fairtalk.jsonl import jsonable
from fairtalk.results import AuditResult

__all__ = ["decoding_text", "result_decoding"]


def decoding_text(settings: Mapping[str, Any] | None) -> str | None:
    """The settings as sent, as canonical JSON (unset knobs are null: greedy has no temperature); None without settings.

    Examples
    --------
    >>> decoding_text({"max_new_tokens": 40, "do_sample": False, "temperature": None})
    '{"do_sample": false, "max_new_tokens": 40, "temperature": null}'
    """
    if settings is None:
        return None
    return json.dumps(jsonable(dict(settings)), sort_keys=True)


def result_decoding(result: AuditResult) -> str | None:
    """The decoding line of one axis' result: its manifest's ``audit.decoding`` (None when the audit did not generate, as with ``fairtalk score``)."""
    audit = result.manifest.get("audit") if isinstance(result.manifest, Mapping) else None
    settings = audit.get("decoding") if isinstance(audit, Mapping) else None
    return decoding_text(settings) if isinstance(settings, Mapping) else None
