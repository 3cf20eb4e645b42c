"""``fairtalk audit --by-turn``: the lines the command prints about the buckets (the option is ``AuditConfig.by_turn``).

The work is :func:`fairtalk.audit`'s (``by_turn=True``); the report files carry the table and
the plot. Without conversations (``builtin:chitchat`` without ``--turns N >= 2``, or a corpus
of single lines) the library raises a FairtalkError before any answer is asked for, which the
command prints as ``error: …``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fairtalk import AuditResult

__all__ = ["by_turn_lines"]


def by_turn_lines(result: AuditResult) -> list[str]:
    """One line per bucket for the terminal: its pairs, and the keys with a difference detected (none without by_turn)."""
    turned = result.by_turn
    if turned is None:
        return []
    lines = []
    for bucket in turned.buckets:
        where = f"{bucket.n_pairs:,} pairs" + ("" if bucket.n_clusters is None else f" from {bucket.n_clusters:,} dialogues")
        if not bucket.tested:
            found = "not tested (too few)"
        else:
            detected = [g.key for g in bucket.gaps if g.verdict.shows_difference]
            found = "difference detected: " + ", ".join(detected) if detected else "no difference detected"
        lines.append(f"by turn: {bucket.turns_since} turn(s) since the identity, {where}: {found}")
    return lines
