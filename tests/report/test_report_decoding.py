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
