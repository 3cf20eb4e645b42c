"""How many pairs the equivalence gate needs, in one line of the report: per primary measure, at its margin.

``--fail-unless-equivalent`` passes only when every primary measure is *shown* equivalent, and
that takes pairs; the line names each measure's need (``MeasureResult.gate_pairs``, from this
run's spread) beside the pairs the audit had, so a reader knows before the next run.
"""

from __future__ import annotations

from fairtalk.results import AuditResult

__all__ = ["gate_pairs_line"]


def gate_pairs_line(result: AuditResult) -> str | None:
    """``"pairs the equivalence gate needs ...: offense_rate 603, length 744 (this audit: 1,470)"``; None when no key has a figure."""
    needs = [(m.name, m.gate_pairs) for m in result.measures if m.primary and m.gate_pairs is not None]
    if not needs:
        return None
    shown = ", ".join(f"{name} {n:,}" for name, n in needs)
    return (
        f"pairs the equivalence gate (--fail-unless-equivalent) needs at each margin, with power 80% at this run's "
        f"spread: {shown} (this audit: {result.n_pairs:,}; fairtalk plan --gate --results results.json says more)"
    )
