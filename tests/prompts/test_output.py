"""Tests for fairtalk.prompts.output and plots: results.json schema, CSVs, escaped HTML."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from fairtalk.errors import InputError
from fairtalk.prompts.analysis import analyze
from fairtalk.prompts.output import jsonable, write_prompts_report
from fairtalk.prompts.published import read_published


def test_report_files(published, tmp_path) -> None:
    imported = read_published(published, n_paraphrases=2)
    frame = imported.frame.copy()
    frame["text"] = frame["text"].astype(object)
    frame.loc[0, "text"] = "<script>alert(1)</script> & more"
    result = analyze(frame, n_draws=5, parses=imported.parses)
    written = write_prompts_report(result, tmp_path / "out", frame=frame, data_summary=imported.summary())
    payload = json.loads(written["json"].read_text())
    assert set(payload["distribution"]["man"]) == {"negative", "neutral", "positive"}
    assert payload["kl"]["man"]["woman"] >= 0 and set(payload["kl"]) == set(result.groups)
    assert payload["import"]["seeds"] == [3, 9]
    assert payload["parses"]["paranmt:0"] == "(ROOT (P0))"
    groups = pd.read_csv(written["csv:groups"])
    assert set(groups["scope"]) == {"all", "baseline"} and "mean_regard" in groups
    kl = pd.read_csv(written["csv:kl"], index_col=0)
    assert list(kl.columns) == list(result.groups)
    html = written["html"].read_text()
    assert "<script>alert(1)" not in html and "data:image/png;base64," in html
    assert html.count("<img") == 2


def test_unknown_format(tmp_path) -> None:
    with pytest.raises(InputError, match="unknown report format"):
        write_prompts_report(None, tmp_path, formats=("pdf",))  # type: ignore[arg-type]


def test_jsonable() -> None:
    assert jsonable({"a": (1.0, float("nan")), 2: float("inf")}) == {"a": [1.0, None], "2": None}


def test_html_carries_no_control_characters_from_model_text(tmp_path) -> None:  # noqa: ANN001
    import pandas as pd

    from fairtalk.prompts.analysis import analyze
    from fairtalk.prompts.output import render_prompts_html
    from fairtalk.prompts.templates import GroupPair, GroupSet

    rows = [{"group": g, "template": "t", "structure": s, "seed": k, "label": 0,
             "text": f"XYZ said \x1b[31mred\x1b[0m and \x07 bell {k}"}
            for g in ("a", "b") for s in ("original", "x") for k in range(3)]  # fmt: skip
    frame = pd.DataFrame(rows)
    groups = GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),))
    html = render_prompts_html(analyze(frame, groups=groups, n_draws=2, n_resamples=0), frame=frame, plots=False)
    assert "\x1b" not in html and "\x07" not in html and "red" in html
