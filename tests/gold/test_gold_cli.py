"""`fairtalk label`: every bad input is one line on stderr and exit 2; `--agreement` prints κ."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from fairtalk.cli import EXIT_USAGE
from fairtalk.gold import LabelServer

from .conftest import run_label as _run


def _cases(folder: Path, tmp_path: Path, busy_port: int) -> list[tuple[list[str], str]]:
    gold = str(tmp_path / "gold.jsonl")
    return [
        ([str(tmp_path / "missing.jsonl"), "-m", "offense_rate", "-o", gold], "missing.jsonl"),
        ([str(folder), "-m", "offense_ratee", "-o", gold], "unknown measure 'offense_ratee'"),
        ([str(folder), "-m", "length", "-o", gold], "measure 'length' has no labels a person can give"),
        ([str(folder), "-m", "judge_score", "-o", gold], "needs its scale, e.g. judge_score:1-5"),
        ([str(folder), "-m", "offense_rate", "-o", gold, "--n", "500"], "--n 500 is more than the 48 responses"),
        ([str(folder), "-m", "offense_rate", "-o", gold, "--n", "4", "--port", str(busy_port)], f"port {busy_port} is in use"),
        ([str(folder), "-m", "offense_rate", "-o", gold, "--n", "6"], "belongs to another sample (its --n differs)"),
        ([str(folder), "-o", gold], "labelling needs --measure and -o"),
        ([str(folder), str(folder), "-m", "offense_rate", "-o", gold], "give one INPUT to label"),
        ([str(folder / "responses.jsonl"), "-m", "offense_rate", "-o", str(folder / "responses.jsonl")], "responses.jsonl"),
        (["--agreement", gold, "-m", "regard"], "--agreement reads gold files only: leave out --measure"),
    ]


def test_every_bad_input_is_one_line_and_exit_2(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fairtalk.gold import GoldLog, draw_sample, label_schemes

    GoldLog(tmp_path / "gold.jsonl", draw_sample(axis_folder, n=4), label_schemes("offense_rate"), annotator="a").add(0, 1)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        for args, message in _cases(axis_folder, tmp_path, busy.getsockname()[1]):
            code, out, err = _run(monkeypatch, capsys, *args)
            lines = [line for line in err.splitlines() if line.strip()]
            assert code == EXIT_USAGE, (args, out, err)
            assert len(lines) == 1 and lines[0].startswith("error: ") and message in " ".join(err.split()), (args, err)
            assert "Traceback" not in err


def test_agreement_prints_kappa_per_label(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a = [1, 1, 0, 0, 1, 0, 1, 1]
    b = [1, 0, 0, 0, 1, 0, 1, 0]
    for name, labels in (("ann", a), ("bo", b)):
        rows = [
            {"pair_id": f"p{i // 2}", "side": "ab"[i % 2], "offense_rate": v, "annotator": name} for i, v in enumerate(labels)
        ]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    from sklearn.metrics import cohen_kappa_score

    code, out, _ = _run(monkeypatch, capsys, "--agreement", str(tmp_path / "ann.jsonl"), str(tmp_path / "bo.jsonl"))
    assert code == 0
    row = next(line for line in out.splitlines() if "offense_rate" in line)
    assert f"{cohen_kappa_score(a, b):.3f}" in row and "Cohen's κ" in row and "ann," in row and " 8 " in row
    assert out.splitlines()[out.splitlines().index(row) + 1].split("│")[-2].strip() == "bo"  # one annotator a line


def test_ctrl_c_stops_with_130_and_says_everything_is_saved(axis_folder: Path, tmp_path: Path) -> None:
    import re
    import signal
    import subprocess
    import urllib.request

    gold = tmp_path / "gold.jsonl"
    command = [
        sys.executable,
        "-c",
        "from fairtalk.cli import main; main()",
        "label",
        str(axis_folder),
        "-m",
        "offense_rate",
        "-o",
        str(gold),
        "--n",
        "4",
    ]
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}  # a hang below dumps every thread's stack (SIGABRT)
    # A job started in the background by a non-interactive shell (``make test &``) inherits SIGINT as ignored, and
    # Python then installs no KeyboardInterrupt handler: Ctrl-C's default is given back to the command under test.
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert process.stdout is not None
        url = None
        while url is None and (line := process.stdout.readline()):
            url = (re.search(r"open (\S+)", line) or [None, None])[1]
        assert url is not None
        request = urllib.request.Request(
            url + "label", data=b'{"step": 0, "value": 1}', method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert json.load(answer)["given"] == 1
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(timeout=120)  # an upper bound: a loaded machine is slow to exit
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # faulthandler writes where each thread waits
            process.wait(timeout=30)
            pytest.fail(f"label did not stop within 120 s of Ctrl-C; its output and stacks:\n{process.stdout.read()}")
        assert code == 130
        assert "stopped: 1 of 4 labels given, saved in" in process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
    assert len(gold.read_text().splitlines()) == 1


def test_a_second_session_of_one_annotator_on_one_file_is_refused(
    page: LabelServer, axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page fixture labels gold.jsonl as 'ann'; a second `fairtalk label` as 'ann' exits 2, as 'bo' it starts."""
    served: list[str] = []
    monkeypatch.setattr(LabelServer, "serve_forever", lambda self, poll_interval=0.5: served.append(self.log.annotator))
    gold = str(tmp_path / "gold.jsonl")
    args = [str(axis_folder), "-m", "offense_rate", "-o", gold, "--n", "20", "--seed", "3"]
    code, out, err = _run(monkeypatch, capsys, *args, "--annotator", "ann")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == EXIT_USAGE and len(lines) == 1 and lines[0].startswith("error: "), (out, err)
    assert "annotator 'ann' is already labelling" in " ".join(err.split()) and "gold.jsonl" in err
    assert served == []
    code, out, err = _run(monkeypatch, capsys, *args, "--annotator", "bo")
    assert code == 0 and served == ["bo"], (out, err)
    assert not (tmp_path / "gold.jsonl.bo.lock").exists()  # the session ended with its server
    assert (tmp_path / "gold.jsonl.ann.lock").exists()  # the page's session goes on


