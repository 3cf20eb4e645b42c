"""The Markdown report: the paper's Tables 3-6 layout with paired tests, correction, CI and effect size."""

from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fairtalk.files import write_text_atomic
from fairtalk.gates import GateOutcome
from fairtalk.records import PairsCheck
from fairtalk.report._by_turn import by_turn_header, by_turn_intro, by_turn_rows
from fairtalk.report._certificate import FLAG, scorer_check_items
from fairtalk.report._decoding import result_decoding, result_header, result_served, undecided_reasons
from fairtalk.report._gate_pairs import gate_pairs_line
from fairtalk.report._gate_section import axis_gates, outcome_word
from fairtalk.report._html import clip, judged_sides
from fairtalk.report._labelled import LABELLED_NOTE, labelled_lines
from fairtalk.report._origin import report_title, result_corpus, source_line
from fairtalk.report._plain_summary import plain_summary
from fairtalk.report._similarity_table import similarity_markdown
from fairtalk.report._table import (
    COLUMNS,
    TableRow,
    ci_method,
    ci_test_note,
    correction_name,
    distinct_definition,
    family_note,
    left_out_note,
    measure_label,
    summary_rows,
    verdict_second,
)
from fairtalk.report._validity import PAIRS_CHECK_FILE, validity_line
from fairtalk.results import AuditResult, SimilarityResult

__all__ = ["md_escape", "render_markdown", "write_markdown"]

_MD_ESCAPES = str.maketrans({"\\": "\\\\", "|": "\\|", "\n": " ", "\r": " ", "*": "\\*", "_": "\\_", "`": "\\`"})
#: Only ``<`` that could open a tag and ``&`` that could start an entity need escaping ("< 1e-5" stays readable).
_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_MD_ENTITY = re.compile(r"&(?=#?\w+;)")


def md_escape(text: str) -> str:
    """Text that renders literally in a Markdown table cell (no HTML, no emphasis, no column breaks)."""
    text = str(text).translate(_MD_ESCAPES)
    return _MD_TAG.sub("&lt;", _MD_ENTITY.sub("&amp;", text))


def _row(cells: tuple[str, ...], *, bold: bool) -> str:
    cells = tuple(md_escape(c) for c in cells)
    if bold:
        cells = tuple(f"**{c}**" for c in cells)
    return "| " + " | ".join(cells) + " |"


def _undecided_list(result: AuditResult) -> tuple[str, ...]:
    """The keys a sequential audit spent its budget on and why each is undecided: a list, each item wrapped at 80 columns."""
    reasons = undecided_reasons(result.provenance)
    if not reasons:
        return ()
    items = (
        textwrap.fill(md_escape(f"{why}."), width=80, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False)
        for why in reasons
    )
    return (*items, "")


