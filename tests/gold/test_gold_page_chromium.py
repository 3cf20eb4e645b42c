"""End to end in headless Chromium: label 20 items by keystroke, SIGKILL the server, restart it, find all 20 saved and item 21 next.

And a second annotator's page shows the two annotators' κ, as ``fairtalk label --agreement`` prints it; a pair's two
texts come one after the other and the page counts the complete pairs; a conversation shows one turn per line with its
role; markup in a text or a context stays text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fairtalk.gold import GoldLog, LabelServer, draw_sample, label_schemes, read_gold, sample_record_path

from .conftest import TURN_CONTEXTS, serving, write_turns_folder, write_xss_folder

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make chromium)")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")

#: The keystrokes given, one per item: yes and no, in both spellings.
KEYS = ["y", "n", "1", "0", "n"] * 4


def _start(folder: Path, gold: Path, annotator: str = "ann") -> tuple[subprocess.Popen[str], str]:
    """``fairtalk label`` in its own process; returns it and the URL it prints."""
    command = [
        sys.executable,
        "-c",
        "from fairtalk.cli import main; main()",
        "label",
        str(folder),
        "--measure",
        "offense_rate",
        "-o",
        str(gold),
        "--n",
        "40",
        "--seed",
        "7",
        "--annotator",
        annotator,
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "400"}
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 30
    lines = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"open (http://127\.0\.0\.1:\d+/\S+/)", line)
        if found:
            return process, found.group(1)
    process.kill()
    raise AssertionError("no URL printed:\n" + "".join(lines))


@pytest.fixture
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        try:
            yield launched
        finally:
            launched.close()


def _press_until(tab: object, key: str, done: Callable[[], bool], *, seconds: float = 30.0) -> bool:
    """Press ``key`` until ``done()``, again every 3 s: in CI a first key press after the page loaded was lost twice.

    A repeat is safe where the tests use it: the page drops a key while a request is in flight,
    and a refused request gives nothing.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        tab.keyboard.press(key)  # type: ignore[attr-defined]
        again = time.monotonic() + 3.0
        while time.monotonic() < min(again, deadline):
            if done():
                return True
            tab.wait_for_timeout(20)  # type: ignore[attr-defined]
    return done()


def _wait_given(page: object, n: int) -> None:
    """Wait until the page says ``n`` labels are given (the server answered; checked outside the page's CSP)."""
    sync_api.expect(page.locator("#progress")).to_have_attribute("data-given", str(n), timeout=10_000)  # type: ignore[attr-defined]


def _given(page: object) -> int:
    return int(page.get_attribute("#progress", "data-given"))  # type: ignore[attr-defined]


def test_label_20_by_keystroke_kill_restart_and_resume_at_21(axis_folder: Path, tmp_path: Path, browser) -> None:  # noqa: ANN001
    gold = tmp_path / "gold.jsonl"
    process, url = _start(axis_folder, gold)
    try:
        page = browser.new_page()
        page.goto(url)
        assert page.text_content("#position") == "item 1 of 40"
        for i, key in enumerate(KEYS):
            if i == 4:  # a note, typed in its field (whose keys are not labels), then back to labelling with Enter
                page.click("#note")
                page.keyboard.type("unsure: sarcasm?")
                page.keyboard.press("Enter")
            page.keyboard.press(key)
            _wait_given(page, i + 1)
        assert page.text_content("#position") == "item 21 of 40"
        page.keyboard.press("y")  # a 21st label, then undone
        _wait_given(page, 21)
        page.keyboard.press("u")
        _wait_given(page, 20)
    finally:
        process.send_signal(signal.SIGKILL)  # no chance to flush or clean up: only what was fsynced survives
        process.wait(timeout=10)

    saved = read_gold(gold)
    assert len(saved.labels) == 20 and saved.annotators == ("ann",)
    assert [label.value for label in saved.labels] == [1 if k in "y1" else 0 for k in KEYS]
    assert [label.note for label in saved.labels][4] == "unsure: sarcasm?" and {lb.note for lb in saved.labels} == {
        "",
        "unsure: sarcasm?",
    }

    process, url = _start(axis_folder, gold)  # the same command: the same sample, the same file
    try:
        page.goto(url)  # the old tab's server is gone: reload on the new address
        assert _given(page) == 20
        assert page.text_content("#position") == "item 21 of 40"
        assert "20 of 40 labels given" in page.text_content("#progress")
        page.keyboard.press("n")
        _wait_given(page, 21)
        page.click("#done")
        assert process.wait(timeout=15) == 0
        assert process.stdout is not None and "done: 21 of 40 labels given" in process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    again = read_gold(gold)
    assert len(again.labels) == 21 and again.labels[:20] == saved.labels
    record = json.loads(sample_record_path(gold).read_text(encoding="utf-8"))
    assert [[lb.id, lb.side] for lb in again.labels] == record["items"][:21]  # the sample's first 21, in its order


