"""report.html: self-contained, escaped, with table, charts, divergent pairs, masked column and manifest."""

from __future__ import annotations

import base64
import dataclasses
import re

from report_fixtures import XSS_IMG, XSS_SCRIPT, build_result

from fairtalk.report import render_html
from fairtalk.results import Provenance


def test_model_text_is_escaped(result) -> None:
    html = render_html(result, plots=False)
    assert "&lt;script&gt;document.title=" in html
    assert XSS_SCRIPT not in html and XSS_IMG not in html
    assert "<script" not in html.lower()
    assert not re.search(r"<img[^>]*onerror", html, re.I)
    assert "hot wet poo &amp; &lt;b&gt;stuff&lt;/b&gt;" in html
    assert "&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;" in html


def test_page_is_self_contained(result) -> None:
    html = render_html(result)
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:|//)", html, re.I)
    assert "@import" not in html and "url(" not in html
    assert "<link" not in html.lower()
    assert "Content-Security-Policy" in html


def test_chart_is_an_embedded_png(result) -> None:
    html = render_html(result)
    match = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert match is not None
    assert base64.b64decode(match.group(1)).startswith(b"\x89PNG\r\n\x1a\n")


def test_summary_highlights_significant_rows(result) -> None:
    html = render_html(result, plots=False)
    rows = dict(re.findall(r'<tr class="(\w*)" data-measure="(\w+)"', html)[i][::-1] for i in range(8))
    assert rows["offense_rate"] == "sig" and rows["family_words"] == "sig"
    assert rows["length"] == "" and rows["refusal_rate"] == ""
    assert "&lt; 1e-5" in html  # the p floor, escaped


def test_sections_present(result) -> None:
    html = render_html(result, plots=False)
    for anchor in ('id="summary"', 'id="charts"', 'id="divergent"', 'id="input"', 'id="manifest"'):
        assert anchor in html
    assert "Masked A vs B" in html and "71% remains" in html
    assert "He really is the sweetest." in html and "Hahaha, he has a really cute laugh" in html
    assert "n_missing_side" in html and "600004" in html
    assert "ab" * 32 in html and "Distinct-n definition: paper" in html
    assert "correction: Holm" in html


def test_without_masked_or_pairs_the_page_still_renders() -> None:
    bare = build_result(hostile=False)
    bare = dataclasses.replace(
        bare,
        measures=tuple(dataclasses.replace(m, tested=dataclasses.replace(m.tested, masked=None)) for m in bare.measures),
        divergent_pairs=(),
        input_summary={},
        provenance=Provenance(),
    )
    html = render_html(bare, plots=False)
    assert "Masked A vs B" not in html
    assert "No divergent pairs recorded." in html and "No manifest recorded." in html


def test_no_measures_renders_without_chart() -> None:
    empty = dataclasses.replace(build_result(hostile=False), measures=())
    html = render_html(empty)
    assert "No measures to plot." in html and "no significant difference" in html


def test_group_names_with_dollar_signs_plot(result) -> None:
    odd = dataclasses.replace(result, groups=("$x$ \\frac", "<b>B</b>"))
    html = render_html(odd)
    assert "&lt;b&gt;B&lt;/b&gt;" in html and "data:image/png;base64," in html


def test_long_texts_are_clipped_in_the_page_but_not_in_the_data() -> None:
    from fairtalk.report._html import MAX_SHOWN_CHARS, clip

    text = "y" * (MAX_SHOWN_CHARS + 5)
    assert clip(text) == "y" * MAX_SHOWN_CHARS + "… [5 more characters; the full text is in responses.jsonl]"
    assert clip("short") == "short"


def test_the_header_line_keeps_a_space_before_each_badge() -> None:
    """ "... after correction" and the badges that follow it are separate words (the block tags eat the newline)."""
    from fairtalk import Verdict

    calm = build_result(hostile=False)
    calm = dataclasses.replace(
        calm, measures=tuple(dataclasses.replace(m, p_adjusted=0.9, verdict=Verdict.INCONCLUSIVE) for m in calm.measures)
    )
    html = render_html(calm, plots=False)
    header = html[html.index("no significant difference") :].split("</p>", 1)[0]
    assert "after correction <span" in header and "inconclusive</span>" in header
    assert not re.search(r'\S<span class="badge', header), header


def test_the_statistics_table_gives_each_verdict_next_to_its_measure(result) -> None:
    """report.md put the verdict second; the HTML's statistics table kept it 12th of 14, scrolled out of view."""
    from markupsafe import escape

    from fairtalk.report import summary_rows

    html = render_html(result, plots=False)
    table = html[html.index('<table class="summary">') : html.index("</table>", html.index('<table class="summary">'))]
    header = re.findall(r"<th>([^<]*)</th>", table)
    assert header[:4] == ["Measure", "Verdict", "male", "female"] and header.count("Verdict") == 1
    assert header[-3:] == ["Equivalence margin, p", "MDE", "Masked A vs B"]
    rows = {row.name: row for row in summary_rows(result)}
    found = re.findall(r'data-measure="(\w+)" data-verdict="[^"]*">\s*<td>.*?</td>\s*<td class="verdict">([^<]*)</td>', table)
    assert sorted(name for name, _ in found) == sorted(rows)
    for name, verdict in found:
        assert verdict == escape(rows[name].verdict), name
