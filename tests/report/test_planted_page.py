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
from fairtalk.results import PlantedGap, PlantedRecovery, Verdict


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