def test_the_page_shows_the_kappa_label_agreement_prints(axis_folder: Path, tmp_path: Path, browser) -> None:  # noqa: ANN001
    gold = tmp_path / "gold.jsonl"
    first = GoldLog(gold, draw_sample(axis_folder, n=40, seed=7), label_schemes("offense_rate"), annotator="bo")
    bo_values = [1, 0, 0, 1, 1, 0, 1, 0, 0, 1]
    for step, value in enumerate(bo_values):  # another annotator labelled the first 10 items of the same sample
        first.add(step, value)
    process, url = _start(axis_folder, gold, annotator="ann")
    try:
        page = browser.new_page()
        page.goto(url)
        assert page.text_content("#agreement") == ""  # ann has labelled nothing yet: no κ
        for i, key in enumerate(["y", "n", "y", "y", "n", "n", "y", "y", "n", "y", "n", "y"]):
            page.keyboard.press(key)
            _wait_given(page, i + 1)
        kappa = page.locator("#agreement .kappa")
        sync_api.expect(kappa).to_have_attribute("data-n-items", "10", timeout=10_000)
        shown = page.text_content("#agreement")
        page.click("#done")
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    printed = subprocess.run(
        [sys.executable, "-c", "from fairtalk.cli import main; main()", "label", "--agreement", str(gold)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        check=True,
    ).stdout
    row = next(line for line in printed.splitlines() if "offense_rate" in line)
    cells = [cell.strip() for cell in re.split(r"[│|┃]", row) if cell.strip()]
    assert cells[:3] == ["offense_rate", cells[1], "Cohen's κ"] and cells[4] == "10" and cells[1] != "n/a"
    assert f"offense_rate: Cohen's κ {cells[1]} over 10 items labelled in common by bo, ann" == shown


# ---------------------------------------------------------------------------- pairs together, turns by role (issue 41)


def test_a_pairs_two_texts_come_together_and_the_page_counts_complete_pairs(page: LabelServer, browser) -> None:  # noqa: ANN001
    """After 10 labels, 5 complete pairs (the issue's user had 0), as the page says and ``score --gold`` will find."""
    tab = browser.new_page()
    tab.goto(page.url)
    numbers = []
    for i in range(10):
        found = re.match(r"Text (\d+):", tab.text_content("#text") or "")
        assert found is not None
        numbers.append(int(found.group(1)))
        assert tab.text_content("#pair-position") == f"pair {i // 2 + 1} of 10, text {i % 2 + 1} of 2"
        assert tab.get_attribute("#pairs", "data-complete") == str(i // 2)
        assert f"{i // 2} of 10 pairs complete (both texts of a pair labelled)" in (tab.text_content("#pairs") or "")
        tab.keyboard.press("y" if i % 3 else "n")
        _wait_given(tab, i + 1)
    assert numbers[0::2] == numbers[1::2] and len(set(numbers)) == 5  # each pair's two texts, one after the other
    assert tab.get_attribute("#pairs", "data-complete") == "5" and "5 of 10 pairs complete" in (tab.text_content("#pairs") or "")
    assert "score --gold" in (tab.text_content("#pairs") or "")
    assert len(read_gold(page.log.path).pairs("offense_rate")) == 5


def test_a_conversation_shows_one_turn_per_line_with_its_role(tmp_path: Path, browser) -> None:  # noqa: ANN001
    log = GoldLog(
        tmp_path / "g.jsonl", draw_sample(write_turns_folder(tmp_path / "gender"), n=8), label_schemes("refusal"), annotator="a"
    )
    with serving(log) as server:
        tab = browser.new_page()
        tab.goto(server.url)
        for step, item in enumerate(log.sample.items):  # the first drawn by the server, the others by the page's script
            turns, roles = TURN_CONTEXTS[int(item.id[1:]) % len(TURN_CONTEXTS)]
            expected = roles or ["user", "assistant", "user"]
            lines = tab.locator("#context .turn")
            assert lines.count() == len(turns)
            assert [lines.nth(k).get_attribute("data-role") for k in range(len(turns))] == expected
            assert tab.locator("#context .turn .role").all_text_contents() == [
                *(f"{role}:" for role in expected[:-1]),
                "user (last turn: the text answers it):",
            ]
            assert tab.locator("#context .turn.last").count() == 1
            assert lines.nth(len(turns) - 1).get_attribute("class") == "turn user last"
            boxes = [lines.nth(k).bounding_box() for k in range(len(turns))]
            assert all(b is not None for b in boxes)
            tops = [b["y"] for b in boxes if b is not None]
            assert tops == sorted(tops) and len(set(tops)) == len(tops)  # one below the other: a line each
            assert len({round(b["x"]) for b in boxes if b is not None}) == 1
            shown = tab.text_content("#context") or ""
            assert "XYZ" in shown and "\x1e" not in shown and "\u23ce" not in shown
            assert ("<b>what</b>" in shown) != ("<i>right</i>" in shown)  # each conversation's markup, as text
            assert tab.locator("#context b, #context i").count() == 0  # the turns' markup is text
            assert tab.text_content("#context-part") == "Context: the conversation the text answers, one turn per line"
            tab.keyboard.press("n")
            _wait_given(tab, step + 1)


def test_markup_in_a_text_or_a_context_stays_text(tmp_path: Path, browser) -> None:  # noqa: ANN001
    log = GoldLog(
        tmp_path / "g.jsonl", draw_sample(write_xss_folder(tmp_path / "gender"), n=2), label_schemes("regard"), annotator="a"
    )
    with serving(log) as server:
        tab = browser.new_page()
        tab.goto(server.url)
        for step in range(2):  # the server's page, then the script's
            assert tab.locator("img").count() == 0 and tab.title() == "fairtalk label"
            assert 'onerror="document.title' in (tab.text_content("#text") or "")
            assert "<img src=x" in (tab.text_content("#context .turn.last") or "")
            assert "cannot be judged" in (tab.text_content("#choices") or "")  # what "other" means, beside it
            tab.keyboard.press("4")
            _wait_given(tab, step + 1)
        assert tab.locator("img").count() == 0 and tab.title() == "fairtalk label"


def _log(axis_folder: Path, tmp_path: Path) -> GoldLog:
    return GoldLog(
        tmp_path / "gold.jsonl", draw_sample(axis_folder, n=40, seed=7), label_schemes("offense_rate"), annotator="ann"
    )


def _values(tmp_path: Path) -> list[int]:
    return [json.loads(line)["offense_rate"] for line in (tmp_path / "gold.jsonl").read_text().splitlines()]


def test_a_key_pressed_while_a_label_is_in_flight_labels_nothing(axis_folder: Path, tmp_path: Path, browser) -> None:  # noqa: ANN001
    """y, then n before item 2 is shown: n is dropped, not given to item 2, which the annotator never saw."""
    with serving(_log(axis_folder, tmp_path)) as server:
        tab = browser.new_page()
        tab.goto(server.url)
        held: list[object] = []
        sync_api.expect(tab.locator("#position")).to_have_text("item 1 of 40", timeout=30_000)  # the page is up
        tab.route("**/label", lambda route: held.append(route))  # the answer to y waits until the test lets it through
        assert _press_until(tab, "y", lambda: bool(held)), "the label request never left the page"
        tab.keyboard.press("n")  # item 1 is still shown
        tab.evaluate("() => 0")  # a round trip through the page's main thread: n's keydown has run before y's answer
        held[0].continue_()  # type: ignore[attr-defined]
        tab.unroute("**/label")
        _wait_given(tab, 1)
        assert tab.text_content("#position") == "item 2 of 40"
        tab.keyboard.press("n")
        _wait_given(tab, 2)
        assert tab.text_content("#position") == "item 3 of 40"
    assert _values(tmp_path) == [1, 0]


def test_a_held_key_labels_one_item(axis_folder: Path, tmp_path: Path, browser) -> None:  # noqa: ANN001
    with serving(_log(axis_folder, tmp_path)) as server:
        tab = browser.new_page()
        tab.goto(server.url)
        tab.keyboard.down("n")
        _wait_given(tab, 1)
        for _ in range(5):  # the key held down: the keyboard repeats it
            tab.keyboard.down("n")
        tab.keyboard.up("n")
        tab.keyboard.press("y")
        _wait_given(tab, 2)
        assert tab.text_content("#position") == "item 3 of 40"
    assert _values(tmp_path) == [0, 1]


def test_a_stale_tabs_undo_takes_back_nothing_and_shows_the_current_item(axis_folder: Path, tmp_path: Path, browser) -> None:  # noqa: ANN001
    with serving(_log(axis_folder, tmp_path)) as server:
        first, second = browser.new_page(), browser.new_page()
        first.goto(server.url)
        first.keyboard.press("y")
        _wait_given(first, 1)
        second.goto(server.url)  # shows item 2, the label of item 1 the one to undo
        first.keyboard.press("n")
        _wait_given(first, 2)
        second.keyboard.press("u")  # it never showed the label of item 2
        sync_api.expect(second.locator("#position")).to_have_text("item 3 of 40", timeout=10_000)
        assert second.text_content("#status") == "the label of item 1 is not the last label given: item 2 was"
        assert _given(second) == 2
        second.keyboard.press("u")  # now it shows the label of item 2: taken back
        _wait_given(second, 1)
    assert _values(tmp_path) == [1]


def test_an_answer_that_is_not_json_says_the_session_ended(axis_folder: Path, tmp_path: Path, browser) -> None:  # noqa: ANN001
    """An old tab whose server is gone, another one on the port answering 403 forbidden: a plain message, no SyntaxError."""
    with serving(_log(axis_folder, tmp_path)) as server:
        tab = browser.new_page()
        # routed before the page loads: a key press can never reach the real server first (seen once under load)
        tab.route("**/label", lambda route: route.fulfill(status=403, body="forbidden\n", content_type="text/plain"))
        tab.goto(server.url)
        sync_api.expect(tab.locator("#position")).to_have_text("item 1 of 40", timeout=30_000)  # the page is up
        ended = _press_until(tab, "y", lambda: "session has ended" in (tab.text_content("#status") or ""))
        assert ended, tab.text_content("#status")
        status = tab.text_content("#status") or ""
        assert "Open the URL the label command printed" in status and "SyntaxError" not in status
        assert tab.text_content("#position") == "item 1 of 40"
    assert not (tmp_path / "gold.jsonl").exists() or _values(tmp_path) == []


def test_space_and_enter_press_the_focused_undo_and_done_buttons(axis_folder: Path, tmp_path: Path, browser) -> None:  # noqa: ANN001
    """Keyboard users press a focused button with Space: the page's key handler once swallowed it (preventDefault)."""
    with serving(_log(axis_folder, tmp_path)) as server:
        tab = browser.new_page()
        tab.goto(server.url)
        sync_api.expect(tab.locator("#position")).to_have_text("item 1 of 40", timeout=30_000)  # the page is up
        assert _press_until(tab, "y", lambda: _given(tab) == 1)
        tab.keyboard.press("n")
        _wait_given(tab, 2)
        tab.focus("#undo")
        tab.keyboard.press("Space")  # Undo pressed: the label of item 2 taken back
        _wait_given(tab, 1)
        tab.keyboard.press("Enter")  # and with Enter, as before: item 1's
        _wait_given(tab, 0)
        tab.evaluate("document.activeElement.blur()")
        tab.keyboard.press("y")  # where no button has the focus, keys label as before
        _wait_given(tab, 1)
        tab.keyboard.press("Space")  # no label key: nothing given, nothing pressed
        tab.focus("#done")
        tab.keyboard.press("Space")
        sync_api.expect(tab.locator("#finished")).to_have_text("Closed: every label is saved. You can close this tab.")
        assert server.finished and _given(tab) == 1
    assert _values(tmp_path) == [1]
