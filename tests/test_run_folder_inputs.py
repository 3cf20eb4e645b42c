"""A run folder someone else wrote is input: its readers open no path it names and echo no file the user did not name.

Issue 38, items 11 and 18: ``compare`` and ``label`` rebuilt the audit's lexicon from
``manifest.lexicon.source`` and quoted the first malformed line of whatever file it named (a
``.env`` into a CI log). A run folder now carries its custom lexicon (``manifest.lexicon.text``
with its ``text_sha256``); readers use that copy, or a built-in lexicon by name, and a folder
without a copy is a clear exit 2.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fairtalk import InputError, Response, SpecError, write_responses
from fairtalk.cli import app
from fairtalk.gold import draw_sample
from fairtalk.lexicons import lexicon_by_name, lexicon_record, lexicon_text, load_lexicon, recorded_lexicon

runner = CliRunner()
SECRET = "sk-not-a-real-key-0123456789"
LEXICON = "# axis: kin\n# groups: male female\nhe\tshe\nhis\ther\nfather\tmother\nboy\tgirl\n"


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def _refused(done: Any, *needles: str) -> str:
    """Exit 2, one `error:` line holding every needle, never the secret, no traceback."""
    text = _flat(done.output)
    assert done.exit_code == 2, done.output
    assert text.startswith("error:") and "Traceback" not in done.output, done.output
    assert SECRET not in done.output
    for needle in needles:
        assert needle in text, (needle, text)
    return text


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A `score` folder of a custom lexicon file (then moved away), and a `.env` holding a secret."""
    root = tmp_path_factory.mktemp("runs")
    lexicon = root / "kin.tsv"
    lexicon.write_text(LEXICON, encoding="utf-8")
    records = []
    for i in range(20):
        records += [
            Response(f"p{i}", "a", f"his father {i}", "you are a stupid idiot" if i % 3 == 0 else "see you tomorrow"),
            Response(f"p{i}", "b", f"her mother {i}", "maybe later then"),
        ]
    responses = root / "kin" / "responses.jsonl"
    responses.parent.mkdir()
    write_responses(records, responses)
    args = ["score", "--responses", str(responses), "--axis", str(lexicon), "--measures", "offense,length"]
    done = runner.invoke(app, [*args, "-o", str(root / "scored"), "-q"])
    assert done.exit_code == 0, done.output
    secret = root / "secret.env"
    secret.write_text(f"OPENAI_API_KEY={SECRET}\n", encoding="utf-8")
    lexicon.rename(root / "moved.tsv")  # a downloaded artifact: the file it was read from is not there
    shutil.copy(root / "scored" / "results.json", root / "kin" / "results.json")  # `label` reads it beside the responses
    return {"scored": root / "scored", "axis": root / "kin", "secret": secret, "lexicon": root / "moved.tsv"}


