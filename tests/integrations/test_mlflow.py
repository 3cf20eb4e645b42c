"""MLflow: ``log_audit`` and ``make_metric`` against a local file store (no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")

from tests.integrations._toys import SMALL, biased  # noqa: E402

import fairtalk  # noqa: E402
from fairtalk.errors import InputError  # noqa: E402
from fairtalk.integrations._inspect_task import pair_sides  # noqa: E402
from fairtalk.integrations.mlflow import log_audit, make_metric  # noqa: E402


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
        result = mlflow.evaluate(
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
