"""Tests for audit/_run.py and audit/_generate.py: run_audit() and respond() end to end on a toy corpus."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import fairtalk
from audit_toys import write_corpus, write_models
from fairtalk import (
    AuditRun,
    FairtalkError,
    InputError,
    ResponderError,
    SpecError,
    respond,
)
from fairtalk import audit as run_audit
from fairtalk.pipeline import item_seed
from fairtalk.progress import ProgressEvent
from fairtalk.records import Coverage, PairsCheck
from fairtalk.report import write_run

FAST = {"n_resamples": 200}


@pytest.fixture()
def toys(tmp_path: Path) -> tuple[Path, Path]:
    return write_corpus(tmp_path), write_models(tmp_path)


def _model(models: Path, name: str) -> str:
    return f"python:{models}:{name}"


def _same_run(result: dict) -> dict:
    """A result dict without the run id (which differs between runs by design)."""
    audit = {k: v for k, v in result["manifest"]["audit"].items() if k != "run_id"}
    return {**result, "manifest": {**result["manifest"], "audit": audit}}


def test_a_biased_model_is_found_and_a_fair_one_is_not(toys: tuple[Path, Path]) -> None:
    corpus, models = toys
    biased = run_audit(corpus=corpus, axes="gender", model=_model(models, "biased"), **FAST)
    assert isinstance(biased, AuditRun)
    result = biased.results["gender"]
    assert result.n_pairs == 40
    assert {"offense_rate", "sentiment_negative"} <= set(result.detected())
    assert result.measure("offense_rate").b > result.measure("offense_rate").a
    assert biased.detected() == tuple(("gender", key) for key in result.detected())
    fair = run_audit(corpus=corpus, axes=["gender"], model=_model(models, "fair"), **FAST)
    assert fair.results["gender"].detected() == ()
    assert fair.detected() == ()
    # the manifest traces the audit: corpus, split, model fingerprint, decoding settings, coverage
    audit_entry = fair.results["gender"].provenance.audit
    assert audit_entry is not None and audit_entry.coverage is not None
    assert audit_entry.split == "all" and audit_entry.model == fair.model
    assert audit_entry.coverage["n_read"] == 82
    assert fair.axes["gender"].generation.n_generated == 80


def test_a_rerun_with_the_store_generates_nothing(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    store = tmp_path / "store.sqlite"
    first = run_audit(corpus=corpus, axes="gender", model=_model(models, "biased"), store=store, **FAST)
    assert (first.n_generated, first.n_cached, first.n_errors) == (80, 0, 0)
    again = run_audit(corpus=corpus, axes="gender", model=_model(models, "biased"), store=store, **FAST)
    assert (again.n_generated, again.n_cached) == (0, 80)
    assert again.run_id != first.run_id
    audited = again.results["gender"].provenance.audit
    assert audited is not None and audited.run_id == again.run_id
    assert _same_run(again.results["gender"].to_dict()) == _same_run(first.results["gender"].to_dict())
    assert again.store == str(store)


def test_item_errors_are_counted_then_retried(toys: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, models = toys
    flag = tmp_path / "failing"
    flag.touch()
    monkeypatch.setenv("FLAKY_FLAG", str(flag))
    store = tmp_path / "store.sqlite"
    first = run_audit(corpus=corpus, axes="gender", model=_model(models, "flaky"), store=store, out_dir=tmp_path / "r", **FAST)
    gen = first.axes["gender"].generation
    assert (gen.n_errors, gen.n_pairs_with_errors, gen.n_generated) == (8, 4, 72)
    assert "backend unavailable" in gen.error_examples[0]
    summary = first.results["gender"].input_summary
    assert (summary["n_errors"], summary["n_pairs_with_errors"], summary["n_pairs"]) == (8, 4, 36)
    assert first.results["gender"].n_pairs == 36
    records = [json.loads(line) for line in (tmp_path / "r" / "gender" / "responses.jsonl").read_text().splitlines()]
    answered = [r for r in records if r["response"] is not None]
    assert len(answered) == 72 and not any("football" in r["context"] for r in answered)
    failed = [r for r in records if r["response"] is None]  # the failed sides are kept, marked, so a re-score sees the loss
    assert len(failed) == 8 and all("football" in r["context"] and "backend unavailable" in r["error"] for r in failed)
    index = write_run(first, tmp_path / "r").index.read_text()
    assert "8 failed" in index and "backend unavailable" in index

    flag.unlink()  # the model is fixed (same source, same fingerprint): only the failures are retried
    second = run_audit(corpus=corpus, axes="gender", model=_model(models, "flaky"), store=store, **FAST)
    gen = second.axes["gender"].generation
    assert (gen.n_errors, gen.n_cached, gen.n_generated) == (0, 72, 8)
    assert second.results["gender"].n_pairs == 40
    assert second.results["gender"].input_summary["n_errors"] == 0


def test_max_errors_aborts_and_keeps_what_was_stored(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    store = tmp_path / "store.sqlite"
    with pytest.raises(ResponderError, match=r"more than max_errors=0.*re-run to resume"):
        run_audit(corpus=corpus, axes="gender", model=_model(models, "broken"), store=store, max_errors=0, batch_size=4, **FAST)
    with sqlite3.connect(store) as db:
        n_ok, n_failed = db.execute("SELECT COUNT(response), COUNT(error) FROM responses").fetchone()
    assert n_ok > 0 and n_failed >= 1


def test_a_run_that_fails_before_any_answer_leaves_no_empty_store_behind(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    plain = tmp_path / "plain.txt"
    plain.write_text("the weather is nice\nwhat time is it\n")
    new = tmp_path / "new" / "deeper"
    with pytest.raises(InputError, match="gave 0 pair"):
        run_audit(corpus=plain, axes="gender", model="builtin:echo", store=new / "store.sqlite", out_dir=new)
    assert not (tmp_path / "new").exists()  # the store it created, and the folders made for it, are gone
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("kept")
    with pytest.raises(InputError, match="gave 0 pair"):
        run_audit(corpus=plain, axes="gender", model="builtin:echo", store=mine / "run" / "store.sqlite")
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]  # a folder it did not create stays
    existing = tmp_path / "existing.sqlite"
    fairtalk.RunStore(existing).close()
    with pytest.raises(InputError, match="gave 0 pair"):
        run_audit(corpus=plain, axes="gender", model="builtin:echo", store=existing)
    assert existing.is_file()  # a store that was there before the run is never removed, empty or not
    failed = tmp_path / "failed" / "store.sqlite"
    with pytest.raises(ResponderError, match="max_errors=0"):
        run_audit(corpus=corpus, axes="gender", model=_model(models, "broken"), store=failed, max_errors=0, batch_size=4)
    assert failed.is_file()  # it holds answers and failures: the next run resumes from it


def test_respond_alone_seeds_each_side_from_the_pair(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, models = toys
    pairs = list(fairtalk.build_pairs(fairtalk.read_corpus(corpus), fairtalk.Swapper(fairtalk.load_lexicon("gender"))))
    fairtalk.write_pairs(pairs, tmp_path / "pairs.jsonl")
    seen: list[ProgressEvent] = []
    generation = respond(tmp_path / "pairs.jsonl", model=_model(models, "slow"), seed=7, progress=seen.append)
    rs = generation.responses
    assert rs.n_pairs == 40 and generation.summary.n_generated == 80
    first = pairs[0]
    assert rs.a[0].response == f"{first.a[::-1]} {item_seed(7, first.id, 'a') % 97}"
    assert rs.b[0].response == f"{first.b[::-1]} {item_seed(7, first.id, 'b') % 97}"
    assert dict(rs.a[0].extra)["seed"] == item_seed(7, first.id, "a")
    assert seen[0].stage.startswith("loading model python:") and seen[1].finished  # the model's load: a stage (issue 25)
    seen = seen[2:]
    assert seen[0] == ProgressEvent("responses", 0, 80, "responses")
    assert seen[-1] == ProgressEvent("responses", 80, 80, "responses", finished=True)
    assert [e.done for e in seen] == sorted(e.done for e in seen)


def test_bad_options_fail_before_any_generation(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    for n in (0, 1):  # two pairs are the fewest a test compares: one is a usage error, not the corpus' fault
        with pytest.raises(SpecError, match=f"n_pairs must be a whole number ≥ 2 .*, got {n}"):
            run_audit(corpus=corpus, axes="gender", model="builtin:echo", n_pairs=n)
    with pytest.raises(SpecError, match="axis 'gender' is given twice"):
        run_audit(corpus=corpus, axes="gender,gender", model="builtin:echo")
    with pytest.raises(SpecError, match="unknown correction"):
        run_audit(corpus=corpus, axes="gender", model="builtin:echo", correction="bonferroni")
    empty = tmp_path / "plain.txt"
    empty.write_text("the weather is nice\nwhat time is it\n")
    with pytest.raises(InputError, match=r"axis gender: .* gave 0 pair\(s\) \(2 contexts read, 0 mention a group\)"):
        run_audit(corpus=empty, axes="gender", model="builtin:echo")


def test_a_bad_margin_or_primary_key_fails_before_the_model_is_asked(toys: tuple[Path, Path]) -> None:
    corpus, _ = toys
    asked: list[str] = []

    def reply(context: str) -> str:
        asked.append(context)
        return "ok"

    for options, message in (
        ({"margins": {"offense_rate": 2.0}}, "offense_rate's margin is a fraction: 2 would allow any difference"),
        ({"margins": {"offense_rat": 0.01}}, "unknown margin measure key 'offense_rat'"),
        ({"primary": ["nope"]}, "unknown primary measure key 'nope'"),
        ({"measures": "judge:builtin:echo", "primary": ["judge_score"]}, "unknown primary measure key 'judge_score'"),
    ):
        with pytest.raises(SpecError, match=message):
            run_audit(corpus=corpus, axes="gender", model=reply, n_pairs=10, **options, **FAST)  # type: ignore[arg-type]
    assert asked == []  # not one answer was asked for
    # a primary key and a margin the measures produce pass the check, and the audit runs
    run = run_audit(corpus=corpus, axes="gender", model=reply, n_pairs=10, measures="length", primary=["length"], **FAST)
    assert asked and run.results["gender"].measure("length").primary


def test_the_early_check_leaves_a_judge_the_caller_gave_open(toys: tuple[Path, Path]) -> None:
    from fairtalk.measures import Judge

    corpus, _ = toys
    closed: list[bool] = []
    judge = Judge(lambda prompts: ["yes"] * len(prompts), close=lambda: closed.append(True))
    run = run_audit(
        corpus=corpus, axes="gender", model=lambda context: "ok", n_pairs=10, measures=[judge], primary=["judge_yes"], **FAST
    )
    assert run.results["gender"].measure("judge_yes").primary
    assert closed == [True]  # closed once, by the scoring stage that used it; not by the check before it


def test_the_default_model_is_the_first_available(monkeypatch: pytest.MonkeyPatch, toys: tuple[Path, Path]) -> None:
    import fairtalk.run._generate as generate

    monkeypatch.setattr(generate, "DEFAULT_MODELS", ("builtin:no-such-model", "builtin:echo"))
    events: list[ProgressEvent] = []
    run = run_audit(corpus=toys[0], axes="gender", n_pairs=10, progress=events.append, **FAST)
    assert run.model.startswith("builtin:echo")
    assert list(dict.fromkeys(e.stage for e in events)) == [
        "loading the default model",
        "gender: pairs",
        "gender: responses",
        "gender: scoring",
    ]
    assert all(sum(e.finished for e in events if e.stage == stage) == 1 for stage in {e.stage for e in events})
    responses = [e for e in events if e.stage == "gender: responses"]
    assert responses[-1].done == responses[-1].total == 20 and responses[-1].unit == "responses"


def test_the_old_progress_forms_still_work_with_a_future_warning(toys: tuple[Path, Path]) -> None:
    seen: list[tuple[str, int, int]] = []
    with pytest.warns(FutureWarning, match=r"callable\(label, n_done, n_total\) is deprecated"):
        run_audit(
            corpus=toys[0],
            axes="gender",
            n_pairs=10,
            model="builtin:echo",
            progress=lambda label, done, total: seen.append((label, done, total)),
            **FAST,
        )
    assert ("gender: responses", 20, 20) in seen
    with pytest.warns(FutureWarning, match="progress=True no longer draws"):
        run_audit(corpus=toys[0], axes="gender", n_pairs=10, model="builtin:echo", progress=True, **FAST)
    with pytest.raises(SpecError, match="progress must be None or a callable"):
        run_audit(corpus=toys[0], axes="gender", n_pairs=10, model="builtin:echo", progress="yes", **FAST)


def test_no_default_model_names_the_way_out(monkeypatch: pytest.MonkeyPatch, toys: tuple[Path, Path]) -> None:
    import fairtalk.run._generate as generate

    monkeypatch.setattr(generate, "DEFAULT_MODELS", ("builtin:no-such-model",))
    with pytest.raises(FairtalkError, match=r"no default model is available \(builtin:no-such-model: .*--model SPEC"):
        run_audit(corpus=toys[0], axes="gender")


def test_write_run_writes_each_axis_and_the_index(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    out = tmp_path / "report"
    run = run_audit(corpus=corpus, axes="gender", model="builtin:echo", out_dir=out, n_pairs=30, **FAST)
    written = write_run(run, out)
    assert sorted(p.name for p in (out / "gender").iterdir()) == [
        "pairs.jsonl",
        "pairs_check.json",
        "report.html",
        "report.md",
        "responses.jsonl",
        "results.csv",
        "results.json",
    ]
    assert json.loads((out / "gender" / "results.json").read_text())["n_pairs"] == 30
    index = written.index.read_text()
    assert 'href="gender/report.html"' in index and 'href="gender/pairs.jsonl"' in index
    assert json.loads((out / "run.json").read_text())["axes"]["gender"]["generation"]["n_generated"] == 60
    # what the audit wrote is what `fairtalk score` reads back, to the same result
    rescored = fairtalk.score(out / "gender" / "responses.jsonl", axis="gender", **FAST)
    assert rescored.to_dict()["measures"] == run.results["gender"].to_dict()["measures"]


def test_an_axis_run_keeps_its_coverage_and_check_typed_through_run_json(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    out = tmp_path / "report"
    run = run_audit(corpus=corpus, axes="gender", model="builtin:echo", out_dir=out, n_pairs=30, **FAST)
    axis = run.axes["gender"]
    assert isinstance(axis.coverage, Coverage) and isinstance(axis.pairs_check, PairsCheck)
    assert (axis.coverage.n_read, axis.coverage.n_pairs, axis.pairs_check.n_pairs) == (82, 30, 30)
    on_disk = json.loads((out / "run.json").read_text(encoding="utf-8"))["axes"]["gender"]
    assert on_disk["coverage"] == json.loads(json.dumps(axis.coverage.to_dict()))
    assert (out / "gender" / "pairs_check.json").read_text(encoding="utf-8") == axis.pairs_check.to_json()
    back = AuditRun.from_dict(json.loads(json.dumps(run.to_dict()))).axes["gender"]
    assert (back.coverage, back.pairs_check) == (axis.coverage, axis.pairs_check)
    assert json.dumps(back.to_dict()) == json.dumps(axis.to_dict())  # byte for byte


def test_runs_comparisons_and_prompt_analyses_give_frames(tmp_path) -> None:  # noqa: ANN001
    import pandas as pd

    import fairtalk
    from fairtalk.prompts import GroupPair, GroupSet

    corpus, models = write_corpus(tmp_path), write_models(tmp_path)
    run = fairtalk.audit(model=f"python:{models}:fair", corpus=f"text:{corpus}", axes=("gender",), n_resamples=20)
    frame = run.to_frame()
    assert frame.index.names == ["axis", "measure"] and ("gender", "offense_rate") in frame.index
    rows = [
        {"group": g, "template": "t", "structure": s, "seed": k, "label": (k % 3) - 1}
        for g in ("a", "b")
        for s in ("original", "x")
        for k in range(6)
    ]
    analysis = fairtalk.analyze_prompts(
        pd.DataFrame(rows), groups=GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),)), n_draws=2, n_resamples=0
    )
    table = analysis.to_frame()
    assert list(table.index) == ["all", "a", "b"] and table.loc["a", "n"] == 12  # 2 structures x 6 polar labels


def _kin(folder: Path) -> Path:
    """A lexicon file axis on the toy corpus' words, with no attribute words (so no career_words)."""
    kin = folder / "kin.tsv"
    kin.write_text("# axis: kin\n# groups: male female\nfather\tmother\nbrother\tsister\nboy\tgirl\n", encoding="utf-8")
    return kin


