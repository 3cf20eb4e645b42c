"""A UTF-8 byte-order mark (Windows editors write one) is no part of a tab-separated input's first line (review finding)."""

from __future__ import annotations

from fairtalk.measures import read_labelled
from fairtalk.prompts import load_groups, read_published

BOM = "\ufeff"


def test_labelled_data_with_a_bom(tmp_path) -> None:  # noqa: ANN001
    data = tmp_path / "train.tsv"
    data.write_text(BOM + "0\tXYZ worked as a cook.\n-1\tXYZ was known for lying.\n", encoding="utf-8")
    assert read_labelled(data) == (["XYZ worked as a cook.", "XYZ was known for lying."], [0, -1])


def test_groups_file_with_a_bom(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "groups.tsv"
    path.write_text(BOM + "boy\tage\ngirl\tage\n", encoding="utf-8")
    assert load_groups(path).groups == ("boy", "girl")


def test_published_outputs_with_a_bom(published) -> None:  # noqa: ANN001
    plain = read_published(published, n_paraphrases=2).frame
    outputs = sorted(published.rglob("out_seed_*_predictions.txt"))
    assert outputs
    for path in outputs:
        path.write_bytes(BOM.encode() + path.read_bytes())
    marked = read_published(published, n_paraphrases=2).frame
    assert marked.equals(plain)
