"""The decoding line of report.md, report.html and index.html: the settings as sent, the same in every header."""

from __future__ import annotations

import dataclasses
import html
import json
import re

from fairtalk.report import md_escape, render_html, render_markdown
from fairtalk.report._decoding import decoding_text, result_decoding
from fairtalk.results import AuditProvenance

#: What a greedy run sends: no temperature, top-k or top-p; a stop string with markup in it.
GREEDY = {
    "do_sample": False,
    "max_new_tokens": 40,
    "temperature": None,
    "top_k": None,
    "top_p": None,
    "stop": ["</code><b>User:"],
    "repetition_penalty": None,
}


def _audited(result):  # noqa: ANN001, ANN202
    audit = AuditProvenance(model="openai:bot", decoding=GREEDY)
    return dataclasses.replace(result, provenance=dataclasses.replace(result.provenance, audit=audit))


def test_every_per_axis_header_shows_the_decoding_the_model_was_sent(result) -> None:  # noqa: ANN001
    audited = _audited(result)
    line = decoding_text(GREEDY)
    assert line is not None and json.loads(line) == GREEDY and '"temperature": null' in line  # greedy: no temperature
    assert result_decoding(audited) == line
    markdown = render_markdown(audited).splitlines()
    assert f"decoding {md_escape(line)}" in markdown[:6]  # in the header, before the summary table
    page = render_html(audited, plots=False)
    shown = re.search(r'<p class="meta" id="decoding">decoding <code>(.*?)</code></p>', page)
    assert shown is not None and html.unescape(shown.group(1)) == line  # escaped: the stop string's markup is inert
    assert page.index('id="decoding"') < page.index('id="summary"')


def test_scored_responses_have_no_decoding_line(result) -> None:  # noqa: ANN001
    assert result_decoding(result) is None  # `fairtalk score`: the responses came from elsewhere
    assert "decoding" not in render_markdown(result) and 'id="decoding"' not in render_html(result, plots=False)


def test_the_served_model_line_counts_each_name_flags_one_not_asked_for_and_escapes_markup(result) -> None:  # noqa: ANN001
    from fairtalk.results import ServedProvenance

    served = ServedProvenance("llama-3.1", {"llama-3.1": 12, "<b>qwen_2</b>": 6}, 2)
    audited = dataclasses.replace(
        result, provenance=dataclasses.replace(result.provenance, audit=AuditProvenance(model="openai:x", served=served))
    )
    line = (
        "served models 'llama-3.1' (12 answers), '<b>qwen_2</b>' (6 answers), unnamed (2 answers): "
        "'<b>qwen_2</b>' not the model asked for ('llama-3.1')"
    )
    markdown = render_markdown(audited).splitlines()
    assert f"**{md_escape(line)}.**" in markdown[: markdown.index("") + 12]  # in the header, before the summary table
    page = render_html(audited, plots=False)
    assert f'<span class="badge warn">served model</span> {html.escape(line).replace("&#x27;", "&#39;")}.</p>' in page
    assert page.index('id="served-model"') < page.index('id="summary"')
    asked = dataclasses.replace(served, counts={"llama-3.1": 20}, n_unknown=0)
    plain = dataclasses.replace(audited, provenance=dataclasses.replace(audited.provenance, audit=AuditProvenance(served=asked)))
    assert "served model 'llama-3.1' (20 answers)." in render_markdown(plain).splitlines()
    assert '<p class="meta" id="served-model">served model &#39;llama-3.1&#39; (20 answers).</p>' in render_html(
        plain, plots=False
    )
    unnamed = dataclasses.replace(served, counts={}, n_unknown=20)  # the server named no model: no line
    for nothing in (
        result,
        dataclasses.replace(result, provenance=dataclasses.replace(result.provenance, audit=AuditProvenance(served=unnamed))),
    ):
        assert "served model" not in render_markdown(nothing) and 'id="served-model"' not in render_html(nothing, plots=False)
