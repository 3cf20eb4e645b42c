"""fairtalk in MLflow: :func:`log_audit` logs an audit to a run, :func:`make_metric` tests gaps inside ``mlflow.evaluate``.

``pip install 'fairtalk[mlflow]'`` (``mlflow-skinny`` is enough). This module imports mlflow only
when a function is called, and raises a FairtalkError naming the extra when it is missing.

- :func:`log_audit` logs, per axis and result key, ``AXIS/KEY/gap``, ``/ci_low``, ``/ci_high``,
  ``/p``, ``/p_adjusted``, ``/a`` and ``/b`` as metrics and ``AXIS/KEY/verdict`` as a param (with
  each axis' ``n_pairs``, ``alpha`` and ``correction``, and the run's model), and the report
  folder as artifacts under ``fairtalk/``.
- :func:`make_metric` is an ``extra_metrics`` entry for ``mlflow.evaluate``: it sees every row,
  pairs them by a pair-id and a side column, and reports fairtalk's paired test of one result key
  (``gap``, ``ci_low``, ``ci_high``, ``p``, ``p_adjusted``, ``detected``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from fairtalk import AuditResult, AuditRun, Response, score
from fairtalk.errors import FairtalkError, InputError

if TYPE_CHECKING:
    from mlflow.models import EvaluationMetric

__all__ = ["audit_metrics", "audit_params", "log_audit", "make_metric"]

_MSG_MISSING = "fairtalk's MLflow logging needs mlflow: pip install 'fairtalk[mlflow]'"
_MSG_NO_FOLDER = "{path} holds no audit (no run.json or results.json)"
_MSG_BAD_SIDES = (
    'fairtalk_{key}: the side column holds {found}; each row\'s side must be "a" or "b" '
    '(another column through evaluator_config={{"col_mapping": {{"side": ...}}}})'
)
#: The values of the side column :func:`make_metric` accepts.
_SIDES = ("a", "b")


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _results(audit: AuditRun | AuditResult) -> dict[str, AuditResult]:
    return dict(audit.results) if isinstance(audit, AuditRun) else {audit.axis: audit}


def audit_metrics(audit: AuditRun | AuditResult) -> dict[str, float]:
    """The metrics :func:`log_audit` logs: ``AXIS/KEY/gap``, ``ci_low``, ``ci_high``, ``p``, ``p_adjusted``, ``a``, ``b``."""
    out: dict[str, float] = {}
    for axis, result in _results(audit).items():
        for m in result.measures:
            gap = None if m.a is None or m.b is None else m.a - m.b
            for name, value in (
                ("gap", gap),
                ("ci_low", m.ci95[0]),
                ("ci_high", m.ci95[1]),
                ("p", m.p_paired),
                ("p_adjusted", m.p_adjusted),
                ("a", m.a),
                ("b", m.b),
            ):
                finite = _finite(value)
                if finite is not None:
                    out[f"{axis}/{m.name}/{name}"] = finite
    return out


def audit_params(audit: AuditRun | AuditResult) -> dict[str, str]:
    """The params :func:`log_audit` logs: each key's verdict, each axis' ``n_pairs``/``alpha``/``correction``, the model."""
    out: dict[str, str] = {}
    if isinstance(audit, AuditRun):
        out["fairtalk/model"] = audit.model.partition(" ")[0]
    for axis, result in _results(audit).items():
        out.update(
            {
                f"{axis}/n_pairs": str(result.n_pairs),
                f"{axis}/alpha": f"{result.alpha:g}",
                f"{axis}/correction": result.correction,
            }
        )
        out.update({f"{axis}/{m.name}/verdict": m.verdict.value for m in result.measures})
    return out


def _read(path: Path) -> AuditRun | AuditResult:
    if (path / "run.json").is_file():
        return AuditRun.read_json(path / "run.json")
    if (path / "results.json").is_file():
        return AuditResult.read_json(path / "results.json")
    raise FairtalkError(_MSG_NO_FOLDER.format(path=path))


def log_audit(
    audit: AuditRun | AuditResult | str | os.PathLike[str],
    *,
    run_id: str | None = None,
    report_dir: str | os.PathLike[str] | None = None,
) -> str:
    """Log an audit's gaps, intervals, p-values and verdicts to an MLflow run, and its report as artifacts.

    Parameters
    ----------
    audit : AuditRun, AuditResult or path
        A result, or the output folder of ``fairtalk audit`` / ``fairtalk score`` (its report is
        then logged too).
    run_id : str, optional
        The MLflow run to log to (default: the active run, else a new run, ended afterwards).
    report_dir : path, optional
        The report folder to log as artifacts under ``fairtalk/`` (default: the folder given as
        ``audit``, else the run's ``out_dir``; none for a result without one).

    Returns
    -------
    str
        The MLflow run id.

    Raises
    ------
    FairtalkError
        mlflow is not installed, or the folder holds no audit.
    """
    try:
        import mlflow
    except ModuleNotFoundError as exc:
        raise FairtalkError(_MSG_MISSING) from exc
    folder = Path(report_dir) if report_dir is not None else None
    if isinstance(audit, (str, os.PathLike)):
        folder = folder or Path(audit)
        audit = _read(Path(audit))
    elif folder is None and isinstance(audit, AuditRun) and audit.config.get("out_dir"):
        folder = Path(str(audit.config["out_dir"]))
    active = mlflow.active_run()
    started = None
    if run_id is None and active is None:
        started = mlflow.start_run()
        run_id = started.info.run_id
    elif run_id is None and active is not None:
        run_id = active.info.run_id
    assert run_id is not None
    client = mlflow.MlflowClient()
    try:
        for key, value in audit_metrics(audit).items():
            client.log_metric(run_id, key, value)
        for key, text in audit_params(audit).items():
            client.log_param(run_id, key, text)
        if folder is not None and folder.is_dir():
            client.log_artifacts(run_id, str(folder), artifact_path="fairtalk")
    finally:
        if started is not None:
            mlflow.end_run()
    return run_id


def make_metric(
    key: str,
    *,
    axis: str = "gender",
    measures: str | Sequence[str] | None = None,
    n_resamples: int = 2000,
    alpha: float = 0.05,
) -> EvaluationMetric:
    """An ``mlflow.evaluate`` metric: fairtalk's paired test of result key ``key`` over every evaluated row.

    The evaluation data must hold both sides of each pair, in columns ``pair_id`` (the pair's id)
    and ``side`` (``a`` or ``b``; other names through ``evaluator_config={"col_mapping": ...}``);
    the predictions are the answers. Its results are ``fairtalk_<key>/gap``, ``ci_low``,
    ``ci_high``, ``p``, ``p_adjusted`` and ``detected`` (1 when a difference is detected).
    ``measures`` defaults to the measure of that name (``offense`` for ``offense_rate``).

    Raises
    ------
    FairtalkError
        mlflow is not installed.
    InputError
        From the metric, when ``mlflow.evaluate`` runs it: a side other than ``a`` or ``b`` (the
        message names the values found and those accepted).
    """
    try:
        from mlflow.metrics import MetricValue
        from mlflow.models import make_metric as mlflow_make_metric
    except ModuleNotFoundError as exc:
        raise FairtalkError(_MSG_MISSING) from exc
    chosen = measures if measures is not None else (key.removesuffix("_rate"),)

    def eval_fn(predictions: Sequence[str], pair_id: Sequence[str], side: Sequence[str]) -> MetricValue:
        sides = [str(s) for s in side]
        other = sorted(set(sides) - set(_SIDES))  # then each side is "a" or "b"
        if other:
            found = ", ".join(repr(s) for s in other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5 else "")
            raise InputError(_MSG_BAD_SIDES.format(key=key, found=found))
        responses = [Response(str(i), "a" if s == "a" else "b", "", str(text)) for text, i, s in zip(predictions, pair_id, sides)]
        complete = len({r.pair_id for r in responses if r.side == "a"} & {r.pair_id for r in responses if r.side == "b"})
        if complete < 2:  # mlflow first tries each metric on the first row alone
            return MetricValue(aggregate_results={"n_pairs": float(complete)})
        m = score(responses, axis=axis, measures=chosen, n_resamples=n_resamples, alpha=alpha).measure(key)
        gap = None if m.a is None or m.b is None else m.a - m.b
        results = {"gap": gap, "ci_low": m.ci95[0], "ci_high": m.ci95[1], "p": m.p_paired, "p_adjusted": m.p_adjusted}
        finite = {name: float(value) for name, value in results.items() if value is not None and math.isfinite(value)}
        return MetricValue(aggregate_results={**finite, "detected": 1.0 if m.detected() else 0.0})

    made = mlflow_make_metric(eval_fn=eval_fn, greater_is_better=False, name=f"fairtalk_{key}")  # type: ignore[no-untyped-call]
    return cast("EvaluationMetric", made)
