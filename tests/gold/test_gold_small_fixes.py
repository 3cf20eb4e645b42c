"""Small review findings of `fairtalk label`: names shown whole, "not a gold file", Ctrl-C after the last label, long notes."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import pytest

from fairtalk.errors import InputError
from fairtalk.gold import MAX_NOTE, LabelServer, read_gold

from .conftest import run_label as _run


def _gold(path: Path, annotator: str) -> Path:
    rows = [
        {"pair_id": f"p{i}", "side": s, "offense_rate": i % 2, "annotator": annotator, "note": ""} for i in range(6) for s in "ab"
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_agreement_shows_long_annotator_names_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review finding: two files of one annotator showed "ana (gold2.jso…"."""
    monkeypatch.setenv("COLUMNS", "80")
    first, second = _gold(tmp_path / "gold2.jsonl", "ana"), _gold(tmp_path / "gm.jsonl", "ana")
    code, out, err = _run(monkeypatch, capsys, "--agreement", str(first), str(second))
    assert code == 0, (out, err)
    assert "…" not in out
    cells = "".join(line.rsplit("│", 2)[-2].replace(" ", "") for line in out.splitlines() if line.count("│") > 2)
    assert "ana(gold2.jsonl),ana(gm.jsonl)" in cells, out  # each whole, wrapped or folded in its column


def test_agreement_on_an_audits_responses_says_it_is_not_a_gold_file(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review finding: it said "field 'context' must be an integer label"."""
    gold = _gold(tmp_path / "gold.jsonl", "ana")
    code, out, err = _run(monkeypatch, capsys, "--agreement", str(axis_folder / "responses.jsonl"), str(gold))
    assert code == 2 and "responses.jsonl:1: not a gold file: its rows hold an audit's responses" in " ".join(err.split())
    texts = tmp_path / "texts.jsonl"
    texts.write_text('{"id": 1, "prompt": "The man", "completion": "was kind"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"not a gold file: its rows hold texts \(prompt, completion\) and no annotator"):
        read_gold(texts)
    assert read_gold(gold).annotators == ("ana",)  # a gold file still reads


def test_ctrl_c_after_every_label_does_not_say_resume(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review finding: with every label given, Ctrl-C still said "run the same command to resume"."""

    def label_all_then_interrupt(self: LabelServer, poll_interval: float = 0.5) -> None:
        for step in range(len(self.log.steps)):
            self.log.add(step, 1)
        raise KeyboardInterrupt

    monkeypatch.setattr(LabelServer, "serve_forever", label_all_then_interrupt)
    gold = tmp_path / "gold.jsonl"
    code, out, err = _run(monkeypatch, capsys, str(axis_folder), "-m", "offense_rate", "-o", str(gold), "--n", "4")
    text = " ".join(err.split())
    assert code == 130 and f"stopped: 4 of 4 labels given, saved in {gold}; every label is given" in text, (out, err)
    assert "resume" not in text


def test_a_note_longer_than_the_page_takes_is_refused_not_cut(page: LabelServer, tmp_path: Path) -> None:
    """Review finding: a note over 2,000 characters was cut without a word."""

    def post(body: dict[str, object]) -> tuple[int, dict[str, object]]:
        connection = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
        headers = {"Host": f"127.0.0.1:{page.port}", "Content-Type": "application/json"}
        connection.request("POST", f"/{page.token}/label", body=json.dumps(body).encode(), headers=headers)
        response = connection.getresponse()
        try:
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    status, answer = post({"step": 0, "value": 1, "note": "x" * (MAX_NOTE + 1)})
    assert status == 409 and answer["error"] == (
        f"the note is {MAX_NOTE + 1:,} characters, more than the {MAX_NOTE:,} a label keeps: shorten it (the label was not given)"
    )
    assert not (tmp_path / "gold.jsonl").exists()
    status, answer = post({"step": 0, "value": 1, "note": "y" * MAX_NOTE})
    assert status == 200 and answer["given"] == 1
    assert json.loads((tmp_path / "gold.jsonl").read_text())["note"] == "y" * MAX_NOTE
