"""MLflow: ``log_audit`` and ``make_metric`` against a local file store (no server)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")

from tests.integrations._toys import SMALL, biased, fair, raiser, silent  # noqa: E402

import fairtalk  # noqa: E402
from fairtalk.errors import InputError, OutputError, SpecError  # noqa: E402
from fairtalk.gates import evaluate  # noqa: E402
from fairtalk.integrations._inspect_task import pair_sides  # noqa: E402
from fairtalk.integrations.mlflow import audit_params, log_audit, make_metric, metric_name  # noqa: E402


@pytest.fixture
def tracking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A file store in tmp_path (MLflow 3 keeps file stores behind MLFLOW_ALLOW_FILE_STORE)."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    yield mlflow.MlflowClient()
    mlflow.set_tracking_uri(previous)


def test_log_audit_logs_each_gap_interval_p_verdict_and_the_report(tmp_path: Path, tracking) -> None:
    run = fairtalk.audit(model=biased, **SMALL, n_resamples=200, out_dir=tmp_path / "out")
    run_id = log_audit(run)
    assert mlflow.active_run() is None  # the run log_audit started is ended
    logged = tracking.get_run(run_id).data
    offense = run.results["gender"].measure("offense_rate")
    assert logged.metrics["gender/offense_rate/gap"] == pytest.approx(offense.a - offense.b)
    assert (logged.metrics["gender/offense_rate/ci_low"], logged.metrics["gender/offense_rate/ci_high"]) == pytest.approx(
        offense.ci95
    )
    assert logged.metrics["gender/offense_rate/p"] == pytest.approx(offense.p_paired)
    assert logged.metrics["gender/offense_rate/p_adjusted"] == pytest.approx(offense.p_adjusted)
    assert logged.params["gender/offense_rate/verdict"] == "difference detected"
    assert logged.params["gender/n_pairs"] == "20" and logged.params["fairtalk/model"].startswith("python:")
    artifacts = {a.path for a in tracking.list_artifacts(run_id, "fairtalk/gender")}
    assert {"fairtalk/gender/report.md", "fairtalk/gender/results.json"} <= artifacts


def test_log_audit_of_a_folder_logs_into_the_active_run(tmp_path: Path, tracking) -> None:
    fairtalk.audit(model=biased, **SMALL, n_resamples=200, out_dir=tmp_path / "out")
    with mlflow.start_run() as active:
        assert log_audit(tmp_path / "out") == active.info.run_id
    logged = tracking.get_run(active.info.run_id).data
    assert logged.params["gender/length/verdict"] == "difference detected"
    assert "fairtalk/run.json" in {a.path for a in tracking.list_artifacts(active.info.run_id, "fairtalk")}


def test_make_metric_runs_the_paired_test_inside_mlflow_evaluate(tracking) -> None:
    pd = pytest.importorskip("pandas")
    sides = list(pair_sides("gender", n_pairs=20))
    data = pd.DataFrame(
        {
            "inputs": [s.text for s in sides],
            "pair_id": [s.pair_id for s in sides],
            "side": [s.side for s in sides],
            "outputs": [biased(s.text) for s in sides],
        }
    )
    with mlflow.start_run():
        result = mlflow.models.evaluate(
            data=data, predictions="outputs", extra_metrics=[make_metric("offense_rate")], evaluators="default"
        )
    metrics = result.metrics
    assert metrics["fairtalk_offense_rate/detected"] == 1.0
    assert metrics["fairtalk_offense_rate/gap"] == pytest.approx(-0.85)
    assert (
        metrics["fairtalk_offense_rate/ci_low"]
        < metrics["fairtalk_offense_rate/gap"]
        < metrics["fairtalk_offense_rate/ci_high"]
        < 0
    )
    assert metrics["fairtalk_offense_rate/p_adjusted"] < 0.05


@pytest.mark.parametrize("names", [("A", "B"), ("male", "female")])
def test_make_metric_refuses_sides_other_than_a_and_b_naming_them(names: tuple[str, str]) -> None:
    """Review finding: every side other than "a" was taken for "b", so ("A", "B") gave ``{'n_pairs': 0.0}`` silently."""
    sides = list(pair_sides("gender", n_pairs=5))
    metric = make_metric("offense_rate")
    renamed = [names[0] if s.side == "a" else names[1] for s in sides]
    with pytest.raises(InputError) as caught:
        metric.eval_fn([biased(s.text) for s in sides], [s.pair_id for s in sides], renamed)
    message = str(caught.value)
    assert f"the side column holds {', '.join(repr(n) for n in sorted(names))};" in message
    assert 'must be "a" or "b"' in message and "col_mapping" in message


def _rows(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "gender" / "responses.jsonl").read_text(encoding="utf-8").splitlines()]


def test_make_metric_with_the_audits_cluster_column_gives_the_audits_p_and_interval(tmp_path: Path, tracking) -> None:
    """Review finding: the metric took no cluster, so the audit's own responses gave another p and interval than results.json."""
    pd = pytest.importorskip("pandas")
    run = fairtalk.audit(model=biased, axes="gender", n_pairs=60, measures=("offense", "length"), out_dir=tmp_path / "out")
    rows = _rows(tmp_path / "out")
    assert len({r["cluster"] for r in rows}) < len(rows) // 2  # pairs share dialogues: clustering changes the test
    frame = pd.DataFrame(
        {
            "inputs": [r["context"] for r in rows],
            "pair_id": [r["pair_id"] for r in rows],
            "side": [r["side"] for r in rows],
            "cluster": [r["cluster"] for r in rows],
            "outputs": [r["response"] for r in rows],
        }
    )
    keys = ("offense_rate", "length")

    def evaluate(data, **config):  # noqa: ANN001, ANN202
        with mlflow.start_run():
            metrics = [make_metric(key, measures=("offense", "length")) for key in keys]
            return mlflow.models.evaluate(
                data=data, predictions="outputs", extra_metrics=metrics, evaluators="default", evaluator_config=config
            ).metrics

    named = evaluate(frame)
    mapped = evaluate(frame.rename(columns={"cluster": "dialogue"}), col_mapping={"cluster": "dialogue"})
    unclustered = evaluate(frame.drop(columns="cluster"))
    for key in keys:
        audited = run.results["gender"].measure(key)
        expected = [audited.p_paired, audited.p_adjusted, *audited.ci95]
        for metrics in (named, mapped):
            got = [metrics[f"fairtalk_{key}/{name}"] for name in ("p", "p_adjusted", "ci_low", "ci_high")]
            assert got == pytest.approx(expected, rel=1e-9), key
        assert unclustered[f"fairtalk_{key}/p"] != pytest.approx(audited.p_paired, rel=1e-3), key  # pairs as units


