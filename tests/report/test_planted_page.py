"""``reproduce planted``'s report.html says what planted.md says, and fits a phone's width.

The page lacked planted.md's verdict line ("Every planted gap inside its interval: yes"), the
planted models' explanation and the "Times" line; it had no viewport and no ``lang``, and its
figure had no max-width, so at 400 px the whole page scrolled sideways.
"""

from __future__ import annotations

import dataclasses
import html
import re
import shutil
from pathlib import Path

import pytest

from fairtalk.report._planted import render_planted_html, render_planted_markdown, write_planted_report
from fairtalk.results import Change, DebiasedGap, PlantedGap, PlantedRecovery, Verdict


def _gap(rate: float, key: str, gap: float, ci: tuple[float, float]) -> PlantedGap:
    true_gap = rate * (1 - 0.02)
    covered = ci[0] <= true_gap <= ci[1]
    return PlantedGap(rate, key, 200, 0.02, true_gap, int(200 * rate), gap, ci, covered, 0.3, Verdict.INCONCLUSIVE, 0.08)


def _result(*, missed: bool = False) -> PlantedRecovery:
    planted = [_gap(0.0, "offense_rate", 0.0, (-0.039, 0.039)), _gap(0.1, "offense_rate", 0.065, (0.038, 0.108))]
    if missed:
        planted.append(_gap(0.05, "sentiment_negative", 0.0, (-0.01, 0.01)))
    return PlantedRecovery(
        axis="gender",
        groups=("male", "female"),
        base_model="builtin:retrieval",
        n_pairs=200,
        seed=0,
        mode="quick",
        planted=tuple(planted),
        timings={"planted models": 6.0, "total": 12.0},
    )


def _debiased() -> PlantedRecovery:
    """A result with both tables: the planted models', and the models trained on a planted corpus."""
    rows = []
    for architecture in ("seq2seq", "retrieval"):
        for model, change in (("baseline", None), ("cda", Change.IMPROVED), ("wer", Change.INCONCLUSIVE)):
            verdict = Verdict.DIFFERENT if model == "baseline" else Verdict.EQUIVALENT
            rows.append(
                DebiasedGap(
                    model,
                    "offense_rate",
                    0.246,
                    0.461,
                    0.215,
                    (0.19, 0.24),
                    verdict,
                    0.001,
                    None if change is None else -0.2,
                    (None, None) if change is None else (-0.23, -0.17),
                    None if change is None else 0.002,
                    change,
                    architecture,
                )
            )
    return dataclasses.replace(_result(missed=True), corpus_rate=0.5, corpus={"dialogues": 1000}, debiased=tuple(rows))


def _text(page: str) -> str:
    """The page's words as a reader sees them: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@pytest.mark.parametrize("missed", [False, True])
def test_the_page_says_every_sentence_planted_md_says(missed: bool) -> None:
    result = _result(missed=missed)
    page = _text(render_planted_html(result, b"\x89PNG"))
    markdown = render_planted_markdown(result)
    sentences = [line for line in markdown.splitlines() if line and not line.startswith(("|", "#"))]
    assert len(sentences) == 3  # the planted models, the verdict, the times
    for sentence in sentences:
        assert sentence.replace("`", "") in page, sentence
    assert f"Every planted gap inside its interval: {'no' if missed else 'yes'}." in page
    assert "Times: planted models 0.1 min, total 0.2 min." in page
    assert "answers group A, and group B's contexts as their group-A wording" in page


def test_a_gap_outside_its_interval_is_bold_in_the_page_as_in_the_markdown() -> None:
    result = _result(missed=True)
    assert "| **no** |" in render_planted_markdown(result)
    page = render_planted_html(result, b"\x89PNG")
    assert page.count("<strong>no</strong>") == 1 and '<span class="badge bias">no</span>' in page


def test_the_page_has_a_language_a_viewport_and_a_figure_that_shrinks_to_the_page() -> None:
    page = render_planted_html(_result(), b"\x89PNG")
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    assert re.search(r"img\.chart \{[^}]*max-width: 100%", page) and '<img class="chart"' in page
    assert '<div class="scroll"><table class="planted">' in page  # a wide table scrolls in its own box


def test_model_text_is_escaped() -> None:
    hostile = dataclasses.replace(_result(), base_model="<b>x</b>")
    page = render_planted_html(hostile, b"\x89PNG")
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


def _md_tables(markdown: str) -> list[list[list[str]]]:
    """planted.md's tables, each a list of rows (the header first), each a list of cells."""
    tables: list[list[list[str]]] = []
    previous = ""
    for line in markdown.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append([cell.strip() for cell in line.strip("|").split("|")])
        previous = line
    return tables


