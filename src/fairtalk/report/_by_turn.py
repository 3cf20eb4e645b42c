"""Bias over turns in the reports: the ``by_turn`` table of report.md and report.html, from a :class:`ByTurnResult`.

One row per (bucket, key): the turns since the identity appeared, the bucket's pairs and
dialogues, each side's mean, the gap A − B with its 95% interval, p and p adjusted over the
by-turn family, and the verdict; a bucket too small to test says so instead of a verdict.
Rates and corpus measures read in percent (the gap in percentage points), as in the summary.
``by_turn.csv`` is :mod:`.csv_report`'s; the plot is :func:`.plots.by_turn_png`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fairtalk.report._table import MEDIAN_SHIFT, format_p, format_value, measure_label
from fairtalk.results import ByTurnResult, TurnBucket, TurnGap

__all__ = ["ByTurnRow", "by_turn_header", "by_turn_intro", "by_turn_rows"]


#: The start of the note a key's test leaves when few dialogues hold most pairs (``docs/statistics.md``).
_FEW = "few effective clusters"


def by_turn_header(groups: tuple[str, str]) -> tuple[str, ...]:
    """The table's column heads, in order (the sides named by their groups)."""
    return (
        "Turns since identity",
        "Pairs",
        "Dialogues",
        "Measure",
        groups[0],
        groups[1],
        "Gap A − B",
        "95% CI",
        "p",
        "p (adj.)",
        "Verdict",
    )


@dataclass(frozen=True, slots=True)
class ByTurnRow:
    """One (bucket, key) row of the table, as display text; ``detected`` rows are highlighted."""

    turns_since: int
    key: str
    cells: tuple[str, ...]
    detected: bool
    tested: bool


def _percent(gap: TurnGap) -> bool:
    return gap.kind in ("rate", "corpus")


def _value(x: float | None, percent: bool) -> str:
    return format_value(x, percent=percent)


def _gap(gap: TurnGap, percent: bool) -> str:
    """The estimate the row's 95% CI bounds: the gap A − B, or with Wilcoxon the median shift, said so."""
    shown = _value(gap.estimate, percent)
    return f"{MEDIAN_SHIFT} {shown}" if gap.ci_method == "hodges-lehmann" else shown


def _row(bucket: TurnBucket, gap: TurnGap) -> ByTurnRow:
    percent = _percent(gap)
    low, high = gap.ci95
    ci = "–" if low is None or high is None else f"[{_value(low, percent)}, {_value(high, percent)}]"
    verdict = gap.verdict.value if bucket.tested else "not tested"
    cells = (
        str(bucket.turns_since),
        f"{bucket.n_pairs:,}",
        "–" if bucket.n_clusters is None else f"{bucket.n_clusters:,}",
        measure_label(gap.key),
        _value(gap.a, percent),
        _value(gap.b, percent),
        _gap(gap, percent),
        ci,
        format_p(gap.p),
        format_p(gap.p_adjusted),
        verdict,
    )
    return ByTurnRow(bucket.turns_since, gap.key, cells, gap.verdict.shows_difference, bucket.tested)


def by_turn_rows(result: ByTurnResult) -> list[ByTurnRow]:
    """The table's rows: buckets in order, keys in the audit's order within each."""
    return [_row(bucket, gap) for bucket in result.buckets for gap in bucket.gaps]


def by_turn_intro(result: ByTurnResult) -> list[str]:
    """The sentences under the table: what a bucket is, which buckets went untested and why, the family."""
    units = "dialogues" if result.clustered else "pairs"
    lines = [
        "Each pair's turns before the first turn that differs between its sides are the same on both sides: the "
        "identity appears at that turn, and \u201cturns since identity\u201d counts the turns (either speaker) from it to "
        "the turn the model answers (0: the identity appears in that turn)",
        f"Each bucket is tested as the audit is (95% CI of A − B, percentage points for rates and diversity), with "
        f"{units} as the units; p (adj.): {result.correction} over the {result.family_size} tested cells that vary, "
        "apart from the audit's own correction",
        "The buckets hold different conversations: each bucket's gap is a clean counterfactual, but a difference "
        "between buckets may also come from which conversations fall in them",
    ]
    small = [b for b in result.buckets if not b.tested]
    if small:
        listed = ", ".join(f"{b.turns_since} ({b.n_clusters if b.n_clusters is not None else b.n_pairs} {units})" for b in small)
        lines.append(
            f"Not tested, fewer than {result.min_units} {units}: turns since {listed}; their means are shown, "
            "without an interval that would look more precise than it is"
        )
    few = [str(b.turns_since) for b in result.buckets if b.tested and any(_FEW in note for g in b.gaps for note in g.notes)]
    if few:
        lines.append(
            f"Few effective clusters (a few dialogues hold most pairs; the interval may under-cover) at turns "
            f"since {', '.join(few)}; by_turn.csv has each cell's notes"
        )
    if result.n_single_turn:
        lines.append(f"{result.n_single_turn:,} pair(s) had a one-turn context (the identity in the only turn): bucket 0")
    return lines
