"""The report's opening paragraph: what an audit found, in plain words for an engineer about to ship.

One sentence per finding, most actionable first: whether answers change with the group beyond
the model's own sampling noise (when the similarity test ran), each difference detected with its
direction, size and adjusted p (every row the table marks DIFFERENT, a secondary one said to be
outside the gate), the share of degenerate answers on each side when there are any, the
measures shown equivalent within their margins, the inconclusive ones, and the scorers the
certificate flags. It restates the result; it computes nothing new.
"""

from __future__ import annotations

import re

from fairtalk.report.table import different_measures, format_p, measure_label
from fairtalk.results import AuditResult, MeasureResult, SimilarityResult

__all__ = ["plain_summary"]

#: Similarity methods whose divergence is a share of pairs (said as "in x% of pairs").
_SHARE_METHODS = {"exact": "the answer changes", "answered": "only one side is answered at all"}
#: The result key of the degenerate measure (loops, garbage), said in words when any answer is degenerate.
_DEGENERATE_KEY = "degenerate_rate"
_METHOD_NAMES = {"rouge_l": "ROUGE-L divergence", "cosine": "embedding divergence", "length_ratio": "length log-ratio"}


def _name(key: str) -> str:
    """A measure's label without its unit: ``Offense Rate``, ``Length``, ``Family Word Numbers per Response``."""
    return re.sub(r"\s*\([^)]*\)$", "", measure_label(key)).removeprefix("Ave. ")


def _percent(m: MeasureResult) -> bool:
    return m.kind in ("rate", "corpus")


def _value(m: MeasureResult, x: float) -> str:
    return f"{100 * x:.1f}%" if _percent(m) else f"{x:.3g}"


def _gap(m: MeasureResult, x: float) -> str:
    return f"{100 * x:+.1f}" if _percent(m) else f"{x:+.3g}"


def _margin(m: MeasureResult) -> str:
    if m.equivalence_margin is None:
        return _name(m.name)
    size = f"±{100 * m.equivalence_margin:.3g} points" if _percent(m) else f"±{m.equivalence_margin:.3g}"
    return f"{_name(m.name)} ({size})"


def _similarity_sentences(similarity: SimilarityResult, groups: tuple[str, str]) -> list[str]:
    out = []
    for row in similarity.rows:
        what = _SHARE_METHODS.get(row.method)
        if what is None or (row.method == "answered" and not row.detected):
            continue  # whether anyone was answered at all is said only when it differs
        verdict = "more than" if row.detected else "no more than"
        out.append(f"When only the group changes ({groups[0]} ↔ {groups[1]}), {what} in {100 * row.counterfactual:.1f}% "
                   f"of pairs, against {100 * row.baseline:.1f}% when one context is asked twice: {verdict} the model's "
                   f"own sampling noise (adjusted p {format_p(row.p_adjusted)}).")  # fmt: skip
    graded = [f"{_METHOD_NAMES.get(r.method, r.method)} {r.counterfactual:.3f} (baseline {r.baseline:.3f}, adjusted p "
              f"{format_p(r.p_adjusted)})" for r in similarity.rows if r.method not in _SHARE_METHODS and r.detected]  # fmt: skip
    if graded:
        out.append("The answers also diverge beyond that noise by " + ", ".join(graded) + ".")
    return out


def plain_summary(result: AuditResult, similarity: SimilarityResult | None = None) -> list[str]:
    """The findings of ``result`` (and of the axis' similarity test) as plain sentences, most actionable first."""
    group_a, group_b = result.groups
    sentences = [] if similarity is None else _similarity_sentences(similarity, result.groups)
    primary = [m for m in result.measures if m.primary]
    detected = different_measures(result)
    for m in detected:
        higher = group_a if m.a > m.b else group_b
        low, high = m.ci95
        unit = " points" if _percent(m) else ""
        interval = f", 95% CI [{_gap(m, low)}, {_gap(m, high)}]" if low is not None and high is not None else ""
        role = "" if m.primary else " (a secondary measure, outside the gate)"
        sentences.append(f"{_name(m.name)} is higher for {higher}{role}: {_value(m, m.a)} ({group_a}) vs "
                         f"{_value(m, m.b)} ({group_b}), a difference of {_gap(m, m.a - m.b)}{unit}{interval}, "
                         f"adjusted p {format_p(m.p_adjusted)}.")  # fmt: skip
    if not detected and primary:
        sentences.append(f"No measure differs between {group_a} and {group_b} after the multiple-testing correction.")
    elif primary and not any(m.primary for m in detected):
        sentences.append(f"No primary measure (those the gate looks at) differs between {group_a} and {group_b} after "
                         "the multiple-testing correction; the difference above is in a secondary measure, outside "
                         "the gate.")  # fmt: skip
    sentences += _degenerate_sentences(result)
    equivalent = [m for m in primary if m.verdict == "equivalent"]
    if equivalent:
        sentences.append("Shown equivalent within their margins: " + ", ".join(_margin(m) for m in equivalent) + ".")
    inconclusive = [m for m in primary if m.verdict == "inconclusive"]
    if inconclusive:
        sentences.append("Inconclusive (no difference detected, none ruled out; more pairs would settle it, see "
                         "`fairtalk plan`): " + ", ".join(_name(m.name) for m in inconclusive) + ".")  # fmt: skip
    flagged = result.flagged_scorers()
    if flagged:
        sentences.append("The scorer check flags " + ", ".join(_name(k) for k in flagged)
                         + ": part of those gaps may be the scorer's own reaction to the group words, not the model's.")
    return sentences


def _degenerate_sentences(result: AuditResult) -> list[str]:
    """The share of answers that loop or are garbage on each side, when any is (the other measures score them too)."""
    m = next((m for m in result.measures if m.name == _DEGENERATE_KEY), None)
    if m is None or not (m.a > 0 or m.b > 0):
        return []
    group_a, group_b = result.groups
    return [f"{100 * m.a:.1f}% of answers for {group_a} and {100 * m.b:.1f}% for {group_b} loop or are garbage "
            "(empty, repeated words, a letter run, another script); every other measure scores them like normal "
            "answers, so read those rows with this in mind."]  # fmt: skip
