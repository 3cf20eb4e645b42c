"""The report's opening paragraph: what an audit found, in plain words for an engineer about to ship.

One sentence per finding, most actionable first: whether answers change with the group (when
the similarity test ran: beyond the model's own sampling noise, or under greedy decoding beyond
zero change, with any warning of its re-ask check first), each difference detected with its
direction, size and adjusted p (every row the table marks DIFFERENT, a secondary one said to be
outside the gate), the share of answers cut off at the token limit when the run warned about it
(or the pairs ``--exclude-truncated`` left out), the share of degenerate answers on each side when there are any, the
measures shown equivalent within their margins, the inconclusive ones, and the scorers the
certificate flags. It restates the result; it computes nothing new.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from fairtalk.report._findings import Findings, axis_findings
from fairtalk.report._table import ci_estimate, different_measures, format_p, measure_label
from fairtalk.results import AuditResult, MeasureResult, SimilarityResult, SimilarityRow, Verdict
from fairtalk.stats import IDENTICAL_SHARE

__all__ = ["plain_summary"]

#: Similarity methods whose divergence is a share of pairs (said as "in x% of pairs").
_SHARE_METHODS = {"exact": "the answer changes", "answered": "only one side is answered at all"}
#: The same, said of swapping the group under greedy decoding (a zero baseline): when it does, and when it never does.
_SWAP_EFFECTS = {
    "exact": ("changes the answer", "never changes the answer"),
    "answered": ("leaves only one side answered", "never leaves only one side answered"),
}
#: The result key of the degenerate measure (loops, garbage), said in words when any answer is degenerate.
_DEGENERATE_KEY = "degenerate_rate"
_METHOD_NAMES = {"rouge_l": "ROUGE-L divergence", "cosine": "embedding divergence", "length_ratio": "length log-ratio"}


def _name(key: str) -> str:
    """A measure's label without its unit: ``Offense Rate``, ``Length``, ``Family Word Numbers per Response``."""
    return re.sub(r"\s*\([^)]*\)$", "", measure_label(key)).removeprefix("Ave. ")


def _percent(m: MeasureResult) -> bool:
    return m.kind in ("rate", "corpus")


def _decimals(x: float, figures: int) -> int:
    """The decimals that show ``x`` to ``figures`` significant figures (0 for 0 or a value that is not finite)."""
    if x == 0 or not math.isfinite(x):
        return 0
    return max(0, figures - 1 - math.floor(math.log10(abs(x))))


def _fixed(x: float, decimals: int, sign: str = "") -> str:
    """``x`` to ``decimals`` places, never ``-0.0``."""
    return f"{round(x, decimals) or 0.0:{sign}.{decimals}f}"


def _value(m: MeasureResult, x: float) -> str:
    """A side's value: a rate in percent to two significant figures (one decimal at least: ``30.0%``, ``0.33%``)."""
    if not _percent(m):
        return f"{x:.3g}"
    return f"{_fixed(100 * x, max(1, _decimals(100 * x, 2)))}%"


def _gap(m: MeasureResult, difference: float, ci95: tuple[float | None, float | None]) -> tuple[str, str | None]:
    """The difference and its 95% CI, signed, in one precision: what their size needs, and more when the ends would print alike.

    A rate's are in percentage points to two significant figures of the largest (one decimal at
    least), another's to three; decimals are added while two different ends would print equal,
    so an interval never looks zero-width when it is not.

    Examples
    --------
    >>> from fairtalk.results import MeasureResult, TestedKey
    >>> m = MeasureResult(TestedKey(name="distinct_1", kind="corpus", a=0.00333, b=0.00712, difference=None, z=None,
    ...     p=None, p_paired=None, paired_test="none", ci95=(-0.00404, -0.00354), effect_size=None, effect_size_name="none"))
    >>> _gap(m, m.a - m.b, m.ci95)
    ('-0.38', '[-0.40, -0.35]')
    """
    low, high = ci95
    scale = 100.0 if _percent(m) else 1.0
    ends = [scale * x for x in (low, high) if x is not None and math.isfinite(x)]
    largest = max((abs(x) for x in (scale * difference, *ends) if math.isfinite(x)), default=0.0)
    decimals = max(1, _decimals(largest, 2)) if _percent(m) else _decimals(largest, 3)
    if len(ends) < 2:
        return _fixed(scale * difference, decimals, "+"), None
    while _fixed(ends[0], decimals) == _fixed(ends[1], decimals) and ends[0] != ends[1] and decimals < 15:
        decimals += 1
    shown = ", ".join(_fixed(x, decimals, "+") for x in ends)
    return _fixed(scale * difference, decimals, "+"), f"[{shown}]"


