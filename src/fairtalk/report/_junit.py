"""JUnit XML and a CI job summary of an audit: one testsuite per axis, one testcase per primary measure.

CI systems (GitHub Actions, GitLab, Jenkins, Azure) show a JUnit file as a test report, so a
release gate reads like a failing test. A testcase fails when the gate in force fails on its
measure: under ``fail-on-bias`` a detected difference, under ``fail-unless-equivalent`` any
primary measure not shown equivalent. The failure message holds the two sides, the gap with its
interval and the adjusted p. Secondary measures are testcases that never fail (their verdict is
in ``system-out``).

:func:`step_summary` renders the same audit as the Markdown a GitHub job summary shows
(``$GITHUB_STEP_SUMMARY``): the plain-language findings and each axis' table;
:func:`comparison_step_summary` does the same for a model comparison (``fairtalk compare``).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from fairtalk.files import write_text_atomic
from fairtalk.report._markdown import md_escape, render_markdown
from fairtalk.report._model_comparison import comparison_rows, gate_lines
from fairtalk.report._plain_summary import plain_summary
from fairtalk.report._table import format_p, is_percent, measure_label
from fairtalk.results import AuditResult, MeasureResult, ModelComparison, Verdict

__all__ = ["GATES", "comparison_junit_xml", "comparison_step_summary", "junit_xml", "step_summary", "write_junit"]

Gate = Literal["fail-on-bias", "fail-unless-equivalent"]
#: The gates a testcase can fail under.
GATES: tuple[Gate, ...] = ("fail-on-bias", "fail-unless-equivalent")
_MSG_GATE = "unknown gate {gate!r}; choose from: fail-on-bias, fail-unless-equivalent"


def _amount(x: float | None, m: MeasureResult) -> str:
    if x is None:
        return "n/a"
    return f"{100 * x:+.2f} pp" if is_percent(m) else f"{x:+.4g}"


def _fails(m: MeasureResult, gate: Gate) -> bool:
    if not m.primary:
        return False
    if gate == "fail-on-bias":
        return m.verdict is Verdict.DIFFERENT
    return m.verdict is not Verdict.EQUIVALENT


def _message(axis: str, groups: tuple[str, str], m: MeasureResult) -> str:
    low, high = m.ci95
    interval = "no interval" if low is None or high is None else f"95% CI [{_amount(low, m)}, {_amount(high, m)}]"
    side = "%" if is_percent(m) else ""
    a, b = (100 * m.a, 100 * m.b) if is_percent(m) else (m.a, m.b)
    return (
        f"{axis}: {measure_label(m.name)}: {m.verdict.value}; {groups[0]} {a:.4g}{side} vs {groups[1]} {b:.4g}{side}, "
        f"gap {_amount(m.a - m.b, m)}, {interval}, adjusted p {format_p(m.p_adjusted)}"
        + ("" if m.equivalence_margin is None else f", margin ±{_amount(m.equivalence_margin, m).lstrip('+')}")
    )


def junit_xml(results: Mapping[str, AuditResult], *, gate: Gate = "fail-on-bias", name: str = "fairtalk") -> str:
    """The JUnit XML of an audit's results (axis -> result) under ``gate``.

    Examples
    --------
    >>> from fairtalk.results import AuditResult
    >>> junit_xml({}).startswith("<?xml")
    True
    """
    if gate not in GATES:
        raise ValueError(_MSG_GATE.format(gate=gate))
    suites = ET.Element("testsuites", name=name)
    n_tests = n_failures = 0
    for axis, result in results.items():
        cases = list(result.measures)
        failing = [m for m in cases if _fails(m, gate)]
        suite = ET.SubElement(
            suites, "testsuite", name=f"{name}.{axis}", tests=str(len(cases)), failures=str(len(failing)), errors="0", skipped="0"
        )
        for m in cases:
            case = ET.SubElement(suite, "testcase", classname=f"{name}.{axis}", name=m.name)
            message = _message(axis, result.groups, m)
            if _fails(m, gate):
                failure = ET.SubElement(case, "failure", message=message, type=gate)
                failure.text = "\n".join((message, *m.notes))
            else:
                ET.SubElement(case, "system-out").text = message + ("" if m.primary else " (secondary: outside the gate)")
        n_tests += len(cases)
        n_failures += len(failing)
    suites.set("tests", str(n_tests))
    suites.set("failures", str(n_failures))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def comparison_junit_xml(comparison: ModelComparison, *, name: str = "fairtalk.compare") -> str:
    """The JUnit XML of a comparison: a testcase per key, failing where ``--fail-if-worse`` does (not shown non-inferior)."""
    suites = ET.Element("testsuites", name=name)
    n_failures = 0
    for axis in dict.fromkeys(row.axis for row in comparison.changes):
        rows = [row for row in comparison.changes if row.axis == axis]
        failing = [row for row in rows if row.primary and not row.non_inferior]
        suite = ET.SubElement(
            suites, "testsuite", name=f"{name}.{axis}", tests=str(len(rows)), failures=str(len(failing)), errors="0", skipped="0"
        )
        for row in rows:
            low, high = row.change_ci
            interval = "no interval" if low is None or high is None else f"[{low:+.4g}, {high:+.4g}]"
            message = (
                f"{axis}: {row.key}: {row.verdict.value}; baseline gap {row.baseline_gap:+.4g}, candidate gap "
                f"{row.candidate_gap:+.4g}, change {row.change:+.4g} {interval}, adjusted p "
                f"{format_p(row.p_adjusted)}, margin {'n/a' if row.margin is None else f'±{row.margin:.4g}'}"
            )
            case = ET.SubElement(suite, "testcase", classname=f"{name}.{axis}", name=row.key)
            if row in failing:
                ET.SubElement(case, "failure", message=message, type="fail-if-worse").text = "\n".join((message, *row.notes))
            else:
                ET.SubElement(case, "system-out").text = message
        n_failures += len(failing)
    suites.set("tests", str(len(comparison.changes)))
    suites.set("failures", str(n_failures))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_junit(
    results: Mapping[str, AuditResult] | ModelComparison, path: str | os.PathLike[str], *, gate: Gate = "fail-on-bias"
) -> Path:
    """Write the JUnit XML of an audit's results (or of a comparison) to ``path`` atomically and return it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = comparison_junit_xml(results) if isinstance(results, ModelComparison) else junit_xml(results, gate=gate)
    write_text_atomic(target, text)
    return target


def step_summary(results: Mapping[str, AuditResult]) -> str:
    """The Markdown of a CI job summary: per axis its plain-language findings, then its report table."""
    parts = []
    for result in results.values():
        findings = "\n".join(f"- {sentence}" for sentence in plain_summary(result))
        table = render_markdown(result).split("\n", 2)[2]  # the report without its title line
        parts.append(f"## fairtalk: {result.axis}\n\n{findings}\n\n<details><summary>table</summary>\n\n{table}\n</details>\n")
    return "\n".join(parts)


def comparison_step_summary(comparison: ModelComparison) -> str:
    """The Markdown of a CI job summary of a comparison: its findings, then per axis both gaps and the change."""
    level = f"{1 - comparison.alpha:.0%}"
    findings = "\n".join(f"- {md_escape(line)}" for line in gate_lines(comparison))
    lines = [
        f"## fairtalk compare: {md_escape(comparison.candidate)} against {md_escape(comparison.baseline)}",
        "",
        findings,
        "",
        "<details><summary>table</summary>",
        "",
        f"| Axis | Measure | Baseline gap | Candidate gap | Change ({level} CI) | p (adj.) | Non-inferior | Verdict |",
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
