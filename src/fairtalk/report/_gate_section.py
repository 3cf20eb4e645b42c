"""The requested gates' outcomes on one axis, for that axis' ``report.md`` and ``report.html``.

What :func:`fairtalk.gates.evaluate` decided, read, never decided again: the gate's outcome and
headline (the run's, which the exit code follows), and of its decisions those on this axis and
the failures that concern it (its lost pairs, or the whole run's). A gate nobody requested is
given to no report, so none shows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fairtalk.gates import GateOutcome, KeyDecision

__all__ = ["AxisGate", "axis_gates", "outcome_word"]


def outcome_word(passed: bool) -> str:
    """``passed`` or ``FAILED``, as the gates' headlines say it."""
    return "passed" if passed else "FAILED"


@dataclass(frozen=True, slots=True)
class AxisGate:
    """One requested gate as an axis' report shows it.

    ``passed`` and ``headline`` are the gate's (over the whole run); ``decisions`` are its
    decisions on this axis' primary keys, then its failures that concern no one key but this
    axis or the whole run; ``axis_passed``: none of ``decisions`` failed.
    """

    gate: str
    passed: bool
    headline: str
    decisions: tuple[KeyDecision, ...]

    @property
    def axis_passed(self) -> bool:
        """Whether every decision shown for this axis passed."""
        return all(d.passed for d in self.decisions)

    def lines(self) -> list[str]:
        """One line per decision: ``key: passed — reason``; a failure of no one key is ``FAILED — reason``."""
        return [
            f"{d.key}: {outcome_word(d.passed)} — {d.reason}" if d.key is not None else f"{outcome_word(d.passed)} — {d.reason}"
            for d in self.decisions
        ]


def axis_gates(axis: str, gates: Sequence[GateOutcome]) -> list[AxisGate]:
    """Each outcome of ``gates`` (the gates requested, in order) as the report of ``axis`` shows it."""
    return [
        AxisGate(
            gate=outcome.gate.value,
            passed=outcome.passed,
            headline=outcome.headline,
            decisions=(
                *(d for d in outcome.decisions if d.axis == axis),
                *(d for d in outcome.run_failures if d.axis in (axis, None)),
            ),
        )
        for outcome in gates
    ]
