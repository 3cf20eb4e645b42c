"""The counterfactual similarity test as the reports show it: one row per method, in HTML and Markdown."""

from __future__ import annotations

from typing import Any

from fairtalk.results import SimilarityResult, SimilarityRow

__all__ = ["SIMILARITY_NOTE", "similarity_markdown", "similarity_row"]

#: What the table means, under its heading.
SIMILARITY_NOTE = ("Divergence = 1 − similarity of a pair's two answers; the baseline asks side A's context twice. "
                   "answered: the share of pairs answered on one side only; length_ratio: the mean absolute log ratio "
                   "of the two answers' lengths. A difference means the group swap changes answers more than asking "
                   "again does (paired mean test, Holm over the methods).")  # fmt: skip


def similarity_row(row: SimilarityRow) -> dict[str, Any]:
    """One similarity method, formatted: divergences to 3 decimals, the interval, adjusted p, the verdict."""
    low, high = row.ci95
    return {"method": row.method, "counterfactual": f"{row.counterfactual:.3f}", "baseline": f"{row.baseline:.3f}",
            "difference": f"{row.difference:+.3f}", "ci95": "n/a" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]",
            "p_adjusted": "n/a" if row.p_adjusted is None else f"{row.p_adjusted:.3g}", "detected": row.detected}  # fmt: skip


def similarity_markdown(similarity: SimilarityResult) -> list[str]:
    """The section's Markdown lines: a heading, the note and the table."""
    lines = ["", "## Counterfactual answers against the no-effect baseline", "", SIMILARITY_NOTE, "",
             "| Method | Counterfactual | Baseline | Difference | 95% CI | p (adj.) | Verdict |",
             "|---|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for row in similarity.rows:
        cells = similarity_row(row)
        verdict = "**differs from the baseline**" if row.detected else "no difference shown"
        lines.append(f"| {cells['method']} | {cells['counterfactual']} | {cells['baseline']} | {cells['difference']} | "
                     f"{cells['ci95']} | {cells['p_adjusted']} | {verdict} |")  # fmt: skip
    return lines