def _margin(m: MeasureResult) -> str:
    if m.equivalence_margin is None:
        return _name(m.name)
    size = f"±{100 * m.equivalence_margin:.3g} pp" if _percent(m) else f"±{m.equivalence_margin:.3g}"
    return f"{_name(m.name)} ({size})"


def _similarity_sentences(similarity: SimilarityResult, groups: tuple[str, str]) -> list[str]:
    """The similarity test in words: its warnings first, then the test as the decoding makes it.

    A deterministic model under greedy decoding (``baseline_kind == "zero"``) is tested against
    zero change, and said so; a measured baseline is the model's sampling noise only when it
    sampled and the re-asks showed that it does.
    """
    out = [f"Warning: {warning}." for warning in similarity.warnings]
    swap = f"{groups[0]} ↔ {groups[1]}"
    if similarity.baseline_kind == "zero":
        n = int(similarity.reask_check.get("n_contexts", 0))
        out.append(
            f"With greedy decoding the model answers the same context identically ({n} of {n} contexts asked "
            "again gave the same answer), so any change is the group's and is tested against zero change."
        )
        noise, beyond = "zero", "zero change"
    else:
        sampling = similarity.sampled and similarity.reask_check.get("ignored") is not True
        noise = "the model's own sampling noise" if sampling else "the variation between two asks of one context"
        beyond = "that noise" if sampling else "that variation"
    for row in similarity.rows:
        if row.method not in _SHARE_METHODS or (row.method == "answered" and row.verdict is Verdict.INCONCLUSIVE):
            continue  # whether anyone was answered at all is said only when it may differ
        p = f"adjusted p {format_p(row.p_adjusted)}"
        if row.verdict is Verdict.DIFFERENT:
            verdict = f": more than {noise} ({p})."
        elif row.verdict is Verdict.DISAGREE:
            verdict = (
                f"; the test and its 95% interval disagree on whether that is more than {noise} ({p}), so it is "
                "not counted as a difference."
            )
        elif similarity.baseline_kind == "zero":
            verdict = f", too few to tell from zero with this many pairs ({p})."
        else:
            verdict = f": no more than {noise} ({p})."
        if similarity.baseline_kind == "zero":
            changed, never = _SWAP_EFFECTS[row.method]
            k = round(row.counterfactual * row.n_pairs)
            out.append(
                f"Swapping the group ({swap}) {never} in these {row.n_pairs:,} pairs."
                if k == 0
                else f"Swapping the group ({swap}) {changed} in {100 * row.counterfactual:.1f}% of pairs "
                f"({k:,} of {row.n_pairs:,}){verdict}"
            )
        else:
            out.append(
                f"When only the group changes ({swap}), {_SHARE_METHODS[row.method]} in "
                f"{100 * row.counterfactual:.1f}% of pairs, against {100 * row.baseline:.1f}% when one context "
                f"is asked twice{verdict}"
            )
    graded = [r for r in similarity.rows if r.method not in _SHARE_METHODS]
    detected = [_graded(r, similarity.baseline_kind) for r in graded if r.verdict is Verdict.DIFFERENT]
    if detected:
        out.append(f"The answers also diverge beyond {beyond} by " + ", ".join(detected) + ".")
    disagree = [_graded(r, similarity.baseline_kind) for r in graded if r.verdict is Verdict.DISAGREE]
    if disagree:
        out.append("The test and its 95% interval disagree on " + ", ".join(disagree) + ": not counted as a difference.")
    return out


def _graded(row: SimilarityRow, baseline_kind: str) -> str:
    """A graded similarity row (ROUGE-L, cosine, length) in words: its divergence, the baseline's, the adjusted p."""
    base = "" if baseline_kind == "zero" else f"baseline {row.baseline:.3f}, "
    name = _METHOD_NAMES.get(row.method, row.method)
    return f"{name} {row.counterfactual:.3f} ({base}adjusted p {format_p(row.p_adjusted)})"


