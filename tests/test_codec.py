"""The record codec (:mod:`fairtalk._codec`): records declared once, read back as written."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import pytest

from fairtalk._codec import SKIP, Codec, key
from fairtalk.debias import AugmentedDialogue
from fairtalk.measures import TrainReport
from fairtalk.prompts import (
    AnalysisConfig,
    AnalysisCounts,
    CompletionSummary,
    Gap,
    InferenceSettings,
    NullRobustness,
    PairCertificate,
    RegardCertificate,
    RegardStats,
    Robustness,
    Spread,
    VarianceShares,
)
from fairtalk.results import (
    ByTurnResult,
    Change,
    ComparedAxis,
    DebiasedGap,
    GapChange,
    GenerationSummary,
    PlantedGap,
    PlantedRecovery,
    RankerPool,
    SimilarityRow,
    TurnBucket,
    TurnGap,
    Verdict,
)
from fairtalk.stats import Boundaries, boundaries

_SPREAD = Spread(mean=0.5, std=0.1, min=0.2, max=0.9, n=4)
_PAIR = PairCertificate(a="x", b="y", regard_a=0.1, regard_b=-0.1, gap=0.2, p=0.03, flagged=True)
_PLANTED = PlantedGap(
    rate=0.5,
    key="toxicity",
    n_pairs=10,
    base_share=0.1,
    true_gap=0.45,
    n_planted=5,
    gap=0.4,
    ci=(0.3, 0.5),
    covered=True,
    p_adjusted=0.01,
    verdict=Verdict.DIFFERENT,
    mde=0.1,
    n_unmapped=1,
)
_DEBIASED = DebiasedGap(
    model="cda",
    key="toxicity",
    a=0.1,
    b=0.2,
    gap=0.1,
    ci=(0.0, 0.2),
    verdict=Verdict.INCONCLUSIVE,
    p_adjusted=None,
    architecture="retrieval",
)

_TURN_GAP = TurnGap(
    key="offense_rate",
    kind="rate",
    a=0.2,
    b=0.1,
    estimate=0.1,
    ci95=(0.0, 0.2),
    p=0.04,
    p_adjusted=0.08,
    paired_test="mcnemar",
    ci_method="newcombe",
    verdict=Verdict.INCONCLUSIVE,
    notes=("few pairs",),
)
_BUCKET = TurnBucket(turns_since=1, n_pairs=40, n_clusters=None, gaps=(_TURN_GAP,), not_tested="fewer than 20 units")

_GAP_CHANGE = GapChange(
    axis="gender",
    key="offense_rate",
    kind="rate",
    primary=True,
    higher_is_better=False,
    n_pairs=80,
    n_units=80,
    baseline_a=0.2,
    baseline_b=0.1,
    baseline_gap=0.1,
    baseline_ci=(0.05, 0.15),
    candidate_a=0.1,
    candidate_b=0.1,
    candidate_gap=0.0,
    candidate_ci=(-0.05, 0.05),
    change=-0.1,
    change_ci=(-0.2, 0.0),
    p_change=0.01,
    change_test="paired_t",
    total=0.1,
    total_ci=(None, None),
    p_total=None,
    p_magnitude=0.01,
    p_adjusted=0.02,
    margin=0.05,
    non_inferior=True,
    within_margin=False,
    identical=False,
    identical_answers=3,
    verdict=Change.IMPROVED,
    notes=("n",),
    units_needed=None,
)
_AXIS = ComparedAxis(axis="gender", groups=("male", "female"), n_pairs=80, n_clusters=None, skipped={"length": "constant"})

#: One real instance of every class on the codec (the results holding an audit: tests/test_result_protocol.py).
RECORDS: list[Any] = [
    GenerationSummary(
        model="openai:m",
        settings={"temperature": 0.0},
        n_items=4,
        n_cached=1,
        n_generated=3,
        n_errors=1,
        n_pairs=2,
        n_pairs_with_errors=1,
        error_examples=("timeout",),
        error_counts={"TransportError": 1},
        max_in_flight=2,
        max_concurrency=8,
        n_retries=0,
        retry_budget=5,
        n_retries_refused=0,
        tuning={"timeout": 30.0},
    ),
    RegardStats(mean=0.25, std=0.5, n=8),
    Gap(
        a="x",
        b="y",
        all=0.1,
        baseline=None,
        ci95=(0.0, 0.2),
        se=0.05,
        p=0.04,
        largest=("s1",),
        smallest=("s2", "s3"),
        n_reversing=1,
        n_sign_flips=2,
    ),
    _SPREAD,
    NullRobustness(single=0.9, halves=None, n_shuffles=20, how="within group"),
    Robustness(single=_SPREAD, halves=_SPREAD, relative_increase=0.1, n_structures=5, n_sampled=3, n_draws=10, seed=0),
    Robustness(
        single=_SPREAD,
        halves=_SPREAD,
        relative_increase=0.1,
        n_structures=5,
        n_sampled=3,
        n_draws=10,
        seed=0,
        null=NullRobustness(0.1, 0.2, 3, "x"),
    ),
    VarianceShares(
        total_ss=2.0, ss={"group": 1.0, "residual": 1.0}, share={"group": 0.5, "residual": 0.5}, n_levels={"group": 2}, n=10
    ),
    AnalysisConfig(
        include_other=False, smoothing=1.0, n_best=3, seed=0, n_sampled=2, n_draws=5, baseline="orig", groups_source="file"
    ),
    AnalysisCounts(n_rows=10, n_polar=8, n_other=2, n_structures=3, has_baseline=True, n_rows_ignored=1, ignored_groups=("z",)),
    InferenceSettings(n_resamples=200, resampled=("template", "seed"), alpha=0.05, method="bootstrap"),
    _PAIR,
    RegardCertificate(n_probes=30, margin=0.1, pairs={"x-y": _PAIR}),
    _PLANTED,
    _DEBIASED,
    _TURN_GAP,
    TrainReport(n_examples=10, n_by_label={"negative": 4, "positive": 6}, cv_folds=5, cv_accuracy=0.8, cv_macro_f1=None),
    CompletionSummary(
        n_prompts=2,
        n_seeds=3,
        n_items=6,
        n_cached=1,
        n_generated=4,
        n_errors=1,
        fingerprint="f",
        settings="s",
        store="run.sqlite",
        error_counts={"TransportError": 1},
        error_examples=("timeout",),
        n_unencodable=0,
    ),
    boundaries([0.25, 0.5, 1.0], alpha=0.05, spending="obrien-fleming"),
    AugmentedDialogue(context="she said", response="ok", augmented=True, origin="1"),
    _BUCKET,
    ByTurnResult(keys=("offense_rate",), buckets=(_BUCKET,), min_units=20, family_size=1, clustered=True, notes=("n",)),
    SimilarityRow("exact", 80, 0.4, 0.1, 0.3, (0.1, 0.5), "paired_t", 0.001, 0.002, Verdict.DISAGREE, note="interval only"),
    RankerPool(n_held=3, n_replies=4, n_candidates=100, n_chosen_a=1, n_chosen_b=7),
    PlantedRecovery(
        "gender",
        ("male", "female"),
        "builtin:echo",
        10,
        0,
        "quick",
        (_PLANTED,),
        corpus_rate=0.5,
        corpus={"n_planted": 3},
        debiased=(_DEBIASED,),
        pools={"cda": RankerPool(1, 2, 3, 4, 5)},
        timings={"train": 1.5},
    ),
]


def _of(cls: type) -> Any:
    return next(record for record in RECORDS if type(record) is cls)


def test_keys_filed_outside_the_record_are_not_written() -> None:
    """A compared key sits under its axis and key in ``results.json``: neither is in its own entry."""
    assert "axis" not in _GAP_CHANGE.to_dict() and "key" not in _GAP_CHANGE.to_dict()
    assert GapChange.from_dict({**_GAP_CHANGE.to_dict(), "axis": "gender", "key": "offense_rate"}) == _GAP_CHANGE
    assert ComparedAxis.from_dict({**_AXIS.to_dict(), "axis": "gender", "keys": {}}) == _AXIS


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: type(record).__name__)
def test_round_trip_through_json(record: Any) -> None:
    """``from_dict(to_dict(x)) == x``, also after the dict went through JSON text."""
    data = record.to_dict()
    assert type(record).from_dict(data) == record
    assert type(record).from_dict(json.loads(json.dumps(data))) == record


def test_written_as_declared() -> None:
    """Tuples are written as lists, enums as their values, mappings as dicts, derived keys in their place."""
    assert _PLANTED.to_dict()["ci"] == [0.3, 0.5]
    assert _PLANTED.to_dict()["verdict"] == "difference detected"
    certificate = RegardCertificate(n_probes=30, margin=0.1, pairs={"x-y": _PAIR})
    assert list(certificate.to_dict()) == ["n_probes", "margin", "pairs", "flagged"]
    assert certificate.to_dict()["flagged"] == ["x-y"]
    assert type(certificate.to_dict()["pairs"]) is dict


def test_null_reads_as_the_empty_value() -> None:
    """Strict JSON writes NaN as null: a float field reads it back as NaN, a bound pair as two nulls, a tuple as empty."""
    stats = RegardStats.from_dict({"mean": None, "std": None, "n": 0})
    assert math.isnan(stats.mean) and math.isnan(stats.std)
    gap = DebiasedGap.from_dict({**_DEBIASED.to_dict(), "change_ci": None})
    assert gap.change_ci == (None, None)
    assert AnalysisCounts.from_dict({**_of(AnalysisCounts).to_dict(), "ignored_groups": None}).ignored_groups == ()


def test_derived_keys_are_written_and_not_read() -> None:
    """A bucket writes whether it was tested, a similarity row whether it differs; neither is read back."""
    assert list(_BUCKET.to_dict()) == ["turns_since", "n_pairs", "n_clusters", "tested", "not_tested", "gaps"]
    assert _BUCKET.to_dict()["tested"] is False
    row = _of(SimilarityRow).to_dict()
    assert row["detected"] is False and row["verdict"] == "test and interval disagree"
    assert TurnBucket.from_dict({**_BUCKET.to_dict(), "tested": True}) == _BUCKET


def test_missing_key_takes_the_default_or_fails() -> None:
    data = _DEBIASED.to_dict()
    del data["architecture"]
    assert DebiasedGap.from_dict(data).architecture == "seq2seq"
    del data["key"]
    with pytest.raises(KeyError, match="key"):
        DebiasedGap.from_dict(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"mean": "high", "std": 0.1, "n": 3}, "field 'RegardStats.mean': expected a number, got str"),
        ({"mean": 0.1, "std": 0.1, "n": 2.5}, "field 'RegardStats.n': expected an integer, got float"),
        ({"mean": 0.1, "std": 0.1, "n": True}, "field 'RegardStats.n': expected a number, got a boolean"),
    ],
)
def test_wrong_type_is_named(data: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        RegardStats.from_dict(data)


@dataclass(frozen=True, slots=True)
class _Renamed(Codec):
    name: str = field(metadata=key("id"))
    note: str = field(default="", metadata=SKIP)
    values: tuple[int, ...] = ()

    _codec_keys: ClassVar[tuple[str, ...]] = ("name", "size", "values")

    @property
    def size(self) -> int:
        return len(self.values)


def test_field_metadata_renames_skips_and_derives() -> None:
    record = _Renamed(name="a", note="kept in memory", values=(1, 2))
    assert record.to_dict() == {"id": "a", "size": 2, "values": [1, 2]}
    assert _Renamed.from_dict(record.to_dict()) == _Renamed(name="a", values=(1, 2))
    assert isinstance(_Renamed.from_dict({"id": "b"}).values, tuple)
    assert _Renamed.from_dict({"id": "b", "note": "n"}).note == "n"


def test_mappings_read_back_read_only() -> None:
    shares = VarianceShares.from_dict(_of(VarianceShares).to_dict())
    assert isinstance(shares.ss, MappingProxyType)


def test_infinite_critical_values_are_written_as_null() -> None:
    """A look that spends nothing has an infinite critical value: null in JSON, infinite again when read."""
    design = Boundaries(
        fractions=(0.1, 1.0), z=(math.inf, 1.96), nominal=(0.0, 0.05), spent=(0.0, 0.05), alpha=0.05, spending="x", sides=2
    )
    assert design.to_dict()["z"] == [None, 1.96]
    assert Boundaries.from_dict(json.loads(json.dumps(design.to_dict()))) == design
