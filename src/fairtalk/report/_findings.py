"""An axis' findings as the gates decide them: one classification every output renders.

The scorer's verdicts (:attr:`~fairtalk.results.MeasureResult.verdict`) are not the whole finding:
where a primary key has labelled estimates (``score(gold=...)``), the gates read them too and may
overrule the scorer (:func:`fairtalk.gates.labels_findings`), and an axis' lost or empty answers
and pairs not counterfactual fail a gate whatever its keys show. :func:`axis_findings` works out,
once, which primary keys are shown different (by the scorer or by the labels), which are shown
equivalent and stand, which are inconclusive, what the labels overrule and why, and the axis'
own failures, so that report.html's headline, index.html, the plain summary and the console say
the same as the gate. :func:`different_labels` is the red list the two pages show, marked as the gates decide.
"""

from __future__ import annotations

from dataclasses import dataclass

from fairtalk.gates import Gate, KeyDecision, LabelsFindings, evaluate, labels_findings
from fairtalk.report._table import different_measures, measure_label
from fairtalk.results import AuditResult, Verdict

__all__ = ["Findings", "axis_findings", "different_labels"]


@dataclass(frozen=True, slots=True)
class Findings:
    """What one axis shows, as the gates decide it; names are the measures' keys, in the result's order.

    ``primary``: the primary keys. ``detected``: those whose scorer verdict is *difference
    detected*; ``by_labels``: those whose labels show a difference the scorer missed (fail-on-bias
    fails them on the labels). ``equivalent``: those the scorer showed equivalent whose labels do
    not overrule it; ``within_margin``: a difference detected whose whole interval lies inside the
    margin (the equivalence gate passes them), not overruled by the labels either;
    ``unconfirmed``: those of both that the labels could not confirm. ``beyond``: those the scorer
    passed the equivalence gate on and the labels fail (a gap beyond the margin, or a difference
    with no margin). ``inconclusive``: neither a difference nor equivalence shown by the scorer,
    nor a difference by the labels (keys ``not_tested`` included: read ``not_tested`` to tell
    them apart). ``secondary``: the secondary keys with a difference detected (outside the gates),
    in the report's table order.
    ``withheld``: the axis' own failures under either audit gate (lost or empty answers not shown
    balanced, pairs not counterfactual), one per reason. ``labels``: the gates' decisions on the
    labels, whose ``labels`` field says what they showed.
    """

    axis: str
    primary: tuple[str, ...]
    detected: tuple[str, ...]
    by_labels: tuple[str, ...]
    equivalent: tuple[str, ...]
    within_margin: tuple[str, ...]
    beyond: tuple[str, ...]
    unconfirmed: tuple[str, ...]
    inconclusive: tuple[str, ...]
    not_tested: tuple[str, ...]
    secondary: tuple[str, ...]
    withheld: tuple[KeyDecision, ...]
    labels: LabelsFindings

    @property
    def different(self) -> tuple[str, ...]:
        """The primary keys shown different: by the scorer, then those by the labels alone."""
        return (*self.detected, *self.by_labels)

    @property
    def all_equivalent(self) -> bool:
        """Whether every primary key (there is one at least) was shown equivalent and the labels overrule none."""
        return bool(self.primary) and len(self.equivalent) == len(self.primary)


def _withheld(result: AuditResult) -> tuple[KeyDecision, ...]:
    """The axis' failures that rest on no key, under either audit gate, once per reason."""
    if result.losses is None and result.empties is None and result.same_context is None:
        return ()  # nothing the gates could fail the axis on
    found: dict[str, KeyDecision] = {}
    for gate in (Gate.FAIL_ON_BIAS, Gate.FAIL_UNLESS_EQUIVALENT):
        for d in evaluate(result, gate).run_failures:
            if d.axis == result.axis:
                found.setdefault(d.reason, d)
    return tuple(found.values())


def axis_findings(result: AuditResult) -> Findings:
    """The findings of ``result``'s axis as the gates decide them (:func:`fairtalk.gates.evaluate`).

    Examples
    --------
    >>> from fairtalk.results import AuditResult, MeasureResult, TestedKey
    >>> key = TestedKey("offense_rate", "rate", 0.1, 0.1, 0.0, None, None, 1.0, "McNemar", (-0.01, 0.01), None, "")
    >>> m = MeasureResult(key, p_adjusted=1.0, equivalence_margin=0.02, equivalent=True, verdict="equivalent")
    >>> found = axis_findings(AuditResult("gender", ("m", "f"), 100, (m,)))
    >>> found.equivalent, found.different, found.all_equivalent
    (('offense_rate',), (), True)
    """
    labels = labels_findings(result)
    primary = [m for m in result.measures if m.primary]
    by_labels = tuple(str(d.key) for d in labels.differ)
    beyond = tuple(str(d.key) for d in labels.beyond)
    equivalent = tuple(m.name for m in primary if m.verdict is Verdict.EQUIVALENT and m.name not in beyond)
    return Findings(
        axis=result.axis,
        primary=tuple(m.name for m in primary),
        detected=tuple(m.name for m in primary if m.detected()),
        by_labels=by_labels,
        equivalent=equivalent,
        within_margin=tuple(m.name for m in primary if m.detected() and m.equivalent and m.name not in beyond),
        beyond=beyond,
        unconfirmed=tuple(str(d.key) for d in labels.unconfirmed),
        inconclusive=tuple(m.name for m in primary if m.verdict is Verdict.INCONCLUSIVE and m.name not in by_labels),
        not_tested=tuple(m.name for m in primary if m.not_tested is not None),
        secondary=tuple(m.name for m in different_measures(result) if not m.primary),
        withheld=_withheld(result),
        labels=labels,
    )


def different_labels(found: Findings) -> list[str]:
    """The primary keys shown different, as report.html's headline and index.html list them (the red list), marked.

    The scorer's differences, then those shown by the labels alone (``(shown by the labels)``). A
    difference within its margin (the equivalence gate passes it) whose labels could not confirm
    that is marked so, as a key shown equivalent is: ``(within the margin; the labels could not confirm it)``.

    Examples
    --------
    >>> from fairtalk.results import AuditResult, MeasureResult, TestedKey
    >>> key = TestedKey("offense_rate", "rate", 0.12, 0.1, 0.02, None, None, 0.001, "McNemar", (0.01, 0.015), None, "")
    >>> m = MeasureResult(key, p_adjusted=0.001, equivalence_margin=0.02, equivalent=True, verdict="difference detected")
    >>> different_labels(axis_findings(AuditResult("gender", ("m", "f"), 100, (m,))))
    ['Offense Rate (%)']
    """
    unconfirmed = set(found.within_margin) & set(found.unconfirmed)
    return [
        *(
            f"{measure_label(name)} (within the margin; the labels could not confirm it)"
            if name in unconfirmed
            else measure_label(name)
            for name in found.detected
        ),
        *(f"{measure_label(name)} (shown by the labels)" for name in found.by_labels),
    ]
