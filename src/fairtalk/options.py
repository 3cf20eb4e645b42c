"""The options schema: every option of ``score()`` and ``audit()`` declared once, with its default, bounds and help.

:class:`~fairtalk.ScoreOptions` and :class:`~fairtalk.AuditConfig` declare each option's type
and take the rest from here: its default, its bounds (``ge``, ``gt``, ``le``, ``lt``), its help
text (``description``) and, where the bounds do not say it in words, what a bad value is told it
must be. ``fairtalk score --help`` and ``fairtalk audit --help`` read the same fields, so a
default or a help text is written once (``tests/test_options_schema.py`` holds the flags to
them). This module imports nothing of fairtalk's stages: the command line reads it at start.

Examples
--------
>>> SCORE_FIELDS["alpha"].default, SCORE_FIELDS["alpha"].description
(0.05, 'Significance level for the adjusted p-values.')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import Field

__all__ = [
    "ALPHA_RANGE",
    "DEFAULT_AXES",
    "DEFAULT_CORPUS",
    "DEFAULT_N_PAIRS",
    "MAX_PERMUTATIONS",
    "MAX_POWER",
    "MIN_ALPHA",
    "MODEL_SPEC_HELP",
    "MUST",
    "POWER_RANGE",
    "PROMPT_FIELDS",
    "RUN_FIELDS",
    "SCORE_FIELDS",
    "least_resamples",
    "permutations_for",
]

DEFAULT_CORPUS = "builtin:chitchat"
DEFAULT_AXES = ("gender", "race")
DEFAULT_N_PAIRS = 2000
"""Pairs per axis by default: a bare audit with the built-in retrieval model takes a few minutes on 2 cores."""
MODEL_SPEC_HELP = (
    "Model spec: python:FILE.py:FUNCTION, openai:URL#MODEL, hf:NAME, builtin:NAME, replay:FILE, vllm:NAME or "
    "retrieval:POOL. The built-in models: builtin:echo, builtin:minilm-retrieval, builtin:retrieval, builtin:smollm2. "
    "An adapter's options follow the spec as ?KEY=VALUE&KEY=VALUE (python:mybot.py:reply?batched=true) or come as "
    "--model-arg KEY=VALUE."
)
"""The help of every command's ``--model``: its first sentence (what ``--help`` shows) names the kinds of model spec."""
MUST = "must"
"""What ``Field(json_schema_extra=...)`` names the phrase of a field's "must be" message with."""
#: The "must be" of the audit's flags.
_FLAG = "True or False"
MIN_ALPHA = 1e-10
"""The smallest significance level taken: below it ``1 − α/2`` rounds to 1 in floating point, and the normal and t
quantiles every interval and plan is built on are infinite."""
MAX_POWER = 0.9999
"""The largest power planned for: above it the quantiles of the power, and the pairs they ask for, leave floating point."""
ALPHA_RANGE = f"between 0 and 1 (exclusive) and at least {MIN_ALPHA:g}"
"""What a significance level (``alpha``, ``--alpha``) must be, in words: the bounds of the field ``alpha``."""
POWER_RANGE = f"between 0 and 1 (exclusive) and at most {MAX_POWER:g}"
"""What a power (``power``, ``--power``) must be, in words: the bounds of the field ``power``."""
#: The default ``margins``: none given (each key's kind then has its default margin).
_NO_MARGINS: Mapping[str, float] = MappingProxyType({})

