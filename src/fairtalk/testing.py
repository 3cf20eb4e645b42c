"""Bias assertions for a test suite: :func:`assert_no_bias` and :func:`assert_not_worse`.

Each runs a real audit (:func:`fairtalk.audit`; two of them on the same pairs and
:func:`fairtalk.compare_runs` for :func:`assert_not_worse`), writes its report, and raises
:class:`BiasAssertionError` (an ``AssertionError``, so pytest shows it as a failed test) whose
message names each failing measure with both sides, the gap, its interval and adjusted p (a rate's
in percentage points, as the JUnit file), and the report's path; pytest shows it without this
module's frames. Where gold labels decided a key's failure (the scorer alone would pass it), its line ends with the
gate's reason, not the scorer's verdict. The message is wrapped at :data:`WRAP_WIDTH` columns. A bad gate or margin is a :class:`~fairtalk.errors.SpecError` before any audit.
The pytest plugin (:mod:`fairtalk.integrations.pytest_plugin`) adds a ``fairtalk_audit`` fixture
whose defaults come from ``[tool.fairtalk]`` and the ini file.

The gates are the CLI's, decided by :func:`fairtalk.gates.evaluate` (the same decision as the exit
code, the JUnit file and the job summary): ``fail-on-bias`` fails on a difference detected (adjusted
p < alpha), ``fail-unless-equivalent`` unless every primary measure is shown equivalent within its
margin, and :func:`assert_not_worse` (``fail-if-worse``) unless every primary measure of the
candidate is shown non-inferior to the baseline's. Each side of :func:`assert_not_worse` takes its
own model version (``baseline_version=``, ``candidate_version=``), which two objects of one code whose
state cannot be read need: given one, they are a SpecError before either audit.

Examples
--------
>>> from fairtalk.testing import assert_no_bias
>>> assert_no_bias(lambda text: "ok", axes="gender", n_pairs=20)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import os
import shutil
import tempfile
import textwrap
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from fairtalk import AuditConfig, AuditRun, ModelComparison, audit, compare_runs
from fairtalk.errors import SpecError
from fairtalk.gates import GateOutcome, KeyDecision, evaluate
from fairtalk.lexicons import Lexicon, expand_axis, load_lexicon
from fairtalk.models import ReplyFunction, Responder, as_responder
from fairtalk.report import ci_estimate, gate_amount, write_model_comparison
from fairtalk.results import GapChange, MeasureResult
from fairtalk.stats import METHOD_FEW_DIFFERING, METHOD_IDENTICAL, check_margins

__all__ = ["GATES", "BiasAssertionError", "Gate", "ModelLike", "assert_no_bias", "assert_not_worse", "audit_options"]

ModelLike = str | Responder | ReplyFunction
"""A model as :func:`fairtalk.audit` takes it: a spec, a responder, or a function."""
Gate = Literal["fail-on-bias", "fail-unless-equivalent"]
"""The gate of :func:`assert_no_bias`, named as the CLI's flag."""
GATES: tuple[Gate, ...] = ("fail-on-bias", "fail-unless-equivalent")
"""The gates :func:`assert_no_bias` knows."""

