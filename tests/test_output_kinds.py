"""No command writes over another command's output: a file of the user's, a folder of another kind, and Ctrl-C says what is kept.

1. ``regard label -o`` and ``prompts paraphrase``/``generate -o`` replace a file only when every
   record is as fairtalk writes it: a gold file, hand labels or a completions file is refused.
2. Every command writing a report folder (``score``, ``compare``, ``prompts analyze``, ``audit``)
   refuses one holding another command's outputs, as ``train`` and ``reproduce`` do; its own it replaces.
3. ``train``, ``reproduce debias``/``planted`` and ``prompts analyze`` say on Ctrl-C what is kept
   and whether a rerun resumes (exit 130).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_corpus
from fairtalk.cli import app
from fairtalk.files import WRITTEN

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _write(path: Path, records: list[dict[str, object]]) -> str:
    text = "".join(json.dumps(r) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")
    return text


def _refused_file(result: object, path: Path, what: str) -> None:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    stderr = _flat(result.stderr)  # type: ignore[attr-defined]
    article = "an" if what[0] in "aeiou" else "a"  # "not an augmented corpus"
    assert stderr.startswith(f"error: {path}: -o: this file exists and is not {article} {what} fairtalk wrote"), stderr
    assert "move it, or give a new path" in stderr


# --- 1. a file of the user's is never replaced by machine output ---------------------------------------------


def test_regard_label_never_replaces_hand_labels(tmp_path: Path) -> None:
    texts = tmp_path / "texts.jsonl"
    _write(texts, [{"id": str(i), "text": f"XYZ worked as a doctor {i}"} for i in range(3)])
    gold = [
        {"id": str(i), "text": f"XYZ worked as a doctor {i}", "label": "positive", "annotator": "ann", "note": ""}
        for i in range(3)
    ]
    own = [{"id": str(i), "text": f"XYZ {i}", "label": "positive"} for i in range(3)]
    bare = [{"id": str(i), "label": 1} for i in range(3)]  # hand labels as numbers: write_labels writes names
    late = [{"id": "0", "label": "neutral"}, {"id": "1", "label": "neutral", "annotator": "ann"}]  # the first line alone passes
    for name, records in (("gold", gold), ("own", own), ("bare", bare), ("late", late)):
        out = tmp_path / f"{name}.jsonl"
        before = _write(out, records)
        result = runner.invoke(app, ["regard", "label", "--input", str(texts), "-o", str(out), "--regard", "builtin:tfidf"])
        _refused_file(result, out, "labels file")
        assert out.read_text(encoding="utf-8") == before, name
    mine = tmp_path / "labels.jsonl"
    command = ["regard", "label", "--input", str(texts), "-o", str(mine), "--regard", "builtin:tfidf"]
    assert runner.invoke(app, command).exit_code == 0
    assert runner.invoke(app, command).exit_code == 0  # its own labels it replaces
    assert [json.loads(line)["id"] for line in mine.read_text().splitlines()] == ["0", "1", "2"]


def test_augment_never_replaces_a_users_file_and_says_an_augmented_corpus(tmp_path: Path) -> None:
    """The refusal read "is not a augmented corpus fairtalk wrote" (a review): its article follows the noun."""
    corpus, mine = write_corpus(tmp_path), tmp_path / "mine.jsonl"
    text = _write(mine, [{"x": 1}])
    result = runner.invoke(app, ["augment", "--corpus", f"jsonl:{corpus}", "--axis", "gender", "-o", str(mine)])
    _refused_file(result, mine, "augmented corpus")
    assert "not an augmented corpus" in _flat(result.stderr) and mine.read_text(encoding="utf-8") == text


def test_prompts_paraphrase_and_generate_never_replace_another_kind_of_file(tmp_path: Path) -> None:
    completions = tmp_path / "completions.jsonl"
    prompts = tmp_path / "prompts.jsonl"
    assert runner.invoke(app, ["prompts", "paraphrase", "-o", str(prompts)]).exit_code == 0
    generate = ["prompts", "generate", "--model", "builtin:echo", "--seeds", "1", "--prompts", str(prompts)]
    assert runner.invoke(app, [*generate, "-o", str(completions)]).exit_code == 0
    before = completions.read_text(encoding="utf-8")
    _refused_file(runner.invoke(app, ["prompts", "paraphrase", "-o", str(completions)]), completions, "prompts file")
    assert completions.read_text(encoding="utf-8") == before
    assert runner.invoke(app, ["prompts", "paraphrase", "-o", str(prompts)]).exit_code == 0  # its own prompts it replaces
    labelled = tmp_path / "labelled.jsonl"  # completions labelled by hand: not what generate writes
    records = [{**json.loads(line), "label": 0} for line in before.splitlines()]
    text = _write(labelled, records)
    _refused_file(runner.invoke(app, [*generate, "-o", str(labelled)]), labelled, "completions file")
    assert labelled.read_text(encoding="utf-8") == text
    assert runner.invoke(app, [*generate, "-o", str(completions)]).exit_code == 0  # its own completions it replaces


# --- 2. a report folder never holds two commands' outputs ----------------------------------------------------


def _score(responses: Path, out: Path) -> list[str]:
    return ["score", "--responses", str(responses), "--axis", "gender", "-o", str(out), "--resamples", "100"]


def _labelled_completions(tmp_path: Path) -> Path:
    """Completions of 120 prompts (builtin:echo, 2 seeds), each given a label: analysed without a scorer's labels."""
    prompts, completions, labelled = tmp_path / "p.jsonl", tmp_path / "c.jsonl", tmp_path / "labelled.jsonl"
    assert runner.invoke(app, ["prompts", "paraphrase", "-o", str(prompts)]).exit_code == 0
    kept = [json.loads(line) for line in prompts.read_text().splitlines()]
    _write(prompts, [p for p in kept if p["structure"] in ("original", "always")])
    command = [
        "prompts",
        "generate",
        "--model",
        "builtin:echo",
        "--seeds",
        "2",
        "--prompts",
        str(prompts),
        "-o",
        str(completions),
    ]
    assert runner.invoke(app, command).exit_code == 0
    records = [json.loads(line) for line in completions.read_text().splitlines()]
    _write(labelled, [{**r, "label": i % 3 - 1} for i, r in enumerate(records)])
    return labelled


