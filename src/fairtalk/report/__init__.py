"""Render the results: an audit's files, a run's index, a debiasing comparison and a prompts analysis.

An ``AuditResult`` becomes results.json, results.csv, a Markdown table and a self-contained HTML
page; a prompts analysis its own (:mod:`.prompt_analysis`). The report consumes only
``fairtalk.results``; it computes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from fairtalk.errors import SpecError
from fairtalk.files import (
    atomic_writer,
    check_default_output,
    check_not_input,
    check_output_folder,
    check_output_name,
    check_outside,
    ensure_folder,
    staged,
)
from fairtalk.jsonl import MAX_RECORD_BYTES, jsonable, write_records
from fairtalk.pairs_jsonl import is_pairs_check, is_pairs_file
from fairtalk.records import PairsCheck
from fairtalk.report.comparison import (
    comparison_rich_table,
    render_comparison_csv,
    render_comparison_markdown,
    write_comparison,
)
from fairtalk.report.csv_report import write_csv
from fairtalk.report.html import render_html, write_html
from fairtalk.report.index import (
    RunFiles,
    check_run_folder,
    render_index,
    write_index,
    write_run,
)
from fairtalk.report.json_report import write_json
from fairtalk.report.markdown import render_markdown, write_markdown
from fairtalk.report.prompt_analysis import REPORT_FILES as PROMPTS_REPORT_FILES
from fairtalk.report.prompt_analysis import render_prompts_html, write_prompts_report
from fairtalk.report.table import (
    different_measures,
    family_note,
    left_out_note,
    rich_table,
    summary_rows,
    verdict_text,
)
from fairtalk.report.templating import jinja_environment
from fairtalk.responses import is_responses_file
from fairtalk.results import AuditResult, SimilarityResult

__all__ = [
    "FILE_NAMES",
    "FORMATS",
    "JUDGE_FILE",
    "PROMPTS_REPORT_FILES",
    "RunFiles",
    "check_not_input",
    "check_report_folder",
    "check_run_folder",
    "comparison_rich_table",
    "different_measures",
    "family_note",
    "left_out_note",
    "verdict_text",
    "render_comparison_csv",
    "render_comparison_markdown",
    "render_html",
    "render_index",
    "render_markdown",
    "render_prompts_html",
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

#: File written for each format, inside the output folder.
FILE_NAMES = {"json": "results.json", "csv": "results.csv", "md": "report.md", "html": "report.html"}
#: Every judge's raw answer about each side of each pair, beside the report (when a judge ran).
JUDGE_FILE = "judge.jsonl"
#: The formats ``write_report`` knows, in the order it writes them.
FORMATS = tuple(FILE_NAMES)
_WRITERS: dict[str, Callable[[AuditResult, Path], Path]] = {
    "json": write_json,
    "csv": write_csv,
    "md": write_markdown,
    "html": write_html,
}
_MSG_UNKNOWN_FORMAT = "unknown report format {given!r}"


def write_report(
    result: AuditResult,
    out_dir: str | os.PathLike[str],
    *,
    formats: Iterable[str] = FORMATS,
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
    formats : iterable of str
        Any of ``"json"`` (results.json), ``"csv"`` (results.csv), ``"md"`` (report.md)
        and ``"html"`` (report.html).

    Returns
    -------
    dict of str to Path
        The path written for each format, in the order given, and ``"judge"``: ``judge.jsonl``,
        every judge's raw answer (when a judge ran).

    Raises
    ------
    SpecError
        An unknown format (before anything is written).
    OutputError
        ``out_dir`` is a file, or a file cannot be written (what was there stays as it was).
    """
    formats = check_formats(formats)
    folder = Path(out_dir)
    with staged(folder) as staging:
        write_formats(result, staging, formats)
    paths = {name: folder / FILE_NAMES[name] for name in formats}
    return {**paths, "judge": folder / JUDGE_FILE} if result.judge_answers else paths


def check_formats(formats: Iterable[str]) -> tuple[str, ...]:
    """The formats, deduplicated, or SpecError for an unknown one."""
    formats = tuple(dict.fromkeys(formats))
    for name in formats:
        if name not in _WRITERS:
            raise SpecError(_MSG_UNKNOWN_FORMAT.format(given=name), choices=FORMATS, given=name)
    return formats


def write_formats(result: AuditResult, folder: Path, formats: Iterable[str], *,
                  similarity: SimilarityResult | None = None, pairs_check: PairsCheck | None = None,
                  run_config: Mapping[str, Any] | None = None) -> None:  # fmt: skip
    """Write each format's file into ``folder`` (created), atomically one by one.

    The pages also show ``similarity``, the pairs' validity and, from ``run_config`` (the
    audit run's config), the turns in their header. A result with judge answers also gets
    ``judge.jsonl`` (:data:`JUDGE_FILE`).
    """
    ensure_folder(folder)
    if result.judge_answers:
        with atomic_writer(folder / JUDGE_FILE) as handle:
            write_records(handle, (jsonable(answer.to_dict()) for answer in result.judge_answers))
    for name in formats:
        if name == "md":
            write_markdown(result, folder / FILE_NAMES[name], similarity=similarity, pairs_check=pairs_check,
                           run_config=run_config)  # fmt: skip
        elif name == "html":
            write_html(result, folder / FILE_NAMES[name], similarity=similarity, pairs_check=pairs_check,
                       run_config=run_config)  # fmt: skip
        else:
            _WRITERS[name](result, folder / FILE_NAMES[name])


def check_report_folder(out_dir: str | os.PathLike[str], inputs: Mapping[str, object],
                        names: Iterable[str] | None = None) -> None:  # fmt: skip
    """Raise OutputError before any work if ``out_dir`` is a file or a report file would replace an input.

    ``inputs`` maps what a path is (``"--responses"``) to the path (None: skipped); ``names``
    are the files the report writes (default: the audit report's). Nor may ``out_dir`` be the
    root, the home folder or hold an input, and a report file already there must be one
    fairtalk wrote (:func:`fairtalk.files.check_output_folder`).
    """
    check_output_name(out_dir, option="the output folder")  # before Path(): '' would become '.'
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        ensure_folder(folder)  # raises: a file, not a folder
    entries = tuple(FILE_NAMES.values() if names is None else names)
    check_outside(folder, entries, dict(inputs))
    check_output_folder(folder, dict(inputs), replaces=entries)
