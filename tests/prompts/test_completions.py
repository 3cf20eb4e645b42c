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
        "written_by": "fairtalk",  # what `prompts generate -o` replaces (is_completions_file)
    }
    data = read_completions(out)
    frame, summary = data.frame, data.summary()
    assert len(frame) == 10 and data.source == "completions"
    digest = summary.pop("prompts_sha256")  # which prompts were completed (tests/prompts/test_prompts_identity.py)
    assert summary == {"n_records": 10, "n_failed": 0, "n_unlabelled": 10, "n_empty": 0, "n_echo": 0, "n_duplicates": 0}
    assert len(digest) == 64 and digest == data.data_summary.prompts_sha256
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


def test_a_null_completion_without_an_error_is_failed_not_labelled_from_its_leftover_text(tmp_path) -> None:
    """Review finding: ``"completion": null`` with no ``error`` was labelled from the record's leftover ``text``."""
    path = tmp_path / "c.jsonl"
    good = {"group": "man", "template": "worked as", "structure": "s", "seed": 1, "completion": " a chef", "text": "t"}
    null = {**good, "group": "woman", "seed": 2, "completion": None, "text": "The woman worked as a nurse", "label": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps(null) + "\n")
    data = read_completions(path)
    assert data.data_summary.excluded == {"failed": 1} and data.data_summary.failed_by_group == {"woman": 1}
    assert data.frame["text"].tolist() == ["t"]
    path.write_text(json.dumps(null) + "\n")
    with pytest.raises(InputError, match=r"all 1 completions failed \(the first with a null completion without an error\)"):
        read_completions(path)


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


def test_repeated_prompts_are_skipped_and_counted_and_conflicting_ones_refused(tmp_path) -> None:
    """Review finding: 60 repeated lines gave "6,120 completions ... 6,000 generated"; counts now add up."""
    from fairtalk.prompts import Prompt

    prompts = list(build_prompts(("man", "woman"))[:4])
    path = tmp_path / "p.jsonl"
    write_prompts([*prompts, prompts[1], prompts[2]], path)
    read = read_prompts(path)
    assert len(read) == 6  # identical copies are read as they are ...
    out, settings = tmp_path / "c.jsonl", DecodingSettings(max_new_tokens=3)
    summary = generate_completions(read, load_responder("builtin:echo"), out, seeds=2, settings=settings)
    assert (summary.n_prompts, summary.n_duplicate_prompts, summary.n_items) == (4, 2, 8)  # ... and skipped, counted
    assert summary.n_items == summary.n_cached + summary.n_generated + summary.n_errors + summary.n_shared
    keys = [(r["group"], r["template"], r["structure"], r["seed"]) for r in map(json.loads, out.read_text().splitlines())]
    assert len(keys) == len(set(keys)) == 8
    # two prompts with one text share their answers: counted, so the counts still add up
    twin = Prompt(prompts[0].group, prompts[0].template, "twin", prompts[0].text)
    shared = generate_completions([*prompts, twin], load_responder("builtin:echo"), out, seeds=2, settings=settings)
    assert shared.n_shared == 2 and shared.n_items == 10 == shared.n_cached + shared.n_generated + shared.n_errors + 2
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:4], lines[1].replace("The woman", "A woman")]) + "\n")
    with pytest.raises(InputError, match=r"appears twice with different texts, here and on line 2") as info:
        read_prompts(path)
    assert info.value.line == 5
    with pytest.raises(InputError, match="given twice with different texts"):
        generate_completions(
            [prompts[0], Prompt(prompts[0].group, prompts[0].template, prompts[0].structure, "Other")],
            load_responder("builtin:echo"),
            out,
            seeds=1,
        )


def test_a_completions_file_given_as_prompts_is_refused(tmp_path) -> None:
    out = tmp_path / "c.jsonl"
    generate_completions(build_prompts(("man",))[:2], load_responder("builtin:echo"), out, seeds=1)
    with pytest.raises(InputError, match='a completions file \\(its records have a "completion" field\\), not a prompts'):
        read_prompts(out)


def test_repeated_completions_are_skipped_and_conflicting_ones_refused(tmp_path) -> None:
    """Review finding: a completions file concatenated with itself was analysed as 12,000 completions."""
    out = tmp_path / "c.jsonl"
    generate_completions(build_prompts(("man", "woman"))[:4], load_responder("builtin:echo"), out, seeds=2)
    lines = out.read_text().splitlines()
    doubled = tmp_path / "dup.jsonl"
    doubled.write_text("\n".join(lines + lines) + "\n")
    data = read_completions(doubled)
    assert len(data.frame) == 8 and data.data_summary.excluded == {"duplicate": 8} and data.summary()["n_duplicates"] == 8
    changed = json.loads(lines[0]) | {"text": "The man was known for something else"}
    doubled.write_text("\n".join([*lines, json.dumps(changed)]) + "\n")
    with pytest.raises(InputError, match="appears twice with different contents, here and on line 1") as info:
        read_completions(doubled)
    assert info.value.line == 9


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"group": "man", "template": "x", "structure": "s", "text": 5}, "field 'text' must be a string, got 5"),
        ({"group": None, "template": "x", "structure": "s", "text": "The man"}, "field 'group' must be a string, got None"),
        ({"template": "x", "structure": "s", "text": "The man"}, "missing field 'group'"),
    ],
)
def test_a_prompts_field_of_another_type_is_not_called_missing(tmp_path, record, message) -> None:  # noqa: ANN001
    """Review finding: "text": 5 and "group": null were both reported as a missing field."""
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(InputError, match=message) as info:
        read_prompts(path)
    assert info.value.line == 1
