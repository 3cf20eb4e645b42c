"""``reproduce_debias()`` and `fairtalk reproduce debias` on tiny models (300 chitchat dialogues, one epoch).

The models train on a JSONL file of 300 chitchat train dialogues (so that each training run
does not re-read the whole corpus) and are audited on chitchat's held-out split.
"""

from __future__ import annotations

import csv
import itertools
import json
import logging
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.experiments import _reproduce as _reproduce
from fairtalk.training import load_checkpoint

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

#: Replaces the quick mode's training overrides: seconds per model on one thread.
TINY = {
    "epochs": 1,
    "max_dialogues": None,
    "min_count": 1,
    "max_vocab": 2000,
    "val_size": 30,
    "batch_size": 32,
    "threads": 1,
    "sizes": {"emb_dim": 16, "hidden": 32, "layers": 1, "dropout": 0.0},
}
N_PAIRS = 30
MODELS = ("baseline", "cda", "wer")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One quick-mode run with tiny models; yields (comparison, root dir, checkpoint mtimes, warnings logged)."""
    root = tmp_path_factory.mktemp("reproduce")
    dialogues = itertools.islice(fairtalk.read_corpus("builtin:chitchat", split="train"), 300)
    lines = [json.dumps({"context": d.text, "response": d.response}) for d in dialogues]
    lines[150:150] = ["{not json", "{not json either"]  # lines 151 and 152: skipped, and counted
    lines += [json.dumps({"context": f"hello {i}"}) for i in range(3)]  # no response: left out, and counted
    (root / "dialogues.jsonl").write_text("".join(line + "\n" for line in lines))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # generation on a shared, busy machine: one thread avoids spin contention
    warned = _Recorder()
    logger = logging.getLogger("fairtalk.experiments")
    logger.addHandler(warned)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_reproduce, "QUICK_TRAINING", TINY)
        comparison = fairtalk.reproduce_debias(
            out_dir=root / "out",
            cache_dir=root / "cache",
            quick=True,
            n_pairs=N_PAIRS,
            n_resamples=100,
            corpus=f"jsonl:{root / 'dialogues.jsonl'}",
            eval_corpus="builtin:chitchat",
            report_formats=("json", "md"),
        )
        logger.removeHandler(warned)
        mtimes = {m.name: Path(m.checkpoint, "model.safetensors").stat().st_mtime_ns for m in comparison.models.values()}
        yield comparison, root, mtimes, warned.lines
    torch.set_num_threads(threads)


class _Recorder(logging.Handler):
    """The WARNING lines a logger emits."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _pair_ids(path) -> list[str]:
    return sorted({json.loads(line)["pair_id"] for line in path.read_text().splitlines()})


def test_trains_three_models_and_audits_them_on_the_same_pairs(tiny) -> None:
    comparison, root, _, _ = tiny
    out, cache = root / "out", root / "cache"
    assert tuple(comparison.models) == MODELS and comparison.n_trained == 3 and comparison.mode == "quick"
    assert [m.debias for m in comparison.models.values()] == ["none", "cda", "wer"]
    assert comparison.groups == ("male", "female") and comparison.eval_split == "heldout"
    for model in comparison.models.values():
        assert model.training["epochs"] == 1 and model.validation["loss"] > 0
        assert load_checkpoint(model.checkpoint).config["debias"] == model.debias
        assert model.result.n_pairs == comparison.n_pairs == N_PAIRS
        assert 0 <= model.n_different <= N_PAIRS and 1 <= model.n_distinct <= 2 * N_PAIRS
    pairs = sorted(p.id for p in fairtalk.read_pairs(out / "pairs.jsonl"))
    assert len(pairs) == N_PAIRS
    for name in MODELS:
        assert _pair_ids(out / name / "gender" / "responses.jsonl") == pairs
        assert (out / name / "index.html").is_file() and (out / name / "gender" / "report.md").is_file()
    assert (cache / "responses.sqlite").is_file()
    frame = comparison.to_frame()
    assert frame.index.names == ["model", "measure"] and set(frame.index.get_level_values("model")) == set(MODELS)


def test_says_once_what_the_training_corpus_skipped_and_left_out(tiny) -> None:
    _, root, _, warned = tiny
    spec = f"jsonl:{root / 'dialogues.jsonl'}"
    assert warned == [
        f"the training corpus {spec}: skipped: malformed JSON 2, first at {root / 'dialogues.jsonl'}:151",
        f"the training corpus {spec}: without a response 3, left out",
    ]