def _refused_folder(result: object, out: Path, holds: str, needs: str) -> None:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    stderr = _flat(result.stderr)  # type: ignore[attr-defined]
    assert stderr == f"error: {out}: the output folder holds {holds}; {needs} a folder of its own: give a new or empty one"


def test_every_report_folder_refuses_another_commands_outputs_and_replaces_its_own(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    corpus = write_corpus(data)
    runs = {}
    for name in ("base", "cand"):
        runs[name] = tmp_path / name
        audit = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "--resamples", "100"]
        assert runner.invoke(app, [*audit, "-o", str(runs[name])]).exit_code == 0
    responses = runs["base"] / "gender" / "responses.jsonl"
    scored, compared, analysed = tmp_path / "scored", tmp_path / "compared", tmp_path / "analysed"
    analyze = ["prompts", "analyze", "--completions", str(_labelled_completions(tmp_path)), "--draws", "2", "--resamples", "0"]
    compare = ["compare", str(runs["base"]), str(runs["cand"])]
    for command in (_score(responses, scored), [*compare, "-o", str(compared)], [*analyze, "-o", str(analysed)]):
        assert runner.invoke(app, command).exit_code == 0
        assert runner.invoke(app, command).exit_code == 0  # a rerun into its own folder replaces it
    listing = {folder: sorted(p.name for p in folder.iterdir()) for folder in (scored, compared, analysed)}
    score_report, comparison = "a score's report (report.md)", "a comparison's report (report.md, results.json)"
    analysis = "a prompt analysis (gaps.csv)"
    _refused_folder(runner.invoke(app, [*analyze, "-o", str(scored)]), scored, score_report, "a prompt analysis needs")
    _refused_folder(runner.invoke(app, _score(responses, analysed)), analysed, analysis, "a score's report needs")
    _refused_folder(runner.invoke(app, [*compare, "-o", str(scored)]), scored, score_report, "a comparison needs")
    _refused_folder(runner.invoke(app, _score(responses, compared)), compared, comparison, "a score's report needs")
    _refused_folder(runner.invoke(app, [*analyze, "-o", str(compared)]), compared, comparison, "a prompt analysis needs")
    audit = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "--pairs", "5", "-o", str(scored)]
    _refused_folder(runner.invoke(app, audit), scored, score_report, "an audit's run needs")
    assert {folder: sorted(p.name for p in folder.iterdir()) for folder in listing} == listing  # each left as it was
    _refused_folder(
        runner.invoke(app, _score(responses, runs["cand"])), runs["cand"], "an audit's run (run.json)", "a score's report needs"
    )
    # the results of `reproduce debias` (its table, made here as its marker lists it)
    debias = tmp_path / "debias"
    debias.mkdir()
    (debias / "table7.md").write_text("| model |\n")
    (debias / WRITTEN).write_text(json.dumps({"generator": "fairtalk", "files": ["table7.md"]}))
    holds = "the results of `reproduce debias` (table7.md)"
    _refused_folder(runner.invoke(app, [*analyze, "-o", str(debias)]), debias, holds, "a prompt analysis needs")
    _refused_folder(runner.invoke(app, _score(responses, debias)), debias, holds, "a score's report needs")
    assert sorted(p.name for p in debias.iterdir()) == [WRITTEN, "table7.md"]


