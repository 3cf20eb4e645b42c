"""``results.csv``: one row per measure, the columns of ``AuditResult.to_frame()`` plus ``significant``; and ``by_turn.csv``.

A result with a ``by_turn`` section (``audit(by_turn=True)``) also gets ``by_turn.csv`` beside
its ``results.csv``: one row per (turns since the identity appeared, key), the columns of
:data:`~fairtalk.results._by_turn.BY_TURN_COLUMNS`.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

from fairtalk.files import write_text_atomic
from fairtalk.results import BY_TURN_COLUMNS, AuditResult, ByTurnResult, MeasureResult

__all__ = ["BY_TURN_FILE", "CSV_COLUMNS", "csv_cell", "render_by_turn_csv", "render_csv", "write_by_turn_csv", "write_csv"]

#: The file beside ``results.csv`` with the gaps by turns since the identity appeared (``audit(by_turn=True)``).
BY_TURN_FILE = "by_turn.csv"

#: Column order of ``results.csv``. Rates are fractions, as in ``results.json``; empty cells are null.
CSV_COLUMNS = (
    "measure",
    "kind",
    "a",
    "b",
    "difference",
    "difference_abs",
    "z",
    "p",
    "p_paired",
    "paired_test",
    "p_adjusted",
    "ci95_low",
    "ci95_high",
    "effect_size",
    "effect_size_name",
    "higher_is_better",
    "significant",
    "primary",
    "verdict",
    "not_tested",
    "equivalence_margin",
    "p_equivalence",
    "equivalent",
    "equivalence_test",
    "equivalence_low",
    "equivalence_high",
    "equivalence_bound",
    "identical_share",
    "mde",
    "gate_pairs",
    "n_clusters",
    "design_effect",
    "sd_difference",
    "ci_method",
    "estimate",
    "estimate_name",
    "notes",
    "masked_a",
    "masked_b",
    "masked_remaining",
    "ppi_estimate",
    "ppi_ci95_low",
    "ppi_ci95_high",
    "ppi_p",
    "ppi_n_labels",
)


def csv_cell(value: object) -> object:
    """A value as a CSV cell: None and non-finite floats (NaN, inf) as empty."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return value


def ppi_columns(m: MeasureResult) -> dict[str, object]:
    """The labelled estimate (``score --gold``) of a measure as flat columns (empty without one)."""
    ppi = m.ppi
    if ppi is None:
        return {"ppi_estimate": None, "ppi_ci95_low": None, "ppi_ci95_high": None, "ppi_p": None, "ppi_n_labels": None}
    return {
        "ppi_estimate": ppi.estimate,
        "ppi_ci95_low": ppi.ci95[0],
        "ppi_ci95_high": ppi.ci95[1],
        "ppi_p": ppi.p,
        "ppi_n_labels": ppi.n_labels,
    }


def render_csv(result: AuditResult) -> str:
    """The ``results.csv`` text."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for m in result.measures:
        row = m.to_dict()
        row.pop("ci95")
        row.pop("equivalence_interval")
        masked = row.pop("masked", None) or {}
        row.pop("ppi", None)
        row.update(ppi_columns(m))
        row.update(
            measure=m.name,
            ci95_low=m.ci95[0],
            ci95_high=m.ci95[1],
            equivalence_low=(m.equivalence_interval or (None, None))[0],
            equivalence_high=(m.equivalence_interval or (None, None))[1],
            significant=m.primary and m.detected(),
            notes="; ".join(m.notes),
            masked_a=masked.get("a"),
            masked_b=masked.get("b"),
            masked_remaining=masked.get("remaining"),
        )
        writer.writerow({k: csv_cell(row.get(k)) for k in CSV_COLUMNS})
    return buffer.getvalue()


def write_csv(result: AuditResult, path: str | os.PathLike[str]) -> Path:
    """Write ``results.csv`` to ``path`` (and ``by_turn.csv`` beside it, for a result with ``by_turn``); return the first."""
    path = Path(path)
    write_text_atomic(path, render_csv(result), newline="")
    if result.by_turn is not None:
        write_by_turn_csv(result.by_turn, path.with_name(BY_TURN_FILE))
    return path


def render_by_turn_csv(result: ByTurnResult) -> str:
    """The ``by_turn.csv`` text: one row per (bucket, key); rates as fractions, as in ``results.json``; empty cells null."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=BY_TURN_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in result.rows():
        writer.writerow({k: csv_cell(row.get(k)) for k in BY_TURN_COLUMNS})
    return buffer.getvalue()


def write_by_turn_csv(result: ByTurnResult, path: str | os.PathLike[str]) -> Path:
    """Write ``by_turn.csv`` to ``path`` and return it."""
    path = Path(path)
    write_text_atomic(path, render_by_turn_csv(result), newline="")
    return path
