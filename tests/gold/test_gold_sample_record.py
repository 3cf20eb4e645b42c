"""The sample record beside a gold file: a session that ends with no label given leaves none behind to refuse the next."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from fairtalk.cli import EXIT_USAGE
from fairtalk.errors import InputError
from fairtalk.gold import GoldLog, LabelServer, draw_sample, label_schemes, sample_record_path

from .conftest import run_label as _run


def _interrupt(self: LabelServer, poll_interval: float = 0.5) -> None:
    raise KeyboardInterrupt


def test_a_busy_port_or_ctrl_c_before_any_label_leaves_no_record_to_refuse_the_next_sample(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review finding: --port BUSY, or Ctrl-C before a label, left p2.jsonl.sample.json, and a rerun with another --n was
    refused: "p2.jsonl belongs to another sample" of a p2.jsonl that did not exist."""
    gold = tmp_path / "p2.jsonl"
    record = sample_record_path(gold)
    args = [str(axis_folder), "-m", "offense_rate", "-o", str(gold)]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        code, out, err = _run(monkeypatch, capsys, *args, "--n", "4", "--port", str(busy.getsockname()[1]))
    assert code == EXIT_USAGE and "is in use" in err, (out, err)
    assert not record.exists() and not gold.exists()
    monkeypatch.setattr(LabelServer, "serve_forever", _interrupt)
    code, out, err = _run(monkeypatch, capsys, *args, "--n", "6")  # another --n: taken
    assert code == 130 and "nothing saved, no gold file written" in " ".join(err.split()), (out, err)
    assert not record.exists() and not gold.exists()
    monkeypatch.setattr(LabelServer, "serve_forever", lambda self, poll_interval=0.5: self.log.add(0, 1))
    code, out, err = _run(monkeypatch, capsys, *args, "-m", "refusal_rate", "--n", "8")  # another --measure: taken
    assert code == 0 and record.exists() and gold.exists(), (out, err)
    monkeypatch.setattr(LabelServer, "serve_forever", _interrupt)
    code, out, err = _run(monkeypatch, capsys, *args, "-m", "refusal_rate", "--n", "8", "--annotator", "bo")
    assert code == 130 and record.exists(), (out, err)  # the file holds labels: its record is kept
    code, out, err = _run(monkeypatch, capsys, *args, "--n", "4")
    assert code == EXIT_USAGE and "belongs to another sample" in err, (out, err)


def test_a_record_removed_by_a_session_with_no_label_is_written_again_or_refuses_another_sample(
    axis_folder: Path, tmp_path: Path
) -> None:
    """Two annotators on one file: the first ends with no label (its record removed); the other's label writes it again,
    and never goes under the record of another sample written meanwhile."""
    gold = tmp_path / "gold.jsonl"
    schemes = label_schemes("offense_rate")
    ana = GoldLog(gold, draw_sample(axis_folder, n=4), schemes, annotator="ana")
    bo = GoldLog(gold, draw_sample(axis_folder, n=4), schemes, annotator="bo")
    ana.release()
    assert not sample_record_path(gold).exists()
    bo.add(0, 1)
    assert sample_record_path(gold).exists() and bo.n_given == 1 and len(gold.read_text().splitlines()) == 1
    cy = GoldLog(tmp_path / "other.jsonl", draw_sample(axis_folder, n=4), schemes, annotator="cy")
    dee = GoldLog(tmp_path / "other.jsonl", draw_sample(axis_folder, n=4), schemes, annotator="dee")
    cy.release()
    GoldLog(tmp_path / "other.jsonl", draw_sample(axis_folder, n=6), schemes, annotator="eve")  # another sample's record
    with pytest.raises(InputError, match="belongs to another sample"):
        dee.add(0, 1)
    assert not (tmp_path / "other.jsonl").exists()
