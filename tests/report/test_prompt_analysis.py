"""Tests for fairtalk.report._prompt_analysis (and its figures): results.json schema, CSVs, escaped HTML."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fairtalk.errors import InputError
from fairtalk.prompts import GroupPair, GroupSet, PromptData, analyze
from fairtalk.report import render_prompts_html, write_prompts_report

GROUPS = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))


def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        {
            "group": g,
            "template": f"t{t}",
            "structure": s,
            "seed": k,
            "label": int(rng.integers(-1, 2)),
            "text": f"The {g} was known for {s} {k}",
        }
        for g in ("man", "woman")
        for t in range(3)
        for s in ("original", "paranmt:0")
        for k in (3, 9)
    ]
    return pd.DataFrame(rows)


def test_report_files(tmp_path) -> None:  # noqa: ANN001
    frame = _frame()
    frame.loc[0, "text"] = "<script>alert(1)</script> & more"
    data = PromptData.from_frame(frame, parses={"paranmt:0": "(ROOT (P0))"})
    result = analyze(frame, groups=GROUPS, n_draws=5, parses=data.parses)
    written = write_prompts_report(result, tmp_path / "out", frame=frame, data_summary=data.summary())
    payload = json.loads(written["json"].read_text())
    assert set(payload["distribution"]["man"]) == {"negative", "neutral", "positive"}
    assert payload["kl"]["man"]["woman"] >= 0 and set(payload["kl"]) == set(result.groups)
    assert payload["import"] == {"n_rows": 24, "n_unlabelled": 0}
    assert payload["parses"]["paranmt:0"] == "(ROOT (P0))"
    assert payload["scorer_check"]["note"].startswith("the labels came with the data")
    groups = pd.read_csv(written["csv:groups"])
    assert set(groups["scope"]) == {"all", "baseline"} and "mean_regard" in groups
    kl = pd.read_csv(written["csv:kl"], index_col=0)
    assert list(kl.columns) == list(result.groups)
    html = written["html"].read_text()
    assert "<script>alert(1)" not in html and "data:image/png;base64," in html
    assert html.count("<img") == 2


def test_results_json_is_the_analysis_read_back(tmp_path) -> None:  # noqa: ANN001
    """The report's results.json holds ``to_dict()``; ``from_dict`` reads it (its extra entries ignored) to the same analysis."""
    result = analyze(_frame(1), groups=GROUPS, smoothing=0.0, n_draws=3, n_resamples=50)
    written = write_prompts_report(result, tmp_path, formats=("json",))
    payload = json.loads(written["json"].read_text())
    again = type(result).from_dict(payload)
    assert again == result and again.to_json() == result.to_json()
    assert again.kl.equals(result.kl) and again.counts.equals(result.counts)
    assert again.verdicts == result.verdicts


def test_unknown_format(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(InputError, match="unknown report format"):
        write_prompts_report(None, tmp_path, formats=("pdf",))  # type: ignore[arg-type]


def test_html_carries_no_control_characters_from_model_text() -> None:
    rows = [
        {
            "group": g,
            "template": "t",
            "structure": s,
            "seed": k,
            "label": 0,
            "text": f"XYZ said \x1b[31mred\x1b[0m and \x07 bell {k}",
        }
        for g in ("a", "b")
        for s in ("original", "x")
        for k in range(3)
    ]
    frame = pd.DataFrame(rows)
    groups = GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),))
    html = render_prompts_html(analyze(frame, groups=groups, n_draws=2, n_resamples=0), frame=frame, plots=False)
    assert "\x1b" not in html and "\x07" not in html and "red" in html