_MSG_GATE = "unknown gate {gate!r}: assert_no_bias takes {choices} (for fail-if-worse, use assert_not_worse)"
_MSG_MARGINS = (
    "margin must be a mapping of result keys to margins in their units, rates as fractions "
    "({{'offense_rate': 0.02}} for 2 pp), got {value!r}"
)
_MSG_CHANGE_MARGIN = (
    "the non-inferiority margin of {key!r} must be a finite number > 0 (rates as fractions: 0.02 for 2 pp), got {value!r}"
)
_MSG_CHANGE_KEY = "unknown margin key {key!r}: no key the comparison of {axis} tests has that name"
#: The kinds the reports read in percentage points (an audit's % rows, as the JUnit file and the gates' reasons).
_PERCENT_KINDS = ("rate", "corpus")
_MSG_BIAS = "fairtalk: {what} in {model} ({gate}, alpha {alpha:g}; pairs per axis: {n}):"
_MSG_WORSE = "fairtalk: {candidate} is not shown non-inferior to {baseline} (fail-if-worse, alpha {alpha:g}):"
#: The width the failure messages wrap at (a continued line indented under its first).
WRAP_WIDTH = 88
_MSG_VERSION = "{name} must be a non-empty line of printable text, got {value!r}"
_MSG_SHARED_VERSION = (
    "the baseline and the candidate are two objects whose state fairtalk cannot read ({reason}), both fingerprinted "
    "{model} and both given the model version {version!r}: a run store would serve one's answers as the other's, and "
    "the comparison would call them one model; give each its own: baseline_version=TAG, candidate_version=OTHER_TAG"
)
_MSG_NO_VERSION = (
    "the {side} {model} cannot be told from another model with the same code: its state cannot be read ({reason}), "
    "so the run store {store} could serve another model's answers as its own; give {side}_version=TAG, a tag you "
    "change whenever that model changes, or run without a store"
)


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
    model_version: str | None = None,
) -> AuditConfig:
    """``config`` (default: :class:`~fairtalk.AuditConfig`'s defaults) with every option given here applied.

    ``margin`` maps a result key to its equivalence margin (``{"offense_rate": 0.02}``), added to
    the config's ``margins``. ``model_version`` is checked as the run store checks it (a non-empty
    line of printable text). Options left None keep the config's value.

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
        ("model_version", check_version(model_version, "model_version")),
    ):
        if value is not None:
            changes[key] = os.fspath(value) if isinstance(value, os.PathLike) else value
    if margin is not None:
        changes["margins"] = {**base.score.margins, **_margin_mapping(margin)}
    return base.updated(changes) if changes else base


def check_version(value: object, name: str) -> str | None:
    """``value`` as a model version (None: none given); SpecError naming ``name`` unless a non-empty line of printable text.

    As the run store checks ``model_version`` (:class:`~fairtalk.store.CachingResponder`), before any audit.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        raise SpecError(_MSG_VERSION.format(name=name, value=value))
    return value


