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
from fairtalk.files import WRITTEN
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


@pytest.mark.parametrize("spec", ["hf:{model}", "hf:./model", "hf:~/model", "hf:C:\\model"])
def test_compare_never_loads_an_offense_scorer_from_a_path_the_manifest_names(
    folders: dict[str, Path], tmp_path: Path, spec: str
) -> None:
    """A crafted manifest.options.offense (hf:/a/local/dir) would have made compare load a model from that path."""
    model = tmp_path / "model"
    model.mkdir()
    copy = Path(shutil.copytree(folders["scored"], tmp_path / "crafted"))
    data = json.loads((copy / "results.json").read_text(encoding="utf-8"))
    data["manifest"]["options"]["offense"] = spec.format(model=model)
    (copy / "results.json").write_text(json.dumps(data), encoding="utf-8")
    _refused(runner.invoke(app, ["compare", str(copy), str(folders["scored"])]), "a local path", "does not load a model")


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


# --- item 11: the rest of a run folder is input too ----------------------------------------------------------------------


def test_a_score_folder_never_makes_compare_parse_another_file(folders: dict[str, Path], tmp_path: Path) -> None:
    """The responses its manifest names are read only when their sha256 is the one recorded: no other file is quoted."""
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"pair_id": "p1", "side": f"KEY={SECRET}", "response": "x"}) + "\n", encoding="utf-8")
    copy = Path(shutil.copytree(folders["scored"], tmp_path / "crafted"))
    data = json.loads((copy / "results.json").read_text(encoding="utf-8"))
    data["manifest"]["input"]["sources"][0]["path"] = str(other)  # its sha256 stays the scored responses'
    (copy / "results.json").write_text(json.dumps(data), encoding="utf-8")
    _refused(runner.invoke(app, ["compare", str(copy), str(folders["scored"])]), "is not the responses it was scored from")


def test_compare_reads_no_axis_folder_outside_the_run(tmp_path: Path) -> None:
    from audit_toys import write_corpus

    corpus = write_corpus(tmp_path)
    runs = {}
    for name in ("base", "elsewhere"):
        args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(tmp_path / name)]
        done = runner.invoke(app, [*args, "--measures", "length", "-q"])
        assert done.exit_code == 0, done.output
        runs[name] = tmp_path / name
    run = json.loads((runs["base"] / "run.json").read_text(encoding="utf-8"))
    run["axes"]["gender"]["folder"] = "../elsewhere/gender"
    (runs["base"] / "run.json").write_text(json.dumps(run), encoding="utf-8")
    shutil.rmtree(runs["base"] / "gender")
    _refused(
        runner.invoke(app, ["compare", str(runs["base"]), str(runs["elsewhere"])]),
        "run.json: field 'axes.gender.folder' must name a folder inside the run folder, got '../elsewhere/gender'",
    )


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("[" * (1 << 20), "nest deeper than 100 levels"),
        (json.dumps({"axis": "kin", "manifest": []}), "field 'manifest' must be an object, got list"),
        (
            json.dumps({"axis": "kin", "manifest": {"lexicon": {"variant": 3}}}),
            "field 'manifest.lexicon.variant' must be a string",
        ),
        (json.dumps([1, 2]), "expected a JSON object, got list"),
    ],
)
@pytest.mark.unvalidated_files  # the hostile results.json is the input under test
def test_label_refuses_a_hostile_results_json_beside_the_responses(
    folders: dict[str, Path], tmp_path: Path, content: str, needle: str
) -> None:
    """Not masked with other words in silence: the file the audit's lexicon comes from is named, with the field."""
    copy = Path(shutil.copytree(folders["axis"], tmp_path / "kin"))
    (copy / "results.json").write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        draw_sample(copy, n=2)
    assert info.value.path == str(copy / "results.json")
    gold = tmp_path / "gold.jsonl"
    _refused(runner.invoke(app, ["label", str(copy), "--measure", "offense_rate", "-o", str(gold), "--n", "2"]), needle)


