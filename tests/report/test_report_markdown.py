"""The Markdown table: the paper's Tables 3-6 rows and columns, % for rates, p floor, notes."""

from __future__ import annotations

import dataclasses

from fairtalk.report import md_escape, render_markdown, summary_rows
from fairtalk.report._table import format_p, measure_label
from fairtalk.results import Provenance, ScoringSettings


def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def test_header_names_the_groups_and_the_columns(result) -> None:
    header = _table_lines(render_markdown(result))[0]
    cells = [c.strip() for c in header.strip("|").split("|")]
    # the verdict next to the measure: a page narrower than the table (GitHub's ~980 px) still shows it
    assert cells[:4] == ["Measure", "Verdict", "male", "female"]
    assert cells[4:11] == ["Difference (%)", "Z", "p", "p (paired)", "p (adj.)", "95% CI (A−B)", "Effect size"]
    assert cells[11:13] == ["Equivalence margin, p", "MDE"]
    assert cells[13] == "Masked A vs B"


def test_each_row_gives_its_verdict_next_to_its_measure(result) -> None:
    rows = {row.label: row for row in summary_rows(result)}
    for line in _table_lines(render_markdown(result))[2:]:
        cells = [c.strip().strip("*").strip() for c in line.strip("|").split("|")]
        row = rows[cells[0].removesuffix(" *").strip("*").strip()]
        assert cells[1] == md_escape(row.verdict) and cells[2:4] == [md_escape(row.a), md_escape(row.b)]


def test_rows_follow_the_paper_order_with_rates_in_percent(result) -> None:
    lines = _table_lines(render_markdown(result))[2:]
    labels = [line.strip("|").split("|")[0].strip().strip("*") for line in lines]
    assert labels == [
        "Diversity (%)",
        "Offense Rate (%)",
        "Sentiment Positive (%)",
        "Sentiment Negative (%)",
        "Ave. Career Word Numbers per Response",
        "Ave. Family Word Numbers per Response",
        "Ave. Length (words per response)",
        "Refusal Rate (%)",
    ]
    offense = next(line for line in lines if "Offense" in line)
    for cell in ("21.081", "23.758", "-12.7%", "-24.867", "< 1e-5", "[-2.890, -2.460] pp", "h = -0.065"):
        assert cell in offense
    career = next(line for line in lines if "Career" in line)
    assert "0.0095" in career and "0.0084" in career and "+11.6%" in career


def test_significant_rows_are_bold_and_others_not(result) -> None:
    lines = _table_lines(render_markdown(result))[2:]
    bold = {line.split("|")[1].strip() for line in lines if line.split("|")[1].strip().startswith("**")}
    assert len(bold) == 6
    length = next(line for line in lines if "Length" in line)
    assert "**" not in length


def test_notes_name_distinct_definition_and_correction(result) -> None:
    text = render_markdown(result)
    assert "correction: Holm" in text
    assert "Distinct-n definition: paper" in text
    bh = dataclasses.replace(result, correction="bh", provenance=Provenance(options=ScoringSettings(distinct="standard")))
    text = render_markdown(bh)
    assert "Benjamini-Hochberg" in text and "Distinct-n definition: standard" in text


def test_corpus_measure_has_no_z() -> None:
    assert format_p(None) == "–"


def test_format_p() -> None:
    assert format_p(1e-6) == "< 1e-5"
    assert format_p(0.0) == "< 1e-5"
    assert format_p(0.0283) == "0.028"
    assert format_p(2.8e-5) == "2.8e-05"
    assert format_p(float("nan")) == "n/a"


def test_measure_labels_for_custom_keys() -> None:
    assert measure_label("pleasant_words") == "Ave. Pleasant Word Numbers per Response"
    assert measure_label("toxicity_rate") == "Toxicity Rate (%)"
    assert measure_label("regard") == "Regard"


def test_markdown_escapes_hostile_group_names(result) -> None:
    hostile = dataclasses.replace(result, groups=("a|b", "<script>x</script>"))
    header = _table_lines(render_markdown(hostile))[0]
    assert "a\\|b" in header and "&lt;script>" in header and "<script>" not in header
    assert md_escape("< 1e-5") == "< 1e-5"


def test_summary_rows_flag_significance(result) -> None:
    flags = {r.name: r.significant for r in summary_rows(result)}
    assert flags["offense_rate"] and not flags["length"] and not flags["refusal_rate"]


def test_each_axis_page_states_the_run_s_gate_and_only_its_own_decisions(result) -> None:
    """Review finding: the axis pages did not state the gate requested; they read evaluate's decisions, never decide."""
    from fairtalk.gates import evaluate
    from fairtalk.report import render_html

    assert result.losses is not None  # the fixture's losses fail every gate (their sides are not recorded)
    calm = tuple(dataclasses.replace(m, p_adjusted=0.5, verdict="inconclusive") for m in result.measures)  # no key fails
    result = dataclasses.replace(result, measures=calm)
    gender = dataclasses.replace(result, input_summary={k: v for k, v in result.input_summary.items() if k != "n_missing_side"})
    race = dataclasses.replace(result, axis="race", groups=("x", "y"))
    outcome = evaluate({"gender": gender, "race": race}, "fail-on-bias")
    assert not outcome.passed and all(d.passed for d in outcome.decisions)  # only race's lost pairs fail it
    md = render_markdown(gender, gates=[outcome])
    section = md.split("## Gate requested\n")[1].split("\n## ")[0]
    assert f"**{md_escape(outcome.headline)}**" in section and "Gate fail-on-bias: FAILED" in section
    assert "On this axis (gender): passed." in section
    ours = [d for d in outcome.decisions if d.axis == "gender"]
    items = [line for line in section.splitlines() if line.startswith("- ")]
    assert items == [f"- {md_escape(d.key or '')}: passed — {md_escape(d.reason)}." for d in ours]  # not race's
    md = render_markdown(race, gates=[outcome])
    assert "On this axis (race): FAILED." in md and "- FAILED — race: answers lost on 3 of" in md
    html = render_html(gender, plots=False, gates=[outcome])
    assert 'data-gate="fail-on-bias" data-passed="false"' in html and "On this axis (gender)" in html
    assert "Gate requested" not in render_markdown(gender) and "data-gate" not in render_html(gender, plots=False)
