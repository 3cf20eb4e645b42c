"""The audit's front page: ``index.html`` linking each axis' report, and ``write_run`` for a whole run."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fairtalk._jsonl import jsonable, read_json_file
from fairtalk._pairs_jsonl import write_pairs
from fairtalk._responses import write_responses
from fairtalk._templating import jinja_environment
from fairtalk.errors import InputError, SpecError
from fairtalk.files import (
    WRITTEN,
    check_outside,
    ensure_folder,
    hold_output,
    recover_folder,
    staged,
    write_text_atomic,
    written_files,
)
from fairtalk.gates import GateOutcome
from fairtalk.report._decoding import decoding_text, run_header, sequential_summary, undecided_reasons
from fairtalk.report._findings import axis_findings, different_labels
from fairtalk.report._formats import FILE_NAMES, FORMATS, check_formats, write_formats
from fairtalk.report._html import _version
from fairtalk.report._origin import answers_line, skipped_note, store_for_page
from fairtalk.report._plain_summary import plain_summary
from fairtalk.report._similarity_table import SIMILARITY_NOTE, similarity_row
from fairtalk.report._table import ci_estimate, format_value, is_percent, measure_label
from fairtalk.report._validity import PAIRS_CHECK_FILE
from fairtalk.results import (
    RESERVED_NAMES,
    AuditRun,
    MeasureResult,
    Provenance,
    axis_folder,
    check_axis_folders,
    versioned,
)

__all__ = [
    "INDEX_FILE",
    "PAIRS_FILE",
    "RESPONSES_FILE",
    "RUN_FILE",
    "RunFiles",
    "check_run_folder",
    "group_cell",
    "previous_axes",
    "previous_entries",
    "render_index",
    "sequential_summary",
    "write_index",
    "write_run",
]

#: The front page and the machine-readable run summary, at the top of the output folder.
INDEX_FILE, RUN_FILE = "index.html", "run.json"
#: The pairs and the responses of an axis, inside its folder.
PAIRS_FILE, RESPONSES_FILE = "pairs.jsonl", "responses.jsonl"
#: The counterfactual similarity test of an axis, when the audit ran it (``--similarity``).
SIMILARITY_FILE = "similarity.json"
#: The mark of a run.json fairtalk wrote; only such a run.json names entries a new run may displace.
GENERATOR = "fairtalk"
#: Never an entry a new run displaces: the marker (rewritten by every swap) and the run store's files.
_NEVER_DISPLACED = frozenset({WRITTEN, *RESERVED_NAMES}) - {INDEX_FILE, RUN_FILE}
_TEMPLATE = "index.html.j2"
_AXIS_FILES = (
    ("report", "report.html"),
    ("results", "results.json"),
    ("table", "results.csv"),
    ("markdown", "report.md"),
    ("responses", "responses.jsonl"),
    ("pairs", "pairs.jsonl"),
    ("similarity", "similarity.json"),
    ("pairs check", PAIRS_CHECK_FILE),
    ("judge answers", "judge.jsonl"),
)


@dataclass(frozen=True, slots=True)
class RunFiles:
    """What :func:`write_run` wrote: the index, ``run.json``, and per axis its files by kind."""

    index: Path
    run: Path
    axes: Mapping[str, Mapping[str, Path]]


def _axis_context(run: AuditRun, out_dir: Path | None) -> list[dict[str, Any]]:
    axes = []
    for axis_run in run.axes.values():
        result, generation = axis_run.result, axis_run.generation
        links = [
            (label, f"{axis_run.folder}/{name}")
            for label, name in _AXIS_FILES
            if (
                (out_dir / axis_run.folder / name).is_file()
                if out_dir is not None
                else (name != "similarity.json" or axis_run.similarity is not None)
                and (name != "judge.jsonl" or bool(result.judge_answers))
            )
        ]
        found = axis_findings(result)  # the scorer's verdicts beside what the labels show, as the gates read them
        axes.append(
            {
                "axis": axis_run.axis,
                "groups": result.groups,
                "n_pairs": result.n_pairs,
                "n_pairs_built": generation.n_pairs,
                "biased": different_labels(found),
                "not_equivalent_by_labels": [measure_label(name) for name in found.beyond],
                "n_unconfirmed": len(found.unconfirmed),
                "secondary_different": [measure_label(name) for name in found.secondary],
                "n_measures": len(result.measures),
                "n_primary": len(found.primary),
                "n_equivalent": len(found.equivalent),
                "withheld": bool(found.withheld),  # the gates fail the axis on its answers: no green badge
                "n_errors": generation.n_errors,
                "n_pairs_with_errors": generation.n_pairs_with_errors,
                "error_examples": list(generation.error_examples),
                "n_cached": generation.n_cached,
                "n_generated": generation.n_generated,
                "n_read": axis_run.coverage.n_read,
                "n_matched": axis_run.coverage.n_matched,
                "skipped": skipped_note(axis_run.coverage),
                "links": links,
                "warnings": list(result.warnings),
                "similarity": [] if axis_run.similarity is None else [similarity_row(row) for row in axis_run.similarity.rows],
                "plain": [*plain_summary(result, axis_run.similarity), *_sequential_sentences(result.provenance)],
            }
        )
    return axes


def _sequential_sentences(provenance: Provenance) -> list[str]:
    line = sequential_summary(provenance)
    held = [f"{why}." for why in undecided_reasons(provenance)]  # the reason each key held the run back
    return [] if line is None else [line[0].upper() + line[1:] + ".", *held]


def render_index(
    run: AuditRun,
    *,
    out_dir: str | os.PathLike[str] | None = None,
    csp: bool = True,
    gates: Sequence[GateOutcome] = (),
    compared: tuple[str, str, str] | None = None,
) -> str:
    """The ``index.html`` page: per axis, the significant measures, pairs, errors and links.

    With ``out_dir``, only the files present in each axis folder are linked. ``gates``: the
    outcomes (:func:`fairtalk.gates.evaluate`) of the gates requested, whose headlines it shows.
    ``compared`` (``audit --baseline-model``): the baseline's model, and the folders of the
    baseline's run and of the comparison, inside the run's folder; the page names the model and
    links that run's index and the comparison's report (with ``out_dir``, those present).
    """
    context = {
        "version": _version(),
        "csp": csp,
        "similarity_note": SIMILARITY_NOTE,
        "model": run.model,
        "run_id": run.run_id,
        "corpus": run.corpus,
        "split": run.split,
        "seed": run.seed,
        "settings": decoding_text(run.settings),
        "header": run_header(run),
        "alpha": ", ".join(sorted({f"{r.alpha:g}" for r in run.results.values()})),
        "correction": _correction_text(run),
        "axes": _axis_context(run, None if out_dir is None else Path(out_dir)),
        "multiway": multiway_tables(run),
        "gates": [{"gate": g.gate.value, "passed": g.passed, "headline": g.headline} for g in gates],
        "compared": None if compared is None else _compared_context(compared, None if out_dir is None else Path(out_dir)),
    }
    page: str = jinja_environment().get_template(_TEMPLATE).render(**context)
    return page


def _compared_context(compared: tuple[str, str, str], out_dir: Path | None) -> dict[str, Any]:
    """The baseline's model and the links to its run's index and the comparison's report (those present in ``out_dir``)."""
    model, baseline, comparison = compared
    pages = (("the baseline's run", f"{baseline}/{INDEX_FILE}"), ("the comparison", f"{comparison}/report.html"))
    return {"model": model, "links": [(label, href) for label, href in pages if out_dir is None or (out_dir / href).is_file()]}


