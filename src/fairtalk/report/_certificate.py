"""The scorer certificate in a report: a banner per flagged scorer, a note per gap that is not one."""

from __future__ import annotations

from fairtalk.report._table import format_p, measure_label
from fairtalk.results import AuditResult

__all__ = ["CLEAR", "FLAG", "NOTE", "scorer_check_items", "scorer_check_lines"]


#: What a line of the certificate is: a flagged scorer (a red banner), a note, or the all-clear.
FLAG, NOTE, CLEAR = "flag", "note", "clear"


def scorer_check_items(result: AuditResult) -> list[tuple[str, str]]:
    """The scorer certificate in words, each line with what it is: ``flag`` (a banner), ``note`` or ``clear``.

    A flagged scorer (its own probe gap beyond the margin and distinguishable from 0) gets a
    line that says so; a scorer whose gap is beyond the margin but not distinguishable from 0
    (or the reverse) gets a note; without either, one line says that no scorer is flagged.
    """
    checks = result.scorer_check
    if not checks:
        return []
    out: list[tuple[str, str]] = []
    for c in checks:
        if not c.flagged:
            continue
        low, high = c.ci95
        ci = f", 95% CI [{low:+.3g}, {high:+.3g}]" if low is not None and high is not None else ""
        margin = f", margin ±{c.margin:.3g}" if c.margin is not None else ""
        out.append(
            (
                f"Scorer check: {measure_label(c.key)} scores the neutral probes differently by group "
                f"({c.a:.3g} vs {c.b:.3g} on {c.n_probes} probes, gap {c.gap:+.3g}{ci}, p {format_p(c.p)}{margin}): "
                "part of this measure's gap may come from the scorer, not the model",
                FLAG,
            )
        )
    if not out:
        out.append(
            (
                f"Scorer check: on {checks[0].n_probes} neutral probe sentences and their counterfactuals, no scorer "
                f"reacts to the group both beyond its margin and distinguishably from zero ({len(checks)} keys "
                "checked)",
                CLEAR,
            )
        )
    out += [(f"Scorer check note: {measure_label(c.key)}: {c.note}", NOTE) for c in checks if not c.flagged and c.note]
    return out


def scorer_check_lines(result: AuditResult) -> list[str]:
    """The lines of :func:`scorer_check_items`, without their flags."""
    return [line for line, _ in scorer_check_items(result)]
