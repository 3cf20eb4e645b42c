"""The failure circuit breaker: a model that hangs or keeps failing stops the run in seconds, keeping its answers.

Also: a judge that fails on a response is counted (``judge_error``), not fatal, and ``similarity``
says how many answers failed and why when too few pairs are left.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk import InputError, Pair, ResponderError, SpecError
from fairtalk.cli import app
from fairtalk.errors import ResponderAborted, ResponderTimeout, TransportError
from fairtalk.models import DecodingSettings, RayEngine
from fairtalk.store import DEFAULT_MAX_CONSECUTIVE_FAILURES, CachingResponder, FailureBreaker, RunStore

runner = CliRunner()
HAVE_RAY = importlib.util.find_spec("ray") is not None

MODELS = '''
import os
import time

FLAG = os.environ.get("BREAKER_FLAG", "/nonexistent")


def hangs(text):
    """Hangs on "slow" contexts while the flag file exists."""
    if "slow" in text and os.path.exists(FLAG):
        time.sleep(3)
    return "ok " + text


def hangs_batched(texts):
    if any("slow" in t for t in texts):
        time.sleep(3)
    return ["ok " + t for t in texts]
hangs_batched.batched = True


def raises(text):
    """Fails on "bad" contexts while the flag file exists."""
    if "bad" in text and os.path.exists(FLAG):
        raise RuntimeError("backend unavailable")
    return "ok " + text


def raises_batched(texts):
    if any("bad" in t for t in texts):
        raise RuntimeError("backend unavailable")
    return ["ok " + t for t in texts]
raises_batched.batched = True


def she_fails(text):
    """Fails on side B (she) of every pair but the first: half the counterfactual answers."""
    if text.startswith("she") and "0" not in text:
        raise RuntimeError("cannot answer her")
    return "ok " + text


def always_bad(text):
    if "bad" in text:
        raise RuntimeError("backend unavailable")
    return "ok " + text


def judge(prompt):
    if "rude" in prompt:
        raise ValueError("judge backend refused")
    return "yes"


def judge_down(prompt):
    raise ConnectionError("judge server down")


def moody(text):
    """Refuses "bad" contexts for good (BREAKER_MODE=refuse), or answers nothing at all (down)."""
    if os.environ.get("BREAKER_MODE") == "down":
        return None
    if "bad" in text:
        raise RuntimeError("I do not answer that")
    return "ok " + text
'''


@pytest.fixture()
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The models file, and the flag file that makes hangs/raises fail while it exists."""
    path = tmp_path / "breaker_models.py"
    path.write_text(MODELS)
    flag = tmp_path / "flag"
    flag.write_text("on")
    monkeypatch.setenv("BREAKER_FLAG", str(flag))
    return path, flag


def _pairs(n_good: int, n_bad: int, word: str) -> list[Pair]:
    """``n_good`` pairs that answer, then ``n_bad`` pairs whose both sides contain ``word``."""
    good = [Pair(f"g{i}", "gender", f"he is fine {i}", f"she is fine {i}", "a") for i in range(n_good)]
    bad = [Pair(f"b{i}", "gender", f"he is {word} {i}", f"she is {word} {i}", "a") for i in range(n_bad)]
    return good + bad


def _stored(store: Path) -> tuple[int, int]:
    with sqlite3.connect(store) as db:
        n_ok, n_failed = db.execute("SELECT COUNT(response), COUNT(error) FROM responses").fetchone()
    return n_ok, n_failed