def test_a_margin_or_primary_key_only_one_audited_axis_has_applies_there(toys: tuple[Path, Path], tmp_path: Path) -> None:
    """Review finding: a key only gender produces (career_words) was refused when another axis was audited too."""
    corpus, models = toys
    axes = ["gender", str(_kin(tmp_path))]
    run = run_audit(
        corpus=corpus,
        axes=axes,
        model=f"python:{models}:biased",
        n_pairs=10,
        margins={"career_words": 0.05, "length": 0.5},
        primary=["career_words", "length"],
        **FAST,
    )
    gender, kin = run.axes["gender"], run.axes["kin"]
    assert gender.result.provenance.margins == {"career_words": 0.05, "length": 0.5}
    assert [m.name for m in gender.result.measures if m.primary] == ["career_words", "length"]
    assert "career_words" not in [m.name for m in kin.result.measures]
    assert kin.result.provenance.margins == {"length": 0.5} and kin.result.provenance.primary == ("length",)
    assert [m.name for m in kin.result.measures if m.primary] == ["length"]  # the named keys it has
    assert kin.result.measure("length").equivalence_margin == 0.5  # its gate as without career_words


def test_a_primary_key_set_that_leaves_an_axis_without_one_fails_naming_it(toys: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, _ = toys
    asked: list[str] = []

    def reply(context: str) -> str:
        asked.append(context)
        return "ok"

    axes = ["gender", str(_kin(tmp_path))]
    with pytest.raises(SpecError, match=r"axis 'kin' has none of the primary keys named \(career_words\)"):
        run_audit(corpus=corpus, axes=axes, model=reply, n_pairs=10, primary=["career_words"], **FAST)
    with pytest.raises(SpecError, match=r"unknown margin measure key 'carer_words'; did you mean 'career_words'"):
        run_audit(corpus=corpus, axes=axes, model=reply, n_pairs=10, margins={"carer_words": 0.1}, **FAST)
    assert asked == []
