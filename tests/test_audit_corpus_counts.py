"""`fairtalk audit` says what the corpus gave: duplicates and mixed contexts dropped, pairs short of --pairs, and where
the answers came from, on the console, in report.md and report.html, and in the too-few-pairs error."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.report import md_escape

runner = CliRunner()
FAST = ["--resamples", "50", "--measures", "length"]


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def _corpus(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def _audit(corpus: Path, out: Path, *extra: str):  # noqa: ANN202
    args = ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", "builtin:echo", "-o", str(out), *FAST]
    return runner.invoke(app, [*args, *extra])


#: 20 copies of one line (19 duplicates), a line that mentions both groups, two more lines: 3 pairs.
_LINES = ["He likes pizza."] * 20 + ["She likes tea.", "He likes his mom.", "He is tall."]
_DROPPED = "(19 duplicate contexts dropped, 1 mixed (both groups) dropped)"


def test_the_console_counts_the_corpus_duplicates_and_mixed_contexts_and_the_shortfall(tmp_path: Path) -> None:
    done = _audit(_corpus(tmp_path / "c.txt", _LINES), tmp_path / "out", "--pairs", "50")
    assert done.exit_code == 0, done.output
    said = _flat(done.output)
    assert f"gender: 23 contexts read, 23 mention a group {_DROPPED}, 3 pairs audited" in said, said
    assert "gender: asked for 50 pairs; the corpus gave 3" in said


def test_the_reports_say_what_the_corpus_gave_and_where_the_answers_came_from(tmp_path: Path) -> None:
    corpus, out = _corpus(tmp_path / "c.txt", _LINES), tmp_path / "out"
    assert _audit(corpus, out, "--pairs", "50").exit_code == 0
    store = "../store.sqlite"  # from the page, never the path the shell gave (absolute here)
    md = (out / "gender" / "report.md").read_text(encoding="utf-8")
    html = (out / "gender" / "report.html").read_text(encoding="utf-8")
    corpus_line = f"corpus {corpus}: 23 contexts read, 23 mention a group {_DROPPED}, 3 pairs taken"
    for page, escape in ((md, md_escape), (html, str)):  # a path's underscores are escaped in Markdown
        assert escape(f"{corpus_line}; asked for 50 pairs; the corpus gave 3.") in page, page[:3000]
        assert escape(f"answers: 6 generated, 0 from the run store {store}, 0 failed.") in page
    assert '<span class="badge warn">fewer pairs</span>' in html  # flagged: fewer pairs than asked
    assert "n_duplicates counts repeated answer records, not corpus lines" in html
    first = json.loads((out / "gender" / "results.json").read_text(encoding="utf-8"))
    again = _audit(corpus, out, "--pairs", "50")  # the store answers every side now
    assert again.exit_code == 0, again.output
    md = (out / "gender" / "report.md").read_text(encoding="utf-8")
    assert md_escape(f"answers: 0 generated, 6 from the run store {store}, 0 failed.") in md
    rerun = json.loads((out / "gender" / "results.json").read_text(encoding="utf-8"))
    for result in (first, rerun):  # results.json stays the same for a run and its rerun: the counts are the run's
        result["manifest"]["audit"].pop("run_id")
    assert rerun == first


def test_a_corpus_that_gives_what_was_asked_has_no_shortfall_line(tmp_path: Path) -> None:
    done = _audit(_corpus(tmp_path / "c.txt", _LINES), tmp_path / "out", "--pairs", "3")
    assert done.exit_code == 0, done.output
    assert "asked for" not in done.output
    md = (tmp_path / "out" / "gender" / "report.md").read_text(encoding="utf-8")
    assert f"{_DROPPED}, 3 pairs taken." in md and "asked for" not in md


def test_too_few_pairs_counts_the_duplicates_dropped(tmp_path: Path) -> None:
    done = _audit(_corpus(tmp_path / "c.txt", ["He likes pizza."] * 20), tmp_path / "out")
    assert done.exit_code == 2, done.output
    said = _flat(done.output)
    assert "gave 1 pair(s) (20 contexts read, 20 mention a group: 19 duplicate contexts dropped); need at least 2" in said


def test_too_few_pairs_counts_the_mixed_contexts_and_says_how_to_keep_them(tmp_path: Path) -> None:
    done = _audit(_corpus(tmp_path / "c.txt", ["He told her hello.", "She met him today."]), tmp_path / "out")
    assert done.exit_code == 2, done.output
    said = _flat(done.output)
    assert "gave 0 pair(s) (2 contexts read, 2 mention a group: 2 mixed (both groups) dropped)" in said, said
    assert "(--mixed keep) swaps the contexts that mention both groups too" in said


def test_too_few_pairs_under_until_decided_is_the_same_error_not_a_crash(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "c.txt", ["He likes pizza."] * 20)
    done = _audit(corpus, tmp_path / "out", "--until-decided", "--pairs", "2", "--max-pairs", "10")
    assert done.exit_code == 2, done.output
    said = _flat(done.output)
    assert "gave 1 pair(s) (20 contexts read, 20 mention a group: 19 duplicate contexts dropped)" in said, said


def test_pairs_left_at_their_default_are_no_shortfall_and_pairs_given_are(tmp_path: Path) -> None:
    """Review: ``fairtalk audit`` without ``--pairs`` said ``asked for 2,000 pairs; the corpus gave 1,470`` (and report.md
    in bold) when the user asked for nothing. The default (2,000) left is not asked; any number given is."""
    corpus = _corpus(tmp_path / "c.txt", _LINES)
    done = _audit(corpus, tmp_path / "default")
    assert done.exit_code == 0, done.output
    assert "asked for" not in done.output
    assert "asked for" not in (tmp_path / "default" / "gender" / "report.md").read_text(encoding="utf-8")
    given = _audit(corpus, tmp_path / "given", "--pairs", "2001")
    assert given.exit_code == 0, given.output
    assert "gender: asked for 2,001 pairs; the corpus gave 3" in _flat(given.output)
    assert "asked for 2,001 pairs" in (tmp_path / "given" / "gender" / "report.md").read_text(encoding="utf-8")


def test_pairs_given_as_the_default_2000_are_a_shortfall_too(tmp_path: Path) -> None:
    """``--pairs 2000`` was taken as the default (no shortfall said) because the run did not record that it was given:
    now the console, report.md, report.html and results.json say it, as for any number given."""
    done = _audit(_corpus(tmp_path / "c.txt", _LINES), tmp_path / "out", "--pairs", "2000")
    assert done.exit_code == 0, done.output
    assert "gender: asked for 2,000 pairs; the corpus gave 3" in _flat(done.output)
    md = (tmp_path / "out" / "gender" / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "out" / "gender" / "report.html").read_text(encoding="utf-8")
    assert f"{_DROPPED}, 3 pairs taken; asked for 2,000 pairs; the corpus gave 3." in md
    assert "asked for 2,000 pairs; the corpus gave 3" in html and '<span class="badge warn">fewer pairs</span>' in html
    result = json.loads((tmp_path / "out" / "gender" / "results.json").read_text(encoding="utf-8"))
    coverage = result["manifest"]["audit"]["coverage"]
    assert (coverage["limit"], coverage["limit_given"]) == (2000, True)


def test_pairs_2000_from_a_config_file_are_asked_for_and_left_at_the_default_are_not(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "c.txt", _LINES)
    given = tmp_path / "given.toml"
    given.write_text("n_pairs = 2000\n", encoding="utf-8")
    left = tmp_path / "left.toml"
    left.write_text("seed = 1\n", encoding="utf-8")
    done = _audit(corpus, tmp_path / "given", "--config", str(given))
    assert done.exit_code == 0, done.output
    assert "gender: asked for 2,000 pairs; the corpus gave 3" in _flat(done.output)
    done = _audit(corpus, tmp_path / "left", "--config", str(left))
    assert done.exit_code == 0, done.output
    assert "asked for" not in done.output
    assert "asked for" not in (tmp_path / "left" / "gender" / "report.md").read_text(encoding="utf-8")


def test_the_reports_say_which_corpus_lines_were_skipped_or_kept_without_a_part(tmp_path: Path) -> None:
    system = json.dumps({"messages": [{"role": "system", "content": "be kind"}, {"role": "user", "content": "my dad is here"}]})
    lines = ['{"context": "he likes tea"}', '{"context": "she is tall"}', "{bad json", "{bad json", '{"other": 1}', system]
    corpus, out = _corpus(tmp_path / "c.jsonl", lines), tmp_path / "out"
    done = _audit(corpus, out, "--pairs", "3")
    assert done.exit_code == 0, done.output
    note = (
        "corpus lines skipped (or, where the reason names a part, kept without it): 2 malformed JSON; 1 missing field; "
        "1 system messages (left out)"
    )
    md = (out / "gender" / "report.md").read_text(encoding="utf-8")
    html = (out / "gender" / "report.html").read_text(encoding="utf-8")
    index = (out / "index.html").read_text(encoding="utf-8")
    assert md_escape(f"3 pairs taken; {note}.") in md, md[:3000]
    assert f"3 pairs taken; {note}." in html
    assert f"gender 3 (3 mention a group; {note})" in index
    said = _flat(done.output)  # the console says the same reasons, a line each
    assert "skipped 2 corpus line(s): malformed JSON" in said and "kept 1 corpus line(s) without a part: system messages" in said
