"""The record codec (:mod:`fairtalk._codec`): records declared once, read back as written."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import pandas as pd
import pytest

from fairtalk._codec import ABSENT, INLINE, OMIT_DEFAULT, REST, SKIP, Codec, key, keyed, omit_default, via
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


# --- the result records of a real run (issue 37: the last hand-written to_dict/from_dict went to the codec) ---


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Records of real runs: an audit by turn with a judge and masked groups, a sequential audit, a score with gold
    labels, a comparison of two audits, and a prompts analysis with labelled estimates."""
    import fairtalk
    from fairtalk.pipeline import compare_runs
    from fairtalk.prompts import GroupPair, GroupSet, analyze
    from test_by_turn import _LOGIC, write_chats
    from test_by_turn_scores import JUDGE
    from test_score_gold import _gold, _responses

    tmp = tmp_path_factory.mktemp("codec")
    corpus = write_chats(tmp / "chats.jsonl")
    judge = tmp / "judge.py"
    judge.write_text(JUDGE.format(log=str(tmp / "asked.log")))
    reply = _LOGIC["reply"]
    measures = ["length", "offense", f"judge:python:{judge}:answer"]
    options: dict[str, Any] = {"corpus": corpus, "axes": "gender", "n_resamples": 100}
    turned = fairtalk.audit(**options, model=reply, measures=measures, by_turn=True, mask_groups=True, out_dir=tmp / "turned")
    fairtalk.audit(**options, model=lambda c: reply(c) + " ok", measures="length,offense", out_dir=tmp / "other")  # type: ignore[operator]
    looked = fairtalk.audit(**options, model=reply, measures="length", until_decided=True, n_pairs=8, max_pairs=24)
    responses = _responses(tmp / "responses.jsonl")
    gold = _gold(tmp / "gold.jsonl", responses, 60, truth="agree", flip=12)  # PPI++ kept: a figure, no NaN to compare
    labelled = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold), mask_groups=True)
    rows = pd.DataFrame(
        [
            {"group": g, "template": f"t{t}", "structure": s, "seed": k, "label": 1 if g == "a" else (-1 if (t + k) % 3 else 0)}
            for g in ("a", "b")
            for t in range(4)
            for s in ("original", "x")
            for k in range(3)
        ]
    )
    analysis = analyze(rows, groups=GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),)), n_draws=2, n_resamples=50)
    ppi = labelled.measures[0].ppi
    assert ppi is not None
    analysis = analysis.with_gold(
        source="gold.jsonl", n_labels=40, clusters="template", regard={"a": ppi}, rates={"a": {"positive": ppi}}, gaps={"ab": ppi}
    )
    audited = turned.results["gender"]
    assert audited.by_turn is not None and audited.measures[0].masked is not None
    sequential = looked.results["gender"].provenance
    assert sequential.audit is not None and sequential.audit.sequential is not None
    return {
        "AuditResult": audited,
        "AuditResult with gold": labelled,
        "AuditResult sequential": looked.results["gender"],
        "MeasureResult": audited.measures[0],
        "MeasureResult with ppi": labelled.measures[0],
        "ScorerCheck": audited.scorer_check[0],
        "DivergentPair": audited.divergent_pairs[0],
        "JudgeAnswer": audited.divergent_pairs[0].judged[0],
        "Provenance": labelled.provenance,
        "AuditProvenance": sequential.audit,
        "SequentialProvenance": sequential.audit.sequential,
        "ModelComparison": compare_runs(tmp / "other", tmp / "turned"),
        "PromptAnalysis": analysis,
        "PromptGold": analysis.gold,
    }


REAL = (
    "AuditResult",
    "AuditResult with gold",
    "AuditResult sequential",
    "MeasureResult",
    "MeasureResult with ppi",
    "ScorerCheck",
    "DivergentPair",
    "JudgeAnswer",
    "Provenance",
    "AuditProvenance",
    "SequentialProvenance",
    "ModelComparison",
    "PromptAnalysis",
    "PromptGold",
)

#: What a record's JSON leaves to its parent, put back to read it alone (a keyed entry's name, the gold estimates' places).
_FILED_OUTSIDE: dict[str, Callable[[Any, dict[str, Any]], dict[str, Any]]] = {
    "MeasureResult": lambda r, d: {**d, "name": r.name},
    "MeasureResult with ppi": lambda r, d: {**d, "name": r.name},
    "ScorerCheck": lambda r, d: {**d, "key": r.key},
}


@pytest.mark.parametrize("name", REAL)
def test_real_records_round_trip_through_json(real: dict[str, Any], name: str) -> None:
    """Every converted result record of a real run reads back equal from its ``to_dict()``, also through JSON text."""
    record = real[name]
    data = _FILED_OUTSIDE.get(name, lambda r, d: d)(record, record.to_dict())
    if name == "PromptGold":  # its estimates are written beside its groups' and gaps' entries in the analysis
        entries = real["PromptAnalysis"].to_dict()
        data = {**data, **{part: {k: v["ppi"] for k, v in entries[part].items() if "ppi" in v} for part in ("regard", "gaps")}}
    assert type(record).from_dict(data) == record
    text = json.loads(json.dumps(data, default=str))
    again = type(record).from_dict(text)
    assert again == record
    assert json.dumps(again.to_dict(), default=str) == json.dumps(record.to_dict(), default=str)  # written back byte for byte


