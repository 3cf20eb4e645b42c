"""The gold file: appended as labels come, undone by an atomic rewrite, resumed after a kill, refused for another sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairtalk.errors import InputError, SpecError
from fairtalk.gold import Gold, GoldLog, draw_sample, label_scheme, label_schemes, read_gold, sample_record_path


def _log(
    folder: Path, gold: Path, *, n: int = 8, seed: int = 0, measures: str = "offense_rate", annotator: str = "ann"
) -> GoldLog:
    return GoldLog(gold, draw_sample(folder, n=n, seed=seed), label_schemes(measures), annotator=annotator)


def test_a_restart_resumes_at_the_first_unlabelled_item(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold)
    for step in range(5):
        log.add(step, step % 2)
    again = _log(axis_folder, gold)  # a new process: only the file tells
    assert again.position == 5 and again.n_given == 5 and not again.done
    assert [json.loads(line)["offense_rate"] for line in gold.read_text().splitlines()] == [0, 1, 0, 1, 0]
    record = json.loads(sample_record_path(gold).read_text())
    assert record["seed"] == 0 and record["n"] == 8 and record["measures"] == ["offense_rate"]
    assert record["items"] == [[i.id, i.side] for i in again.sample.items]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"seed": 1}, "--seed"),
        ({"n": 10}, "--n"),
        ({"measures": "refusal_rate"}, "--measure"),
    ],
)
def test_another_sample_on_the_same_file_is_refused(axis_folder: Path, tmp_path: Path, change: dict, named: str) -> None:
    gold = tmp_path / "gold.jsonl"
    _log(axis_folder, gold).add(0, 1)
    with pytest.raises(InputError, match=f"belongs to another sample \\(its {named} differs\\)"):
        _log(axis_folder, gold, **change)


def test_two_options_that_differ_are_named_in_one_sentence(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    _log(axis_folder, gold).add(0, 1)
    with pytest.raises(InputError, match="another sample \\(its --seed and --n differ\\)"):
        _log(axis_folder, gold, seed=1, n=10)


def test_another_input_is_refused_and_a_foreign_file_too(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    _log(axis_folder, gold).add(0, 1)
    with (axis_folder / "responses.jsonl").open("a") as handle:
        handle.write(json.dumps({"pair_id": "new", "side": "a", "response": "x"}) + "\n")
    with pytest.raises(InputError, match="responses.jsonl changed since the sample in .*gold.jsonl was drawn from it"):
        _log(axis_folder, gold)
    foreign = tmp_path / "mine.jsonl"
    foreign.write_text('{"id": 1, "label": 0}\n')
    with pytest.raises(InputError, match="has no sample record mine.jsonl.sample.json"):
        _log(axis_folder, foreign)


def test_a_torn_last_line_is_dropped_and_labelling_goes_on(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold)
    log.add(0, 1)
    log.add(1, 0)
    with gold.open("ab") as handle:
        handle.write(b'{"pair_id": "p0')  # killed mid-write
    again = _log(axis_folder, gold)
    assert again.position == 2
    again.add(2, 1)
    assert len(read_gold(gold).labels) == 3


def test_undo_rewrites_without_the_last_row_and_keeps_other_annotators(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    ann, bo = _log(axis_folder, gold), _log(axis_folder, gold, annotator="bo")
    ann.add(0, 1)
    bo.add(0, 0)
    ann.add(1, 1)
    bo.add(1, 1)
    ann.undo()
    rows = [json.loads(line) for line in gold.read_text().splitlines()]
    assert [(r["annotator"], r["offense_rate"]) for r in rows] == [("ann", 1), ("bo", 0), ("bo", 1)]
    assert ann.position == 1 and bo.position == 2
    assert _log(axis_folder, gold, annotator="bo").position == 2
    ann.undo()
    with pytest.raises(InputError, match="nothing to undo"):
        ann.undo()


def test_several_measures_are_one_row_each_and_read_back_per_key(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold, n=4, measures="offense_rate,regard")
    for step, value in enumerate([1, -1, 0, 2, 0, 1, 1, 0]):
        log.add(step, value)
    assert log.done
    result = read_gold(gold)
    items = log.sample.items
    assert result.kind == "responses" and result.fields == ("offense_rate", "regard")
    assert result.values("offense_rate") == {(i.id, i.side): float(v) for i, v in zip(items, [1, 0, 0, 1])}
    assert result.values("regard_negative")[(items[0].id, items[0].side)] == 1.0
    assert result.values("regard_other")[(items[1].id, items[1].side)] == 1.0
    assert set(result.keys) >= {"regard_negative", "regard_neutral", "regard_positive", "regard_other"}
    assert set(result.pairs("offense_rate")) == {i.id for i in items}  # both sides of each sampled pair


def test_texts_rows_hold_id_label_annotator_and_regard_check_reads_them(tmp_path: Path) -> None:
    from fairtalk.prompts import read_labels

    texts = tmp_path / "texts.txt"
    texts.write_text("The man was a thief.\nThe woman was a nurse.\nThe gay person was kind.\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    log = GoldLog(gold, draw_sample(texts, n=3, seed=0), label_schemes("regard"), annotator="ann")
    for step, value in enumerate([-1, 1, 0]):
        log.add(step, value, note="sure" if step == 0 else "")
    rows = [json.loads(line) for line in gold.read_text().splitlines()]
    assert {k for r in rows for k in r} == {"id", "label", "annotator", "note", "text"}
    labels = {r["id"]: r["label"] for r in read_labels(gold)}
    assert labels == {item.id: v for item, v in zip(log.sample.items, [-1, 1, 0])}
    assert read_gold(gold).values("regard_positive")[(log.sample.items[1].id, None)] == 1.0
    with pytest.raises(InputError, match="texts and completions take one --measure"):
        GoldLog(tmp_path / "g2.jsonl", draw_sample(texts, n=3), label_schemes("regard,offense"), annotator="a")


def test_read_gold_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    for text, message in [
        ('{"pair_id": "1", "side": "c", "offense_rate": 1}\n', 'needs "pair_id" and "side"'),
        ('{"pair_id": "1", "side": "a"}\n', "holds no label"),
        ('{"id": 1, "label": true}\n', "must be an integer label"),
        ('{"id": 1, "label": 1}\n{"pair_id": "1", "side": "a", "x_yes": 1}\n', "mixed"),
        (
            '{"id": 1, "label": 1, "annotator": "a"}\n{"id": 1, "label": 0, "annotator": "a"}\n',
            "gold.jsonl:2: label of 1 is labelled twice",
        ),
        ("", "holds no label"),
    ]:
        path.write_text(text)
        with pytest.raises(InputError, match=message):
            read_gold(path)
    path.write_text('{"id": 1, "label": "negative", "annotator": "a"}\n{"id": 1, "label": 0, "annotator": "b"}\n')
    gold = read_gold(path)
    assert isinstance(gold, Gold) and gold.annotators == ("a", "b") and gold.values("label") == {("1", None): -0.5}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("length", "has no labels a person can give"),
        ("distinct_2", "has no labels"),
        ("regard_negative", "label 'regard'"),
        ("judge_score", "needs its scale"),
        ("judge_score:5-1", "needs its scale"),
        ("offens_rate", "unknown measure 'offens_rate'"),
    ],
)
def test_a_measure_without_labels_or_unknown_is_a_spec_error(spec: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        label_scheme(spec)


def test_the_schemes_keys() -> None:
    assert [c.keys for c in label_scheme("judge_yes").choices] == [("y", "1"), ("n", "0")]
    assert [c.value for c in label_scheme("judge_score:1-5").choices] == [1, 2, 3, 4, 5]
    assert label_scheme("sentiment").measure_values(-1) == {"sentiment_positive": 0.0, "sentiment_negative": 1.0}
    with pytest.raises(SpecError, match="given twice"):
        label_schemes("offense,offense_rate")


# ---------------------------------------------------------------------------- a full disk (issue 38 item 8)


def _failing_write(monkeypatch: pytest.MonkeyPatch, mode: str) -> list[int]:
    """Make ``os.write`` of a gold row fail as a full disk does (other writes untouched); the byte counts it was asked for."""
    import errno
    import os

    real = os.write
    asked: list[int] = []

    def write(fd: int, data: bytes) -> int:
        if b'"annotator"' not in bytes(data[:200]) and not asked:
            return real(fd, data)
        asked.append(len(data))
        if mode == "short then full" and len(asked) == 1:
            return real(fd, bytes(data[: len(data) // 2]))
        if mode == "nothing written":
            return 0
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", write)
    return asked


@pytest.mark.parametrize("mode", ["short then full", "full at once", "nothing written"])
def test_a_label_the_disk_refuses_is_not_given_and_the_file_keeps_whole_rows(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    from fairtalk.errors import OutputError

    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold)
    for step in range(3):
        log.add(step, 1)
    before = gold.read_bytes()
    with monkeypatch.context() as patch:
        asked = _failing_write(patch, mode)
        with pytest.raises(OutputError, match="the label was not saved.*No space left on device"):
            log.add(3, 0, note="x" * 500)
    assert asked  # the row was written through the patched os.write
    assert gold.read_bytes() == before  # cut back to the three whole rows: no torn fourth
    assert log.position == 3 and log.n_given == 3
    assert _log(axis_folder, gold).position == 3  # a restart agrees
    log.add(3, 0)  # the disk has room again: the same label is given once
    assert [json.loads(line)["offense_rate"] for line in gold.read_text().splitlines()] == [1, 1, 1, 0]


def test_a_failed_fsync_rolls_the_row_back_too(axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    from fairtalk.errors import OutputError

    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold)
    log.add(0, 1)
    before = gold.read_bytes()

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", fsync)
        with pytest.raises(OutputError, match="not saved"):
            log.add(1, 0)
    assert gold.read_bytes() == before and log.position == 1


def test_short_writes_are_looped_until_the_row_is_whole(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    real = os.write
    calls: list[int] = []

    def write(fd: int, data: bytes) -> int:  # a disk (or a signal) that takes 7 bytes at a time
        calls.append(len(data))
        return real(fd, bytes(data[:7]))

    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold)
    with monkeypatch.context() as patch:
        patch.setattr(os, "write", write)
        log.add(0, 1, note="a note")
        log.add(1, 0)
    assert len(calls) > 10
    rows = [json.loads(line) for line in gold.read_text().splitlines()]
    assert [r["offense_rate"] for r in rows] == [1, 0] and rows[0]["note"] == "a note"


def test_two_annotators_writing_at_once_never_tear_each_others_rows(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import threading

    real = os.write

    def write(fd: int, data: bytes) -> int:  # 5 bytes at a time, so that two unlocked writers would interleave
        os.sched_yield()
        return real(fd, bytes(data[:5]))

    gold = tmp_path / "gold.jsonl"
    logs = [_log(axis_folder, gold, annotator=name) for name in ("ann", "bo")]
    errors: list[BaseException] = []

    def label(log: GoldLog) -> None:
        try:
            for step in range(8):
                log.add(step, step % 2, note=log.annotator * 40)
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", write)
        threads = [threading.Thread(target=label, args=(log,)) for log in logs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    rows = [json.loads(line) for line in gold.read_text().splitlines()]  # every line a whole row
    assert sorted((r["annotator"], r["note"]) for r in rows) == sorted([("ann", "ann" * 40)] * 8 + [("bo", "bo" * 40)] * 8)
    assert read_gold(gold).annotators in (("ann", "bo"), ("bo", "ann"))


# ---------------------------------------------------------------------------- one session per annotator (item 9)


def test_one_annotator_holds_one_session_on_a_file_and_others_may_share_it(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    first = _log(axis_folder, gold)
    first.claim()
    try:
        assert first.session_lock_path == tmp_path / "gold.jsonl.ann.lock" and first.session_lock_path.exists()
        second = _log(axis_folder, gold)
        with pytest.raises(InputError, match=r"annotator 'ann' is already labelling .*gold\.jsonl in another session"):
            second.claim()
        other = _log(axis_folder, gold, annotator="bo")
        other.claim()  # another annotator shares the file
        first.add(0, 1)
        other.add(0, 0)
        other.release()
    finally:
        first.release()
    assert not first.session_lock_path.exists()
    second.claim()  # the first session ended: the next one may start, and resumes where it left off
    try:
        assert second.position == 1
    finally:
        second.release()


def test_a_lock_file_a_killed_session_left_does_not_block_and_names_are_kept_apart(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    (tmp_path / "gold.jsonl.ann.lock").write_text("")  # left by a killed session: unlocked
    log = _log(axis_folder, gold)
    log.claim()
    log.release()
    odd = _log(axis_folder, gold, annotator="a/b c")
    assert odd.session_lock_path == tmp_path / "gold.jsonl.a%2Fb%20c.lock"
    long = _log(axis_folder, gold, annotator="x" * 300)
    assert long.session_lock_path.parent == tmp_path and len(long.session_lock_path.name) < 255
    long.claim()
    long.release()


# ---------------------------------------------------------------------------- complete pairs (issue 41)


def test_complete_pairs_count_the_pairs_labelled_on_both_sides_per_field(axis_folder: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold, n=8, measures="offense_rate,refusal_rate")
    assert log.n_pairs == 4 and log.complete_pairs == {"offense_rate": 0, "refusal_rate": 0}
    for step in range(3):  # side 1: both fields; side 2: offense_rate only
        log.add(step, 1)
    assert log.complete_pairs == {"offense_rate": 1, "refusal_rate": 0}
    log.add(3, 0)
    assert log.complete_pairs == {"offense_rate": 1, "refusal_rate": 1}
    again = _log(axis_folder, gold, n=8, measures="offense_rate,refusal_rate")  # read back from the file
    assert again.complete_pairs == {"offense_rate": 1, "refusal_rate": 1}
    assert len(read_gold(gold).pairs("offense_rate")) == 1 == len(read_gold(gold).pairs("refusal_rate"))
    again.undo()
    assert again.complete_pairs == {"offense_rate": 1, "refusal_rate": 0}
    other = _log(axis_folder, gold, n=8, measures="offense_rate,refusal_rate", annotator="bo")
    assert other.complete_pairs == {"offense_rate": 0, "refusal_rate": 0}  # another annotator's labels do not count


def test_texts_have_no_pairs(tmp_path: Path) -> None:
    texts = tmp_path / "texts.txt"
    texts.write_text("one\ntwo\nthree\n", encoding="utf-8")
    log = GoldLog(tmp_path / "gold.jsonl", draw_sample(texts, n=3), label_schemes("offense_rate"), annotator="ann")
    log.add(0, 1)
    assert log.n_pairs == 0 and log.complete_pairs == {}


def test_a_file_an_earlier_fairtalk_began_in_another_order_is_resumed_with_its_labels(axis_folder: Path, tmp_path: Path) -> None:
    """The same items, recorded in another order (before a pair's sides came together): taken, nothing given is lost."""
    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold, n=8)
    for step in range(3):
        log.add(step, 1)
    record = json.loads(sample_record_path(gold).read_text())
    record["items"] = record["items"][::-1]
    record["sample_sha256"] = "0" * 64
    sample_record_path(gold).write_text(json.dumps(record))
    again = _log(axis_folder, gold, n=8)
    assert again.n_given == 3 and again.position == 3
    record["items"] = record["items"][1:] + [["p99", "a"]]  # other items: still refused
    sample_record_path(gold).write_text(json.dumps(record))
    with pytest.raises(InputError, match=r"another sample \(the items drawn differ\)"):
        _log(axis_folder, gold, n=8)