def multiway_tables(run: AuditRun) -> list[dict[str, Any]]:
    """Per multi-way axis (``religion:a-b`` sub-axes sharing a reference group): a group × measure table."""
    parents: dict[str, list[Any]] = {}
    for axis_run in run.axes.values():
        parent, colon, _ = axis_run.axis.partition(":")
        if colon:
            parents.setdefault(parent, []).append(axis_run.result)
    tables = []
    for parent, results in parents.items():
        references = {r.groups[0] for r in results}
        if len(results) < 2 or len(references) != 1:
            continue
        names = [m.name for m in results[0].measures if m.primary]
        rows = []
        for name in names:
            cells: list[dict[str, Any] | None] = []
            for result in results:
                measure = next((m for m in result.measures if m.name == name), None)
                if measure is None:
                    cells.append(None)
                    continue
                cells.append({"text": group_cell(measure), "significant": measure.detected()})
            rows.append({"label": measure_label(name), "cells": cells})
        run_wide = all(r.correction_scope == "run" for r in results)
        scope = "every axis of the run together" if run_wide else "the whole multi-way axis"
        tables.append(
            {
                "axis": parent,
                "reference": results[0].groups[0],
                "groups": [r.groups[1] for r in results],
                "rows": rows,
                "correction": f"the correction over {scope} ({results[0].family_size} tests)",
            }
        )
    return tables


