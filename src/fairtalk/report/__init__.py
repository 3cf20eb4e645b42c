"""Render the results: an audit's files, a run's index, a debiasing comparison and a prompts analysis.

An ``AuditResult`` becomes results.json, results.csv, a Markdown table and a self-contained HTML
page; a prompts analysis its own (:mod:`.prompt_analysis`). The report consumes only
``fairtalk.results``; it computes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from fairtalk._jsonl import MAX_RECORD_BYTES, jsonable
from fairtalk._pairs_jsonl import is_pairs_check, is_pairs_file
from fairtalk._responses import is_responses_file
from fairtalk._templating import jinja_environment
from fairtalk.files import (
    check_default_output,
    check_folder_kind,
    check_not_input,
    check_output_folder,
    check_output_name,
    check_outside,
    ensure_folder,
    staged,
)
from fairtalk.gates import GateOutcome
from fairtalk.report._comparison import (
    COMPARISON_FILES,
    comparison_rich_table,
    render_comparison_csv,
    render_comparison_markdown,
    write_comparison,
)
from fairtalk.report._csv_report import CSV_COLUMNS
from fairtalk.report._decoding import result_served
from fairtalk.report._findings import Findings, axis_findings
from fairtalk.report._formats import FILE_NAMES, FORMATS, JUDGE_FILE, check_formats, write_formats
from fairtalk.report._html import render_html
from fairtalk.report._index import (
    INDEX_FILE,
    RUN_FILE,
    RunFiles,
    check_run_folder,
    previous_axes,
    previous_entries,
    render_index,
    sequential_summary,
    write_index,
    write_run,
)
from fairtalk.report._json_report import render_json
from fairtalk.report._junit import (
    comparison_step_summary,
    error_junit_xml,
    is_junit_file,
    junit_xml,
    step_summary,
    write_junit,
)
from fairtalk.report._labelled import labelled_lines
from fairtalk.report._markdown import md_escape, render_markdown
from fairtalk.report._model_comparison import COMPARISON_FILES as MODEL_COMPARISON_FILES
from fairtalk.report._model_comparison import (
    gate_lines,
    model_comparison_table,
    model_comparison_title,
    write_model_comparison,
)
from fairtalk.report._origin import source_line
from fairtalk.report._plain_summary import plain_summary
from fairtalk.report._planted import PLANTED_FILES, write_planted_report
from fairtalk.report._prompt_analysis import REPORT_FILES as PROMPTS_REPORT_FILES
from fairtalk.report._prompt_analysis import (
    failed_completions_note,
    prompts_payload,
    render_prompts_html,
    write_prompts_report,
)
from fairtalk.report._similarity_table import divergence_meaning, similarity_basis, similarity_row
from fairtalk.report._table import (
    ci_estimate,
    different_measures,
    family_note,
    gate_amount,
    left_out_note,
    measure_amount,
    rich_table,
    summary_rows,
    verdict_text,
)
from fairtalk.results import AuditResult

#: What each kind of report folder needs, said when a folder holds another command's outputs.
_REPORT_NEEDS = {"score": "a score's report needs", "comparison": "a comparison needs", "prompts": "a prompt analysis needs"}
_MSG_RESULT_TYPE = (
    "write_report: result must be an AuditResult (fairtalk.score's result, or an AuditRun's results[AXIS]), got {type}"
)

__all__ = [
    "Findings",
    "axis_findings",
    "jsonable",
    "render_json",
    "junit_xml",
    "plain_summary",
    "source_line",
    "md_escape",
    "CSV_COLUMNS",
    "MODEL_COMPARISON_FILES",
    "INDEX_FILE",
    "RUN_FILE",
    "previous_axes",
    "previous_entries",
    "sequential_summary",
    "gate_lines",
    "model_comparison_table",
    "model_comparison_title",
    "write_model_comparison",
    "similarity_basis",
    "divergence_meaning",
    "similarity_row",
    "labelled_lines",
    "comparison_step_summary",
    "step_summary",
    "write_junit",
    "is_junit_file",
    "error_junit_xml",
    "COMPARISON_FILES",
    "PLANTED_FILES",
    "write_planted_report",
    "FILE_NAMES",
    "FORMATS",
    "JUDGE_FILE",
    "PROMPTS_REPORT_FILES",
    "RunFiles",
    "check_not_input",
    "check_report_folder",
    "check_run_folder",
    "comparison_rich_table",
    "ci_estimate",
    "different_measures",
    "failed_completions_note",
    "family_note",
    "gate_amount",
    "left_out_note",
    "measure_amount",
    "verdict_text",
    "render_comparison_csv",
    "render_comparison_markdown",
    "render_html",
    "render_index",
    "render_markdown",
    "result_served",
    "render_prompts_html",
    "prompts_payload",
    "rich_table",
    "summary_rows",
    "write_comparison",
    "write_index",
    "write_prompts_report",
    "write_report",
    "write_run",
    "jinja_environment",
    # where the CLI checks, before any work, that an output may be written
    "MAX_RECORD_BYTES",
    "check_default_output",
    "check_output_name",
    "check_output_folder",
    "is_pairs_check",
    "is_pairs_file",
    "is_responses_file",
]


def write_report(
    result: AuditResult,
    out_dir: str | os.PathLike[str],
    *,
    formats: Iterable[str] = FORMATS,
    gates: Sequence[GateOutcome] = (),
) -> dict[str, Path]:
    """Write the report files for ``result`` into ``out_dir`` (created if missing).

    The files are written into a staging folder first and moved in together, so a kill or
    a full disk leaves either the old report or the new one, never a truncated file or a mix.

    Parameters
    ----------
    result : AuditResult
        The audit to write.
    out_dir : str or path
        Folder for the files; created with its parents.
    formats : iterable of str, or str
        Any of ``"json"`` (results.json), ``"csv"`` (results.csv), ``"md"`` (report.md)
        and ``"html"`` (report.html); one name alone is that one format.
    gates : sequence of GateOutcome
        The outcomes (:func:`fairtalk.gates.evaluate`) of the gates requested, which report.md
        and report.html state; none (the default): no gate is shown.

    Returns
    -------
    dict of str to Path
        The path written for each format, in the order given, and ``"judge"``: ``judge.jsonl``,
        every judge's raw answer (when a judge ran).

    Raises
    ------
    TypeError
        ``result`` is not an AuditResult (before anything is written).
    SpecError
        An unknown format (before anything is written).
    OutputError
        ``out_dir`` is a file, or a file cannot be written (what was there stays as it was).
    """
    if not isinstance(result, AuditResult):
        raise TypeError(_MSG_RESULT_TYPE.format(type=type(result).__name__))
    formats = check_formats(formats)
    folder = Path(out_dir)
    with staged(folder) as staging:
        write_formats(result, staging, formats, gates=gates)
    paths = {name: folder / FILE_NAMES[name] for name in formats}
    return {**paths, "judge": folder / JUDGE_FILE} if result.judge_answers else paths


def check_report_folder(
    out_dir: str | os.PathLike[str], inputs: Mapping[str, object], names: Iterable[str] | None = None, *, kind: str
) -> None:
    """Raise OutputError before any work if ``out_dir`` is a file or a report file would replace an input.

    ``inputs`` maps what a path is (``"--responses"``) to the path (None: skipped); ``names``
    are the files the report writes (default: the audit report's). Nor may ``out_dir`` be the
    root, the home folder or hold an input, and a report file already there must be one
    fairtalk wrote (:func:`fairtalk.files.check_output_folder`). ``kind`` is the report's
    (``score``, ``comparison``, ``prompts``): a folder holding another command's outputs (an
    audit's run, a checkpoint, another kind of report) is refused, one of its own kind is
    replaced (:func:`fairtalk.files.check_folder_kind`).
    """
    check_output_name(out_dir, option="the output folder")  # before Path(): '' would become '.'
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        ensure_folder(folder)  # raises: a file, not a folder
    entries = tuple(FILE_NAMES.values() if names is None else names)
    check_outside(folder, entries, dict(inputs))
    check_output_folder(folder, dict(inputs), replaces=entries)
    check_folder_kind(folder, kind, option="the output folder", writes=_REPORT_NEEDS[kind])
