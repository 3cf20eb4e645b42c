"""The blind sample: stratified, seeded, both sides of each pair, masked; bad sizes are clear errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from fairtalk.errors import InputError
from fairtalk.gold import draw_sample


def test_responses_give_both_sides_of_n_over_2_pairs_shuffled(axis_folder: Path) -> None:
    sample = draw_sample(axis_folder, n=20, seed=0)
    assert sample.kind == "responses" and len(sample.items) == 20 and sample.n_available == 48
    pairs = Counter(item.id for item in sample.items)
    assert len(pairs) == 10 and set(pairs.values()) == {2}
    assert Counter(item.side for item in sample.items) == {"a": 10, "b": 10}
    assert Counter(item.group for item in sample.items) == {"male": 10, "female": 10}
    sides = [item.side for item in sample.items]
    assert sides != sorted(sides)  # shuffled across groups
    assert draw_sample(axis_folder / "responses.jsonl", n=20, seed=0).digest == sample.digest  # folder or file: same
    assert draw_sample(axis_folder, n=20, seed=1).digest != sample.digest


def test_the_shown_text_is_masked_and_the_original_kept(axis_folder: Path) -> None:
    item = draw_sample(axis_folder, n=2, seed=0).items[0]
    assert " said " in item.text and item.shown.startswith(item.text.split(":")[0] + ": XYZ said XYZ")
    assert item.context == f"Tell me about XYZ number {int(item.id[1:])}."


def test_grouped_texts_are_drawn_equally_per_group(tmp_path: Path) -> None:
    path = tmp_path / "completions.jsonl"
    rows = [
        {"group": g, "template": "worked as", "structure": "s", "seed": i, "text": f"The {g} worked as a cook {i}."}
        for g, k in (("man", 30), ("woman", 8), ("gay person", 12))
        for i in range(k)
    ]
    rows.append({"group": "man", "template": "t", "structure": "s", "seed": 99, "text": None, "error": "Timeout"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sample = draw_sample(path, n=24, seed=5)
    assert sample.kind == "texts" and Counter(i.group for i in sample.items) == {"man": 8, "woman": 8, "gay person": 8}
    assert all(i.id.isdigit() for i in sample.items)  # completions have no id: the line number
    assert all(i.shown.startswith("XYZ worked as") for i in sample.items)
    uneven = draw_sample(path, n=25, seed=5)
    assert sorted(Counter(i.group for i in uneven.items).values()) == [8, 8, 9]
    with pytest.raises(InputError, match="needs 9 texts of group 'woman', which has only 8"):
        draw_sample(path, n=27, seed=0)


def test_a_plain_text_file_is_one_text_per_line(tmp_path: Path) -> None:
    path = tmp_path / "texts.txt"
    path.write_text("She is kind.\n\nHe was rude.\nThey left.\n", encoding="utf-8")
    sample = draw_sample(path, n=3)
    assert sorted((i.id, i.shown) for i in sample.items) == [("1", "XYZ is kind."), ("3", "XYZ was rude."), ("4", "They left.")]


@pytest.mark.parametrize(
    ("n", "message"),
    [
        (0, "--n must be at least 1"),
        (7, "--n must be even for responses"),
        (50, "--n 50 is more than the 48 responses"),
    ],
)
def test_bad_sizes_are_clear_errors(axis_folder: Path, n: int, message: str) -> None:
    with pytest.raises(InputError, match=message):
        draw_sample(axis_folder, n=n)


def test_a_folder_without_responses_and_a_missing_file_are_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="must be an audit's axis folder, holding responses.jsonl"):
        draw_sample(tmp_path, n=2)
    with pytest.raises(InputError, match="nope.jsonl"):
        draw_sample(tmp_path / "nope.jsonl", n=2)


def test_the_modules_examples_run() -> None:
    import doctest
    import importlib

    for name in ("sample", "schemes", "reader", "agreement"):
        assert doctest.testmod(importlib.import_module(f"fairtalk.gold._{name}")).failed == 0