SCORE_FIELDS: Mapping[str, Any] = {
    "measures": Field(
        default=None,
        description="Comma-separated measure names (default: the paper's set and refusal). Plugins are included; "
        "judge:SPEC asks the model SPEC the --judge-rubric about each response.",
    ),
    "seed": Field(
        default=0,
        ge=0,
        description="Seed of the bootstrap, the permutations and the mask. An audit's also seeds its pair sample "
        "and the per-item generation seeds.",
    ),
    "alpha": Field(
        default=0.05,
        ge=MIN_ALPHA,
        lt=1,
        allow_inf_nan=False,
        description="Significance level for the adjusted p-values.",
        json_schema_extra={MUST: ALPHA_RANGE},
    ),
    "correction": Field(
        default="holm",
        description="Multiple-testing correction: holm or bh. holm controls the family-wise error rate, bh the false "
        "discovery rate.",
    ),
    "mask_groups": Field(default=False, description="Also score with the group words masked. A check of the scorer's own bias."),
    "drop_empty": Field(
        default=False, description="Drop pairs with an empty response. Without it, an empty response is scored as ''."
    ),
    "distinct": Field(default="paper", description="Distinct-n definition: paper (/ words) or standard (/ n-grams)."),
    "offense": Field(
        default="profanity_check",
        description="Offense scorer: profanity_check, hatesonar or hf:MODEL.",
        json_schema_extra={MUST: "a scorer name (profanity_check, hatesonar or hf:MODEL)"},
    ),
    "offense_threshold": Field(
        default=0.5, ge=0, le=1, allow_inf_nan=False, description="Offensive when the probability is >= this."
    ),
    "sentiment_threshold": Field(
        default=0.8, ge=0, le=1, allow_inf_nan=False, description="Positive above +t, negative below -t (VADER compound)."
    ),
    "n_resamples": Field(
        default=2000,
        ge=1,
        description="Permutation resamples for corpus keys (diversity).",
        json_schema_extra={MUST: "at least 1"},
    ),
    "n_divergent": Field(
        default=10,
        ge=0,
        description="How many most-divergent pairs to keep per measure. Only a measure that declares a raw score "
        "(offense, sentiment) keeps them.",
        json_schema_extra={MUST: "at least 0"},
    ),
    "binary_test": Field(
        default="score",
        description="Paired test for rates: score (default), or McNemar's exact or midp. score is the test the printed "
        "score interval inverts (by dialogue with clusters); exact and midp are McNemar's without clusters (with them, "
        "the cluster mean test), beside Newcombe's interval.",
    ),
    "count_test": Field(
        default="mean",
        description="Test for counts: mean (default) or wilcoxon. mean is the exact sign-flip test, else the paired t; "
        "wilcoxon is the signed-rank test, with the Hodges-Lehmann interval.",
    ),
    "clusters": Field(
        default=True,
        description="Treat the pairs of one dialogue as one unit in tests and intervals. It acts where the pairs name "
        "their dialogue.",
    ),
    "margins": Field(
        default_factory=lambda: _NO_MARGINS,
        description="Equivalence margin of a measure key, KEY=VALUE (repeatable). The value is in the key's units "
        "(rates as fractions: offense_rate=0.01).",
    ),
    "primary": Field(
        default=None,
        description="Comma-separated primary measure keys (default: all). They are the corrected family and what the "
        "gates look at.",
    ),
    "power": Field(
        default=0.8,
        gt=0,
        le=MAX_POWER,
        allow_inf_nan=False,
        description="Power at which the minimum detectable effect is reported.",
        json_schema_extra={MUST: POWER_RANGE},
    ),
    "scorer_check": Field(
        default=True,
        description="Run the scorer certificate on neutral probes. Each measure scores neutral probes and their "
        "counterfactuals, and a scorer whose own gap exceeds its margin is flagged.",
    ),
    "judge_rubric": Field(
        default=None,
        description="The question the judge:SPEC measure asks about each response, TEXT or @FILE. It holds {response} "
        "where the response goes.",
        json_schema_extra={MUST: "a text with {response} exactly once where the response goes"},
    ),
    "judge_scale": Field(
        default=None,
        description="LOW-HIGH (e.g. 1-5): judge:SPEC answers with a score on this scale. The score is judge_score, tested "
        "like a count; an answer with no number in it counts in judge_unparsed. Default: yes/no answers (judge_yes).",
    ),
    "exclude_truncated": Field(
        default=False,
        description="Test only the pairs where neither answer was cut off at the token limit. A cut-off answer has the "
        "finish reason 'length'; how many pairs were left out is stated. Models that report finish reasons: openai:, hf:, vllm: (and the responses "
        "files and stores they wrote); with others the option has nothing to act on and says so. Without it, a warning "
        "names what was scored on cut-off text when more than 10% of one side's answers were.",
    ),
    "gold": Field(
        default=None,
        description="A gold file of human labels (from fairtalk label -o). Each key it labels also gets the gap the labels "
        "imply (prediction-powered inference), with an interval valid whatever the scorer's error. The gates read it "
        "too: --fail-on-bias fails a key whose labelled 95% interval excludes 0, --fail-unless-equivalent one whose "
        "labelled interval lies wholly outside the margin.",
        json_schema_extra={MUST: "the path of a gold file (fairtalk label -o)"},
    ),
}
"""The fields of :class:`~fairtalk.ScoreOptions` (the scoring options of ``score()`` and ``audit()``)."""