# --- the shapes the codec declares (OMIT_DEFAULT, INLINE, keyed, whole via, REST, ABSENT) ---


@dataclass(frozen=True, slots=True)
class _Inner:
    name: str
    low: float
    note: str | None = field(default=None, metadata=OMIT_DEFAULT)


@dataclass(frozen=True, slots=True)
class _Entry(Codec):
    key: str = field(metadata=SKIP)
    size: int


@dataclass(frozen=True, slots=True)
class _Outer(Codec):
    inner: _Inner = field(metadata=INLINE)
    level: float = 0.5
    entries: tuple[_Entry, ...] = field(default=(), metadata=keyed("key"))
    label: str | None = field(default=None, metadata=OMIT_DEFAULT)
    mode: str = field(default="paired", metadata=OMIT_DEFAULT)

    _codec_keys: ClassVar[tuple[str, ...]] = ("inner.low", "level", "twice", "inner.note", "entries", "label", "mode")

    @property
    def twice(self) -> float:
        return 2 * self.inner.low


def test_omitted_at_the_default_inlined_and_keyed() -> None:
    """Keys at their default left out; an inlined record's keys placed one by one; a tuple written keyed by a field."""
    plain = _Outer(_Inner("x", 0.25))
    assert plain.to_dict() == {"low": 0.25, "level": 0.5, "twice": 0.5, "entries": {}}
    full = _Outer(_Inner("x", 0.25, note="n"), entries=(_Entry("a", 1), _Entry("b", 2)), label="l", mode="independent")
    assert list(full.to_dict()) == ["low", "level", "twice", "note", "entries", "label", "mode"]
    assert full.to_dict()["entries"] == {"a": {"size": 1}, "b": {"size": 2}}
    for record in (plain, full):  # the inlined record's name is filed outside, as a keyed entry's key is
        assert _Outer.from_dict({**record.to_dict(), "name": "x"}) == record
    with pytest.raises(KeyError, match="name"):
        _Outer.from_dict(plain.to_dict())


def test_an_inlined_record_written_whole_at_its_place() -> None:
    @dataclass(frozen=True, slots=True)
    class Whole(Codec):
        first: int
        inner: _Inner = field(metadata=INLINE)
        last: int = 0

    record = Whole(1, _Inner("x", 0.5, "n"), 2)
    assert list(record.to_dict()) == ["first", "name", "low", "note", "last"]
    assert Whole.from_dict(record.to_dict()) == record


def _pairs_json(record: Any) -> dict[str, Any]:
    return {"pairs": [[a, b] for a, b in record.pairs], "n": len(record.pairs)}


@dataclass(frozen=True, slots=True)
class _Spread(Codec):
    pairs: tuple[tuple[str, str], ...] = field(
        metadata=via(_pairs_json, lambda data: tuple(tuple(p) for p in data["pairs"]["pairs"]), whole=True)
    )
    count: int = field(default=0, metadata=SKIP | via(int, lambda data: data["pairs"]["n"], whole=True))


def test_a_whole_record_via_writes_from_the_record_and_reads_from_the_object() -> None:
    record = _Spread((("a", "b"),), count=1)
    assert record.to_dict() == {"pairs": {"pairs": [["a", "b"]], "n": 1}}
    assert _Spread.from_dict(record.to_dict()) == record


def _only_when_wide(record: Any) -> bool:
    return record.mode != "wide"


@dataclass(frozen=True, slots=True)
class _Section(Codec):
    _absent: frozenset[str] = field(default=frozenset(), compare=False, kw_only=True, metadata=ABSENT)
    mode: str | None = None
    width: int | None = field(default=None, metadata=omit_default(_only_when_wide))
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), metadata=REST)
    tail: str | None = field(default=None, metadata=OMIT_DEFAULT)


def test_rest_keeps_unknown_keys_in_place_and_absent_keys_stay_absent() -> None:
    """Unknown keys are kept and written back where REST sits; a key the file lacked is not written back as null."""
    data = {"mode": "narrow", "note": "by hand", "tail": "t", "later": [1, 2]}
    record = _Section.from_dict(data)
    assert dict(record.extra) == {"note": "by hand", "later": [1, 2]} and record.width is None
    assert record._absent == frozenset({"width"})
    assert list(record.to_dict()) == ["mode", "note", "later", "tail"]
    assert _Section.from_dict({"width": None}).to_dict() == {}  # mode lacked: left out; width: only when wide
    assert _Section.from_dict({"mode": "wide"}).to_dict() == {"mode": "wide"}  # width lacked: left out
    assert _Section.from_dict({"mode": "wide", "width": None}).to_dict() == {"mode": "wide", "width": None}
    assert _Section().to_dict() == {"mode": None}  # built in Python: width left out unless wide, mode written as null
    assert _Section(mode="wide").to_dict() == {"mode": "wide", "width": None}
    assert _Section.from_dict({"extra": 1}).extra == {"extra": 1}  # a key named like the rest field is one of the rest


@dataclass(frozen=True, slots=True)
class _Holder(Codec):
    nested: _Entry = field(default_factory=lambda: _Entry("k", 0))


def test_null_in_a_nested_record_with_a_default_reads_as_the_default() -> None:
    assert _Holder.from_dict({"nested": None}) == _Holder()
