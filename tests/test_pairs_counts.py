"""``fairtalk pairs``' summary: rows that add up to "matched", a --limit the corpus fell short of, top swaps of the pairs written.

Review findings: under ``--mixed keep`` the kept mixed contexts were counted both as "mixed" and
under their original group (4 matched, 4 + 0 + 3 + 0 shown); ``--limit 100`` on a corpus of 3
pairs said "sample of 100"; and the "top swaps" counted every unique pair while pairs_check.json
counted the pairs written, both under "pairs written 1,000".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk import Swapper, build_pairs, load_lexicon
from fairtalk.cli import app

runner = CliRunner()
_BOX = str.maketrans(dict.fromkeys("│┃┌┐└┘─━┬┴├┤┼", " "))
#: Mixed contexts (one of them twice; "his sister" is one too), single-group ones, and a twin of an earlier context.
_TEXTS = ["he and she", "my mom and my dad", "he and she", "his sister", "he said", "she said", "my mom is here"]


def _flat(output: str) -> str:
    return " ".join(output.translate(_BOX).split())


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    from fairtalk.cli._console import console, err_console

    for made in (console, err_console):  # one table row a line, whatever width the consoles were made with (xdist)
        monkeypatch.setattr(made, "_width", 400)


@pytest.mark.parametrize("mixed", ["drop", "keep"])
def test_the_coverage_counts_add_up_to_the_matched_contexts(mixed: str) -> None:
    pair_set = build_pairs(_TEXTS, Swapper(load_lexicon("gender")), mixed=mixed)  # type: ignore[arg-type]
    pairs = list(pair_set)
    cov = pair_set.coverage
    assert cov.n_matched == 7 and cov.n_duplicates == (2 if mixed == "keep" else 1)  # "she said" twins "he said"
    assert cov.n_unique == len(pairs) == cov.n_pairs
    if mixed == "drop":  # the four mixed contexts dropped before de-duplication
        assert cov.n_mixed == 4 and cov.n_unique + cov.n_duplicates + cov.n_mixed == cov.n_matched
    else:  # the three unique mixed pairs kept, among the unique pairs; the repeated one is a duplicate only
        assert cov.n_mixed == 3 and cov.n_unique + cov.n_duplicates == cov.n_matched
        assert cov.n_unique == 5 and cov.n_by_group == {"male": 4, "female": 1}


def test_the_summary_rows_add_up_to_matched_under_mixed_keep(tmp_path: Path) -> None:
    corpus = tmp_path / "m2.txt"
    corpus.write_text("he and she\nmy mom and my dad\nhis sister\nhe said\n")
    args = ["pairs", "--corpus", f"text:{corpus}", "--axis", "gender", "-o", str(tmp_path / "pk.jsonl")]
    kept = _flat(runner.invoke(app, [*args, "--mixed", "keep"]).stderr)
    assert "matched 4" in kept and "original male 4" in kept and "original female 0" in kept and "duplicates 0" in kept
    assert "of which mixed 3 both groups, kept" in kept and "mixed (both groups)" not in kept
    dropped = _flat(runner.invoke(app, args).stderr)
    assert "original male 1" in dropped and "mixed (both groups) 3 dropped" in dropped and "of which" not in dropped


def _jsonl(tmp_path: Path, texts: list[str]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"context": text}) + "\n" for text in texts))
    return path


def test_a_limit_the_corpus_falls_short_of_is_said_not_called_a_sample(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path, ["he is tall", "she is here", "my dad left"])
    args = ["pairs", "--corpus", f"jsonl:{corpus}", "--axis", "gender", "-o", str(tmp_path / "p.jsonl")]
    result = runner.invoke(app, [*args, "--limit", "100"])
    assert result.exit_code == 0, result.output
    text = _flat(result.stderr)
    assert "pairs written 3 asked for 100 pairs; the corpus gave 3 →" in text and "sample of 100" not in text
    result = runner.invoke(app, [*args, "--balance", "--limit", "10"])
    assert result.exit_code == 0, result.output
    text = _flat(result.stderr)
    assert "pairs written 2 asked for 10 pairs; the corpus gave 2 (balanced" in text, text
    assert "balanced sample of 10" not in text
    result = runner.invoke(app, [*args, "--limit", "2"])  # a real sample: called one
    assert "pairs written 2 sample of 2 →" in _flat(result.stderr)


def test_the_top_swaps_shown_are_those_of_the_pairs_written_as_in_pairs_check_json(tmp_path: Path) -> None:
    texts = [f"he said {i}" for i in range(40)] + [f"my mom called {i}" for i in range(5)]
    out = tmp_path / "p.jsonl"
    args = ["pairs", "--corpus", f"jsonl:{_jsonl(tmp_path, texts)}", "--axis", "gender", "--limit", "6", "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    check = json.loads((tmp_path / "pairs_check.json").read_text())
    assert check["n_pairs"] == 6 and sum(check["top_swaps"].values()) == 6
    shown = ", ".join(f"{term} {n:,}" for term, n in list(check["top_swaps"].items())[:10])
    assert f"top swaps (written) {shown}" in _flat(result.stderr)
    assert "he→she 40" not in _flat(result.stderr)  # every unique pair's count is no count of the pairs written
