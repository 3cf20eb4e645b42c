"""The gaps corrected by human labels (``score --gold``), in words: one line per labelled key, for every rendering.

Each line puts the prediction-powered estimate (``MeasureResult.ppi``) beside what the scorer
alone and the labels alone say, so a reader sees how far the instrument moved the gap.
"""

from __future__ import annotations

import math

from fairtalk.report._table import is_percent, measure_label
from fairtalk.results import AuditResult, MeasureResult
from fairtalk.stats import PPIEstimate

__all__ = ["LABELLED_NOTE", "LABELLED_NOTE_COMPLETIONS", "labelled_lines"]

#: What the labelled estimate is, for the report's notes.
LABELLED_NOTE = (
    "prediction-powered inference (Angelopoulos et al. 2023, PPI++): the scorer's gap on every pair "
    "corrected by its error on the pairs a person labelled; the interval holds whatever the scorer's error"
)

#: The same for paper 004's completions (``prompts analyze --gold``).
LABELLED_NOTE_COMPLETIONS = (
    "Prediction-powered inference (Angelopoulos et al. 2023, PPI++): the scorer's regard on every completion "
    "corrected by its error on the completions a person labelled; the interval holds whatever the scorer's error"
)


def _amount(x: float, m: MeasureResult) -> str:
    return f"{100 * x:+.2f} pp" if is_percent(m) else f"{x:+.4g}"


def _worth(ppi: PPIEstimate, result: AuditResult) -> str:
    """What the labels bought, or why the estimate is the labels' alone (too few disagreements, or no narrower).

    "Worth N labels" is given only when the interval shown is narrower than the labels-only one beside it
    (:func:`fairtalk.stats.ppi_mean`'s rule): then N is more than the labels.

    The disagreements are counted in the estimate's units, as its ``method`` says: labelled
    dialogues when the result's units are dialogues (``n_clusters``), else labelled pairs.
    """
    if ppi.too_few_disagreements:  # the result's warnings say it (score --gold makes one): said here as a fact, once
        k = ppi.n_disagreements
        unit = ("dialogue" if k == 1 else "dialogues") if result.n_clusters is not None else ("pair" if k == 1 else "pairs")
        return (
            f"the gap and interval are the labels' alone ({k} labelled {unit} {'disagrees' if k == 1 else 'disagree'} "
            "with the scorer, too few to estimate its error)"
        )
    if ppi.no_narrower:
        return "PPI++'s interval was no narrower than the labels' alone, so the gap and interval are the labels' alone"
    low, high = ppi.labels_ci95
    if not (math.isfinite(ppi.effective_labels) and ppi.ci95[1] - ppi.ci95[0] < high - low):  # an older results.json
        return 'no "worth N labels" figure: the interval is no narrower than the labels\' alone'
    return f"with the scorer the labels are worth {ppi.effective_labels:,.0f} labels alone"


def labelled_lines(result: AuditResult) -> list[str]:
    """One sentence per key with a labelled estimate, in the result's order (empty without labels)."""
    lines = []
    for m in result.measures:
        ppi = m.ppi
        if ppi is None:
            continue
        low, high = ppi.ci95
        lines.append(
            f"{measure_label(m.name)} by {ppi.n_labels:,} labelled pairs: gap {_amount(ppi.estimate, m)}, 95% CI "
            f"[{_amount(low, m)}, {_amount(high, m)}], p {ppi.p:.3g}; the scorer alone says {_amount(ppi.scorer_estimate, m)}, "
            f"the labels alone {_amount(ppi.labels_estimate, m)} [{_amount(ppi.labels_ci95[0], m)}, "
            f"{_amount(ppi.labels_ci95[1], m)}]; {_worth(ppi, result)}"
        )
    return lines