def _copy(folder: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    copy = Path(shutil.copytree(folder, tmp_path / folder.name))
    data = json.loads((copy / "results.json").read_text(encoding="utf-8"))
    edit(data["manifest"]["lexicon"])
    (copy / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return copy


def _to_secret(secret: Path) -> Callable[[dict[str, Any]], object]:
    """The edit of a crafted results.json: the lexicon's source is the secret, and no copy (an old run's record)."""

    def edit(record: dict[str, Any]) -> None:
        record.update(source=str(secret), variant="custom")
        record.pop("text")
        record.pop("text_sha256")

    return edit


# --- the copy is kept and used -------------------------------------------------------------------------------------------


def test_a_custom_lexicon_is_kept_in_the_manifest_with_its_hash(folders: dict[str, Path]) -> None:
    record = json.loads((folders["scored"] / "results.json").read_text(encoding="utf-8"))["manifest"]["lexicon"]
    assert record["variant"] == "custom" and record["source"].endswith("kin.tsv")
    assert record["text"] == LEXICON
    lexicon = recorded_lexicon(record, axis="kin", path="results.json")
    assert [(p.a, p.b) for p in lexicon.pairs] == [("he", "she"), ("his", "her"), ("father", "mother"), ("boy", "girl")]
    assert lexicon.sha256 == record["sha256"]  # the file's: a comparison sees the same lexicon version


def test_compare_uses_the_copy_when_the_lexicon_file_is_gone(folders: dict[str, Path]) -> None:
    done = runner.invoke(app, ["compare", str(folders["scored"]), str(folders["scored"]), "-q"])
    assert done.exit_code == 0, done.output


def test_compare_never_opens_the_path_a_crafted_results_json_names(folders: dict[str, Path], tmp_path: Path) -> None:
    crafted = _copy(folders["scored"], tmp_path, _to_secret(folders["secret"]))
    text = _refused(
        runner.invoke(app, ["compare", str(crafted), str(folders["scored"])]),
        "field 'manifest.lexicon.text' holds no copy",
        "rerun the audit",
    )
    assert "OPENAI_API_KEY" not in text


def test_compare_never_reads_a_path_given_as_a_built_in_name(folders: dict[str, Path], tmp_path: Path) -> None:
    crafted = _copy(folders["scored"], tmp_path, lambda r: r.update(variant="default", axis=str(folders["secret"])))
    _refused(
        runner.invoke(app, ["compare", str(crafted), str(folders["scored"])]), "field 'manifest.lexicon'", "unknown lexicon axis"
    )


def test_a_copy_that_does_not_match_its_hash_is_refused(folders: dict[str, Path], tmp_path: Path) -> None:
    crafted = _copy(folders["scored"], tmp_path, lambda r: r.update(text=r["text"] + "brother\tsister\n"))
    _refused(
        runner.invoke(app, ["compare", str(crafted), str(folders["scored"])]),
        "field 'manifest.lexicon.text' does not match its sha256",
    )


def test_a_copy_that_is_no_lexicon_is_named_by_field_and_line(folders: dict[str, Path], tmp_path: Path) -> None:
    import hashlib

    bad = f"he\tshe\nOPENAI_API_KEY={SECRET}\n"
    crafted = _copy(
        folders["scored"], tmp_path, lambda r: r.update(text=bad, text_sha256=hashlib.sha256(bad.encode()).hexdigest())
    )
    _refused(
        runner.invoke(app, ["compare", str(crafted), str(folders["scored"])]),
        "field manifest.lexicon.text, line 2: malformed line",
    )


def test_an_attribute_list_a_copy_names_as_a_file_is_not_opened(folders: dict[str, Path], tmp_path: Path) -> None:
    import hashlib

    text = f"# attributes: career {folders['secret']}\n{LEXICON}"
    crafted = _copy(
        folders["scored"], tmp_path, lambda r: r.update(text=text, text_sha256=hashlib.sha256(text.encode()).hexdigest())
    )
    _refused(runner.invoke(app, ["compare", str(crafted), str(folders["scored"])]), "names the attribute list", "a file")


# --- label ---------------------------------------------------------------------------------------------------------------


def test_label_masks_with_the_copy_when_the_lexicon_file_is_gone(folders: dict[str, Path]) -> None:
    shown = [item.shown for item in draw_sample(folders["axis"], n=40).items]
    assert all("father" not in text and "mother" not in text for text in shown)


def test_label_never_opens_the_path_a_crafted_results_json_names(folders: dict[str, Path], tmp_path: Path) -> None:
    crafted = _copy(folders["axis"], tmp_path, _to_secret(folders["secret"]))
    with pytest.raises(InputError) as info:
        draw_sample(crafted, n=2)
    assert SECRET not in str(info.value) and "--axis FILE" in str(info.value)
    assert info.value.path == str(crafted / "results.json")
    gold = tmp_path / "gold.jsonl"
    _refused(runner.invoke(app, ["label", str(crafted), "--measure", "offense_rate", "-o", str(gold), "--n", "2"]), "--axis FILE")
    # what the message asks for works: the user names the lexicon file
    assert draw_sample(crafted, n=2, axes=[str(folders["lexicon"])]).items


# --- the library ---------------------------------------------------------------------------------------------------------


def test_the_copy_round_trips_every_setting_of_the_format(tmp_path: Path) -> None:
    text = (
        "# axis: mixed\n# groups: m f\n# attributes: career family\n# both-sides: mad\n# keep: oh my god\n"
        "# needs-determiner: man\n# needs-cue: sick = that's, it's\n# needs-cue: lit\n# markers-a: bro\n# markers-b: sis\n"
        "man\twoman\nguy -> girl\nlad <- lass\nmad - cross\ncalm\tmad\nsick\tlit\nill - lit\n"
    )
    path = tmp_path / "mixed.tsv"
    path.write_text(text, encoding="utf-8")
    lexicon = load_lexicon(path)
    record = lexicon_record(lexicon)
    assert record["text"] == lexicon_text(lexicon)
    back = recorded_lexicon(record, axis="mixed", path="results.json", attributes=True)
    for name in ("groups", "attributes", "keep", "needs_determiner", "needs_cue", "markers", "sha256", "source"):
        assert getattr(back, name) == getattr(lexicon, name), name
    assert [(p.a, p.b, p.direction) for p in back.pairs] == [(p.a, p.b, p.direction) for p in lexicon.pairs]


def test_a_built_in_lexicon_is_recorded_by_name_and_rebuilt_by_name() -> None:
    for axis, variant in (("gender", "paper"), ("religion:christian-muslim", "default"), ("race", "default")):
        lexicon = lexicon_by_name(axis, variant=variant)
        record = lexicon_record(lexicon)
        assert "text" not in record
        assert recorded_lexicon(record, axis=lexicon.axis, path="results.json").pairs == lexicon.pairs


def test_lexicon_by_name_never_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "gender"  # a file named like no axis, and one named like an axis: neither is read
    path.write_text("he\tshe\n", encoding="utf-8")
    with pytest.raises(SpecError, match="unknown lexicon axis"):
        lexicon_by_name(str(path))
    assert lexicon_by_name("gender") is load_lexicon("gender")
