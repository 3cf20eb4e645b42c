"""``report.html``: one self-contained page (jinja2, autoescaped) with the table, charts, pairs and manifest."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fairtalk._templating import jinja_environment
from fairtalk.files import write_text_atomic
from fairtalk.gates import GateOutcome
from fairtalk.records import PairsCheck
from fairtalk.report._by_turn import by_turn_header, by_turn_intro, by_turn_rows
from fairtalk.report._certificate import scorer_check_items
from fairtalk.report._decoding import result_decoding, result_header, result_served, undecided_reasons
from fairtalk.report._findings import Findings, axis_findings, different_labels
from fairtalk.report._gate_pairs import gate_pairs_line
from fairtalk.report._gate_section import axis_gates
from fairtalk.report._labelled import LABELLED_NOTE, labelled_lines
from fairtalk.report._origin import report_title, result_corpus, source_line
from fairtalk.report._plain_summary import plain_summary
from fairtalk.report._plots import bar_chart_png, by_turn_png, png_data_uri
from fairtalk.report._similarity_table import SIMILARITY_NOTE, similarity_row
from fairtalk.report._table import (
    COLUMNS,
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
from fairtalk.results import AuditResult, JudgeAnswer, Provenance, SimilarityResult

__all__ = ["MAX_SHOWN_CHARS", "clip", "judged_sides", "render_html", "write_html"]

_TEMPLATE = "report.html.j2"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fairtalk")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown"


#: Longest context or response shown in the HTML (the JSONL files keep the full text).
MAX_SHOWN_CHARS = 2000


def clip(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut.

    Examples
    --------
    >>> clip("abcdef", 3)
    'abc… [3 more characters; the full text is in responses.jsonl]'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters; the full text is in responses.jsonl]"


def _score(x: float) -> str:
    return f"{x:.3f}" if isinstance(x, (int, float)) and math.isfinite(x) else "n/a"


def judged_sides(judged: Sequence[JudgeAnswer]) -> dict[str, list[dict[str, str]]]:
    """Per side (``"a"``, ``"b"``) the judges' raw answers about it, for display: judge, answer (clipped), reading."""
    sides: dict[str, list[dict[str, str]]] = {"a": [], "b": []}
    for j in judged:
        value = j.value if isinstance(j.value, str) else f"{j.value:g}"
        answer = clip(j.answer) if j.answer is not None else f"(failed: {j.error})"
        sides.setdefault(j.side, []).append({"judge": j.judge, "answer": answer, "value": value})
    return sides


def _manifest_items(provenance: Provenance) -> list[tuple[str, str, bool]]:
    items = []
    for key, value in provenance.to_dict().items():
        if isinstance(value, (dict, list)):
            items.append((key, json.dumps(value, indent=2, ensure_ascii=False), True))
        else:
            items.append((key, "null" if value is None else str(value), False))
    return items