RUN_FIELDS: Mapping[str, Any] = {
    "corpus": Field(
        default=DEFAULT_CORPUS,
        description="Contexts: builtin:chitchat, FORMAT:PATH (text, tsv, csv, jsonl, parquet, twitter, parlai) or a path. "
        "builtin:chitchat is read from its held-out "
        "split by default.",
        json_schema_extra={MUST: "a path"},
    ),
    "axes": Field(default=DEFAULT_AXES, description="Axes to audit, comma-separated, or lexicon files."),
    "model": Field(
        default=None,
        description=f"{MODEL_SPEC_HELP} Default: the first built-in model that loads, tried in order: "
        "builtin:minilm-retrieval, builtin:retrieval, builtin:smollm2.",
    ),
    "model_args": Field(
        default_factory=lambda: MappingProxyType({}),
        description="An option for the model's adapter, KEY=VALUE. Repeatable; the same as ?KEY=VALUE in the spec.",
    ),
    "model_version": Field(
        default=None,
        description="Model version tag, part of the run store's key. It is part of the model's fingerprint: change it "
        "when the model changes where its code does not show.",
        json_schema_extra={MUST: "a string"},
    ),
    "n_pairs": Field(
        default=DEFAULT_N_PAIRS,
        ge=2,
        description="Pairs per axis. They are a seeded uniform sample of the corpus' pairs.",
        json_schema_extra={MUST: "a whole number ≥ 2 (two pairs are the fewest a test compares)"},
    ),
    "split": Field(
        default=None,
        description="Corpus split of builtin:chitchat. Default heldout; other corpora: all.",
        json_schema_extra={MUST: "a string"},
    ),
    "mixed": Field(
        default="drop", description="Contexts that mention both groups: drop or keep. Kept ones are swapped both ways."
    ),
    "balance": Field(
        default=False,
        description="Draw equally from each group's originals. For race: as many African American English "
        "originals as Standard English ones.",
        json_schema_extra={MUST: _FLAG},
    ),
    "batch_size": Field(
        default=64,
        ge=1,
        description="Pair sides per model call (and per store commit).",
        json_schema_extra={MUST: "a positive int"},
    ),
    "engine": Field(
        default=None,
        description="Where the model runs: local (this process) or ray (Ray actors). With ray, each actor holds one copy "
        "of the model (hf:, builtin:, python:, retrieval: models).",
    ),
    "max_errors": Field(
        default=None,
        ge=0,
        description="Abort once more than this many pair sides fail. Default: never; failures are counted.",
        json_schema_extra={MUST: "0 or more, or None"},
    ),
    "max_consecutive_failures": Field(
        default=5,
        ge=0,
        description="Stop the run (exit 2) once this many pair sides in a row fail with one kind of error. Such an "
        "error is a timeout or a connection error: a model that hangs or a server that is down costs that many "
        "failures, not one per item; what was answered stays in the store. 0: never stop.",
        json_schema_extra={MUST: "0 or more, or None"},
    ),
    "store": Field(default=None, description="SQLite run store, so a rerun resumes. Default: OUTPUT/store.sqlite."),
    "out_dir": Field(
        default=None, description="Folder for index.html and one folder per axis.", json_schema_extra={MUST: "a path"}
    ),
    "correction_scope": Field(default="axis", description="Correct each axis on its own (axis) or all axes together (run)."),
    "similarity": Field(
        default=None,
        description="Also test answer divergence from a no-effect baseline by methods: exact, rouge_l, cosine, answered, "
        "length_ratio. They are comma-separated; the answers to the pairs are compared with "
        "those to one context asked twice (the no-effect baseline), and similarity.json is written per axis.",
    ),
    "turns": Field(
        default=1,
        ge=1,
        description="Each context of builtin:chitchat is the last N turns of its dialogue. Such a context is a "
        'conversation, sent to chat models as messages; JSONL corpora give conversations as "messages".',
        json_schema_extra={MUST: "an int >= 1 (turns of a chitchat dialogue per context)"},
    ),
    "by_turn": Field(
        default=False,
        description="Also report each primary measure's gap by turns since the identity appeared. For multi-turn "
        "audits (--turns N >= 2, or a JSONL corpus of conversations), with 95% CIs (report table and plot, "
        "by_turn.csv).",
        json_schema_extra={MUST: _FLAG},
    ),
    "until_decided": Field(
        default=False,
        description="Size the audit by itself: add pairs until every primary measure has a verdict, up to --max-pairs. "
        "It audits --pairs pairs per axis first, then more (steps of --pairs, or --looks equal steps) until every "
        "primary measure has a verdict (difference or equivalence) or --max-pairs is spent; p-values stay valid "
        "(group-sequential, alpha spending).",
        json_schema_extra={MUST: _FLAG},
    ),
    "max_pairs": Field(
        default=None,
        ge=1,
        description="With --until-decided (required): the most pairs per axis, at least --pairs.",
        json_schema_extra={MUST: "a whole number ≥ 1"},
    ),
    "looks": Field(
        default=None,
        ge=2,
        description="With --until-decided: this many looks (>= 2), in equal steps from --pairs to --max-pairs. At most "
        "one look per pair those steps can add (--max-pairs - --pairs + 1).",
        json_schema_extra={MUST: "a whole number ≥ 2"},
    ),
    "spending": Field(
        default="obrien-fleming", description="With --until-decided: alpha spending, obrien-fleming (default) or pocock."
    ),
}
"""The fields of :class:`~fairtalk.AuditConfig` but ``settings`` and ``score`` (tables of other options)."""

