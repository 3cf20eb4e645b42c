"""Planted bias: the planted replies, the planted model and corpus, and ``reproduce planted`` end to end (tiny sizes)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.counterfactual import Swapper
from fairtalk.debias import plant_corpus
from fairtalk.lexicons import load_lexicon
from fairtalk.models import PLANTED_REPLIES, DecodingSettings, EchoResponder, PlantedResponder
from fairtalk.pipeline import reproduce_planted
from fairtalk.records import Context
from fairtalk.results import PlantedRecovery

SETTINGS = DecodingSettings()


def _to_a(text: str) -> str | None:
    return text.replace("she", "he") if "she" in text else None


def test_the_planted_replies_are_offensive_and_clearly_negative_for_the_default_scorers() -> None:
    pytest.importorskip("profanity_check")
    pytest.importorskip("vaderSentiment")
    from profanity_check import predict_prob
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    assert min(predict_prob(list(PLANTED_REPLIES))) >= 0.99
    analyzer = SentimentIntensityAnalyzer()
    assert max(analyzer.polarity_scores(r)["compound"] for r in PLANTED_REPLIES) <= -0.8


def test_the_planted_model_answers_group_b_as_group_a_unless_a_reply_is_drawn() -> None:
    base = EchoResponder(mode="identity")
    contexts = [f"she said {i}" for i in range(400)]
    never = PlantedResponder(base, _to_a, rate=0.0, seed=3)
    assert never.respond(contexts, SETTINGS, seeds=[0] * 400) == [c.replace("she", "he") for c in contexts]
    always = PlantedResponder(base, _to_a, rate=1.0, seed=3)
    assert set(always.respond(contexts, SETTINGS, seeds=[0] * 400)) <= set(PLANTED_REPLIES)
    some = PlantedResponder(base, _to_a, rate=0.1, seed=3)
    answers = some.respond(contexts, SETTINGS, seeds=[0] * 400)
    n_planted = sum(a in PLANTED_REPLIES for a in answers)
    assert 20 <= n_planted <= 60 and answers == some.respond(contexts, SETTINGS, seeds=[1] * 400)  # fixed by the seed
    assert some.respond(["he said 1"], SETTINGS, seeds=[0]) == ["he said 1"]  # group A: the base model's answer
    assert PlantedResponder(base, _to_a, rate=0.1, seed=4).fingerprint != some.fingerprint
    with pytest.raises(fairtalk.SpecError, match="planted rate must be in"):
        PlantedResponder(base, _to_a, rate=1.5)


def test_the_planted_corpus_replaces_only_group_b_replies_at_the_rate() -> None:
    swapper = Swapper(load_lexicon("gender"))
    records = [Context(id=f"c{i}", text=f"my {'sister' if i % 2 else 'brother'} is {i}", response="ok") for i in range(2000)]
    records += [Context(id=f"n{i}", text=f"the weather {i}", response="ok") for i in range(1000)]
    planted = plant_corpus(records, swapper, rate=0.2, replies=PLANTED_REPLIES, seed=1, keep_other=0.5)
    out = list(planted)
    summary = planted.summary
    assert summary.n_group_b == 1000 and summary.n_group_a == 1000 and 150 <= summary.n_planted <= 250
    assert all(r.response == "ok" for r in out if "sister" not in r.text)
    assert sum(r.response in PLANTED_REPLIES for r in out) == summary.n_planted
    assert 400 <= sum(r.text.startswith("the weather") for r in out) <= 600  # keep_other thins the others
    with pytest.raises(fairtalk.SpecError, match="rate must be in"):
        plant_corpus(records, swapper, rate=-0.1, replies=PLANTED_REPLIES)


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    """``reproduce_planted`` end to end with tiny Seq2Seq models and rankers (one thread, a few hundred dialogues)."""
    pytest.importorskip("torch")
    from fairtalk.training import TrainConfig

    root = tmp_path_factory.mktemp("planted")
    config = TrainConfig(
        model="seq2seq",
        epochs=1,
        max_dialogues=300,
        min_count=1,
        max_vocab=2000,
        val_size=30,
        batch_size=32,
        threads=1,
        sizes={"emb_dim": 16, "hidden": 32, "layers": 1, "dropout": 0.0},
    )
    result = reproduce_planted(
        out_dir=root / "out",
        rates=(0.0, 0.1),
        base_model="builtin:echo?mode=identity",
        n_pairs=600,
        train_config=config,
        n_resamples=200,
        report_formats=("json",),
    )
    return result, root / "out"


def test_recovers_a_planted_gap_of_ten_points_and_finds_none_at_zero(planted_run) -> None:
    result, _ = planted_run
    assert isinstance(result, PlantedRecovery) and result.n_pairs == 600
    rows = {(row.rate, row.key): row for row in result.planted}
    ten = rows[(0.1, "offense_rate")]
    assert ten.covered and ten.ci[0] is not None and ten.ci[0] > 0 and ten.verdict is fairtalk.Verdict.DIFFERENT
    assert ten.true_gap == pytest.approx(0.1 * (1 - ten.base_share))
    assert 0.05 <= ten.n_planted / result.n_pairs <= 0.15
    for key in ("offense_rate", "sentiment_negative"):
        zero = rows[(0.0, key)]
        assert zero.n_planted == 0 and zero.gap == 0 and zero.verdict is not fairtalk.Verdict.DIFFERENT


def test_trains_baseline_cda_and_wer_on_the_planted_corpus_and_compares_them(planted_run) -> None:
    result, out = planted_run
    assert result.corpus["n_planted"] > 0 and result.corpus_rate == 0.5
    assert [(row.architecture, row.model, row.key) for row in result.debiased] == [
        (kind, model, key)
        for kind in ("seq2seq", "retrieval")
        for model in ("baseline", "cda", "wer")
        for key in ("offense_rate", "sentiment_negative")
    ]
    for row in result.debiased:
        assert (row.change_verdict is None) == (row.model == "baseline")
    assert (out / "debias" / "table7.md").is_file() and (out / "debias" / "baseline").is_dir()


def test_retrieval_rankers_on_the_planted_corpus_are_compared_with_their_own_baseline(planted_run) -> None:
    result, out = planted_run
    rankers = result.debias_retrieval
    assert rankers is not None and result.debias is not None and rankers.n_pairs == result.n_pairs
    assert {name: model.training["model"] for name, model in rankers.models.items()} == dict.fromkeys(
        ("baseline", "cda", "wer"), "retrieval"
    )
    assert all(Path(model.checkpoint).name.startswith("retrieval-") for model in rankers.models.values())
    assert (out / "debias-retrieval" / "table7.md").is_file() and (out / "debias-retrieval" / "wer").is_dir()
    assert (out / "debias-retrieval" / "table7.md").read_text().startswith("# Debiasing the retrieval model: gender")
    assert (out / "debias" / "table7.md").read_text().startswith("# Debiasing the Seq2Seq model: gender")
    for row in result.debiased:
        if row.architecture != "retrieval" or row.model == "baseline":
            continue
        change = rankers.gap_change(row.model, row.key)  # the rankers' own comparison, negated to B - A
        assert change is not None and row.change == pytest.approx(-change.change) and row.change_verdict is change.verdict
        baseline = next(r for r in result.debiased if r.label == "retrieval baseline" and r.key == row.key)
        assert row.change == pytest.approx(row.gap - baseline.gap, abs=1e-9)
    labels = {row.label for row in result.debiased}
    assert {"seq2seq baseline", "retrieval CDA", "retrieval WER"} <= labels
    assert ("retrieval-cda", "offense_rate") in result.verdicts and ("cda", "offense_rate") in result.verdicts
    # a ranker answers from its pool, the distinct training responses: it must hold the planted replies
    assert set(result.pools) == {"baseline", "cda", "wer"}
    for pool in result.pools.values():
        assert pool.n_held == pool.n_replies == len(PLANTED_REPLIES) and pool.n_candidates > pool.n_held
        assert 0 <= pool.n_chosen_a <= result.n_pairs and 0 <= pool.n_chosen_b <= result.n_pairs
    responses = rankers.models["baseline"].run.axes["gender"].responses
    assert responses is not None
    assert result.pools["baseline"].n_chosen_b == sum(rb.response in PLANTED_REPLIES for _, rb in responses)


def test_writes_the_table_the_figure_and_the_page(planted_run) -> None:
    result, out = planted_run
    for name in ("planted.md", "planted.csv", "results.json", "planted.png", "report.html"):
        assert (out / name).is_file(), name
    rows = list(csv.DictReader((out / "planted.csv").open()))
    assert len(rows) == len(result.planted) + len(result.debiased)
    assert {(r["model"], r["architecture"]) for r in rows if r["part"] == "debias"} == {
        (model, kind) for model in ("baseline", "cda", "wer") for kind in ("seq2seq", "retrieval")
    }
    read = PlantedRecovery.from_dict(json.loads((out / "results.json").read_text()))
    assert read.planted == result.planted and read.debiased == result.debiased and read.corpus == result.corpus
    assert read.debias is not None and read.debias.n_pairs == result.n_pairs and read.pools == result.pools
    assert read.debias_retrieval is not None and read.debias_retrieval.models.keys() == {"baseline", "cda", "wer"}
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page and "Trained on a planted corpus" in page
    markdown = (out / "planted.md").read_text()
    assert "| retrieval CDA | offense_rate |" in markdown and "| seq2seq WER | offense_rate |" in markdown
    assert "Planted replies in the retrieval rankers' pools: baseline 4 of 4 among" in markdown
    assert (out / "planted.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "planted" / "p10").is_dir()


def test_reads_a_results_file_written_before_the_retrieval_rows(planted_run) -> None:
    result, out = planted_run
    old = json.loads((out / "results.json").read_text())
    del old["debias_retrieval"], old["pools"]
    old["debiased"] = [row for row in old["debiased"] if row.pop("architecture") == "seq2seq"]
    read = PlantedRecovery.from_dict(old)
    assert read.debias_retrieval is None and not read.pools
    assert read.debiased == tuple(row for row in result.debiased if row.architecture == "seq2seq")
    assert {row.label for row in read.debiased} == {"seq2seq baseline", "seq2seq CDA", "seq2seq WER"}


def test_rejects_a_retrieval_config_of_another_model(tmp_path) -> None:
    from fairtalk.training import TrainConfig

    with pytest.raises(fairtalk.SpecError, match="retrieval_config must be a retrieval TrainConfig"):
        reproduce_planted(
            out_dir=tmp_path / "out",
            rates=(0.0,),
            base_model="builtin:echo?mode=identity",
            n_pairs=20,
            retrieval_config=TrainConfig(model="seq2seq"),
            n_resamples=50,
        )


@pytest.mark.parametrize("n_pairs", [1, 0, 2.5, True])
def test_the_library_words_a_bad_n_pairs_as_every_audit_does(tmp_path, n_pairs) -> None:  # noqa: ANN001
    """Review finding: reproduce_planted said "n_pairs must be at least 2, not 1" (and took 2.5), unlike audit and reproduce_debias."""
    with pytest.raises(
        fairtalk.SpecError, match=r"^n_pairs must be a whole number ≥ 2 \(two pairs are the fewest a test compares\), got"
    ):
        reproduce_planted(out_dir=tmp_path / "out", rates=(0.0,), base_model="builtin:echo?mode=identity", n_pairs=n_pairs)
    assert not (tmp_path / "out").exists()


def test_cli_rejects_bad_options_with_clear_errors(tmp_path) -> None:
    runner = CliRunner()
    cases = {
        ("--rates", "0,abc"): "--rates must be comma-separated numbers in [0, 100]",
        ("--rates", "0,150"): "--rates must be comma-separated numbers in [0, 100]",
        ("--corpus-rate", "120"): "--corpus-rate must be in [0, 100]",
        ("--pairs", "1"): "--pairs must be a whole number ≥ 2 (two pairs are the fewest a test compares), got 1",
    }
    for args, message in cases.items():
        result = runner.invoke(app, ["reproduce", "planted", *args, "-o", str(tmp_path / "out")])
        assert result.exit_code == 2, result.output
        assert "error:" in result.output and message in result.output
    result = runner.invoke(
        app, ["reproduce", "planted", "--base-model", "nosuch:model", "--no-train", "-o", str(tmp_path / "out")]
    )
    assert result.exit_code == 2 and "error:" in result.output


def test_cli_refuses_another_commands_folder_as_output_or_cache_and_one_folder_for_both(tmp_path) -> None:
    runner = CliRunner()
    audit = tmp_path / "base"
    result = runner.invoke(app, ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "20", "-o", str(audit)])
    assert result.exit_code == 0, result.output
    before = sorted(p.name for p in audit.iterdir())
    common = ["reproduce", "planted", "--quick", "--no-train", "--pairs", "20", "--rates", "0", "--base-model", "builtin:echo"]
    cases = {
        ("-o", str(audit), "--cache", str(tmp_path / "c")): "the output folder holds an audit's run (run.json)",
        ("-o", str(tmp_path / "p"), "--cache", str(audit)): "the cache folder holds an audit's run (run.json)",
        ("-o", str(tmp_path / "c"), "--cache", str(tmp_path / "c")): "the cache folder is the output folder",
    }
    for args, message in cases.items():
        result = runner.invoke(app, [*common, *args])
        flat = " ".join(result.stderr.split())
        assert result.exit_code == 2, result.output
        assert "error:" in flat and message in flat
    assert sorted(p.name for p in audit.iterdir()) == before
    assert not (tmp_path / "p").exists() and not (tmp_path / "c").exists()


def test_the_cli_says_the_planted_rates_and_gaps_in_pp(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Review finding: ``reproduce planted`` printed "p = 5 pts … true 5.00" with no unit."""
    from types import SimpleNamespace

    import fairtalk.pipeline
    from fairtalk.results import Verdict

    row = SimpleNamespace(
        rate=0.05, key="offense_rate", true_gap=0.05, gap=0.048, ci=(0.01, 0.09), covered=True, verdict=Verdict.DIFFERENT
    )
    files = {k: str(tmp_path / f"planted.{k}") for k in ("md", "csv", "json", "html")}
    fake = SimpleNamespace(planted=[row], debiased=[], files=files)
    monkeypatch.setattr(fairtalk.pipeline, "reproduce_planted", lambda **_: fake)
    result = CliRunner().invoke(app, ["reproduce", "planted", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "p = 5 pp, offense_rate: true 5.00 pp, recovered 4.80 pp [1.00, 9.00] pp, covered" in said, said
