"""A whole-number option out of its range reads as the library and a config file word it, in every command.

Review finding: ``fairtalk audit --seed -1`` printed click's usage block and ``Invalid value for
'--seed': Input should be greater than or equal to 0``, while the library and ``--config`` said
``seed must be an integer >= 0, got -1``. Now click checks no range; the schema does, naming the flag.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app

runner = CliRunner()

#: Each command that declares a ranged whole-number option, as run (OUT: its output, PAIRS: a pairs file).
_COMMANDS = {
    "audit": ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "5", "-o", "OUT"],
    "score": ["score", "--responses", "PAIRS", "--axis", "gender", "-o", "OUT"],
    "respond": ["respond", "--pairs", "PAIRS", "--model", "builtin:echo", "-o", "OUT"],
    "similarity": ["similarity", "--pairs", "PAIRS", "--model", "builtin:echo", "-o", "OUT"],
    "prompts generate": ["prompts", "generate", "--model", "builtin:echo", "-o", "OUT"],
    "reproduce debias": ["reproduce", "debias", "--quick", "-o", "OUT"],
    "reproduce planted": ["reproduce", "planted", "--quick", "-o", "OUT"],
}
_SEED = ("--seed", "-1", "--seed must be an integer >= 0, got -1")
_RESAMPLES = ("--resamples", "0", "--resamples must be at least 1, got 0")
_DIVERGENT = ("--divergent", "-1", "--divergent must be at least 0, got -1")
_BATCH = ("--batch-size", "0", "--batch-size must be a positive int, got 0")
_FAILURES = ("--max-consecutive-failures", "-1", "--max-consecutive-failures must be 0 or more, or None, got -1")
_PAIRS = ("--pairs", "1", "--pairs must be a whole number ≥ 2 (two pairs are the fewest a test compares), got 1")
_CASES = [
    *(("audit", *case) for case in (_SEED, _RESAMPLES, _DIVERGENT, _BATCH, _FAILURES)),
    *(("score", *case) for case in (_SEED, _RESAMPLES, _DIVERGENT)),
    *(("respond", *case) for case in (_BATCH, _FAILURES)),
    *(("similarity", *case) for case in (_BATCH, _FAILURES)),
    ("prompts generate", *_FAILURES),
    ("reproduce debias", *_RESAMPLES),
    # review finding: --pairs 1 was refused as the library's keyword ("n_pairs must be a whole number ≥ 2 ...")
    ("reproduce debias", *_PAIRS),
    ("reproduce planted", *_RESAMPLES),
    # review finding: reproduce planted worded it its own way ("--pairs must be at least 2, not 1")
    ("reproduce planted", *_PAIRS),
    ("reproduce planted", "--pairs", "-1", _PAIRS[2].replace("got 1", "got -1")),
]


@pytest.mark.parametrize(("command", "flag", "value", "message"), _CASES)
def test_a_whole_number_out_of_range_is_one_error_line_in_the_librarys_words(
    tmp_path: Path, command: str, flag: str, value: str, message: str
) -> None:
    pairs, out = tmp_path / "pairs.jsonl", tmp_path / "out"
    fairtalk.write_pairs(list(fairtalk.build_pairs(["he told me", "he said hi"], fairtalk.load_lexicon("gender"))), pairs)
    args = [{"OUT": str(out), "PAIRS": str(pairs)}.get(word, word) for word in _COMMANDS[command]]
    done = runner.invoke(app, [*args, flag, value])
    assert done.exit_code == 2, done.output
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {message}"], done.stderr
    assert "Usage:" not in done.stderr and "Invalid value" not in done.stderr, done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["pairs.jsonl"]  # no work done, nothing written


def test_the_help_shows_a_whole_number_option_s_least_value() -> None:
    shown = " ".join(runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "200"}).output.split())
    for metavar in ("--seed <int >= 0>", "--resamples <int >= 1>", "--batch-size <int >= 1>"):
        assert metavar in shown, metavar
