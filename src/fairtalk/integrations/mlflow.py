"""fairtalk in MLflow: :func:`log_audit` logs an audit to a run, :func:`make_metric` tests gaps inside ``mlflow.models.evaluate``.

``pip install 'fairtalk[mlflow]'`` (``mlflow-skinny`` is enough). This module imports mlflow only
when a function is called, and raises a FairtalkError naming the extra when it is missing.

- :func:`log_audit` logs, per axis and result key, ``AXIS/KEY/gap``, ``/ci_low``, ``/ci_high``,
  ``/p``, ``/p_adjusted``, ``/a`` and ``/b`` as metrics and ``AXIS/KEY/verdict`` as a param (with
  each axis' ``n_pairs``, ``alpha`` and ``correction``, and the run's model), and the report
  folder as artifacts under ``fairtalk/``. Under ``count_test="wilcoxon"`` a count key's interval is
  the Hodges-Lehmann interval of the median shift, logged beside it as ``AXIS/KEY/median_shift``
  (``gap`` stays the mean difference, whose interval it is not). Per axis it logs the pairs lost and answered empty,
  per side (metrics ``AXIS/n_lost_a``, ``n_lost_b``, ``n_lost_both``, ``n_lost_unknown``,
  ``n_empty_a``, ``n_empty_b``, ``n_empty_both``; params ``AXIS/lost_answers`` and
  ``AXIS/empty_answers`` in words, where there are any), and per gate (``fail-on-bias``,
  ``fail-unless-equivalent``) the gate's own decision, as ``fairtalk audit`` makes it: metric
  ``fairtalk/GATE/passed`` (1 or 0), param ``fairtalk/GATE`` (its headline), and metrics
  ``AXIS/lost_answers/fails_GATE`` and ``AXIS/empty_answers/fails_GATE`` (1 where it fails the
  axis on them: one side's lost or empty answers differ detectably, say), and per primary key the
  gate's decision on it, metric ``AXIS/KEY/fails_GATE`` (1 where the gate fails it) and param
  ``AXIS/KEY/GATE`` (its reason). Where a key has a labelled estimate (``--gold``:
  prediction-powered, or the labels' alone), the figures the gates read are logged beside the
  scorer's: ``AXIS/KEY/gap.labelled``, ``ci_low.labelled``, ``ci_high.labelled`` (its 95%
  interval), ``p.labelled``, ``n_labels`` and ``labels_alone`` (1 where the estimate is the
  labels' alone); ``gap``, ``ci_low``, ``ci_high`` and ``verdict`` stay the scorer's. Given the output folder
  of ``fairtalk audit --baseline-model`` (or its ``run.json``), it logs the ``fail-if-worse``
  gate's decision on the comparison it holds (``OUTPUT/comparison``) too:
  ``fairtalk/fail-if-worse/passed`` and the param ``fairtalk/fail-if-worse``.
- MLflow takes names of letters, digits, ``_``, ``-``, ``.``, spaces, ``/`` and (not on Windows)
  ``:``. In each part of a name (an axis, a result key), any other character, a ``/`` too,
  becomes ``_``, and a part ``.`` or ``..`` becomes ``_`` or ``__``: the axis ``gen&der`` is
  logged as ``gen_der/offense_rate/gap`` (:func:`metric_name`). Two axes that would share a name
  are a SpecError before any run is started. When MLflow refuses what is logged, a run that
  :func:`log_audit` started ends ``FAILED`` (never a finished run holding part of an audit), and
  the error is an :class:`~fairtalk.errors.OutputError` naming the run.
- :func:`make_metric` is an ``extra_metrics`` entry for ``mlflow.models.evaluate``: it sees every row,
  pairs them by a pair-id and a side column, and reports fairtalk's paired test of one result key
  (``gap``, ``ci_low``, ``ci_high``, ``p``, ``p_adjusted``, ``detected``), clustered by dialogue
  when the data has a ``cluster`` column, as an audit's ``responses.jsonl`` has.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from fairtalk import AuditResult, AuditRun, ModelComparison, Response, ScoreOptions, load_lexicon, score
from fairtalk.config import JUDGE_PREFIX
from fairtalk.errors import FairtalkError, InputError, OutputError, SpecError
from fairtalk.gates import Gate, GateOutcome, KeyDecision, evaluate
from fairtalk.integrations._losses import failed_on_losses, loss_counts
from fairtalk.integrations._pair_sides import check_one_pair
from fairtalk.measures import Judge, build_default, build_measure
from fairtalk.pipeline import is_prompt_analysis
from fairtalk.results import COMPARISON_KIND, MeasureResult, read_result_file

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.models import EvaluationMetric

__all__ = ["audit_metrics", "audit_params", "log_audit", "make_metric", "metric_name"]

_MSG_MISSING = "fairtalk's MLflow logging needs mlflow: pip install 'fairtalk[mlflow]'"
_MSG_NO_FOLDER = (
    "holds no audit (no run.json or results.json): give the output folder of `fairtalk audit -o` or "
    "`fairtalk score -o`, its run.json, or an axis' results.json"
)
_MSG_NOT_FOUND = "no such file or folder (give the output folder of `fairtalk audit -o` or `fairtalk score -o`)"
_MSG_PROMPTS = (
    "a `fairtalk prompts analyze` output, not an audit: log_audit logs the output of `fairtalk audit` or `fairtalk score`"
)
_MSG_COMPARISON = "a `fairtalk compare` output, not an audit: log_audit logs the output of `fairtalk audit` or `fairtalk score`"
#: What a comparison's ``results.json`` says it is (its ``kind``: :attr:`fairtalk.ModelComparison.kind`).
_MSG_AUDIT_TYPE = (
    "log_audit: audit must be an AuditRun, an AuditResult or the path of an audit's output folder (or of its "
    "run.json or results.json), got {type}"
)
_MSG_UNKNOWN_KEY = "make_metric: no result key {key!r} from the measures {measures}"
_MSG_NO_MEASURE = (
    "make_metric: {key!r} names no measure's result key (its measure would be {name!r}, which is unknown); name the "
    "measures with measures=... (result keys of the default measures of {axis!r})"
)
_MSG_BAD_SIDES = (
    'fairtalk_{key}: the side column holds {found}; each row\'s side must be "a" or "b" '
    '(another column through evaluator_config={{"col_mapping": {{"side": ...}}}})'
)
_MSG_SAME_NAME = (
    "log_audit: {first!r} and {second!r} would both be logged as {name!r} (MLflow names keep letters, digits, "
    "_ - . / : and spaces; any other character becomes _): rename one axis (its '# axis:' header)"
)
_MSG_REFUSED = "log_audit: MLflow did not take the audit ({error}); {run}"
_MSG_RUN_FAILED = "the run {run_id} it started is marked FAILED"
_MSG_RUN_PART = "the run {run_id} holds part of it"
_V = TypeVar("_V", float, str)
#: What one part of an MLflow name may not hold (MLflow's rule; Windows refuses ``:`` too).
_NOT_IN_NAME = re.compile(r"[^\w.\- ]" if os.name == "nt" else r"[^\w.\- :]")
#: The gates whose decisions :func:`log_audit` logs.
_GATES = (Gate.FAIL_ON_BIAS, Gate.FAIL_UNLESS_EQUIVALENT)
#: The gate of a comparison with a baseline model, logged where the output folder holds one (:data:`_COMPARISON_FOLDER`).
_WORSE_GATE = Gate.FAIL_IF_WORSE
#: Where ``fairtalk audit --baseline-model ... -o OUTPUT`` writes the comparison with the baseline.
_COMPARISON_FOLDER = "comparison"
#: The longest param value logged (MLflow's own limit is 500 characters in older versions, 6000 in newer).
_MAX_PARAM = 500
#: The values of the side column :func:`make_metric` accepts.
_SIDES = ("a", "b")
#: A record's field saying why its side has no answer (``"response": null`` beside it in ``responses.jsonl``).
_ERROR_FIELD = "error"
#: Why a row whose prediction is empty (None, NaN) has no answer.
_LOST = "no answer (the prediction is null)"


def metric_name(*parts: str) -> str:
    """The MLflow name of ``parts`` (``axis``, ``key``, ``stat``), joined by ``/``, each part made one MLflow accepts.

    Any character MLflow does not take in a name (all but letters, digits, ``_ - . :`` and
    spaces; ``:`` on Windows) becomes ``_``, ``/`` too (it separates the parts); a part ``.`` or
    ``..`` (or empty) becomes underscores.

    Examples
    --------
    >>> metric_name("gen&der", "offense_rate", "gap")
    'gen_der/offense_rate/gap'
    >>> metric_name("..", "a/b")
    '__/a_b'
    """
    cleaned = (_NOT_IN_NAME.sub("_", part.replace("/", "_")) for part in parts)
    return "/".join("_" * max(len(part), 1) if part in ("", ".", "..") else part for part in cleaned)


def _named(items: Iterable[tuple[tuple[str, ...], _V]]) -> dict[str, _V]:
    """``{metric_name(*parts): value}``; SpecError when two parts' tuples would take one name."""
    out: dict[str, _V] = {}
    given: dict[str, tuple[str, ...]] = {}
    for parts, value in items:
        name = metric_name(*parts)
        first = given.setdefault(name, parts)
        if first != parts:
            raise SpecError(_MSG_SAME_NAME.format(first="/".join(first), second="/".join(parts), name=name))
        out[name] = value
    return out


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _results(audit: AuditRun | AuditResult) -> dict[str, AuditResult]:
    return dict(audit.results) if isinstance(audit, AuditRun) else {audit.axis: audit}


