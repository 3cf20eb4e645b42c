"""An audit's report files by format: which file each format writes, and writing them into one folder.

``write_report`` (the package's entry point) and a run's ``write_run`` both write an axis's
files through :func:`write_formats`; the names live here once, for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fairtalk._jsonl import jsonable, write_records
from fairtalk.errors import SpecError
from fairtalk.files import atomic_writer, ensure_folder
from fairtalk.gates import GateOutcome
from fairtalk.records import PairsCheck
from fairtalk.report._csv_report import write_csv
from fairtalk.report._html import write_html
from fairtalk.report._json_report import write_json
from fairtalk.report._markdown import write_markdown
from fairtalk.results import AuditResult, SimilarityResult

__all__ = ["FILE_NAMES", "FORMATS", "JUDGE_FILE", "PAGE_FORMATS", "check_formats", "write_formats", "write_pages"]

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
#: The pages (report.md, report.html): they also show the similarity test, the pairs' validity, the turns and the gates.
_PAGES = {"md": write_markdown, "html": write_html}
#: The formats that are pages.
PAGE_FORMATS = tuple(_PAGES)
_MSG_UNKNOWN_FORMAT = "unknown report format {given!r}"
_MSG_FORMATS_TYPE = "formats must be a report format or a list of them, got {type}"


def check_formats(formats: Iterable[str]) -> tuple[str, ...]:
    """The formats, deduplicated, or SpecError for an unknown one; one name alone (``"json"``) is one format, not its letters."""
    if isinstance(formats, str):
        formats = (formats,)
    elif not isinstance(formats, Iterable):
        raise SpecError(_MSG_FORMATS_TYPE.format(type=type(formats).__name__))
    chosen = tuple(formats)
    for name in chosen:
        if not isinstance(name, str) or name not in _WRITERS:
            raise SpecError(_MSG_UNKNOWN_FORMAT.format(given=name), choices=FORMATS, given=name)
    return tuple(dict.fromkeys(chosen))


def write_formats(
    result: AuditResult,
    folder: Path,
    formats: Iterable[str],
    *,
    similarity: SimilarityResult | None = None,
    pairs_check: PairsCheck | None = None,
    run_config: Mapping[str, Any] | None = None,
    gates: Sequence[GateOutcome] = (),
    answers: str | None = None,
    index: str | None = None,
) -> None:
    """Write each format's file into ``folder`` (created), atomically one by one.

    The pages also show ``similarity``, the pairs' validity, from ``run_config`` (the audit
    run's config) the turns in their header, the outcomes of ``gates`` (the gates requested)
    on this axis, ``answers``, where the answers came from (:func:`~fairtalk.report._origin.answers_line`),
    and a link to ``index``, the run's front page from the pages' folder (None: no link). A result
    with judge answers also gets ``judge.jsonl`` (:data:`JUDGE_FILE`).
    """
    ensure_folder(folder)
    if result.judge_answers:
        with atomic_writer(folder / JUDGE_FILE) as handle:
            write_records(handle, (jsonable(answer.to_dict()) for answer in result.judge_answers))
    for name in formats:
        if name in _PAGES:
            write_pages(
                result,
                folder,
                (name,),
                similarity=similarity,
                pairs_check=pairs_check,
                run_config=run_config,
                gates=gates,
                answers=answers,
                index=index,
            )
        else:
            _WRITERS[name](result, folder / FILE_NAMES[name])


def write_pages(
    result: AuditResult,
    folder: Path,
    formats: Iterable[str] = PAGE_FORMATS,
    *,
    similarity: SimilarityResult | None = None,
    pairs_check: PairsCheck | None = None,
    run_config: Mapping[str, Any] | None = None,
    gates: Sequence[GateOutcome] = (),
    answers: str | None = None,
    index: str | None = None,
) -> None:
    """Write the pages among ``formats`` (``md``: report.md, ``html``: report.html) into ``folder``, each atomically."""
    for name in formats:
        if name in _PAGES:
            _PAGES[name](
                result,
                folder / FILE_NAMES[name],
                similarity=similarity,
                pairs_check=pairs_check,
                run_config=run_config,
                gates=gates,
                answers=answers,
                index=index,
            )
