"""Tests for run/_sequential.py and `fairtalk audit --until-decided`: nested looks, stopping, the record, the CLI."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from audit_toys import write_big_corpus as _big_corpus
from audit_toys import write_corpus, write_models
from fairtalk import AuditConfig, SpecError
from fairtalk.cli import app
from fairtalk.run._sequential import nested_pairs

runner = CliRunner()
FAST = {"n_resamples": 200}
_FEMALE = ("she", "her", "mother", "girl", "sister")


class Counting:
    """A callable model that counts the contexts it is asked (test doubles are real adapters)."""

    def __init__(self, reply: str = "biased") -> None:
        self.asked: list[str] = []
        self.reply = reply

    def __call__(self, context: str) -> str:
        self.asked.append(context)
        if self.reply == "biased":
            female = any(word in context.split() for word in _FEMALE)
            return "shut up you stupid idiot" if female else "that is lovely, i am so happy"
        if self.reply == "varied":  # fair: each side's length is a coin of its own text, with no group in it
            return " ".join(["word"] * (3 + hashlib.sha256(context.encode()).digest()[0] % 5))
        return "that is lovely, i am so happy for you"


def _sequential(run: fairtalk.AuditRun, axis: str = "gender") -> dict[str, object]:
    record = run.results[axis].provenance.sequential
    assert record is not None
    return record.to_dict()


def test_looks_are_nested_and_a_larger_budget_extends_a_smaller_one(tmp_path: Path) -> None:
    corpus = fairtalk.read_corpus(str(_big_corpus(tmp_path)))
    lexicon = fairtalk.load_lexicon("gender")
    config = AuditConfig(corpus=str(tmp_path / "big.txt"), axes=("gender",), until_decided=True, n_pairs=50, max_pairs=400)
    small, large = nested_pairs(corpus, lexicon, config.pairs, 100), nested_pairs(corpus, lexicon, config.pairs, 400)
    assert small.ranked == large.ranked[:100]
    first, coverage = large.look(50)
    second, _ = large.look(100)
    assert {p.id for p in first} < {p.id for p in second} and len(second) == 100
    assert coverage.n_pairs == 50 and coverage.n_matched == large.coverage.n_matched
    ids = [p.id for p in second]
    position = {p.id: int(at) for p, at in zip(large.ranked, large.positions)}
    assert ids == sorted(ids, key=position.__getitem__)  # corpus order within a look
    other = nested_pairs(corpus, lexicon, config.updated({"seed": 1}).pairs, 100)
    assert {p.id for p in other.ranked} != {p.id for p in small.ranked}  # the seed draws another sample


def test_a_clearly_biased_model_stops_at_the_first_look(tmp_path: Path) -> None:
    model = Counting("biased")
    run = fairtalk.audit(
        corpus=write_corpus(tmp_path),
        axes="gender",
        model=model,
        until_decided=True,
        n_pairs=20,
        max_pairs=40,
        measures="offense,length",
        **FAST,
    )
    record = _sequential(run)
    assert record["stopped"] == "all decided" and record["looks"] == 1 and record["n_pairs"] == 20
    assert record["planned_looks"] == [20, 40] and record["undecided"] == []
    assert run.results["gender"].n_pairs == 20 and len(model.asked) == 40  # fewer pairs than the budget
    assert set(run.results["gender"].detected()) == {"offense_rate", "length"}
    assert 0 < float(record["nominal_alpha"]) < 0.05  # type: ignore[arg-type]


def _mostly_biased(context: str) -> str:
    """Offensive on 7 in 8 contexts that mention a woman (by a hash of the context), kind otherwise."""
    female = any(word in context.split() for word in _FEMALE)
    if female and hashlib.sha256(context.encode()).digest()[0] % 8:
        return "shut up you stupid idiot"
    return "that is lovely, i am so happy"


def test_a_large_clustered_effect_stops_at_the_first_of_four_looks(tmp_path: Path) -> None:
    """Issue 39 item 4: a Monte Carlo sign-flip p floors at 1/10,001, above look 1's boundary of 4 (p < 1.5e-5).

    480 contexts in dialogues of 1, 2 and 3 lines, so whole dialogues flip by Monte Carlo; an offense gap of about
    88 points must cross the first O'Brien-Fleming boundary, not run on to look 2 and spend twice the pairs.
    """
    lines = _big_corpus(tmp_path).read_text(encoding="utf-8").splitlines()
    rows, start, dialogue = [], 0, 0
    while start < len(lines):
        size = 1 + dialogue % 3
        rows += [json.dumps({"text": text, "cluster": f"d{dialogue}"}) for text in lines[start : start + size]]
        start, dialogue = start + size, dialogue + 1
    corpus = tmp_path / "dialogues.jsonl"
    corpus.write_text("\n".join(rows) + "\n", encoding="utf-8")
    run = fairtalk.audit(
        corpus=str(corpus),
        axes="gender",
        model=_mostly_biased,
        until_decided=True,
        n_pairs=80,
        max_pairs=320,
        looks=4,
        measures="offense",
        **FAST,
    )
    record = _sequential(run)
    assert record["planned_looks"] == [80, 160, 240, 320]
    offense = run.results["gender"].measure("offense_rate")
    assert offense.paired_test == "cluster_signflip_mc" and offense.b - offense.a > 0.8
    assert offense.p_paired is not None and offense.p_paired < 1e-5  # below the Monte Carlo floor of 1/10,001
    assert record["looks"] == 1 and record["stopped"] == "all decided" and record["n_pairs"] == 80, record
    assert offense.detected() and offense.p_adjusted is not None and offense.p_adjusted < 0.005


def test_a_model_that_never_decides_spends_the_budget_and_asks_each_pair_once(tmp_path: Path) -> None:
    model = Counting("fair")  # identical answers on 40 pairs cannot show equivalence within 2 points
    run = fairtalk.audit(
        corpus=write_corpus(tmp_path),
        axes="gender",
        model=model,
        until_decided=True,
        n_pairs=10,
        max_pairs=40,
        measures="offense",
        **FAST,
    )
    record = _sequential(run)
    assert record["stopped"] == "budget spent" and record["looks"] == 4 and record["planned_looks"] == [10, 20, 30, 40]
    assert record["undecided"] == ["offense_rate"]
    assert len(model.asked) == 80 == len(set(model.asked))  # each look asked only its new pairs
    generation = run.axes["gender"].generation
    assert (generation.n_generated, generation.n_cached) == (80, 0)
    # the same run again is answered by the store
    store = tmp_path / "store.sqlite"
    fairtalk.audit(
        corpus=write_corpus(tmp_path),
        axes="gender",
        model=model,
        until_decided=True,
        n_pairs=10,
        max_pairs=40,
        measures="offense",
        store=store,
        **FAST,
    )
    again = fairtalk.audit(
        corpus=write_corpus(tmp_path),
        axes="gender",
        model=model,
        until_decided=True,
        n_pairs=10,
        max_pairs=40,
        measures="offense",
        store=store,
        **FAST,
    )
    assert (again.axes["gender"].generation.n_generated, again.axes["gender"].generation.n_cached) == (0, 80)


def test_a_fair_model_with_varied_answers_stops_once_equivalent(tmp_path: Path) -> None:
    model = Counting("varied")
    run = fairtalk.audit(
        corpus=_big_corpus(tmp_path),
        axes="gender",
        model=model,
        until_decided=True,
        n_pairs=100,
        max_pairs=400,
        measures="length",
        margins={"length": 2.0},
        **FAST,
    )
    record = _sequential(run)
    result = run.results["gender"]
    assert record["stopped"] == "all decided" and int(record["n_pairs"]) < 400  # type: ignore[call-overload]
    measure = next(m for m in result.measures if m.name == "length")
    assert measure.verdict is fairtalk.Verdict.EQUIVALENT and "group-sequential" in (measure.equivalence_test or "")
    assert any("group-sequential, look" in note for note in measure.notes)
    assert len(model.asked) == 2 * int(record["n_pairs"])  # type: ignore[call-overload]


def test_identical_answers_stop_once_enough_pairs_bound_the_share_that_could_differ(tmp_path: Path) -> None:
    model = Counting("fair")  # the same answer for everyone: a zero spread, equivalence from the exact share bound
    run = fairtalk.audit(
        corpus=_big_corpus(tmp_path),
        axes="gender",
        model=model,
        until_decided=True,
        n_pairs=120,
        max_pairs=480,
        measures="offense",
        **FAST,
    )
    record = _sequential(run)
    assert record["stopped"] == "all decided" and 120 < int(record["n_pairs"]) < 480  # type: ignore[call-overload]
    assert run.results["gender"].verdicts["offense_rate"] is fairtalk.Verdict.EQUIVALENT
    assert len(model.asked) == 2 * int(record["n_pairs"])  # type: ignore[call-overload]


def test_sequential_p_values_are_never_below_the_fixed_sample_ones(tmp_path: Path) -> None:
    run = fairtalk.audit(
        corpus=write_corpus(tmp_path),
        axes="gender",
        model=Counting("biased"),
        until_decided=True,
        n_pairs=10,
        max_pairs=40,
        measures="offense,length",
        **FAST,
    )
    fixed = fairtalk.audit(
        corpus=write_corpus(tmp_path), axes="gender", model=Counting("biased"), n_pairs=40, measures="offense,length", **FAST
    )
    record = _sequential(run)
    assert record["looks"] == 2  # 10 pairs cannot cross the O'Brien-Fleming boundary of the first look
    for m in run.results["gender"].measures:
        assert m.p_adjusted is not None and m.p_paired is not None and m.p_adjusted >= m.p_paired
    assert fixed.results["gender"].provenance.audit is not None and fixed.results["gender"].provenance.sequential is None
    # issue 39 "one test": a fixed-size audit's rate test is the score test, the looks keep McNemar's exact test
    assert fixed.results["gender"].measure("offense_rate").paired_test == "score"
    assert run.results["gender"].measure("offense_rate").paired_test == "mcnemar_exact"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"until_decided": True}, "until_decided needs max_pairs"),
        ({"until_decided": True, "max_pairs": 10, "n_pairs": 20}, r"max_pairs \(10\) is below the first look"),
        ({"until_decided": True, "max_pairs": 10, "n_pairs": None}, "needs n_pairs"),
        ({"max_pairs": 100}, "max_pairs applies only with until_decided"),
        ({"looks": 3}, "looks applies only with until_decided"),
        ({"until_decided": True, "max_pairs": 100, "looks": 1}, "looks must be a whole number ≥ 2"),
        ({"until_decided": True, "max_pairs": 100, "spending": "haybittle"}, "unknown spending"),
    ],
)
def test_bad_sequential_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        AuditConfig.from_mapping(options)


def _cli(corpus: Path, model: str, out: Path, *extra: str) -> list[str]:
    return ["audit", "--corpus", str(corpus), "--axis", "gender", "--model", model, "-o", str(out), "--resamples", "200", *extra]


def test_cli_until_decided_reports_its_looks_and_keeps_the_exit_codes(tmp_path: Path) -> None:
    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    out = tmp_path / "biased"
    result = runner.invoke(
        app,
        _cli(
            corpus,
            f"python:{models}:biased",
            out,
            "--until-decided",
            "--pairs",
            "20",
            "--max-pairs",
            "40",
            "--measures",
            "offense,length",
            "--fail-on-bias",
        ),
    )
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())  # the console wraps its lines at 80 columns
    assert "gender: until decided: stopped at look 1 of 2 (20 of at most 40 pairs): every primary measure decided" in said
    assert "gender: 40 generated, 0 from the store, 0 failed" in said
    results = json.loads((out / "gender" / "results.json").read_text())
    assert results["manifest"]["audit"]["sequential"]["stopped"] == "all decided"
    summary = json.loads((out / "run.json").read_text())
    assert summary["config"]["until_decided"] is True and summary["config"]["max_pairs"] == 40
    assert summary["axes"]["gender"]["result"]["manifest"]["audit"]["sequential"]["n_pairs"] == 20
    assert "Until decided: stopped at look 1 of 2" in (out / "index.html").read_text()
    for page in ("report.md", "report.html"):  # each axis' own report says how its size was reached
        assert "until decided: stopped at look 1 of 2 (20 of at most 40 pairs)" in (out / "gender" / page).read_text()

    spent = runner.invoke(
        app,
        _cli(
            corpus,
            f"python:{models}:fair",
            tmp_path / "fair",
            "--until-decided",
            "--pairs",
            "20",
            "--max-pairs",
            "40",
            "--measures",
            "offense",
            "--fail-on-bias",
        ),
    )
    assert spent.exit_code == 0, spent.output
    said = " ".join(spent.output.split())
    assert "stopped at look 2 of 2 (40 of at most 40 pairs): budget spent, still undecided: offense_rate" in said
    gate = runner.invoke(
        app,
        _cli(
            corpus,
            f"python:{models}:fair",
            tmp_path / "fair",
            "--until-decided",
            "--pairs",
            "20",
            "--max-pairs",
            "40",
            "--measures",
            "offense",
            "--fail-unless-equivalent",
        ),
    )
    assert gate.exit_code == 1, gate.output
    assert "0 generated, 80 from the store" in gate.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--until-decided"], "--until-decided needs --max-pairs N"),
        (["--until-decided", "--max-pairs", "10", "--pairs", "20"], "--max-pairs (10) is below the first look, --pairs (20)"),
        (["--max-pairs", "100"], "--max-pairs applies only with --until-decided"),
        (["--until-decided", "--max-pairs", "100", "--spending", "haybittle"], "unknown --spending 'haybittle'"),
    ],
)
def test_cli_bad_sequential_options_exit_2(tmp_path: Path, extra: list[str], message: str) -> None:
    result = runner.invoke(app, _cli(write_corpus(tmp_path), "builtin:echo", tmp_path / "out", *extra))
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.replace("│", " ").split())
    assert not (tmp_path / "out" / "store.sqlite").exists()


@pytest.mark.parametrize(
    ("looks", "max_pairs", "message"),
    [
        (
            1000,
            300,
            "looks 1000: from n_pairs 100 to max_pairs 300 the looks after the first add at most 200 pairs, at least one "
            "each, so at most 201 looks fit; give looks 201 or fewer (or a larger max_pairs)",
        ),
        (202, 300, "so at most 201 looks fit"),
        (2, 100, "looks 2: from n_pairs 100 to max_pairs 100 no look after the first can add a pair; leave looks out"),
    ],
)
def test_more_looks_than_the_pairs_they_can_add_are_refused(looks: int, max_pairs: int, message: str) -> None:
    """--looks 1000 between 100 and 300 pairs once ran some 200 looks of one pair each, still going after 30 minutes."""
    with pytest.raises(SpecError) as caught:
        AuditConfig.from_mapping({"until_decided": True, "n_pairs": 100, "max_pairs": max_pairs, "looks": looks})
    assert message in str(caught.value)
    fits = AuditConfig.from_mapping({"until_decided": True, "n_pairs": 100, "max_pairs": 300, "looks": 201})
    assert fits.looks == 201


def test_cli_refuses_too_many_looks_before_any_answer(tmp_path: Path) -> None:
    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    args = _cli(corpus, f"python:{models}:fair", tmp_path / "out", "--until-decided", "--pairs", "10", "--max-pairs", "30")
    done = runner.invoke(app, [*args, "--looks", "1000"])
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("error: --looks 1000: from --pairs 10 to --max-pairs 30")
    assert "give --looks 21 or fewer" in " ".join(done.stderr.split()) and not (tmp_path / "out").exists()
