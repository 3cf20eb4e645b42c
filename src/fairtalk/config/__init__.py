"""The options, declared once: :class:`ScoreOptions` (scoring and inference) and :class:`AuditConfig` (the whole audit).

``_score_options.py`` and ``_audit_config.py`` hold the two frozen option values, validated once
where they are built; ``_choices.py`` the choices the inference options take; ``_file.py`` reads
an options file (TOML or YAML) within bounds. Nothing below validates an option again.
"""

from __future__ import annotations

from fairtalk.config._audit_config import (
    DEFAULT_AXES,
    DEFAULT_CORPUS,
    DEFAULT_N_PAIRS,
    AuditConfig,
    AuditOverrides,
    RunOverrides,
)
from fairtalk.config._choices import BINARY_TESTS, CORRECTION_SCOPES, COUNT_TESTS
from fairtalk.config._schema import field_info, option_default, option_help
from fairtalk.config._score_options import CORRECTIONS, JUDGE_PREFIX, ScoreOptions, ScoreOverrides, keyword_options

__all__ = [
    "RunOverrides",
    "field_info",
    "option_default",
    "option_help",
    "AuditConfig",
    "AuditOverrides",
    "BINARY_TESTS",
    "CORRECTIONS",
    "CORRECTION_SCOPES",
    "COUNT_TESTS",
    "DEFAULT_AXES",
    "DEFAULT_CORPUS",
    "DEFAULT_N_PAIRS",
    "JUDGE_PREFIX",
    "ScoreOptions",
    "ScoreOverrides",
    "keyword_options",
]