def test_done_before_any_label_says_nothing_was_saved_and_a_label_says_where(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Done with no label once said "saved in gold.jsonl" of a file that did not exist; a session that labels says where."""
    gold = tmp_path / "gold.jsonl"
    args = [str(axis_folder), "-m", "offense_rate", "-o", str(gold), "--n", "4"]
    monkeypatch.setattr(LabelServer, "serve_forever", lambda self, poll_interval=0.5: None)  # Done at once
    code, out, err = _run(monkeypatch, capsys, *args)
    assert code == 0, (out, err)
    assert "done: 0 of 4 labels given: nothing saved, no gold file written" in " ".join(out.split())
    assert "saved in" not in out and not gold.exists()
    monkeypatch.setattr(LabelServer, "serve_forever", lambda self, poll_interval=0.5: self.log.add(0, 1))  # one label
    code, out, err = _run(monkeypatch, capsys, *args)  # resumes on the same sample record
    assert code == 0, (out, err)
    assert f"done: 1 of 4 labels given, saved in {gold}" in " ".join(out.split()) and gold.exists()


def test_agreement_leaves_out_labels_outside_the_scheme_and_warns_as_score_gold_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 7 for the yes/no offense_rate once counted as a category of κ (κ 0.000, no word said)."""
    a = [1, 1, 0, 0, 1, 0, 1, 1]
    for name, labels in (("ann", a), ("w7", [7] * 8)):
        rows = [
            {"pair_id": f"p{i // 2}", "side": "ab"[i % 2], "offense_rate": v, "annotator": name} for i, v in enumerate(labels)
        ]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = _run(monkeypatch, capsys, "--agreement", str(tmp_path / "ann.jsonl"), str(tmp_path / "w7.jsonl"))
    assert code == 0
    row = next(line for line in out.splitlines() if "offense_rate" in line and "│" in line)
    assert "0.000" not in row and "n/a" in row and " 0 " in row and "ann," in row
    text = " ".join(out.split())
    assert "warning: 8 label(s) of offense_rate outside its labels 0, 1 (first: 7 on pair p0 side a by w7): left out of κ" in (
        text
    )


def test_agreement_at_80_columns_breaks_no_annotator_mid_word_and_no_common_field_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One name in two files is "bo (gold-ana.jsonl)": it was folded mid-word ("(gold-ana.j / sonl)") at 80 columns."""
    for name, who in (("gold-ana", ("ana", "bo")), ("gold-bo", ("bo",))):
        rows = [
            {"pair_id": f"p{i // 2}", "side": "ab"[i % 2], "offense_rate": (i * (k + 2)) % 3 % 2, "annotator": w}
            for k, w in enumerate(who)
            for i in range(12)
        ]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _run(monkeypatch, capsys, "--agreement", str(tmp_path / "gold-ana.jsonl"), str(tmp_path / "gold-bo.jsonl"))
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 80
    cells = [line.split("│")[-2].strip() for line in out.splitlines() if line.count("│") == 7]
    assert cells == ["ana,", "bo (gold-ana.jsonl),", "bo (gold-bo.jsonl)"], out
    (tmp_path / "other.jsonl").write_text(json.dumps({"pair_id": "p0", "side": "a", "refusal_rate": 1, "annotator": "cy"}) + "\n")
    code, out, err = _run(monkeypatch, capsys, "--agreement", str(tmp_path / "gold-bo.jsonl"), str(tmp_path / "other.jsonl"))
    assert code == EXIT_USAGE and out == "" and err.startswith("error: ") and "no label field in common" in err