def render_markdown(
    result: AuditResult,
    *,
    similarity: SimilarityResult | None = None,
    pairs_check: PairsCheck | None = None,
    run_config: Mapping[str, Any] | None = None,
    gates: Sequence[GateOutcome] = (),
    answers: str | None = None,
    index: str | None = None,
) -> str:
    """The summary table as Markdown, with the notes a reader needs to interpret it (and the similarity test, if run).

    ``run_config`` is the audit run's config (``AuditRun.config``): the header then names its turns.
    ``gates``: the outcomes (:func:`fairtalk.gates.evaluate`) of the gates requested, which a
    section states for this axis; none requested, none is shown. ``answers``: where the axis'
    answers came from (:func:`~fairtalk.report._origin.answers_line`), from the run; None: no line.
    ``index``: the run's front page from the report's folder (``../index.html``), linked under the title; None: no link.
    """
    rows = summary_rows(result)
    group_a, group_b = result.groups
    has_masked = any(r.masked is not None for r in rows)
    header = verdict_second(("Measure", group_a, group_b, *COLUMNS) + (("Masked A vs B",) if has_masked else ()))
    align = ("---", "---") + ("---:",) * (len(header) - 2)
    lines = [
        f"# {report_title(result)}: {md_escape(result.axis)} ({md_escape(group_a)} vs {md_escape(group_b)})",
        "",
        *((f"[← {md_escape(_name(index))}]({index}): every axis of this run", "") if index else ()),
        f"{result.n_pairs:,} pairs · α = {result.alpha:g} · correction: {correction_name(result)}",
        "",
        *((f"decoding {md_escape(decoding)}", "") if (decoding := result_decoding(result)) else ()),
        *((md_escape(run_line), "") if (run_line := result_header(result, run_config)) else ()),
        *_undecided_list(result),
        *((_flagged(*served), "") if (served := result_served(result)) else ()),
        *((_flagged(*corpus), "") if (corpus := result_corpus(result)) else ()),
        *((f"{md_escape(answers)}.", "") if answers else ()),
        *((f"{md_escape(source)}.", "") if (source := source_line(result)) else ()),
        *(part for sentence in plain_summary(result, similarity) for part in (md_escape(sentence), "")),
        *((f"**Left out:** {md_escape(note)}.", "") if (note := left_out_note(result)) else ()),
        *(part for warning in result.warnings for part in (f"**Warning:** {md_escape(warning)}.", "")),
        *(
            (f"{md_escape(line)}; details in [{PAIRS_CHECK_FILE}]({PAIRS_CHECK_FILE}).", "")
            if (line := validity_line(pairs_check))
            else ()
        ),
        *(
            part
            for line, kind in scorer_check_items(result)
            for part in (f"**{md_escape(line)}.**" if kind == FLAG else f"{md_escape(line)}.", "")
        ),
        _row(header, bold=False),
        "| " + " | ".join(align) + " |",
    ]
    for row in rows:
        cells = verdict_second(row.cells() + ((row.masked or "–",) if has_masked else ()))
        if not row.primary:
            cells = (cells[0] + " *", *cells[1:])
        lines.append(_row(cells, bold=row.significant))
    lines += _table_notes(result, rows, has_masked=has_masked)
    lines += _gate_markdown(result.axis, gates)
    if labelled := labelled_lines(result):
        lines += [
            "",
            "## Gaps corrected by human labels",
            "",
            *(f"- {md_escape(line)}." for line in labelled),
            "",
            f"{md_escape(LABELLED_NOTE)[0].upper()}{md_escape(LABELLED_NOTE)[1:]}.",
        ]
    if similarity is not None:
        lines += similarity_markdown(similarity)
    lines += _by_turn_markdown(result)
    lines += _divergent_markdown(result)
    return "\n".join(lines) + "\n"


def _flagged(line: str, flag: bool) -> str:
    """A report line, in bold when it flags something the reader must check."""
    return f"**{md_escape(line)}.**" if flag else f"{md_escape(line)}."


def _table_notes(result: AuditResult, rows: list[TableRow], *, has_masked: bool) -> list[str]:
    """The notes below the summary table: units, tests, interval, verdict rules, and each row's own notes."""
    tests = sorted({m.paired_test for m in result.measures if m.paired_test})
    distinct = distinct_definition(result)
    lines = [
        "",
        "- Rates and diversity in %; word counts are averages per response. Difference = (A − B) / A (for a rate, only when both sides are at least 5%).",
        "- Z and p: the paper's two-sample Z test (two-sided); none for corpus-level measures.",
        f"- p (paired): {', '.join(md_escape(t) for t in tests) or 'paired test'}; p (adj.): {md_escape(family_note(result))}.",
        f"- 95% CI of A − B (percentage points for rates): {md_escape(ci_method(result))}.",
        "- Verdict: *difference detected* when p (adj.) < α; *equivalent* when the difference is shown to lie "
        "within the margin (two one-sided tests at α: the 1 − 2α interval in the equivalence column lies inside the "
        "margin, not the 95% CI; where few units differ, the exact bound there on how many could differ decides); "
        "otherwise *inconclusive*: no difference was detected, "
        "and none can be ruled out. MDE: the smallest difference this sample would detect with 80% power.",
        f"- **Bold** rows: p (adj.) < {result.alpha:g}.",
    ]
    if (disagree := ci_test_note(result)) is not None:
        lines.append(f"- {md_escape(disagree)}.")
    if result.n_clusters is not None:
        lines.append(
            f"- {result.n_clusters:,} dialogues among the {result.n_pairs:,} pairs: tests and intervals treat "
            "each dialogue, not each pair, as one independent unit."
        )
    if any(not row.primary for row in rows):
        lines.append("- Rows marked * are secondary measures.")
    if (gate := gate_pairs_line(result)) is not None:
        lines.append(f"- {md_escape(gate[0].upper() + gate[1:])}.")
    for row in rows:
        for note in row.notes:
            lines.append(f"- {md_escape(row.label)}: {md_escape(note)}.")
    if distinct is not None:
        lines.append(f"- Distinct-n definition: {md_escape(distinct)}.")
    if has_masked:
        lines.append(
            "- Masked: the same measure with the group words masked (scorer-bias check); “remains” is the share of "
            "the gap left, and none is given where the unmasked gap is about 0 (below 0.001 pp, or 1e-5 for a count)."
        )
    return lines


