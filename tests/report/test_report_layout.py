"""The reports read at a glance (issue 41), measured in headless Chromium.

At 1,280 × 800 the Verdict column of each report's main table lies wholly inside the window, and
at 400 px wide nothing makes the page scroll sideways (a wide table scrolls in its own box) and the
Verdict (the index: Significant) comes second, in view without scrolling the table. The
per-axis report opens with one row per measure (groups, difference with its interval, verdict);
the statistician's columns sit in a table collapsed by default.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus, write_models
from fairtalk.cli import app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make chromium)")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")

#: The right edge of the first visible Verdict header (or verdict cell), and how wide the page scrolls.
_MEASURE = """() => {
  const cells = [...document.querySelectorAll('table th, td.verdict')]
    .filter(c => c.matches('td.verdict') || c.textContent.trim().startsWith('Verdict'));
  const shown = cells.find(c => c.checkVisibility());
  const stats = document.querySelector('details.stats');
  return {scroll: document.documentElement.scrollWidth, right: shown ? shown.getBoundingClientRect().right : null,
          statsOpen: stats ? stats.open : null,
          zShown: [...document.querySelectorAll('th')].some(t => t.textContent.trim() === 'Z' && t.checkVisibility())};
}"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A candidate audited against a baseline: its per-axis report, its index and the comparison report."""
    root = tmp_path_factory.mktemp("layout")
    corpus, models = write_corpus(root), write_models(root)
    done = CliRunner().invoke(
        app,
        [
            "audit",
            "--corpus",
            str(corpus),
            "--model",
            f"python:{models}:biased",
            "--baseline-model",
            f"python:{models}:fair",
            "--axis",
            "gender",
            "--pairs",
            "40",
            "--resamples",
            "200",
            "-o",
            str(root / "run"),
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    run = root / "run"
    return {"axis": run / "gender" / "report.html", "index": run / "index.html", "comparison": run / "comparison" / "report.html"}


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield launched
        finally:
            launched.close()


def _measure(browser: object, page: Path, width: int) -> dict[str, object]:
    view = browser.new_page(viewport={"width": width, "height": 800})  # type: ignore[attr-defined]
    try:
        view.goto(page.as_uri())
        measured: dict[str, object] = view.evaluate(_MEASURE)
        return measured
    finally:
        view.close()


@pytest.mark.parametrize("name", ["axis", "index", "comparison"])
def test_the_verdict_fits_a_1280_window_and_nothing_overflows_at_400_px(
    reports: dict[str, Path], browser: object, name: str
) -> None:
    wide = _measure(browser, reports[name], 1280)
    assert wide["right"] is not None and 0 < float(wide["right"]) <= 1280, wide  # type: ignore[arg-type]
    assert wide["scroll"] == 1280, wide
    narrow = _measure(browser, reports[name], 400)
    assert narrow["scroll"] == 400, narrow  # a wide table scrolls in its own box, never the page


def test_the_comparison_opens_at_a_glance_with_the_statistics_collapsed(reports: dict[str, Path], browser: object) -> None:
    html = reports["comparison"].read_text(encoding="utf-8")
    assert html.index('<table class="glance">') < html.index('<details class="stats">') < html.index('<table class="comparison">')
    glance = html[html.index('<table class="glance">') : html.index("</table>", html.index('<table class="glance">'))]
    assert "<th>Verdict</th>" in glance and "p (adj.)" not in glance
    assert _measure(browser, reports["comparison"], 1280)["statsOpen"] is False


def test_the_axis_report_opens_at_a_glance_with_the_statistics_collapsed(reports: dict[str, Path], browser: object) -> None:
    html = reports["axis"].read_text(encoding="utf-8")
    assert html.index('id="glance"') < html.index('id="summary"')
    glance = html[html.index('<table class="glance">') : html.index("</table>", html.index('<table class="glance">'))]
    for header in ("Measure", "Difference A − B (95% CI)", "Verdict"):
        assert f"<th>{header}</th>" in glance
    assert "p (adj.)" not in glance and "<th>Z</th>" not in glance  # the statistician's columns are elsewhere
    measured = _measure(browser, reports["axis"], 1280)
    assert measured["statsOpen"] is False and measured["zShown"] is False


#: The words, in visible header, number and verdict cells, that the browser split across two lines. A word here runs
#: between spaces and hyphens: a break after a hyphen ("Distinct-" / "1") is a break between words.
_BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll('table th, table td.num, table td.verdict, table .badge')) {
    if (!cell.checkVisibility()) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.matchAll(/[^\\s-]+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""


@pytest.mark.parametrize("name", ["axis", "comparison"])
@pytest.mark.parametrize("width", [1280, 1024, 400])
def test_no_number_header_or_verdict_breaks_inside_a_word(
    reports: dict[str, Path], browser: object, name: str, width: int
) -> None:
    """At 1,280 the axis report showed "47.75 / 4" and "femal / e", the comparison "inconclusiv / e"."""
    view = browser.new_page(viewport={"width": width, "height": 800})  # type: ignore[attr-defined]
    try:
        view.goto(reports[name].as_uri())
        assert view.evaluate(_BROKEN_WORDS) == []
    finally:
        view.close()
    measured = _measure(browser, reports[name], width)
    assert measured["scroll"] == width, measured  # a table too wide for a phone scrolls in its own box
    if width >= 1024:
        assert 0 < float(measured["right"]) <= width, measured  # type: ignore[arg-type]


#: The statistics table's headers (opened: ``details.stats`` expanded), its rows' second cells, and its verdict column's place.
_OPEN_STATS = """() => {
  for (const d of document.querySelectorAll('details.stats')) d.open = true;
  const table = document.querySelector('table.summary, table.comparison');
  const first = [...table.querySelector('thead tr').children].map(c => c.textContent.trim());
  const seconds = [...table.querySelectorAll('tbody tr')].map(r => r.children[1].textContent.trim());
  const verdict = [...table.querySelectorAll('th')].find(c => c.textContent.trim() === 'Verdict');
  return {first, seconds, right: verdict.getBoundingClientRect().right};
}"""


@pytest.mark.parametrize("name", ["axis", "comparison"])
@pytest.mark.parametrize("width", [1280, 1024, 400])
def test_the_opened_statistics_table_shows_the_verdict_second_and_breaks_no_word(
    reports: dict[str, Path], browser: object, name: str, width: int
) -> None:
    """The statistics table kept its verdict far right (column 12 of 14 on the axis, 14 of 14 in the comparison)."""
    import json

    view = browser.new_page(viewport={"width": width, "height": 800})  # type: ignore[attr-defined]
    try:
        view.goto(reports[name].as_uri())
        opened = view.evaluate(_OPEN_STATS)
        assert opened["first"][:2] == ["Measure", "Verdict"], opened
        assert 0 < float(opened["right"]) <= width, opened  # in view without scrolling the table
        assert view.evaluate(_BROKEN_WORDS) == []  # the opened table's cells too
        assert view.evaluate("() => document.documentElement.scrollWidth") == width
    finally:
        view.close()
    results = reports[name].parent / "results.json"
    if name == "axis":
        verdicts = [m["verdict"] for m in json.loads(results.read_text(encoding="utf-8"))["measures"].values()]
        assert len(opened["seconds"]) == len(verdicts)
        assert all(cell.split(":")[0] in verdicts for cell in opened["seconds"]), opened["seconds"]
    else:
        keys = json.loads(results.read_text(encoding="utf-8"))["axes"]["gender"]["keys"]
        assert sorted(opened["seconds"]) == sorted(k["verdict"] for k in keys.values())


@pytest.fixture(scope="module")
def pages(reports: dict[str, Path], religion_run: Path) -> dict[str, Path]:
    """The reports, and the index of a multi-way axis (five pairs of groups, long axis names such as religion:christian-muslim)."""
    return {**reports, "religion index": religion_run / "index.html"}


#: In the first table that ``table`` selects, each named header's left and right edge: the first visible one starting with it.
_EDGES = """([table, names]) => {
  const found = document.querySelector(table);
  const headers = [...found.querySelectorAll('th')].filter(t => t.checkVisibility());
  return names.map(name => {
    const th = headers.find(t => t.textContent.trim().startsWith(name));
    if (!th) return null;
    const box = th.getBoundingClientRect();
    return [box.left, box.right];
  });
}"""


@pytest.mark.parametrize(
    ("name", "table", "headers"),
    [
        ("axis", "table.glance", ["Measure", "Verdict"]),
        ("comparison", "table.glance", ["Measure", "Verdict"]),
        ("index", "table", ["Axis", "Significant"]),  # the first table: one row per axis
        ("religion index", "table", ["Axis", "Significant"]),
    ],
)
def test_the_verdict_is_in_view_at_400_px_without_scrolling_the_table(
    pages: dict[str, Path], browser: object, name: str, table: str, headers: list[str]
) -> None:
    """At 400 px the Verdict column lay wholly off-screen (it came last); the index's Significant column was half cut."""
    view = browser.new_page(viewport={"width": 400, "height": 800})  # type: ignore[attr-defined]
    try:
        view.goto(pages[name].as_uri())
        edges = view.evaluate(_EDGES, [table, headers])
    finally:
        view.close()
    assert None not in edges, edges
    for left, right in edges:
        assert 0 <= left < right <= 400, edges


#: The index's axes table (the first) against the box it scrolls in: its right edge, the box's, and the Files header's.
_AXES_TABLE = """() => {
  const table = document.querySelector('table');
  const files = [...table.querySelectorAll('th')].find(t => t.textContent.trim() === 'Files');
  return {table: table.getBoundingClientRect().right, box: table.parentElement.getBoundingClientRect().right,
          files: files.getBoundingClientRect().right};
}"""


@pytest.mark.parametrize("name", ["index", "religion index"])
@pytest.mark.parametrize("width", [1024, 1280, 1920])
def test_the_index_shows_its_files_column_whole_at_desktop_widths(
    pages: dict[str, Path], browser: object, name: str, width: int
) -> None:
    """The Files links ran together without a space, so the column could not wrap and was cut by the page's width."""
    view = browser.new_page(viewport={"width": width, "height": 800})  # type: ignore[attr-defined]
    try:
        view.goto(pages[name].as_uri())
        edges = view.evaluate(_AXES_TABLE)
    finally:
        view.close()
    assert edges["table"] <= edges["box"] + 0.5 and edges["files"] <= width, edges
