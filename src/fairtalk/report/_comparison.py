"""The debiasing comparison (paper 001, Table 7): per measure, A, B, difference and p for each model.

``table7.md`` and the rich table put the models side by side; ``table7.csv`` has one row per
(model, measure); ``results.json`` is ``DebiasComparison.to_dict()``. A debiased model's
difference is marked only where the test of ``fairtalk compare`` supports it (the paper colours
these green and red by the point estimates alone): ↓ when its gap is shown smaller than the
baseline's (verdict improved), ↑ when shown larger (regressed), · otherwise (no detectable
change: unchanged within the margin, or inconclusive). A key compare does not test (a
corpus-level measure such as diversity) gets no mark.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

from fairtalk.files import staged, write_text_atomic
from fairtalk.report._csv_report import csv_cell
from fairtalk.report._markdown import md_escape
from fairtalk.report._table import TableRow, correction_name, measure_label, summary_rows
from fairtalk.results import AuditResult, Change, DebiasComparison

if TYPE_CHECKING:  # rich is imported lazily by comparison_rich_table()
    from rich.table import Table

__all__ = [
    "COMPARISON_CSV_COLUMNS",
    "COMPARISON_FILES",
    "comparison_rich_table",
    "render_comparison_csv",
    "render_comparison_markdown",
    "table_measures",
    "write_comparison",
]

#: Table 7's rows (attribute-word rows go after sentiment), then diversity, length and refusals.
_LEADING = ("offense_rate", "sentiment_positive", "sentiment_negative")
_TRAILING = ("diversity", "length", "refusal_rate")
#: Column order of ``table7.csv`` (rates and diversity as fractions, as in results.json).
COMPARISON_CSV_COLUMNS = (
    "model",
    "debias",
    "measure",
    "label",
    "kind",
    "a",
    "b",
    "difference",
    "difference_abs",
    "p_paired",
    "paired_test",
    "p_adjusted",
    "significant",
    "gap_vs_baseline",
    "change_verdict",
    "change",
    "change_low",
    "change_high",
    "p_change_adjusted",
)
#: What :func:`write_comparison` writes: the table as Markdown and CSV, and the comparison as JSON.
COMPARISON_FILES = ("table7.md", "table7.csv", "results.json")
#: The gap against the baseline's, as Table 7 marks it (``gap_vs_baseline`` in table7.csv).
LOWER, HIGHER, NO_CHANGE, NOT_COMPARED = "lower", "higher", "no detectable change", "not compared"
_MARK = {LOWER: " ↓", HIGHER: " ↑", NO_CHANGE: " ·", NOT_COMPARED: "", "": ""}
_DASH = "–"


def table_measures(result: AuditResult) -> tuple[str, ...]:
    """The rows: Table 7's (offense, sentiment, attribute words), then diversity, length and refusal rate."""
    names = [m.name for m in result.measures]
    words = [n for n in names if n.endswith("_words")]
    return tuple(n for n in (*_LEADING, *words, *_TRAILING) if n in names)


def _gap(comparison: DebiasComparison, model: str, measure: str) -> str:
    """``lower``/``higher`` when compare's verdict is improved/regressed, else ``no detectable change``; ``""`` for the baseline."""
    if model == next(iter(comparison.models)):
        return ""
    verdict = comparison.change_verdict(model, measure)
    if verdict is None:
        return NOT_COMPARED
    return {Change.IMPROVED: LOWER, Change.REGRESSED: HIGHER}.get(verdict, NO_CHANGE)


def _rows(comparison: DebiasComparison) -> dict[str, dict[str, TableRow]]:
    """Model -> measure -> formatted row."""
    return {name: {row.name: row for row in summary_rows(result)} for name, result in comparison.results.items()}


def _cells(comparison: DebiasComparison, rows: dict[str, dict[str, TableRow]], measure: str) -> list[str]:
    cells = [measure_label(measure)]
    for model in comparison.models:
        row = rows[model].get(measure)
        if row is None:
            cells += [_DASH] * 4
            continue
        cells += [row.a, row.b, row.difference + _MARK[_gap(comparison, model, measure)], row.p_adjusted]
    return cells


def _headers(comparison: DebiasComparison) -> list[str]:
    group_a, group_b = comparison.groups
    headers = ["Measure"]
    for model in comparison.models:
        headers += [f"{model} {group_a}", f"{model} {group_b}", f"{model} diff.", f"{model} p"]
    return headers


def _measures(comparison: DebiasComparison) -> tuple[str, ...]:
    return table_measures(next(iter(comparison.results.values())))


def _minutes(seconds: float | None) -> str:
    return _DASH if seconds is None else f"{seconds / 60:.1f}"


def _share(n: int, total: int) -> str:
    return f"{n} ({100 * n / total:.1f}%)" if total else str(n)


#: How ``table7.md``'s title names each trained model (``TrainConfig.model``); Seq2Seq where it says none.
_ARCHITECTURES = {"seq2seq": "Seq2Seq", "retrieval": "retrieval"}