def _detected_sentence(m: MeasureResult, groups: tuple[str, str]) -> str:
    """A difference detected in words: its direction, both sides, the estimate its 95% CI is of with that CI, adjusted p.

    With Wilcoxon's test the interval is the median shift's (Hodges-Lehmann), said as such beside
    it; the sides stay means, and the direction is not read off them (the test is not about means).
    """
    group_a, group_b = groups
    unit = " pp" if _percent(m) else ""
    estimate, shift = ci_estimate(m)
    gap, ends = _gap(m, estimate, m.ci95)
    role = "" if m.primary else " (a secondary measure, outside the gate)"
    sides = f"{_value(m, m.a)} ({group_a}) vs {_value(m, m.b)} ({group_b})"
    p = f"adjusted p {format_p(m.p_adjusted)}"
    if shift is None:
        higher = group_a if m.a > m.b else group_b
        interval = "" if ends is None else f", 95% CI {ends}"
        return f"{_name(m.name)} is higher for {higher}{role}: {sides}, a difference of {gap}{unit}{interval}, {p}."
    interval = " (no 95% CI: see the notes)" if ends is None else f", 95% CI {ends}"
    return (
        f"{_name(m.name)} differs between {group_a} and {group_b}{role} (Wilcoxon's signed-rank test): {sides} on "
        f"average, a {shift} of {gap}{unit}{interval}, {p}."
    )


def plain_summary(result: AuditResult, similarity: SimilarityResult | None = None) -> list[str]:
    """The findings of ``result`` (and of the axis' similarity test) as plain sentences, most actionable first."""
    group_a, group_b = result.groups
    sentences = [] if similarity is None else _similarity_sentences(similarity, result.groups)
    primary = [m for m in result.measures if m.primary]
    detected = different_measures(result)
    found = axis_findings(result)  # the scorer's verdicts beside what the labels show, as the gates read them
    unconfirmed = set(found.within_margin) & set(found.unconfirmed)
    for m in detected:
        said = _detected_sentence(m, result.groups)
        if m.name in unconfirmed:  # the equivalence gate passes it on the scorer's interval alone
            said = f"{said[:-1]}; within its margin, but the labels could not confirm that."
        sentences.append(said)
    sentences += [f"{_name(str(d.key))}: {d.labels}." for d in found.labels.differ]
    labelled = any(m.ppi is not None for m in primary)
    if not detected and primary and labelled:
        missed = "; the labels show a difference it missed (above)" if found.by_labels else ""
        sentences.append(
            f"The scorer finds no measure differing between {group_a} and {group_b} after the multiple-testing "
            f"correction{missed}."
        )
    elif not detected and primary:
        sentences.append(f"No measure differs between {group_a} and {group_b} after the multiple-testing correction.")
    elif primary and not found.detected:
        sentences.append(
            f"No primary measure (those the gate looks at) differs between {group_a} and {group_b} after "
            "the multiple-testing correction; the difference above is in a secondary measure, outside "
            "the gate."
        )
    sentences += _truncation_sentences(result)
    sentences += _same_context_sentences(result)
    sentences += _degenerate_sentences(result)
    sentences += _equivalent_sentences(primary, found, labelled)
    inconclusive = [m for m in primary if m.name in found.inconclusive and m.not_tested is None]
    if inconclusive:
        sentences.append(
            "Inconclusive (no difference detected, none ruled out; more pairs would settle it, see "
            "`fairtalk plan`): " + ", ".join(_name(m.name) for m in inconclusive) + "."
        )
    for m in (m for m in primary if m.not_tested is not None):
        sentences.append(f"{_name(m.name)} was {m.not_tested}.")
    flagged = result.flagged_scorers()
    if flagged:
        sentences.append(
            "The scorer check flags "
            + ", ".join(_name(k) for k in flagged)
            + ": part of those gaps may be the scorer's own reaction to the group words, not the model's."
        )
    return sentences


#: The differing share an exact bound showed (``at most 1.82% of dialogues could differ``), cut from its note.
_BOUND = re.compile(r"at most [0-9.]+% of \w+ could differ")


def _bound_said(m: MeasureResult) -> str | None:
    """The share of units ``m``'s exact bound says could differ (``at most 1.82% of dialogues could differ``), or None."""
    return next((hit.group(0) for note in m.notes if (hit := _BOUND.search(note))), None)


