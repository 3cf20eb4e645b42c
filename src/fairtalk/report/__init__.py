"""Render an ``AuditResult``: results.json, results.csv, a Markdown table and a self-contained HTML page.

The report consumes only ``fairtalk.results``; it computes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from fairtalk.errors import SpecError
from fairtalk.report.comparison import (
    comparison_rich_table,
    render_comparison_csv,
    render_comparison_markdown,
    write_comparison,
)
from fairtalk.report.csv_report import write_csv
from fairtalk.report.html import render_html, write_html
from fairtalk.report.index import render_index, write_index, write_run
from fairtalk.report.json_report import write_json
from fairtalk.report.markdown import render_markdown, write_markdown
from fairtalk.report.table import rich_table, summary_rows
from fairtalk.results import AuditResult

__all__ = [
    "FILE_NAMES", "FORMATS", "comparison_rich_table", "render_comparison_csv", "render_comparison_markdown",
    "render_html", "render_index", "render_markdown", "rich_table", "summary_rows", "write_comparison",
    "write_index", "write_report", "write_run",
]

#: File written for each format, inside the output folder.
FILE_NAMES = {"json": "results.json", "csv": "results.csv", "md": "report.md", "html": "report.html"}
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
    out_dir: str | os.PathLike,
    *,
    formats: Iterable[str] = FORMATS,
) -> dict[str, Path]:
    """Write the report files for ``result`` into ``out_dir`` (created if missing).

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
        The path written for each format, in the order given.

    Raises
    ------
    SpecError
        An unknown format (before anything is written).
    """
    formats = tuple(dict.fromkeys(formats))
    for name in formats:
        if name not in _WRITERS:
            raise SpecError(_MSG_UNKNOWN_FORMAT.format(given=name), choices=FORMATS, given=name)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return {name: _WRITERS[name](result, folder / FILE_NAMES[name]) for name in formats}
