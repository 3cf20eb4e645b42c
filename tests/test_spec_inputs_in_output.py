"""An output folder never holds an input given as ``FORMAT:PATH`` or as an ``--axis`` lexicon file.

Review finding: ``train`` and ``reproduce debias`` checked the raw spec ``jsonl:d/c.jsonl``, which
names no path, so ``-o d`` (or ``-o .`` beside the corpus) wrote a checkpoint beside its input;
``train --axis d/lex.tsv -o d`` was not checked at all. Each refusal comes before any training.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.errors import OutputError
from fairtalk.files import check_output_folder

runner = CliRunner()


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.jsonl"
    rows = [{"context": f"my brother is a doctor {i}", "response": "he must work hard"} for i in range(30)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_train_refuses_a_folder_holding_its_format_path_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus(tmp_path / "data")
    before = sorted(p.name for p in corpus.parent.iterdir())
    result = runner.invoke(app, ["train", "seq2seq", "--corpus", f"jsonl:{corpus}", "--epochs", "1", "-o", str(corpus.parent)])
    assert result.exit_code == 2, result.output
    assert f"the output folder holds --corpus {corpus}" in _flat(result.stderr)
    monkeypatch.chdir(corpus.parent)
    result = runner.invoke(app, ["train", "seq2seq", "--corpus", "jsonl:corpus.jsonl", "--epochs", "1", "-o", "."])
    assert result.exit_code == 2 and "the output folder holds --corpus corpus.jsonl" in _flat(result.stderr)
    assert sorted(p.name for p in corpus.parent.iterdir()) == before  # no config.json, vocab.json or weights beside it


def test_train_refuses_a_folder_holding_its_axis_file(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "data")
    lexicon = tmp_path / "lex" / "lex.tsv"
    lexicon.parent.mkdir()
    lexicon.write_text("# groups: male female\nhe\tshe\nbrother\tsister\n")
    for debias in ("cda", "wer"):
        args = ["--corpus", f"jsonl:{corpus}", "--epochs", "1", "--debias", debias, "--axis", str(lexicon)]
        result = runner.invoke(app, ["train", "seq2seq", *args, "-o", str(lexicon.parent)])
        assert result.exit_code == 2, result.output
        assert f"the output folder holds --axis file {lexicon}" in _flat(result.stderr)
    assert [p.name for p in lexicon.parent.iterdir()] == ["lex.tsv"]


def test_reproduce_debias_refuses_a_folder_holding_its_inputs(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "rp")
    with pytest.raises(OutputError, match="the output folder holds the corpus"):
        fairtalk.reproduce_debias(out_dir=corpus.parent, quick=True, corpus=f"jsonl:{corpus}", eval_corpus="builtin:chitchat")
    with pytest.raises(OutputError, match="the output folder holds the corpus"):  # a cache folder holding it too
        fairtalk.reproduce_debias(
            out_dir=tmp_path / "out",
            cache_dir=corpus.parent,
            quick=True,
            corpus=f"jsonl:{corpus}",
            eval_corpus="builtin:chitchat",
        )
    lexicon = tmp_path / "lx" / "lex.tsv"
    lexicon.parent.mkdir()
    lexicon.write_text("# groups: male female\nhe\tshe\nbrother\tsister\n")
    with pytest.raises(OutputError, match="the output folder holds the --axis file"):
        fairtalk.reproduce_debias(out_dir=lexicon.parent, quick=True, axis=str(lexicon), corpus=f"jsonl:{corpus}")
    result = runner.invoke(
        app,
        [
            "reproduce",
            "debias",
            "--quick",
            "--corpus",
            f"jsonl:{corpus}",
            "--eval-corpus",
            "builtin:chitchat",
            "-o",
            str(corpus.parent),
        ],
    )
    assert result.exit_code == 2 and "the output folder holds the corpus" in _flat(result.stderr)
    assert sorted(p.name for p in corpus.parent.iterdir()) == ["corpus.jsonl"]
    assert sorted(p.name for p in lexicon.parent.iterdir()) == ["lex.tsv"]


def test_a_format_path_spec_is_checked_as_its_path_and_builtin_specs_name_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path / "d")
    for spec in (f"jsonl:{corpus}", f"text:{corpus}", f"path:{corpus.parent}"):
        with pytest.raises(OutputError, match="the output folder (holds|is) --in"):
            check_output_folder(corpus.parent, {"--in": spec}, hold=False)
    (tmp_path / "d" / "chitchat").write_text("not the built-in corpus\n")
    monkeypatch.chdir(tmp_path / "d")
    check_output_folder(".", {"--corpus": "builtin:chitchat", "--model": "python:bot.py:reply"}, hold=False)
