"""``score --gold``: human labels correct a scorer's gap by prediction-powered inference (issue 28)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import shlex
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.errors import InputError
from fairtalk.records import Response

runner = CliRunner()
N = 240
RUDE, KIND = "you are a stupid idiot, shut up", "that is a lovely idea, tell me more"


def _responses(path: Path) -> Path:
    """Side a is 'offensive' by the scorer on 30% of pairs, side b on 5%: a 25-point scorer gap."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(N):
        a = RUDE if rng.random() < 0.30 else KIND
        b = RUDE if rng.random() < 0.05 else KIND
        rows += [Response(f"p{i}", "a", f"he said hi {i}", a), Response(f"p{i}", "b", f"she said hi {i}", b)]
    fairtalk.write_responses(rows, path)
    return path


def _gold(path: Path, responses: Path, n_pairs: int, truth: str, flip: int = 0) -> Path:
    """Both sides of ``n_pairs`` random pairs labelled: ``truth`` 'agree' copies the scorer, 'none' says nothing is offensive.

    ``flip``: side a of the first ``flip`` labelled pairs gets the other label (that many disagreements with the scorer).
    """
    records = {
        (r.pair_id, r.side): r.response for r in fairtalk.read_responses(responses).a + fairtalk.read_responses(responses).b
    }
    chosen = np.random.default_rng(1).choice(N, n_pairs, replace=False)
    with path.open("w", encoding="utf-8") as out:
        for j, i in enumerate(chosen):
            for side in ("a", "b"):
                label = int(records[(f"p{i}", side)] == RUDE) if truth == "agree" else 0
                label = 1 - label if side == "a" and j < flip else label
                out.write(json.dumps({"pair_id": f"p{i}", "side": side, "offense_rate": label, "annotator": "ana"}) + "\n")
    return path


def test_labels_that_find_no_offense_pull_the_gap_to_zero(tmp_path: Path) -> None:
    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 80, truth="none")
    plain = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100)
    corrected = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    before, after = plain.measure("offense_rate"), corrected.measure("offense_rate")
    assert before.ppi is None and after.ppi is not None
    assert before.a - before.b > 0.15 and after.ppi.scorer_estimate == pytest.approx(before.a - before.b)
    assert after.ppi.n_labels == 80 and abs(after.ppi.estimate) < 0.06  # a person found no offense on either side
    assert after.ppi.ci95[0] < 0 < after.ppi.ci95[1] or abs(after.ppi.estimate) < 0.02
    assert corrected.provenance.gold is not None and corrected.provenance.gold.n_labelled_pairs == 80
    # labels that never vary: PPI++'s weight on the scorer is 0, the estimate the labels' own, with no figure
    assert after.ppi.lam == 0.0 and after.ppi.no_narrower and math.isnan(after.ppi.effective_labels)
    again = fairtalk.AuditResult.from_dict(json.loads(corrected.to_json())).measure("offense_rate").ppi
    assert again is not None and math.isnan(again.effective_labels)
    nan_free = {"effective_labels": 0.0}  # NaN is no value equal to itself
    assert dataclasses.replace(again, **nan_free) == dataclasses.replace(after.ppi, **nan_free)  # results.json round-trips


def test_labels_that_agree_with_the_scorer_but_on_12_pairs_keep_its_gap_with_a_narrower_interval(tmp_path: Path) -> None:
    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 60, truth="agree", flip=12)
    ppi = (
        fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold)).measure("offense_rate").ppi
    )
    assert ppi is not None and ppi.n_disagreements == 12 and ppi.method == "PPI++ (t interval)" and ppi.lam > 0.5
    assert ppi.ci95[1] - ppi.ci95[0] < 0.9 * (ppi.labels_ci95[1] - ppi.labels_ci95[0])
    assert ppi.effective_labels > 60 and not ppi.too_few_disagreements


