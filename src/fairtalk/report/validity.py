"""The counterfactual validity line of a report: how sound the pairs are, from ``pairs_check.json``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PAIRS_CHECK_FILE", "validity_line"]

#: The validity check's file, beside each axis' report.
PAIRS_CHECK_FILE = "pairs_check.json"


def validity_line(check: Mapping[str, Any] | None) -> str | None:
    """One sentence on the pairs' soundness (leftover markers, terms kept on purpose), or None without a check.

    Examples
    --------
    >>> validity_line({"n_pairs": 200, "n_leftover": 3, "leftover_terms": {"guy": 2, "dude": 1},
    ...                "n_pairs_with_kept": 9, "kept": {"man (no-determiner)": 6}})
    'Counterfactual validity: 3 of 200 pairs (1.5%) still hold a word of the original group on the swapped side (guy 2, dude 1); 9 pairs keep a term on purpose (man (no-determiner) 6)'
    """
    if not check or not check.get("n_pairs"):
        return None
    n, left = int(check["n_pairs"]), int(check["n_leftover"])
    terms = ", ".join(f"{term} {k:,}" for term, k in list(dict(check.get("leftover_terms") or {}).items())[:5])
    sentence = f"Counterfactual validity: {left:,} of {n:,} pairs ({left / n:.1%}) still hold a word of the original group on the swapped side"
    if terms:
        sentence += f" ({terms})"
    n_kept = int(check.get("n_pairs_with_kept") or 0)
    if n_kept:
        kept = ", ".join(f"{term} {k:,}" for term, k in list(dict(check.get("kept") or {}).items())[:5])
        sentence += f"; {n_kept:,} pairs keep a term on purpose ({kept})"
    return sentence
