"""The audit's front page: ``index.html`` linking each axis' report, and ``write_run`` for a whole run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from fairtalk.report.html import _environment, _version
from fairtalk.report.json_report import jsonable
from fairtalk.report.table import measure_label
from fairtalk.results import AuditRun

__all__ = ["INDEX_FILE", "RUN_FILE", "render_index", "write_index", "write_run"]

#: The front page and the machine-readable run summary, at the top of the output folder.
INDEX_FILE, RUN_FILE = "index.html", "run.json"
_TEMPLATE = "index.html.j2"
_AXIS_FILES = (("report", "report.html"), ("results", "results.json"), ("table", "results.csv"),
               ("markdown", "report.md"), ("responses", "responses.jsonl"), ("pairs", "pairs.jsonl"))  # fmt: skip


def _axis_context(run: AuditRun, out_dir: Path | None) -> list[dict[str, Any]]:
    axes = []
    for axis_run in run.axes.values():
        result, generation = axis_run.result, axis_run.generation
        links = [(label, f"{axis_run.folder}/{name}") for label, name in _AXIS_FILES
                 if out_dir is None or (out_dir / axis_run.folder / name).is_file()]  # fmt: skip
        axes.append({
            "axis": axis_run.axis,
            "groups": result.groups,
            "n_pairs": result.n_pairs,
            "n_pairs_built": generation.n_pairs,
            "biased": [measure_label(name) for name in result.biased()],
            "n_measures": len(result.measures),
            "n_errors": generation.n_errors,
            "n_pairs_with_errors": generation.n_pairs_with_errors,
            "error_examples": list(generation.error_examples),
            "n_cached": generation.n_cached,
            "n_generated": generation.n_generated,
            "n_read": axis_run.coverage.get("n_read"),
            "n_matched": axis_run.coverage.get("n_matched"),
            "links": links,
        })  # fmt: skip
    return axes


def render_index(run: AuditRun, *, out_dir: str | os.PathLike | None = None, csp: bool = True) -> str:
    """The ``index.html`` page: per axis, the significant measures, pairs, errors and links.

    With ``out_dir``, only the files present in each axis folder are linked.
    """
    context = {
        "version": _version(),
        "csp": csp,
        "model": run.model,
        "corpus": run.corpus,
        "split": run.split,
        "seed": run.seed,
        "settings": json.dumps(jsonable(dict(run.settings)), sort_keys=True),
        "alpha": ", ".join(sorted({f"{r.alpha:g}" for r in run.results.values()})),
        "axes": _axis_context(run, None if out_dir is None else Path(out_dir)),
    }
    return _environment().get_template(_TEMPLATE).render(**context)


def write_index(run: AuditRun, out_dir: str | os.PathLike) -> Path:
    """Write ``out_dir/index.html`` (and ``run.json``, the run summary) and return the index path."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RUN_FILE).write_text(json.dumps(jsonable(run.to_dict()), indent=2, ensure_ascii=False) + "\n",
                                   encoding="utf-8")  # fmt: skip
    path = folder / INDEX_FILE
    path.write_text(render_index(run, out_dir=folder), encoding="utf-8")
    return path


def write_run(run: AuditRun, out_dir: str | os.PathLike, *, formats: Any = None) -> dict[str, dict[str, Path]]:
    """Write each axis' report into ``out_dir/<axis>/`` and the index; return the paths per axis.

    The index's paths are under the key ``""`` (``{"index": ..., "run": ...}``).
    """
    from fairtalk.report import FORMATS, write_report

    folder = Path(out_dir)
    written: dict[str, dict[str, Path]] = {}
    for axis_run in run.axes.values():
        written[axis_run.axis] = write_report(axis_run.result, folder / axis_run.folder,
                                              formats=FORMATS if formats is None else formats)  # fmt: skip
    written[""] = {"index": write_index(run, folder), "run": folder / RUN_FILE}
    return written
