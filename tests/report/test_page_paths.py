"""The pages name files from where they lie: no absolute path, none relative to the shell; each links back to its run.

An audit with ``--baseline-model`` run with ``-o out`` (relative) said ``fairtalk compare: out against
out/baseline`` in its comparison's title, and ``from the run store out/store.sqlite`` in each axis
report, both relative to the shell's folder, not to the page (absolute with an absolute ``-o``).
Neither the axis reports nor the comparison linked back to the run's index.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audit_toys import write_corpus, write_models
from fairtalk.cli import app


def _run(*args: str) -> None:
    done = CliRunner().invoke(app, [*args, "-q"])
    assert done.exit_code in (0, 1), done.output


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """In a folder: ``audit ... --baseline-model ... -o out`` and ``compare out/baseline out -o cmp``, both relative."""
    folder = tmp_path_factory.mktemp("paths")
    corpus, models = write_corpus(folder), write_models(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        audit = ["audit", "--corpus", corpus.name, "--model", f"python:{models.name}:biased", "--axis", "gender"]
        _run(*audit, "--baseline-model", f"python:{models.name}:fair", "--pairs", "40", "--resamples", "200", "-o", "out")
        _run("compare", "out/baseline", "out", "-o", "cmp")
    yield folder


def _hrefs(page: Path) -> list[str]:
    return [h for h in re.findall(r'href="([^"]*)"', page.read_text(encoding="utf-8")) if not h.startswith(("#", "data:"))]


def _md_links(page: Path) -> list[str]:
    return re.findall(r"\]\(([^)]*)\)", page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["out/comparison", "cmp"])
def test_the_comparison_names_the_folders_from_the_page_never_from_the_shell(root: Path, name: str) -> None:
    html = (root / name / "report.html").read_text(encoding="utf-8")
    md = (root / name / "report.md").read_text(encoding="utf-8")
    assert "<title>fairtalk compare: out against baseline</title>" in html
    assert "<h1>fairtalk compare: out against baseline</h1>" in html and md.startswith(
        "# fairtalk compare: out against baseline\n"
    )
    base, cand = ("../baseline", "..") if name == "out/comparison" else ("../out/baseline", "../out")
    assert f"baseline <code>{base}</code>" in html and f"candidate <code>{cand}</code>" in html
    assert f"baseline `{base}` · candidate `{cand}`" in md
    for text in (html, md):
        assert str(root) not in text and re.search(r"(?<!\.\./)out/baseline", text) is None  # only from the page
    recorded = json.loads((root / name / "results.json").read_text(encoding="utf-8"))
    assert (recorded["baseline"], recorded["candidate"]) == ("out/baseline", "out")  # the machine's record: as given


@pytest.mark.parametrize("name", ["out/comparison", "cmp"])
def test_the_comparison_links_the_index_of_each_run_it_compares(root: Path, name: str) -> None:
    page = root / name / "report.html"
    wanted = {(root / "out" / "index.html").resolve(), (root / "out" / "baseline" / "index.html").resolve()}
    for links in (_hrefs(page), _md_links(root / name / "report.md")):
        assert {(page.parent / href).resolve() for href in links} == wanted, links
    html = page.read_text(encoding="utf-8")
    assert html.index('id="index-link"') < html.index("<h1>")  # above the title


@pytest.mark.parametrize("run", ["out", "out/baseline"])
def test_an_axis_report_names_the_store_from_the_page_and_links_the_run_s_index(root: Path, run: str) -> None:
    store = "../store.sqlite" if run == "out" else "../../store.sqlite"  # the baseline's run shares the candidate's store
    for page in ("report.html", "report.md"):
        path = root / run / "gender" / page
        text = path.read_text(encoding="utf-8")
        assert f"from the run store {store}, 0 failed." in text, text[:2000]
        assert (path.parent / store).resolve() == (root / "out" / "store.sqlite").resolve()
        assert str(root) not in text.replace(f"python:{root}", "")
        links = _hrefs(path) if page.endswith(".html") else _md_links(path)
        assert "../index.html" in links and (path.parent / "../index.html").resolve() == (root / run / "index.html").resolve()
    html = (root / run / "gender" / "report.html").read_text(encoding="utf-8")
    assert html.index('<a href="../index.html">') < html.index("<h1>")


def test_every_link_of_the_run_s_pages_leads_to_a_file_there(root: Path) -> None:
    pages = [*root.glob("out/**/*.html"), *root.glob("cmp/*.html")]
    assert len(pages) >= 5
    for page in pages:
        for href in _hrefs(page):
            assert (page.parent / href).is_file(), (page, href)


def test_a_report_written_alone_links_no_index(root: Path) -> None:
    from fairtalk.report import render_html
    from fairtalk.results import AuditResult

    result = AuditResult.from_dict(json.loads((root / "out" / "gender" / "results.json").read_text(encoding="utf-8")))
    assert 'id="index-link"' not in render_html(result, plots=False)
