"""JUnit XML and a CI job summary of an audit: one testsuite per axis, one testcase per primary measure.

CI systems (GitHub Actions, GitLab, Jenkins, Azure) show a JUnit file as a test report, so a
release gate reads like a failing test. The gate is decided by :func:`fairtalk.gates.evaluate`
and only rendered here: a primary measure's testcase fails exactly when the gate's decision on it
failed, and each whole-run failure (nothing to check, an axis only the baseline holds) is a failing
testcase of its own, so the file never shows 0 failures when the gate failed. The failure message
holds the two sides, the gap with its interval, the adjusted p and the gate's reason. Secondary
measures are testcases that never fail (their verdict is in ``system-out``). An axis with lost
or empty answers carries their counts as its testsuite's properties (``lost_answers``,
``n_lost_a``, ``n_lost_b``, ``n_lost_both``, ``n_lost_unknown``; ``empty_answers``,
``n_empty_a``, ``n_empty_b``, ``n_empty_both``; a comparison's, the candidate's, prefixed ``candidate_``).

:func:`step_summary` renders the same audit as the Markdown a GitHub job summary shows
(``$GITHUB_STEP_SUMMARY``): the plain-language findings and each axis' table;
:func:`comparison_step_summary` does the same for a model comparison (``fairtalk compare``).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from fairtalk.files import write_text_atomic
from fairtalk.gates import Gate, GateOutcome, evaluate
from fairtalk.report._markdown import md_escape, render_markdown
from fairtalk.report._model_comparison import comparison_rows, gate_lines
from fairtalk.report._plain_summary import plain_summary
from fairtalk.report._table import ci_estimate, decided_by, format_p, gate_amount, is_percent, measure_label
from fairtalk.results import AuditResult, MeasureResult, ModelComparison, PairLosses

__all__ = [
    "comparison_junit_xml",
    "comparison_step_summary",
    "error_junit_xml",
    "is_junit_file",
    "junit_xml",
    "step_summary",
    "write_junit",
]

#: One gate or several (``--fail-on-bias`` and ``--fail-unless-equivalent`` given together).
Gates = Gate | str | Sequence[Gate | str]


def _amount(x: float | None, m: MeasureResult) -> str:
    return "n/a" if x is None else gate_amount(x, m.kind)


def _message(axis: str, groups: tuple[str, str], m: MeasureResult, alpha: float, labels: tuple[str, ...] = ()) -> str:
    """A measure's testcase message; where a gate failed it on its labels (``labels``), what they show comes first.

    The verdict beside it is then the scorer's, and said so: a failure on the labels is never
    worded as the scorer's ``equivalent`` or ``difference detected``.
    """
    low, high = m.ci95
    interval = "no interval" if low is None or high is None else f"95% CI [{_amount(low, m)}, {_amount(high, m)}]"
    estimate, shift = ci_estimate(m)
    gap = f"gap {_amount(m.a - m.b, m)}, {interval}"
    if shift is not None:  # Wilcoxon: the interval is the median shift's, said beside it; the mean gap apart
        gap = f"mean gap {_amount(m.a - m.b, m)}; {shift} {_amount(estimate, m)}, {interval}"
    side = "%" if is_percent(m) else ""
    a, b = (100 * m.a, 100 * m.b) if is_percent(m) else (m.a, m.b)
    test = f" ({m.paired_test})" if m.paired_test else ""
    method = (m.equivalence_test or "equivalence").split(": ")[-1]  # "identical answers: exact binomial bound …"
    equivalence = f", {'TOST' if method.startswith('TOST') else method} p "
    verdict = m.verdict.value if not labels else "; ".join(labels) + f"; the scorer: {m.verdict.value}"
    return (
        f"{axis}: {measure_label(m.name)}: {verdict}; {groups[0]} {a:.4g}{side} vs {groups[1]} {b:.4g}{side}, "
        f"{gap}, adjusted p {format_p(m.p_adjusted)}{test}"
        + ("" if m.equivalence_margin is None else f", margin ±{_amount(m.equivalence_margin, m).lstrip('+')}")
        + ("" if m.p_equivalence is None else f"{equivalence}{format_p(m.p_equivalence)}")
        + (f"; equivalence: {decided}" if (decided := decided_by(m, alpha)) else "")
    )


def _gates(gate: Gates) -> tuple[Gate | str, ...]:
    """``gate`` as a tuple of gates (a name is one gate; SpecError for an unknown one, by :func:`evaluate`)."""
    return (gate,) if isinstance(gate, str) else tuple(gate)


def _outcomes(results: Mapping[str, AuditResult] | ModelComparison, gate: Gates) -> tuple[GateOutcome, ...]:
    """The decision of each gate in force on ``results`` (a comparison's gate is ``fail-if-worse``)."""
    if isinstance(results, ModelComparison):
        return (evaluate(results, Gate.FAIL_IF_WORSE),)
    return tuple(evaluate(results, g) for g in _gates(gate))


def _case(
    suite: ET.Element, classname: str, name: str, message: str, failed: list[tuple[Gate, str]], notes: tuple[str, ...]
) -> None:
    """One testcase: failing (typed by the gates that failed it, their reasons in its text) or passing with its message."""
    case = ET.SubElement(suite, "testcase", classname=classname, name=name)
    if failed:
        reasons = tuple(f"{gate}: {reason}" for gate, reason in failed)
        failure = ET.SubElement(case, "failure", message=message, type=",".join(gate.value for gate, _ in failed))
        failure.text = "\n".join((message, *reasons, *notes))
    else:
        ET.SubElement(case, "system-out").text = message


def _failed(outcomes: tuple[GateOutcome, ...], axis: str, key: str) -> list[tuple[Gate, str]]:
    """(gate, reason) of each gate whose decision on ``key`` of ``axis`` failed."""
    out = []
    for outcome in outcomes:
        decision = outcome.decision(axis, key)
        if decision is not None and not decision.passed:
            out.append((outcome.gate, decision.reason))
    return out


def _on_labels(outcomes: tuple[GateOutcome, ...], axis: str, key: str) -> tuple[str, ...]:
    """What the labels showed, once each, where a gate failed ``key`` of ``axis`` on them (``KeyDecision.on`` "labels")."""
    found = (outcome.decision(axis, key) for outcome in outcomes)
    return tuple(dict.fromkeys(d.labels for d in found if d is not None and not d.passed and d.on == "labels"))


def _run_suite(suites: ET.Element, name: str, outcomes: tuple[GateOutcome, ...]) -> int:
    """A testsuite ``NAME.gate`` of the whole-run failures, one failing testcase per name; how many it holds.

    A failure that several gates find (pairs lost on one side, under both audit gates) is one
    testcase typed by each, as a measure's is. Its message is the rule's finding, not a gate's
    headline: the file is also written with no gate requested (its testcases then follow a rule
    that does not set the exit code).
    """
    by_name: dict[str, list[tuple[GateOutcome, str]]] = {}
    for outcome in outcomes:
        for d in outcome.run_failures:
            by_name.setdefault(d.name, []).append((outcome, d.reason))
    if by_name:
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"{name}.gate",
            tests=str(len(by_name)),
            failures=str(len(by_name)),
            errors="0",
            skipped="0",
        )
        for case, found in by_name.items():
            message = "; ".join(f"{outcome.gate} rule: {outcome.finding}" for outcome, _ in found)
            _case(suite, f"{name}.gate", case, message, [(outcome.gate, reason) for outcome, reason in found], ())
    return len(by_name)


