"""Headless Chromium renders report.html and no injected script or handler runs."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from fairtalk.report import render_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make chromium)")

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=2000",  # let any onerror/timer fire before the DOM is dumped
)


def _dump_dom(html: str, tmp_path) -> str:
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    profile = tmp_path / "profile"
    done = subprocess.run(
        [CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _assert_inert(dom: str) -> None:
    assert "<title>fairtalk audit: gender (male vs female)</title>" in dom
    assert "PWNED</title>" not in dom
    assert "data-pwned" not in re.search(r"<body[^>]*>", dom).group(0)
    assert not re.search(r"<script", dom, re.I)
    assert not re.search(r"<img[^>]*onerror", dom, re.I)
    # the payload is shown to the reader as text
    assert "&lt;script&gt;document.title='PWNED'" in dom
    assert "&lt;img src=x onerror=" in dom


def test_payload_stays_inert_in_chromium(result, tmp_path) -> None:
    _assert_inert(_dump_dom(render_html(result, plots=False), tmp_path))


def test_escaping_alone_keeps_payload_inert(result, tmp_path) -> None:
    """Without the Content-Security-Policy, escaping is what keeps the page safe."""
    html = render_html(result, plots=False, csp=False)
    assert "Content-Security-Policy" not in html
    _assert_inert(_dump_dom(html, tmp_path))


def test_the_probe_detects_a_live_script(tmp_path) -> None:
    """Control: the same payload, unescaped, does run; so the checks above can fail."""
    payload = "<script>document.title='PWNED';document.body.setAttribute('data-pwned','1')</script>"
    dom = _dump_dom(f"<!DOCTYPE html><html><head><title>t</title></head><body>{payload}</body></html>", tmp_path)
    assert "<title>PWNED</title>" in dom and 'data-pwned="1"' in dom


def test_full_page_with_chart_renders(result, tmp_path) -> None:
    dom = _dump_dom(render_html(result), tmp_path)
    assert 'class="chart"' in dom and "data:image/png;base64," in dom
    assert "Offense Rate (%)" in dom