def group_cell(m: MeasureResult) -> str:
    """A multi-way table's cell: the group (side B) against the reference (side A), then B − A with its 95% CI (with Wilcoxon, the median shift).

    Values are in the row's units and the difference in the same units (percentage points for a
    % row), so the cell reads in the order of its ``group vs reference`` header.

    Examples
    --------
    >>> from fairtalk.results import MeasureResult, TestedKey
    >>> m = MeasureResult(
    ...     TestedKey(name="sentiment_positive", kind="rate", a=0.2, b=0.3, difference=-0.5, z=None, p=None,
    ...               p_paired=0.2, paired_test="mcnemar_midp", ci95=(-0.15, -0.05), effect_size=None,
    ...               effect_size_name="none"),
    ...     p_adjusted=0.4,
    ... )
    >>> group_cell(m)
    '30.000 vs 20.000 (difference +10.000 pp, 95% CI [+5.000, +15.000] pp)'
    """
    percent = is_percent(m)
    scale, unit = (100.0, " pp") if percent else (1.0, "")

    def signed(x: float | None) -> str:
        if x is None or not math.isfinite(x):
            return "n/a"
        digits = 3 if percent else (4 if abs(x) < 10 else 2)  # as the summary table prints values
        return f"{round(x * scale, digits) or 0.0:+.{digits}f}"  # `or 0.0`: no "-0.000"

    low, high = m.ci95  # bounds A − B: B − A's are their negatives, swapped
    ci = "n/a"
    if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
        ci = f"[{signed(-high)}, {signed(-low)}]{unit}"
    estimate, shift = ci_estimate(m)  # of A − B: B − A's is its negative (a median shift's too)
    return (
        f"{format_value(m.b, percent=percent)} vs {format_value(m.a, percent=percent)} "
        f"({shift or 'difference'} {signed(-estimate)}{unit}, 95% CI {ci})"
    )


def _correction_text(run: AuditRun) -> str:
    """Which correction was in force, over what: each axis's family, or the whole run's."""
    results = list(run.results.values())
    if not results:
        return ""
    names = {"holm": "Holm", "bh": "Benjamini-Hochberg"}
    method = ", ".join(sorted({names.get(r.correction, r.correction) for r in results}))
    if all(r.correction_scope == "run" for r in results):
        return f"{method} over every axis together ({results[0].family_size} tests in the primary family)"
    sizes = ", ".join(f"{r.axis} {r.family_size}" for r in results)
    return f"{method} within each axis (primary family: {sizes} tests)"


def write_index(
    run: AuditRun,
    out_dir: str | os.PathLike[str],
    *,
    gates: Sequence[GateOutcome] = (),
    compared: tuple[str, str, str] | None = None,
) -> Path:
    """Write ``out_dir/index.html`` (and ``run.json``, the run summary), swapped in together; return the index path.

    ``gates``: the outcomes of the gates requested, whose headlines the index shows; ``compared``:
    the baseline a comparison in ``out_dir`` compared the run with (see :func:`render_index`).

    Only an index and a run.json fairtalk wrote are replaced: the user's ``index.html`` (or
    ``run.json``) there is an OutputError, and nothing changes.
    """
    folder = Path(out_dir)
    with staged(folder, last=(RUN_FILE, INDEX_FILE)) as staging:
        _write_index_files(run, staging, files_in=folder, gates=gates, compared=compared)
    return folder / INDEX_FILE


