"""`score` on responses whose records say the model cut their prompt's start (``prompt_cut``): audit's warning, per side.

Review: a responses file made by `fairtalk respond` with a model that cut its prompts was scored without a word of
it. Generation records the tokens cut in each such response (``prompt_cut``, beside its ``max_new_tokens``); score
counts the pairs so recorded, per side, and words the warning as audit does.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app

runner = CliRunner()

#: Per pair, the tokens cut from side a's and side b's prompt (0: none), and whether the pair's side b failed.
_CUTS = ((2, 0, False), (0, 0, False), (4, 4, False), (0, 0, False), (0, 3, True))
_SAID = (
    "the prompts of 3 of 5 pairs (2 on side a, 2 on side b; up to 4 tokens) were longer than the model reads "
    "beside max_new_tokens=56 (--max-new-tokens), so their start (the system prompt, then the earliest turns, "
    "where a group word may stand) was cut off before the model read them; a smaller --max-new-tokens "
    "(max_new_tokens) or fewer --turns keeps them whole"
)


def _write(path: Path, *, with_cuts: bool = True) -> Path:
    """Five pairs' records as generation writes them: a cut side carries ``prompt_cut`` and ``max_new_tokens``."""
    rows = []
    for i, (cut_a, cut_b, failed) in enumerate(_CUTS):
        for side, cut, words in (("a", cut_a, "he said"), ("b", cut_b, "she said")):
            row: dict[str, object] = {"pair_id": f"p{i}", "side": side, "context": f"{words} {i}", "response": "ok " * (i + 1)}
            if failed and side == "b":
                row.update(response=None, error="ResponderError: the model failed")
            if cut and with_cuts:
                row.update(prompt_cut=cut, max_new_tokens=56)
            rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_score_warns_of_the_prompts_a_responses_file_records_as_cut(tmp_path: Path) -> None:
    result = fairtalk.score(_write(tmp_path / "r.jsonl"), axis="gender", measures="length", n_resamples=20)
    said = [w for w in result.warnings if "prompts" in w]
    assert said == [_SAID]  # the left-out pair (side b failed) counts too, as audit counts every pair asked
    plain = fairtalk.score(_write(tmp_path / "plain.jsonl", with_cuts=False), axis="gender", measures="length", n_resamples=20)
    assert not [w for w in plain.warnings if "prompts" in w]


def test_the_score_command_prints_it_and_writes_it_to_results_json(tmp_path: Path) -> None:
    out = tmp_path / "report"
    argv = ["score", "--responses", str(_write(tmp_path / "r.jsonl")), "--axis", "gender", "--measures", "length"]
    done = runner.invoke(app, [*argv, "--resamples", "20", "-o", str(out)], env={"COLUMNS": "400"})
    assert done.exit_code == 0, done.output
    assert f"gender: warning: {_SAID}" in " ".join(done.output.split())
    assert _SAID in json.loads((out / "results.json").read_text(encoding="utf-8"))["warnings"]


def test_the_one_wording_counts_pairs_and_sides_and_names_the_limits() -> None:
    from fairtalk.run._score import prompts_cut_warning

    assert prompts_cut_warning([0, 0], [0, 0], 56) is None
    one = prompts_cut_warning([0, 7], [1, 0], 40)
    assert one is not None and one.startswith("the prompts of 2 of 2 pairs (1 on side a, 1 on side b; up to 7 tokens)")
    assert "beside max_new_tokens=40 (--max-new-tokens)" in one
    several = prompts_cut_warning([3], [0], (40, 56))
    assert several is not None and "beside max_new_tokens=40 or 56 (--max-new-tokens)" in several
    unknown = prompts_cut_warning([3], [0], ())  # a hand-made file with no max_new_tokens beside its prompt_cut
    assert unknown is not None and "beside max_new_tokens (--max-new-tokens)" in unknown