def test_make_metric_leaves_out_a_lost_side_and_counts_it_as_the_audit_does(tmp_path: Path, tracking) -> None:
    """Review finding: a lost side (``"response": null`` in responses.jsonl) was scored as the text "None": a gap of 1.18."""
    pd = pytest.importorskip("pandas")
    run = fairtalk.audit(model=raiser, axes="gender", n_pairs=60, measures=("offense", "length"), out_dir=tmp_path / "out")
    audited = run.results["gender"]
    assert audited.losses is not None and audited.losses.lost_b > 5 and audited.losses.lost_a == 0
    frame = pd.DataFrame(_rows(tmp_path / "out"))[["pair_id", "side", "cluster", "response"]]
    assert frame["response"].isna().sum() == audited.losses.lost_b
    with mlflow.start_run():
        metrics = mlflow.models.evaluate(
            data=frame, predictions="response", extra_metrics=[make_metric("length")], evaluators="default"
        ).metrics
    m = audited.measure("length")
    assert metrics["fairtalk_length/gap"] == pytest.approx(m.a - m.b) == 0
    assert metrics["fairtalk_length/detected"] == 0 and metrics["fairtalk_length/p"] == pytest.approx(m.p_paired)
    assert metrics["fairtalk_length/n_pairs"] == audited.n_pairs
    assert metrics["fairtalk_length/n_lost"] == metrics["fairtalk_length/n_lost_b"] == audited.losses.lost_b
    assert metrics["fairtalk_length/n_lost_a"] == metrics["fairtalk_length/n_lost_both"] == 0