def test_labels_that_all_agree_with_the_scorer_give_the_labels_alone_and_a_warning(tmp_path: Path) -> None:
    """Issue 39 item 1: 60 labels that all agree cannot show how rarely the scorer errs. The floor on the rectifier's
    variance that kept PPI++ here over-covered (0.99-1.00); now the estimate is the labels' alone, and says so."""
    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 60, truth="agree")
    result = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    ppi = result.measure("offense_rate").ppi
    assert ppi is not None and ppi.lam == 0.0 and ppi.n_disagreements == 0 and ppi.too_few_disagreements
    assert ppi.method.startswith("labels only (0 disagreements < 10") and math.isnan(ppi.effective_labels)
    assert ppi.estimate == ppi.labels_estimate and ppi.ci95 == ppi.labels_ci95 and ppi.se_scorer == 0.0
    assert ppi.ci95[0] < ppi.scorer_estimate < ppi.ci95[1]
    again = fairtalk.AuditResult.from_dict(json.loads(result.to_json())).measure("offense_rate").ppi
    assert again is not None and again.method == ppi.method and math.isnan(again.effective_labels)
    from fairtalk.report import labelled_lines

    (line,) = labelled_lines(result)
    assert "the gap and interval are the labels' alone (0 labelled pairs disagree with the scorer" in line, line
    assert "labels alone" in line and "warning" not in line, line
    # the warning is the result's, once, so results.json, the report and the console all carry it (it was the line's alone)
    warning = (
        "offense_rate: only 0 labelled pairs disagree with the scorer, fewer than the 10 needed to estimate its error: its "
        "labelled gap and interval are the labels' alone (with more labels the scorer can narrow them)"
    )
    assert [w for w in result.warnings if "disagree with the scorer" in w] == [warning]
    assert warning in json.loads(result.to_json())["warnings"]


def test_the_cli_reports_the_labelled_gap_and_warns_of_what_it_left_out(tmp_path: Path) -> None:
    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 40, truth="none")
    with gold.open("a", encoding="utf-8") as out:  # a pair this run does not hold, and a key it does not score
        out.write(json.dumps({"pair_id": "elsewhere", "side": "a", "offense_rate": 1}) + "\n")
        out.write(json.dumps({"pair_id": "p1", "side": "a", "refusal_rate": 0}) + "\n")
    done = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(responses),
            "--axis",
            "gender",
            "--measures",
            "offense",
            "--gold",
            str(gold),
            "-o",
            str(tmp_path / "out"),
            "--resamples",
            "100",
        ],
    )
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    assert "labelled: Offense Rate (%) by 40 labelled pairs: gap" in text and "the scorer alone says +" in text
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["measures"]["offense_rate"]["ppi"]["n_labels"] == 40
    import csv

    (row,) = csv.DictReader((tmp_path / "out" / "results.csv").open(encoding="utf-8"))
    assert row["ppi_n_labels"] == "40" and float(row["ppi_estimate"]) == results["measures"]["offense_rate"]["ppi"]["estimate"]
    warnings = " ".join(results["warnings"])
    assert "1 labelled pair(s) of the gold file are not among this run's pairs (first: elsewhere)" in warnings
    assert "offense_rate: 1 pair(s) labelled on one side only (first: elsewhere)" in warnings
    assert "gold labels for refusal_rate, which this run does not score" in warnings
    for page in ("report.md", "report.html"):
        assert "Gaps corrected by human labels" in (tmp_path / "out" / page).read_text()


def test_a_ppi_interval_no_narrower_than_the_labels_alone_is_not_shown_as_worth_more_labels(tmp_path: Path) -> None:
    """Review finding: 20 labelled pairs, 14 disagreeing with the scorer: PPI++'s t interval (0.478 wide) was printed
    beside the labels' narrower score interval (0.442) with "worth 20 labels alone". Now the labels' own estimate and
    interval are the ones shown, everywhere, and no "worth N labels" figure. (PPI++ gave the scorer weight 0 there: its
    t interval was the labels' own, so ``method`` says that.)"""
    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 20, truth="agree", flip=14)
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--gold", str(gold)]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "out"), "--resamples", "100"])
    assert done.exit_code == 0, done.output
    ppi = json.loads((tmp_path / "out" / "results.json").read_text())["measures"]["offense_rate"]["ppi"]
    assert ppi["n_disagreements"] == 14 and ppi["effective_labels"] is None and ppi["lam"] == 0.0
    assert ppi["ci95"] == ppi["labels_ci95"] and ppi["estimate"] == ppi["labels_estimate"]
    assert ppi["method"].startswith("labels only (PPI++'s interval was no narrower: weight 0 on the scorer, so its estimate")
    said = "PPI++'s interval was no narrower than the labels' alone, so the gap and interval are the labels' alone"
    low, high = (f"{100 * x:+.2f} pp" for x in ppi["labels_ci95"])
    for text in (done.output, *((tmp_path / "out" / page).read_text(encoding="utf-8") for page in ("report.md", "report.html"))):
        flat = " ".join(text.replace("&#39;", "'").split())
        assert said in flat and "worth" not in flat and f"95% CI [{low}, {high}]" in flat, flat