def _gate_markdown(axis: str, gates: Sequence[GateOutcome]) -> list[str]:
    """The "Gate requested" section: each gate's headline, its outcome on ``axis`` and its decisions there (none without a gate)."""
    shown = axis_gates(axis, gates)
    if not shown:
        return []
    lines = ["", f"## Gate{'s' if len(shown) > 1 else ''} requested"]
    for gate in shown:
        lines += [
            "",
            f"**{md_escape(gate.headline)}**",
            "",
            f"On this axis ({md_escape(axis)}): {outcome_word(gate.axis_passed)}.",
            "",
            *(f"- {md_escape(line)}." for line in gate.lines()),
        ]
    return lines


def _by_turn_markdown(result: AuditResult) -> list[str]:
    """The "Bias over turns" section: one row per (bucket, key), bold where a difference is detected (none without ``by_turn``)."""
    turned = result.by_turn
    if turned is None:
        return []
    header = by_turn_header(result.groups)
    lines = [
        "",
        "## Bias over turns",
        "",
        "Each measure's gap A − B by the turns since the identity appeared (95% CI); "
        "the plot is in report.html, every row in by_turn.csv.",
        "",
        _row(header, bold=False),
        "| " + " | ".join(("---:",) * 3 + ("---",) + ("---:",) * (len(header) - 5) + ("---",)) + " |",
    ]
    lines += [_row(row.cells, bold=row.detected) for row in by_turn_rows(turned)]
    lines += ["", *(f"- {md_escape(line)}." for line in by_turn_intro(turned))]
    return lines


def _divergent_markdown(result: AuditResult) -> list[str]:
    """The most divergent pairs as a list: each side's response and score, and the judges' raw answers about it."""
    if not result.divergent_pairs:
        return []
    lines = ["", "## Most divergent pairs", ""]
    for d in result.divergent_pairs:
        judged = judged_sides(d.judged)
        lines.append(f"- {md_escape(measure_label(d.measure))}, pair {md_escape(d.pair_id)}:")
        for side, group, response, score in (
            ("a", result.groups[0], d.response_a, d.score_a),
            ("b", result.groups[1], d.response_b, d.score_b),
        ):
            answers = "".join(
                f"; judge{'' if j['judge'] == 'judge' else ' ' + md_escape(j['judge'])}: "
                f"\u201c{md_escape(j['answer'])}\u201d \u2192 {md_escape(j['value'])}"
                for j in judged.get(side, [])
            )
            lines.append(f"  - {md_escape(group)} (score {_score(score)}): {md_escape(clip(response))}{answers}")
    if any(d.judged for d in result.divergent_pairs):
        lines += [
            "",
            "The judge's raw answer about each response (read with the group words masked) and how it was "
            "read; every answer is in judge.jsonl beside this report.",
        ]
    return lines


def _name(href: str) -> str:
    """The file a relative link points at (``../index.html``: ``index.html``)."""
    return href.rsplit("/", 1)[-1]


def _score(x: float | None) -> str:
    return f"{x:.3f}" if isinstance(x, (int, float)) and math.isfinite(x) else "n/a"


def write_markdown(
    result: AuditResult,
    path: str | os.PathLike[str],
    *,
    similarity: SimilarityResult | None = None,
    pairs_check: PairsCheck | None = None,
    run_config: Mapping[str, Any] | None = None,
    gates: Sequence[GateOutcome] = (),
    answers: str | None = None,
    index: str | None = None,
) -> Path:
    """Write ``report.md`` to ``path`` and return it (``gates``: the outcomes of the gates requested)."""
    path = Path(path)
    text = render_markdown(
        result, similarity=similarity, pairs_check=pairs_check, run_config=run_config, gates=gates, answers=answers, index=index
    )
    write_text_atomic(path, text)
    return path