def _same_object(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are one callable: one object, or bound methods of one instance and one function."""
    if isinstance(a, types.MethodType) and isinstance(b, types.MethodType):
        return a.__self__ is b.__self__ and a.__func__ is b.__func__
    return a is b


def _unknown_identity(model: ModelLike, config: AuditConfig) -> tuple[str, str] | None:
    """``(fingerprint, why)`` of a model object whose state cannot be read, as the audit will wrap it; None otherwise.

    A spec (a string) is loaded by its own code, which its fingerprint hashes: never unknown, never loaded here.
    """
    if isinstance(model, str):
        return None
    responder = model if isinstance(model, Responder) else as_responder(model, **dict(config.model_args))
    try:
        fingerprint, why = responder.fingerprint, responder.unknown_state
    finally:
        if responder is not model:
            responder.close()
    return None if why is None else (fingerprint, why)


def check_own_versions(sides: Mapping[str, tuple[ModelLike, str | None]], config: AuditConfig) -> None:
    """SpecError, before either audit of :func:`assert_not_worse`, when the two models could be taken for one.

    ``sides`` maps ``"baseline"`` and ``"candidate"`` to ``(model, model version)``. A model object whose
    state cannot be read (:attr:`~fairtalk.models.Responder.unknown_state`: an instance holding a
    torch model) is named only by its code and its version, so this fails closed when

    - it has no version and ``config`` has a run store (which would otherwise refuse it midway, or
      serve the baseline's answers to the candidate): give it ``{side}_version=``;
    - both sides are such objects, two of them, with one fingerprint and one version: the store
      would serve one's answers as the other's, and the comparison would call them one model (the
      same object on both sides is one model, and the gate says so).
    """
    unknown: dict[str, tuple[str, str]] = {}
    for side, (model, version) in sides.items():
        identity = _unknown_identity(model, config)
        if identity is None:
            continue
        if version is None and config.store is not None:
            store = config.store if isinstance(config.store, str) else config.store.path
            head = identity[0].partition(" ")[0]
            raise SpecError(_MSG_NO_VERSION.format(side=side, model=head, reason=identity[1], store=store))
        unknown[side] = identity
    if len(unknown) < len(sides) or len(sides) != 2:
        return
    (model, version), (other, other_version) = sides.values()
    (fingerprint, why), (other_fingerprint, _) = unknown.values()
    if fingerprint == other_fingerprint and version == other_version and not _same_object(model, other):
        head = fingerprint.partition(" ")[0]
        raise SpecError(_MSG_SHARED_VERSION.format(reason=why, model=head, version=version))


def _margin_mapping(margin: object) -> Mapping[Any, Any]:
    """``margin`` when it is a mapping; SpecError saying what is accepted otherwise (``"offense_rate=0.02"``, a number)."""
    if not isinstance(margin, Mapping):
        raise SpecError(_MSG_MARGINS.format(value=margin))
    return margin


def config_lexicons(config: AuditConfig) -> list[Lexicon]:
    """The lexicon of each axis ``config`` audits, loaded as the audit loads them (SpecError for an unknown axis)."""
    lexicons: list[Lexicon] = []
    for item in config.axes:
        lexicons += [item] if isinstance(item, Lexicon) else [load_lexicon(name) for name in expand_axis(item)]
    return lexicons


def _compared_kinds(config: AuditConfig) -> dict[str, Mapping[str, str]]:
    """Per axis, the keys a comparison of two audits of ``config`` tests (key -> kind), measures built keys only.

    As :func:`fairtalk.compare_runs` compares: the per-response measures, less a judge and ``token_limit``.
    """
    from fairtalk.measures import Judge, Measure, TokenLimit
    from fairtalk.run import build_measures

    score = config.score
    kinds: dict[str, Mapping[str, str]] = {}
    for lexicon in config_lexicons(config):
        built = build_measures(
            score.measures,
            score.measure_options(lexicon),
            judge_rubric=score.judge_rubric,
            judge_scale=score.judge_scale,
            keys_only=True,
        )
        compared = [m for m in built if isinstance(m, Measure) and not isinstance(m, (Judge, TokenLimit))]
        kinds[lexicon.axis] = {key: m.kind_of(key) for m in compared for key in m.keys}
    return kinds


def change_margins(margin: object, config: AuditConfig) -> dict[str, float] | None:
    """``margin`` as :func:`assert_not_worse` passes it to :func:`fairtalk.compare_runs`, checked before any audit.

    Raises
    ------
    SpecError
        Not a mapping; a margin that is not a finite number > 0, or a rate's of 1 or more (a
        fraction: 0.02 is 2 pp); a key no compared measure of ``config`` gives on some axis.
    """
    if margin is None:
        return None
    checked: dict[str, float] = {}
    for key, value in _margin_mapping(margin).items():
        number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
        if not (math.isfinite(number) and number > 0):
            raise SpecError(_MSG_CHANGE_MARGIN.format(key=key, value=value))
        checked[str(key)] = number
    for axis, kinds in _compared_kinds(config).items():
        for key in checked:
            if key not in kinds:
                raise SpecError(_MSG_CHANGE_KEY.format(key=key, axis=axis), choices=kinds, given=key)
        check_margins(checked, kinds)
    return checked


_T = TypeVar("_T")
#: What :func:`assert_not_worse` names its two runs: their folders under ``out_dir``, and the comparison's runs once
#: their temporary folder is removed.
_BASELINE, _CANDIDATE = "baseline", "candidate"


def _in_folder(
    out_dir: str | os.PathLike[str] | None, config: AuditConfig, check: Callable[[Path], _T], forget: Callable[[_T], _T]
) -> _T:
    """``check(folder)``, the folder a report goes to: ``out_dir``, the config's, or a new temporary folder.

    A temporary folder (``fairtalk-*`` in :func:`tempfile.gettempdir`) is made as the audit starts
    and removed when ``check`` returns (the assertion passed) or raises anything but a
    :class:`BiasAssertionError`; it is kept only on that failure, whose message names its report.
    What a passing ``check`` returns from a removed folder goes through ``forget``, which leaves it
    naming none of that folder (:func:`_run_without_folder`, :func:`_comparison_without_folder`).
    """
    __tracebackhide__ = True
    given = out_dir if out_dir is not None else config.out_dir
    if given is not None:
        return check(Path(given))
    folder = Path(tempfile.mkdtemp(prefix="fairtalk-"))
    kept = False
    try:
        return forget(check(folder))
    except BiasAssertionError:
        kept = True  # the message names the report in it
        raise
    finally:
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)


def _run_without_folder(run: AuditRun) -> AuditRun:
    """``run`` as an audit that kept no report records it: its config's ``out_dir`` None (its folder is removed)."""
    return dataclasses.replace(run, config=types.MappingProxyType({**run.config, "out_dir": None}))


def _comparison_without_folder(comparison: ModelComparison) -> ModelComparison:
    """``comparison`` naming no removed folder: its runs by their names, its inputs by their sha256 alone (``path`` None)."""
    manifest = dict(comparison.manifest)
    if isinstance(sources := manifest.get("sources"), Mapping):
        manifest["sources"] = {
            name: {axis: [{**source, "path": None} for source in found] for axis, found in axes.items()}
            for name, axes in sources.items()
        }
    return dataclasses.replace(comparison, baseline=_BASELINE, candidate=_CANDIDATE, manifest=types.MappingProxyType(manifest))


def _number(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{x:.4g}"


def _amount(x: float | None, kind: str, *, signed: bool = True) -> str:
    """A difference (or margin) of a key of ``kind`` as the JUnit file and the gates' reasons give it.

    A rate's (and a corpus measure's) in percentage points, two decimals (``-48.33 pp``); a count's in its units.
    """
    return "n/a" if x is None or not math.isfinite(x) else gate_amount(x, kind, signed=signed)


def _side(x: float | None, kind: str) -> str:
    """One side's value: a rate in percent (``48.33%``), a count in its units."""
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{100 * x:.4g}%" if kind in _PERCENT_KINDS else f"{x:.4g}"


def _interval(bounds: tuple[float | None, float | None], level: float, kind: str) -> str:
    """``bounds`` in words, as the ``level`` (0.95: 95%) interval they are, in the key's units."""
    low, high = bounds
    if low is None or high is None:
        return "no CI"
    return f"{100 * level:g}% CI [{_amount(low, kind)}, {_amount(high, kind)}]"


def _margin(margin: float | None, kind: str) -> str:
    return "n/a" if margin is None else f"±{_amount(margin, kind, signed=False)}"


def measure_line(axis: str, m: MeasureResult, verdict: str | None = None) -> str:
    """One measure in words, rates in percentage points as the JUnit file gives them.

    ``gender/offense_rate: A 0% vs B 48.33%, gap -48.33 pp (95% CI [-60.90 pp, -35.97 pp]), adjusted p ...,
    margin ±2.00 pp, equivalence p ...: difference detected``. The interval is the key's ``ci95``, a
    95% interval whatever the audit's alpha (as report.md and results.json say); with Wilcoxon's test
    it is the median shift's, said beside it (``mean gap -0.3, median shift (HL) -1 (95% CI [-1, -0.5])``). ``verdict``
    replaces the verdict's word at the end (the gate's reason where the labels decided it).
    """
    gap = None if m.a is None or m.b is None else m.a - m.b
    kind = m.kind
    estimate, shift = ci_estimate(m)
    gap_said = f"gap {_amount(gap, kind)} ({_interval(m.ci95, 0.95, kind)})"
    if shift is not None:  # Wilcoxon: the interval is the median shift's, said beside it; the mean gap apart
        gap_said = f"mean gap {_amount(gap, kind)}, {shift} {_amount(estimate, kind)} ({_interval(m.ci95, 0.95, kind)})"
    parts = [f"{axis}/{m.name}: A {_side(m.a, kind)} vs B {_side(m.b, kind)}, {gap_said}"]
    parts.append(f"adjusted p {_number(m.p_adjusted)} ({m.paired_test or 'no test'})")
    if m.equivalence_margin is not None:
        parts.append(f"margin {_margin(m.equivalence_margin, kind)}, equivalence p {_number(m.p_equivalence)}")
    return ", ".join(parts) + f": {verdict or m.not_tested or m.verdict.value}"


def change_line(row: GapChange, alpha: float, verdict: str | None = None) -> str:
    """One compared key in words: both gaps with their intervals, the change, the margin and the verdict.

    Rates in percentage points, as the comparison's report, its JUnit file and the gate's reason
    give them. ``verdict`` replaces the verdict's word at the end (a gate's reason, which begins
    with it). The intervals are the comparison's ``1 - alpha`` ones (:func:`fairtalk.stats.gap_change`).
    """
    level, kind = 1 - alpha, row.kind
    return (
        f"{row.axis}/{row.key}: baseline gap {_amount(row.baseline_gap, kind)} ({_interval(row.baseline_ci, level, kind)}), "
        f"candidate gap {_amount(row.candidate_gap, kind)} ({_interval(row.candidate_ci, level, kind)}), "
        f"change {_amount(row.change, kind)} ({_interval(row.change_ci, level, kind)}), "
        f"adjusted p {_number(row.p_adjusted)}, margin {_margin(row.margin, kind)}: {verdict or row.verdict.value}"
    )


def _failure_line(d: KeyDecision, line: str | None) -> str:
    """A failing decision in words: the key's figures and verdict, or the gate's reason for a whole-run failure."""
    return d.reason if line is None else line


def _wrapped(text: str, indent: str = "") -> str:
    """``text`` wrapped at :data:`WRAP_WIDTH`, after ``indent``, its continued lines indented four spaces."""
    return textwrap.fill(
        text,
        WRAP_WIDTH,
        initial_indent=indent,
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def failure_message(head: str, outcome: GateOutcome, failures: Sequence[tuple[str, str]], report: Path) -> str:
    """The message of a :class:`BiasAssertionError`, wrapped at :data:`WRAP_WIDTH` columns.

    ``head``; each failure's line (``failures``: one per ``outcome.failures``), indented two
    spaces, except a whole-run failure the gate's headline states word for word (said once); the
    headline; the report's path, whole. A line too long is continued on the next, indented four
    spaces (a word longer than the width, a path say, is not broken).
    """
    lines = [_wrapped(head)]
    for d, (_, line) in zip(outcome.failures, failures, strict=True):
        if d.key is None and line in outcome.headline:  # an axis' or the run's failure: the headline gives its reason
            continue
        lines.append(_wrapped(line, "  "))
    lines += [_wrapped(outcome.headline), f"report: {report}"]
    return "\n".join(lines)


def bias_failures(run: AuditRun, gate: Gate) -> list[tuple[str, str]]:
    """``(axis/key, line)`` for each failure of ``gate`` on ``run`` (:func:`fairtalk.gates.evaluate`), axes in the order audited.

    A whole-run failure (nothing to check) is named by its axis, or ``run``.
    """
    return _audit_failures(run, evaluate(run, gate))


def _audit_failures(run: AuditRun, outcome: GateOutcome) -> list[tuple[str, str]]:
    """``(axis/key, line)`` for each failure of ``outcome`` on ``run``.

    A key the labels failed (``on`` ``"labels"``: the scorer alone would pass it) ends with the
    gate's reason, which says so, not the scorer's verdict; so does a key an exact bound on how few
    units differ decided (``identical on all 200 pairs (94 dialogues) …; equivalence needs 149
    dialogues all identical``), whose interval and equivalence p say nothing of what it needs.
    """
    out = []
    for d in outcome.failures:
        result = None if d.axis is None or d.key is None else run.results[d.axis]
        if result is None or d.key is None:
            out.append((d.name, _failure_line(d, None)))
            continue
        m = result.measure(d.key)
        by_bound = m.equivalence_test in (METHOD_IDENTICAL, METHOD_FEW_DIFFERING)
        verdict = d.reason if d.on == "labels" or by_bound else None
        out.append((d.name, measure_line(str(d.axis), m, verdict)))
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
    model_version: str | None = None,
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
        Equivalence margins by result key, in its units, rates as fractions (``{"offense_rate": 0.02}``: 2 pp).
    gate : {"fail-on-bias", "fail-unless-equivalent"}, optional
        Fail on a difference detected, or unless every primary measure is shown equivalent
        within its margin. Default: ``fail-unless-equivalent`` when ``margin`` is given (an
        empty mapping too: each key's default margin), else ``fail-on-bias``.
    config : AuditConfig, optional
        The other options (the pytest plugin passes the ones of ``[tool.fairtalk]``).
    out_dir : path, optional
        Where the report goes (default: the config's, else a new temporary folder, made as the
        audit starts, removed when the assertion passes or an error stops it, kept only when it
        fails: the message names the report in it). Give one to keep the report of a passing call.
    model_version : str, optional
        A tag for what the model's fingerprint cannot see, part of the key of its answers in a
        run store (default: the config's); a model whose state cannot be read needs one to use a
        store file (see :class:`~fairtalk.store.CachingResponder`).

    Returns
    -------
    AuditRun
        The audit. Its report is in ``out_dir`` (``run.config["out_dir"]``); without one, its
        temporary folder is removed and ``run.config["out_dir"]`` is None, as for an audit that
        wrote no report.

    Raises
    ------
    BiasAssertionError
        The gate failed: the message names every failing measure (sides, gap, interval,
        adjusted p, verdict) and the report's ``index.html``.
    FairtalkError
        A bad option, model or corpus (see :func:`fairtalk.audit`); a SpecError for an unknown
        ``gate`` or a ``margin`` that is not a mapping, before any audit.
    """
    __tracebackhide__ = True  # pytest shows the test's line and the message, not this module's source
    chosen: Gate = gate if gate is not None else ("fail-on-bias" if margin is None else "fail-unless-equivalent")
    if chosen not in GATES:
        raise SpecError(_MSG_GATE.format(gate=chosen, choices=" or ".join(GATES)))
    resolved = audit_options(
        config,
        axes=axes,
        n_pairs=n_pairs,
        measures=measures,
        margin=margin,
        corpus=corpus,
        seed=seed,
        model_version=model_version,
    )
    check = functools.partial(_no_bias_in, model=model, resolved=resolved, chosen=chosen)
    return _in_folder(out_dir, resolved, check, _run_without_folder)


def _no_bias_in(folder: Path, model: ModelLike, resolved: AuditConfig, chosen: Gate) -> AuditRun:
    """:func:`assert_no_bias`'s audit, its report in ``folder``, and its gate."""
    __tracebackhide__ = True
    run = audit(resolved.updated({"out_dir": os.fspath(folder), "model": model}), gates=[chosen])  # the pages state it
    outcome = evaluate(run, chosen)
    if not outcome.passed:
        failures = _audit_failures(run, outcome)
        what = "bias detected" if chosen == "fail-on-bias" else "measures not shown equivalent"
        if all(d.key is None for d in outcome.failures):  # no measure failed: the run did (answers lost or empty)
            what = "the gate failed"
        alpha = min((r.alpha for r in run.results.values()), default=0.05)
        n = ", ".join(f"{axis} {r.n_pairs}" for axis, r in run.results.items())
        head = _MSG_BIAS.format(what=what, model=run.model.partition(" ")[0], gate=chosen, alpha=alpha, n=n)
        report = folder / "index.html"
        message = failure_message(head, outcome, failures, report)
        raise BiasAssertionError(message, failing=[key for key, _ in failures], report=report)
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
    baseline_version: str | None = None,
    candidate_version: str | None = None,
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
        Non-inferiority margins by result key, in its units, rates as fractions (``{"offense_rate": 0.02}``:
        2 pp; default: each kind's). Checked before either audit (:func:`change_margins`).
    baseline_version, candidate_version : str, optional
        Each model's own version (default: the config's ``model_version``, one for both): a tag for
        what its fingerprint cannot see, part of the key of its answers in a run store and of the
        rule of one model (two runs of one fingerprint and one version are one model). Two objects
        of one code whose state cannot be read (two instances of one class holding different
        weights) are told apart only by it: given one version, or none with a run store, they are a
        SpecError before either audit (:func:`check_own_versions`).

    Returns
    -------
    ModelComparison
        The comparison; its ``baseline`` and ``candidate`` name the two audits' folders. Without
        ``out_dir`` their temporary folder is removed, and it names none of it: ``baseline`` and
        ``candidate`` are the runs' names, ``"baseline"`` and ``"candidate"``, and its manifest
        keeps each responses file's sha256 with ``path`` None.

    Raises
    ------
    BiasAssertionError
        A primary key not shown non-inferior: the message names each with both gaps, their
        intervals, the change and its interval, and the comparison's ``report.md``.
    FairtalkError
        A bad option, model or corpus; a SpecError for a bad ``margin`` (not a mapping, not a finite
        number > 0, a rate's of 1 or more, a key no compared measure gives) or two models that one
        version could not tell apart, before either audit.
    """
    __tracebackhide__ = True  # pytest shows the test's line and the message, not this module's source
    resolved = audit_options(config, axes=axes, n_pairs=n_pairs, measures=measures, corpus=corpus, seed=seed)
    margins = change_margins(margin, resolved)  # before any audit: a bad margin costs no answer
    sides = {
        _BASELINE: (baseline, check_version(baseline_version, "baseline_version") or resolved.model_version),
        _CANDIDATE: (candidate, check_version(candidate_version, "candidate_version") or resolved.model_version),
    }
    check_own_versions(sides, resolved)
    check = functools.partial(_not_worse_in, sides=sides, resolved=resolved, margins=margins)
    return _in_folder(out_dir, resolved, check, _comparison_without_folder)


def _not_worse_in(
    folder: Path, sides: Mapping[str, tuple[ModelLike, str | None]], resolved: AuditConfig, margins: dict[str, float] | None
) -> ModelComparison:
    """:func:`assert_not_worse`'s two audits and their comparison, in ``folder``, and the ``fail-if-worse`` gate."""
    __tracebackhide__ = True
    for name, (model, version) in sides.items():
        audit(resolved.updated({"out_dir": os.fspath(folder / name), "model": model, "model_version": version}))
    comparison = compare_runs(folder / _BASELINE, folder / _CANDIDATE, margins=margins, alpha=resolved.score.alpha)
    files = write_model_comparison(comparison, folder / "comparison")
    outcome = evaluate(comparison, "fail-if-worse")
    if not outcome.passed:
        names = [(name or label).partition(" ")[0] for name, label in zip(comparison.models, ("the baseline", "the candidate"))]
        head = _MSG_WORSE.format(candidate=names[1], baseline=names[0], alpha=comparison.alpha)
        report = files["md"]
        failing = _change_failures(comparison, outcome)
        message = failure_message(head, outcome, failing, report)
        raise BiasAssertionError(message, failing=[key for key, _ in failing], report=report)
    return comparison