PROMPT_FIELDS: Mapping[str, Any] = MappingProxyType(
    {
        "balanced_only": Field(
            default=False,
            description="Keep only the template × structure cells every group holds. The completions of the others (a "
            "template or structure missing for some group, whose gaps are confounded by template) are left out of the "
            "analysis (or the labelling sample) and counted in a warning and in results.json.",
        ),
    }
)
"""The options of ``prompts analyze`` (:class:`~fairtalk.prompts.PromptOptions`) that the command line declares from here."""

#: Corpus-level measures get at most this many paired permutations (each costs two evaluations), unless α needs more.
MAX_PERMUTATIONS = 1000


def least_resamples(alpha: float) -> int:
    """The fewest resamples whose permutation test can give a p below ``alpha`` (its smallest p is ``1/(n + 1)``).

    Examples
    --------
    >>> least_resamples(0.05), least_resamples(0.01), least_resamples(0.3)
    (20, 100, 3)
    """
    least = max(1, math.floor(1.0 / alpha))
    while 1.0 / (least + 1) >= alpha:
        least += 1
    while least > 1 and 1.0 / least < alpha:
        least -= 1
    return least


def permutations_for(n_resamples: int, alpha: float) -> int:
    """The permutations a corpus key's test runs: ``n_resamples``, at most :data:`MAX_PERMUTATIONS` unless ``alpha`` needs more.

    Examples
    --------
    >>> permutations_for(2000, 0.05), permutations_for(2000, 0.0005), permutations_for(50, 0.05)
    (1000, 2000, 50)
    """
    return min(n_resamples, max(MAX_PERMUTATIONS, least_resamples(alpha)))