def test_every_input_is_checked_before_any_training(tmp_path, monkeypatch) -> None:
    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("trained before the inputs were checked")

    monkeypatch.setattr(_reproduce, "train_model", no_training)
    corpus = tmp_path / "dialogues.jsonl"
    corpus.write_text('{"context": "how was your day?", "response": "fine"}\n' * 5)
    no_pairs = tmp_path / "no-pairs.jsonl"
    no_pairs.write_text('{"context": "how was your day?"}\n')
    cases = {
        str(tmp_path / "nope.jsonl"): (fairtalk.FairtalkError, "nope.jsonl"),
        "nosuchformat:x.jsonl": (fairtalk.SpecError, "nosuchformat"),
        f"jsonl:{no_pairs}": (fairtalk.InputError, r"gave 0 gender pair\(s\)"),
    }
    for eval_corpus, (error, message) in cases.items():
        with pytest.raises(error, match=message):
            fairtalk.reproduce_debias(
                out_dir=tmp_path / "out", quick=True, corpus=f"jsonl:{corpus}", eval_corpus=eval_corpus, n_resamples=100
            )
    with pytest.raises(fairtalk.FairtalkError, match="missing.jsonl"):  # the training corpus too
        fairtalk.reproduce_debias(out_dir=tmp_path / "out", quick=True, corpus=f"jsonl:{tmp_path / 'missing.jsonl'}")
    assert not (tmp_path / "out" / "cache").exists()


def test_a_training_corpus_of_bad_lines_only_is_an_error_that_counts_them(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n" * 3)
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text("".join(json.dumps({"context": f"how is he doing {i}?"}) + "\n" for i in range(5)))
    with pytest.raises(fairtalk.InputError, match=r"no context-response pairs .* skipped 3 line\(s\) of .*malformed JSON 3"):
        fairtalk.reproduce_debias(out_dir=tmp_path / "out", quick=True, corpus=f"jsonl:{bad}", eval_corpus=f"jsonl:{contexts}")
    assert not list((tmp_path / "out").rglob("model.safetensors"))


def test_writes_the_table_7_shaped_table(tiny) -> None:
    _, root, _, _ = tiny
    out = root / "out"
    md = (out / "table7.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| Measure"))
    for name in MODELS:
        assert f"{name} male" in header and f"{name} female" in header and f"{name} p" in header
    assert "| Pairs answered differently | Distinct responses |" in md
    for label in ("Offense Rate (%)", "Sentiment Positive (%)", "Ave. Career Word Numbers per Response", "Diversity (%)"):
        assert f"| {label} |" in md
    rows = list(csv.DictReader((out / "table7.csv").open()))
    measures = [
        "offense_rate",
        "sentiment_positive",
        "sentiment_negative",
        "career_words",
        "family_words",
        "diversity",
        "length",
        "refusal_rate",
    ]
    assert [r["measure"] for r in rows] == measures * 3
    assert {r["model"] for r in rows} == set(MODELS)
    assert {r["gap_vs_baseline"] for r in rows if r["model"] == "baseline"} == {""}
    assert {r["gap_vs_baseline"] for r in rows if r["model"] != "baseline"} <= {
        "lower",
        "higher",
        "no detectable change",
        "not compared",
    }
    data = json.loads((out / "results.json").read_text())
    assert list(data["models"]) == list(MODELS) and data["n_pairs"] == N_PAIRS
    assert "· no detectable change" in md and "shown smaller / larger" in md
    assert set(data["models"]["wer"]["run"]["axes"]["gender"]["result"]["measures"]) >= set(measures)


