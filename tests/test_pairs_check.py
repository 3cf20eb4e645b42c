"""The counterfactual validity check (pairs_check.json): leftover markers, kept terms, resolutions, top swaps."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import fairtalk
from fairtalk import Lexicon, Pair, Swapper, check_pairs, load_lexicon
from fairtalk.cli import app
from fairtalk.lexicons import WordPair
from fairtalk.results import SCHEMA_VERSION


def _pair(pid: str, a: str, b: str, side: str) -> Pair:
    return Pair(pid, "gender", a=a, b=b, original_side=side)  # type: ignore[arg-type]


def test_leftover_kept_and_resolutions_are_counted() -> None:
    swapper = Swapper(load_lexicon("gender"))
    pairs = [
        _pair("p1", "he saw his dog", "she saw her dog", "a"),  # sound
        _pair("p2", "oh man, he left", "oh man, she left", "a"),  # "man" kept on purpose
        _pair("p3", "he and his dad", "she and her dad", "a"),  # "dad" left on the swapped side
        _pair("p4", "I saw him", "I saw her", "b"),  # original her -> him
    ]
    check = check_pairs(pairs, swapper)
    assert check.n_pairs == 4 and check.n_leftover == 1 and check.leftover_share == 0.25
    assert check.leftover_terms == (("dad", 1),)
    assert check.leftover_examples == (("p3", "she and her dad"),)
    assert check.n_pairs_with_kept == 1 and check.kept == (("man (phrase)", 1),)
    assert dict(check.ambiguous) == {"his→her": 2, "her→him": 1}
    assert dict(check.top_swaps)["he→she"] == 3


def test_markers_of_a_users_lexicon_are_leftover_words() -> None:
    lexicon = Lexicon(
        "religion",
        ("christian", "muslim"),
        (WordPair("church", "mosque", 1),),
        (),
        "custom",
        "test:religion",
        "0" * 64,
        markers=(("jesus",), ("ramadan",)),
    )
    pairs = [_pair("p1", "church and Jesus", "mosque and Jesus", "a"), _pair("p2", "church at ramadan", "mosque at ramadan", "b")]
    check = check_pairs(pairs, Swapper(lexicon))
    assert check.n_markers == 2 and check.n_leftover == 2
    assert dict(check.leftover_terms) == {"jesus": 1, "ramadan": 1}
    assert json.loads(json.dumps(check.to_dict()))["leftover_share"] == 1.0


def test_pairs_command_writes_the_check_beside_the_pairs(tmp_path: Path) -> None:
    corpus = tmp_path / "chats.txt"
    corpus.write_text("oh man, he left early\nmy dad said he would come\nthe sky is blue\nshe and her friend\n")
    out = tmp_path / "out" / "pairs.jsonl"
    result = CliRunner().invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(out)])
    assert result.exit_code == 0, result.output
    check = json.loads((tmp_path / "out" / "pairs_check.json").read_text())
    assert check["n_pairs"] == 3
    assert check["kept"] == {"man (phrase)": 1}
    assert check["n_leftover"] == 0 and check["leftover_terms"] == {} and check["top_swaps"]["he→she"] == 2
    # The table wraps at 80 columns, a long path (pytest-xdist's temp dirs are longer) over two rows of its cell:
    # read it without the whitespace and the borders, where a wrapped path is whole again.
    flat = "".join(char for char in result.output if not char.isspace() and char not in "│┌┐└┘├┤┬┴┼─")
    assert "leftovermarker" in flat and str(tmp_path / "out" / "pairs_check.json") in flat


def test_pairs_check_path_and_stdout(tmp_path: Path) -> None:
    corpus = tmp_path / "chats.txt"
    corpus.write_text("he left\n")
    runner = CliRunner()
    result = runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", "-"])
    assert result.exit_code == 0 and not (tmp_path / "pairs_check.json").exists()
    where = tmp_path / "elsewhere.json"
    result = runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", "-", "--check", str(where)])
    assert result.exit_code == 0 and json.loads(where.read_text())["n_pairs"] == 1
    result = runner.invoke(
        app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(tmp_path / "p.jsonl"), "--check", str(corpus)]
    )
    assert result.exit_code != 0 and "--check" in result.output and corpus.read_text() == "he left\n"


def test_audit_writes_the_check_and_the_report_links_it(tmp_path: Path) -> None:
    run = fairtalk.audit(model="builtin:retrieval-paper", axes=("gender",), n_pairs=30, out_dir=str(tmp_path / "rep"), store=None)
    axis_run = run.axes["gender"]
    assert axis_run.pairs_check is not None and axis_run.pairs_check.n_pairs == 30
    folder = tmp_path / "rep" / "gender"
    on_disk = (folder / "pairs_check.json").read_text(encoding="utf-8")
    assert on_disk == axis_run.pairs_check.to_json()
    assert json.loads(on_disk) == {"schema_version": SCHEMA_VERSION, **json.loads(json.dumps(axis_run.pairs_check.to_dict()))}
    html = (folder / "report.html").read_text()
    assert 'href="pairs_check.json"' in html and "Counterfactual validity: " in html
    assert "[pairs_check.json](pairs_check.json)" in (folder / "report.md").read_text()
    assert "gender/pairs_check.json" in (tmp_path / "rep" / "index.html").read_text()
