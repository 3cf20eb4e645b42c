"""Issue 37: one tested-key record flows from inference into the result unchanged.

``fairtalk.inference`` builds one :class:`~fairtalk.results.TestedKey` per result key; the
finished :class:`~fairtalk.results.MeasureResult` holds that very record and adds only what the
family's decision adds, and ``results.json`` reads back into the same result.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

import fairtalk
from audit_toys import CAPS_A, CAPS_B, CapitalsRate
from fairtalk import ScoreOptions
from fairtalk.inference import adjust_family, finalize
from fairtalk.measures import Measure
from fairtalk.results import NOTE_NO_VARIATION, AuditResult, MeasureResult, TestedKey
from fairtalk.run._score import prepare_scores


class Silent(Measure):
    """A rate that never varies: every pair scores 0 on both sides, so the family leaves it out."""

    name = "silent"
    keys = ("silent_rate",)
    kind = "rate"
    version = "1"
    higher_is_better: Mapping[str, bool | None] = {"silent_rate": None}

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        return {"silent_rate": np.zeros(len(texts))}


def _options() -> ScoreOptions:
    return ScoreOptions(measures=[CapitalsRate(), Silent(), "length"], n_resamples=50, scorer_check=False, mask_groups=True)


@pytest.fixture(scope="module")
def scored_and_result() -> tuple[fairtalk.inference.Scored, AuditResult]:
    options = _options()
    scored = prepare_scores(
        fairtalk.read_responses(fairtalk.responses_from_texts(CAPS_A, CAPS_B)), axis="gender", options=options
    )
    return scored, finalize(scored, adjust_family([scored], options.correction)[0])


def test_the_result_holds_the_very_record_inference_built(scored_and_result) -> None:
    scored, result = scored_and_result
    assert [m.name for m in result.measures] == ["shouting_rate", "silent_rate", "length"]
    for row, m in zip(scored.rows, result.measures, strict=True):
        assert isinstance(m.tested, TestedKey)
        assert m.tested is row.tested  # not a copy, field by field: the record itself
    shouting = result.measure("shouting_rate")
    assert (shouting.a, shouting.b, shouting.p_paired, shouting.ci95) == (
        shouting.tested.a,
        shouting.tested.b,
        shouting.tested.p_paired,
        shouting.tested.ci95,
    )
    assert shouting.a == 0.4 and shouting.b == 0.0 and shouting.p_adjusted is not None
    assert shouting.masked is not None and shouting.masked is shouting.tested.masked  # mask_groups reaches the record


def test_score_gives_records_equal_to_those_inference_built(scored_and_result) -> None:
    scored, _ = scored_and_result
    result = fairtalk.score(CAPS_A, CAPS_B, axis="gender", options=_options())
    assert [m.tested for m in result.measures] == [row.tested for row in scored.rows]


def test_the_no_variation_note_is_the_decisions_not_the_records(scored_and_result) -> None:
    _, result = scored_and_result
    silent = result.measure("silent_rate")
    assert silent.no_variation and silent.p_adjusted is None
    assert silent.notes[-1] == NOTE_NO_VARIATION and NOTE_NO_VARIATION not in silent.tested.notes
    assert silent.to_dict()["notes"] == [*silent.tested.notes, NOTE_NO_VARIATION]
    assert not result.measure("shouting_rate").no_variation


def test_results_json_reads_back_into_the_same_measures(scored_and_result) -> None:
    _, result = scored_and_result
    data = json.loads(json.dumps(result.to_dict()))
    measures = tuple(MeasureResult.from_dict({**m, "name": name}) for name, m in data["measures"].items())
    assert measures == result.measures
    assert [m.to_dict() for m in measures] == list(data["measures"].values())
    again = AuditResult.from_dict(data)
    assert again.measures == result.measures and again.to_dict() == data


def test_a_result_is_built_from_its_record_and_the_decision() -> None:
    key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "mcnemar_exact", (-0.01, 0.01), 0.0, "cohens_h")
    m = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict="equivalent")
    assert m.tested is key and m.verdict is fairtalk.Verdict.EQUIVALENT and m.name == "offense_rate"
    assert MeasureResult.from_dict({**m.to_dict(), "name": m.name}) == m
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.tested = key  # type: ignore[misc]