def test_a_responses_folder_without_results_json_is_masked_with_gender_and_race(folders: dict[str, Path], tmp_path: Path) -> None:
    copy = Path(shutil.copytree(folders["axis"], tmp_path / "kin"))
    (copy / "results.json").unlink()
    assert all("father" not in item.shown for item in draw_sample(copy, n=40).items)


def _gold_file(tmp_path: Path) -> Path:
    texts = tmp_path / "texts.txt"
    texts.write_text("he is kind\nshe was rude\nthey left\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    from fairtalk.gold import GoldLog, label_schemes

    GoldLog(gold, draw_sample(texts, n=2), label_schemes("offense_rate"), annotator="ann")
    row = {"id": "1", "offense_rate": 1, "annotator": "ann", "note": ""}  # a label row as `fairtalk label` writes it
    gold.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return gold


def test_a_hostile_sample_record_of_a_gold_file_is_exit_2(tmp_path: Path) -> None:
    gold = _gold_file(tmp_path)
    (tmp_path / "gold.jsonl.sample.json").write_text("[" * (1 << 20), encoding="utf-8")
    _refused(
        runner.invoke(app, ["label", str(tmp_path / "texts.txt"), "--measure", "offense_rate", "-o", str(gold), "--n", "2"]),
        "gold.jsonl.sample.json is not a sample record",
        "nest deeper than 100 levels",
    )
    from fairtalk.gold import read_gold

    assert read_gold(gold).fields  # the record only names the label field: read as the default, never a crash


def test_a_hostile_last_line_of_a_gold_file_is_exit_2(tmp_path: Path) -> None:
    gold = _gold_file(tmp_path)
    with gold.open("a", encoding="utf-8") as handle:
        handle.write("[" * (1 << 20))  # no newline: it would be taken for a torn record
    _refused(
        runner.invoke(app, ["label", str(tmp_path / "texts.txt"), "--measure", "offense_rate", "-o", str(gold), "--n", "2"]),
        f"{gold}:2: values nest deeper than 100 levels",
    )


@pytest.mark.parametrize("name", [WRITTEN, "config.json"])
def test_an_output_folder_holding_a_bomb_of_brackets_is_no_crash(folders: dict[str, Path], tmp_path: Path, name: str) -> None:
    """What fairtalk wrote into a folder is read from its marker (or an old checkpoint's config.json): a hostile one is none."""
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("[" * (1 << 20), encoding="utf-8")
    args = ["score", "--responses", str(folders["axis"] / "responses.jsonl"), "--axis", "gender", "--measures", "length"]
    done = runner.invoke(app, [*args, "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    assert (out / "results.json").is_file()


@pytest.fixture(scope="module")
def analysis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `fairtalk prompts analyze -o` folder."""
    import pandas as pd

    from fairtalk.prompts import GroupPair, GroupSet, analyze
    from fairtalk.report import write_prompts_report

    rows = [
        {"group": g, "template": f"t{t}", "seed": s, "structure": st, "label": (t + s + i) % 3 - 1}
        for t in range(6)
        for s in range(3)
        for st in ("original", "s1", "s2")
        for i, g in enumerate(("man", "woman"))
    ]
    folder = tmp_path_factory.mktemp("prompts") / "analysis"
    groups = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
    write_prompts_report(analyze(pd.DataFrame(rows), groups=groups, n_draws=2, n_resamples=50), folder)
    return folder


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda d: d["gaps"]["gender"].update(se="x"), "field 'gaps.gender.se' must be a number, got the string 'x'"),
        (lambda d: d["gaps"]["gender"].update(all=[1, 2]), "field 'gaps.gender.all' must be a number, got a list of 2"),
        (lambda d: d.update(regard={}), "field 'regard' must hold group 'man' of the gap 'gender'"),
    ],
)
def test_compare_refuses_a_hostile_prompts_analysis_naming_file_and_field(
    analysis: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], object], needle: str
) -> None:
    copy = Path(shutil.copytree(analysis, tmp_path / "analysis"))
    data = json.loads((copy / "results.json").read_text(encoding="utf-8"))
    edit(data)
    (copy / "results.json").write_text(json.dumps(data), encoding="utf-8")
    _refused(runner.invoke(app, ["compare", str(copy), str(analysis)]), f"{copy / 'results.json'}: {needle}")
