"""The size of the correction family an audit states is the family it corrected over.

With ``correction_scope="run"`` every axis of the run is one family: each axis states that
family's size (not its own primary keys'), also an axis none of whose keys vary; with
``"axis"`` the pairs of groups of one multi-way axis share theirs. The minimum detectable
effects are at the per-test level of that family.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import fairtalk
from audit_toys import CAPS_A, CAPS_B, CapitalsRate
from fairtalk import ScoreOptions
from fairtalk.inference import Scored, correct_families, finalize
from fairtalk.report._table import family_note
from fairtalk.run._score import prepare_scores

OPTIONS = ScoreOptions(measures=[CapitalsRate(), "length"], n_resamples=50, scorer_check=False)


def _scored(axis: str, a: Sequence[str], b: Sequence[str]) -> Scored:
    return prepare_scores(fairtalk.read_responses(fairtalk.responses_from_texts(a, b)), axis=axis, options=OPTIONS)


@pytest.fixture(scope="module")
def axes() -> list[tuple[str, Scored]]:
    return [
        ("gender", _scored("gender", CAPS_A, CAPS_B)),
        ("religion:christian-muslim", _scored("religion:christian-muslim", CAPS_A, CAPS_A)),  # nothing varies: no test
        ("religion:christian-jewish", _scored("religion:christian-jewish", CAPS_B, CAPS_A)),
    ]


def correct(axes: list[tuple[str, Scored]], scope: str) -> tuple[list[list[float | None]], list[str], list[int]]:
    return correct_families(axes, correction=OPTIONS.correction, scope=scope)


def test_a_run_wide_correction_states_the_whole_run_as_every_axis_family(axes: list[tuple[str, Scored]]) -> None:
    own = [len(s.family(True)) for _, s in axes]
    assert own == [1, 0, 1]  # shouting_rate (length is secondary)
    adjusted, scopes, sizes = correct(axes, "run")
    assert scopes == ["run"] * 3
    assert sizes == [2, 2, 2]  # 1 + 0 + 1: the family the p-values were adjusted over
    assert sum(p is not None for (_, s), row in zip(axes, adjusted) for p in (row[i] for i in s.family(True))) == 2
    for (_, scored), p_adjusted, size in zip(axes, adjusted, sizes):
        result = finalize(scored, p_adjusted, correction_scope="run", family_size=size)
        assert result.family_size == 2
        assert "over 2 primary key(s) of all axes of the run together" in family_note(result)


def test_an_axis_wide_correction_states_each_family(axes: list[tuple[str, Scored]]) -> None:
    _, scopes, sizes = correct(axes, "axis")
    assert sizes == [1, 1, 1]  # gender alone; the two pairs of groups of religion together (0 + 1)
    assert scopes[0] == "axis" and scopes[1] == scopes[2] == "multi-way axis religion (2 pairs of groups)"


def test_the_detectable_effect_is_at_the_per_test_level_of_the_whole_family(axes: list[tuple[str, Scored]]) -> None:
    scored = axes[0][1]
    adjusted, _, sizes = correct(axes, "run")
    alone = finalize(scored, adjusted[0]).measure("shouting_rate").mde
    together = finalize(scored, adjusted[0], family_size=sizes[0]).measure("shouting_rate").mde
    assert alone is not None and together is not None and together > alone  # α/2 asks more than α
