"""Tests for models/_replay.py: JSONL responses keyed by context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairtalk import InputError, ResponderError
from fairtalk.models import DecodingSettings, load_responder

S = DecodingSettings()


def _write(path: Path, rows: list) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_replay_serves_by_context_and_reports_missing(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "r.jsonl",
        [
            {"context": "he is a doctor", "response": "good for him"},
            "",
            {"pair_id": "p1", "side": "b", "context": "she is a doctor", "response": "good for her"},
            {"context": "he is a doctor", "response": "good for him"},
        ],
    )
    with load_responder(f"replay:{path}") as model:
        assert model.n_responses == 2
        assert model.respond(["she is a doctor", "he is a doctor"], S, seeds=[0, 1]) == ["good for her", "good for him"]
        out = model.respond_each(["he is a doctor", "unknown " * 20], S, seeds=[0, 0])
        assert out[0] == "good for him"
        assert isinstance(out[1], ResponderError) and "no response recorded for context 'unknown unknown" in str(out[1])
        with pytest.raises(ResponderError):
            model.respond(["nope"], S, seeds=[0])
        assert model.fingerprint.startswith('replay:r.jsonl {"sha256":"')
    path.write_text(path.read_text() + json.dumps({"context": "x", "response": "y"}) + "\n")
    assert load_responder(f"replay:{path}").fingerprint != model.fingerprint


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["{oops"], "r.jsonl:1: malformed JSON"),
        ([[1, 2]], "r.jsonl:1: expected a JSON object"),
        ([{"context": "a"}], "r.jsonl:1: field 'response' must be a string"),
        ([{"context": "a", "response": "x"}, {"context": "a", "response": "y"}], "r.jsonl:2: context appears again"),
    ],
)
def test_malformed_files(tmp_path: Path, rows: list, message: str) -> None:
    path = _write(tmp_path / "r.jsonl", rows)
    with pytest.raises(InputError, match=message):
        load_responder(f"replay:{path}")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="replay file not found"):
        load_responder(f"replay:{tmp_path / 'none.jsonl'}")