def test_an_empty_cluster_cell_is_a_pair_of_its_own() -> None:
    sides = list(pair_sides("gender", n_pairs=6))
    metric = make_metric("offense_rate")
    texts, ids, names = [biased(s.text) for s in sides], [s.pair_id for s in sides], [s.side for s in sides]
    by_pair = metric.eval_fn(texts, ids, names, [f"pair:{i}" for i in ids]).aggregate_results
    empty = metric.eval_fn(texts, ids, names, [None, float("nan")] * (len(sides) // 2)).aggregate_results
    assert empty == by_pair == metric.eval_fn(texts, ids, names).aggregate_results


def _anti_jewish(text: str) -> str:
    """Offensive whenever the text names Jews: the second pair of religion, not the first (christian vs muslim)."""
    if any(word in text.lower().split() for word in ("jew", "jews", "jewish", "synagogue", "judaism", "torah")):
        return "shut up you stupid idiot, i hate it"
    return "that is lovely, i am so happy for you"


def test_make_metric_refuses_a_bare_multiway_axis_naming_its_pairs_and_tests_the_pair_chosen() -> None:
    """Review finding: ``make_metric(axis="religion")`` took christian vs muslim silently, so a model biased against
    Jews passed; it is refused in the words of the CLI's single-pair commands, and ``religion:A-B`` tests that pair."""
    with pytest.raises(SpecError) as caught:
        make_metric("offense_rate", axis="religion")
    said = str(caught.value)
    assert said.startswith("axis=religion has 6 groups and this metric compares two: choose a pair (religion:christian-muslim, ")
    assert "religion:christian-jewish" in said and "religion:A-B" in said and "`fairtalk audit --axis religion`" in said
    sides = list(pair_sides("religion:christian-jewish", n_pairs=20))
    metric = make_metric("offense_rate", axis="religion:christian-jewish")
    texts, ids, names = [_anti_jewish(s.text) for s in sides], [s.pair_id for s in sides], [s.side for s in sides]
    found = metric.eval_fn(texts, ids, names).aggregate_results
    assert found["detected"] == 1.0 and found["gap"] < 0  # the jewish side (b) is insulted


@pytest.mark.parametrize(
    ("key", "options", "message"),
    [
        (
            "offense",
            {},
            "no result key 'offense' from the measures offense; did you mean 'offense_rate'? (choose from: offense_rate)",
        ),
        ("nope_rate", {}, "'nope_rate' names no measure's result key (its measure would be 'nope', which is unknown)"),
        ("sentiment", {"measures": "sentiment"}, "(choose from: sentiment_negative, sentiment_positive)"),
        ("offense_rate", {"measures": ("nope",)}, "unknown measure"),
    ],
    ids=["a-measure-name", "no-such-measure", "a-measure-of-two-keys", "unknown-measures"],
)
def test_make_metric_refuses_a_key_its_measures_do_not_give_when_called(key: str, options: dict, message: str) -> None:
    """Review finding: ``make_metric("offense")`` raised KeyError, and ``"nope_rate"`` a SpecError, only inside mlflow.evaluate."""
    with pytest.raises(SpecError) as caught:
        make_metric(key, **options)
    assert message in str(caught.value)
    if key == "nope_rate":
        assert "offense_rate" in caught.value.choices and "length" in caught.value.choices


def test_log_audit_takes_an_axis_results_json_and_names_what_it_cannot_log(tmp_path: Path, tracking) -> None:
    """Review finding: an axis' results.json "holds no audit"; a prompts analysis said "field 'axis' is missing"; None an AttributeError."""
    run = fairtalk.audit(model=biased, **SMALL, n_resamples=200, out_dir=tmp_path / "out")
    run_id = log_audit(tmp_path / "out" / "gender" / "results.json")
    logged = tracking.get_run(run_id)
    offense = run.results["gender"].measure("offense_rate")
    assert logged.data.metrics["gender/offense_rate/p"] == pytest.approx(offense.p_paired)
    assert "fairtalk/report.md" in {a.path for a in tracking.list_artifacts(run_id, "fairtalk")}
    assert log_audit(tmp_path / "out" / "run.json") and "fairtalk/model" in tracking.get_run(log_audit(run)).data.params
    with pytest.raises(TypeError, match="log_audit: audit must be an AuditRun, an AuditResult or the path .* got NoneType"):
        log_audit(None)
    with pytest.raises(InputError, match="nope: no such file or folder"):
        log_audit(tmp_path / "nope")
    with pytest.raises(InputError, match="holds no audit .*: give the output folder .*, its run.json, or an axis' results.json"):
        log_audit(tmp_path)


def test_log_audit_of_a_prompts_analysis_names_the_mix_up(tmp_path: Path) -> None:
    from fairtalk.prompts import GroupPair, GroupSet, analyze
    from fairtalk.report import write_prompts_report

    pd = pytest.importorskip("pandas")
    rows = [
        {"group": g, "template": f"t{t}", "seed": 0, "structure": "original", "label": (t + i) % 3 - 1}
        for t in range(6)
        for i, g in enumerate(("man", "woman"))
    ]
    groups = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
    write_prompts_report(analyze(pd.DataFrame(rows), groups=groups, n_draws=1, n_resamples=20), tmp_path / "analysis")
    for given in (tmp_path / "analysis", tmp_path / "analysis" / "results.json"):
        with pytest.raises(InputError, match=r"analysis(/results.json)?: a `fairtalk prompts analyze` output, not an audit"):
            log_audit(given)


def test_log_audit_of_a_comparison_names_the_mix_up(tmp_path: Path) -> None:
    """Review finding: ``log_audit("cmp1")`` (a ``fairtalk compare -o`` folder) said "field 'axis' is missing"."""
    from fairtalk.pipeline import compare_runs
    from fairtalk.report import write_model_comparison

    for name, model in (("fair", fair), ("biased", biased)):
        fairtalk.audit(model=model, **SMALL, n_resamples=50, out_dir=tmp_path / name)
    write_model_comparison(compare_runs(tmp_path / "fair", tmp_path / "biased"), tmp_path / "cmp")
    for given in (tmp_path / "cmp", tmp_path / "cmp" / "results.json"):
        with pytest.raises(InputError, match=r"cmp(/results.json)?: a `fairtalk compare` output, not an audit: log_audit logs"):
            log_audit(given)


def test_log_audit_logs_the_empty_and_lost_answers_and_each_gates_decision(tmp_path: Path, tracking) -> None:
    """Review finding: log_audit logged no lost or empty answers and no gate outcome: a bot answering "" to women passed."""
    run = fairtalk.audit(model=silent, **SMALL, n_resamples=200)
    empties = run.results["gender"].empties
    assert empties is not None and empties.lost_b > 5
    logged = tracking.get_run(log_audit(run)).data
    assert logged.metrics["gender/n_empty_b"] == empties.lost_b and logged.metrics["gender/n_empty_a"] == 0
    assert logged.metrics["gender/n_lost_a"] == logged.metrics["gender/n_lost_b"] == 0
    assert logged.params["gender/empty_answers"] == empties.describe() and "gender/lost_answers" not in logged.params
    outcome = evaluate(run, "fail-on-bias")
    assert not outcome.passed and logged.metrics["fairtalk/fail-on-bias/passed"] == 0
    assert logged.params["fairtalk/fail-on-bias"] == outcome.headline and "empty answers on" in outcome.headline
    assert logged.metrics["gender/empty_answers/fails_fail-on-bias"] == 1
    assert logged.metrics["gender/lost_answers/fails_fail-on-bias"] == 0
    assert "fairtalk/fail-unless-equivalent/passed" in logged.metrics


def _renamed(axis: str) -> fairtalk.Lexicon:
    return dataclasses.replace(fairtalk.load_lexicon("gender"), axis=axis)


def test_an_axis_name_mlflow_refuses_is_logged_under_a_name_it_takes(tmp_path: Path, tracking) -> None:
    """Review finding: an audit of the axis ``gen&der`` (a lexicon's ``# axis:``) made log_audit raise a raw
    MlflowException part-way, leaving a finished run that held only ``fairtalk/fail-on-bias/passed`` 1."""
    run = fairtalk.audit(model=biased, **{**SMALL, "axes": [_renamed("gen&der")]}, n_resamples=200, out_dir=tmp_path / "out")
    run_id = log_audit(tmp_path / "out")
    logged = tracking.get_run(run_id)
    assert logged.info.status == "FINISHED"
    offense = run.results["gen&der"].measure("offense_rate")
    assert logged.data.metrics["gen_der/offense_rate/gap"] == pytest.approx(offense.a - offense.b)
    assert logged.data.params["gen_der/offense_rate/verdict"] == "difference detected"
    assert logged.data.metrics["gen_der/empty_answers/fails_fail-on-bias"] == 0
    assert metric_name("religion:christian-jewish", "a/b", "..") == "religion:christian-jewish/a_b/__"
    with pytest.raises(SpecError, match="'gen&der/n_pairs' and 'gen_der/n_pairs' would both be logged as 'gen_der/n_pairs'"):
        audit_params(dataclasses.replace(run, axes={**run.axes, "gen_der": run.axes["gen&der"]}))


def test_a_run_log_audit_started_ends_failed_when_mlflow_refuses_and_holds_no_gate_decision(tracking) -> None:
    """A name longer than MLflow's 250 characters is refused: the run log_audit started is FAILED, not FINISHED."""
    run = fairtalk.audit(model=fair, **{**SMALL, "axes": [_renamed("g" * 240)]}, n_resamples=200)
    with pytest.raises(OutputError, match=r"log_audit: MLflow did not take the audit \(MlflowException: .*\); the run (\w+) "):
        log_audit(run)
    assert mlflow.active_run() is None
    (failed,) = tracking.search_runs([mlflow.get_experiment_by_name("Default").experiment_id])
    assert failed.info.status == "FAILED"
    assert not any(key.startswith("fairtalk/") for key in failed.data.metrics), failed.data.metrics
    with mlflow.start_run() as active:  # a run of the caller's: left running, said to hold part of the audit
        with pytest.raises(OutputError, match=f"the run {active.info.run_id} holds part of it"):
            log_audit(run)
        assert mlflow.active_run() is not None


def test_under_wilcoxon_the_median_shift_its_interval_is_of_is_logged_beside_it(tmp_path: Path, tracking) -> None:
    """Review finding: under ``count_test="wilcoxon"`` ``ci_low``/``ci_high`` (Hodges-Lehmann) sat beside the mean ``gap`` alone."""
    run = fairtalk.audit(model=biased, **SMALL, n_resamples=200, count_test="wilcoxon", out_dir=tmp_path / "out")
    logged = tracking.get_run(log_audit(run)).data.metrics
    length = run.results["gender"].measure("length")
    assert length.estimate_name == "hodges-lehmann" and length.estimate is not None
    assert logged["gender/length/median_shift"] == pytest.approx(length.estimate)
    assert logged["gender/length/gap"] == pytest.approx(length.a - length.b)
    assert "gender/offense_rate/median_shift" not in logged  # a rate's interval is of its gap


def test_log_audit_of_an_audit_with_a_baseline_model_logs_the_fail_if_worse_gate(tmp_path: Path, tracking) -> None:
    """Review finding: ``audit --baseline-model ... --fail-if-worse -o o1`` then ``log_audit("o1")`` logged fail-on-bias and
    fail-unless-equivalent only, not the gate that decided the exit code."""
    from tests.integrations._toys import BOTS
    from typer.testing import CliRunner

    from fairtalk.cli import app

    (tmp_path / "bots.py").write_text(BOTS, encoding="utf-8")
    args = ["--axis", "gender", "--pairs", "20", "--measures", "offense,length", "--resamples", "100"]
    bots = f"python:{tmp_path / 'bots.py'}"
    done = CliRunner().invoke(
        app,
        [
            "audit",
            "--model",
            f"{bots}:biased",
            "--baseline-model",
            f"{bots}:fair",
            "--fail-if-worse",
            *args,
            "-o",
            str(tmp_path / "o1"),
        ],
    )
    assert done.exit_code == 1, done.output
    comparison = fairtalk.ModelComparison.read_json(tmp_path / "o1" / "comparison" / "results.json")
    outcome = evaluate(comparison, "fail-if-worse")
    assert not outcome.passed
    for given in (tmp_path / "o1", tmp_path / "o1" / "run.json"):
        logged = tracking.get_run(log_audit(given)).data
        assert logged.metrics["fairtalk/fail-if-worse/passed"] == 0
        assert logged.params["fairtalk/fail-if-worse"] == outcome.headline
    # an audit without a baseline logs no such gate
    fairtalk.audit(model=fair, **SMALL, n_resamples=50, out_dir=tmp_path / "plain")
    assert "fairtalk/fail-if-worse/passed" not in tracking.get_run(log_audit(tmp_path / "plain")).data.metrics


def _audit_with_labels(tmp_path: Path, *, side_a_offensive: bool) -> fairtalk.AuditRun:
    """An audit of a bot answering everyone alike, with a gold file labelling side a offensive (or no side)."""
    fairtalk.audit(model=fair, **SMALL, n_resamples=100, out_dir=tmp_path / "first")
    answers = fairtalk.read_responses(tmp_path / "first" / "gender" / "responses.jsonl")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "".join(
            json.dumps({"pair_id": r.pair_id, "side": r.side, "offense_rate": int(side_a_offensive and r.side == "a")}) + "\n"
            for r in answers.a + answers.b
        ),
        encoding="utf-8",
    )
    return fairtalk.audit(model=fair, **SMALL, n_resamples=100, gold=str(gold), out_dir=tmp_path / "out")


def test_log_audit_logs_the_labelled_gap_the_gate_read_and_each_keys_decision_as_the_gate_made_it(
    tmp_path: Path, tracking
) -> None:
    """Review finding: with ``audit --gold`` the labels failed fail-on-bias on offense_rate (a difference the scorer
    missed), yet MLflow showed only the scorer's gap 0, its interval and verdict, beside a gate passed 0 that no logged
    figure explained."""
    run = _audit_with_labels(tmp_path, side_a_offensive=True)
    offense = run.results["gender"].measure("offense_rate")
    assert offense.ppi is not None and not offense.detected()  # the scorer alone finds no difference
    bias = evaluate(run, "fail-on-bias")
    decision = bias.decision("gender", "offense_rate")
    assert not bias.passed and decision is not None and decision.on == "labels"
    logged = tracking.get_run(log_audit(tmp_path / "out")).data
    metrics = logged.metrics
    assert metrics["gender/offense_rate/gap"] == 0  # the scorer's figures stay, under their names
    assert (metrics["gender/offense_rate/ci_low"], metrics["gender/offense_rate/ci_high"]) == pytest.approx(offense.ci95)
    assert metrics["gender/offense_rate/gap.labelled"] == pytest.approx(offense.ppi.estimate) == pytest.approx(1.0)
    low, high = metrics["gender/offense_rate/ci_low.labelled"], metrics["gender/offense_rate/ci_high.labelled"]
    assert (low, high) == pytest.approx(offense.ppi.ci95) and low > 0  # the interval excludes 0: what failed the key
    assert metrics["gender/offense_rate/p.labelled"] == pytest.approx(offense.ppi.p)
    assert metrics["gender/offense_rate/n_labels"] == offense.ppi.n_labels == 20
    assert metrics["gender/offense_rate/labels_alone"] == (1.0 if offense.ppi.labels_alone else 0.0)
    assert metrics["fairtalk/fail-on-bias/passed"] == 0 and metrics["gender/offense_rate/fails_fail-on-bias"] == 1
    length = bias.decision("gender", "length")
    assert length is not None and metrics["gender/length/fails_fail-on-bias"] == (0 if length.passed else 1)
    equivalence = evaluate(run, "fail-unless-equivalent")
    assert metrics["fairtalk/fail-unless-equivalent/passed"] == (1 if equivalence.passed else 0)
    for d in equivalence.decisions:
        assert metrics[f"gender/{d.key}/fails_fail-unless-equivalent"] == (0 if d.passed else 1)
    params = logged.params
    assert params["gender/offense_rate/verdict"] == offense.verdict.value  # the scorer's verdict, as before
    assert params["gender/offense_rate/fail-on-bias"] == decision.reason[:500]
    assert params["gender/offense_rate/fail-on-bias"].startswith("the labels show a difference the scorer missed")
    assert "gender/length/gap.labelled" not in metrics and "gender/length/n_labels" not in metrics  # length: no labels


def test_log_audit_of_labels_that_agree_logs_them_and_the_gates_pass(tmp_path: Path, tracking) -> None:
    run = _audit_with_labels(tmp_path, side_a_offensive=False)
    offense = run.results["gender"].measure("offense_rate")
    assert offense.ppi is not None
    metrics = tracking.get_run(log_audit(run)).data.metrics
    assert metrics["gender/offense_rate/gap.labelled"] == 0 == metrics["gender/offense_rate/gap"]
    assert metrics["gender/offense_rate/fails_fail-on-bias"] == 0
    assert metrics["fairtalk/fail-on-bias/passed"] == (1 if evaluate(run, "fail-on-bias").passed else 0)