def test_the_verdicts_come_right_after_the_measure_in_planted_md_and_the_page() -> None:
    """Review finding: the planted table's verdict was column 9 of 10 (the debiased table's 6 and 10 of 10), off-screen
    at 400 px and on GitHub's page; report.md, report.html and the comparison give it right after the measure."""
    result = _debiased()
    planted, debiased = _md_tables(render_planted_markdown(result))
    assert planted[0][1:3] == ["measure", "verdict"]
    assert [row[2] for row in planted[1:]] == [row.verdict.value for row in result.planted]
    assert debiased[0][1:4] == ["measure", "verdict", "change verdict"]
    assert [row[2] for row in debiased[1:]] == [row.verdict.value for row in result.debiased]
    assert [row[3] for row in debiased[1:]] == [
        "–" if r.change_verdict is None else r.change_verdict.value for r in result.debiased
    ]
    page = render_planted_html(result, b"\x89PNG")
    heads = [re.findall(r"<th>([^<]*)</th>", table) for table in re.findall(r"<thead>(.*?)</thead>", page)]
    assert heads == [planted[0], debiased[0]]  # the page's columns are planted.md's
    verdicts = re.findall(r'<td class="verdict">([^<]*)</td>', page)
    assert verdicts[: len(result.planted)] == [row.verdict.value for row in result.planted]
    assert '<td class="num">' in page and '<td class="verdict">–</td>' in page  # a baseline has no change verdict


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make chromium)")
def test_at_400_px_the_page_does_not_scroll_sideways(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    result = _result(missed=True)
    page = write_planted_report(result, tmp_path / "planted")["html"]  # with the figure planted_png draws
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            view = browser.new_page(viewport={"width": 400, "height": 800})
            view.goto(page.as_uri())
            measured = view.evaluate(
                "() => ({scroll: document.documentElement.scrollWidth,"
                " chart: document.querySelector('img.chart').getBoundingClientRect().right})"
            )
        finally:
            browser.close()
    assert measured["scroll"] == 400 and 0 < measured["chart"] <= 400, measured


#: Each table's verdict headers (their left and right edges), and how wide the page scrolls.
_VERDICT_EDGES = """() => {
  const edges = [...document.querySelectorAll('table')].map(table =>
    [...table.querySelectorAll('th')].filter(t => t.textContent.trim().endsWith('verdict'))
      .map(t => { const box = t.getBoundingClientRect(); return [box.left, box.right]; }));
  return {edges, scroll: document.documentElement.scrollWidth};
}"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make chromium)")
def test_at_400_px_the_verdicts_are_in_view_without_scrolling_the_tables(tmp_path: Path) -> None:
    """Review finding: at 400 px the planted table's verdict (column 9 of 10) lay wholly off-screen, in its scroll box."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    page = write_planted_report(_debiased(), tmp_path / "planted")["html"]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            view = browser.new_page(viewport={"width": 400, "height": 800})
            view.goto(page.as_uri())
            measured = view.evaluate(_VERDICT_EDGES)
        finally:
            browser.close()
    assert measured["scroll"] == 400, measured  # the tables scroll in their own boxes, never the page
    assert [len(edges) for edges in measured["edges"]] == [1, 2], measured  # the planted table's; the debiased table's two
    for left, right in (edge for edges in measured["edges"] for edge in edges):
        assert 0 <= left < right <= 400, measured
