"""The counterfactual validity line of a report: how sound the pairs are, from their :class:`~fairtalk.records.PairsCheck`."""

from __future__ import annotations

from fairtalk.records import PairsCheck

__all__ = ["PAIRS_CHECK_FILE", "validity_line"]

#: The validity check's file, beside each axis' report.
PAIRS_CHECK_FILE = "pairs_check.json"


def validity_line(check: PairsCheck | None) -> str | None:
    """One sentence on the pairs' soundness (leftover markers, terms kept on purpose), or None without a check.

    Examples
    --------
    >>> check = PairsCheck(axis="gender", groups=("male", "female"), n_pairs=200, n_leftover=3,
    ...                    leftover_terms=(("guy", 2), ("dude", 1)), leftover_examples=(), n_pairs_with_kept=9,
    ...                    kept=(("man (no-determiner)", 6),), ambiguous=(), top_swaps=(), n_markers=0)
    >>> validity_line(check)
    'Counterfactual validity: 3 of 200 pairs (1.5%) still hold a word of the original group on the swapped side (guy 2, dude 1); 9 pairs keep a term on purpose (man (no-determiner) 6)'
    """
    if check is None or not check.n_pairs:
        return None
    n, left = check.n_pairs, check.n_leftover
    terms = ", ".join(f"{term} {k:,}" for term, k in check.leftover_terms[:5])
    sentence = f"Counterfactual validity: {left:,} of {n:,} pairs ({check.leftover_share:.1%}) still hold a word of the original group on the swapped side"
    if terms:
        sentence += f" ({terms})"
    if check.n_pairs_with_kept:
        kept = ", ".join(f"{term} {k:,}" for term, k in check.kept[:5])
        sentence += f"; {check.n_pairs_with_kept:,} pairs keep a term on purpose ({kept})"
    return sentence