def test_a_refused_label_or_undo_is_named_as_the_page_numbers_items(axis_folder: Path, tmp_path: Path) -> None:
    log = _log(axis_folder, tmp_path / "gold.jsonl")
    log.add(0, 1)
    with pytest.raises(InputError, match="^the label of item 1 is not the next label to give: item 2 is$"):
        log.add(0, 0)
    with pytest.raises(InputError, match="^there is no label 99 in this sample$"):
        log.add(99, 0)
    log.add(1, 0)
    assert log.last_given == 1
    with pytest.raises(InputError, match="^the label of item 1 is not the last label given: item 2 was$"):
        log.undo(0)  # a stale page's undo: the label of item 2 was given since, elsewhere
    assert log.position == 2
    log.undo(1)
    assert log.position == 1 and log.last_given == 0
    two = _log(axis_folder, tmp_path / "two.jsonl", n=4, measures="offense_rate,regard")
    two.add(0, 1)
    with pytest.raises(InputError, match="^the label of item 2, offense_rate is not the next label to give: item 1, regard is$"):
        two.add(2, 1)


def _edit(gold: Path, change: object) -> None:
    """Rewrite the gold file's rows through ``change(rows)`` (a person's edit by hand)."""
    rows = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines()]
    change(rows)  # type: ignore[operator]
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        (
            lambda rows: rows.append(dict(rows[0])),
            3,
            "offense_rate of pair {id} side {side} is labelled twice by 'ann' (first on line 1)",
        ),
        (lambda rows: rows[1].update(offense_rate=7), 2, "7 is not a label of offense_rate (one of 1, 0)"),
        (lambda rows: rows[0].update(text="another answer"), 1, "the row labels another text than pair {id} side {side}"),
    ],
    ids=["twice", "outside-the-scheme", "another-text"],
)
def test_a_file_score_gold_would_refuse_or_drop_a_label_of_is_not_resumed(
    axis_folder: Path, tmp_path: Path, change: object, line: int, message: str
) -> None:
    """A hand-appended duplicate row once resumed ("2 of 8 labels given") while score --gold refused the file; a 7
    counted as given was never asked again, and score --gold left it out."""
    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold)
    log.add(0, 1)
    log.add(1, 0)
    _edit(gold, change)
    first = log.sample.items[0]
    with pytest.raises(InputError) as info:
        _log(axis_folder, gold)
    assert info.value.line == line and str(info.value).startswith(f"{gold}:{line}: ")
    assert message.format(id=first.id, side=first.side) in str(info.value)
    assert "then label again" in str(info.value)
    other = tmp_path / "other.jsonl"  # another annotator's row of the same item twice is refused as well: score would
    log = _log(axis_folder, other, annotator="bo")
    log.add(0, 1)
    _edit(other, lambda rows: rows.append(dict(rows[0])))
    with pytest.raises(InputError, match="labelled twice by 'bo'"):
        _log(axis_folder, other)


def test_a_label_refused_on_resume_is_one_error_line_naming_the_file_and_line(
    axis_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from .conftest import run_label

    gold = tmp_path / "gold.jsonl"
    log = _log(axis_folder, gold, n=4)
    log.add(0, 1)
    _edit(gold, lambda rows: rows.append(dict(rows[0])))
    monkeypatch.setenv("COLUMNS", "400")

    def interrupted(self: object, poll_interval: float = 0.5) -> None:
        raise KeyboardInterrupt  # a resumed session stops at once (exit 130), never serves on

    monkeypatch.setattr("fairtalk.gold.LabelServer.serve_forever", interrupted)
    code, out, err = run_label(monkeypatch, capsys, str(axis_folder), "-m", "offense_rate", "-o", str(gold), "--n", "4")
    assert code == 2 and out == "" and err.startswith(f"error: {gold}:2: offense_rate of pair ") and len(err.splitlines()) == 1
