"""The rows a prompts analysis keeps, decided once: ``--balanced-only``, machine labels refused from Python, and the label sample.

Three review findings: (1) ``prompts analyze`` warned of template × structure cells that lack a
group but could not leave them out; (2) ``analyze_prompts(gold=...)`` given labels read from a
file took fairtalk's own machine labels as gold, which the CLI refuses; (3) ``fairtalk label`` on
a completions file sampled completions the analysis leaves out (groups outside the analysed
ones, echoes, failed completions), whose labels were then wasted.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app, main
from fairtalk.errors import InputError, SpecError
from fairtalk.gold import LabelServer, draw_sample, read_gold
from fairtalk.prompts import (
    GroupPair,
    GroupSet,
    analysed_completions,
    analysed_rows,
    analyze,
    analyze_prompts,
    read_completions,
)
from fairtalk.prompts._gold import MSG_MACHINE_LABELS

runner = CliRunner()
GROUPS = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
TEMPLATES = ("worked as", "was known for", "had a job as", "was regarded as")


def _unbalanced_rows() -> list[dict[str, object]]:
    """Four templates × two structures × four seeds per group; woman lacks 'was regarded as' (2 cells, 8 rows)."""
    return [
        {"group": g, "template": t, "structure": s, "seed": k, "label": (k + len(t) + (g == "man")) % 3 - 1}
        for g in ("man", "woman")
        for t in TEMPLATES
        for s in ("original", "x")
        for k in range(4)
        if not (g == "woman" and t == "was regarded as")
    ]


# -- 1. --balanced-only ----------------------------------------------------------------------------------------------


def test_balanced_only_analyses_the_cells_every_group_holds_and_counts_the_rest() -> None:
    rows = _unbalanced_rows()
    kept = analyze(pd.DataFrame(rows), groups=GROUPS, n_draws=2, n_resamples=0, balanced_only=True)
    balanced = [r for r in rows if r["template"] != "was regarded as"]
    by_hand = analyze(pd.DataFrame(balanced), groups=GROUPS, n_draws=2, n_resamples=0)
    assert kept.gaps == by_hand.gaps and kept.regard == by_hand.regard and kept.data.n_rows == 48
    assert kept.data.n_rows_unbalanced == 8 and kept.data.n_cells_unbalanced == 2 and kept.config.balanced_only
    assert not any("lack a group that the others have" in w for w in kept.warnings)
    said = [w for w in kept.warnings if w.startswith("balanced cells only")]
    assert said == [
        "balanced cells only: left out 8 of 56 completions in 2 of 8 template × structure cells that lack a group the "
        "others have (first: template 'was regarded as' under original, without woman)"
    ]
    assert by_hand.data.n_rows_unbalanced == 0 and not by_hand.config.balanced_only
    # without the option the cells are kept, and the warning points at it
    whole = analyze(pd.DataFrame(rows), groups=GROUPS, n_draws=2, n_resamples=0)
    assert whole.data.n_rows == 56 and whole.gaps != kept.gaps
    assert any("lack a group" in w and "(prompts analyze --balanced-only)" in w for w in whole.warnings)
    # the Python entry takes it too, in the one options value
    assert analyze_prompts(pd.DataFrame(rows), groups=GROUPS, n_draws=2, n_resamples=0, balanced_only=True).gaps == kept.gaps


def test_balanced_only_with_no_balanced_cell_is_an_error() -> None:
    rows = [{"group": g, "template": t, "structure": "s", "seed": 0, "label": 1} for g, t in (("man", "a"), ("woman", "b"))]
    with pytest.raises(InputError, match=r"balanced cells only leaves no completion: none of the 2 .*\(man, woman\)"):
        analyze(pd.DataFrame(rows), groups=GROUPS, n_draws=2, n_resamples=0, balanced_only=True)


def test_the_rule_matches_groups_as_the_analysis_does_and_leaves_other_groups_to_be_counted() -> None:
    frame = pd.DataFrame(
        {
            "group": [" Man", "woman", "man", "robot", "robot"],
            "template": ["t", "t", "u", "t", "u"],
            "structure": ["s"] * 5,
        }
    )
    found = analysed_rows(frame, ["man", "woman"], balanced_only=True)
    assert found.group.tolist() == ["man", "woman", "man", None, None] and found.other_groups == ("robot",)
    assert found.kept.tolist() == [True, True, False, False, False] and found.n_other == 2 and found.n_unbalanced == 1
    assert analysed_rows(frame, ["man", "woman"]).kept.tolist() == [True, True, True, False, False]


def test_prompts_analyze_balanced_only_says_what_it_left_out_and_records_it(tmp_path: Path) -> None:
    completions, groups, out = tmp_path / "c.jsonl", tmp_path / "g.tsv", tmp_path / "rep"
    groups.write_text("man\tgender\nwoman\tgender\n")
    rows = [{**r, "text": f"The {r['group']} {r['template']} x {i}."} for i, r in enumerate(_unbalanced_rows())]
    completions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["prompts", "analyze", "--completions", str(completions), "--groups", str(groups), "--draws", "2"]
    done = runner.invoke(app, [*args, "--resamples", "0", "--balanced-only", "-o", str(out)])
    said = " ".join(done.output.split())
    assert done.exit_code == 0, done.output
    assert "warning: balanced cells only: left out 8 of 56 completions in 2 of 8 template × structure cells" in said
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["balanced_only"] is True
    assert results["data"]["n_rows_unbalanced"] == 8 and results["data"]["n_cells_unbalanced"] == 2
    assert results["data"]["n_rows"] == 48
    plain = runner.invoke(app, [*args, "--resamples", "0", "-o", str(tmp_path / "plain")])
    assert plain.exit_code == 0 and "--balanced-only" in " ".join(plain.output.split()), plain.output
    assert json.loads((tmp_path / "plain" / "results.json").read_text())["config"]["balanced_only"] is False


# -- 2. machine labels from Python -----------------------------------------------------------------------------------


def _labelled_completions(path: Path) -> pd.DataFrame:
    rows = [
        {"group": g, "template": t, "structure": "original", "seed": k, "text": f"The {g} {t} x {k}.", "label": k % 3 - 1}
        for g in ("man", "woman")
        for t in TEMPLATES
        for k in range(6)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return read_completions(path).frame


def _gold_file(path: Path, frame: pd.DataFrame, annotators: list[str]) -> Path:
    rows = [
        {"id": rid, "label": 1, "annotator": who, "note": "", "text": text}
        for (rid, text), who in zip(zip(frame["id"], frame["text"]), annotators)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_analyze_prompts_refuses_machine_labels_read_from_a_file_as_the_cli_does(tmp_path: Path) -> None:
    frame = _labelled_completions(tmp_path / "c.jsonl")
    machine = _gold_file(tmp_path / "labels.jsonl", frame, ["ana"] * 3 + ["fairtalk:builtin:tfidf"] * 5)
    message = MSG_MACHINE_LABELS.format(n=5, annotator="fairtalk:builtin:tfidf", id=frame["id"].iloc[3])
    for given in (read_gold(machine), read_gold(machine).regard_labels()):  # the file read, or its labels by id
        with pytest.raises(InputError) as caught:
            analyze_prompts(frame, groups=GROUPS, gold=given, n_draws=2, n_resamples=0)
        assert str(caught.value) == f"{machine}: {message}"
    done = runner.invoke(
        app,
        ["prompts", "analyze", "--completions", str(tmp_path / "c.jsonl"), "--gold", str(machine), "-o", str(tmp_path / "r")],
    )
    assert done.exit_code == 2 and f"error: {machine}: {message}" in " ".join(done.output.split()), done.output


def test_analyze_prompts_takes_a_persons_gold_file_with_its_texts_and_path(tmp_path: Path) -> None:
    frame = _labelled_completions(tmp_path / "c.jsonl")
    human = _gold_file(tmp_path / "gold.jsonl", frame, ["ana"] * 40)
    gold = read_gold(human)
    from_file = analyze_prompts(frame, groups=GROUPS, gold=gold, n_draws=2, n_resamples=0)
    by_hand = analyze_prompts(
        frame,
        groups=GROUPS,
        gold=dict(gold.regard_labels()),
        gold_source=str(human),
        gold_texts=gold.texts(),
        n_draws=2,
        n_resamples=0,
    )
    assert from_file.gold == by_hand.gold and from_file.gold is not None and from_file.gold.source == str(human)
    # the texts come with the labels read: labels of another text are refused, not joined
    other = tmp_path / "other.jsonl"
    other.write_text(human.read_text().replace("x 0.", "x 9.", 1))
    with pytest.raises(InputError, match="hold another text than the analysed completion"):
        analyze_prompts(frame, groups=GROUPS, gold=read_gold(other), n_draws=2, n_resamples=0)
    # a plain mapping names no annotator: taken as a person's labels, as before
    assert analyze_prompts(frame, groups=GROUPS, gold={"1": (1,), "2": (0,)}, n_draws=2, n_resamples=0).gold is not None


# -- 3. the label sample draws from what the analysis keeps ----------------------------------------------------------


def _completions_with_left_outs(path: Path) -> None:
    """Man (spelled 'Man' too) and woman over four templates, plus a robot group, an echo and a failed completion."""
    rows: list[dict[str, object]] = []
    for g in ("Man", "man", "woman", "robot"):
        for t in TEMPLATES:
            for k in range(3):
                prompt = f"The {g} {t}"
                completion = f" a cook {k}."
                rows.append({"group": g, "template": t, "structure": "original", "seed": k, "prompt": prompt})
                rows[-1].update({"completion": completion, "text": prompt + completion})
    rows = [r for r in rows if not (r["group"] == "man" and r["template"] in TEMPLATES[:2])]  # Man holds those
    base = {"group": "woman", "structure": "original", "seed": 0}
    rows.append(
        {**base, "template": "t", "prompt": "The woman t", "completion": "The woman t", "text": "The woman t The woman t"}
    )
    rows.append({**base, "template": "u", "prompt": "The woman u", "completion": None, "text": "The woman u", "error": "down"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_sample_of_a_completions_file_holds_only_completions_the_analysis_keeps(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    _completions_with_left_outs(path)
    found = analysed_completions(path, groups=GROUPS)
    assert Counter(found.groups.values()) == {"man": 18, "woman": 12}
    assert found.left_out == {"failed": 1, "echo": 1, "other_groups": 12} and found.other_groups == ("robot",)
    assert found.note == (
        "left out 14 of 44 completions that prompts analyze leaves out: 1 failed; 1 echoing their prompt; 12 of groups "
        "not analysed (robot; pass --groups FILE, as to prompts analyze, to analyse them)"
    )
    everything = draw_sample(path, n=24, seed=0)  # without the rule: robot, and 'Man' apart from 'man'
    assert Counter(item.group for item in everything.items) == {"Man": 6, "man": 6, "woman": 6, "robot": 6}
    sample = draw_sample(path, n=24, seed=0, keep=found.groups)
    assert Counter(item.group for item in sample.items) == {"man": 12, "woman": 12} and sample.n_left_out == 14
    assert {item.id for item in sample.items} <= set(found.groups)
    # the analysis joins every one of them: no label of the sample is left out
    assert {item.id for item in sample.items} <= set(read_completions(path).frame["id"])
    with pytest.raises(InputError, match="needs 13 texts of group 'woman', which has only 12"):
        draw_sample(path, n=26, seed=0, keep=found.groups)
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps({"pair_id": "p", "side": s, "response": "ok"}) + "\n" for s in "ab"))
    with pytest.raises(SpecError, match="not to an audit's responses"):
        draw_sample(responses, n=2, keep={})


def test_label_samples_the_completions_prompts_analyze_keeps_and_says_what_it_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, gold = tmp_path / "c.jsonl", tmp_path / "gold.jsonl"
    _completions_with_left_outs(path)
    monkeypatch.setattr(LabelServer, "serve_forever", lambda self, poll_interval=0.5: self.log.add(0, 1))  # one label
    code, out, err = _run_label(monkeypatch, capsys, str(path), "--measure", "regard", "-o", str(gold), "--n", "24")
    said = " ".join((out + err).split())
    assert code == 0, said
    assert "warning: left out 14 of 44 completions that prompts analyze leaves out: 1 failed; 1 echoing their prompt; " in said
    assert "12 of groups not analysed (robot; pass --groups FILE, as to prompts analyze, to analyse them)" in said
    record = json.loads((tmp_path / "gold.jsonl.sample.json").read_text())
    frame = read_completions(path).frame
    kept = frame[frame["group"].str.lower().isin(["man", "woman"])]
    assert len(record["items"]) == 24 and {item for item, _ in record["items"]} <= set(kept["id"])
    # with a groups file naming robot, its completions are drawn from too
    groups = tmp_path / "g.tsv"
    groups.write_text("man\tgender\nwoman\tgender\nrobot\tbots\nalien\tbots\n")
    code, out, err = _run_label(
        monkeypatch,
        capsys,
        str(path),
        "--measure",
        "regard",
        "-o",
        str(tmp_path / "g2.jsonl"),
        "--n",
        "30",
        "--groups",
        str(groups),
    )
    assert code == 0, out + err
    items = json.loads((tmp_path / "g2.jsonl.sample.json").read_text())["items"]
    drawn = Counter(frame.set_index("id").loc[[i for i, _ in items], "group"].str.lower())
    assert drawn == {"man": 10, "woman": 10, "robot": 10}
    # the options apply to completions only
    texts = tmp_path / "texts.txt"
    texts.write_text("She is kind.\nHe was rude.\n")
    args = ["-m", "offense_rate", "-o", str(tmp_path / "t.jsonl"), "--n", "2", "--balanced-only"]
    code, out, err = _run_label(monkeypatch, capsys, str(texts), *args)
    assert code == 2 and "error: --balanced-only pick the completions prompts analyze keeps" in " ".join(err.split())


def _run_label(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["fairtalk", "label", *args])
    monkeypatch.delenv("FAIRTALK_DEBUG", raising=False)
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err


def test_the_public_names_are_reachable() -> None:
    assert fairtalk.prompts.analysed_rows is analysed_rows and fairtalk.prompts.analysed_completions is analysed_completions


def test_a_sample_drawn_from_every_completion_is_not_resumed_and_the_error_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gold file begun by a fairtalk that drew from every completion: its labels stay, the new sample is refused."""
    from fairtalk.gold import GoldLog, label_schemes

    path, gold = tmp_path / "c.jsonl", tmp_path / "gold.jsonl"
    _completions_with_left_outs(path)
    GoldLog(gold, draw_sample(path, n=24, seed=0), label_schemes("regard"), annotator="ana").add(0, 1)
    before = gold.read_text()
    code, out, err = _run_label(monkeypatch, capsys, str(path), "-m", "regard", "-o", str(gold), "--n", "24")
    said = " ".join(err.split())
    assert code == 2 and "belongs to another sample (the items drawn differ)" in said, said
    assert "also the same --groups and --balanced-only" in said and gold.read_text() == before
