"""The manifest of a scored axis: versions, hashes, thresholds and seeds, what it takes to trace and reproduce a result."""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fairtalk._jsonl import jsonable
from fairtalk._responses import ResponseSet
from fairtalk.config import ScoreOptions
from fairtalk.inference import METHODS
from fairtalk.lexicons import Lexicon, lexicon_record
from fairtalk.measures import AnyMeasure

__all__ = ["measure_settings", "score_manifest"]


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def measure_settings(o: ScoreOptions) -> dict[str, object]:
    """The manifest's ``options`` entry: the settings the measures and a judge were built with (in this order)."""
    return {
        "distinct": o.distinct,
        "offense": o.offense,
        "offense_threshold": o.offense_threshold,
        "sentiment_threshold": o.sentiment_threshold,
        "judge_rubric": o.judge_rubric,
        "judge_scale": o.judge_scale,
    }


def score_manifest(
    lexicon: Lexicon, measures: Sequence[AnyMeasure], rs: ResponseSet, *, options: Mapping[str, object], **settings: object
) -> dict[str, Any]:
    """Versions, hashes, thresholds and seeds: what it takes to trace and reproduce a result."""
    from fairtalk import __version__

    manifest: dict[str, Any] = jsonable(
        {
            "fairtalk_version": __version__,
            "python": platform.python_version(),
            "libraries": {name: _package_version(name) for name in ("numpy", "scipy", "statsmodels")},
            "lexicon": lexicon_record(lexicon),  # a custom lexicon's copy with it: a reader opens no path it names
            "measures": [
                {"name": m.name, "keys": m.keys, "kind": m.kind, "version": m.version, "config": m.config} for m in measures
            ],
            "options": options,
            **settings,
            "methods": METHODS,
            "input": {"sources": [{"path": path, "sha256": sha} for path, sha in rs.sources], "summary": rs.summary},
        }
    )
    return manifest
