"""`fairtalk regard label` / `regard check` and the library behind them: hand-computed figures and clean errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.errors import InputError
from fairtalk.prompts import check_labels, read_labels
from fairtalk.results import SCHEMA_VERSION

runner = CliRunner()


def _write(path, records):  # noqa: ANN001, ANN202
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_check_labels_by_hand() -> None:
    gold = [
        {"id": "1", "label": -1, "group": "a"},
        {"id": "2", "label": -1, "group": "a"},
        {"id": "3", "label": 0, "group": "b"},
        {"id": "4", "label": 1, "group": "b"},
    ]
    predicted = {"1": -1, "2": 0, "3": 0, "4": 1}
    result = check_labels(gold, predicted)
    assert result.n == 4 and result.agreement == 0.75
    assert result.f1["negative"] == pytest.approx(2 / 3)  # precision 1, recall 1/2
    assert result.f1["neutral"] == pytest.approx(2 / 3)  # precision 1/2, recall 1
    assert result.confusion[0] == [1, 1, 0, 0]
    gap = result.gaps["a - b"]
    assert gap["gold"]["negative"] == 1.0 and gap["predicted"]["negative"] == 0.5  # the scorer halves the gap


def test_readers_name_the_line(tmp_path) -> None:  # noqa: ANN001
    bad = _write(tmp_path / "bad.jsonl", [{"id": 1, "label": "positive"}, {"id": 2, "label": "great"}])
    with pytest.raises(InputError, match=r"bad.jsonl:2: label must be one of"):
        read_labels(bad)
    twice = _write(tmp_path / "twice.jsonl", [{"id": 1, "label": 1}, {"id": 1, "label": 0}])
    with pytest.raises(InputError, match="appears twice"):
        read_labels(twice)
    with pytest.raises(InputError, match="no id is in both"):
        check_labels([{"id": "1", "label": 0}], {"2": 0})


def test_label_then_check_round_trip(tmp_path) -> None:  # noqa: ANN001
    gold = _write(
        tmp_path / "gold.jsonl",
        [
            {"id": 1, "text": "The man was known for his kindness and generosity.", "label": "positive", "group": "man"},
            {"id": 2, "text": "The woman was regarded as a thief and a liar.", "label": "negative", "group": "woman"},
        ],
    )
    out = tmp_path / "labels.jsonl"
    done = runner.invoke(app, ["regard", "label", "--input", str(gold), "-o", str(out)])
    assert done.exit_code == 0, done.output
    labels = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in labels] == ["1", "2"] and {r["label"] for r in labels} <= {
        "negative",
        "neutral",
        "positive",
        "other",
    }
    report = tmp_path / "check.json"
    checked = runner.invoke(app, ["regard", "check", "--gold", str(gold), "--predicted", str(out), "-o", str(report)])
    assert checked.exit_code == 0, checked.output
    assert "agreement" in checked.output and "gap man - woman" in checked.output
    written = json.loads(report.read_text())
    assert written["n"] == 2 and written["schema_version"] == SCHEMA_VERSION  # a result file, versioned like the others


def test_regard_cli_errors_are_clean(tmp_path) -> None:  # noqa: ANN001
    gold = _write(tmp_path / "gold.jsonl", [{"id": 1, "text": "hi", "label": "neutral"}])
    same = runner.invoke(app, ["regard", "label", "--input", str(gold), "-o", str(gold)])
    assert same.exit_code == 2 and "Traceback" not in same.output
    assert json.loads(gold.read_text().splitlines()[0])["label"] == "neutral"  # the input is untouched
    missing = runner.invoke(app, ["regard", "check", "--gold", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "not found" in missing.output


def test_instrument_gap_flags_a_scorer_that_reacts_to_the_group() -> None:
    # 80 texts per group, gold rates equal; the scorer calls 40 of group a's neutral texts negative
    gold = [{"id": f"{g}{i}", "label": 0, "group": g} for g in "ab" for i in range(80)]
    biased = {r["id"]: (-1 if r["group"] == "a" and int(r["id"][1:]) < 40 else 0) for r in gold}
    added = check_labels(gold, biased).instrument["a - b"]["negative"]
    assert added["difference"] == pytest.approx(0.5) and added["low"] > 0.3
    # a scorer whose error is the same in both groups adds nothing: its interval holds 0
    even = {r["id"]: (-1 if int(r["id"][1:]) < 20 else 0) for r in gold}
    fair = check_labels(gold, even).instrument["a - b"]["negative"]
    assert fair["difference"] == 0.0 and fair["low"] <= 0 <= fair["high"]
    assert check_labels(gold, even).to_dict()["instrument"]["a - b"]["negative"] == fair


def test_check_of_predictions_says_what_did_not_join_and_refuses_other_texts(tmp_path) -> None:  # noqa: ANN001
    """Review finding: predictions of another file joined 2 of 120 gold labels by id, silently, and of other texts."""
    gold = _write(
        tmp_path / "gold.jsonl",
        [{"id": i, "text": f"gold text {i}", "label": i % 3 - 1, "group": "ab"[i % 2]} for i in range(120)],
    )
    other = _write(tmp_path / "other.jsonl", [{"id": i, "text": f"another text {i}", "label": 0} for i in range(118, 140)])
    check = ["regard", "check", "--gold", str(gold), "--predicted"]
    done = runner.invoke(app, [*check, str(other)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "error: only 2 of 120 gold labels have a prediction with the same id" in said
    renamed = _write(tmp_path / "renamed.jsonl", [{"id": i, "text": f"another text {i}", "label": 0} for i in range(120)])
    done = runner.invoke(app, [*check, str(renamed)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "error: 120 of the 120 ids in both files hold different texts (first: id '0')" in said
    most = _write(tmp_path / "most.jsonl", [{"id": i, "label": i % 3 - 1} for i in range(100)] + [{"id": "x", "label": 0}])
    done = runner.invoke(app, [*check, str(most)])
    said = " ".join(done.output.split())
    assert done.exit_code == 0, done.output
    assert "warning: 20 gold labels without a prediction of the same id (left out); 1 prediction without a gold label" in said
    assert "(100 texts): agreement 1.000" in said


def test_regard_label_never_replaces_a_hand_made_id_label_file_and_replaces_its_own(tmp_path) -> None:  # noqa: ANN001
    """Review finding: a person's gold file of exactly {"id", "label"} (label names) looked like fairtalk's own and was overwritten."""
    from fairtalk.gold import read_gold
    from fairtalk.prompts import is_labels_file

    texts = _write(
        tmp_path / "texts.jsonl", [{"id": i, "text": f"XYZ worked as a doctor {i}", "group": "ab"[i % 2]} for i in range(4)]
    )
    hand = tmp_path / "hand.jsonl"
    _write(hand, [{"id": str(i), "label": "negative"} for i in range(4)])  # hand labels, written the way fairtalk once did
    before = hand.read_text(encoding="utf-8")
    label = ["regard", "label", "--input", str(texts), "--regard", "builtin:tfidf", "-o"]
    done = runner.invoke(app, [*label, str(hand)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "is not a labels file fairtalk wrote" in said and "move it, or give a new path" in said
    assert hand.read_text(encoding="utf-8") == before and not is_labels_file(hand)
    mine = tmp_path / "labels.jsonl"
    assert runner.invoke(app, [*label, str(mine)]).exit_code == 0
    written = [json.loads(line) for line in mine.read_text().splitlines()]
    assert {r["annotator"] for r in written} == {"fairtalk:builtin:tfidf"} and is_labels_file(mine)
    rerun = runner.invoke(app, ["regard", "label", "--input", str(texts), "-o", str(mine), "--regard", "builtin:tfidf"])
    assert rerun.exit_code == 0, rerun.output  # its own labels it replaces
    assert [r["id"] for r in read_labels(mine)] == ["0", "1", "2", "3"]  # regard check's reader takes them as before
    checked = runner.invoke(app, ["regard", "check", "--gold", str(hand), "--predicted", str(mine)])
    assert checked.exit_code == 0, checked.output
    gold = read_gold(mine)  # prompts analyze --gold's reader: one regard label per id, the scorer its annotator
    assert gold.annotators == ("fairtalk:builtin:tfidf",) and len(gold.regard_labels()) == 4
    other = _write(tmp_path / "other.jsonl", [{"id": "0", "label": "neutral", "annotator": "ana"}])
    assert not is_labels_file(other)  # a person's annotator: never fairtalk's


def test_a_label_nobody_used_has_no_f1_and_stays_out_of_macro_f1(tmp_path) -> None:  # noqa: ANN001
    """Review finding: a file checked against itself (no "other" in it) gave macro-F1 0.750 with "other 0.00"."""
    gold = [{"id": str(i), "label": i % 3 - 1} for i in range(9)]
    result = check_labels(gold, {g["id"]: g["label"] for g in gold})
    assert result.f1 == {"negative": 1.0, "neutral": 1.0, "positive": 1.0, "other": None} and result.macro_f1 == 1.0
    # a label only the scorer used still counts: its F1 is 0, in the average
    wrong = check_labels(gold, {g["id"]: (2 if g["id"] == "0" else g["label"]) for g in gold})
    assert wrong.f1["other"] == 0.0 and wrong.macro_f1 == pytest.approx((0.8 + 1 + 1 + 0) / 4)
    path = _write(tmp_path / "gold.jsonl", gold)
    done = runner.invoke(app, ["regard", "check", "--gold", str(path), "--predicted", str(path), "-o", str(tmp_path / "c.json")])
    said = " ".join(done.output.split())
    assert done.exit_code == 0 and "macro-F1 1.000" in said and "other n/a" in said
    assert json.loads((tmp_path / "c.json").read_text())["f1"]["other"] is None


def test_a_small_group_or_one_without_disagreement_cannot_claim_the_scorer_adds_to_a_gap(tmp_path) -> None:  # noqa: ANN001
    """Review finding: 294 texts of man, 6 of woman (all agreed): "the scorer itself adds to this gap (95% CI excludes 0)"."""
    gold = [{"id": f"m{i}", "label": 0, "group": "man", "text": f"m {i}"} for i in range(294)]
    gold += [{"id": f"w{i}", "label": 0, "group": "woman", "text": f"w {i}"} for i in range(6)]
    # the scorer calls 60 of man's neutral texts negative, and agrees on all 6 of woman's
    predicted = {g["id"]: (-1 if g["group"] == "man" and int(g["id"][1:]) < 60 else 0) for g in gold}
    small = check_labels(gold, predicted)
    assert small.too_small("man - woman") and small.scorer_adds("man - woman") == {}
    assert small.instrument["man - woman"]["negative"]["low"] is None
    gold_path = _write(tmp_path / "gold.jsonl", gold)
    pred_path = _write(tmp_path / "pred.jsonl", [{"id": k, "label": v} for k, v in predicted.items()])
    done = runner.invoke(app, ["regard", "check", "--gold", str(gold_path), "--predicted", str(pred_path)])
    said = " ".join(done.output.split())
    assert done.exit_code == 0 and "excludes 0" not in said
    assert "too few texts to tell what the scorer adds to this gap (a group has fewer than 30: man 294, woman 6)" in said
    # 30 texts of woman, all agreed: the bootstrap gives that group no spread; the exact bound on its error share
    # (1 - 0.025^(1/30) = 0.116) widens the interval, which now holds 0 where the bootstrap alone excluded it
    gold = [g for g in gold if g["group"] == "man"][:40] + [{"id": f"w{i}", "label": 0, "group": "woman"} for i in range(30)]
    predicted = {g["id"]: (-1 if g["id"] in ("m0", "m1", "m2", "m3") else 0) for g in gold}
    wide = check_labels(gold, predicted).instrument["man - woman"]["negative"]
    assert wide["difference"] == pytest.approx(0.1) and wide["low"] < 0 < wide["high"]
    assert wide["high"] - wide["low"] > 2 * (1 - 0.025 ** (1 / 30))


def test_regard_messages_name_the_path_once_and_say_what_is_wrong(tmp_path) -> None:  # noqa: ANN001
    """Review findings: the path printed twice, an empty gold file worded as 'only 0 of 0', --cv not named."""
    comp = _write(tmp_path / "comp.jsonl", [{"group": "man", "text": "The man was here."}])
    for args in (
        ["label", "--input", str(comp), "-o", str(tmp_path / "l.jsonl")],
        ["check", "--gold", str(comp), "--predicted", str(comp)],
    ):
        done = runner.invoke(app, ["regard", *args])
        said = " ".join(done.output.split())
        assert done.exit_code == 2 and said.startswith(f'error: {comp}:1: each record needs an "id"'), said
        assert said.count(str(comp)) == 1
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for extra in (["--predicted", str(empty)], ["--regard", "builtin:tfidf"]):
        done = runner.invoke(app, ["regard", "check", "--gold", str(empty), *extra])
        said = " ".join(done.output.split())
        assert done.exit_code == 2 and said == f"error: {empty}: the gold file holds no label", said
    with pytest.raises(InputError, match="the gold file holds no label"):
        check_labels([{"id": "1", "text": "t"}], {"1": 0})


def test_regard_train_names_cv_when_the_folds_outnumber_a_label(tmp_path) -> None:  # noqa: ANN001
    data = tmp_path / "train.tsv"
    data.write_text("".join(f"{label}\tXYZ text {i} {label}\n" for label in (-1, 0, 1) for i in range(4)))
    done = runner.invoke(app, ["regard", "train", "--data", str(data), "--cv", "10", "-o", str(tmp_path / "m")])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "need at least 10 examples of each of at least two labels for 10-fold" in said
    assert "(--cv 10; found {-1: 4, 0: 4, 1: 4}): give fewer folds" in said


def test_regard_label_interrupted_says_nothing_was_written(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    import fairtalk

    def stopped(self, texts):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(fairtalk.Regard, "labels", stopped)
    texts = _write(tmp_path / "texts.jsonl", [{"id": 1, "text": "The man was here."}])
    out = tmp_path / "labels.jsonl"
    done = runner.invoke(app, ["regard", "label", "--input", str(texts), "-o", str(out), "--regard", "builtin:tfidf"])
    said = " ".join(done.output.split())
    assert done.exit_code == 130 and f"interrupted; nothing was written to {out}" in said and not out.exists()


def test_regard_label_writes_the_text_so_regard_check_refuses_labels_of_other_texts(tmp_path) -> None:  # noqa: ANN001
    """Review finding: `regard label` wrote no text, so `regard check --predicted` joined labels of made-up texts by id, rc 0."""
    from fairtalk.prompts import is_labels_file

    gold = _write(
        tmp_path / "gold.jsonl",
        [{"id": i, "text": f"The man worked as a doctor {i}.", "label": i % 3 - 1, "group": "ab"[i % 2]} for i in range(1, 41)],
    )
    junk = _write(tmp_path / "junk.jsonl", [{"id": i, "text": f"made-up text number {i}"} for i in range(1, 41)])
    labels = tmp_path / "labels_junk.jsonl"
    label = ["regard", "label", "--regard", "builtin:tfidf", "--input"]
    assert runner.invoke(app, [*label, str(junk), "-o", str(labels)]).exit_code == 0
    written = [json.loads(line) for line in labels.read_text().splitlines()]
    assert [r["text"] for r in written] == [f"made-up text number {i}" for i in range(1, 41)] and is_labels_file(labels)
    done = runner.invoke(app, ["regard", "check", "--gold", str(gold), "--predicted", str(labels)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "error: 40 of the 40 ids in both files hold different texts (first: id '1')" in said
    own = tmp_path / "labels.jsonl"
    assert runner.invoke(app, [*label, str(gold), "-o", str(own)]).exit_code == 0
    done = runner.invoke(app, ["regard", "check", "--gold", str(gold), "--predicted", str(own)])
    said = " ".join(done.output.split())
    assert done.exit_code == 0 and "(40 texts): agreement" in said and "could not be checked" not in said
    # labels without texts (written before they were kept): the join is made, with a warning that it is unchecked
    older = _write(tmp_path / "older.jsonl", [{k: v for k, v in r.items() if k != "text"} for r in written])
    assert is_labels_file(older)  # still fairtalk's own, replaced by a rerun
    done = runner.invoke(app, ["regard", "check", "--gold", str(gold), "--predicted", str(older)])
    said = " ".join(done.output.split())
    assert done.exit_code == 0 and (
        "warning: 40 of the 40 ids in both files could not be checked to hold the same text (the predictions hold no "
        "text): the join by id is taken on trust" in said
    )
