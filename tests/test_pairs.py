"""Tests for fairtalk.pairs: pair building, coverage, sampling, JSONL I/O and ``fairtalk pairs``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairtalk import (
    Context,
    InputError,
    Pair,
    SpecError,
    Swapper,
    build_pairs,
    load_lexicon,
    read_corpus,
    read_pairs,
    write_pairs,
)
from fairtalk.cli import app
from fairtalk.records import Swap


@pytest.fixture(scope="module")
def gender() -> Swapper:
    return Swapper(load_lexicon("gender"))


def _pairs(texts, swapper, **kwargs) -> tuple[list[Pair], object]:
    pair_set = build_pairs(texts, swapper, **kwargs)
    return list(pair_set), pair_set.coverage


# ---------------------------------------------------------------------------- building


def test_original_on_side_b_is_swapped_into_side_a(gender: Swapper) -> None:
    (pair,), _ = _pairs([Context(id="1", text="she is a nurse", origin="f.txt:1")], gender)
    assert (pair.a, pair.b, pair.original_side) == ("he is a nurse", "she is a nurse", "b")
    assert pair.origin == "f.txt:1" and pair.axis == "gender"
    assert pair.swaps == (Swap(0, 3, "she", "he", "b"),)


def test_original_on_side_a_stays_on_side_a(gender: Swapper) -> None:
    (pair,), _ = _pairs(["He told his dad."], gender)
    assert (pair.a, pair.b, pair.original_side) == ("He told his dad.", "She told her mom.", "a")
    original = getattr(pair, pair.original_side)
    assert all(original[s.start : s.end] == s.source for s in pair.swaps)


def test_contexts_without_axis_words_are_not_paired(gender: Swapper) -> None:
    pairs, coverage = _pairs(["the theme of the shell", "nothing here"], gender)
    assert pairs == [] and coverage.n_read == 2 and coverage.n_matched == 0


def test_mixed_contexts_dropped_by_default(gender: Swapper) -> None:
    texts = ["he and she met", "he met his dad", "her mom called"]
    pairs, coverage = _pairs(texts, gender)
    assert [p.original_side for p in pairs] == ["a", "b"]
    assert coverage.n_mixed == 1 and coverage.n_matched == 3 and coverage.n_pairs == 2


def test_mixed_contexts_kept_take_the_majority_side(gender: Swapper) -> None:
    texts = ["he and she met", "she told her mom about him", "his wife and his son"]
    pairs, coverage = _pairs(texts, gender, mixed="keep")
    assert coverage.n_mixed == 3 and coverage.n_pairs == 3
    tie, more_b, more_a = pairs
    assert (tie.original_side, tie.a, tie.b) == ("a", "he and she met", "she and he met")
    assert more_b.original_side == "b" and more_b.b == "she told her mom about him"
    assert more_a.original_side == "a" and more_a.a == "his wife and his son"


def test_duplicates_and_counterfactual_twins_are_dropped(gender: Swapper) -> None:
    texts = ["He is  tall", "he is tall", "she is tall", "HE IS TALL", "he is short"]
    pairs, coverage = _pairs(texts, gender)
    assert [p.a for p in pairs] == ["He is  tall", "he is short"]
    assert coverage.n_duplicates == 3 and coverage.n_matched == 5 and coverage.n_unique == 2


def test_ids_are_stable_unique_and_axis_prefixed(gender: Swapper) -> None:
    texts = [f"he has {i} cats" for i in range(200)] + [f"she has {i} dogs" for i in range(200)]
    first, _ = _pairs(texts, gender)
    again, _ = _pairs(texts, gender)
    ids = [p.id for p in first]
    assert ids == [p.id for p in again]
    assert len(set(ids)) == 400
    assert all(re.fullmatch(r"gender-[0-9a-f]{16}", i) for i in ids)


def test_bad_options_are_rejected(gender: Swapper) -> None:
    with pytest.raises(SpecError, match="unknown mixed-context policy 'maybe'"):
        build_pairs([], gender, mixed="maybe")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="limit must be a positive int"):
        build_pairs([], gender, limit=0)
    with pytest.raises(SpecError, match="seed must be an integer >= 0, got -1"):
        build_pairs([], gender, limit=3, seed=-1)


# ---------------------------------------------------------------------------- coverage


def test_coverage_counts_on_a_toy_corpus(tmp_path: Path, gender: Swapper) -> None:
    lines = [
        "he is a doctor",  # male
        "she is a doctor",  # twin of line 1: duplicate
        "my mom cooks",  # female
        "his brother and her sister",  # mixed
        "",  # empty line (reader skip)
        "the weather is nice",  # no match
        "he said he would come",  # male, two swaps
        "He is a doctor",  # duplicate
        "the girl smiled",  # female
    ]
    path = tmp_path / "toy.txt"
    path.write_bytes(("\n".join(lines) + "\n").encode() + b"bad \xff line\n")
    corpus = read_corpus(path)
    pair_set = build_pairs(corpus, gender)
    pairs = list(pair_set)
    cov = pair_set.coverage
    assert cov.n_read == 8  # contexts the reader yielded
    assert cov.n_matched == 7
    assert cov.n_mixed == 1
    assert cov.n_duplicates == 2
    assert dict(cov.n_by_group) == {"male": 2, "female": 2}
    assert cov.n_pairs == len(pairs) == 4
    assert cov.top_terms[0] == ("he→she", 3)
    assert dict(cov.top_terms) == {"he→she": 3, "mom→dad": 1, "girl→boy": 1}
    assert dict(cov.skipped) == {"empty line": 1, "not UTF-8": 1}
    assert dict(cov.skipped_first)["not UTF-8"] == f"{path}:10"
    assert cov.to_dict()["n_by_group"] == {"male": 2, "female": 2}


def test_pair_set_over_a_corpus_is_reiterable(tmp_path: Path, gender: Swapper) -> None:
    path = tmp_path / "c.txt"
    path.write_text("he ran\nshe sat\nhe ran\n")
    pair_set = build_pairs(read_corpus(path), gender)
    assert list(pair_set) == list(pair_set)
    assert pair_set.coverage.n_duplicates == 1


# ---------------------------------------------------------------------------- limit / seed


def _corpus(n: int) -> list[str]:
    return [f"{'he' if i % 2 else 'she'} said {i}" for i in range(n)]


def test_limit_is_deterministic_in_corpus_order_and_seed_dependent(gender: Swapper) -> None:
    texts = _corpus(500)
    first, cov = _pairs(texts, gender, limit=20, seed=1)
    again, _ = _pairs(texts, gender, limit=20, seed=1)
    other, _ = _pairs(texts, gender, limit=20, seed=2)
    assert [p.id for p in first] == [p.id for p in again]
    assert [p.id for p in first] != [p.id for p in other]
    assert len(first) == 20 and cov.n_pairs == 20 and cov.n_unique == 500 and cov.limit == 20
    order = [texts.index(getattr(p, p.original_side)) for p in first]
    assert order == sorted(order)


def test_limit_larger_than_the_corpus_keeps_everything(gender: Swapper) -> None:
    texts = _corpus(7)
    pairs, _ = _pairs(texts, gender, limit=100)
    assert [getattr(p, p.original_side) for p in pairs] == texts


def test_limit_sample_is_uniform(gender: Swapper) -> None:
    texts = _corpus(20)
    pair_set = build_pairs(texts, gender, limit=5)
    all_ids = [p.id for p in build_pairs(texts, gender)]
    hits = dict.fromkeys(all_ids, 0)
    n_seeds = 3000
    for seed in range(n_seeds):
        pair_set = build_pairs(texts, gender, limit=5, seed=seed)
        for pair in pair_set:
            hits[pair.id] += 1
    rates = [n / n_seeds for n in hits.values()]
    assert all(abs(rate - 0.25) < 0.035 for rate in rates), rates  # sd ~ 0.008


# ---------------------------------------------------------------------------- JSONL I/O


def test_write_then_read_round_trips(tmp_path: Path) -> None:
    swapper = Swapper(load_lexicon("race"))
    pairs = list(build_pairs(["that is cool", "he is my brother", "what's up with the police"], swapper))
    assert pairs
    target = tmp_path / "deep" / "dir" / "pairs.jsonl"
    assert write_pairs(pairs, target) == len(pairs)
    assert list(read_pairs(target)) == pairs
    record = json.loads(target.read_text().splitlines()[0])
    assert set(record) == {"id", "axis", "a", "b", "original_side", "swaps", "origin"}
    assert set(record["swaps"][0]) >= {"start", "end", "from", "to", "side"}


def test_read_pairs_accepts_minimal_records_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "x1", "axis": "gender", "a": "he", "b": "she", "original_side": "a"}\n\n')
    (pair,) = read_pairs(path)
    assert pair == Pair(id="x1", axis="gender", a="he", b="she", original_side="a")


_GOOD = '{"id": "g1", "axis": "gender", "a": "he ran", "b": "she ran", "original_side": "a"}'


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"id": "x", "axis": "gender", "a": "he"', "malformed JSON"),
        ('["not", "an", "object"]', "expected a JSON object, got list"),
        ('{"id": "x", "axis": "gender", "a": "he", "original_side": "a"}', "missing key 'b'"),
        ('{"id": "", "axis": "g", "a": "he", "b": "she", "original_side": "a"}', "'id' must be a non-empty string"),
        ('{"id": "x", "axis": "g", "a": 1, "b": "she", "original_side": "a"}', "'a' must be a string"),
        ('{"id": "x", "axis": "g", "a": "he", "b": "she", "original_side": "c"}', "'original_side' must be 'a' or 'b'"),
        ('{"id": "x", "axis": "g", "a": "he", "b": "she", "original_side": "a", "swaps": {}}', "'swaps' must be a list"),
        (
            '{"id": "x", "axis": "g", "a": "he", "b": "she", "original_side": "a", '
            '"swaps": [{"start": 0, "end": 9, "from": "he", "to": "she", "side": "a"}]}',
            "swaps[0]: span 0..9 is outside side 'a' (2 characters)",
        ),
        (
            '{"id": "x", "axis": "g", "a": "he", "b": "she", "original_side": "a", '
            '"swaps": [{"start": 0, "end": 2, "from": "he", "side": "a"}]}',
            "missing key 'swaps[0].to'",
        ),
        (_GOOD, "duplicate pair id 'g1' (first on line 1)"),
    ],
)
def test_read_pairs_reports_path_and_line(tmp_path: Path, bad: str, message: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(_GOOD + "\n" + bad + "\n")
    with pytest.raises(InputError) as info:
        list(read_pairs(path))
    assert str(info.value).startswith(f"{path}:2: {message}")


def test_read_pairs_non_utf8_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(_GOOD.encode() + b"\n\xff\xfe\n")
    with pytest.raises(InputError, match=r"p\.jsonl:2: not valid UTF-8"):
        list(read_pairs(path))
    with pytest.raises(InputError, match="nope.jsonl: pairs file not found"):
        read_pairs(tmp_path / "nope.jsonl")


@pytest.mark.parametrize("command", ["respond", "similarity"])
def test_a_directory_given_as_pairs_is_named_a_directory(tmp_path: Path, command: str) -> None:
    """Review finding: ``respond``/``similarity --pairs DIR`` said "pairs file not found (a directory)"."""
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match=r"folder: is a directory, not a pairs file"):
        read_pairs(tmp_path / "folder")
    done = CliRunner().invoke(
        app,
        [command, "--pairs", str(tmp_path / "folder"), "--model", "builtin:echo", "-o", str(tmp_path / "out")],
        catch_exceptions=False,
    )
    text = " ".join(done.output.split())
    assert done.exit_code == 2 and text.startswith("error:") and "folder: is a directory, not a pairs file" in text, text
    assert "not found" not in text


# ---------------------------------------------------------------------------- CLI

runner = CliRunner()


def test_cli_pairs_end_to_end(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"context": "she is a nurse"}\n{"context": "nice day"}\n{bad\n{"context": "he and she"}\n')
    out = tmp_path / "new" / "pairs.jsonl"
    result = runner.invoke(app, ["pairs", "--corpus", str(corpus), "--axis", "gender", "-o", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 1
    assert (records[0]["a"], records[0]["b"], records[0]["original_side"]) == ("he is a nurse", "she is a nurse", "b")
    assert records[0]["origin"] == f"{corpus}:1"
    text = result.stderr
    for expected in ("contexts read", "original female", "mixed (both groups)", "she→he", "malformed JSON"):
        assert expected in text


def test_cli_pairs_to_stdout_with_limit_and_column(tmp_path: Path) -> None:
    corpus = tmp_path / "c.tsv"
    corpus.write_text("id\tutterance\n" + "".join(f"{i}\the said {i}\n" for i in range(30)))
    args = [
        "pairs",
        "--corpus",
        str(corpus),
        "--axis",
        "gender",
        "--column",
        "utterance",
        "--limit",
        "5",
        "--seed",
        "3",
        "-o",
        "-",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 5 and all(json.loads(line)["original_side"] == "a" for line in lines)
    assert runner.invoke(app, args).stdout == result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--corpus", "{tmp}/missing.txt", "--axis", "gender"], "missing.txt: corpus file not found"),
        (["--corpus", "{tmp}/c.txt", "--axis", "politics"], "unknown"),
        (["--corpus", "{tmp}/c.txt"], "give --axis"),
        (["--corpus", "{tmp}/c.txt", "--axis", "gender", "--mixed", "maybe"], "'maybe' is not one of 'drop', 'keep'"),
        (["--corpus", "{tmp}/c.txt", "--axis", "gender", "--limit", "0"], "--limit must be at least 1"),
        (["--corpus", "nope:{tmp}/c.txt", "--axis", "gender"], "unknown corpus format 'nope'"),
        (["--corpus", "{tmp}/c.tsv", "--axis", "gender", "--column", "speech"], "no column 'speech'"),
        (["--corpus", "{tmp}/c.txt", "--axis", "gender", "--field", "x"], "field does not apply"),
        (
            ["--corpus", "{tmp}/c.txt", "--axis", "gender", "-o", "{tmp}/c.txt/x.jsonl"],
            "is not a folder, so nothing can be written under it",
        ),
        (["--corpus", "{tmp}/c.txt", "--axis", "gender", "-o", "{tmp}/c.txt"], "-o {tmp}/c.txt is also the input --corpus"),
        (["--corpus", "text:{tmp}/c.txt", "--axis", "gender", "-o", "{tmp}/../{tmp_name}/c.txt"], "is also the input --corpus"),
        (["--corpus", "{tmp}/c.txt", "--axis", "gender", "--seed", "-1"], "greater than or equal to 0"),
    ],
)
def test_cli_pairs_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "c.txt").write_text("he is here\n")
    (tmp_path / "c.tsv").write_text("id\ttext\n1\the\n")
    argv = ["pairs", *[a.format(tmp=tmp_path, tmp_name=tmp_path.name) for a in args]]
    if "-o" not in argv:
        argv += ["-o", str(tmp_path / "out.jsonl")]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") or "Invalid value" in result.stderr
    assert message.format(tmp=tmp_path) in " ".join(result.stderr.replace("│", " ").split())  # click's boxed errors wrap
    assert "Traceback" not in result.output
    assert (tmp_path / "c.txt").read_text() == "he is here\n"  # the input is never overwritten


def test_balance_draws_equally_from_each_original_side() -> None:
    from fairtalk import Swapper, build_pairs, load_lexicon

    texts = [f"he said {i}" for i in range(30)] + [f"she said {i}" for i in range(100, 106)]
    pairs = build_pairs(texts, Swapper(load_lexicon("gender")), balance=True, seed=3)
    sides = [p.original_side for p in pairs]
    assert sides.count("a") == sides.count("b") == 6
    assert pairs.coverage.balance and pairs.coverage.original_shares == {"male": 30 / 36, "female": 6 / 36}
    limited = build_pairs(texts, Swapper(load_lexicon("gender")), balance=True, limit=8, seed=3)
    assert [p.original_side for p in limited].count("b") == 4 and len(list(limited)) == 8
    again = [p.id for p in build_pairs(texts, Swapper(load_lexicon("gender")), balance=True, limit=8, seed=3)]
    assert again == [p.id for p in limited]  # seeded


def test_balance_must_be_a_bool() -> None:
    import pytest

    from fairtalk import SpecError, build_pairs, load_lexicon

    with pytest.raises(SpecError, match="balance must be True or False"):
        build_pairs(["he"], load_lexicon("gender"), balance="yes")  # type: ignore[arg-type]