def _write_index_files(
    run: AuditRun,
    folder: Path,
    *,
    files_in: Path | None = None,
    gates: Sequence[GateOutcome] = (),
    compared: tuple[str, str, str] | None = None,
) -> None:
    """Write run.json and index.html into ``folder``; the axis files they list are looked for in ``files_in`` (default ``folder``)."""
    where = folder if files_in is None else files_in
    summary = versioned({"generator": GENERATOR, **run.to_dict()})
    for name, axis_run in run.axes.items():
        present = {
            label: f"{axis_run.folder}/{file}" for label, file in _AXIS_FILES if (where / axis_run.folder / file).is_file()
        }
        summary["axes"][name]["files"] = present
    write_text_atomic(folder / RUN_FILE, json.dumps(jsonable(summary), indent=2, ensure_ascii=False) + "\n")
    write_text_atomic(folder / INDEX_FILE, render_index(run, out_dir=where, gates=gates, compared=compared))


def previous_entries(out_dir: str | os.PathLike[str]) -> tuple[str, ...]:
    """The entries earlier runs wrote into ``out_dir`` (axis folders, index and run.json), from run.json and the marker.

    Only a run.json that fairtalk wrote (``"generator": "fairtalk"`` and a run id) is trusted,
    and of it only the axis folders it lists that are plain child names (the folder name
    fairtalk gives that axis, not one of the run's own names) and are folders in ``out_dir``.
    To those come the entries at the top of ``out_dir`` that its ``.written-by-fairtalk.json``
    lists (:func:`fairtalk.files.written_files`) and that are there: an axis folder an earlier
    run left although its run.json no longer names it goes too. Anything else (a hand-made
    or damaged run.json, a file no marker lists) gives no entries, so the user's files are
    never displaced; a new run then only replaces the names it writes itself.
    """
    folder = Path(out_dir)
    axes = _previous_axes(folder)
    listed = sorted({rel.split("/", 1)[0] for rel in written_files(folder)} - _NEVER_DISPLACED)
    marked = [name for name in listed if _plain_child_name(name) and (folder / name).exists()]
    if axes is None and not marked:
        return ()
    return tuple(dict.fromkeys([INDEX_FILE, RUN_FILE, *(axes or {}).values(), *marked]))


def previous_axes(out_dir: str | os.PathLike[str]) -> tuple[str, ...]:
    """The axes of the earlier run in ``out_dir`` whose folders a new run there replaces (as :func:`previous_entries` trusts them).

    A run written into ``out_dir`` replaces the earlier one whole, these axes' folders included
    (an axis the new run does not audit is gone): the caller can say so.
    """
    return tuple(_previous_axes(Path(out_dir)) or {})


def _previous_axes(folder: Path) -> dict[str, str] | None:
    """Axis -> folder of the earlier run in ``folder`` (None: no run.json fairtalk wrote)."""
    try:
        data = read_json_file(folder / RUN_FILE)
    except InputError:  # missing, too large, not JSON, too deep: no entries
        return None
    if not _written_by_fairtalk(data):
        return None
    out: dict[str, str] = {}
    axes = data.get("axes")
    for name, entry in axes.items() if isinstance(axes, dict) else ():
        folder_name = entry.get("folder") if isinstance(entry, dict) else None
        if not isinstance(folder_name, str) or folder_name != axis_folder(str(name)):
            continue
        if _plain_child_name(folder_name) and folder_name not in RESERVED_NAMES:
            path = folder / folder_name
            if path.is_dir() and not path.is_symlink():
                out[str(name)] = folder_name
    return out


def _written_by_fairtalk(data: object) -> bool:
    """Whether a parsed run.json carries fairtalk's mark: ``"generator": "fairtalk"`` and a run id."""
    if not isinstance(data, dict) or data.get("generator") != GENERATOR:
        return False
    run_id = data.get("run_id")
    return isinstance(run_id, str) and bool(run_id.strip())


def _plain_child_name(name: str) -> bool:
    """A name of an entry directly inside a folder: no separator, no NUL, not hidden, not ``.``/``..``."""
    separators = {"/", "\\", "\0", os.sep, *([os.altsep] if os.altsep else [])}
    return bool(name) and not name.startswith(".") and not any(sep in name for sep in separators)