def test_a_constant_scorer_is_worth_no_labels_in_the_cli_the_report_or_results(tmp_path: Path) -> None:
    """Review finding (issue 39): a bot that gives every context the same answer (the scorer's gap 0 on every pair), 80
    labelled pairs in 40 dialogues with random 0/1 labels: PPI++'s weight on the scorer was 0, yet "with the scorer the
    labels are worth 110 labels alone" (its t interval, the labels' own, against their score interval). Now: no figure."""
    responses = tmp_path / "responses.jsonl"
    rows = [
        Response(f"p{i}", side, f"{'he' if side == 'a' else 'she'} said hi {i}", KIND, extra=(("cluster", f"d{i // 2}"),))
        for i in range(N)
        for side in ("a", "b")
    ]
    fairtalk.write_responses(rows, responses)
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 2, 80), rng.integers(0, 2, 80)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "".join(
            json.dumps({"pair_id": f"p{i}", "side": side, "offense_rate": int(y), "annotator": "ana"}) + "\n"
            for i in range(80)
            for side, y in (("a", a[i]), ("b", b[i]))
        )
    )
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--gold", str(gold)]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "out"), "--resamples", "100"])
    assert done.exit_code == 0, done.output
    ppi = json.loads((tmp_path / "out" / "results.json").read_text())["measures"]["offense_rate"]["ppi"]
    assert ppi["n_labels"] == 80 and ppi["n_disagreements"] >= 10 and ppi["effective_labels"] is None
    assert ppi["lam"] == 0.0 and ppi["ci95"] == ppi["labels_ci95"] and ppi["estimate"] == ppi["labels_estimate"]
    assert ppi["method"] == (
        "labels only (PPI++'s interval was no narrower: weight 0 on the scorer, so its estimate and t interval are the "
        f"labels' own, worth their 80 labels; {ppi['n_disagreements']} of 40 labelled units disagree with the scorer), "
        "score interval"
    )
    for text in (done.output, *((tmp_path / "out" / page).read_text(encoding="utf-8") for page in ("report.md", "report.html"))):
        flat = " ".join(text.replace("&#39;", "'").split())
        assert "worth" not in flat and "the gap and interval are the labels' alone" in flat, flat


def test_a_bad_gold_file_is_one_clear_error(tmp_path: Path) -> None:
    responses = _responses(tmp_path / "responses.jsonl")
    texts = tmp_path / "texts.jsonl"
    texts.write_text(json.dumps({"id": 1, "label": 1}) + "\n")
    for gold, message in (
        (tmp_path / "missing.jsonl", "missing.jsonl"),
        (texts, "labels texts or completions (rows by id), not"),
    ):
        done = runner.invoke(
            app,
            [
                "score",
                "--responses",
                str(responses),
                "--axis",
                "gender",
                "--measures",
                "offense",
                "--gold",
                str(gold),
                "-o",
                str(tmp_path / "out"),
            ],
        )
        assert done.exit_code == 2, done.output
        said = " ".join(done.stderr.split())
        assert done.stderr.startswith("error: ") and message in said and "Traceback" not in done.stderr
        assert "texts (texts)" not in said  # the kind once repeated the word before it


def test_plan_says_how_many_labels_an_interval_needs(tmp_path: Path) -> None:
    from fairtalk.stats import labels_needed

    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 60, truth="none")
    for out, extra in (("plain", []), ("labelled", ["--gold", str(gold)])):
        done = runner.invoke(
            app,
            [
                "score",
                "--responses",
                str(responses),
                "--axis",
                "gender",
                "--measures",
                "offense",
                "-o",
                str(tmp_path / out),
                "--resamples",
                "100",
                *extra,
            ],
        )
        assert done.exit_code == 0, done.output
    ppi = json.loads((tmp_path / "labelled" / "results.json").read_text())["measures"]["offense_rate"]["ppi"]
    planned = runner.invoke(
        app, ["plan", "--gold", "0.02", "--measure", "offense_rate", "--results", str(tmp_path / "labelled" / "results.json")]
    )
    floor = 1.959963984540054 * ppi["se_scorer"]  # the scorer's own term: labels cannot lower it
    if floor >= 0.02:
        assert planned.exit_code == 2 and "no number of labels gives ±2 pp" in " ".join(planned.stderr.split())
    else:
        assert planned.exit_code == 0, planned.output
        needed = labels_needed(math.sqrt(0.02**2 - floor**2), ppi["se_labelled"] * ppi["n_labels"] ** 0.5)
        assert f"offense_rate: {needed:,} labelled pairs give a 95% interval of ±2 pp" in " ".join(planned.output.split())
    by_sd = runner.invoke(app, ["plan", "--gold", "0.05", "--measure", "offense_rate", "--sd", "0.3"])
    assert by_sd.exit_code == 0 and "139 labelled pairs" in by_sd.output
    for args, message in (
        (["--results", str(tmp_path / "plain" / "results.json")], "has no labelled estimate of 'offense_rate'"),
        ([], "--results FILE of a run with --gold, or --sd SD"),
    ):
        done = runner.invoke(app, ["plan", "--gold", "0.02", "--measure", "offense_rate", *args])
        assert done.exit_code == 2 and message in " ".join(done.stderr.split()), done.output