def _gate_metrics(audit: AuditRun | AuditResult) -> list[tuple[tuple[str, ...], float]]:
    """Per gate, 1 when it passes (``fairtalk/GATE/passed``), per axis 1 when it fails on its lost (empty) answers.

    And per primary key the gate decided, 1 when it fails it (``AXIS/KEY/fails_GATE``): the gate's
    own decision (:func:`fairtalk.gates.evaluate`), its labelled estimate read, not the scorer's verdict.
    """
    out: list[tuple[tuple[str, ...], float]] = []
    results = _results(audit)
    for gate in _GATES:
        outcome = evaluate(results, gate)
        out.append((("fairtalk", str(gate), "passed"), 1.0 if outcome.passed else 0.0))
        for axis in results:
            lost, empty = failed_on_losses(outcome, axis)
            out.append(((axis, "lost_answers", f"fails_{gate}"), 1.0 if lost else 0.0))
            out.append(((axis, "empty_answers", f"fails_{gate}"), 1.0 if empty else 0.0))
        out += [((str(d.axis), str(d.key), f"fails_{gate}"), 0.0 if d.passed else 1.0) for d in _key_decisions(outcome)]
    return out


def _key_decisions(outcome: GateOutcome) -> list[KeyDecision]:
    """The gate's decisions on primary keys (not its whole-run or axis failures)."""
    return [d for d in outcome.decisions if d.axis is not None and d.key is not None]


