"""The one result protocol: every result answers ``verdicts``, ``detected()``, ``to_frame()``, ``to_dict()``/``from_dict()``, ``write()``."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pandas as pd
import pytest

from fairtalk.prompts import GroupPair, GroupSet, analyze
from fairtalk.records import Coverage, PairsCheck
from fairtalk.results import (
    AuditResult,
    AuditRun,
    AxisRun,
    ComparedModel,
    DebiasComparison,
    GenerationSummary,
    MeasureResult,
    ModelComparison,
    PromptAnalysis,
    Result,
    SimilarityResult,
    SimilarityRow,
    TestedKey,
    Verdict,
)

RESULTS = (AuditResult, AuditRun, SimilarityResult, DebiasComparison, ModelComparison, PromptAnalysis)


def _measure(name: str, verdict: str, p_adjusted: float, *, primary: bool = True) -> MeasureResult:
    return MeasureResult(
        TestedKey(
            name=name,
            kind="rate",
            a=0.2,
            b=0.1,
            difference=0.5,
            z=2.0,
            p=0.01,
            p_paired=0.01,
            paired_test="mcnemar",
            ci95=(0.01, 0.2),
            effect_size=0.3,
            effect_size_name="h",
        ),
        p_adjusted=p_adjusted,
        verdict=verdict,
        primary=primary,
    )


def _audit() -> AuditResult:
    return AuditResult(
        axis="gender",
        groups=("male", "female"),
        n_pairs=80,
        measures=(
            _measure("offense_rate", "difference detected", 0.001),
            _measure("length", "equivalent", 0.6),
            _measure("distinct_1", "difference detected", 0.01, primary=False),
            _measure("refusal_rate", "inconclusive", 0.3),
        ),
    )


def _similarity() -> SimilarityResult:
    def row(method: str, verdict: Verdict) -> SimilarityRow:
        return SimilarityRow(
            method=method,
            n_pairs=80,
            counterfactual=0.4,
            baseline=0.1,
            difference=0.3,
            ci95=(0.1, 0.5),
            test="paired_t",
            p=0.001,
            p_adjusted=0.002,
            verdict=verdict,
        )

    rows = (row("exact", Verdict.DIFFERENT), row("rouge_l", Verdict.DISAGREE), row("answered", Verdict.INCONCLUSIVE))
    return SimilarityResult(
        axis="gender", model="m", alpha=0.05, seed=0, n_pairs=80, n_clusters=None, rows=rows, sampled=False, baseline_kind="zero"
    )


def _run(result: AuditResult) -> AuditRun:
    generation = GenerationSummary(
        model="m",
        settings={"do_sample": False},
        n_items=160,
        n_cached=0,
        n_generated=160,
        n_errors=0,
        n_pairs=80,
        n_pairs_with_errors=0,
    )
    axis = AxisRun(
        axis="gender",
        result=result,
        coverage=Coverage(
            axis="gender",
            groups=("male", "female"),
            n_read=82,
            n_matched=80,
            n_by_group={"male": 40, "female": 40},
            n_mixed=0,
            n_duplicates=0,
            n_pairs=80,
            top_terms=(),
        ),
        generation=generation,
        timings={"pairs": 0.1},
        similarity=_similarity(),
        pairs_check=PairsCheck(
            axis="gender",
            groups=("male", "female"),
            n_pairs=80,
            n_leftover=0,
            leftover_terms=(),
            leftover_examples=(),
            n_pairs_with_kept=0,
            kept=(),
            ambiguous=(),
            top_swaps=(),
            n_markers=0,
        ),
    )
    return AuditRun(axes={"gender": axis}, model="m", corpus="c", split="all", seed=0, run_id="r1")


def _comparison() -> DebiasComparison:
    models = {
        name: ComparedModel(
            name=name,
            debias=name,
            checkpoint=f"{name}.pt",
            trained=True,
            training={"epochs": 1},
            training_seconds=1.5,
            validation={"loss": 2.0},
            run=_run(_audit()),
            n_different=3,
            n_distinct=9,
        )
        for name in ("baseline", "cda")
    }
    return DebiasComparison(
        axis="gender",
        groups=("male", "female"),
        n_pairs=80,
        models=models,
        corpus="c",
        eval_corpus="c",
        eval_split="heldout",
        seed=0,
        mode="quick",
    )


def _prompts() -> PromptAnalysis:
    rows = pd.DataFrame(
        [
            {"group": g, "template": f"t{t}", "structure": s, "seed": k, "label": 1 if g == "a" else (-1 if (t + k) % 3 else 0)}
            for g in ("a", "b")
            for t in range(4)
            for s in ("original", "x")
            for k in range(3)
        ]
    )
    return analyze(rows, groups=GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),)), n_draws=2, n_resamples=200)


def _every() -> list[Result]:  # type: ignore[type-arg]
    return [_audit(), _run(_audit()), _similarity(), _comparison(), _prompts()]


def test_every_result_is_a_result_with_the_same_members() -> None:
    for cls in RESULTS:
        assert issubclass(cls, Result) and not inspect.isabstract(cls), cls
        assert isinstance(inspect.getattr_static(cls, "verdicts"), property), cls
        for verb in ("detected", "to_frame", "to_dict", "from_dict", "write", "read_json"):
            assert callable(getattr(cls, verb)), (cls, verb)
        assert inspect.signature(cls.to_frame).return_annotation == "pd.DataFrame", cls
    assert not hasattr(AuditResult, "biased") and not hasattr(AuditRun, "biased")  # one name: detected()


def test_verdicts_are_the_enum_and_detected_lists_the_keys_that_differ() -> None:
    audit, run, similarity, comparison, prompts = _every()
    assert audit.verdicts == {
        "offense_rate": Verdict.DIFFERENT,
        "length": Verdict.EQUIVALENT,
        "distinct_1": Verdict.DIFFERENT,
        "refusal_rate": Verdict.INCONCLUSIVE,
    }
    assert audit.detected() == ("offense_rate",)  # the gate counts primary measures only
    with pytest.raises(TypeError):  # a stored verdict is not re-decided at another level
        audit.detected(alpha=0.0001)  # type: ignore[call-arg]
    assert run.verdicts[("gender", "length")] is Verdict.EQUIVALENT and run.detected() == (("gender", "offense_rate"),)
    assert similarity.verdicts == {"exact": Verdict.DIFFERENT, "rouge_l": Verdict.DISAGREE, "answered": Verdict.INCONCLUSIVE}
    assert similarity.detected() == ("exact",)
    assert comparison.detected() == (("baseline", "offense_rate"), ("cda", "offense_rate"))
    assert prompts.verdicts == {"ab": Verdict.DIFFERENT} and prompts.detected() == ("ab",)
    for result in (audit, run, similarity, comparison, prompts):
        assert all(isinstance(v, Verdict) for v in result.verdicts.values())
        assert isinstance(result.to_frame(), pd.DataFrame)


def test_one_verdict_vocabulary_and_older_similarity_strings_still_read() -> None:
    assert [v.value for v in Verdict] == ["difference detected", "equivalent", "inconclusive", "test and interval disagree"]
    audit, _, similarity, *_ = _every()
    assert json.loads(audit.to_json())["measures"]["length"]["verdict"] == "equivalent"
    written = json.loads(similarity.to_json())
    assert [r["verdict"] for r in written["rows"]] == ["difference detected", "test and interval disagree", "inconclusive"]
    older = {
        **written,
        "rows": [
            {**r, "verdict": old}
            for r, old in zip(written["rows"], ("differs", "test and interval disagree", "no difference shown"))
        ],
    }
    assert type(similarity).from_dict(older).verdicts == similarity.verdicts
    with pytest.raises(ValueError):
        Verdict("differs a lot")
    assert audit.to_frame().loc["offense_rate", "verdict"] == "difference detected"
    assert type(audit.to_dict()["measures"]["length"]["verdict"]) is str


def test_write_and_read_json_give_the_same_result_back(tmp_path: Path) -> None:
    for result in _every():
        path = result.write(tmp_path / f"{type(result).__name__}.json")
        again = type(result).read_json(path)
        assert again.to_json() == result.to_json() == path.read_text(encoding="utf-8"), type(result)
        assert again.verdicts == result.verdicts and again.detected() == result.detected()
        assert type(result).from_dict(result.to_dict()) == result, type(result)


def test_rows_say_detected_with_a_method_and_refuse_a_verdict_they_contradict() -> None:
    measure = _measure("offense_rate", "difference detected", 0.001)
    assert measure.verdict is Verdict.DIFFERENT and measure.detected() is True
    assert _measure("length", "equivalent", 0.6).detected() is False
    with pytest.raises(ValueError, match="'different' is not a valid Verdict"):
        _measure("length", "different", 0.6)
    row = SimilarityRow(
        method="exact",
        n_pairs=2,
        counterfactual=0.5,
        baseline=0.0,
        difference=0.5,
        ci95=(None, None),
        test="paired_t",
        p=0.01,
        p_adjusted=0.01,
        verdict="test and interval disagree",
    )
    assert row.verdict is Verdict.DISAGREE and row.detected() is False and row.to_dict()["detected"] is False
