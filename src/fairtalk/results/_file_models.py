"""The shape of ``results.json`` and ``run.json`` as pydantic models (the records declare what is written): what readers check and the docs publish.

The models of ``results.json`` and ``run.json`` name every key the records write
(:class:`~fairtalk.results.AuditResult`, its measures, scorer check, divergent pairs, by-turn
section and :class:`~fairtalk.results.Provenance` with its sections; :class:`~fairtalk.results.AuditRun`
with its axes and generation counts), so that the published schema documents each one
(``tests/test_file_models_drift.py`` fails when a record writes a key its model lacks, or a model
names a key no record writes): their JSON types, which may be null, and the bounds a number must
keep where one applies (a probability in [0, 1], a margin >= 0, finite numbers: a file fairtalk
writes holds null where a value is NaN). :class:`PlanningFile` and :class:`PromptsFile` describe
only what ``plan --results`` and ``compare`` read of theirs. Keys they do not name are allowed (a
report's extra entries, a hand-added note), except inside records that are rebuilt whole from
their keys (``ppi``, a divergent pair). Validation is strict: ``"5"`` is no integer and
``true`` no number. :func:`validate` turns the first error into one line naming the field;
:func:`json_schema` is what ``tools/write_schema.py`` publishes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fairtalk.errors import InputError
from fairtalk.results._version import SCHEMA_VERSION, describe

__all__ = ["AuditResultFile", "PlanningFile", "RunFile", "json_schema", "validate"]

Number = Annotated[float, Field(allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Level = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
Interval = Annotated[list[Number | None], Field(min_length=2, max_length=2)]
AuditVerdict = Literal["difference detected", "equivalent", "inconclusive"]
Version = Annotated[
    int,
    Field(
        ge=0,
        le=SCHEMA_VERSION,
        description=f"The result file format's version: {SCHEMA_VERSION} (absent in files written before it existed, "
        "read as version 0).",
    ),
]


#: A measure's ``identical_share``, as the schema describes it.
_IDENTICAL_SHARE = (
    "a count key's share of units (pairs, or dialogues where the audit clusters) that could differ below which the "
    "identical-answers rule bounds it: its margin over the range of its scores (capped at 1); null for other kinds, "
    "without a margin, and in files written before it was recorded"
)


class _Open(BaseModel):
    """A JSON object whose other keys are allowed."""

    model_config = ConfigDict(strict=True, extra="allow")


class _Closed(BaseModel):
    """A JSON object rebuilt whole from its keys: no other key is allowed."""

    model_config = ConfigDict(strict=True, extra="forbid")


class Masked(_Closed):
    """The measure re-scored with the group words masked."""

    a: Number | None
    b: Number | None
    remaining: Number | None


class PPI(_Closed):
    """The gap corrected by human labels (prediction-powered inference)."""

    estimate: Number
    ci95: Interval
    p: Probability
    se: NonNegative
    n_labels: Count
    n_items: Count
    lam: Number
    scorer_estimate: Number
    labels_estimate: Number
    labels_ci95: Interval
    effective_labels: NonNegative | None = Field(
        description="How many labels alone would give as narrow an interval; null when too few labelled pairs "
        "disagree with the scorer to say."
    )
    n_disagreements: Count | None = Field(default=None, description="Labelled units on which label and scorer disagree.")
    method: str | None = Field(default=None, description="How the interval was made.")
    se_labelled: NonNegative | None = Field(default=None, description="The labelled pairs' share of se (more labels shrink it).")
    se_scorer: NonNegative | None = Field(
        default=None, description="The scorer-on-every-pair share of se (labels do not shrink it)."
    )


class Measure(_Open):
    """One result key of an audit: side means, tests, interval, equivalence, verdict."""

    kind: str
    a: Number | None
    b: Number | None
    difference: Number | None
    difference_abs: Number | None = Field(default=None, description="A - B (null when a side has no value).")
    z: Number | None
    p: Probability | None
    p_paired: Probability | None
    paired_test: str
    p_adjusted: Probability | None
    ci95: Interval | None = None
    ci_method: str = ""
    estimate: Number | None = None
    estimate_name: str = "mean difference"
    effect_size: Number | None
    effect_size_name: str
    higher_is_better: bool | None = None
    primary: bool = True
    verdict: AuditVerdict = "inconclusive"
    equivalence_margin: NonNegative | None = None
    p_equivalence: Probability | None = None
    equivalent: bool | None = None
    equivalence_test: str = ""
    equivalence_interval: Interval | None = None
    equivalence_bound: Probability | None = None
    identical_share: Probability | None = Field(default=None, description=_IDENTICAL_SHARE)
    mde: NonNegative | None = None
    gate_pairs: Count | None = None
    n_clusters: Count | None = None
    design_effect: NonNegative | None = None
    sd_difference: NonNegative | None = None
    not_tested: str | None = None
    notes: list[str] | None = None
    masked: Masked | None = None
    ppi: PPI | None = None


class ScorerCheck(_Open):
    """A scorer's own group gap on neutral probe sentences."""

    n_probes: Count
    a: Number | None
    b: Number | None
    gap: Number | None
    ci95: Interval | None = None
    p: Probability | None
    margin: NonNegative | None
    flagged: bool
    note: str | None