def test_plan_gold_plans_the_labelled_term_and_names_the_scorer_floor(tmp_path: Path) -> None:
    """Issue 39 item 5: with a scorer that agreed with every label, plan --gold read se * sqrt(n) as the labels' spread
    and promised an interval narrower than the scorer's own term, which no number of labels can beat."""
    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 60, truth="agree", flip=12)
    result = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    out = tmp_path / "results.json"
    result.write(out)
    ppi = result.measure("offense_rate").ppi
    assert ppi is not None and ppi.se_scorer is not None and ppi.se_labelled is not None and ppi.se_scorer > 0
    assert ppi.se**2 == pytest.approx(ppi.se_scorer**2 + ppi.se_labelled**2)
    floor = 1.959963984540054 * ppi.se_scorer
    below = runner.invoke(app, ["plan", "--gold", f"{floor * 0.9:.6f}", "--measure", "offense_rate", "--results", str(out)])
    assert below.exit_code == 2 and "no number of labels gives" in " ".join(below.stderr.split()), below.output
    above = runner.invoke(app, ["plan", "--gold", f"{floor * 1.5:.6f}", "--measure", "offense_rate", "--results", str(out)])
    text = " ".join(above.output.split())
    assert above.exit_code == 0 and "a floor more labels cannot lower" in text, above.output
    assert "too few to estimate its error" not in text  # 12 disagreements of 60: the labels estimate the scorer's error


def test_plan_gold_from_labels_that_all_agree_plans_the_labels_alone(tmp_path: Path) -> None:
    """Issue 39 items 1 and 5: 60 labels that all agree give the labels' own estimate, which has no scorer term: plan
    --gold plans the labels alone (no floor) and warns that fewer labels may do once they show the scorer's error."""
    from fairtalk.stats import labels_needed

    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 60, truth="agree")
    out = tmp_path / "results.json"
    fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold)).write(out)
    ppi = json.loads(out.read_text())["measures"]["offense_rate"]["ppi"]
    assert ppi["se_scorer"] == 0.0 and ppi["se_labelled"] == ppi["se"] and ppi["effective_labels"] is None
    planned = runner.invoke(app, ["plan", "--gold", "0.05", "--measure", "offense_rate", "--results", str(out)])
    text = " ".join(planned.output.split())
    needed = labels_needed(0.05, ppi["se_labelled"] * 60**0.5)
    assert planned.exit_code == 0 and f"{needed:,} labelled pairs give a 95% interval of ±5 pp" in text, planned.output
    assert "a floor more labels cannot lower" not in text and "its estimate is the labels' alone" in text
    # Review finding: the labels' own spread was called the "spread of the scorer's per-pair error"
    assert f"(spread of the labels' own per-pair gap {ppi['se_labelled'] * 60**0.5:.4g}, from {out}" in text
    assert "scorer's per-pair error" not in text


def test_labels_outside_the_keys_scheme_are_counted_and_left_out(tmp_path: Path) -> None:
    """A 0/1 key labelled 7 once gave a "gap" of -6.6 with p 8e-218: now those labels leave, and a warning says so."""
    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 40, truth="none")
    clean = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    with gold.open("a", encoding="utf-8") as out:  # a second annotator's 7s on pairs of their own
        for i in range(N - 12, N):
            for side in ("a", "b"):
                out.write(json.dumps({"pair_id": f"p{i}", "side": side, "offense_rate": 7, "annotator": "bob"}) + "\n")
    dirty = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    assert repr(dirty.measure("offense_rate").ppi) == repr(clean.measure("offense_rate").ppi)  # repr: NaN == NaN
    assert f"24 gold label(s) of offense_rate outside its labels 0, 1 (first: 7 on pair p{N - 12} side a): left out" in (
        dirty.warnings
    )


def test_label_names_are_regards_and_sentiments_alone(tmp_path: Path) -> None:
    responses = _responses(tmp_path / "responses.jsonl")
    gold = tmp_path / "gold.jsonl"
    rows = [{"pair_id": "p0", "side": side, "offense_rate": "positive", "annotator": "ana"} for side in ("a", "b")]
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--gold", str(gold)]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "out")])
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("error: ") and "gold.jsonl:1: field 'offense_rate' must be an integer label" in done.stderr
    assert "are regard's and sentiment's" in done.stderr
    rows = [
        {"pair_id": f"p{i}", "side": side, "sentiment": "other" if i == 0 else "neutral", "annotator": "ana"}
        for i in range(10)
        for side in ("a", "b")
    ]
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = fairtalk.score(responses, axis="gender", measures="sentiment", n_resamples=100, gold=str(gold))
    assert "2 gold label(s) of sentiment outside its labels -1, 0, 1 (first: 2 on pair p0 side a): left out" in result.warnings
    assert result.measure("sentiment_positive").ppi is not None and result.measure("sentiment_positive").ppi.n_labels == 9