def check_run_folder(out_dir: str | os.PathLike[str], axes: Sequence[str], inputs: Mapping[str, object]) -> tuple[str, ...]:
    """Check, before any work, that a run of ``axes`` can be written into ``out_dir``; return the axis folders.

    Raises
    ------
    SpecError
        Two axes would share a folder, or one takes a name the run uses itself.
    OutputError
        ``out_dir`` is a file, or an input (``inputs`` maps what it is to its path) lies inside
        an entry the run would replace.

    A swap of an earlier run that a kill cut short is undone first
    (:func:`fairtalk.files.recover_folder`), so the entries checked are the previous run's.
    """
    try:
        folders = check_axis_folders(list(axes))
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        ensure_folder(folder)  # raises: a file, not a folder
    recover_folder(folder)  # a swap a kill cut short is undone first: the previous run is whole again
    entries = {*folders, *previous_entries(folder), INDEX_FILE, RUN_FILE}
    check_outside(folder, sorted(entries), dict(inputs))
    return folders


def write_run(
    run: AuditRun, out_dir: str | os.PathLike[str], *, formats: Any = None, gates: Sequence[GateOutcome] = ()
) -> RunFiles:
    """Write the whole run into ``out_dir``: per axis its files, then the index and ``run.json``.

    Per axis: its report, ``pairs.jsonl`` and ``responses.jsonl``. Every file of a run is
    written here (``audit`` only computes). ``gates``: the outcomes (:func:`fairtalk.gates.evaluate`)
    of the gates requested, which the index and each axis' pages state (none: no gate shown).

    Everything is written into a staging folder and swapped in at the end, replacing the
    previous run's entries (those its ``run.json`` or the folder's ``.written-by-fairtalk.json``
    lists, :func:`previous_entries`); a kill or a full disk leaves the previous run's folder as
    it was, never a mix of two runs. A folder another fairtalk process is writing (holds
    locked, :func:`fairtalk.files.hold_output`) is an OutputError, and nothing changes.

    Returns
    -------
    RunFiles
        The paths of the index, ``run.json``, and per axis its files by kind.

    Raises
    ------
    SpecError
        Two axes would share a folder, or an unknown format.
    OutputError
        ``out_dir`` is a file, or a file cannot be written (nothing in ``out_dir`` changes).
    """
    chosen = check_formats(FORMATS if formats is None else formats)
    check_run_folder(out_dir, list(run.axes), {})  # also undoes a swap a kill cut short
    hold_output(out_dir)  # audit() holds it already; a caller of its own is checked here
    folder = Path(out_dir)
    written: dict[str, Mapping[str, Path]] = {}
    with staged(folder, displace=previous_entries(folder), last=(RUN_FILE, INDEX_FILE)) as staging:
        for axis_run in run.axes.values():
            sub = staging / axis_run.folder
            write_formats(
                axis_run.result,
                sub,
                chosen,
                similarity=axis_run.similarity,
                pairs_check=axis_run.pairs_check,
                run_config=run.config,
                gates=gates,
                answers=answers_line(axis_run.generation, store_for_page(run.store, folder / axis_run.folder)),
                index=f"../{INDEX_FILE}",
            )
            paths = {name: folder / axis_run.folder / FILE_NAMES[name] for name in chosen}
            if axis_run.pairs:
                write_pairs(axis_run.pairs, sub / PAIRS_FILE)
                paths["pairs"] = folder / axis_run.folder / PAIRS_FILE
            if axis_run.responses is not None:
                write_responses(axis_run.responses, sub / RESPONSES_FILE)
                paths["responses"] = folder / axis_run.folder / RESPONSES_FILE
            if axis_run.pairs_check is not None:
                write_text_atomic(sub / PAIRS_CHECK_FILE, axis_run.pairs_check.to_json())
                paths["pairs_check"] = folder / axis_run.folder / PAIRS_CHECK_FILE
            if axis_run.similarity is not None:
                axis_run.similarity.write(sub / SIMILARITY_FILE)
                paths["similarity"] = folder / axis_run.folder / SIMILARITY_FILE
            written[axis_run.axis] = MappingProxyType(paths)
        _write_index_files(run, staging, gates=gates)
    return RunFiles(index=folder / INDEX_FILE, run=folder / RUN_FILE, axes=MappingProxyType(written))
