"""Tests for _jsonl.py: the shared reader of users' JSON Lines files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from fairtalk import InputError
from fairtalk._jsonl import read_objects


def test_objects_are_numbered_by_file_line_skipping_blanks_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n  \n{"a": "caf\xc3\xa9"}\n')
    assert list(read_objects(path)) == [(1, {"a": 1}), (4, {"a": "café"})]


def test_digest_covers_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"b": 2}')
    digest = hashlib.sha256()
    list(read_objects(path, digest=digest))
    assert digest.hexdigest() == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"a": 1}\n{"a": \n', "r.jsonl:2: malformed JSON ("),
        (b'{"a": 1}\n[1, 2]\n', "r.jsonl:2: expected a JSON object, got list"),
        (b'{"a": 1}\n{"a": "\xe9"}\n', "r.jsonl:2: not valid UTF-8 (byte 0xe9 at column 8)"),
    ],
)
def test_bad_lines_name_path_and_line(tmp_path: Path, body: bytes, message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(body)
    objects = read_objects(path, what="responses file")
    assert next(objects) == (1, {"a": 1})  # lazy: the good line comes before the error
    with pytest.raises(InputError) as info:
        next(objects)
    assert message in str(info.value) and info.value.line == 2


def test_a_missing_file_fails_at_the_call(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nope.jsonl: pairs file not found"):
        read_objects(tmp_path / "nope.jsonl", what="pairs file")


def test_surrogate_escapes_become_replacement_characters(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"text": "a \\ud800 b", "ok": "\\u00e9"}\n', encoding="utf-8")
    ((_, record),) = list(read_objects(path))
    assert record == {"text": "a \ufffd b", "ok": "é"}


def test_non_regular_files_are_refused_without_blocking(tmp_path: Path) -> None:
    import os
    import threading

    if not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            list(read_objects(fifo, what="responses file"))
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "opening a FIFO with no writer blocked"
    assert isinstance(outcome[0], InputError) and "responses file is not a regular file" in str(outcome[0])