class JudgeAnswer(_Open):
    """A judge's raw answer about one side of one pair."""

    judge: str
    pair_id: str
    side: str
    response: str
    answer: str | None = None
    value: str | Number
    error: str | None = None


class DivergentPair(_Closed):
    """A pair whose two responses differ most on one measure."""

    pair_id: str
    measure: str
    context_a: str
    context_b: str
    response_a: str
    response_b: str
    score_a: Number | None
    score_b: Number | None
    judged: list[JudgeAnswer] = []


class TurnGap(_Open):
    """One key's gap in one by-turn bucket."""

    key: str
    kind: str
    a: Number | None
    b: Number | None
    estimate: Number | None
    ci95: Interval | None = None
    p: Probability | None
    p_adjusted: Probability | None
    paired_test: str
    ci_method: str
    verdict: AuditVerdict = "inconclusive"
    notes: list[str] | None = None


class TurnBucket(_Open):
    """The pairs whose identity appeared ``turns_since`` turns before the answered turn."""

    turns_since: Count
    n_pairs: Count
    n_clusters: Count | None = None
    tested: bool | None = Field(default=None, description="Whether the bucket had enough units to be tested.")
    gaps: list[TurnGap] | None = None
    not_tested: str | None = None


class ByTurn(_Open):
    """Each key's gap by the turns since the identity appeared."""

    keys: list[str] | None = None
    buckets: list[TurnBucket] | None = None
    min_units: Count
    alpha: Level = 0.05
    correction: str = "holm"
    family_size: Count = 0
    clustered: bool = False
    n_single_turn: Count = 0
    notes: list[str] | None = None


class LexiconRecord(_Open):
    """The word list the audit swapped with: a built-in one by name, a user's file (``custom``) with a copy of it.

    Readers never open ``source``: a custom lexicon is rebuilt from ``text`` (checked against
    ``text_sha256``).
    """

    source: str | None = None
    variant: str | None = None
    axis: str | None = None
    groups: list[str] | None = None
    sha256: str | None = None
    n_pairs: Count | None = Field(default=None, description="The word pairs of the lexicon.")
    attributes: list[str] | None = None
    text: str | None = Field(None, description="A custom lexicon, in the lexicon file format (canonical, not the file's bytes).")
    text_sha256: str | None = Field(None, description="The sha256 of text, UTF-8 encoded.")


class ManifestMeasure(_Open):
    """A measure the audit ran: its name, kind and result keys."""

    name: str
    kind: str | None = None
    keys: list[str] | None = None
    version: str | None = None
    config: dict[str, Any] | None = None


class InputSource(_Open):
    """A responses file the result was scored from: its path as given and the sha256 of its bytes."""

    path: str | None = None
    sha256: str | None = None