# --- 3. Ctrl-C says what is kept ----------------------------------------------------------------------------


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


def _said(result: object) -> str:
    assert result.exit_code == 130, result.output  # type: ignore[attr-defined]
    return _flat(result.stderr)  # type: ignore[attr-defined]


def test_ctrl_c_in_train_reproduce_and_analyze_says_what_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fairtalk, "train_model", _interrupt)
    out = tmp_path / "ck"
    said = _said(runner.invoke(app, ["train", "seq2seq", "--corpus", str(write_corpus(tmp_path)), "-o", str(out)]))
    assert said == (
        f"interrupted; no checkpoint was written to {out}, and no epoch is kept: re-run the same command to train "
        "again from the start"
    )
    monkeypatch.setattr(fairtalk, "reproduce_debias", _interrupt)
    said = _said(runner.invoke(app, ["reproduce", "debias", "--quick", "-o", str(tmp_path / "d")]))
    assert said == "interrupted; nothing was kept yet: re-run the same command to start again"

    def trained_one(*, cache_dir: str | None, **kwargs: object) -> None:
        checkpoint = Path(str(cache_dir)) / "seq2seq-none-1"
        checkpoint.mkdir(parents=True)
        (checkpoint / "config.json").write_text("{}")
        (Path(str(cache_dir)) / ".staging-of-the-next").mkdir()
        raise KeyboardInterrupt

    monkeypatch.setattr(fairtalk, "reproduce_debias", trained_one)
    cache = tmp_path / "cache"
    said = _said(runner.invoke(app, ["reproduce", "debias", "--quick", "-o", str(tmp_path / "d"), "--cache", str(cache)]))
    assert said == (
        f"interrupted; what was finished (the checkpoints trained to the end, the answers stored) is kept in {cache}: "
        "re-run the same command to reuse it and do the rest"
    )
    monkeypatch.setattr("fairtalk.pipeline.reproduce_planted", _interrupt)
    said = _said(runner.invoke(app, ["reproduce", "planted", "--quick", "-o", str(tmp_path / "p")]))
    assert said == "interrupted; nothing was kept yet: re-run the same command to start again"
    monkeypatch.setattr(fairtalk, "analyze_prompts", _interrupt)
    analysed, completions = tmp_path / "analysed", tmp_path / "completions.jsonl"
    _write(
        completions, [{"group": "man", "template": "was known for", "structure": "original", "seed": 0, "text": "x", "label": 0}]
    )
    said = _said(runner.invoke(app, ["prompts", "analyze", "--completions", str(completions), "-o", str(analysed)]))
    assert said == (
        f"interrupted; nothing was written to {analysed} and no label is kept: re-run the same command to start again"
    )
    assert not analysed.exists()