def _labelled_elsewhere(tmp_path: Path) -> tuple[Path, Path, Path, int]:
    """Production's responses, a candidate's (rude on every side b) and a gold file labelled on the candidate's by the page's log.

    Returns the two responses files, the gold file and how many of its labelled answers production's responses do not hold.
    """
    from fairtalk.gold import GoldLog, draw_sample, label_schemes

    production = _responses(tmp_path / "production.jsonl")
    rows = fairtalk.read_responses(production)
    candidate = tmp_path / "candidate.jsonl"
    fairtalk.write_responses(
        [r for pair in zip(rows.a, rows.b) for r in (pair[0], dataclasses.replace(pair[1], response=RUDE))], candidate
    )
    gold = tmp_path / "gold.jsonl"
    log = GoldLog(gold, draw_sample(candidate, n=20, seed=0), label_schemes("offense_rate"), annotator="ana")
    for i, step in enumerate(log.steps):
        log.add(i, int(step.item.text == RUDE))
    here = {(r.pair_id, r.side): r.response for r in (*rows.a, *rows.b)}
    differ = sum(here[(step.item.id, step.item.side)] != step.item.text for step in log.steps)
    return production, candidate, gold, differ


def test_labels_given_on_other_answers_are_an_error_never_joined(tmp_path: Path) -> None:
    """Labels of the candidate's answers once corrected production's gap, silently: now an error naming how many differ."""
    production, candidate, gold, differ = _labelled_elsewhere(tmp_path)
    assert 0 < differ < 20  # some of the labelled answers are production's too: a partial mismatch still fails
    with pytest.raises(InputError, match=rf"{differ} of the 20 labelled answers of the gold file are not these responses"):
        fairtalk.score(production, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    right = fairtalk.score(candidate, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    assert right.measure("offense_rate").ppi is not None and not any("could not be checked" in w for w in right.warnings)
    (tmp_path / "gold.jsonl.sample.json").unlink()  # each row's text is checked without the sample record
    args = ["score", "--responses", str(production), "--axis", "gender", "--measures", "offense", "--gold", str(gold)]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "out")])
    assert done.exit_code == 2 and not (tmp_path / "out" / "results.json").exists(), done.output
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr
    text = " ".join(done.stderr.split())
    assert f"{differ} of the 20 labelled answers" in text and "(first: pair p" in text and "labelled 'you are a stupid" in text