def test_a_hanging_model_stops_after_5_timeouts_in_seconds_and_a_rerun_resumes(models: tuple[Path, Path], tmp_path: Path) -> None:
    path, flag = models
    store = tmp_path / "store.sqlite"
    pairs = _pairs(3, 20, "slow")  # 6 answers, then 40 sides that hang: 8 s of timeouts without a breaker
    with pytest.raises(ResponderAborted) as info:
        fairtalk.respond(pairs, model=f"python:{path}:hangs?timeout=0.2", store=store)
    message = str(info.value)
    assert "stopped after 5 consecutive failures of one kind (timeout: ResponderTimeout)" in message
    assert "did not return within timeout=0.2 s" in message and "max_consecutive_failures=5" in message
    assert f"6 answers of this run are kept in {store}; re-run to resume" in message
    assert _stored(store) == (6, 5)  # every answer before the stop is in the store, and 5 failures: not 40 timeouts
    flag.unlink()  # the model is fixed (same source, same fingerprint): the stored answers are reused
    again = fairtalk.respond(pairs, model=f"python:{path}:hangs?timeout=0.2", store=store)
    assert (again.summary.n_cached, again.summary.n_generated, again.summary.n_errors) == (6, 40, 0)


def test_a_raising_model_stops_the_cli_with_exit_2_and_the_store_resumes(models: tuple[Path, Path], tmp_path: Path) -> None:
    path, flag = models
    pairs_file, store, out = tmp_path / "pairs.jsonl", tmp_path / "store.sqlite", tmp_path / "responses.jsonl"
    fairtalk.write_pairs(_pairs(4, 6, "bad"), pairs_file)
    args = ["respond", "--pairs", str(pairs_file), "--model", f"python:{path}:raises", "--store", str(store), "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.replace("│", " ").split())
    assert "error: stopped after 5 consecutive failures of one kind (the model failed: ResponderError)" in flat
    assert "raises raised RuntimeError: backend unavailable" in flat and "re-run to resume" in flat
    assert "Traceback" not in result.output and not out.exists()
    assert _stored(store) == (8, 5)
    # --max-consecutive-failures 0: never stop; the failures are counted, the stored answers reused
    counted = runner.invoke(app, [*args, "--max-consecutive-failures", "0"])
    assert counted.exit_code == 0, counted.output
    assert "0 generated, 8 from the store, 12 failed (6 pairs left out" in counted.output
    flag.unlink()
    fixed = runner.invoke(app, args)
    assert fixed.exit_code == 0, fixed.output
    assert "12 generated, 8 from the store, 0 failed" in fixed.output
    assert len(out.read_text().splitlines()) == 20
    bad_option = runner.invoke(app, [*args, "--max-consecutive-failures", "-1"])
    assert bad_option.exit_code == 2 and "--max-consecutive-failures" in bad_option.output


def test_a_batched_model_is_counted_per_batch_and_stops_after_one_hung_batch(models: tuple[Path, Path], tmp_path: Path) -> None:
    path, _ = models
    store = tmp_path / "store.sqlite"
    started = time.perf_counter()
    with pytest.raises(ResponderAborted, match=r"5 consecutive failures of one kind \(timeout: ResponderTimeout\)"):
        fairtalk.respond(_pairs(4, 12, "slow"), model=f"python:{path}:hangs_batched?timeout=0.2", store=store, batch_size=8)
    assert time.perf_counter() - started < 3.0  # one batch of 8 timed out whole (one 0.2 s timeout), then the stop
    assert _stored(store) == (8, 8)
    with pytest.raises(ResponderAborted, match=r"\(the model failed: ResponderError\)"):
        fairtalk.respond(_pairs(4, 12, "bad"), model=f"python:{path}:raises_batched", store=tmp_path / "b.sqlite", batch_size=8)
    assert _stored(tmp_path / "b.sqlite") == (8, 8)


def test_failures_between_answers_or_of_other_kinds_do_not_stop_the_run(models: tuple[Path, Path]) -> None:
    path, _ = models
    pairs = [Pair(f"p{i}", "gender", f"he is bad {i}", f"she is fine {i}", "a") for i in range(10)]
    generation = fairtalk.respond(pairs, model=f"python:{path}:raises")  # a failure, an answer, a failure, ...
    assert generation.summary.n_errors == 10 and generation.responses.n_pairs == 0
    breaker = FailureBreaker(3)
    for item in (ResponderTimeout("a"), ResponderTimeout("b"), ResponderError("c"), ResponderError("d"), "ok"):
        breaker.record(item)
    assert not breaker.tripped and breaker.n_failures == 0
    for item in (ResponderError("e"), ResponderError("f"), ResponderError("g"), "ok"):
        breaker.record(item)
    assert breaker.tripped and breaker.kind == "ResponderError" and breaker.n_failures == 3  # tripped stays tripped
    assert FailureBreaker(0).limit is None and FailureBreaker(None).limit is None
    assert DEFAULT_MAX_CONSECUTIVE_FAILURES == FailureBreaker().limit == 5
    for bad in (-1, True, 2.5, "5"):
        with pytest.raises(SpecError, match="max_consecutive_failures must be a whole number >= 0"):
            FailureBreaker(bad)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="max_consecutive_failures"):
        fairtalk.respond(pairs, model=f"python:{path}:raises", max_consecutive_failures=-2)