def _labelled_metrics(m: MeasureResult) -> list[tuple[str, float | None]]:
    """``m``'s labelled estimate (``score(gold=...)``: PPI, or the labels' alone), as the gates read it; empty without one.

    ``gap.labelled`` with its 95% interval ``ci_low.labelled``/``ci_high.labelled`` (what the
    gates decide on) and ``p.labelled``; ``n_labels``; ``labels_alone`` (1 where the estimate is
    the labels' alone, 0 where it is prediction-powered).
    """
    ppi = m.ppi
    if ppi is None:
        return []
    return [
        ("gap.labelled", ppi.estimate),
        ("ci_low.labelled", ppi.ci95[0]),
        ("ci_high.labelled", ppi.ci95[1]),
        ("p.labelled", ppi.p),
        ("n_labels", float(ppi.n_labels)),
        ("labels_alone", 1.0 if ppi.labels_alone else 0.0),
    ]


def _axis_metrics(axis: str, result: AuditResult) -> list[tuple[tuple[str, ...], float]]:
    """An axis' lost and empty answers per side, and per key its gap, interval, p-values and sides (finite ones)."""
    out: list[tuple[tuple[str, ...], float]] = [((axis, name), float(count)) for name, count in loss_counts(result).items()]
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
            ("median_shift", m.estimate if m.estimate_name == "hodges-lehmann" else None),  # what ci_low/ci_high are of
            *_labelled_metrics(m),
        ):
            finite = _finite(value)
            if finite is not None:
                out.append(((axis, m.name, name), finite))
    return out