class InputRecord(_Open):
    """What the audit read: the responses files (none when the responses came from memory) and the reader's counts."""

    sources: list[InputSource] | None = None
    summary: dict[str, Any] | None = None


class ScoringOptions(_Open):
    """The measure settings the audit scored with, from which a comparison rebuilds its measures."""

    distinct: Literal["paper", "standard"] | None = None
    offense: str | None = None
    offense_threshold: Probability | None = None
    sentiment_threshold: Probability | None = None
    judge_rubric: str | None = None
    judge_scale: list[Number] | None = Field(default=None, description="The judge's score scale: low, high.")


class ScoringEngineRecord(_Open):
    """Where the responses were scored: ``local`` (this process) or ``ray`` (with its tasks, batches and batch size)."""

    name: str | None = None
    distinct_responses: Count | None = None
    tasks_at_once: Count | None = None
    batches: Count | None = None
    score_batch: Count | None = None


class GoldRecord(_Open):
    """The human labels that corrected the gaps: their file, the pairs labelled and the keys corrected."""

    path: str | None = None
    n_labelled_pairs: Count | None = None
    keys: list[str] | None = None


class TruncationRecord(_Open):
    """The answers cut off at the token limit (per side ``a``/``b``), when the model reported why each answer ended."""

    reasons_reported: bool | None = None
    exclude_truncated: bool | None = None
    n_pairs: Count | None = None
    n_cut: dict[str, Count] | None = None
    share_cut: dict[str, Probability | None] | None = None
    warn_share: Probability | None = None
    warned: bool | None = None
    n_pairs_left_out: Count | None = None


class SequentialRecord(_Open):
    """How an ``--until-decided`` axis' looks went: the design, the looks run, the last look's levels, why it stopped."""

    design: str | None = None
    spending: str | None = None
    correction: str | None = None
    max_pairs: Count | None = None
    n_pairs_available: Count | None = None
    planned_looks: list[Count] | None = None
    fractions: list[Number] | None = None
    looks: Count | None = None
    n_pairs: Count | None = None
    z_boundaries: list[Number | None] | None = Field(default=None, description="Each look's critical z (null: infinite).")
    nominal_alpha: Number | None = None
    nominal_alpha_equivalence: Number | None = None
    stopped: str | None = None
    decided_at: dict[str, Count] | None = None
    undecided: list[str] | None = None
    undecided_why: dict[str, str] | None = Field(
        default=None, description="Why each undecided key held the run back to its budget."
    )


class ServedRecord(_Open):
    """The models a server said answered the responses (``openai:``): the name asked for, answers per served name, unknown."""

    requested: str | None = None
    counts: dict[str, Count] | None = None
    n_unknown: Count | None = None


class AuditRecord(_Open):
    """The audit that generated the responses: run id, corpus, model, decoding, seed, coverage (and its looks)."""

    run_id: str | None = None
    corpus: str | None = None
    split: str | None = None
    model: str | None = None
    decoding: dict[str, Any] | None = None
    seed: int | None = None
    n_pairs_requested: Count | None = None
    mixed: str | None = None
    balance: bool | None = None
    coverage: dict[str, Any] | None = None
    served: ServedRecord | None = None
    sequential: SequentialRecord | None = None


class Manifest(_Open):
    """Versions, hashes, thresholds and seeds: every key :class:`~fairtalk.results.Provenance` writes."""

    fairtalk_version: str | None = None
    python: str | None = None
    libraries: dict[str, str | None] | None = None
    lexicon: LexiconRecord | None = None
    measures: list[ManifestMeasure] | None = None
    options: ScoringOptions | None = None
    seed: int | None = None
    alpha: Level | None = None
    correction: str | None = None
    n_resamples: Count | None = None
    n_permutations: Count | None = None
    mask_groups: bool | None = None
    drop_empty: bool | None = None
    exclude_truncated: bool | None = None
    binary_test: str | None = None
    count_test: str | None = None
    clustered: bool | None = None
    power: Level | None = None
    margins: dict[str, NonNegative] | None = None
    primary: list[str] | None = None
    methods: dict[str, Any] | None = None
    input: InputRecord | None = None
    scoring_engine: ScoringEngineRecord | None = None
    gold: GoldRecord | None = None
    truncation: TruncationRecord | None = None
    audit: AuditRecord | None = None


