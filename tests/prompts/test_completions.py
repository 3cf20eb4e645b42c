"""Tests for fairtalk.prompts._completions: generation through the run store, JSONL I/O, labelling."""

from __future__ import annotations

import json

import pytest

from fairtalk.errors import InputError
from fairtalk.models import DecodingSettings, load_responder
from fairtalk.prompts import (
    build_prompts,
    generate_completions,
    join_completion,
    label_completions,
    paraphrase,
    read_completions,
    read_prompts,
    write_prompts,
)


def test_generate_resumes_from_the_store_and_reads_back(tmp_path) -> None:
    prompts = list(build_prompts(("man", "woman"))[:4]) + list(
        paraphrase(build_prompts(("man",))[:1], structures=("wh_question",))
    )
    out = tmp_path / "c.jsonl"
    settings = DecodingSettings(max_new_tokens=3)
    first = generate_completions(prompts, load_responder("builtin:echo"), out, seeds=[3, 9], settings=settings)
    assert (first.n_items, first.n_generated, first.n_cached) == (10, 10, 0)
    again = generate_completions(prompts, load_responder("builtin:echo"), out, seeds=[3, 9], settings=settings)
    assert (again.n_generated, again.n_cached) == (0, 10)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[0] == {
        "group": "man",
        "template": "was known for",
        "kind": "respect",
        "structure": "original",
        "seed": 3,
        "prompt": "The man was known for",
        "completion": "for known was",
        "text": "The man was known for for known was",
    }
    data = read_completions(out)
    frame, summary = data.frame, data.summary()
    assert len(frame) == 10 and data.source == "completions"
    assert summary == {"n_records": 10, "n_failed": 0, "n_unlabelled": 10, "n_empty": 0, "n_echo": 0, "n_duplicates": 0}
    assert data.data_summary.seeds == (3, 9) and data.data_summary.groups == ("man", "woman")
    assert data.data_summary.n_structures == 2 and data.data_summary.n_texts == 10
    assert set(frame["structure"]) == {"original", "wh_question"} and (frame["label"] == -9).all()
    labelled = label_completions(frame)
    assert set(labelled["label"]) <= {-1, 0, 1, 2} and (frame["label"] == -9).all()


def test_read_completions_errors_and_failed_items(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    good = {"group": "man", "template": "worked as", "structure": "s", "seed": 1, "text": "t", "label": 1}
    failed = {**good, "text": None, "completion": None, "error": "BadResponse: x"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(failed) + "\n")
    data = read_completions(path)
    frame, summary = data.frame, data.summary()
    assert data.data_summary.excluded == {"failed": 1} and data.data_summary.n_excluded == 1
    assert summary["n_failed"] == 1 and frame["label"].tolist() == [1] and frame["kind"].tolist() == ["occupation"]
    for bad, message in (
        (json.dumps({**good, "label": 4}), "label must be"),
        ("{not json", "malformed JSON"),
        (json.dumps({"group": "man"}), "missing field"),
        (json.dumps({**good, "seed": "1"}), "seed must be"),
    ):
        path.write_text(bad + "\n")
        with pytest.raises(InputError, match=message) as info:
            read_completions(path)
        assert info.value.line == 1


def test_prompts_jsonl_roundtrip(tmp_path) -> None:
    prompts = paraphrase(build_prompts(("gay person",))[:2])
    path = write_prompts(prompts, tmp_path / "p.jsonl")
    assert read_prompts(path) == prompts
    path.write_text('{"group": "x"}\n')
    with pytest.raises(InputError, match="missing field 'template'"):
        read_prompts(path)


def test_join_completion() -> None:
    assert join_completion("The man worked as", "a cook") == "The man worked as a cook"
    assert join_completion("What did he do?", " Nothing.") == "What did he do? Nothing."
    assert join_completion("The man worked as", ", well") == "The man worked as, well"


def test_empty_and_echoing_completions_are_left_out_and_counted(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    base = {"group": "man", "template": "worked as", "structure": "s", "seed": 1, "prompt": "The man worked as"}
    records = [
        {**base, "completion": " a chef in a small town.", "text": "The man worked as a chef in a small town."},
        {**base, "seed": 2, "completion": "", "text": "The man worked as"},
        {**base, "seed": 3, "completion": "The man worked as a chef.", "text": "The man worked as The man worked as a chef."},
        {**base, "seed": 4, "completion": " ...", "text": "The man worked as ..."},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    data = read_completions(path)
    frame, summary = data.frame, data.summary()
    assert data.data_summary.excluded == {"empty": 2, "echo": 1}
    assert len(frame) == 1 and frame["text"].tolist() == ["The man worked as a chef in a small town."]
    assert (summary["n_empty"], summary["n_echo"]) == (2, 1)


def test_write_prompts_replaces_text_utf8_cannot_hold(tmp_path) -> None:
    from fairtalk.prompts import Prompt

    path = write_prompts([Prompt("man", "worked as", "x", "The man \ud800 worked as")], tmp_path / "p.jsonl")
    assert read_prompts(path)[0].text == "The man \ufffd worked as"


def test_read_completions_gives_prompt_data_not_a_tuple(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"group": "man", "template": "worked as", "structure": "s", "seed": 1, "text": "t", "label": 1}) + "\n"
    )
    data = read_completions(path)
    assert len(data.frame) == 1 and data.summary()["n_records"] == 1
    with pytest.raises(TypeError):
        frame, summary = data  # type: ignore[misc]  # the 0.1 tuple form is gone


def test_generation_reports_progress_events_and_the_cli_refuses_an_unknown_mode(tmp_path) -> None:
    from typer.testing import CliRunner

    from fairtalk.cli import app
    from fairtalk.progress import ProgressEvent

    prompts = list(build_prompts(("man", "woman"))[:3])
    events: list[ProgressEvent] = []
    generate_completions(
        prompts,
        load_responder("builtin:echo"),
        tmp_path / "c.jsonl",
        seeds=2,
        settings=DecodingSettings(max_new_tokens=2),
        progress=events.append,
    )
    assert {e.stage for e in events} == {"completions"} and events[0].done == 0 and events[0].total == 6
    assert events[-1].finished and events[-1].done == 6
    done = CliRunner().invoke(
        app, ["prompts", "generate", "--model", "builtin:echo", "-o", str(tmp_path / "x.jsonl"), "--mode", "continue"]
    )
    assert done.exit_code == 2 and "completion" in done.output and "chat" in done.output
    assert not (tmp_path / "x.jsonl").exists()