def test_marks_only_the_changes_the_compare_test_supports(tiny) -> None:
    """Each debiased model is compared with the baseline (compare's change in gap); ↓/↑ only for improved/regressed."""
    comparison, root, _, _ = tiny
    out = root / "out"
    assert set(comparison.changes) == {"cda", "wer"}
    data = json.loads((out / "results.json").read_text())
    assert set(data["changes"]) == {"cda", "wer"}
    mark = {
        "improved": "lower",
        "regressed": "higher",
        "unchanged": "no detectable change",
        "inconclusive": "no detectable change",
    }
    rows = {(r["model"], r["measure"]): r for r in csv.DictReader((out / "table7.csv").open())}
    for name in ("cda", "wer"):
        changed = data["changes"][name]["axes"]["gender"]["keys"]
        assert changed["offense_rate"]["n_pairs"] == N_PAIRS and changed["offense_rate"]["change_test"]
        for key, entry in changed.items():
            row = rows.get((name, key))
            if row is None:
                continue
            assert row["gap_vs_baseline"] == mark[entry["verdict"]], (name, key)
            assert row["change_verdict"] == entry["verdict"] == comparison.change_verdict(name, key).value
            assert float(row["change"]) == pytest.approx(entry["change"])
        assert rows[(name, "diversity")]["gap_vs_baseline"] == "not compared"  # corpus-level: compare does not test it
    # a debiased model whose gap is not shown to change carries "·", whatever its point estimate says
    md = (out / "table7.md").read_text()
    undecided = [(n, k) for (n, k), r in rows.items() if r["gap_vs_baseline"] == "no detectable change"]
    assert undecided and " ·" in md
    again = fairtalk.DebiasComparison.from_dict(data)
    assert again.change_verdict("wer", "offense_rate") == comparison.change_verdict("wer", "offense_rate")


def test_cache_key_follows_the_config() -> None:
    lexicon = fairtalk.load_lexicon("gender")
    configs = _reproduce.debias_configs(quick=True)
    keys = {_reproduce.cache_key(c, lexicon) for c in configs.values()}
    assert len(keys) == 3
    assert _reproduce.cache_key(configs["wer"], lexicon) == _reproduce.cache_key(replace(configs["wer"]), lexicon)
    assert _reproduce.cache_key(replace(configs["wer"], seed=1), lexicon) != _reproduce.cache_key(configs["wer"], lexicon)
    assert _reproduce.cache_key(configs["wer"], fairtalk.load_lexicon("race")) != _reproduce.cache_key(configs["wer"], lexicon)


def test_rejects_bad_options(tmp_path) -> None:
    with pytest.raises(
        fairtalk.SpecError, match=r"n_pairs must be a whole number ≥ 2 \(two pairs are the fewest a test compares\), got 0"
    ):
        fairtalk.reproduce_debias(out_dir=tmp_path, n_pairs=0)
    with pytest.raises(fairtalk.SpecError, match="trains seq2seq models"):
        fairtalk.reproduce_debias(out_dir=tmp_path, train_config=fairtalk.TrainConfig(model="retrieval"))
    with pytest.raises(fairtalk.SpecError):
        fairtalk.reproduce_debias(out_dir=tmp_path, axis="no-such-axis")