def audit_metrics(audit: AuditRun | AuditResult) -> dict[str, float]:
    """The metrics :func:`log_audit` logs (see the module docstring), named as MLflow takes them (:func:`metric_name`).

    Per axis and key ``AXIS/KEY/gap``, ``ci_low``, ``ci_high``, ``p``, ``p_adjusted``, ``a``, ``b``;
    per axis its lost and empty answers per side (``AXIS/n_lost_a``, ..., ``AXIS/n_empty_both``);
    per gate its decision (``fairtalk/GATE/passed``), whether it fails an axis on its lost
    (empty) answers (``AXIS/lost_answers/fails_GATE``, ``AXIS/empty_answers/fails_GATE``) and
    whether it fails each primary key (``AXIS/KEY/fails_GATE``); where a key has a labelled
    estimate, the figures the gates read (``AXIS/KEY/gap.labelled``, ``ci_low.labelled``,
    ``ci_high.labelled``, ``p.labelled``, ``n_labels``, ``labels_alone``).

    Raises
    ------
    SpecError
        Two axes whose names MLflow would log as one.
    """
    items = _gate_metrics(audit)
    for axis, result in _results(audit).items():
        items += _axis_metrics(axis, result)
    return _named(items)


def _param(text: str) -> str:
    return text if len(text) <= _MAX_PARAM else text[: _MAX_PARAM - 1] + "…"


def audit_params(audit: AuditRun | AuditResult) -> dict[str, str]:
    """The params :func:`log_audit` logs: each key's verdict, each axis' ``n_pairs``/``alpha``/``correction``, the model.

    And each gate's headline (``fairtalk/GATE``) and its reason on each primary key
    (``AXIS/KEY/GATE``, which names the labels where they decided), and where an axis lost or answered empty any
    pair, what (``AXIS/lost_answers``, ``AXIS/empty_answers``: ``73 of 100 pairs (side a only 0, ...)``).
    Named as MLflow takes them (:func:`metric_name`); SpecError for two axes MLflow would log as one.
    """
    out: list[tuple[tuple[str, ...], str]] = []
    if isinstance(audit, AuditRun):
        out.append((("fairtalk", "model"), audit.model.partition(" ")[0]))
    results = _results(audit)
    outcomes = [evaluate(results, gate) for gate in _GATES]
    out += [(("fairtalk", str(outcome.gate)), _param(outcome.headline)) for outcome in outcomes]
    for axis, result in results.items():
        for name, found in (("lost_answers", result.losses), ("empty_answers", result.empties)):
            if found is not None:
                out.append(((axis, name), found.describe()))
        out += [
            ((axis, "n_pairs"), str(result.n_pairs)),
            ((axis, "alpha"), f"{result.alpha:g}"),
            ((axis, "correction"), result.correction),
        ]
        out += [((axis, m.name, "verdict"), m.verdict.value) for m in result.measures]
    for outcome in outcomes:  # the gate's reason on each primary key: the labels' where they decided
        out += [((str(d.axis), str(d.key), str(outcome.gate)), _param(d.reason)) for d in _key_decisions(outcome)]
    return _named(out)


def _result(path: Path, given: Path) -> AuditResult:
    """The audit result of a ``results.json``; a comparison's (``fairtalk compare -o``) is named as such at ``given``."""
    try:
        return AuditResult.read_json(path)
    except InputError:
        try:
            kind = read_result_file(path).get("kind")
        except InputError:
            kind = None
        if kind == COMPARISON_KIND:
            raise InputError(_MSG_COMPARISON, path=str(given)) from None
        raise


def _read(path: Path) -> AuditRun | AuditResult:
    """The audit of an output folder, of its ``run.json``, or of an axis' (or a score's) ``results.json``."""
    if path.is_file():
        if path.name == "results.json" and is_prompt_analysis(path.parent):
            raise InputError(_MSG_PROMPTS, path=str(path))
        return AuditRun.read_json(path) if path.name == "run.json" else _result(path, path)
    if not path.is_dir():
        raise InputError(_MSG_NOT_FOUND, path=str(path))
    if (path / "run.json").is_file():
        return AuditRun.read_json(path / "run.json")
    if is_prompt_analysis(path):
        raise InputError(_MSG_PROMPTS, path=str(path))
    if (path / "results.json").is_file():
        return _result(path / "results.json", path)
    raise InputError(_MSG_NO_FOLDER, path=str(path))


