"""The options, declared once: :class:`ScoreOptions` (scoring and inference) and :class:`AuditConfig` (the whole audit).

``_score_options.py`` and ``_audit_config.py`` hold the two frozen option values, validated once
where they are built (with the schema of :mod:`fairtalk._schema`, a base module that
``prompts/`` and ``models/`` use too); ``_choices.py`` the choices the inference options take;
``_file.py`` reads an options file (TOML or YAML) within bounds. Nothing below validates an
option again.

One typed schema, nested by stage. :class:`AuditConfig` holds its options flat, as they are
given (``audit(n_pairs=..., alpha=...)``, a config file's keys and ``[score]`` table, the CLI's
flags) and recorded (``to_dict()``, ``run.json``'s ``config``); each stage receives only its
own frozen sub-config (``_stages.py``), read off the validated config:

- ``config.pairs``, :class:`PairsOptions`: corpus, split (the one read), turns, n_pairs, mixed,
  balance, seed;
- ``config.generation``, :class:`GenerationOptions`: model, model_args, model_version,
  batch_size, engine, max_errors, max_consecutive_failures, store, settings, seed;
- ``config.inference``, :class:`InferenceOptions`: scoring and inference, ``score`` (the
  :class:`ScoreOptions`, which ``score()`` takes alone), correction_scope, similarity, by_turn;
- ``config.sequential``, :class:`SequentialOptions`: until_decided, n_pairs, max_pairs, looks,
  spending (and the alpha and correction it spends and names);
- ``config.output``, :class:`OutputOptions`: out_dir.

Functions in ``run/`` that wire the stages together take the whole config; the stages they call
(the pairs, generation, scoring, correction and sequential steps) take their sub-config.
"""

from __future__ import annotations

from fairtalk._schema import field_info, option_default, option_help, options_schema
from fairtalk.config._audit_config import (
    DEFAULT_AXES,
    DEFAULT_CORPUS,
    DEFAULT_N_PAIRS,
    AuditConfig,
    AuditOverrides,
    RunOverrides,
)
from fairtalk.config._choices import BINARY_TESTS, CORRECTION_SCOPES, COUNT_TESTS
from fairtalk.config._score_options import (
    CORRECTIONS,
    JUDGE_PREFIX,
    ScoreOptions,
    ScoreOverrides,
    file_named,
    keyword_options,
)
from fairtalk.config._stages import GenerationOptions, InferenceOptions, OutputOptions, PairsOptions, SequentialOptions

__all__ = [
    "RunOverrides",
    "field_info",
    "option_default",
    "option_help",
    "options_schema",
    "AuditConfig",
    "AuditOverrides",
    "BINARY_TESTS",
    "CORRECTIONS",
    "CORRECTION_SCOPES",
    "COUNT_TESTS",
    "DEFAULT_AXES",
    "DEFAULT_CORPUS",
    "DEFAULT_N_PAIRS",
    "GenerationOptions",
    "InferenceOptions",
    "JUDGE_PREFIX",
    "OutputOptions",
    "PairsOptions",
    "ScoreOptions",
    "ScoreOverrides",
    "SequentialOptions",
    "file_named",
    "keyword_options",
]