def test_cli_second_run_reuses_the_cached_models_and_responses(tiny, tmp_path, monkeypatch) -> None:
    comparison, root, mtimes, _ = tiny
    monkeypatch.setattr(_reproduce, "QUICK_TRAINING", TINY)
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        app,
        [
            "reproduce",
            "debias",
            "--quick",
            "--pairs",
            str(N_PAIRS),
            "--cache",
            str(root / "cache"),
            "--corpus",
            f"jsonl:{root / 'dialogues.jsonl'}",
            "--eval-corpus",
            "builtin:chitchat",
            "--resamples",
            "100",
            "-o",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Offense Rate" in result.output and "pairs answered differently" in result.output
    assert "trained: none (all cached)" in result.output and f"0 generated, {3 * 2 * N_PAIRS} from the store" in result.output
    assert {m.name: Path(m.checkpoint, "model.safetensors").stat().st_mtime_ns for m in comparison.models.values()} == mtimes
    again = json.loads((out / "results.json").read_text())
    for name in MODELS:
        measures = again["models"][name]["run"]["axes"]["gender"]["result"]["measures"]
        assert measures["offense_rate"]["a"] == comparison.results[name].measure("offense_rate").a
    assert (
        (out / "table7.md").is_file() and (out / "table7.csv").is_file() and (out / "cda" / "gender" / "results.json").is_file()
    )


def test_cli_errors_exit_2(tmp_path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["reproduce", "debias", "--pairs", "0", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "--pairs must be a whole number ≥ 2" in result.output
    result = runner.invoke(app, ["reproduce", "debias", "--axis", "no-such-axis", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "error:" in result.output


def test_cli_refuses_another_commands_folder_as_output_or_cache_before_training(tmp_path) -> None:
    runner = CliRunner()
    audit = tmp_path / "base"
    result = runner.invoke(app, ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "20", "-o", str(audit)])
    assert result.exit_code == 0, result.output
    before = sorted(p.name for p in audit.iterdir())
    cases = {
        ("-o", str(audit)): "the output folder holds an audit's run (run.json)",
        ("-o", str(tmp_path / "d"), "--cache", str(audit)): "the cache folder holds an audit's run (run.json)",
    }
    for args, message in cases.items():
        result = runner.invoke(app, ["reproduce", "debias", "--quick", *args])
        flat = " ".join(result.stderr.split())
        assert result.exit_code == 2, result.output
        assert "error:" in flat and message in flat
    assert sorted(p.name for p in audit.iterdir()) == before
    assert not (tmp_path / "d").exists()


def test_the_models_answer_on_ray_as_in_this_process(tiny, tmp_path, monkeypatch, cluster) -> None:
    comparison, root, _, _ = tiny
    monkeypatch.setattr(_reproduce, "QUICK_TRAINING", TINY)
    cache = tmp_path / "cache"  # the trained checkpoints, without the run store: every answer is generated again
    for model in comparison.models.values():
        shutil.copytree(model.checkpoint, cache / Path(model.checkpoint).name)
    out = tmp_path / "ray"
    result = CliRunner().invoke(
        app,
        [
            "reproduce",
            "debias",
            "--quick",
            "--pairs",
            str(N_PAIRS),
            "--cache",
            str(cache),
            "--corpus",
            f"jsonl:{root / 'dialogues.jsonl'}",
            "--eval-corpus",
            "builtin:chitchat",
            "--resamples",
            "100",
            "-o",
            str(out),
            "--quiet",
            "--engine",
            "ray",
            "--ray-actors",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "trained: none (all cached)" in result.output and f"{3 * 2 * N_PAIRS} generated, 0 from the store" in result.output
    again = json.loads((out / "results.json").read_text())
    for name in MODELS:
        assert again["models"][name]["run"]["config"]["engine"]["num_actors"] == 2
        ours = (out / name / "gender" / "responses.jsonl").read_text()
        assert ours == (root / "out" / name / "gender" / "responses.jsonl").read_text()


@pytest.mark.parametrize("same", ["default", "the same file"])
def test_a_file_corpus_the_audit_reads_too_is_split_so_no_model_trains_on_an_audited_context(tmp_path, monkeypatch, same) -> None:
    corpus = tmp_path / "dialogues.jsonl"
    rows = [{"context": f"is {'he' if i % 2 else 'she'} a doctor {i}?", "response": f"yes {i}"} for i in range(300)]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    audited: list[set[str]] = []
    trained: list[set[str]] = []

    class Stop(Exception):
        pass

    def pairs_seen(*args: object, **kwargs: object) -> object:
        pairs, coverage = _audit_pairs(*args, **kwargs)
        audited.append({p.a if p.original_side == "a" else p.b for p in pairs})
        return pairs, coverage

    def training_seen(dialogues, *args: object, **kwargs: object) -> None:
        trained.append({d.text for d in dialogues})
        raise Stop

    _audit_pairs = _reproduce._audit_pairs
    monkeypatch.setattr(_reproduce, "_audit_pairs", pairs_seen)
    monkeypatch.setattr(_reproduce, "train_model", training_seen)
    eval_corpus = None if same == "default" else str(corpus)
    with pytest.raises(Stop):
        fairtalk.reproduce_debias(out_dir=tmp_path / "out", quick=True, corpus=f"jsonl:{corpus}", eval_corpus=eval_corpus)
    assert len(audited[0]) >= 2 and len(trained[0]) > 200
    assert not audited[0] & trained[0]  # held out: the audit's contexts are none of the training contexts
    assert len(audited[0]) + len(trained[0]) <= 300


def test_a_file_split_too_small_to_audit_says_what_the_audit_reads_and_how_to_give_more(tmp_path) -> None:
    from fairtalk.corpora import chitchat_split

    corpus = tmp_path / "dialogues.jsonl"
    texts = [text for text in (f"is he ok {i}?" for i in range(100)) if chitchat_split(text) == "train"]  # none held out
    corpus.write_text("".join(json.dumps({"context": text, "response": "yes"}) + "\n" for text in texts))
    with pytest.raises(fairtalk.InputError, match=r"\(heldout\) gave 0 gender pair.*held out of training.*--eval-corpus"):
        fairtalk.reproduce_debias(out_dir=tmp_path / "out", quick=True, corpus=f"jsonl:{corpus}")


def test_the_cache_key_of_a_file_corpus_follows_its_split(tmp_path) -> None:
    corpus = tmp_path / "dialogues.jsonl"
    corpus.write_text('{"context": "hi", "response": "hello"}\n')
    config = _reproduce.debias_configs(quick=True, corpus=f"jsonl:{corpus}")["baseline"]
    lexicon = fairtalk.load_lexicon("gender")
    keys = {split: _reproduce.cache_key(config, lexicon, split=split) for split in ("all", "train")}
    assert keys["all"] != keys["train"] and keys["all"] == _reproduce.cache_key(config, lexicon)
    chitchat = _reproduce.debias_configs(quick=True)["baseline"]  # no file: the split it always had, the key it had
    assert _reproduce.cache_key(chitchat, lexicon, split="train") == _reproduce.cache_key(chitchat, lexicon)


def test_a_training_corpus_fairtalk_augmented_is_refused_before_any_training(tmp_path, monkeypatch) -> None:
    from fairtalk.debias import write_dialogues

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("trained a model on an augmented corpus")

    monkeypatch.setattr(_reproduce, "train_model", no_training)
    source = [fairtalk.Context(str(i), f"is he a doctor {i}?", response=f"yes he is {i}") for i in range(50)]
    augmented = tmp_path / "augmented.jsonl"
    write_dialogues(fairtalk.augment(source, fairtalk.Swapper(fairtalk.load_lexicon("gender"))), augmented)
    with pytest.raises(fairtalk.InputError, match="augmented corpus fairtalk wrote.*twins of its twins"):
        fairtalk.reproduce_debias(
            out_dir=tmp_path / "out", quick=True, corpus=f"jsonl:{augmented}", eval_corpus="builtin:chitchat", n_pairs=5
        )


def test_the_splits_hold_out_only_the_corpus_the_models_train_on(tmp_path) -> None:
    own = tmp_path / "contexts.txt"
    own.write_text("he went\n")
    assert _reproduce._splits("builtin:chitchat", None) == ("train", "builtin:chitchat", "heldout")
    assert _reproduce._splits("builtin:chitchat", "builtin:chitchat") == ("train", "builtin:chitchat", "heldout")
    assert _reproduce._splits("builtin:chitchat", str(own)) == ("train", str(own), "all")  # contexts of its own: whole
    assert _reproduce._splits(f"text:{own}", str(own)) == ("train", str(own), "heldout")  # the same file: split
    assert _reproduce._splits(f"text:{own}", "builtin:chitchat") == ("all", "builtin:chitchat", "heldout")


def test_an_evaluation_corpus_of_its_own_beside_chitchat_is_audited_whole(tmp_path, monkeypatch) -> None:
    class Stop(Exception):
        pass

    read: list[int] = []

    def pairs_seen(*args: object, **kwargs: object) -> object:
        pairs, coverage = audit_pairs(*args, **kwargs)
        read.append(coverage.n_read)
        raise Stop

    audit_pairs = _reproduce._audit_pairs
    monkeypatch.setattr(_reproduce, "_audit_pairs", pairs_seen)
    contexts = tmp_path / "e200.txt"
    contexts.write_text("".join(f"he went home on day {i}\n" for i in range(200)))
    with pytest.raises(Stop):
        fairtalk.reproduce_debias(out_dir=tmp_path / "out", quick=True, eval_corpus=str(contexts))
    assert read == [200]  # every context, not the 10% held out of a corpus no model trains on


def test_cli_an_evaluation_corpus_too_small_says_so_without_advising_the_option_given(tmp_path) -> None:
    contexts = tmp_path / "one.txt"
    contexts.write_text("he went\n")
    result = CliRunner().invoke(
        app, ["reproduce", "debias", "--quick", "--eval-corpus", str(contexts), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 2, result.output
    assert f"error: {contexts} (all) gave 1 gender pair(s) (1 contexts read); need at least 2" in result.output
    assert "--eval-corpus" not in result.output and "held out" not in result.output