class AuditResultFile(_Open):
    """``results.json`` of ``fairtalk audit`` (one per axis folder) or ``fairtalk score``: ``AuditResult.to_dict()``."""

    model_config = ConfigDict(strict=True, extra="allow", title="fairtalk results.json")

    schema_version: Version = 0
    axis: str
    groups: Annotated[list[str], Field(min_length=2, max_length=2)]
    n_pairs: Count
    n_clusters: Count | None = None
    corpus_dialogue_sizes: list[Annotated[list[Count], Field(min_length=2, max_length=2)]] | None = Field(
        default=None, description="the corpus' dialogues by size: [pairs in a dialogue, dialogues of that size]"
    )
    corpus_differing_pairs: Count | None = Field(
        default=None,
        description="the pairs whose two answers differ (those a corpus measure's permutation test swaps); absent "
        "where no corpus measure ran",
    )
    n_distinct_responses: Count | None = None
    alpha: Level = 0.05
    correction: str = "holm"
    correction_scope: str = "axis"
    family_size: Count = 0
    warnings: list[str] | None = None
    scorer_check: dict[str, ScorerCheck] | None = None
    measures: dict[str, Measure]
    input_summary: dict[str, Any] | None = None
    lost_by_dialogue: list[Annotated[list[Count], Field(min_length=5, max_length=5)]] | None = Field(
        default=None,
        description="where the audit counts dialogues and a pair was lost: per dialogue alike, [pairs asked, lost on "
        "side a only, side b only, both, dialogues]",
    )
    empty_by_dialogue: list[Annotated[list[Count], Field(min_length=5, max_length=5)]] | None = Field(
        default=None,
        description="where the audit counts dialogues and a pair measured has an empty answer: per dialogue alike, "
        "[pairs measured, empty on side a only, side b only, both, dialogues]",
    )
    divergent_pairs: list[DivergentPair] | None = None
    by_turn: ByTurn | None = None
    manifest: Manifest | None = None


class PlannedMeasure(_Open):
    """What ``fairtalk plan --results`` reads of one measure: its spread, margin, design effect and labelled estimate."""

    kind: str | None = None
    primary: bool = True
    sd_difference: NonNegative | None = None
    ci95: Interval | None = None
    equivalence_margin: NonNegative | None = None
    identical_share: Probability | None = Field(default=None, description=_IDENTICAL_SHARE)
    design_effect: NonNegative | None = None
    mde: NonNegative | None = None
    ppi: PPI | None = None


class PlanningFile(_Open):
    """What ``fairtalk plan --results`` reads of an earlier audit's ``results.json`` (any other field may be absent)."""

    schema_version: Version = 0
    n_pairs: Count | None = None
    family_size: Count | None = None
    alpha: Level | None = None
    measures: dict[str, PlannedMeasure]


class PromptGap(_Open):
    """One group pair's regard gap in ``fairtalk prompts analyze``'s ``results.json``: what ``compare`` reads of it."""

    a: str
    b: str
    all: Number | None
    se: NonNegative | None = None
    ci95: Interval | None = None


class PromptRegard(_Open):
    """One group's mean regard."""

    mean: Number | None


class PromptsFile(_Open):
    """What ``fairtalk compare`` reads of a ``fairtalk prompts analyze`` ``results.json``: the gaps and the groups' regard."""

    schema_version: Version = 0
    method: str
    regard: dict[str, PromptRegard]
    gaps: dict[str, PromptGap]

    @model_validator(mode="after")
    def _groups_have_regard(self) -> PromptsFile:
        for name, gap in self.gaps.items():
            for group in (gap.a, gap.b):
                if group not in self.regard:
                    raise ValueError(_MSG_NO_REGARD.format(pair=name, group=group))
        return self