def render_html(
    result: AuditResult,
    *,
    plots: bool = True,
    csp: bool = True,
    similarity: SimilarityResult | None = None,
    pairs_check: PairsCheck | None = None,
    run_config: Mapping[str, Any] | None = None,
    gates: Sequence[GateOutcome] = (),
    answers: str | None = None,
    index: str | None = None,
) -> str:
    """The self-contained HTML report.

    Parameters
    ----------
    result : AuditResult
        The audit to render.
    plots : bool
        Embed the bar charts and, for a result with ``by_turn``, the gaps by turns (base64 PNGs).
        False skips matplotlib.
    csp : bool
        Add a Content-Security-Policy that forbids scripts and external loads
        (defence in depth; escaping alone keeps model text inert).
    similarity : SimilarityResult, optional
        The axis' counterfactual similarity test, shown after the summary when the audit ran it.
    pairs_check : PairsCheck, optional
        The pairs' validity check: one line near the top, linking
        ``pairs_check.json`` beside the report.
    run_config : mapping, optional
        The audit run's config (``AuditRun.config``): the header then names its turns.
    gates : sequence of GateOutcome
        The outcomes (:func:`fairtalk.gates.evaluate`) of the gates requested, which a section
        states for this axis; none requested (the default), none is shown.
    answers : str, optional
        Where the axis' answers came from (:func:`~fairtalk.report._origin.answers_line`), from the
        run (``write_run``); None: no line.
    index : str, optional
        The run's front page from the report's folder (``../index.html``, from ``write_run``),
        linked above the title; None: no link.
    """
    rows = summary_rows(result)
    png = bar_chart_png(result) if plots else None
    divergent = [
        {
            "label": measure_label(d.measure),
            "pair_id": d.pair_id,
            "context_a": clip(d.context_a),
            "context_b": clip(d.context_b),
            "response_a": clip(d.response_a),
            "response_b": clip(d.response_b),
            "score_a": _score(d.score_a),
            "score_b": _score(d.score_b),
            "judged": judged_sides(d.judged),
        }
        for d in result.divergent_pairs
    ]
    context = {
        "version": _version(),
        "csp": csp,
        "axis": result.axis,
        "groups": result.groups,
        "n_pairs": result.n_pairs,
        "left_out": left_out_note(result),
        "alpha": f"{result.alpha:g}",
        "correction": correction_name(result),
        "decoding": result_decoding(result),
        "header": result_header(result, run_config),
        "undecided": undecided_reasons(result.provenance),
        "served": result_served(result),
        "corpus": result_corpus(result),
        "answers": answers,
        "source": source_line(result),
        "title": report_title(result),
        "index": index,
        "distinct": distinct_definition(result),
        "ci_method": ci_method(result),
        "ci_test_note": ci_test_note(result),
        **_headline(axis_findings(result)),
        "warnings": list(result.warnings),
        "scorer_check": scorer_check_items(result),
        "n_clusters": result.n_clusters,
        "family": family_note(result),
        "notes": [(row.label, note) for row in rows for note in row.notes],
        "summary_header": verdict_second(("Measure", *result.groups, *COLUMNS)),
        "summary": [(row, verdict_second(row.cells())) for row in rows],
        "rows": rows,
        "has_masked": any(r.masked is not None for r in rows),
        "tests": sorted({m.paired_test for m in result.measures if m.paired_test}),
        "chart": None if png is None else png_data_uri(png),
        "divergent": divergent,
        "has_judged": any(d.judged for d in result.divergent_pairs),
        "input_summary": sorted(dict(result.input_summary).items()),
        "manifest": _manifest_items(result.provenance),
        "similarity": [] if similarity is None else [similarity_row(row) for row in similarity.rows],
        "plain": plain_summary(result, similarity),
        "similarity_note": SIMILARITY_NOTE,
        "labelled": labelled_lines(result),
        "gate_pairs": gate_pairs_line(result),
        "labelled_note": LABELLED_NOTE,
        "validity": validity_line(pairs_check),
        "validity_file": PAIRS_CHECK_FILE,
        "validity_flag": bool(pairs_check and pairs_check.n_leftover),
        "by_turn": _by_turn(result, plots),
        "gates": axis_gates(result.axis, gates),
    }
    page: str = jinja_environment().get_template(_TEMPLATE).render(**context)
    return page


def _headline(found: Findings) -> dict[str, Any]:
    """The headline's lists, as the gates decide them (:func:`~fairtalk.report._findings.axis_findings`).

    A key the labels show different is counted with the scorer's differences and marked; one they
    fail the equivalence gate on is not called equivalent but named in a badge of its own; one
    shown equivalent, or different within its margin, whose equivalence they could not confirm is
    marked so, in the green list or the red one (:func:`~fairtalk.report._findings.different_labels`),
    as the console marks it; the badge is green only where every primary key stands equivalent and
    the axis fails no gate of its own.
    """
    return {
        "biased": different_labels(found),
        "secondary_different": [measure_label(name) for name in found.secondary],
        "all_equivalent": found.all_equivalent and not found.withheld,
        "equivalent": [
            f"{measure_label(name)} (the labels could not confirm it)" if name in found.unconfirmed else measure_label(name)
            for name in found.equivalent
        ],
        "beyond": [measure_label(name) for name in found.beyond],
        "inconclusive": [measure_label(name) for name in found.inconclusive],
    }


def _by_turn(result: AuditResult, plots: bool) -> dict[str, Any] | None:
    """The page's "Bias over turns" section: the table, the sentences under it and the plot (None without ``by_turn``)."""
    turned = result.by_turn
    if turned is None:
        return None
    png = by_turn_png(turned) if plots else None
    return {
        "header": by_turn_header(result.groups),
        "rows": by_turn_rows(turned),
        "intro": by_turn_intro(turned),
        "chart": None if png is None else png_data_uri(png),
    }


def write_html(
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
    """Write ``report.html`` to ``path`` and return it (``gates``: the outcomes of the gates requested)."""
    path = Path(path)
    page = render_html(
        result, similarity=similarity, pairs_check=pairs_check, run_config=run_config, gates=gates, answers=answers, index=index
    )
    write_text_atomic(path, page)
    return path
