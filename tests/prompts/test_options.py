"""Tests for fairtalk.prompts._options: ``PromptOptions``, validated once, as ``analyze_prompts`` and ``analyze`` build it."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import fairtalk
from fairtalk.errors import FairtalkError, SpecError
from fairtalk.prompts import GroupPair, GroupSet, PromptOptions, analyze

GROUPS = GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),))
ROWS = pd.DataFrame(
    [
        {"group": g, "template": "t", "structure": s, "seed": k, "label": (k % 3) - 1}
        for g in ("a", "b")
        for s in ("original", "x")
        for k in range(6)
    ]
)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("alpha", 7, "alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 7"),
        ("alpha", 0.0, "alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 0.0"),
        ("alpha", 1e-300, "alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 1e-300"),
        ("n_draws", -3, "n_draws must be an integer >= 1, got -3"),
        ("n_draws", 2.5, "n_draws must be an integer >= 1, got 2.5"),
        ("n_resamples", -1, "n_resamples must be an integer >= 0, got -1"),
        ("n_sampled", 1, "n_sampled must be an integer >= 2, got 1"),
        ("n_best", 0, "n_best must be an integer >= 1, got 0"),
        ("seed", -1, "seed must be an integer >= 0, got -1"),
        ("smoothing", float("nan"), "smoothing must be a number >= 0, got nan"),
        ("include_other", "yes", "include_other must be true or false, got 'yes'"),
        ("regard", "", "regard must be a regard scorer"),
    ],
)
def test_analyze_prompts_refuses_an_option_out_of_range_naming_the_range(option: str, value: object, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        fairtalk.analyze_prompts(ROWS, groups=GROUPS, **{option: value})  # type: ignore[arg-type]
    assert isinstance(caught.value, FairtalkError) and str(caught.value).startswith(message)
    with pytest.raises(SpecError, match=re.escape(message)):
        PromptOptions(**{option: value})  # type: ignore[arg-type]


def test_analyze_validates_the_same_options() -> None:
    with pytest.raises(SpecError, match="alpha must be between 0 and 1"):
        analyze(ROWS, groups=GROUPS, alpha=7)
    with pytest.raises(SpecError, match="n_draws must be an integer >= 1, got -3"):
        analyze(ROWS, groups=GROUPS, n_draws=-3)


def test_options_or_keywords_give_the_same_analysis() -> None:
    options = PromptOptions(n_draws=2, n_resamples=0, seed=3)
    by_object = fairtalk.analyze_prompts(ROWS, groups=GROUPS, options=options)
    by_keywords = fairtalk.analyze_prompts(ROWS, groups=GROUPS, n_draws=2, n_resamples=0, seed=3)
    assert by_object == by_keywords and by_object.config.seed == 3 and by_object.robustness.n_draws == 2
    assert analyze(ROWS, groups=GROUPS, options=options) == by_object


def test_options_and_different_keywords_are_refused() -> None:
    with pytest.raises(SpecError, match=r"give options= or keyword options, not both \(alpha, n_draws given"):
        fairtalk.analyze_prompts(ROWS, groups=GROUPS, options=PromptOptions(), n_draws=3, alpha=0.01)


def test_messages_can_name_the_command_line_flags() -> None:
    with pytest.raises(SpecError, match="--draws must be an integer >= 1, got 0"):
        PromptOptions(n_draws=0, names={"n_draws": "--draws"})
    assert PromptOptions.keys()[:3] == ("regard", "relabel", "include_other")
