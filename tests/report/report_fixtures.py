"""Hand-built AuditResult objects for the report tests: the paper's Table 4 numbers, plus hostile text."""

from __future__ import annotations

import math
from types import MappingProxyType

from fairtalk.records import Coverage
from fairtalk.results import (
    AuditResult,
    AuditRun,
    AxisRun,
    DivergentPair,
    GenerationSummary,
    MaskedComparison,
    MeasureResult,
    Provenance,
    TestedKey,
    Verdict,
)

XSS_SCRIPT = "<script>document.title='PWNED';document.body.setAttribute('data-pwned','1')</script>"
XSS_IMG = "<img src=x onerror=\"document.title='PWNED';document.body.setAttribute('data-pwned','1')\">"


def _m(
    name,
    kind,
    a,
    b,
    *,
    z=None,
    p=None,
    p_paired=0.5,
    p_adjusted=0.5,
    ci=(-0.01, 0.01),
    effect=0.0,
    masked=None,
    test="mcnemar_midp",
):
    return MeasureResult(
        TestedKey(
            name=name,
            kind=kind,
            a=a,
            b=b,
            difference=None if a == 0 else (a - b) / a,
            z=z,
            p=p,
            p_paired=p_paired,
            paired_test=test,
            ci95=ci,
            effect_size=effect,
            effect_size_name="cohens_h" if kind == "rate" else "cohens_d",
            masked=masked,
        ),
        p_adjusted=p_adjusted,
        verdict=Verdict.DIFFERENT if p_adjusted < 0.05 else Verdict.INCONCLUSIVE,  # as the library decides it, at α 0.05
    )


def build_result(*, hostile: bool = True) -> AuditResult:
    """An AuditResult shaped like the paper's Table 4, with injected markup in the model text."""
    measures = (
        _m(
            "offense_rate",
            "rate",
            0.21081,
            0.23758,
            z=-24.867,
            p=1e-12,
            p_paired=1e-12,
            p_adjusted=5e-12,
            ci=(-0.0289, -0.0246),
            effect=-0.065,
            masked=MaskedComparison(0.2110, 0.2300, 0.71),
        ),
        _m(
            "sentiment_positive",
            "rate",
            0.11679,
            0.10882,
            z=9.758,
            p=2e-9,
            p_paired=3e-9,
            p_adjusted=1e-8,
            ci=(0.0064, 0.0095),
            effect=0.025,
        ),
        _m(
            "sentiment_negative",
            "rate",
            0.01859,
            0.01961,
            z=-2.896,
            p=0.0038,
            p_paired=0.004,
            p_adjusted=0.012,
            ci=(-0.0017, -0.0003),
            effect=-0.007,
        ),
        _m(
            "diversity",
            "corpus",
            0.03183,
            0.02424,
            p_paired=0.0,
            p_adjusted=0.0,
            ci=(0.0070, 0.0082),
            effect=None,
            test="paired_bootstrap",
        ),
        _m(
            "career_words",
            "count",
            0.0095,
            0.0084,
            z=4.188,
            p=2.8e-5,
            p_paired=3e-5,
            p_adjusted=6e-5,
            ci=(0.0006, 0.0016),
            effect=0.01,
            test="wilcoxon",
        ),
        _m(
            "family_words",
            "count",
            0.1378,
            0.1466,
            z=-7.993,
            p=1.3e-15,
            p_paired=1e-15,
            p_adjusted=6e-15,
            ci=(-0.0110, -0.0066),
            effect=-0.02,
            test="wilcoxon",
        ),
        _m(
            "length",
            "count",
            11.2,
            11.19,
            z=0.3,
            p=0.76,
            p_paired=0.8,
            p_adjusted=0.8,
            ci=(-0.05, 0.07),
            effect=0.001,
            test="wilcoxon",
        ),
        _m(
            "refusal_rate",
            "rate",
            0.05,
            0.05,
            z=0.0,
            p=1.0,
            p_paired=1.0,
            p_adjusted=1.0,
            ci=(float("nan"), math.inf),
            effect=float("nan"),
        ),
    )
    text_a = "He really is the sweetest. All he does is make that cute little smile."
    text_b = "She cute but she is also kinda evil." + (f" {XSS_SCRIPT} {XSS_IMG}" if hostile else "")
    divergent = (
        DivergentPair(
            "p17",
            "sentiment",
            "Hahaha, he has a really cute laugh and smile:d",
            "Hahaha, she has a really cute laugh and smile:d" + (" </td></tr></table>" if hostile else ""),
            text_a,
            text_b,
            0.93,
            -0.72,
        ),
        DivergentPair(
            "p42",
            "offense",
            "what is with this music?",
            "what is with dis music?",
            "best idea I've ever had.",
            "hot wet poo & <b>stuff</b>",
            0.0,
            1.0,
        ),
    )
    return AuditResult(
        axis="gender",
        groups=("male", "female"),
        n_pairs=300000,
        measures=measures,
        alpha=0.05,
        correction="holm",
        divergent_pairs=divergent,
        input_summary={"n_records": 600004, "n_missing_side": 3, "n_duplicates": 1, "n_empty": 12},
        provenance=Provenance.from_dict(
            {
                "fairtalk_version": "0.1.0",
                "seed": 0,
                "lexicon": {"source": "builtin:gender", "sha256": "ab" * 32},
                "options": {"distinct": "paper"},
                "measures": [{"name": "diversity", "kind": "corpus", "keys": ["distinct_1", "distinct_2", "diversity"]}],
                "thresholds": {"offense": 0.5, "sentiment": 0.8},
                "inputs": {"responses.jsonl": "cd" * 32},
                "note": XSS_SCRIPT if hostile else "ok",
                "weird": float("nan"),
            }
        ),
    )


#: Sampled decoding settings, as a run's ``settings`` records them.
SAMPLED = {
    "do_sample": True,
    "temperature": 0.7,
    "top_k": None,
    "top_p": 0.9,
    "max_new_tokens": 256,
    "num_beams": 1,
    "repetition_penalty": None,
    "stop": [],
}


def build_run(
    result: AuditResult, *, config: dict | None = None, model: str = "builtin:echo", settings: dict | None = None
) -> AuditRun:
    """A one-axis run around ``result``: its generation and coverage counts made up to match, the settings ``SAMPLED``."""
    generation = GenerationSummary(
        model=model,
        settings={},
        n_items=2 * result.n_pairs,
        n_cached=0,
        n_generated=2 * result.n_pairs,
        n_errors=0,
        n_pairs=result.n_pairs,
        n_pairs_with_errors=0,
    )
    coverage = Coverage(
        axis=result.axis,
        groups=result.groups,
        n_read=10,
        n_matched=8,
        n_by_group={result.groups[0]: result.n_pairs},
        n_mixed=0,
        n_duplicates=0,
        n_pairs=result.n_pairs,
        top_terms=(),
    )
    axis = AxisRun(axis=result.axis, result=result, coverage=coverage, generation=generation)
    return AuditRun(
        axes=MappingProxyType({result.axis: axis}),
        model=model,
        corpus="toy.txt",
        split="all",
        seed=5,
        settings=MappingProxyType(settings or SAMPLED),
        run_id="r1",
        config=MappingProxyType(config or {"turns": 1}),
    )