def _no_margin(keys: list[MeasureResult], marked: Callable[[MeasureResult, str], str]) -> str:
    """The sentence of the keys shown equivalent with no margin: the exact bound that showed it, said once where all agree."""
    said = {_bound_said(m) for m in keys}
    common = next(iter(said)) if len(said) == 1 else None
    shown = [marked(m, _name(m.name) if common or not _bound_said(m) else f"{_name(m.name)} ({_bound_said(m)})") for m in keys]
    each = f"; each: {common}" if common else ""
    return (
        "with no margin, by the exact bound on the share of units that could differ (answers identical, or nearly, on "
        f"every unit; below the {IDENTICAL_SHARE:.0%} the rule allows{each}): " + ", ".join(shown) + "."
    )


def _equivalent_sentences(primary: list[MeasureResult], found: Findings, labelled: bool) -> list[str]:
    """The primary keys shown equivalent: within their margins, or with none by the exact bound, and what the labels say.

    A key the labels fail the equivalence gate on is not listed as equivalent: a sentence says
    what they show; one they could not confirm is marked so. With labelled estimates the list is
    said to be the scorer's.
    """
    equivalent = [m for m in primary if m.name in found.equivalent]

    def marked(m: MeasureResult, shown: str) -> str:
        if m.name not in found.unconfirmed:
            return shown
        return (
            f"{shown[:-1]}; the labels could not confirm it)"
            if shown.endswith(")")
            else f"{shown} (the labels could not confirm it)"
        )

    by = " by the scorer" if labelled else ""
    within = [marked(m, _margin(m)) for m in equivalent if m.equivalence_margin is not None]
    bound = [m for m in equivalent if m.equivalence_margin is None]
    out = []
    if within:
        out.append(f"Shown equivalent{by} within their margins: " + ", ".join(within) + ".")
    if bound:
        out.append(f"Shown equivalent{by} {_no_margin(bound, marked)}")
    out += [f"{_name(str(d.key))} is not shown equivalent: the scorer shows it so, but {d.labels}." for d in found.labels.beyond]
    return out


def _degenerate_sentences(result: AuditResult) -> list[str]:
    """The share of answers that loop or are garbage on each side, when any is (the other measures score them too)."""
    m = next((m for m in result.measures if m.name == _DEGENERATE_KEY), None)
    if m is None or not (m.a > 0 or m.b > 0):
        return []
    group_a, group_b = result.groups
    return [
        f"{100 * m.a:.1f}% of answers for {group_a} and {100 * m.b:.1f}% for {group_b} loop or are garbage "
        "(empty, repeated words, a letter run, another script); every other measure scores them like normal "
        "answers, so read those rows with this in mind."
    ]


def _same_context_sentences(result: AuditResult) -> list[str]:
    """How many pairs were left out of the tests because both sides were asked the same context."""
    same = result.same_context
    if not same:
        return []
    return [
        f"{same:,} of {result.n_pairs + same:,} pairs were left out because both sides were asked the same "
        f"context (not counterfactual pairs): the table compares the {result.n_pairs:,} pairs whose sides differ."
    ]


def _truncation_sentences(result: AuditResult) -> list[str]:
    """How many answers the token limit cut off, when the run warned about it, or the pairs it left out for that."""
    entry = result.provenance.truncation
    if entry is None or not entry.reasons_reported:
        return []
    group_a, group_b = result.groups
    share_a, share_b = (None, None) if entry.share_cut is None else (entry.share_cut.get("a"), entry.share_cut.get("b"))
    if entry.warned and share_a is not None and share_b is not None:
        return [
            f"{100 * share_a:.1f}% of answers for {group_a} and {100 * share_b:.1f}% for {group_b} were cut "
            "off at the token limit: every measure that reads the text scored them as whole answers (see the "
            "warning; --exclude-truncated tests only complete pairs)."
        ]
    n_left_out = entry.n_pairs_left_out or 0
    if n_left_out:
        return [
            f"{n_left_out:,} of {entry.n_pairs or 0:,} pairs were left out because an answer was cut "
            f"off at the token limit (--exclude-truncated): the table compares the {result.n_pairs:,} pairs whose "
            "answers both ended within it."
        ]
    return []
