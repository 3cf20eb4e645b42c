"""Bias assertions for a test suite: :func:`assert_no_bias` and :func:`assert_not_worse`.

Each runs a real audit (:func:`fairtalk.audit`; two of them on the same pairs and
:func:`fairtalk.compare_runs` for :func:`assert_not_worse`), writes its report, and raises
:class:`BiasAssertionError` (an ``AssertionError``, so pytest shows it as a failed test) whose
message names each failing measure with both sides, the gap, its interval and adjusted p, and the
report's path. The pytest plugin (:mod:`fairtalk.integrations.pytest_plugin`) adds a
``fairtalk_audit`` fixture whose defaults come from ``[tool.fairtalk]`` and the ini file.

The gates are the CLI's, decided by :func:`fairtalk.gates.evaluate` (the same decision as the exit
code, the JUnit file and the job summary): ``fail-on-bias`` fails on a difference detected (adjusted
p < alpha), ``fail-unless-equivalent`` unless every primary measure is shown equivalent within its
margin, and :func:`assert_not_worse` (``fail-if-worse``) unless every primary measure of the
candidate is shown non-inferior to the baseline's.

Examples
--------
>>> from fairtalk.testing import assert_no_bias
>>> assert_no_bias(lambda text: "ok", axes="gender", n_pairs=20)  # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from fairtalk import AuditConfig, AuditRun, ModelComparison, audit, compare_runs
from fairtalk.gates import GateOutcome, KeyDecision, evaluate
from fairtalk.models import ReplyFunction, Responder
from fairtalk.report import write_model_comparison
from fairtalk.results import GapChange, MeasureResult

__all__ = ["GATES", "BiasAssertionError", "Gate", "ModelLike", "assert_no_bias", "assert_not_worse", "audit_options"]

#: A model as :func:`fairtalk.audit` takes it: a spec, a responder, or a function.
ModelLike = str | Responder | ReplyFunction
#: The gate of :func:`assert_no_bias`, named as the CLI's flag.
Gate = Literal["fail-on-bias", "fail-unless-equivalent"]
#: The gates :func:`assert_no_bias` knows.
GATES: tuple[Gate, ...] = ("fail-on-bias", "fail-unless-equivalent")

_MSG_GATE = "unknown gate {gate!r}; choose one of: {choices}"
_MSG_BIAS = "fairtalk: {what} in {model} ({gate}, alpha {alpha:g}; pairs per axis: {n}):"
_MSG_WORSE = "fairtalk: {candidate} is not shown non-inferior to {baseline} (fail-if-worse, alpha {alpha:g}):"


class BiasAssertionError(AssertionError):
    """A bias assertion failed: ``failing`` names the ``axis/key`` that failed and ``report`` where the report is."""

    def __init__(self, message: str, *, failing: Sequence[str], report: Path) -> None:
        super().__init__(message)
        self.failing = tuple(failing)
        self.report = report


def audit_options(
    config: AuditConfig | None,
    *,
    axes: str | Sequence[str] | None = None,
    n_pairs: int | None = None,
    measures: str | Sequence[str] | None = None,
    margin: Mapping[str, float] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    out_dir: str | os.PathLike[str] | None = None,
) -> AuditConfig:
    """``config`` (default: :class:`~fairtalk.AuditConfig`'s defaults) with every option given here applied.

    ``margin`` maps a result key to its equivalence margin (``{"offense_rate": 0.02}``), added to
    the config's ``margins``. Options left None keep the config's value.

    Raises
    ------
    SpecError
        A bad value (see :class:`~fairtalk.AuditConfig`).
    """
    base = config if config is not None else AuditConfig()
    changes: dict[str, object] = {}
    for key, value in (
        ("axes", axes),
        ("n_pairs", n_pairs),
        ("measures", measures),
        ("corpus", corpus),
        ("seed", seed),
        ("out_dir", out_dir),
    ):
        if value is not None:
            changes[key] = os.fspath(value) if isinstance(value, os.PathLike) else value
    if margin is not None:
        changes["margins"] = {**base.score.margins, **margin}
    return base.updated(changes) if changes else base


def _folder(out_dir: str | os.PathLike[str] | None, config: AuditConfig) -> Path:
    """The folder a report goes to: ``out_dir``, the config's, or a new temporary folder (kept, so the message can name it)."""
    if out_dir is not None:
        return Path(out_dir)
    if config.out_dir is not None:
        return Path(config.out_dir)
    return Path(tempfile.mkdtemp(prefix="fairtalk-"))


def _number(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{x:.4g}"


def _interval(bounds: tuple[float | None, float | None], level: float) -> str:
    """``bounds`` in words, as the ``level`` (0.95: 95%) interval they are."""
    low, high = bounds
    if low is None or high is None:
        return "no CI"
    return f"{100 * level:g}% CI {_number(low)} to {_number(high)}"


def measure_line(axis: str, m: MeasureResult) -> str:
    """One measure in words: ``gender/offense_rate: A 0 vs B 0.85, gap -0.85 (95% CI ...), adjusted p ...: verdict``.

    The interval is the key's ``ci95``, a 95% interval whatever the audit's alpha (as report.md and results.json say).
    """
    gap = None if m.a is None or m.b is None else m.a - m.b
    parts = [f"{axis}/{m.name}: A {_number(m.a)} vs B {_number(m.b)}, gap {_number(gap)} ({_interval(m.ci95, 0.95)})"]
    parts.append(f"adjusted p {_number(m.p_adjusted)} ({m.paired_test or 'no test'})")
    if m.equivalence_margin is not None:
        parts.append(f"margin ±{_number(m.equivalence_margin)}, equivalence p {_number(m.p_equivalence)}")
    return ", ".join(parts) + f": {m.not_tested or m.verdict.value}"


def change_line(row: GapChange, alpha: float, verdict: str | None = None) -> str:
    """One compared key in words: both gaps with their intervals, the change, the margin and the verdict.

    ``verdict`` replaces the verdict's word at the end (a gate's reason, which begins with it). The
    intervals are the comparison's ``1 - alpha`` ones (:func:`fairtalk.stats.gap_change`).
    """
    level = 1 - alpha
    return (
        f"{row.axis}/{row.key}: baseline gap {_number(row.baseline_gap)} ({_interval(row.baseline_ci, level)}), "
        f"candidate gap {_number(row.candidate_gap)} ({_interval(row.candidate_ci, level)}), "
        f"change {_number(row.change)} ({_interval(row.change_ci, level)}), adjusted p {_number(row.p_adjusted)}, "
        f"margin {_number(row.margin)}: {verdict or row.verdict.value}"
    )


def _failure_line(d: KeyDecision, line: str | None) -> str:
    """A failing decision in words: the key's figures and verdict, or the gate's reason for a whole-run failure."""
    return d.reason if line is None else line


def bias_failures(run: AuditRun, gate: Gate) -> list[tuple[str, str]]:
    """``(axis/key, line)`` for each failure of ``gate`` on ``run`` (:func:`fairtalk.gates.evaluate`), axes in the order audited.

    A whole-run failure (nothing to check) is named by its axis, or ``run``.
    """
    return _audit_failures(run, evaluate(run, gate))


def _audit_failures(run: AuditRun, outcome: GateOutcome) -> list[tuple[str, str]]:
    """``(axis/key, line)`` for each failure of ``outcome`` on ``run``."""
    out = []
    for d in outcome.failures:
        result = None if d.axis is None or d.key is None else run.results[d.axis]
        line = None if result is None or d.key is None else measure_line(str(d.axis), result.measure(d.key))
        out.append((d.name, _failure_line(d, line)))
    return out


def _change_failures(comparison: ModelComparison, outcome: GateOutcome) -> list[tuple[str, str]]:
    """``(axis/key, line)`` for each failure of ``fail-if-worse`` on ``comparison``."""
    out = []
    compared = {(row.axis, row.key) for row in comparison.changes}
    for d in outcome.failures:
        if d.axis is None or d.key is None:
            line = None
        elif (d.axis, d.key) not in compared:  # a primary key the baseline did not measure: no figures to show
            line = f"{d.axis}: {d.key}: {d.reason}"
        else:  # the figures, then the gate's reason (the verdict and why it is not shown non-inferior)
            line = change_line(comparison.change(d.axis, d.key), comparison.alpha, verdict=d.reason)
        out.append((d.name, _failure_line(d, line)))
    return out


def assert_no_bias(
    model: ModelLike,
    *,
    axes: str | Sequence[str] | None = None,
    n_pairs: int | None = None,
    margin: Mapping[str, float] | None = None,
    measures: str | Sequence[str] | None = None,
    gate: Gate | None = None,
    corpus: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    config: AuditConfig | None = None,
    out_dir: str | os.PathLike[str] | None = None,
) -> AuditRun:
    """Audit ``model`` and raise :class:`BiasAssertionError` when it fails the gate; return the run when it passes.

    Parameters
    ----------
    model : str, Responder or function
        What :func:`fairtalk.audit` takes as ``model=`` (a spec such as ``"python:bot.py:reply"``,
        a responder, or a function of one text).
    axes, n_pairs, measures, corpus, seed
        As for :func:`fairtalk.audit`; None keeps ``config``'s value.
    margin : mapping, optional
        Equivalence margins by result key, in its units (``{"offense_rate": 0.02}``).
    gate : {"fail-on-bias", "fail-unless-equivalent"}, optional
        Fail on a difference detected, or unless every primary measure is shown equivalent
        within its margin. Default: ``fail-unless-equivalent`` when ``margin`` is given, else
        ``fail-on-bias``.
    config : AuditConfig, optional
        The other options (the pytest plugin passes the ones of ``[tool.fairtalk]``).
    out_dir : path, optional
        Where the report goes (default: the config's, else a new temporary folder, kept).

    Returns
    -------
    AuditRun

    Raises
    ------
    BiasAssertionError
        The gate failed: the message names every failing measure (sides, gap, interval,
        adjusted p, verdict) and the report's ``index.html``.
    FairtalkError
        A bad option, model or corpus (see :func:`fairtalk.audit`).
    """
    chosen: Gate = gate if gate is not None else ("fail-unless-equivalent" if margin else "fail-on-bias")
    if chosen not in GATES:
        raise ValueError(_MSG_GATE.format(gate=chosen, choices=", ".join(GATES)))
    resolved = audit_options(config, axes=axes, n_pairs=n_pairs, measures=measures, margin=margin, corpus=corpus, seed=seed)
    folder = _folder(out_dir, resolved)
    run = audit(resolved.updated({"out_dir": os.fspath(folder), "model": model}), gates=[chosen])  # the pages state it
    outcome = evaluate(run, chosen)
    if not outcome.passed:
        failures = _audit_failures(run, outcome)
        what = "bias detected" if chosen == "fail-on-bias" else "measures not shown equivalent"
        alpha = min((r.alpha for r in run.results.values()), default=0.05)
        n = ", ".join(f"{axis} {r.n_pairs}" for axis, r in run.results.items())
        head = _MSG_BIAS.format(what=what, model=run.model.partition(" ")[0], gate=chosen, alpha=alpha, n=n)
        report = folder / "index.html"
        lines = [head, *(f"  {line}" for _, line in failures), outcome.headline, f"report: {report}"]
        raise BiasAssertionError("\n".join(lines), failing=[key for key, _ in failures], report=report)
    return run


def assert_not_worse(
    candidate: ModelLike,
    baseline: ModelLike,
    *,
    axes: str | Sequence[str] | None = None,
    n_pairs: int | None = None,
    margin: Mapping[str, float] | None = None,
    measures: str | Sequence[str] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    config: AuditConfig | None = None,
    out_dir: str | os.PathLike[str] | None = None,
) -> ModelComparison:
    """Audit both models on the same pairs and raise :class:`BiasAssertionError` unless the candidate is not worse.

    The release gate of ``fairtalk compare --fail-if-worse``: every primary key of the candidate
    must be shown non-inferior, ``|candidate gap| < |baseline gap| + margin``; the candidate as its
    own baseline (the same fingerprint) fails, as a model cannot be shown not worse than itself. The audits go to
    ``OUT/baseline`` and ``OUT/candidate``, the comparison's report to ``OUT/comparison``.

    Parameters
    ----------
    candidate, baseline : str, Responder or function
        The model to ship and the one it replaces, as :func:`fairtalk.audit` takes them.
    axes, n_pairs, measures, corpus, seed, config, out_dir
        As for :func:`assert_no_bias`.
    margin : mapping, optional
        Non-inferiority margins by result key, in its units (default: each kind's).

    Returns
    -------
    ModelComparison

    Raises
    ------
    BiasAssertionError
        A primary key not shown non-inferior: the message names each with both gaps, their
        intervals, the change and its interval, and the comparison's ``report.md``.
    FairtalkError
        A bad option, model or corpus.
    """
    resolved = audit_options(config, axes=axes, n_pairs=n_pairs, measures=measures, corpus=corpus, seed=seed)
    folder = _folder(out_dir, resolved)
    for name, model in (("baseline", baseline), ("candidate", candidate)):
        audit(resolved.updated({"out_dir": os.fspath(folder / name), "model": model}))
    comparison = compare_runs(folder / "baseline", folder / "candidate", margins=margin, alpha=resolved.score.alpha)
    files = write_model_comparison(comparison, folder / "comparison")
    outcome = evaluate(comparison, "fail-if-worse")
    if not outcome.passed:
        names = [(name or label).partition(" ")[0] for name, label in zip(comparison.models, ("the baseline", "the candidate"))]
        head = _MSG_WORSE.format(candidate=names[1], baseline=names[0], alpha=comparison.alpha)
        report = files["md"]
        failing = _change_failures(comparison, outcome)
        lines = [head, *(f"  {line}" for _, line in failing), outcome.headline, f"report: {report}"]
        raise BiasAssertionError("\n".join(lines), failing=[key for key, _ in failing], report=report)
    return comparison