def render_comparison_markdown(comparison: DebiasComparison) -> str:
    """``table7.md``: the side-by-side table, the models' training summary and the notes."""
    rows = _rows(comparison)
    group_a, group_b = comparison.groups
    headers = _headers(comparison)
    first = next(iter(comparison.results.values()))
    architecture = _ARCHITECTURES.get(str(next(iter(comparison.models.values())).training.get("model")), "Seq2Seq")
    lines = [
        f"# Debiasing the {architecture} model: {md_escape(comparison.axis)} ({md_escape(group_a)} vs {md_escape(group_b)})",
        "",
        (
            f"{comparison.n_pairs:,} pairs from {md_escape(comparison.eval_corpus)} ({md_escape(comparison.eval_split)}) · "
            f"the same pairs for every model · seed {comparison.seed} · {md_escape(comparison.mode)} mode"
        ),
        "",
        "| " + " | ".join(md_escape(h) for h in headers) + " |",
        "| --- |" + " ---: |" * (len(headers) - 1),
    ]
    for measure in _measures(comparison):
        lines.append("| " + " | ".join(md_escape(c) for c in _cells(comparison, rows, measure)) + " |")
    lines += [
        "",
        (
            "| Model | Debiasing | Trained now | Training (min) | Validation | Pairs answered differently | "
            "Distinct responses | Checkpoint |"
        ),
        "| --- | --- | --- | ---: | --- | ---: | ---: | --- |",
    ]
    for model in comparison.models.values():
        figures = ", ".join(f"{k} {v:.3f}" for k, v in model.validation.items()) or _DASH
        lines.append(
            f"| {md_escape(model.name)} | {md_escape(model.debias)} | {'yes' if model.trained else 'no (cached)'} | "
            f"{_minutes(model.training_seconds)} | {md_escape(figures)} | {_share(model.n_different, comparison.n_pairs)} | "
            f"{model.n_distinct} | {md_escape(model.checkpoint)} |"
        )
    lines += [
        "",
        "- Rates and diversity in %; word counts are averages per response. Difference = (A − B) / A (– when A is 0, or for a rate below 5% on either side).",
        (
            f"- p: the paired test, {correction_name(first)}-adjusted across each model's measures "
            "(per-model reports in the model folders give Z, CI and effect sizes)."
        ),
        (
            "- ↓ / ↑: the debiased model's gap |A − B| is shown smaller / larger than the baseline's by the test of "
            "`fairtalk compare` (the change in gap on the same pairs, corrected over the measures); · no detectable "
            "change (unchanged within the margin, or inconclusive); no mark: not compared (a corpus-level measure). "
            "results.json's `changes` has each change with its interval and p."
        ),
        (
            "- Pairs answered differently: the two sides of a pair got different responses; distinct responses count "
            "the different texts over both sides (few means generic responses)."
        ),
    ]
    return "\n".join(lines) + "\n"


def comparison_rich_table(comparison: DebiasComparison) -> Table:
    """The comparison as a ``rich`` Table, one block of rows per model (fits an 80-column terminal)."""
    from rich.table import Table
    from rich.text import Text

    rows = _rows(comparison)
    group_a, group_b = comparison.groups
    title = f"{comparison.axis} ({group_a} vs {group_b}): {comparison.n_pairs} pairs, the same for every model"
    caption = "↓ / ↑: gap shown smaller / larger than the baseline's (fairtalk compare) · ·: no detectable change"
    table = Table(title=Text(title), caption=Text(caption))
    for header in ("Model", "Measure", group_a, group_b, "Diff.", "p (adj.)"):
        table.add_column(Text(header), justify="left" if header in ("Model", "Measure") else "right")
    measures = _measures(comparison)
    for model in comparison.models:
        for i, measure in enumerate(measures):
            cells = _cells(comparison, rows, measure)
            start = 1 + 4 * list(comparison.models).index(model)
            table.add_row(
                Text(model if i == 0 else ""),
                Text(cells[0]),
                *(Text(c) for c in cells[start : start + 4]),
                end_section=i == len(measures) - 1,
            )
    return table


def render_comparison_csv(comparison: DebiasComparison) -> str:
    """``table7.csv``: one row per model and Table-7 measure."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COMPARISON_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for name, model in comparison.models.items():
        result = model.result
        for measure in _measures(comparison):
            m = result.measure(measure)
            writer.writerow(
                {
                    k: csv_cell(v)
                    for k, v in {
                        "model": name,
                        "debias": model.debias,
                        "measure": m.name,
                        "label": measure_label(m.name),
                        "kind": m.kind,
                        "a": m.a,
                        "b": m.b,
                        "difference": m.difference,
                        "difference_abs": m.a - m.b,
                        "p_paired": m.p_paired,
                        "paired_test": m.paired_test,
                        "p_adjusted": m.p_adjusted,
                        "significant": m.detected(),
                        "gap_vs_baseline": _gap(comparison, name, measure),
                        **_change_cells(comparison, name, measure),
                    }.items()
                }
            )
    return buffer.getvalue()


def _change_cells(comparison: DebiasComparison, model: str, measure: str) -> dict[str, object]:
    """The change in gap against the baseline (compare's figures), empty for the baseline and keys not compared."""
    row = comparison.gap_change(model, measure)
    if row is None:
        return dict.fromkeys(("change_verdict", "change", "change_low", "change_high", "p_change_adjusted"))
    return {
        "change_verdict": row.verdict.value,
        "change": row.change,
        "change_low": row.change_ci[0],
        "change_high": row.change_ci[1],
        "p_change_adjusted": row.p_adjusted,
    }


def write_comparison(comparison: DebiasComparison, out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write ``table7.md``, ``table7.csv`` and ``results.json`` into ``out_dir``, swapped in together; return their paths.

    Only files fairtalk wrote are replaced (:func:`fairtalk.files.staged`): the user's own file
    of one of these names is an OutputError, and nothing changes.
    """
    folder = Path(out_dir)
    names = {"md": COMPARISON_FILES[0], "csv": COMPARISON_FILES[1], "json": COMPARISON_FILES[2]}
    with staged(folder) as staging:
        write_text_atomic(staging / names["md"], render_comparison_markdown(comparison))
        write_text_atomic(staging / names["csv"], render_comparison_csv(comparison), newline="")
        write_text_atomic(staging / names["json"], comparison.to_json())
    return {kind: folder / name for kind, name in names.items()}