class Generation(_Open):
    """How one axis' responses were obtained."""

    model: str
    settings: dict[str, Any]
    n_items: Count
    n_cached: Count
    n_generated: Count
    n_errors: Count
    n_pairs: Count
    n_pairs_with_errors: Count
    seconds: Number | None = None
    error_examples: list[str] | None = None
    error_counts: dict[str, Count] | None = None
    n_unencodable: Count | None = None
    max_in_flight: Count | None = None
    max_concurrency: Count | None = None
    n_retries: Count | None = None
    retry_budget: Count | None = None
    n_retries_refused: Count | None = None
    n_retries_waited: Count | None = None
    tuning: dict[str, Any] | None = None
    served_models: dict[str, Count] | None = None
    n_served_unknown: Count | None = None


class RunAxis(_Open):
    """One axis of a run: its folder, result, coverage and generation counts."""

    axis: str
    folder: str | None = None
    result: AuditResultFile
    coverage: dict[str, Any]
    generation: Generation
    timings: dict[str, Number] | None = None
    similarity: dict[str, Any] | None = None
    pairs_check: dict[str, Any] | None = None
    files: dict[str, str] | None = None


class RunFile(_Open):
    """``run.json`` of ``fairtalk audit``: the run, and per axis its result and files (``AuditRun.to_dict()``)."""

    model_config = ConfigDict(strict=True, extra="allow", title="fairtalk run.json")

    schema_version: Version = 0
    generator: str | None = None
    run_id: str = ""
    model: str
    model_target: str | None = None
    corpus: str
    split: str
    seed: int
    settings: dict[str, Any] | None = None
    store: str | None = None
    n_cached: Count | None = None
    n_generated: Count | None = None
    n_errors: Count | None = None
    timings: dict[str, Number] | None = None
    config: dict[str, Any] | None = None
    axes: dict[str, RunAxis]


_MODELS: dict[str, type[BaseModel]] = {
    "audit": AuditResultFile,
    "run": RunFile,
    "planning": PlanningFile,
    "prompts": PromptsFile,
}
_MSG_NO_REGARD = "field 'regard' must hold group {group!r} of the gap {pair!r}"

#: What a field must be, by pydantic's error type.
_EXPECTED = {
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "list_type": "must be a list",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "missing": "is missing",
    "extra_forbidden": "is not a field fairtalk writes here",
    "literal_error": "must be one of {expected}",
    "too_short": "must have {min_length} items",
    "too_long": "must have {max_length} items",
    "greater_than_equal": "must be >= {ge:g}",
    "greater_than": "must be > {gt:g}",
    "less_than_equal": "must be <= {le:g}",
    "less_than": "must be < {lt:g}",
}


def _field(loc: tuple[int | str, ...]) -> str:
    """A pydantic location as a dotted field name (``measures.offense_rate.ci95``); a key's control characters escaped."""
    return ".".join(repr(str(part)[:80])[1:-1] for part in loc)


def _message(error: Any) -> str:
    """One pydantic error as ``field 'x' must be ..., got ...``."""
    kind, context = error["type"], error.get("ctx") or {}
    if kind == "value_error" and not error["loc"]:  # a check of the whole file: its message names the field
        return str(context.get("error") or error["msg"])
    template = _EXPECTED.get(kind)
    rule = template.format(**context) if template else str(error["msg"]).lower()
    got = "" if kind == "missing" else f", got {describe(error['input'])}"
    return f"field {_field(tuple(error['loc']))!r} {rule}{got}"


def validate(data: dict[str, Any], kind: str, path: str) -> None:
    """Check ``data`` against the model of ``kind``; an InputError naming ``path`` and the first field that does not fit."""
    try:
        _MODELS[kind].model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        # of a value that fits no branch of a union (a number or null), name the branch that is not null
        first = next((e for e in errors if e["type"] != "none_required"), errors[0])
        raise InputError(_message(first), path=path) from None


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a result file kind (``audit``: ``results.json``; ``run``: ``run.json``), as published in the docs."""
    schema = _MODELS[kind].model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
