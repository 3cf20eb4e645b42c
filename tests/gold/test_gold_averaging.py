"""``score --gold`` averages the annotators of a shared gold file; where they contradict each other it warns, naming them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.gold import MIN_SHARED_ITEMS, POOR_KAPPA, Gold, GoldLabel, averaging_warnings
from fairtalk.records import Response

runner = CliRunner()
RUDE, KIND = "you are a stupid idiot, shut up", "that is a lovely idea, tell me more"


def _labels(name: str, values: list[int]) -> list[GoldLabel]:
    return [GoldLabel(f"p{i // 2}", "ab"[i % 2], "offense_rate", v, name) for i, v in enumerate(values)]  # type: ignore[arg-type]


def test_averaging_warnings_name_annotators_who_contradict_each_other_and_not_those_who_agree() -> None:
    ana = [i % 2 == 0 for i in range(40)]  # as many 1s as 0s: opposite labels give κ -1
    gold = Gold("responses", (*_labels("ana", [int(v) for v in ana]), *_labels("bo", [int(not v) for v in ana])))
    (warning,) = averaging_warnings(gold)
    assert warning.startswith("offense_rate: the gold file's annotators ana and bo agree poorly (Cohen's κ -1.00")
    assert f"below {POOR_KAPPA:g}; 0% of the 40 items all of them labelled agree" in warning and "averaged" in warning
    same = Gold("responses", (*_labels("ana", [int(v) for v in ana]), *_labels("bo", [int(v) for v in ana])))
    assert averaging_warnings(same) == ()
    few = MIN_SHARED_ITEMS - 1  # too few shared items to judge κ on
    short = Gold("responses", (*_labels("ana", [1, 0] * few)[:few], *_labels("bo", [0, 1] * few)[:few]))
    assert averaging_warnings(short) == ()
    assert averaging_warnings(Gold("responses", tuple(_labels("ana", [1, 0] * 30)))) == ()  # one annotator: nothing averaged


def test_score_gold_warns_on_the_console_and_in_results_json_when_annotators_contradict(tmp_path: Path) -> None:
    """Review finding: two annotators with opposite labels on 100 answers were averaged without a word."""
    rows = []
    for i in range(60):
        rows += [
            Response(f"p{i}", "a", f"he said {i}", RUDE if i % 3 == 0 else KIND),
            Response(f"p{i}", "b", f"she said {i}", KIND),
        ]
    responses = tmp_path / "responses.jsonl"
    fairtalk.write_responses(rows, responses)
    gold = tmp_path / "gold.jsonl"
    with gold.open("w", encoding="utf-8") as out:
        for r in rows[:100]:
            truth = int(r.response == RUDE)
            for name, value in (("ana", truth), ("bo", 1 - truth)):
                out.write(json.dumps({"pair_id": r.pair_id, "side": r.side, "offense_rate": value, "annotator": name}) + "\n")
    args = ["--responses", str(responses), "--axis", "gender", "--measures", "offense", "--resamples", "100"]
    done = runner.invoke(app, ["score", *args, "--gold", str(gold), "-o", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    from sklearn.metrics import cohen_kappa_score

    truth = [int(r.response == RUDE) for r in rows[:100]]
    kappa = cohen_kappa_score(truth, [1 - v for v in truth])
    said = f"offense_rate: the gold file's annotators ana and bo agree poorly (Cohen's κ {kappa:.2f}"
    assert said in " ".join(done.output.split())
    warnings = " ".join(json.loads((tmp_path / "out" / "results.json").read_text())["warnings"])
    assert said in warnings and "0% of the 100 items all of them labelled agree" in warnings