#: How every JUnit file fairtalk writes begins (the root's first attribute is its name, ``fairtalk`` or ``fairtalk.…``).
_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n'
_ROOT = '<testsuites name="fairtalk'


def is_junit_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a JUnit file as fairtalk writes them: a regular file opening with its ``<testsuites name="fairtalk…">``.

    What ``--junit`` may replace; any other file (a report, a results.json, the user's own XML)
    is not.
    """
    start = (_HEAD + _ROOT).encode("utf-8")
    if not os.path.isfile(path):  # a FIFO is never opened: it would wait for a writer
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(start) + 1)
    except OSError:
        return False
    return head.startswith(start) and head[len(start) :][:1] in (b'"', b".")


def _document(suites: ET.Element, n_tests: int, n_failures: int) -> str:
    suites.set("tests", str(n_tests))
    suites.set("failures", str(n_failures))
    ET.indent(suites)
    return _HEAD + ET.tostring(suites, encoding="unicode") + "\n"


def _pair_properties(suite: ET.Element, losses: PairLosses | None, empties: PairLosses | None, who: str = "") -> None:
    """The axis' lost and empty answers as the suite's properties, whenever there are any (a gate passing on them shows them too).

    ``lost_answers`` says the pairs lost (a side failed, was dropped empty or is missing) in words;
    ``n_lost_a``, ``n_lost_b``, ``n_lost_both`` count the pairs whose side a (b, both) was lost, and
    ``n_lost_unknown`` those whose side a result written before it was recorded does not say.
    ``empty_answers``, ``n_empty_a``, ``n_empty_b``, ``n_empty_both`` count the pairs measured with
    side a (b, both) empty. ``who`` prefixes the names (``candidate_``).
    """
    counts = []
    if losses is not None:
        counts += [
            ("lost_answers", losses.describe()),
            ("n_lost_a", str(losses.lost_a)),
            ("n_lost_b", str(losses.lost_b)),
            ("n_lost_both", str(losses.both)),
            ("n_lost_unknown", str(losses.unknown)),
        ]
    if empties is not None:
        counts += [
            ("empty_answers", empties.describe()),
            ("n_empty_a", str(empties.lost_a)),
            ("n_empty_b", str(empties.lost_b)),
            ("n_empty_both", str(empties.both)),
        ]
    if not counts:
        return
    properties = ET.SubElement(suite, "properties")
    for name, value in counts:
        ET.SubElement(properties, "property", name=f"{who}{name}", value=value)


def _audit_suites(
    suites: ET.Element, results: Mapping[str, AuditResult], outcomes: tuple[GateOutcome, ...], name: str
) -> tuple[int, int]:
    """One testsuite per axis of an audit, a testcase per measure; (testcases, failing ones)."""
    n_tests = n_failures = 0
    for axis, result in results.items():
        cases = [(m, _failed(outcomes, axis, m.name)) for m in result.measures]
        failing = sum(1 for _, failed in cases if failed)
        suite = ET.SubElement(
            suites, "testsuite", name=f"{name}.{axis}", tests=str(len(cases)), failures=str(failing), errors="0", skipped="0"
        )
        _pair_properties(suite, result.losses, result.empties)
        for m, failed in cases:
            message = _message(axis, result.groups, m, result.alpha, _on_labels(outcomes, axis, m.name)) + (
                "" if m.primary or failed else " (secondary: outside the gate)"
            )
            _case(suite, f"{name}.{axis}", m.name, message, failed, m.notes)
        n_tests += len(cases)
        n_failures += failing
    n_run = _run_suite(suites, name, outcomes)
    return n_tests + n_run, n_failures + n_run


def _comparison_suites(suites: ET.Element, comparison: ModelComparison, name: str) -> tuple[int, int]:
    """One testsuite per axis of a comparison, a testcase per key under ``--fail-if-worse``; (testcases, failing ones)."""
    outcomes = _outcomes(comparison, Gate.FAIL_IF_WORSE)
    n_tests = n_failures = 0
    compared = {(row.axis, row.key) for row in comparison.changes}
    for axis in dict.fromkeys([row.axis for row in comparison.changes] + [a.axis for a in comparison.axes]):
        shown = {(r.axis, r.key): r for r in comparison_rows(comparison)}  # the report's figures, rates in pp
        rows = [(row, _failed(outcomes, axis, row.key)) for row in comparison.changes if row.axis == axis]
        # a primary key the gate decides that has no compared row (the baseline did not measure it)
        unrowed = [d for d in outcomes[0].decisions if d.axis == axis and (axis, d.key) not in compared]
        failing = sum(1 for _, failed in rows if failed) + sum(1 for d in unrowed if not d.passed)
        if not rows and not unrowed:
            continue
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"{name}.{axis}",
            tests=str(len(rows) + len(unrowed)),
            failures=str(failing),
            errors="0",
            skipped="0",
        )
        compared_axis = next((a for a in comparison.axes if a.axis == axis), None)
        if compared_axis is not None:
            _pair_properties(suite, compared_axis.candidate_losses, compared_axis.candidate_empties, "candidate_")
        for d in unrowed:
            _case(
                suite,
                f"{name}.{axis}",
                str(d.key),
                f"{axis}: {d.key}: {d.reason}",
                [] if d.passed else [(outcomes[0].gate, d.reason)],
                (),
            )
        for row, failed in rows:
            f = shown[row.axis, row.key]
            unit = f" {f.unit}" if f.unit else ""  # as the gate's reason beside it: "pp"
            message = (
                f"{axis}: {row.key}: {row.verdict.value}; baseline gap {f.baseline}{unit}, candidate gap "
                f"{f.candidate}{unit}, change {f.change}{unit} {f.change_ci}, p (size changed) {f.p_magnitude}, "
                f"adjusted {f.p_adjusted}, margin {'n/a' if row.margin is None else f'±{f.margin}{unit}'}"
            )
            _case(suite, f"{name}.{axis}", row.key, message, failed, row.notes)
        n_tests += len(rows) + len(unrowed)
        n_failures += failing
    n_run = _run_suite(suites, name, outcomes)
    return n_tests + n_run, n_failures + n_run


def junit_xml(
    results: Mapping[str, AuditResult],
    *,
    gate: Gates = Gate.FAIL_ON_BIAS,
    name: str = "fairtalk",
    comparison: ModelComparison | None = None,
) -> str:
    """The JUnit XML of an audit's results (axis -> result) under ``gate`` (one gate, or several at once).

    A primary measure's testcase fails when a gate's decision (:func:`fairtalk.gates.evaluate`) on
    it failed; each whole-run failure is a failing testcase in the suite ``NAME.gate``. With
    ``comparison`` (``audit --baseline-model --fail-if-worse``), its ``--fail-if-worse`` testcases
    follow in the suites ``NAME.compare.AXIS``; the audit's testcases are left out when ``gate`` is
    empty (no audit gate requested).

    Examples
    --------
    >>> junit_xml({}).count("<failure")  # nothing to check: the gate fails closed
    1
    """
    suites = ET.Element("testsuites", name=name)
    n_tests = n_failures = 0
    if comparison is None or _gates(gate):
        n_tests, n_failures = _audit_suites(suites, results, _outcomes(results, gate), name)
    if comparison is not None:
        more_tests, more_failures = _comparison_suites(suites, comparison, f"{name}.compare")
        n_tests, n_failures = n_tests + more_tests, n_failures + more_failures
    return _document(suites, n_tests, n_failures)


def comparison_junit_xml(comparison: ModelComparison, *, name: str = "fairtalk.compare") -> str:
    """The JUnit XML of a comparison: a testcase per key, failing where ``--fail-if-worse``'s decision on it failed."""
    suites = ET.Element("testsuites", name=name)
    return _document(suites, *_comparison_suites(suites, comparison, name))


#: Characters XML 1.0 cannot hold (an error line may quote what a model or a file gave): each becomes U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def error_junit_xml(message: str, *, command: str, kind: str = "error", name: str = "fairtalk") -> str:
    """The JUnit XML of a command that stopped before its gates decided: one testcase in error, holding ``message``.

    What ``--junit FILE`` holds when the command ends on an error (a usage or input error, an
    internal error) or is interrupted, so a CI report shows the run errored, never an earlier
    run's pass. ``command`` names the testcase (``fairtalk audit``), ``kind`` types the error
    (``error``, ``internal error``, ``interrupted``), ``name`` the root (``fairtalk``,
    ``fairtalk.compare``); the testsuite is ``NAME.run``.

    Examples
    --------
    >>> text = error_junit_xml("error: no such file: bot.py", command="fairtalk audit")
    >>> 'errors="1"' in text and 'failures="0"' in text and "<error " in text
    True
    """
    text = _NOT_XML.sub("\ufffd", message.strip()) or kind
    suites = ET.Element("testsuites", name=name, errors="1")
    suite = ET.SubElement(suites, "testsuite", name=f"{name}.run", tests="1", failures="0", errors="1", skipped="0")
    case = ET.SubElement(suite, "testcase", classname=f"{name}.run", name=command)
    ET.SubElement(case, "error", message=text.splitlines()[0], type=kind).text = text
    return _document(suites, 1, 0)


def write_junit(
    results: Mapping[str, AuditResult] | ModelComparison,
    path: str | os.PathLike[str],
    *,
    gate: Gates = Gate.FAIL_ON_BIAS,
    comparison: ModelComparison | None = None,
) -> Path:
    """Write the JUnit XML of an audit's results under ``gate`` (or of a comparison) to ``path`` atomically; return it.

    ``comparison``: an audit's comparison with its baseline model, whose ``--fail-if-worse``
    testcases the file holds too (:func:`junit_xml`).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(results, ModelComparison):
        text = comparison_junit_xml(results)
    else:
        text = junit_xml(results, gate=gate, comparison=comparison)
    write_text_atomic(target, text)
    return target


def _gate_line(outcome: GateOutcome) -> str:
    """The job summary's line of a gate: its headline, in bold."""
    return f"**{md_escape(outcome.headline)}**\n"


def _rule_line(outcome: GateOutcome) -> str:
    """The job summary's line when no gate was requested but a JUnit file was written: which rule its testcases follow."""
    return (
        f"_No gate was requested, so the exit code does not depend on one. The JUnit file's testcases follow the "
        f"{outcome.gate} rule; under it: {md_escape(outcome.finding)}._\n"
    )


def step_summary(
    results: Mapping[str, AuditResult], *, gate: Gates = Gate.FAIL_ON_BIAS, junit_rule: Gate | str | None = None
) -> str:
    """The Markdown of a CI job summary: the outcome of each gate in ``gate`` (its headline), then per axis its findings and table.

    ``gate`` holds the gates requested (none: no gate line). ``junit_rule``, given when a JUnit
    file was written with no gate requested, is the rule its testcases follow: a line says so,
    without calling it the run's gate.
    """
    parts = [_gate_line(outcome) for outcome in _outcomes(results, gate)]
    if junit_rule is not None:
        parts.append(_rule_line(evaluate(results, junit_rule)))
    for result in results.values():
        findings = "\n".join(f"- {sentence}" for sentence in plain_summary(result))
        table = render_markdown(result).split("\n", 2)[2]  # the report without its title line
        parts.append(f"## fairtalk: {result.axis}\n\n{findings}\n\n<details><summary>table</summary>\n\n{table}\n</details>\n")
    return "\n".join(parts)


def comparison_step_summary(comparison: ModelComparison, *, gated: bool = True, junit: bool = False) -> str:
    """The Markdown of a CI job summary of a comparison: its findings, then per axis both gaps and the change.

    ``--fail-if-worse``'s headline is shown when ``gated`` (the gate was requested); else, with
    ``junit`` (a JUnit file was written), a line says its testcases follow that rule.
    """
    level = f"{1 - comparison.alpha:.0%}"
    (outcome,) = _outcomes(comparison, Gate.FAIL_IF_WORSE)
    findings = "\n".join(f"- {md_escape(line)}" for line in gate_lines(comparison, gated=False))
    opening = _gate_line(outcome) if gated else _rule_line(outcome) if junit else ""
    lines = [
        f"## fairtalk compare: {md_escape(comparison.candidate)} against {md_escape(comparison.baseline)}",
        "",
        opening,
        findings,
        "",
        "<details><summary>table</summary>",
        "",
        "Rates in percentage points, counts in their units.",
        "",
        f"| Axis | Measure | Baseline gap | Candidate gap | Change ({level} CI) | p (size changed, adj.) | Non-inferior | Verdict |",
        "| --- | --- |" + " ---: |" * 4 + " --- | --- |",
    ]
    for row in comparison_rows(comparison):
        cells = (
            row.axis,
            row.label + ("" if row.primary else " (secondary)"),
            row.baseline,
            row.candidate,
            f"{row.change} {row.change_ci}",
            row.p_adjusted,
            row.non_inferior,
            row.verdict,
        )
        lines.append("| " + " | ".join(md_escape(c) for c in cells) + " |")
    return "\n".join([*lines, "", "</details>", ""])
