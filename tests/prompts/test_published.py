"""Tests for fairtalk.prompts._published: the published outputs' layout, validation and alignment check."""

from __future__ import annotations

import shutil

import pytest

from fairtalk.errors import InputError
from fairtalk.prompts import find_published_files, read_published
from fairtalk.prompts._published import COLUMNS

from .conftest import ROBUST, make_published


def test_layout_rows_to_group_template_structure(published) -> None:
    result = read_published(published, n_paraphrases=2)
    frame = result.frame
    assert tuple(frame.columns) == COLUMNS
    summary = result.data_summary
    assert summary.seeds == (3, 9) and summary.n_records == len(frame) == 2 * 60 * 5
    assert summary.alignment_checked == "all" and summary.misaligned == {3: 0, 9: 0}
    row = frame.iloc[5 * 7 + 3]  # prompt 7 = template 1 ("was described as"), group 1 (woman); slot 3
    assert (row.group, row.template, row.structure, row.seed) == ("woman", "was described as", "paranmt:1", 3)
    assert row.text.startswith("i knew the woman")
    assert list(frame["structure"].cat.categories) == ["original", "paranmt:0", "qqppos:0", "paranmt:1", "qqppos:1"]
    assert frame.iloc[300].seed == 9 and frame.iloc[300].structure == "original"
    assert result.summary()["misaligned_by_seed"] == {"3": 0, "9": 0}


def test_read_published_returns_prompt_data(published) -> None:
    from fairtalk.prompts import PromptData

    result = read_published(published, n_paraphrases=2)
    assert isinstance(result, PromptData) and result.source == "published"
    summary = result.data_summary
    assert (summary.n_records, summary.n_texts, summary.n_excluded) == (600, 600, 0)
    assert summary.seeds == (3, 9) and summary.n_structures == 5 and summary.alignment_checked == "all"
    assert summary.groups == tuple(sorted(summary.groups)) and len(summary.groups) == 6
    assert result.summary() == {
        "n_rows": 600,
        "n_kept": 600,
        "seeds": [3, 9],
        "alignment_checked": "all",
        "misaligned_by_seed": {"3": 0, "9": 0},
        "misaligned_dropped": 0,
        "prompts_source": summary.prompts_source,
        "regard": "Sheng et al.'s BERT regard classifier (the labels published with the outputs)",
    }
    with pytest.raises(TypeError):
        result.data_summary.misaligned[3] = 5  # type: ignore[index]


def test_misaligned_rows_are_counted_and_optionally_dropped(tmp_path) -> None:
    folder = make_published(tmp_path, shift_last=True)
    kept = read_published(folder, n_paraphrases=2)
    assert kept.data_summary.misaligned == {3: 1, 9: 1} and len(kept.frame) == 600
    assert (~kept.frame["aligned"]).sum() == 2
    dropped = read_published(folder, n_paraphrases=2, misaligned="drop")
    assert dropped.data_summary.excluded["misaligned"] == 2 and len(dropped.frame) == 598 and dropped.frame["aligned"].all()
    assert dropped.data_summary.excluded == {"misaligned": 2} and dropped.data_summary.n_texts == 598


def test_without_paraphrase_files_only_originals_are_checked(published) -> None:
    shutil.rmtree(published.parent / "prompts" / "paraphrased")
    result = read_published(published, n_paraphrases=2)
    assert result.data_summary.alignment_checked == "original" and result.data_summary.misaligned == {3: 0, 9: 0}
    assert result.parses == {}


def test_row_count_and_label_errors(published) -> None:
    with pytest.raises(InputError, match=r"expected 6060 rows \(60 prompts x 101\), got 300"):
        read_published(published)
    path = published / "out_seed_3_predictions.txt"
    lines = path.read_text().splitlines()
    lines[4] = "7\tThe man"
    path.write_text("\n".join(lines))
    with pytest.raises(InputError, match="label must be one of") as info:
        read_published(published, n_paraphrases=2)
    assert info.value.line == 5
    lines[4] = "no tab here"
    path.write_text("\n".join(lines))
    with pytest.raises(InputError, match="expected label<TAB>text"):
        read_published(published, n_paraphrases=2)


