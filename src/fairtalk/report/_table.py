"""The paper-style summary table (Tables 3-6): one formatted row per measure, shared by every format."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

from fairtalk.results import AuditResult, MeasureResult, Verdict
from fairtalk.stats import HL_ZEROS_MARK, METHOD_FEW_DIFFERING, METHOD_FEW_DISCORDANT, METHOD_IDENTICAL

if TYPE_CHECKING:  # rich is imported lazily by rich_table()
    from rich.table import Table

__all__ = [
    "CI_TEST_MARK",
    "COLUMNS",
    "MEDIAN_SHIFT",
    "TableRow",
    "ci_estimate",
    "interval_notes",
    "ci_method",
    "ci_test_note",
    "ci_vs_test",
    "correction_name",
    "decided_by",
    "different_measures",
    "distinct_definition",
    "family_note",
    "format_p",
    "gate_amount",
    "format_value",
    "is_percent",
    "left_out_note",
    "measure_amount",
    "measure_label",
    "rich_table",
    "summary_rows",
    "verdict_second",
    "verdict_text",
]

#: Display order of the fixed result keys (paper's Tables 3-6 first, then length, refusal and degenerate answers).
_ORDER = (
    "diversity",
    "distinct_1",
    "distinct_2",
    "offense_rate",
    "sentiment_positive",
    "sentiment_negative",
    "career_words",
    "family_words",
    "pleasant_words",
    "unpleasant_words",
    "length",
    "hit_token_limit",
    "refusal_rate",
    "degenerate_rate",
)
_LABELS = {
    "diversity": "Diversity (%)",
    "distinct_1": "Distinct-1 (%)",
    "distinct_2": "Distinct-2 (%)",
    "offense_rate": "Offense Rate (%)",
    "sentiment_positive": "Sentiment Positive (%)",
    "sentiment_negative": "Sentiment Negative (%)",
    "length": "Ave. Length (words per response)",
    "hit_token_limit": "Cut Off at the Token or Record Limit (%)",
    "refusal_rate": "Refusal Rate (%)",
    "degenerate_rate": "Degenerate Rate (%)",
}
_CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "fdr_bh": "Benjamini-Hochberg"}
_DISTINCT = {
    "paper": "paper (distinct n-grams / total words)",
    "standard": "standard (distinct n-grams / total n-grams)",
}
#: Column headers after the two group columns; the group columns take the group names.
COLUMNS = (
    "Difference (%)",
    "Z",
    "p",
    "p (paired)",
    "p (adj.)",
    "95% CI (A−B)",
    "Effect size",
    "Equivalence margin, p",
    "Verdict",
    "MDE",
)
_DASH = "–"
_NO_VALUE = "n/a"
_P_FLOOR = 1e-5
#: What the 95% CI is of under ``--count-test wilcoxon``: the Hodges-Lehmann median shift, not the mean difference.
MEDIAN_SHIFT = "median shift (HL)"
#: The verdict of a measure shown equivalent because no pair's two answers scored differently.
_IDENTICAL = "equivalent: identical on every pair"


@dataclass(frozen=True, slots=True)
class TableRow:
    """One measure, formatted for display: rates and diversity in %, counts as they are."""

    name: str
    label: str
    a: str
    b: str
    difference: str
    z: str
    p: str
    p_paired: str
    p_adjusted: str
    ci95: str
    effect_size: str
    significant: bool
    masked: str | None
    equivalence: str = _DASH
    verdict: str = "inconclusive"
    mde: str = _DASH
    primary: bool = True
    notes: tuple[str, ...] = ()
    decided_by: str = ""
    ci_disagrees: bool = False  # the 95% CI seems to say otherwise than the verdict (see :func:`ci_disagrees`)
    ci_vs_test: bool = False  # the 95% CI and the unadjusted paired test disagree (see :func:`ci_vs_test`)
    shift: str | None = None  # the median shift (Hodges-Lehmann) the 95% CI is of, with Wilcoxon; None: the mean's

    def interval(self, name: str = MEDIAN_SHIFT) -> str:
        """The 95% CI as its cell shows it: after the median shift it is of, if any; marked where the test disagrees.

        The shift is named ``name``; :data:`CI_TEST_MARK` marks an interval that disagrees with the
        paired test about 0. ``median shift (HL) +1.0000 [+0.5000, +1.5000]``, and ``… +0.0000, no CI`` where the interval is
        not given (the row's notes say why).
        """
        ci = self.ci95
        if self.shift is not None:
            ci = f"{name} {self.shift}, no CI" if ci == _NO_VALUE else f"{name} {self.shift} {ci}"
        return f"{ci} {CI_TEST_MARK}" if self.ci_vs_test else ci

    @property
    def ci_cell(self) -> str:
        """The 95% CI as the pages show it (:meth:`interval`)."""
        return self.interval()

    def cells(self) -> tuple[str, ...]:
        """The cells in column order: label, A, B, then ``COLUMNS``."""
        return (
            self.label,
            self.a,
            self.b,
            self.difference,
            self.z,
            self.p,
            self.p_paired,
            self.p_adjusted,
            self.ci_cell,
            self.effect_size,
            self.equivalence,
            self.verdict,
            self.mde,
        )


#: Where the verdict stands among :data:`COLUMNS` after the measure and the two groups.
_VERDICT_AT = 3 + COLUMNS.index("Verdict")


def verdict_second(cells: tuple[str, ...]) -> tuple[str, ...]:
    """A row's cells (or the header) with the verdict moved next to the measure: a wide table scrolls, the verdict stays in view.

    ``cells`` are in :meth:`TableRow.cells` order (the header: measure, the two groups, then :data:`COLUMNS`);
    any cell after those (the masked column) keeps its place at the end.
    """
    return (cells[0], cells[_VERDICT_AT], *cells[1:_VERDICT_AT], *cells[_VERDICT_AT + 1 :])


def measure_label(name: str) -> str:
    """The paper-style row label of a result key (``career_words`` -> ``Ave. Career Word Numbers per Response``)."""
    if name in _LABELS:
        return _LABELS[name]
    if name.endswith("_words"):
        return f"Ave. {name.removesuffix('_words').replace('_', ' ').title()} Word Numbers per Response"
    if name.endswith("_rate"):
        return f"{name.removesuffix('_rate').replace('_', ' ').title()} Rate (%)"
    return name.replace("_", " ").capitalize()


def is_percent(m: MeasureResult) -> bool:
    """Whether ``m`` reads in percent (rates and corpus measures: the rows whose label says %)."""
    return m.kind in ("rate", "corpus")


def _finite(x: float | None) -> TypeGuard[float]:
    return x is not None and math.isfinite(x)


def format_value(x: float | None, *, percent: bool) -> str:
    """A value in its row's units: ``100 * x`` with three decimals for a % row, else as it is."""
    if x is None:
        return _DASH
    if not math.isfinite(x):
        return "n/a"
    if percent:
        return f"{100 * x:.3f}"
    return f"{x:.4f}" if abs(x) < 10 else f"{x:.2f}"


def format_p(p: float | None) -> str:
    """A p-value as the paper prints it: ``< 1e-5`` below 1e-5, three decimals above 0.001."""
    if p is None:
        return _DASH
    if not math.isfinite(p):
        return "n/a"
    if p < _P_FLOOR:
        return "< 1e-5"
    if p < 0.001:
        return f"{p:.1e}"
    return f"{p:.3f}"


#: A rate's relative difference is shown only when both sides are at least this share: near 0 a one-point gap
#: reads as thousands of percent (issue 39: -18,800% for an offense rate of 0.05% against 9.5%).
MIN_RATE_FOR_RELATIVE = 0.05


def _relative(m: MeasureResult) -> str:
    """The paper's relative difference, or a dash for a rate with a side below :data:`MIN_RATE_FOR_RELATIVE`."""
    if m.kind == "rate" and not (min(m.a, m.b) >= MIN_RATE_FOR_RELATIVE):
        return _DASH
    return _difference(m.difference)


def _difference(d: float | None) -> str:
    if d is None:
        return _DASH
    if not math.isfinite(d):
        return "n/a"
    return f"{100 * d:+.1f}%"


def ci_estimate(m: MeasureResult) -> tuple[float, str | None]:
    """What ``m``'s 95% CI is an interval of, and its name: the mean difference, or Wilcoxon's median shift.

    ``(m.a - m.b, None)`` for the mean difference; ``(estimate, MEDIAN_SHIFT)`` where Wilcoxon's
    test ran (the Hodges-Lehmann estimate). Every output that shows the interval shows it beside this estimate: never the mean difference
    beside the Hodges-Lehmann interval.
    """
    if m.estimate_name == "hodges-lehmann" and m.estimate is not None:
        return m.estimate, MEDIAN_SHIFT
    return m.a - m.b, None


def interval_notes(m: MeasureResult) -> tuple[str, ...]:
    """The notes of ``m`` about its Hodges-Lehmann interval (ties that leave it none, zeros that hold an end at 0)."""
    return tuple(note for note in m.notes if "Hodges-Lehmann" in note)


def _shift(m: MeasureResult) -> str | None:
    """The median shift of a Wilcoxon row in its 95% CI's decimals (None for a row whose CI is of the mean)."""
    estimate, name = ci_estimate(m)
    if name is None:
        return None
    if not math.isfinite(estimate):
        return _NO_VALUE
    if is_percent(m):
        return f"{100 * estimate:+.3f} pp"
    return f"{estimate:+.{_ci_decimals(m, (estimate, estimate))}f}"


def _ci(m: MeasureResult) -> str:
    low, high = m.ci95
    if not (_finite(low) and _finite(high)):
        return _NO_VALUE
    if is_percent(m):
        return f"[{100 * low:+.3f}, {100 * high:+.3f}] pp"
    digits = _ci_decimals(m, (low, high))
    return f"[{low:+.{digits}f}, {high:+.{digits}f}]"


def _ci_decimals(m: MeasureResult, fallback: tuple[float, float]) -> int:
    """The decimals ``m``'s 95% CI shows (a count's: :func:`_count_decimals` of its larger end); of ``fallback`` without one."""
    low, high = m.ci95
    ends = (low, high) if _finite(low) and _finite(high) else fallback
    return _count_decimals(max(abs(ends[0]), abs(ends[1])))


#: The significant figures a count's interval keeps (four decimals below 10, none from 10,000).
_COUNT_FIGURES = 5


def _count_decimals(x: float) -> int:
    """The decimals that give ``x`` :data:`_COUNT_FIGURES` significant figures, between 0 and 4.

    Examples
    --------
    >>> [_count_decimals(x) for x in (0.0, 0.5, 9.99, 42.0, 4197.1298, 123456.0)]
    [4, 4, 4, 3, 1, 0]
    """
    if x < 1:
        return _COUNT_FIGURES - 1
    return max(0, _COUNT_FIGURES - 1 - math.floor(math.log10(x)))


def _effect(m: MeasureResult) -> str:
    if m.effect_size is None:
        return _DASH
    if not math.isfinite(m.effect_size):
        return "n/a"
    symbol = (m.effect_size_name or "").removeprefix("cohens_").removeprefix("cohen_")  # cohens_d_z -> d_z
    return f"{symbol} = {m.effect_size:+.3f}" if symbol else f"{m.effect_size:+.3f}"


def gate_amount(x: float, kind: str, *, signed: bool = True) -> str:
    """A gap (``signed``) or a margin as the JUnit file and ``fairtalk.testing``'s messages give it.

    A rate's and a corpus measure's in percentage points to two decimals, a count's to four significant figures.

    Examples
    --------
    >>> gate_amount(-0.48333, "rate"), gate_amount(0.02, "rate", signed=False), gate_amount(0.85, "count")
    ('-48.33 pp', '2.00 pp', '+0.85')
    """
    if kind in ("rate", "corpus"):
        return f"{100 * x:+.2f} pp" if signed else f"{100 * x:.2f} pp"
    return f"{x:+.4g}" if signed else f"{x:.4g}"


def measure_amount(x: float, m: MeasureResult | str) -> str:
    """A difference in the measure's units as every report reads it: percentage points for rates and corpus measures.

    ``m``: the measure's row, or its kind (``"rate"``, ``"count"``, ``"corpus"``) where there is no row (``plan``).

    Examples
    --------
    >>> from fairtalk.results import MeasureResult, TestedKey
    >>> rate = MeasureResult(TestedKey("offense_rate", "rate", 0.1, 0.1, None, None, None, 1.0, "t", (0, 0), None, ""))
    >>> measure_amount(0.0521, rate), measure_amount(0.1069, "rate"), measure_amount(0.25, "count")
    ('5.21 pp', '10.69 pp', '0.2500')
    """
    if not math.isfinite(x):
        return "n/a"
    percent = m in ("rate", "corpus") if isinstance(m, str) else is_percent(m)
    return f"{100 * x:.2f} pp" if percent else (f"{x:.4f}" if abs(x) < 10 else f"{x:.2f}")


def _equivalence(m: MeasureResult, alpha: float) -> str:
    if m.equivalence_margin is None:
        return _DASH
    margin = _tost_margin(m) if m.equivalence_interval is not None else f"±{measure_amount(m.equivalence_margin, m)}"
    shown = f"{margin}, p = {format_p(m.p_equivalence)}"
    what = _what_decided(m, alpha, digits=1)
    return f"{shown}; {what}" if what else shown


#: The ``equivalence_test`` of the exact rules (identical answers, few differing or discordant units): a bound decides.
_BOUND_METHODS = (METHOD_IDENTICAL, METHOD_FEW_DIFFERING, METHOD_FEW_DISCORDANT)


def _tost_decimals(m: MeasureResult, digits: int) -> int:
    """The decimals of a count's TOST interval: its row's 95% CI's, and ``digits`` more."""
    low, high = m.equivalence_interval or (math.nan, math.nan)
    return _ci_decimals(m, (low, high)) + digits


def _tost_margin(m: MeasureResult) -> str:
    """``m``'s margin beside its TOST interval, in the interval's decimals (:func:`_what_decided` at ``digits=1``).

    Rounded alike, an end just past the margin never shows inside it, nor one inside it outside.
    """
    margin = m.equivalence_margin if m.equivalence_margin is not None else math.nan
    return f"±{100 * margin:.4f} pp" if is_percent(m) else f"±{margin:.{_tost_decimals(m, 1)}f}"


def _what_decided(m: MeasureResult, alpha: float, *, digits: int = 0) -> str:
    """The interval or bound the equivalence test followed, from the result (empty where it records neither).

    ``digits`` more decimals than the 95% CI of the same row shows (an interval just inside its margin
    reads as inside), in fixed decimals as that CI is.
    """
    if m.equivalence_interval is not None:
        low, high = m.equivalence_interval
        if is_percent(m):
            interval = f"[{100 * low:+.{3 + digits}f}, {100 * high:+.{3 + digits}f}] pp"
        else:
            places = _tost_decimals(m, digits)
            interval = f"[{low:+.{places}f}, {high:+.{places}f}]"
        return f"{1 - 2 * alpha:.0%} CI {interval}"
    if m.equivalence_bound is not None:
        units = "dialogues" if m.n_clusters is not None else "pairs"
        return f"exact bound: at most {m.equivalence_bound:.2%} of {units} could differ"
    if m.equivalence_test.startswith(_BOUND_METHODS):  # a result written before the bound was recorded: its note says it
        return "exact bound (see the notes)"
    if m.equivalence_test and m.p_equivalence is not None:  # no interval recorded (a permutation or sequential TOST)
        return m.equivalence_test
    return ""


def decided_by(m: MeasureResult, alpha: float) -> str:
    """What decided ``m``'s equivalence, in words, where the equivalence test decided its verdict (else empty).

    The TOST at ``alpha`` is the inversion of the ``1 - 2α`` interval (90% at α 0.05), not of
    the 95% CI shown beside the verdict: ``90% CI [...] inside ±m`` (or ``not inside``). Where an
    exact rule decided (identical answers, few differing units), the bound on the share of units
    that could differ. A ``difference detected`` verdict follows the 95% interval's test, and a key
    without a margin or a recorded interval or bound has nothing to add: empty.
    """
    if m.not_tested or m.verdict is Verdict.DIFFERENT or m.equivalence_margin is None or m.equivalent is None:
        return ""
    what = _what_decided(m, alpha, digits=1)
    if not what:
        return ""
    if m.equivalence_interval is not None:
        return f"{what} {'inside' if m.equivalent else 'not inside'} {_tost_margin(m)}"
    if m.equivalence_bound is None and not m.equivalence_test.startswith(_BOUND_METHODS):
        return f"{what}, p = {format_p(m.p_equivalence)}"
    return f"{what}, margin ±{measure_amount(m.equivalence_margin, m)}"


def ci_disagrees(m: MeasureResult) -> bool:
    """Whether the 95% CI shown beside ``m``'s verdict seems to say otherwise: equivalent with a CI reaching past the margin, or inconclusive with a CI inside it.

    Equivalence follows the TOST's ``1 - 2α`` interval or an exact bound (:func:`decided_by`), so
    both happen without a contradiction; the terminal names what decided only for these rows.
    """
    margin, (low, high) = m.equivalence_margin, m.ci95
    if m.not_tested or m.verdict is Verdict.DIFFERENT or margin is None or not (_finite(low) and _finite(high)):
        return False
    inside = -margin < low and high < margin
    return inside != (m.verdict is Verdict.EQUIVALENT)


#: The mark of a 95% CI that disagrees with the paired test its verdict follows (:func:`ci_vs_test`).
CI_TEST_MARK = "‡"
#: The paired tests (``MeasureResult.paired_test``) in words; a name not here is shown as it is.
_TEST_NAMES = {
    "score": "the score test",
    "cluster_score": "the score test by dialogue",
    "mcnemar_exact": "McNemar's exact test",
    "mcnemar_midp": "McNemar's mid-p test",
    "signflip_exact": "the exact sign-flip test",
    "signflip_mc": "the sign-flip test",
    "cluster_signflip_exact": "the exact sign-flip test by dialogue",
    "cluster_signflip_mc": "the sign-flip test by dialogue",
    "paired_t": "the paired t test",
    "cluster_t": "the t test by dialogue",
    "wilcoxon_exact": "Wilcoxon's signed-rank test",
    "wilcoxon_approx": "Wilcoxon's signed-rank test",
}

_INTERVAL_NAMES = {
    "hodges-lehmann": "the Hodges-Lehmann interval of the median shift",
    "newcombe": "Newcombe's",
    "newcombe (design-effect adjusted)": "Newcombe's with a design effect",
    "score": "the score interval",
    "score (design-effect adjusted)": "the score interval with a design effect",
}


#: The test's level that matches the 95% CI printed beside it.
_CI_LEVEL_ALPHA = 0.05


def ci_vs_test(m: MeasureResult) -> bool:
    """Whether the 95% CI shown beside ``m`` and its unadjusted paired test disagree about 0.

    ``p (paired) >= 0.05`` while the interval leaves 0 out, or ``p (paired) < 0.05`` while it
    holds 0: the test at the interval's own level (the CI is 95% whatever the audit's α, so
    a row is never marked only because α is not 0.05). A rate's default score test and its score
    interval are one procedure (its inversion), so they never disagree, nor does a count's t test
    with its t interval. A test the user chose (McNemar's exact or mid-p test beside Newcombe's
    interval; the sign-flip test by dialogue) or a sequential audit's per-look test is not its
    interval's inversion: the two disagree near the boundary and on few units. The verdict follows
    the test (corrected for multiplicity); every report marks these rows with :data:`CI_TEST_MARK`
    (:func:`ci_test_note`).

    Examples
    --------
    >>> from fairtalk.results import MeasureResult, TestedKey
    >>> key = TestedKey("offense_rate", "rate", 0.0, 0.8, None, None, None, 0.125, "mcnemar_exact", (-0.96, -0.19), None, "")
    >>> ci_vs_test(MeasureResult(key, p_adjusted=0.125))
    True
    """
    p, (low, high) = m.p_paired, m.ci95
    if m.not_tested or not _finite(p) or not (_finite(low) and _finite(high)):
        return False
    excludes_zero = low > 0 or high < 0
    return excludes_zero != (p < _CI_LEVEL_ALPHA)


def _disagreement(m: MeasureResult) -> str:
    """Which way a marked row's interval and test disagree (:func:`ci_vs_test`)."""
    if m.p_paired is not None and m.p_paired < _CI_LEVEL_ALPHA:
        return "p < 0.05 while the 95% CI holds 0"
    return "p ≥ 0.05 while the 95% CI leaves 0 out"


def ci_test_note(result: AuditResult) -> str | None:
    """The footnote of the rows marked :data:`CI_TEST_MARK` (:func:`ci_vs_test`), naming their tests; None if none is."""
    marked = [m for m in _order(result.measures) if ci_vs_test(m)]
    if not marked:
        return None
    tests = ", ".join(dict.fromkeys(_TEST_NAMES.get(m.paired_test, m.paired_test or "the paired test") for m in marked))
    intervals = ", ".join(dict.fromkeys(_INTERVAL_NAMES.get(m.ci_method, m.ci_method) or "its own" for m in marked))
    cases = " or ".join(dict.fromkeys(_disagreement(m) for m in marked))
    reasons = "; ".join(dict.fromkeys(_why_disagree(m) for m in marked))
    return (
        f"{CI_TEST_MARK} the 95% CI and p (paired) disagree about 0 ({cases}): the verdict follows "
        f"the test ({tests}, then corrected for multiple testing), not this interval ({intervals}), "
        f"a different procedure: {reasons}"
    )


#: Why a marked row's test and interval disagree, where its zero differences explain it (:data:`HL_ZEROS_MARK`).
_ZEROS_REASON = (
    "many differences are 0 (the row's note says how many), which the Hodges-Lehmann interval counts and "
    "Wilcoxon's test (Pratt's zeros) leaves out of its signs"
)
#: Why a marked row's test and interval disagree otherwise.
_BOUNDARY_REASON = "the two can disagree near the boundary and on few pairs"


def _why_disagree(m: MeasureResult) -> str:
    """Why ``m``'s 95% CI and its paired test disagree about 0 (:func:`ci_vs_test`), in words that hold for it."""
    return _ZEROS_REASON if any(HL_ZEROS_MARK in note for note in interval_notes(m)) else _BOUNDARY_REASON


def verdict_text(m: MeasureResult) -> str:
    """The verdict in words: ``difference detected``, ``equivalent within ±m``, ``inconclusive`` or ``not tested``.

    ``not tested``: too few pairs were scored on both sides for a test (``m.not_tested`` says
    how many); the result's verdict is ``inconclusive``, and the row says why.
    """
    if m.not_tested:
        return "not tested"
    if m.verdict is Verdict.EQUIVALENT and m.equivalence_test.startswith("identical answers"):
        return _IDENTICAL
    if m.verdict is Verdict.EQUIVALENT and m.equivalence_margin is not None:
        return f"equivalent within ±{measure_amount(m.equivalence_margin, m)}"
    return m.verdict.value


def _mde(m: MeasureResult) -> str:
    return _DASH if m.mde is None or not math.isfinite(m.mde) else measure_amount(m.mde, m)


def _masked(m: MeasureResult) -> str | None:
    if m.masked is None:
        return None
    percent = is_percent(m)
    text = f"{format_value(m.masked.a, percent=percent)} vs {format_value(m.masked.b, percent=percent)}"
    if m.masked.remaining is not None and math.isfinite(m.masked.remaining):
        text += f"; {100 * m.masked.remaining:.0f}% remains"
    elif m.masked.remaining is None:  # a share of no gap means nothing (MaskedComparison.of)
        text += f"; {_NO_MASKED_SHARE}"
    return text


#: What the masked cell shows instead of a share where the unmasked gap is about 0.
_NO_MASKED_SHARE = "no share: the unmasked gap is about 0"


def _order(measures: tuple[MeasureResult, ...]) -> list[MeasureResult]:
    rank = {name: i for i, name in enumerate(_ORDER)}

    def key(item: tuple[int, MeasureResult]) -> tuple[int, int]:
        i, m = item
        if m.name in rank:
            return (rank[m.name], 0)
        if m.name.endswith("_words"):
            return (rank["unpleasant_words"], i + 1)
        return (len(_ORDER), i)

    return [m for _, m in sorted(enumerate(measures), key=key)]


def summary_rows(result: AuditResult) -> list[TableRow]:
    """The formatted rows of the summary table, in the paper's order."""
    rows = []
    for m in _order(result.measures):
        percent = is_percent(m)
        rows.append(
            TableRow(
                name=m.name,
                label=measure_label(m.name),
                a=format_value(m.a, percent=percent),
                b=format_value(m.b, percent=percent),
                difference=_relative(m),
                z=_DASH if m.z is None else (f"{m.z:.3f}" if math.isfinite(m.z) else "n/a"),
                p=format_p(m.p),
                p_paired=format_p(m.p_paired),
                p_adjusted=format_p(m.p_adjusted),
                ci95=_ci(m),
                effect_size=_effect(m),
                significant=m.primary and m.detected(),
                masked=_masked(m),
                equivalence=_equivalence(m, result.alpha),
                verdict=verdict_text(m),
                mde=_mde(m),
                primary=m.primary,
                notes=m.notes,
                decided_by=decided_by(m, result.alpha),
                ci_disagrees=ci_disagrees(m),
                ci_vs_test=ci_vs_test(m),
                shift=_shift(m),
            )
        )
    return rows


def different_measures(result: AuditResult) -> list[MeasureResult]:
    """Every measure whose verdict is ``difference detected`` (the rows marked DIFFERENT), primary or not, in table order.

    The gates (``detected()``, ``--fail-on-bias``) look only at the primary ones; a summary names
    them all, and says which are secondary (outside the gate).
    """
    return [m for m in _order(result.measures) if m.verdict is Verdict.DIFFERENT]


def correction_name(result: AuditResult) -> str:
    """The multiple-testing correction in words (``Holm``, ``Benjamini-Hochberg``)."""
    return _CORRECTIONS.get(result.correction.lower(), result.correction)


def distinct_definition(result: AuditResult) -> str | None:
    """Which distinct-n definition the provenance records (``options.distinct``: ``paper`` or ``standard``), in words."""
    options = result.provenance.options
    if options is None or options.distinct is None:
        return None
    return _DISTINCT.get(options.distinct, options.distinct)


def ci_method(result: AuditResult) -> str:
    """How the 95% CI was computed, from the provenance (``methods.ci``) when it says."""
    methods = result.provenance.methods or {}
    return methods.get("ci") or "paired bootstrap of A − B"


def left_out_note(result: AuditResult) -> str | None:
    """A sentence saying how many pairs are missing from the table because the model failed on them (None if none)."""
    summary = result.input_summary
    n_left_out = int(summary.get("n_pairs_with_errors") or 0)
    if not n_left_out:
        return None
    n_errors = int(summary.get("n_errors") or 0)
    total = result.n_pairs + n_left_out
    return (
        f"{n_left_out} of {total} pairs ({n_left_out / total:.1%}) are left out of this table because the model "
        f"failed on {n_errors} of their sides; the failures are kept in the run store and retried by the next run"
    )


def family_note(result: AuditResult) -> str:
    """What the correction spanned, in words: scope, family size, what was left out."""
    scope = {"run": "all axes of the run together", "axis": "this axis"}.get(
        result.correction_scope, f"the {result.correction_scope}"
    )
    primary = [m for m in result.measures if m.primary]
    secondary = len(result.measures) - len(primary)
    text = (
        f"{correction_name(result)} correction over {result.family_size} primary key(s) of {scope} "
        f"(keys where every pair scores the same are not tested)"
    )
    if secondary:
        text += f"; the {secondary} secondary key(s) are corrected as a family of their own"
    return text


#: Terminal labels: short enough that the table fits an 80-column terminal.
_SHORT_LABELS = {
    "diversity": "Diversity %",
    "distinct_1": "Distinct-1 %",
    "distinct_2": "Distinct-2 %",
    "offense_rate": "Offense %",
    "sentiment_positive": "Sentiment + %",
    "sentiment_negative": "Sentiment − %",
    "length": "Length (words)",
    "hit_token_limit": "Cut off %",
    "refusal_rate": "Refusal %",
    "degenerate_rate": "Degenerate %",
}


def _short_label(name: str) -> str:
    if name in _SHORT_LABELS:
        return _SHORT_LABELS[name]
    if name.endswith("_words"):
        return f"{name.removesuffix('_words').replace('_', ' ').capitalize()} words"
    return measure_label(name)


def rich_table(result: AuditResult) -> Table:
    """The summary table for a terminal: side means, difference, paired and adjusted p, CI.

    The paper's Z test and the effect sizes are in ``report.md`` and ``report.html``; the
    terminal keeps the columns a release decision needs, so that it fits 80 columns. The figures and
    the verdict never shrink (``no_wrap``): a verdict is a word of :data:`_SHORT_VERDICTS`, and the
    caption below the table explains a marked one and holds the masked re-test's figures. Where the
    width runs short, the interval wraps between its two bounds, and only then a label between its
    words; no word is ever split. Significant rows are bold red.
    """
    from rich import box
    from rich.text import (
        Text,  # Text, not str: group names and labels are never read as markup
    )

    rows = summary_rows(result)
    units = f", {result.n_clusters:,} dialogues" if result.n_clusters is not None else ""
    title = f"fairtalk: {result.axis} ({result.groups[0]} vs {result.groups[1]}), {result.n_pairs:,} pairs{units}"
    caption = "\n".join(line for line in (_caption(rows), ci_test_note(result)) if line)
    table = _summary_table_type()(
        title=Text(title),
        caption=Text(caption) if caption else None,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    cells = [
        (
            _short_label(row.name) + ("" if row.primary else " *"),
            row.a,
            row.b,
            row.p_adjusted,
            row.interval(_SHORT_SHIFT).replace(" pp", ""),
            _short_verdict(row.verdict),
        )
        for row in rows
    ]
    # Only the label and the interval may wrap, each between words (min_width: its longest word); the label
    # only where the interval, wrapped, still leaves too little room (see _summary_table_type).
    table.add_column(Text("Measure"), min_width=_longest_word("Measure", *(c[0] for c in cells)))
    for header in (*result.groups, "p adj."):
        table.add_column(Text(header), justify="right", no_wrap=True)  # figures never shrink
    table.add_column(Text("95% CI (A−B)"), justify="right", min_width=_longest_word("95% CI (A−B)", *(c[4] for c in cells)))
    table.add_column(Text("Verdict"), no_wrap=True)  # a word of a fixed vocabulary: never split
    for row, row_cells in zip(rows, cells, strict=True):
        table.add_row(*(Text(c) for c in row_cells), style="bold red" if row.significant else None)
    return table


@functools.cache
def _summary_table_type() -> type[Table]:
    """A ``rich`` Table whose first column (the labels) keeps each label on one line while the width allows.

    Rendered where the whole table does not fit, it first wraps its interval column (column 4) between
    the bounds; only where even that leaves too little room may a label wrap, between its words.
    """
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.measure import Measurement
    from rich.table import Table

    class SummaryTable(Table):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            label, interval = self.columns[0], self.columns[4]
            wide = Console(width=_UNBOUNDED)
            natural = Measurement.get(wide, wide.options, self).maximum
            widest = max(Measurement.get(wide, wide.options, cell).maximum for cell in (interval.header, *interval.cells))
            label.no_wrap = natural - widest + (interval.min_width or widest) <= options.max_width
            yield from super().__rich_console__(console, options)

    return SummaryTable


#: Wider than any table: rich measures a table's natural width within the width it is given.
_UNBOUNDED = 1 << 16


def _longest_word(*texts: str) -> int:
    """The width of the longest space-separated word in ``texts``: a column this wide never splits one."""
    return max(len(word) for text in texts for word in text.split())


def _caption(rows: list[TableRow]) -> str:
    """The lines below the terminal's table: the marked verdict explained, and the masked re-test's figures."""
    lines = [_IDENTICAL_NOTE] if any(row.verdict == _IDENTICAL for row in rows) else []
    shifted = [row for row in rows if row.shift is not None]
    if shifted:
        lines.append(_SHIFT_NOTE)
        explained = [row for row in shifted if row.ci95 == _NO_VALUE or row.ci_vs_test]  # no interval, or marked ‡
        lines += [f"{_short_label(row.name)}: {note}" for row in explained for note in row.notes if "Hodges-Lehmann" in note]
    decided = [f"{_short_label(row.name)}: {row.decided_by}" for row in rows if row.decided_by and row.ci_disagrees]
    if decided:
        lines.append(_DECIDED_NOTE + " · ".join(decided))
    masked = [f"{_short_label(row.name)} {row.masked}" for row in rows if row.masked is not None]
    if masked:
        lines.append("Masked A vs B (the group words masked on both sides): " + " · ".join(masked))
    if any(not row.primary for row in rows):
        lines.append(_SECONDARY_NOTE)
    return "\n".join(lines)


#: The terminal's verdicts: a fixed vocabulary whose words fit a narrow column (``equivalent within ±m`` is
#: ``equivalent``; the margins are in the reports, and the lines below the table name the measures shown equivalent).
_SHORT_VERDICTS = {
    "difference detected": "DIFFERENT",
    "equivalent": "equivalent",
    "inconclusive": "inconclusive",
    "not tested": "not tested",
    _IDENTICAL: "equivalent †",
}
#: The legend of the `` *`` the terminal's table puts after a secondary measure's label (report.md says the same).
_SECONDARY_NOTE = "* secondary measure: outside the gates, corrected as a family of its own"
_IDENTICAL_NOTE = (
    "† identical on every pair: no pair's two answers scored differently, and an exact bound on how often they "
    "could differ (not the 95% CI) shows the sides equivalent"
)
#: The terminal's name of the median shift a Wilcoxon row's 95% CI is of, and what it means.
_SHORT_SHIFT = "HL"
_SHIFT_NOTE = (
    f"{_SHORT_SHIFT}: the median shift (Hodges-Lehmann estimate of A − B) that Wilcoxon's test is about, before its 95% CI; "
    "the group columns are means"
)
#: Before the equivalence deciders of the rows whose 95% CI seems to say otherwise than their verdict.
_DECIDED_NOTE = "Equivalence follows the TOST's 1−2α interval or an exact bound, not the 95% CI: "


def _short_verdict(verdict: str) -> str:
    """The terminal's word for a verdict of :func:`verdict_text` (a text it does not know stays as it is)."""
    return _SHORT_VERDICTS.get(verdict, _SHORT_VERDICTS.get(verdict.split(" within")[0], verdict))
