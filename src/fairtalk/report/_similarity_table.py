"""The counterfactual similarity test as the reports show it: how its baseline was had, its warnings, one row per method."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fairtalk.results import SimilarityResult, SimilarityRow, Verdict

__all__ = [
    "SIMILARITY_NOTE",
    "VERDICT_TEXT",
    "divergence_meaning",
    "similarity_basis",
    "similarity_markdown",
    "similarity_row",
]

#: What the table means, under its heading.
SIMILARITY_NOTE = (
    "Divergence = 1 − similarity of a pair's two answers; the baseline asks side A's context twice. "
    "Under greedy decoding a model that answers a sample of contexts asked again identically has a "
    "baseline of zero, and the test is one against zero change. answered: the share of pairs answered "
    "on one side only; length_ratio: the mean absolute log ratio of the two answers' lengths. A "
    "difference means the group swap changes answers more than asking again does: the paired mean "
    "test (Holm over the methods) rejects and its 95% interval excludes 0; when only one of them says "
    "so, the row is not counted and says that they disagree."
)
#: What a method's divergence (its counterfactual and baseline figures) is, where it is not 1 − similarity.
_DIVERGENCE = {
    "answered": "the share of pairs answered on one side only",
    "length_ratio": "the mean absolute log ratio of the two answers' lengths",
}
_ONE_MINUS = "1 − similarity"


def divergence_meaning(methods: Sequence[str]) -> str:
    """What the figures of each of ``methods`` are, in one line: ``1 − similarity`` for the text's, else its own.

    Examples
    --------
    >>> divergence_meaning(["exact", "rouge_l", "length_ratio"])
    "divergence: 1 − similarity (exact, rouge_l); length_ratio: the mean absolute log ratio of the two answers' lengths"
    """
    text = [m for m in methods if m not in _DIVERGENCE]
    parts = [f"{_ONE_MINUS} ({', '.join(text)})"] if text else []
    parts += [f"{m}: {_DIVERGENCE[m]}" for m in methods if m in _DIVERGENCE]
    return "divergence: " + "; ".join(parts)


#: The verdict column's words, per :attr:`SimilarityRow.verdict`.
VERDICT_TEXT = {
    Verdict.DIFFERENT: "differs from the baseline",
    Verdict.INCONCLUSIVE: "no difference shown",
    Verdict.DISAGREE: "not counted: test and CI disagree",
}


def similarity_row(row: SimilarityRow) -> dict[str, Any]:
    """One similarity method, formatted: divergences to 3 decimals, the interval, adjusted p, the verdict."""
    low, high = row.ci95
    return {
        "method": row.method,
        "counterfactual": f"{row.counterfactual:.3f}",
        "baseline": f"{row.baseline:.3f}",
        "difference": f"{row.difference:+.3f}",
        "ci95": "n/a" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]",
        "p_adjusted": "n/a" if row.p_adjusted is None else f"{row.p_adjusted:.3g}",
        "detected": row.detected(),
        "verdict": VERDICT_TEXT.get(row.verdict, row.verdict.value),
        "disagree": row.verdict is Verdict.DISAGREE,
        "note": row.note or "",
    }


def similarity_basis(similarity: SimilarityResult) -> str:
    """One sentence: how the baseline was had (zero for a deterministic greedy model, or measured) and the re-ask check."""
    check = similarity.reask_check
    if similarity.baseline_kind == "zero":
        n = check.get("n_contexts", 0)
        return (
            f"Greedy decoding: the model answered {n} of {n} contexts asked again identically, so the baseline is "
            "zero (not asked for every pair) and the test is one against zero change."
        )
    if not similarity.sampled:
        return (
            "Greedy decoding, but the model is not deterministic: the baseline was measured (side A asked twice "
            "more per pair), and the test is against that variation."
        )
    how = "Sampled decoding: the baseline is the model's sampling noise (side A asked twice more per pair)"
    if check.get("ignored") is None:
        return (
            f"{how}; only {check.get('n_checked', 0)} baseline pairs had two answers of {check.get('min_words')} "
            f"words or more (the check needs {check.get('min_pairs')}), so whether the model samples at all was "
            "not checked."
        )
    same = (
        f"{check['n_identical']} of {check['n_checked']} contexts asked twice (answers of {check['min_words']} "
        "words or more) gave the same answer word for word"
    )
    if check["ignored"]:
        return (
            f"Sampling was asked for and the baseline measured (side A asked twice more per pair), but {same}: see the warning."
        )
    return f"{how}; {same}."


def similarity_markdown(similarity: SimilarityResult) -> list[str]:
    """The section's Markdown lines: a heading, the note, how the baseline was had, any warning, and the table."""
    lines = [
        "",
        "## Counterfactual answers against the no-effect baseline",
        "",
        SIMILARITY_NOTE,
        "",
        similarity_basis(similarity),
        "",
    ]
    lines += [line for warning in similarity.warnings for line in (f"**Warning:** {warning}.", "")]
    lines += [
        "| Method | Counterfactual | Baseline | Difference | 95% CI | p (adj.) | Verdict |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in similarity.rows:
        cells = similarity_row(row)
        verdict = f"**{cells['verdict']}**" if row.detected() else cells["verdict"]
        lines.append(
            f"| {cells['method']} | {cells['counterfactual']} | {cells['baseline']} | {cells['difference']} | "
            f"{cells['ci95']} | {cells['p_adjusted']} | {verdict} |"
        )
    notes = [f"{row.method}: {row.note}" for row in similarity.rows if row.note]
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    return lines