def test_no_files(tmp_path) -> None:
    with pytest.raises(InputError, match="no out_seed"):
        find_published_files(tmp_path)
    with pytest.raises(InputError, match="not a folder"):
        find_published_files(tmp_path / "missing")


def test_two_files_of_one_seed_are_refused(published, tmp_path) -> None:
    """Review finding: out_seed_3_… and out_seed_03_… (other contents) were both read as seed 3, one ignored unsaid."""
    (published / "out_seed_03_predictions.txt").write_text("1\tThe man worked as a baker\n")
    with pytest.raises(InputError, match=r"two files of seed 3: out_seed_03_predictions.txt and out_seed_3_predictions.txt"):
        find_published_files(published)
    from typer.testing import CliRunner

    from fairtalk.cli import app

    done = CliRunner().invoke(app, ["prompts", "analyze", "--published", str(published), "-o", str(tmp_path / "o")])
    assert done.exit_code == 2 and "error:" in done.output and "out_seed_03_predictions.txt" in done.output


def test_an_empty_prompts_file_is_named(published, tmp_path) -> None:
    """Review finding: an empty --prompts-file blamed the outputs ("expected 0 rows (0 prompts x 101)")."""
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    with pytest.raises(InputError, match="the fixed prompts file is empty") as caught:
        read_published(published, prompts_file=empty, n_paraphrases=2)
    assert caught.value.path == str(empty)


@pytest.mark.skipif(not ROBUST.is_dir(), reason="reference data absent")
def test_published_data_has_18_misaligned_rows_per_seed() -> None:
    result = read_published(ROBUST / "generated-outputs")
    assert result.data_summary.n_records == 60600 and len(result.data_summary.seeds) == 10
    assert set(result.data_summary.misaligned.values()) == {18}
    bad = result.frame[~result.frame["aligned"]]
    assert set(bad["prompt_index"]) == {59}
    assert sorted({int(s.split(":")[1]) for s in bad["structure"].astype(str)}) == list(range(32, 50))
    assert result.parses["paranmt:0"] == "(ROOT (FRAG (LST ) (. )))"


def test_outputs_alone_are_checked_on_originals_only_and_said_so(tmp_path) -> None:
    """Review finding: the outputs folder on its own gave 0 misaligned and a silent ``--misaligned drop``."""
    from fairtalk.prompts._published import PUBLISHED_LABELLER, alignment_warning

    source = make_published(tmp_path / "src", shift_last=True)
    alone = tmp_path / "o" / "generated-outputs"
    shutil.copytree(source, alone)
    kept = read_published(alone, n_paraphrases=2)
    assert kept.data_summary.alignment_checked == "original" and kept.data_summary.misaligned == {3: 0, 9: 0}
    warning = alignment_warning(kept.data_summary)
    assert warning is not None and "only the original prompts' rows were checked" in warning and "--paraphrases DIR" in warning
    with pytest.raises(InputError, match="--misaligned drop needs the paraphrase files") as info:
        read_published(alone, n_paraphrases=2, misaligned="drop")
    assert "--paraphrases DIR" in info.value.message and info.value.path == str(tmp_path / "o" / "prompts" / "paraphrased")
    given = read_published(alone, n_paraphrases=2, paraphrases=source.parent / "prompts" / "paraphrased", misaligned="drop")
    assert given.data_summary.excluded == {"misaligned": 2} and alignment_warning(given.data_summary) is None
    assert kept.data_summary.labels_from == PUBLISHED_LABELLER and "Sheng et al." in PUBLISHED_LABELLER


def test_a_gzip_output_file_is_named_as_one(published) -> None:
    import gzip

    path = published / "out_seed_3_predictions.txt"
    path.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(InputError, match="gzip-compressed.*gunzip") as info:
        read_published(published, n_paraphrases=2)
    assert info.value.path == str(path) and "0x8b" not in info.value.message
