"""`respond` and `score` warn, as audit does, of the prompts an ``hf:`` model cut from their start to fit its positions.

Review: audit warned of them, but `fairtalk respond` said nothing, and `fairtalk score` on its responses file could not
know. Now generation records the tokens cut in each response (``prompt_cut``, beside ``max_new_tokens``), `respond`
prints audit's warning, and `score` reads it back from the file. The tiny GPT-2 of test_hf.py has 64 positions: with
``max_new_tokens=56`` a prompt (``[user] CONTEXT [assistant]``: the context's words and 2) keeps its last 8 tokens.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk  # noqa: E402
from fairtalk import Pair  # noqa: E402
from fairtalk.cli import app  # noqa: E402
from fairtalk.errors import ResponderError  # noqa: E402
from models.test_hf import gpt2_chat_dir, gpt2_dir  # noqa: F401 - the hf tests' tiny GPT-2 (64 positions)

runner = CliRunner()

#: Side a of g1 (9 words: 3 tokens cut) and both sides of g3 (10 words: 4 cut); g1's side b and g2 fit.
PAIRS = [
    Pair("g1", "gender", "he is a doctor and she is a nurse", "she is a doctor", "a"),
    Pair("g2", "gender", "he went home", "she went home", "a"),
    Pair("g3", "gender", "the man went to the store to buy some bread", "the woman went to the store to buy some bread", "a"),
]
#: Per pair id, the tokens cut from side a's and side b's prompt.
CUT = {"g1": (3, 0), "g2": (0, 0), "g3": (4, 4)}
SAID = (
    "the prompts of 2 of 3 pairs (2 on side a, 1 on side b; up to 4 tokens) were longer than the model reads beside "
    "max_new_tokens=56 (--max-new-tokens), so their start"
)


def recorded_cuts(path: Path) -> dict[tuple[str, str], tuple[int, int] | None]:
    """Per (pair id, side), the ``prompt_cut`` and ``max_new_tokens`` a responses file records (None: none)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {(r["pair_id"], r["side"]): (r["prompt_cut"], r["max_new_tokens"]) if "prompt_cut" in r else None for r in rows}


def expected_cuts() -> dict[tuple[str, str], tuple[int, int] | None]:
    return {(i, side): (n, 56) if n else None for i, cuts in CUT.items() for side, n in zip("ab", cuts)}


def test_respond_warns_per_side_records_the_cut_and_score_warns_again(gpt2_chat_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    pairs, out, report = tmp_path / "pairs.jsonl", tmp_path / "responses.jsonl", tmp_path / "report"
    fairtalk.write_pairs(PAIRS, pairs)
    argv = ["respond", "--pairs", str(pairs), "--model", f"hf:{gpt2_chat_dir}", "--model-arg", "device=cpu"]
    done = runner.invoke(app, [*argv, "--max-new-tokens", "56", "-o", str(out)], env={"COLUMNS": "400"})
    assert done.exit_code == 0, done.output
    assert f"warning: {SAID}" in " ".join(done.output.split()), done.output
    assert recorded_cuts(out) == expected_cuts()

    argv = ["score", "--responses", str(out), "--axis", "gender", "--measures", "length", "--resamples", "20"]
    scored = runner.invoke(app, [*argv, "-o", str(report)], env={"COLUMNS": "400"})
    assert scored.exit_code == 0, scored.output
    assert f"gender: warning: {SAID}" in " ".join(scored.output.split()), scored.output
    warnings = json.loads((report / "results.json").read_text(encoding="utf-8"))["warnings"]
    assert [w for w in warnings if w.startswith(SAID)], warnings


def test_respond_counts_the_cut_again_from_the_store_and_not_when_the_prompts_fit(
    gpt2_chat_dir: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    options = {"model": f"hf:{gpt2_chat_dir}", "model_args": {"device": "cpu"}, "store": tmp_path / "store.sqlite"}
    for _ in range(2):  # the second run's answers all come from the store
        made = fairtalk.respond(PAIRS, **options, settings=fairtalk.DecodingSettings(max_new_tokens=56))  # type: ignore[arg-type]
        assert [w[: len(SAID)] for w in made.warnings] == [SAID]
        fairtalk.write_responses(made.responses, tmp_path / "r.jsonl")
        assert recorded_cuts(tmp_path / "r.jsonl") == expected_cuts()
    assert made.summary.n_cached == 6
    fits = fairtalk.respond(PAIRS, **options, settings=fairtalk.DecodingSettings(max_new_tokens=4))  # type: ignore[arg-type]
    assert fits.warnings == ()
    assert not any("prompt_cut" in dict(r.extra) for pair in fits.responses for r in pair)


def test_a_pair_left_out_keeps_its_cut_and_counts(
    gpt2_chat_dir: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pair left out (a side failed) is a pair asked: its cut sides count, as audit counts every pair asked."""
    from fairtalk.models import load_responder

    with load_responder(f"hf:{gpt2_chat_dir}", device="cpu") as model:
        answer = type(model).respond_each

        def failing(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN202 - g3's side b fails
            out = answer(self, contexts, settings, seeds=seeds)
            return [ResponderError("down") if c == PAIRS[2].b else item for c, item in zip(contexts, out)]

        monkeypatch.setattr(type(model), "respond_each", failing)
        made = fairtalk.respond(PAIRS, model=model, settings=fairtalk.DecodingSettings(max_new_tokens=56))
    assert made.responses.n_pairs == 2 and made.summary.n_errors == 1
    assert [w[: len(SAID)] for w in made.warnings] == [SAID]
    fairtalk.write_responses(made.responses, tmp_path / "r.jsonl")
    assert recorded_cuts(tmp_path / "r.jsonl") == expected_cuts()