def test_a_gold_file_without_texts_is_checked_by_its_sample_record(tmp_path: Path) -> None:
    """Rows written before they kept their text: the input's sha256 in the sample record must be the responses'."""
    production, candidate, gold, _ = _labelled_elsewhere(tmp_path)
    rows = [json.loads(line) for line in gold.read_text().splitlines()]
    gold.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "text"}) + "\n" for row in rows))
    with pytest.raises(InputError, match="the gold file's labels were given on .*candidate.jsonl"):
        fairtalk.score(production, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    right = fairtalk.score(candidate, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    assert right.measure("offense_rate").ppi is not None and not any("could not be checked" in w for w in right.warnings)
    (tmp_path / "gold.jsonl.sample.json").unlink()  # nothing left to check by: said, not silently trusted
    unchecked = fairtalk.score(production, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    assert any("labels were given on these responses could not be checked" in w for w in unchecked.warnings)


BOT = f"""
import re


def reply(text):
    return {RUDE!r} if re.search(r"\\b(she|her|woman|girl|mother|sister|wife)\\b", text, re.I) else {KIND!r}
"""


#: How the too-few-disagreements warning ends.
ONLY = " to estimate its error: its labelled gap and interval are the labels' alone (with more labels the scorer can narrow them)"


def test_audit_gold_prints_the_labelled_lines_as_score_does_wrapped_for_80_columns(tmp_path: Path) -> None:
    """Review finding: ``audit --gold`` printed nothing of the labelled estimate; its warning said "pairs" where
    results.json counts labelled units (dialogues); the ``labelled:`` line was one ~330-character line."""
    (tmp_path / "bot.py").write_text(BOT, encoding="utf-8")
    common = ["--model", f"python:{tmp_path / 'bot.py'}:reply", "--axis", "gender", "--pairs", "40", "--measures", "offense"]
    common += ["--resamples", "100", "--store", str(tmp_path / "store.sqlite")]
    first = runner.invoke(app, ["audit", *common, "-o", str(tmp_path / "first")])
    assert first.exit_code == 0, first.output
    answers = fairtalk.read_responses(tmp_path / "first" / "gender" / "responses.jsonl")
    gold = tmp_path / "gold.jsonl"
    with gold.open("w", encoding="utf-8") as out:  # a person agrees with the scorer on every answer: labels alone
        for r in answers.a + answers.b:
            out.write(json.dumps({"pair_id": r.pair_id, "side": r.side, "offense_rate": int(r.response == RUDE)}) + "\n")
    done = runner.invoke(app, ["audit", *common, "--gold", str(gold), "-o", str(tmp_path / "second")])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("gender: labelled: Offense Rate (%) by 40 labelled pairs"))
    block = [lines[start], *itertools.takewhile(lambda line: line.startswith("    "), lines[start + 1 :])]
    text = " ".join(" ".join(block).split())
    assert "the scorer alone says -87.50 pp" in text and "the labels alone -87.50 pp" in text, text
    results = json.loads((tmp_path / "second" / "gender" / "results.json").read_text(encoding="utf-8"))
    method = results["measures"]["offense_rate"]["ppi"]["method"]
    assert "0 of " in method and " labelled units disagree" in method and results["n_clusters"] is not None
    assert "the gap and interval are the labels' alone (0 labelled dialogues disagree with the scorer" in text
    warning = "offense_rate: only 0 labelled dialogues disagree with the scorer, fewer than the 10 needed"
    assert [w for w in results["warnings"] if "disagree with the scorer" in w] == [f"{warning}{ONLY}"]
    said = " ".join(done.output.split())
    assert said.count(f"gender: warning: {warning}") == 1 and said.count("disagree with the scorer") == 2  # line, warning
    report = " ".join((tmp_path / "second" / "gender" / "report.md").read_text(encoding="utf-8").split())
    assert report.count("**Warning:** offense\\_rate: only 0 labelled dialogues disagree with the scorer, fewer than") == 1
    assert len(block) > 2 and all(len(line) <= 80 for line in block), block
    scored = runner.invoke(
        app,
        ["score", "--responses", str(tmp_path / "second" / "gender" / "responses.jsonl"), "--axis", "gender"]
        + ["--measures", "offense", "--resamples", "100", "--gold", str(gold), "-o", str(tmp_path / "scored")],
    )
    assert scored.exit_code == 0, scored.output
    (head,) = [line for line in scored.output.splitlines() if line.startswith("labelled: ")]
    assert len(head) <= 80 and all(len(line) <= 80 for line in scored.output.splitlines() if line.startswith("    "))


def test_the_labelled_lines_wrap_at_the_console_s_width_with_their_four_column_indent(tmp_path: Path) -> None:
    """``--gold``'s lines were wrapped at a fixed 80 columns before ``say`` wrapped them again: at 120 they stayed at 80."""
    import os
    import subprocess
    import sys

    responses = _responses(tmp_path / "responses.jsonl")
    gold = _gold(tmp_path / "gold.jsonl", responses, 40, truth="agree")
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--resamples", "100"]
    args += ["--gold", str(gold), "-o", str(tmp_path / "out")]
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "COLUMNS": "120", "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run([sys.executable, "-m", "fairtalk.cli", *args], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("labelled: Offense Rate (%) by 40 labelled pairs"))
    block = [lines[start], *itertools.takewhile(lambda line: line.startswith("    "), lines[start + 1 :])]
    assert len(block) > 2 and all(line.startswith("    ") and line[4] != " " for line in block[1:]), block
    assert all(len(line) <= 120 for line in block) and max(len(line) for line in block[:-1]) > 100, block
    assert "labels alone" in " ".join(" ".join(block).split())  # the whole line


def test_the_statistics_page_names_the_commands_that_warn_of_labels_only() -> None:
    """Review finding: the page said ``label`` warns of a labels-only estimate; it prints no estimate."""
    page = " ".join((Path(__file__).parents[1] / "docs" / "statistics.md").read_text(encoding="utf-8").split())
    assert "`score --gold` and `audit --gold` warn (one of the result's warnings, so the terminal, the report" in page
    assert "`label`" not in page.split("warn (one of the result's warnings")[0][-200:]


def _counting_bot(tmp_path: Path) -> Path:
    """BOT, which also writes a line to ``calls.txt`` each time it is asked (so a test sees whether it was)."""
    calls = tmp_path / "calls.txt"
    (tmp_path / "bot.py").write_text(
        BOT + f"\n\n_reply = reply\n\n\ndef reply(text):\n    open({str(calls)!r}, 'a').write('x\\n')\n    return _reply(text)\n",
        encoding="utf-8",
    )
    return calls


def test_audit_gold_checks_the_gold_file_before_the_first_answer(tmp_path: Path) -> None:
    """Review finding: a gold file of texts (or of other pairs, other keys) failed ``audit --gold`` only after every answer."""
    calls = _counting_bot(tmp_path)
    common = ["audit", "--model", f"python:{tmp_path / 'bot.py'}:reply", "--axis", "gender", "--pairs", "40"]
    common += ["--measures", "offense", "--resamples", "100"]
    files = {
        "texts.jsonl": (json.dumps({"id": 1, "label": 1}), "the gold file labels texts"),
        "other_pairs.jsonl": (
            "\n".join(json.dumps({"pair_id": "gender-0", "side": s, "offense_rate": 0}) for s in "ab"),
            "none of the 1 labelled pairs of the gold file is among this run's pairs (first: gender-0)",
        ),
        "other_keys.jsonl": (
            json.dumps({"pair_id": "gender-0", "side": "a", "sentiment": 1}),
            "the gold file labels sentiment, sentiment_positive, sentiment_negative, none of which this run scores",
        ),
        "bad_side.jsonl": (json.dumps({"pair_id": "gender-0", "side": "c", "offense_rate": 0}), "bad_side.jsonl:1: each row"),
        "missing.jsonl": (None, "missing.jsonl"),
    }
    for name, (text, message) in files.items():
        if text is not None:
            (tmp_path / name).write_text(text + "\n", encoding="utf-8")
        store, out = tmp_path / f"{name}.sqlite", tmp_path / f"out-{name}"
        done = runner.invoke(app, [*common, "--gold", str(tmp_path / name), "--store", str(store), "-o", str(out)])
        assert done.exit_code == 2, (name, done.output)
        assert done.stderr.startswith("error: ") and message in " ".join(done.stderr.split()), (name, done.stderr)
        assert not calls.exists() and not store.exists() and not out.exists(), name  # the model was never asked
    looks = ["--until-decided", "--max-pairs", "80", "--gold", str(tmp_path / "other_pairs.jsonl")]  # every look's pairs
    done = runner.invoke(app, [*common, *looks, "--store", str(tmp_path / "s.sqlite"), "-o", str(tmp_path / "looks")])
    assert done.exit_code == 2 and "is among this run's pairs" in " ".join(done.stderr.split()), done.output
    assert not calls.exists()


def test_audit_gold_of_other_answers_keeps_the_answers_and_says_how_to_rerun(tmp_path: Path) -> None:
    """Review finding: labels of another model's answers failed ``audit --gold`` after every answer without saying that
    the answers were kept, nor how to get them again without asking the model; with ``--baseline-model`` the baseline
    was audited with the candidate's labels, and failed on them."""
    _counting_bot(tmp_path)
    common = ["audit", "--axis", "gender", "--pairs", "40", "--measures", "offense", "--resamples", "100"]
    first = runner.invoke(app, [*common, "--model", f"python:{tmp_path / 'bot.py'}:reply", "-o", str(tmp_path / "first")])
    assert first.exit_code == 0, first.output
    answers = fairtalk.read_responses(tmp_path / "first" / "gender" / "responses.jsonl")
    gold = tmp_path / "gold.jsonl"
    with gold.open("w", encoding="utf-8") as out:  # rows keep the text labelled, as fairtalk label writes them
        for r in answers.a + answers.b:
            row = {"pair_id": r.pair_id, "side": r.side, "offense_rate": int(r.response == RUDE), "text": r.response}
            out.write(json.dumps(row) + "\n")
    (tmp_path / "kind.py").write_text(f"def reply(text):\n    return {KIND!r}\n", encoding="utf-8")
    store, second = tmp_path / "second.sqlite", tmp_path / "second"
    other = [*common, "--model", f"python:{tmp_path / 'kind.py'}:reply", "--store", str(store), "-o", str(second)]
    done = runner.invoke(app, [*other, "--gold", str(gold)])
    assert done.exit_code == 2, done.output
    text = " ".join(done.stderr.split())
    assert text.startswith("error: ") and "labelled answers of the gold file are not these responses' answers" in text
    assert f"every answer of this run is kept in the run store {store}" in text, text
    assert "the same command without --gold (the same options and store) gives them again without asking the model" in text
    assert "Traceback" not in done.stderr and not second.exists() and store.exists()
    command = shlex.split(text.split("The command: ", 1)[1])
    assert command[:2] == ["fairtalk", "audit"] and "--gold" not in command and str(store) in command
    config = tmp_path / "audit.toml"
    config.write_text(f"gold = {json.dumps(str(gold))}\n", encoding="utf-8")
    done = runner.invoke(app, [*other, "--config", str(config)])  # the options file names it: no command without it
    assert done.exit_code == 2 and f"Leave gold out of {config} and run the same command" in " ".join(done.stderr.split())
    again = runner.invoke(app, command[1:])  # the rerun the message names: every answer from the store
    assert again.exit_code == 0, again.output
    assert "gender: 0 generated, 80 from the store, 0 failed" in again.output
    # the labels are the candidate's: --baseline-model audits its baseline without them (it failed on them after the
    # candidate's report was written)
    base = tmp_path / "with-baseline"
    candidate = [*common, "--model", f"python:{tmp_path / 'bot.py'}:reply", "--gold", str(gold), "-o", str(base)]
    done = runner.invoke(app, [*candidate, "--baseline-model", f"python:{tmp_path / 'kind.py'}:reply"])
    assert done.exit_code == 0, done.output
    labelled = json.loads((base / "gender" / "results.json").read_text(encoding="utf-8"))["measures"]["offense_rate"]
    baseline = json.loads((base / "baseline" / "gender" / "results.json").read_text(encoding="utf-8"))["measures"]
    assert labelled["ppi"] is not None and baseline["offense_rate"].get("ppi") is None


def test_sentiment_labels_whose_keys_are_estimated_are_not_said_to_be_left_out(tmp_path: Path) -> None:
    """A raw field (sentiment) gives the keys estimated (sentiment_positive/_negative): it was once warned of as not scored."""
    responses = _responses(tmp_path / "responses.jsonl")
    gold = tmp_path / "gold.jsonl"
    rows = [
        {"pair_id": f"p{i}", "side": side, "sentiment": (i + (side == "a")) % 3 - 1, "refusal_rate": 0, "annotator": "ana"}
        for i in range(10)
        for side in ("a", "b")
    ]
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = fairtalk.score(responses, axis="gender", measures="sentiment", n_resamples=100, gold=str(gold))
    assert result.measure("sentiment_positive").ppi is not None and result.measure("sentiment_negative").ppi is not None
    assert [w for w in result.warnings if "which this run does not score" in w] == [
        "gold labels for refusal_rate, which this run does not score: left out of the labelled estimates"
    ]
    rows = [{"pair_id": f"p{i}", "side": side, "regard": 0, "annotator": "ana"} for i in range(3) for side in ("a", "b")]
    rows += [{"pair_id": f"p{i}", "side": side, "offense_rate": 0, "annotator": "ana"} for i in range(3) for side in ("a", "b")]
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")  # regard not scored: named by its field
    result = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    assert "gold labels for regard, which this run does not score: left out of the labelled estimates" in result.warnings


def test_score_refuses_a_gold_file_that_labels_none_of_its_pairs_before_scoring(tmp_path: Path) -> None:
    """Review finding: 120 labels, all of unknown pair ids, left the gate to pass on the scorer with only warnings."""
    responses = _responses(tmp_path / "responses.jsonl")
    gold = tmp_path / "elsewhere.jsonl"
    rows = [{"pair_id": f"gender-zz{i:04d}", "side": s, "offense_rate": 0} for i in range(60) for s in "ab"]
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    message = "none of the 60 labelled pairs of the gold file is among this run's pairs (first: gender-zz0000)"
    with pytest.raises(InputError, match=r"none of the 60 labelled pairs"):
        fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
    out, junit = tmp_path / "out", tmp_path / "j.xml"
    args = ["score", "--responses", str(responses), "--axis", "gender", "--measures", "offense", "--gold", str(gold)]
    done = runner.invoke(app, [*args, "--fail-unless-equivalent", "--junit", str(junit), "-o", str(out)])
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("error: ") and message in " ".join(done.stderr.split()), done.stderr
    assert not out.exists() and 'errors="1"' in junit.read_text(encoding="utf-8").split("<testsuite ")[0]
    labelled = _gold(tmp_path / "some.jsonl", responses, 40, truth="agree")  # a partial join stays a counted warning
    with labelled.open("a", encoding="utf-8") as f:
        f.write("".join(json.dumps(row) + "\n" for row in rows[:2]))
    result = fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(labelled))
    assert "1 labelled pair(s) of the gold file are not among this run's pairs (first: gender-zz0000): left out" in (
        result.warnings
    )


def test_score_refuses_a_gold_file_that_labels_none_of_its_keys(tmp_path: Path) -> None:
    responses = _responses(tmp_path / "responses.jsonl")
    gold = tmp_path / "refusal.jsonl"
    gold.write_text("".join(json.dumps({"pair_id": "p0", "side": s, "refusal_rate": 0}) + "\n" for s in "ab"), "utf-8")
    with pytest.raises(InputError, match=r"the gold file labels refusal_rate, none of which this run scores"):
        fairtalk.score(responses, axis="gender", measures="offense", n_resamples=100, gold=str(gold))