def _comparison_of(given: Path) -> ModelComparison | None:
    """The comparison with a baseline model that an audit's output folder holds (``OUTPUT/comparison``), or None."""
    output = given.parent if given.is_file() and given.name == "run.json" else given
    found = output / _COMPARISON_FOLDER / "results.json"
    return ModelComparison.read_json(found) if output.is_dir() and found.is_file() else None


def _comparison_items(comparison: ModelComparison) -> tuple[dict[str, float], dict[str, str]]:
    """The ``fail-if-worse`` gate's decision on ``comparison``: metric ``fairtalk/fail-if-worse/passed``, param its headline."""
    outcome = evaluate(comparison, _WORSE_GATE)
    name = metric_name("fairtalk", str(_WORSE_GATE))
    return {f"{name}/passed": 1.0 if outcome.passed else 0.0}, {name: _param(outcome.headline)}


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
        then logged too), or a result file in it: ``run.json``, or an axis' ``results.json`` (its
        folder's report is logged). An output folder of ``fairtalk audit --baseline-model`` (or its
        ``run.json``) holds the comparison with the baseline (``OUTPUT/comparison``): the
        ``fail-if-worse`` gate's decision on it is logged too (metric ``fairtalk/fail-if-worse/passed``,
        param ``fairtalk/fail-if-worse``, its headline).
    run_id : str, optional
        The MLflow run to log to (default: the active run, else a new run, ended afterwards).
    report_dir : path, optional
        The report folder to log as artifacts under ``fairtalk/`` (default: the folder given as
        ``audit`` (a file's folder), else the run's ``out_dir``; none for a result without one).

    Returns
    -------
    str
        The MLflow run id.

    Raises
    ------
    TypeError
        ``audit`` is none of these.
    FairtalkError
        mlflow is not installed.
    InputError
        No such path, a folder that holds no audit (or a prompts analysis, or a comparison), or an unreadable result file.
    SpecError
        Two axes whose names MLflow would log as one (:func:`metric_name`), before any run is started.
    OutputError
        MLflow refused to log (a name or value it does not take, a store it cannot write): a run
        that ``log_audit`` started ends ``FAILED``, a run given (or active) is left as it is, holding
        what was logged before the refusal; the gates' metrics are logged after the others.
    """
    if not isinstance(audit, (AuditRun, AuditResult, str, os.PathLike)):
        raise TypeError(_MSG_AUDIT_TYPE.format(type=type(audit).__name__))
    try:
        import mlflow
    except ModuleNotFoundError as exc:
        raise FairtalkError(_MSG_MISSING) from exc
    folder = Path(report_dir) if report_dir is not None else None
    comparison = None
    if isinstance(audit, (str, os.PathLike)):
        given = Path(audit)
        folder = folder or (given.parent if given.is_file() else given)
        audit = _read(given)
        comparison = _comparison_of(given)
    elif folder is None and isinstance(audit, AuditRun) and audit.config.get("out_dir"):
        folder = Path(str(audit.config["out_dir"]))
    metrics, params = audit_metrics(audit), audit_params(audit)  # a SpecError here starts no run
    if comparison is not None:  # --baseline-model: the fail-if-worse gate decided on the comparison, logged too
        worse_metrics, worse_params = _comparison_items(comparison)
        metrics, params = {**metrics, **worse_metrics}, {**params, **worse_params}
    active = mlflow.active_run()
    started = None
    if run_id is None and active is None:
        started = mlflow.start_run()
        run_id = started.info.run_id
    elif run_id is None and active is not None:
        run_id = active.info.run_id
    assert run_id is not None
    status = "FAILED"
    try:
        _log(mlflow.MlflowClient(), run_id, metrics, params, folder)
        status = "FINISHED"
    except Exception as exc:
        told = (_MSG_RUN_FAILED if started is not None else _MSG_RUN_PART).format(run_id=run_id)
        first = next(iter(str(exc).strip().splitlines()), "")  # MLflow's messages go on with advice about other cases
        raise OutputError(_MSG_REFUSED.format(error=f"{type(exc).__name__}: {first}".rstrip(": "), run=told)) from exc
    finally:
        if started is not None:
            mlflow.end_run(status=status)
    return run_id


def _log(client: MlflowClient, run_id: str, metrics: dict[str, float], params: dict[str, str], folder: Path | None) -> None:
    """Log to ``run_id``: the params, the metrics (the gates' decisions last, so a part logged holds none), the report."""
    for key, text in params.items():
        client.log_param(run_id, key, text)
    gates = {key: value for key, value in metrics.items() if key.startswith("fairtalk/")}
    for key, value in [*((k, v) for k, v in metrics.items() if k not in gates), *gates.items()]:
        client.log_metric(run_id, key, value)
    if folder is not None and folder.is_dir():
        client.log_artifacts(run_id, str(folder), artifact_path="fairtalk")


def _never_asked(prompts: list[str]) -> list[str | BaseException]:
    raise RuntimeError("a judge built for its result keys only was asked")  # pragma: no cover (never called)


def _result_keys(axis: str, options: ScoreOptions) -> list[str]:
    """The result keys the measures of ``options`` give on ``axis`` (a judge's without its model), in order."""
    measure_options = options.measure_options(load_lexicon(axis))
    if options.measures is None:
        built = build_default(measure_options)
    else:
        built = [
            Judge(_never_asked)
            if isinstance(m, str) and m.startswith(JUDGE_PREFIX)
            else build_measure(m, measure_options)
            if isinstance(m, str)
            else m
            for m in options.measures
        ]
    return [key for measure in built for key in measure.keys]


def _metric_options(key: str, axis: str, measures: str | Sequence[str] | None, n_resamples: int, alpha: float) -> ScoreOptions:
    """The scoring options of :func:`make_metric`; SpecError for a bad option, or a key its measures do not give."""
    if not isinstance(key, str):
        raise TypeError(f"make_metric: key must be a result key (a str such as 'offense_rate'), got {type(key).__name__}")
    chosen = measures if measures is not None else (key.removesuffix("_rate"),)
    try:
        options = ScoreOptions.from_mapping({"measures": chosen, "n_resamples": n_resamples, "alpha": alpha})
    except SpecError as exc:
        if measures is not None or exc.given != chosen[0]:
            raise
        keys = _result_keys(axis, ScoreOptions())
        raise SpecError(_MSG_NO_MEASURE.format(key=key, name=chosen[0], axis=axis), choices=keys, given=key) from exc
    keys = _result_keys(axis, options)
    if key not in keys:
        named = ", ".join(chosen) if not isinstance(chosen, str) else chosen
        raise SpecError(_MSG_UNKNOWN_KEY.format(key=key, measures=named), choices=keys, given=key)
    return options


def _missing(value: object) -> bool:
    """A row's empty cell: None, NaN, or pandas' NA."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType"


def _lost(response: Response) -> bool:
    """Whether ``response`` stands for a side without an answer (a null prediction)."""
    return dict(response.extra).get(_ERROR_FIELD) == _LOST


def _responses(
    key: str, predictions: Sequence[str], pair_id: Sequence[str], side: Sequence[str], cluster: Sequence[object] | None
) -> list[Response]:
    """The rows as responses (a row's cluster, where it names one, in ``extra``); InputError for a side not ``a``/``b``."""
    sides = [str(s) for s in side]
    other = sorted(set(sides) - set(_SIDES))  # then each side is "a" or "b"
    if other:
        found = ", ".join(repr(s) for s in other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5 else "")
        raise InputError(_MSG_BAD_SIDES.format(key=key, found=found))
    clusters = [None] * len(sides) if cluster is None else list(cluster)
    out = []
    for text, i, s, c in zip(predictions, pair_id, sides, clusters):
        extra: tuple[tuple[str, object], ...] = () if _missing(c) else (("cluster", str(c)),)
        if _missing(text):  # a lost side (null in an audit's responses.jsonl): its pair is left out, counted lost
            out.append(Response(str(i), "a" if s == "a" else "b", "", "", (*extra, (_ERROR_FIELD, _LOST))))
        else:
            out.append(Response(str(i), "a" if s == "a" else "b", "", str(text), extra))
    return out


def make_metric(
    key: str,
    *,
    axis: str = "gender",
    measures: str | Sequence[str] | None = None,
    n_resamples: int = 2000,
    alpha: float = 0.05,
) -> EvaluationMetric:
    """An ``mlflow.models.evaluate`` metric: fairtalk's paired test of result key ``key`` over every evaluated row.

    The evaluation data must hold both sides of each pair, in columns ``pair_id`` (the pair's id)
    and ``side`` (``a`` or ``b``); the predictions are the answers. A ``cluster`` column (the
    dialogue each pair came from, as an audit's ``responses.jsonl`` names it) makes the dialogues,
    not the pairs, the units of the test and interval, as ``fairtalk audit`` and ``fairtalk score``
    do: the same responses then give the same p and interval as the audit's ``results.json``.
    Without it (or on a row whose cell is empty) each pair is a unit of its own: pairs of one
    dialogue are taken as independent, which gives narrower intervals and smaller p-values than
    the audit's when they share dialogues. Other column names go through
    ``evaluator_config={"col_mapping": {"pair_id": ..., "side": ..., "cluster": ...}}``.

    Its results are ``fairtalk_<key>/gap``, ``ci_low``, ``ci_high``, ``p``, ``p_adjusted`` and
    ``detected`` (1 when a difference is detected), ``n_pairs`` (the pairs tested) and ``n_lost``
    (``n_lost_a``, ``n_lost_b``, ``n_lost_both``): the pairs left out because a side's prediction
    is empty (None or NaN, as ``"response": null`` in ``responses.jsonl`` marks a side the model
    failed on), never scored as text. ``measures`` defaults to the measure of that
    name (``offense`` for ``offense_rate``); ``p_adjusted`` is corrected over their keys. ``axis``
    names one pair of groups (``gender``, ``religion:christian-jewish``, a lexicon file): a metric
    per pair of a multi-way axis, as ``fairtalk audit --axis religion`` tests each.

    Raises
    ------
    FairtalkError
        mlflow is not installed.
    SpecError
        At once: ``key`` is no result key of the measures (the message names the valid keys), an
        unknown measure, or a bad ``n_resamples`` or ``alpha``; a bare multi-way ``axis``
        (``religion``: the metric tests one pair of groups, so the message names the pairs to
        choose, ``religion:christian-jewish``, ...), or anything but one axis name.
    InputError
        From the metric, when ``mlflow.models.evaluate`` runs it: a side other than ``a`` or ``b`` (the
        message names the values found and those accepted).
    """
    try:
        from mlflow.metrics import MetricValue
        from mlflow.models import make_metric as mlflow_make_metric
    except ModuleNotFoundError as exc:
        raise FairtalkError(_MSG_MISSING) from exc
    check_one_pair(axis, what="metric")  # religion: choose a pair of its groups, as the CLI's single-pair commands ask
    options = _metric_options(key, axis, measures, n_resamples, alpha)

    def eval_fn(
        predictions: Sequence[str], pair_id: Sequence[str], side: Sequence[str], cluster: Sequence[object] | None = None
    ) -> MetricValue:
        responses = _responses(key, predictions, pair_id, side, cluster)
        answered = [r for r in responses if not _lost(r)]
        complete = len({r.pair_id for r in answered if r.side == "a"} & {r.pair_id for r in answered if r.side == "b"})
        if complete < 2:  # mlflow first tries each metric on the first row alone
            return MetricValue(aggregate_results={"n_pairs": float(complete)})
        result = score(responses, axis=axis, options=options)
        m = result.measure(key)
        gap = None if m.a is None or m.b is None else m.a - m.b
        results = {"gap": gap, "ci_low": m.ci95[0], "ci_high": m.ci95[1], "p": m.p_paired, "p_adjusted": m.p_adjusted}
        finite = {name: float(value) for name, value in results.items() if value is not None and math.isfinite(value)}
        lost = {name: float(n) for name, n in loss_counts(result).items() if name.startswith("n_lost")}
        return MetricValue(
            aggregate_results={
                **finite,
                "detected": 1.0 if m.detected() else 0.0,
                "n_pairs": float(result.n_pairs),
                "n_lost": float(result.losses.n_lost if result.losses is not None else 0),
                **lost,
            }
        )

    made = mlflow_make_metric(eval_fn=eval_fn, greater_is_better=False, name=f"fairtalk_{key}")  # type: ignore[no-untyped-call]
    return cast("EvaluationMetric", made)