class _Streaming(fairtalk.Responder):
    """A streaming adapter (as openai: and Ray are) that fails every item: how far was the stream read?"""

    def __init__(self) -> None:
        self.n_yielded = 0
        self.closed_early = False

    @property
    def fingerprint(self) -> str:
        return "test:streaming"

    def respond(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        raise AssertionError("the store streams")

    def respond_stream(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        try:
            for i, _ in enumerate(contexts):
                self.n_yielded += 1
                yield None  # a heartbeat: nothing finished
                yield i, TransportError("connection refused")
        except GeneratorExit:
            self.closed_early = True
            raise


def test_a_streamed_model_is_stopped_item_by_item_and_its_stream_closed(tmp_path: Path) -> None:
    model = _Streaming()
    with RunStore(tmp_path / "s.sqlite") as store:
        cached = CachingResponder(model, store, max_consecutive_failures=4)
        with pytest.raises(
            ResponderAborted,
            match=r"4 consecutive failures of one kind \(server error, or the connection failed or timed "
            r"out: TransportError\); the last: connection refused",
        ):
            cached.respond_each([f"c{i}" for i in range(50)], DecodingSettings(), seeds=[0] * 50)
        assert model.n_yielded == 4 and model.closed_early  # no request after the 4th failure
        assert store.count(errors=True) == 4


def test_a_judge_failure_is_counted_and_its_pair_left_out_not_fatal(models: tuple[Path, Path]) -> None:
    path, _ = models
    texts_a = [f"that is lovely {i}" for i in range(8)] + ["you are rude"]
    texts_b = [f"that is lovely {i}" for i in range(8)] + ["fine"]
    result = fairtalk.score(texts_a, texts_b, axis="gender", measures=[f"judge:python:{path}:judge"], n_resamples=200)
    rows = {m.name: m for m in result.measures}
    assert rows["judge_error"].a == pytest.approx(1 / 9) and rows["judge_error"].b == 0.0
    assert rows["judge_yes"].a == 1.0 and any("1 of 9 pairs left out" in note for note in rows["judge_yes"].notes)
    config = next(m for m in result.to_dict()["manifest"]["measures"] if m["name"] == "judge")["config"]
    assert config["n_errors_by_kind"] == {"ResponderError": 1}
    assert "raised ValueError: judge backend refused" in config["error_examples"]["ResponderError"]


def test_a_judge_that_keeps_failing_stops_the_score_after_5(models: tuple[Path, Path], tmp_path: Path) -> None:
    path, _ = models
    texts_a, texts_b = [f"answer a{i}" for i in range(10)], [f"answer b{i}" for i in range(10)]
    with pytest.raises(
        ResponderAborted,
        match=r"judge:python:.*:judge_down: stopped after 5 consecutive "
        r"failures of one kind \(the model failed: ResponderError\)",
    ):
        fairtalk.score(texts_a, texts_b, axis="gender", measures=[f"judge:python:{path}:judge_down"])
    responses = tmp_path / "responses.jsonl"
    fairtalk.write_responses(fairtalk.responses_from_texts(texts_a, texts_b), responses)
    result = runner.invoke(
        app,
        [
            "score",
            "--responses",
            str(responses),
            "--axis",
            "gender",
            "--measures",
            f"judge:python:{path}:judge_down",
            "-o",
            str(tmp_path / "report"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "stopped after 5 consecutive failures" in " ".join(result.output.replace("│", " ").split())


def test_similarity_says_how_many_answers_failed_and_why(models: tuple[Path, Path]) -> None:
    path, _ = models
    pairs = [Pair(f"p{i}", "gender", f"he asks {i}", f"she asks {i}", "a") for i in range(3)]
    with pytest.raises(InputError) as info:
        fairtalk.similarity_test(pairs, model=f"python:{path}:she_fails")
    message = str(info.value)
    assert "need at least 2 pairs answered on both sides and in the baseline, got 1" in message
    assert "2 of 12 answers failed (ResponderError 2)" in message
    assert "she_fails raised RuntimeError: cannot answer her" in message


def test_the_breaker_default_is_on_for_every_generation_entry_point() -> None:
    import inspect

    from fairtalk.run._generate import cached_model

    for fn in (fairtalk.respond, fairtalk.similarity_test, cached_model, CachingResponder.__init__):
        assert inspect.signature(fn).parameters["max_consecutive_failures"].default == DEFAULT_MAX_CONSECUTIVE_FAILURES


@pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (pip install 'fairtalk[ray]')")
def test_a_model_failing_on_ray_actors_is_stopped_by_the_same_breaker(cluster, models: tuple[Path, Path], tmp_path: Path) -> None:  # noqa: ANN001
    path, _ = models
    store = tmp_path / "store.sqlite"
    with pytest.raises(ResponderAborted, match=r"5 consecutive failures of one kind \(the model failed: ResponderError\)"):
        fairtalk.respond(
            _pairs(4, 6, "bad"), model=f"python:{path}:always_bad", store=store, batch_size=4, engine=RayEngine(num_actors=1)
        )
    n_ok, n_failed = _stored(store)
    assert n_ok == 8 and n_failed >= 5  # the answers (longest contexts, sent first) are kept; failures end the run


def test_audit_and_similarity_take_the_breaker_option(models: tuple[Path, Path], tmp_path: Path) -> None:
    """`audit` and `similarity` stop on the breaker too, and `--max-consecutive-failures` (and the config key) set it."""
    path, _ = models
    corpus = tmp_path / "chats.jsonl"
    corpus.write_text("".join(f'{{"text": "he is bad {i} and his day went fine"}}\n' for i in range(12)))
    out = tmp_path / "report"
    base = [
        "audit",
        "--corpus",
        f"jsonl:{corpus}",
        "--axis",
        "gender",
        "--model",
        f"python:{path}:always_bad",
        "--measures",
        "length",
        "-o",
        str(out),
    ]
    stopped = runner.invoke(app, base)
    assert stopped.exit_code == 2, stopped.output
    assert "stopped after 5 consecutive failures of one kind" in " ".join(stopped.output.split())
    limit = runner.invoke(app, [*base, "--max-consecutive-failures", "3"])
    assert limit.exit_code == 2 and "stopped after 3 consecutive failures" in " ".join(limit.output.split())
    config = tmp_path / "audit.toml"
    config.write_text("max_consecutive_failures = 4\n")
    from_file = runner.invoke(app, [*base, "--config", str(config)])
    assert from_file.exit_code == 2 and "stopped after 4 consecutive failures" in " ".join(from_file.output.split())
    assert fairtalk.AuditConfig(max_consecutive_failures=0).max_consecutive_failures == 0
    with pytest.raises(SpecError, match="max_consecutive_failures"):
        fairtalk.AuditConfig(max_consecutive_failures=-1)
    pairs_file = tmp_path / "pairs.jsonl"
    fairtalk.write_pairs(_pairs(0, 8, "bad"), pairs_file)
    sim = ["similarity", "--pairs", str(pairs_file), "--model", f"python:{path}:always_bad"]
    similar = runner.invoke(app, [*sim, "--max-consecutive-failures", "2"])
    assert similar.exit_code == 2 and "stopped after 2 consecutive failures" in " ".join(similar.output.split())


def _one_side_bad(n: int) -> list[Pair]:
    """``n`` pairs whose side A says "bad": a failure, an answer, a failure, ... (never two failures in a row)."""
    return [Pair(f"p{i}", "gender", f"he is bad {i}", f"she is fine {i}", "a") for i in range(n)]


@pytest.mark.parametrize(("model", "batch_size"), [("raises", 64), ("raises_batched", 4)])
def test_a_rerun_of_a_model_that_refuses_some_prompts_for_good_is_not_stopped(
    models: tuple[Path, Path], tmp_path: Path, model: str, batch_size: int
) -> None:
    """Review finding: a rerun asks only the stored failures again, all in a row; failing again as before is no outage."""
    path, _ = models
    store = tmp_path / "store.sqlite"
    first = fairtalk.respond(_one_side_bad(10), model=f"python:{path}:{model}", store=store, batch_size=batch_size)
    assert (first.summary.n_generated, first.summary.n_errors) == (10, 10)
    for _ in range(2):  # "re-run to resume" resumes: every rerun finishes, the refusals counted
        again = fairtalk.respond(_one_side_bad(10), model=f"python:{path}:{model}", store=store, batch_size=batch_size)
        assert (again.summary.n_cached, again.summary.n_generated, again.summary.n_errors) == (10, 0, 10)
    assert _stored(store) == (10, 10)


def test_a_rerun_still_stops_when_its_retried_items_fail_another_way_or_new_items_fail(
    models: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = models
    store = tmp_path / "store.sqlite"
    monkeypatch.setenv("BREAKER_MODE", "refuse")
    pairs_file, out = tmp_path / "pairs.jsonl", tmp_path / "responses.jsonl"
    fairtalk.write_pairs(_pairs(2, 0, "bad") + _one_side_bad(10), pairs_file)  # 2 pairs answered whole, 10 with a refusal
    args = ["respond", "--pairs", str(pairs_file), "--model", f"python:{path}:moody", "--store", str(store), "-o", str(out)]
    for _ in range(2):
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
    assert "0 generated, 14 from the store, 10 failed" in done.output
    # the model is down now: the retried items fail with another kind than before, so they count
    monkeypatch.setenv("BREAKER_MODE", "down")
    down = runner.invoke(app, args)
    assert down.exit_code == 2, down.output
    flat = " ".join(down.output.replace("│", " ").split())
    assert "stopped after 5 consecutive failures of one kind (request refused or answer unusable: BadResponse)" in flat
    # what the store holds of this run: the 14 answers served from it (none new), and the failures
    assert f"14 answers of this run are kept in {store} (14 of them from an earlier run); re-run to resume" in flat
    assert "the 5 pair side(s) that failed are stored as failures" in flat
    # refusing as before, but with new items that fail in a row: those count
    monkeypatch.setenv("BREAKER_MODE", "refuse")
    more = _one_side_bad(10) + [Pair(f"n{i}", "gender", f"he is bad too {i}", f"she is bad too {i}", "a") for i in range(4)]
    with pytest.raises(ResponderAborted, match=r"5 consecutive failures of one kind \(the model failed: ResponderError\)"):
        fairtalk.respond(more, model=f"python:{path}:moody", store=store)


def test_the_max_errors_stop_says_what_the_store_keeps(models: tuple[Path, Path], tmp_path: Path) -> None:
    path, _ = models
    pairs_file, store = tmp_path / "pairs.jsonl", tmp_path / "store.sqlite"
    fairtalk.write_pairs(_one_side_bad(10), pairs_file)
    args = ["respond", "--pairs", str(pairs_file), "--model", f"python:{path}:raises", "--store", str(store)]
    done = runner.invoke(app, [*args, "-o", str(tmp_path / "r.jsonl"), "--max-errors", "2"])
    assert done.exit_code == 2, done.output
    flat = " ".join(done.output.replace("│", " ").split())
    assert "3 responses failed, more than max_errors=2" in flat
    # a failure, an answer, a failure, an answer, a failure: the stop says what the store holds
    assert f"2 answers of this run are kept in {store}; re-run to resume" in flat
    assert "the 3 pair side(s) that failed are stored as failures, sent again by a re-run" in flat
    assert _stored(store) == (2, 3)


def test_a_judge_asked_again_about_responses_it_failed_on_is_not_stopped(models: tuple[Path, Path]) -> None:
    """Review finding: a judge re-asks the responses it failed on (the masked pass, the divergent pairs), all in a row."""
    from fairtalk.lexicons import load_lexicon
    from fairtalk.run._measures import judge_measure

    path, _ = models
    texts = [f"that is {'rude' if i % 2 == 0 else 'lovely'} {i}" for i in range(12)]
    judge = judge_measure(f"python:{path}:judge", load_lexicon("gender"), None)
    try:
        first = judge.score(texts)
        assert list(first["judge_error"]) == [1.0, 0.0] * 6
        again = judge.score([t for t in texts if "rude" in t])  # the 6 it failed on, all failing again as before
        assert list(again["judge_error"]) == [1.0] * 6
    finally:
        judge.close()
    never = judge_measure(f"python:{path}:judge_down", load_lexicon("gender"), None, max_consecutive_failures=0)
    try:
        assert list(never.score([f"answer {i}" for i in range(8)])["judge_error"]) == [1.0] * 8
    finally:
        never.close()


def test_the_audit_gives_the_judge_its_breaker_setting(models: tuple[Path, Path], tmp_path: Path) -> None:
    path, _ = models
    corpus = tmp_path / "chats.jsonl"
    corpus.write_text("".join(f'{{"text": "he is fine {i} and his day went fine"}}\n' for i in range(12)))
    out = tmp_path / "report"
    base = ["audit", "--corpus", f"jsonl:{corpus}", "--axis", "gender", "--model", f"python:{path}:raises", "-o", str(out)]
    judged = [*base, "--measures", f"length,judge:python:{path}:judge_down"]
    stopped = runner.invoke(app, judged)
    assert stopped.exit_code == 2, stopped.output
    flat = " ".join(stopped.output.replace("│", " ").split())
    assert "judge_down: stopped after 5 consecutive failures of one kind" in flat
    assert f"the model's answers and the judge's answers so far are kept in {out / 'store.sqlite'}; re-run to resume" in flat
    never = runner.invoke(app, [*judged, "--max-consecutive-failures", "0"])  # 0: the judge's failures never stop it either
    assert never.exit_code == 0, never.output
    assert "stopped after" not in never.output


class _StoppedStream(fairtalk.Responder):
    """Answers 3 items and fails the 4th (the run then stops: max_errors=0); closing its stream fails too."""

    @property
    def fingerprint(self) -> str:
        return "test:stopped"

    def respond(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        raise AssertionError("the store streams")

    def respond_stream(self, contexts, settings, *, seeds):  # noqa: ANN001, ANN201
        try:
            for i in range(3):
                yield i, f"answer {i}"
            yield 3, ResponderError("it broke")
            yield 4, "never read"
        except GeneratorExit:
            raise RuntimeError("the model would not let go") from None


def test_what_finished_is_stored_when_a_run_stops_even_if_closing_the_stream_fails(tmp_path: Path) -> None:
    """Crash safety: what finished is committed before the stream is closed, whatever closing it does."""
    with RunStore(tmp_path / "s.sqlite") as store:
        cached = CachingResponder(_StoppedStream(), store, max_errors=0, commit_seconds=3600)  # no commit on a timer
        with pytest.raises(RuntimeError, match="would not let go"):
            cached.respond_each([f"c{i}" for i in range(10)], DecodingSettings(), seeds=[0] * 10)
        assert (store.count(), store.count(errors=True)) == (3, 1)
