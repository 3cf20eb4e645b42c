"""Completions without text, and completions that leave groups or pairs empty (issue 24).

A ``"text": null`` (or empty) row has nothing to label: it is a counted, reported skip, never
the string "None". Groups without completions leave their pairs without a gap: an error when no
pair is left, a stated warning when some are.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.errors import InputError
from fairtalk.prompts import GroupPair, GroupSet, analyze, analyze_prompts, read_completions

runner = CliRunner()
LABELS = (1, 0, -1, 1, 0)


def _rows(groups: tuple[str, ...], *, n_seeds: int = 3, text: object = "", label: bool = True) -> list[dict]:
    """Completion records of ``groups`` under two structures; ``text=""`` gives each its prompt plus a completion."""
    rows = []
    for g, group in enumerate(groups):
        for structure in ("original", "question"):
            for seed in range(n_seeds):
                prompt = f"The {group} worked as"
                row = {
                    "group": group,
                    "template": "worked as",
                    "kind": "occupation",
                    "structure": structure,
                    "seed": seed,
                    "prompt": prompt,
                    "completion": " a cook in a small town.",
                    "text": f"{prompt} a cook in a small town." if text == "" else text,
                }
                if label:
                    row["label"] = LABELS[(g + seed) % len(LABELS)]
                rows.append(row)
    return rows


def _write(path, rows: list[dict]):  # noqa: ANN001, ANN202
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _analyze(path, tmp_path, *extra: str):  # noqa: ANN001, ANN202
    args = [
        "prompts",
        "analyze",
        "--completions",
        str(path),
        "-o",
        str(tmp_path / "rep"),
        "--draws",
        "2",
        "--resamples",
        "0",
        "--regard",
        "builtin:tfidf",
        *extra,
    ]
    return runner.invoke(app, args)


def test_null_text_on_every_row_is_an_error_not_the_string_none(tmp_path) -> None:  # noqa: ANN001
    path = _write(tmp_path / "c.jsonl", _rows(("man", "woman"), text=None, label=False))
    with pytest.raises(InputError, match=r"every completion has no text \(6 null, 0 empty\)|no text"):
        read_completions(path)
    done = _analyze(path, tmp_path)
    assert done.exit_code == 2, done.output
    assert done.output.startswith("error: ") and "no text" in done.output and "Traceback" not in done.output
    assert not (tmp_path / "rep" / "results.json").exists()


def test_null_and_empty_texts_are_counted_skips_and_reported(tmp_path) -> None:  # noqa: ANN001
    rows = _rows(("man", "woman"))
    rows[0]["text"] = None
    rows[1]["text"] = "   "
    rows[2].pop("label")  # an unlabelled row with text is still labelled by the scorer, not skipped
    path = _write(tmp_path / "c.jsonl", rows)
    data = read_completions(path)
    assert data.data_summary.excluded == {"no_text": 2}
    assert len(data.frame) == len(rows) - 2 and "None" not in data.frame["text"].tolist()
    groups = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
    result = analyze_prompts(data, groups=groups, regard="builtin:tfidf", n_draws=2, n_resamples=0)
    assert result.data.n_rows == len(rows) - 2
    assert any("2 completions with no text" in w for w in result.warnings)
    groups_file = tmp_path / "g.tsv"
    groups_file.write_text("man\tgender\nwoman\tgender\n")
    done = _analyze(path, tmp_path, "--groups", str(groups_file))
    assert done.exit_code == 0, done.output
    assert "2 completions with no text" in " ".join(done.output.split())
    payload = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert any("2 completions with no text" in w for w in payload["warnings"])
    assert payload["import"]["n_no_text"] == 2 and payload["data"]["n_rows"] == len(rows) - 2


def test_completions_for_one_group_only_are_an_error_naming_the_missing_groups(tmp_path) -> None:  # noqa: ANN001
    path = _write(tmp_path / "c.jsonl", _rows(("man",)))
    done = _analyze(path, tmp_path)  # the default groups: man-woman, straight-gay, white-black
    assert done.exit_code == 2, done.output
    line = " ".join(done.output.split())
    assert line.startswith("error: no pair of groups") and "woman" in line and "Traceback" not in line
    with pytest.raises(InputError, match=r"no pair of groups can be compared.*woman"):
        analyze(
            read_completions(path).frame,
            groups=GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),)),
            n_resamples=0,
            n_draws=2,
        )


def test_only_other_labels_for_a_group_leave_its_pair_without_a_gap(tmp_path) -> None:  # noqa: ANN001
    rows = _rows(("man", "woman"))
    for row in rows:
        if row["group"] == "woman":
            row["label"] = 2
    frame = read_completions(_write(tmp_path / "c.jsonl", rows)).frame
    with pytest.raises(InputError, match=r"gender \(only 'other' labels for woman\)"):
        analyze(frame, groups=GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),)), n_resamples=0, n_draws=2)


def test_pairs_left_without_completions_are_a_stated_warning_when_some_remain(tmp_path) -> None:  # noqa: ANN001
    path = _write(tmp_path / "c.jsonl", _rows(("man", "woman")))
    done = _analyze(path, tmp_path)  # the default groups: two of the three pairs have no completions
    assert done.exit_code == 0, done.output
    line = " ".join(done.output.split())
    assert "warning: 2 of 3 pairs have no gap" in line
    assert "orientation (no completions for straight person, gay person)" in line and "race (no completions" in line
    payload = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert payload["gaps"]["gender"]["all"] is not None
    assert any("2 of 3 pairs have no gap" in w for w in payload["warnings"])


def test_a_file_of_only_failed_completions_says_they_all_failed(tmp_path) -> None:  # noqa: ANN001
    """Review finding: every completion failed (generate exit 0, "100 failed"), then analyze said "no completions in the file"."""
    rows = [r | {"completion": None, "text": None, "error": "TransportError: refused"} for r in _rows(("man", "woman"))]
    rows[1]["error"] = "ResponderError: f.py:complete raised RuntimeError: nope"
    path = _write(tmp_path / "c.jsonl", rows)
    with pytest.raises(InputError, match=r"all 12 completions failed \(the first with TransportError\): nothing to label"):
        read_completions(path)
    done = _analyze(path, tmp_path)
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and said.startswith("error: ") and "all 12 completions failed" in said
    assert "no completions in the file" not in said
