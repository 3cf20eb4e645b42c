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
    firsts, seconds = sample.items[0::2], sample.items[1::2]
    assert [a.id for a in firsts] == [b.id for b in seconds]  # a pair's two sides one after the other
    assert {a.side for a in firsts} == {"a", "b"}  # which side comes first is drawn for each pair
    assert len({a.id for a in firsts}) == 10 and [a.id for a in firsts] != sorted(a.id for a in firsts)  # pairs shuffled
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


def test_a_multiway_axis_masks_every_groups_terms(tmp_path: Path) -> None:
    """``fairtalk label --axis religion`` masked christian and muslim terms alone (the library's silent first pair)."""
    path = tmp_path / "texts.txt"
    path.write_text("We met at the synagogue.\nThe pagoda and the sutras.\nThe church and the mosque.\n", encoding="utf-8")
    shown = sorted(item.shown for item in draw_sample(path, n=3, axes=("religion",)).items)
    assert shown == ["The XYZ and the XYZ.", "The pagoda and the XYZ.", "We met at the XYZ."]


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


def test_a_multi_turn_context_is_masked_turn_by_turn(tmp_path: Path) -> None:
    """A masked word ending one turn and one opening the next stay two turns (a regex's \\s matches U+001E)."""
    from fairtalk.records import join_turns, split_turns, turn_roles

    folder = tmp_path / "gender"
    folder.mkdir()
    contexts = [
        join_turns(["tell me about him", "hello there, what about him?", "she is late"]),  # hello: a word of the race lexicon
        join_turns(["quick question about her", "he is late"], roles=["user", "user"]),
    ]
    rows = [
        {"pair_id": f"p{i}", "side": side, "context": context, "response": "fine"}
        for i, context in enumerate(contexts)
        for side in "ab"
    ]
    (folder / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    shown = {item.id: item.context for item in draw_sample(folder, n=4, seed=0).items}
    assert shown["p0"] is not None and shown["p1"] is not None
    assert split_turns(shown["p0"]) == ["tell me about XYZ", "XYZ there, what about XYZ?", "XYZ is late"]
    assert turn_roles(shown["p0"]) == ["user", "assistant", "user"]
    assert split_turns(shown["p1"]) == ["quick question about XYZ", "XYZ is late"]
    assert turn_roles(shown["p1"]) == ["user", "user"]


def test_a_pairs_contexts_the_mask_leaves_apart_are_shown_as_one(tmp_path: Path) -> None:
    """``did he work`` -> ``did they work``: the mask reads ``he`` in one and ``they work`` in the other; the page shows one context."""
    from fairtalk import Swapper, load_lexicon

    nonbinary = Swapper(load_lexicon("nonbinary"))
    a, b = "Did he work for the church? I think he works there.", "Did they work for the church? I think they work there."
    assert nonbinary.swap_text(a) == b and nonbinary.mask(a) != nonbinary.mask(b)  # what the mask alone cannot make alike
    folder = tmp_path / "nonbinary"
    folder.mkdir()
    rows = [{"pair_id": "p0", "side": side, "context": text, "response": "fine"} for side, text in (("a", a), ("b", b))]
    (folder / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    first, second = draw_sample(folder, n=2, seed=0, axes=["nonbinary"]).items
    assert first.context == second.context
    assert first.context == "Did XYZ for the church? I think XYZ there."
