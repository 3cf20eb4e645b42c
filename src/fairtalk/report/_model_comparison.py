"""A model comparison (``fairtalk compare``) rendered: both models' gaps side by side and the change in gap with its interval.

:func:`write_model_comparison` writes ``results.json`` (``ModelComparison.to_dict()``),
``results.csv`` (``to_frame()``), ``report.md`` and a self-contained ``report.html``, swapped in
together; :func:`model_comparison_table` is the terminal's rich table. Rates read in percentage
points, counts in their units; every interval is at ``1 − α``.
"""

from __future__ import annotations

import math
import os
import textwrap
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from fairtalk._templating import jinja_environment
from fairtalk.files import staged, write_text_atomic
from fairtalk.gates import Gate, evaluate
from fairtalk.report._markdown import md_escape
from fairtalk.report._table import format_p, measure_label
from fairtalk.results import Change, GapChange, ModelComparison

if TYPE_CHECKING:  # rich is imported lazily by model_comparison_table()
    from rich.console import RenderableType
    from rich.table import Table

__all__ = [
    "COMPARISON_FILES",
    "ComparisonRow",
    "comparison_rows",
    "gate_lines",
    "model_comparison_table",
    "model_comparison_title",
    "render_model_comparison_csv",
    "render_model_comparison_html",
    "render_model_comparison_markdown",
    "write_model_comparison",
]

#: What :func:`write_model_comparison` writes, by format.
COMPARISON_FILES = {"json": "results.json", "csv": "results.csv", "md": "report.md", "html": "report.html"}
_TEMPLATE = "model_comparison.html.j2"
_DASH = "–"
#: The per-axis line and the method note of a comparison of two prompts analyses (``design`` ``"independent"``).
_INDEPENDENT_AXIS = "regard gaps of two prompts analyses, one per generator, each with its own samples"
_INDEPENDENT_NOTE = (
    "Gap: each generator's regard gap A − B over all structures (labels −1/0/1), with its analysis' template × seed "
    "bootstrap 95% interval. Change: candidate gap − baseline gap, the two gaps taken as independent estimates "
    "(standard error √(se_c² + se_b²), Wald test); the within-prompt pairing of the two generators' completions is "
    "not used, which is conservative when they completed the same prompts."
)
#: What the terminal's table shows beside its verdicts: the units, and which p the verdict follows.
_TABLE_CAPTION = (
    "Rates in percentage points, counts in their units. p change: the test of no change (its interval's); "
    "p size: the gap's size changed (the change and the sum of the gaps both ≠ 0), which the verdict follows, "
    "adjusted in brackets."
)
#: The method note of a comparison of two audits (``design`` ``"paired"``): what each interval is.
_PAIRED_NOTE = (
    "Gap: the model's mean A − B with the audit's interval for its kind (a rate's score interval, values −1 … 1; a count's "
    "t interval). Change: candidate gap − baseline gap (difference in differences, per pair), with the interval its "
    "paired test of no change inverts (a rate's score interval of the per-pair contrast, values −2 … 2; a count's t "
    "interval); Sum: candidate gap + baseline gap, the same way. Rates, their intervals and margins in percentage "
    "points. A rate's gap and change intervals are one method on two supports: where the baseline's gap is 0 on every "
    "pair the change equals the candidate's gap, and its interval (on −2 … 2, the one the verdict follows) may still "
    "differ from the candidate gap's (on −1 … 1)."
)
#: Which p the verdict follows, in both designs.
_P_NOTE = (
    "p (no change): the test that the change's interval inverts. p (size changed): max of the change's and the sum's "
    "p, the test the verdict follows (the gap's size differs when both differ from 0); p (size changed, adj.): that p "
    "corrected over the primary keys. A regressed or improved row has both the change's and the sum's intervals "
    "excluding 0."
)
_STYLE = {Change.IMPROVED: "green", Change.REGRESSED: "bold red", Change.UNCHANGED: "green", Change.INCONCLUSIVE: "yellow"}


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """One (axis, key), formatted: both gaps and the change with their intervals, p, margin and verdict.

    ``p_change`` is the test of no change that ``change_ci`` inverts; ``total_ci`` the interval of
    the sum of the gaps; ``p_magnitude`` the p of "the gap's size changed" (``max`` of the change's
    and the sum's p), which the verdict follows, and ``p_adjusted`` its correction over the family.
    ``unit``: ``"pp"`` for a rate (every figure in percentage points), ``""`` for a count.
    ``reason``: why an inconclusive key whose gap is the same on every pair in both audits is
    inconclusive (its note: too few units for the identical-answers bound), which the terminal
    shows beside the verdict; ``""`` for any other key.
    """

    axis: str
    key: str
    label: str
    primary: bool
    baseline: str
    baseline_ci: str
    candidate: str
    candidate_ci: str
    change: str
    change_ci: str
    p_change: str
    total_ci: str
    p_magnitude: str
    p_adjusted: str
    margin: str
    non_inferior: str
    verdict: str
    notes: tuple[str, ...]
    unit: str = ""
    reason: str = ""


def _scale(row: GapChange) -> float:
    return 100.0 if row.kind == "rate" else 1.0


def _number(x: float | None, row: GapChange, *, signed: bool = True) -> str:
    if x is None:
        return _DASH
    if not math.isfinite(x):
        return "n/a"
    value = x * _scale(row)
    digits = 2 if row.kind == "rate" else (4 if abs(value) < 10 else 2)
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _interval(bounds: tuple[float | None, float | None], row: GapChange) -> str:
    low, high = bounds
    if low is None or high is None:
        return "n/a"
    return f"[{_number(low, row)}, {_number(high, row)}]"


def _verdict(row: GapChange, *, paired: bool = True) -> str:
    if row.identical and not paired:
        return f"{row.verdict.value} (identical analyses)"
    if row.identical and row.identical_answers == row.n_pairs:
        return f"{row.verdict.value} (identical on all {row.n_pairs} pairs)"
    return row.verdict.value


def _reason(row: GapChange, *, paired: bool) -> str:
    """Why an identical-gap key of two audits is inconclusive: its first note, as ``report.md`` and ``results.csv`` give it."""
    if paired and row.identical and row.verdict is Change.INCONCLUSIVE and row.notes:
        return row.notes[0]
    return ""


def comparison_rows(comparison: ModelComparison) -> list[ComparisonRow]:
    """Every (axis, key) of the comparison, formatted (rates in percentage points), in the result's order."""
    rows = []
    paired = comparison.design == "paired"
    for r in comparison.changes:
        rows.append(
            ComparisonRow(
                axis=r.axis,
                key=r.key,
                label=measure_label(r.key),
                primary=r.primary,
                baseline=_number(r.baseline_gap, r),
                baseline_ci=_interval(r.baseline_ci, r),
                candidate=_number(r.candidate_gap, r),
                candidate_ci=_interval(r.candidate_ci, r),
                change=_number(r.change, r),
                change_ci=_interval(r.change_ci, r),
                p_change=format_p(r.p_change),
                total_ci=_interval(r.total_ci, r),
                p_magnitude=format_p(r.p_magnitude),
                p_adjusted=format_p(r.p_adjusted),
                margin=_number(r.margin, r, signed=False),
                non_inferior={True: "yes", False: "not shown", None: _DASH}[r.non_inferior],
                verdict=_verdict(r, paired=paired),
                notes=r.notes,
                unit="pp" if r.kind == "rate" else "",
                reason=_reason(r, paired=paired),
            )
        )
    return rows


def gate_lines(comparison: ModelComparison, *, gated: bool = True) -> list[str]:
    """What the comparison found, in sentences: changes, the release gate's headline (:func:`fairtalk.gates.evaluate`), what was left out.

    The headline of ``--fail-if-worse`` is a line only when ``gated`` (the gate was requested):
    a gate nobody asked for is never shown as passed or failed.
    """
    lines = []
    for verdict in (Change.REGRESSED, Change.IMPROVED):
        keys = [f"{r.axis}/{r.key}" for r in comparison.changes if r.primary and r.verdict is verdict]
        if keys:
            lines.append(f"{verdict.value} (the gap's size changed, adjusted p < {comparison.alpha:g}): {', '.join(keys)}")
    if gated:
        lines.append(evaluate(comparison, Gate.FAIL_IF_WORSE).headline)
    for axis in comparison.axes:
        if axis.n_pairs and axis.n_identical_answers == axis.n_pairs:
            lines.append(
                f"{axis.axis}: identical on all {axis.n_pairs} pairs (both models gave the same two answers to every pair)"
            )
        for name, count, examples in (
            ("baseline", axis.only_baseline, axis.only_baseline_examples),
            ("candidate", axis.only_candidate, axis.only_candidate_examples),
        ):
            if count:
                shown = ", ".join(examples) + (", …" if count > len(examples) else "")
                lines.append(f"{axis.axis}: {count} pairs only the {name} holds, left out ({shown})")
        reasons: dict[str, list[str]] = {}
        for key, why in axis.skipped.items():
            reasons.setdefault(why, []).append(key)
        lines += [f"{axis.axis}: {', '.join(keys)}: {why}" for why, keys in reasons.items()]
    what = "axes" if comparison.design == "paired" else "group pairs"
    if comparison.design != "paired":
        lines += [
            f"{r.axis}: identical analyses (the same gap from the same labels), the change is exactly 0"
            for r in comparison.changes
            if r.identical
        ]
    for name, axes in (("baseline", comparison.axes_only_baseline), ("candidate", comparison.axes_only_candidate)):
        if axes:
            lines.append(f"{what} only the {name} holds, left out: {', '.join(axes)}")
    return [*lines, *comparison.warnings]


def _title(comparison: ModelComparison) -> str:
    return f"{comparison.candidate} against {comparison.baseline}"


#: The front page of a folder compared, first found: an audit run's index, else a report (a prompts analysis).
_RUN_PAGES = ("index.html", "report.html")


def _folder_name(path: str) -> str:
    """The last part of a folder's path (``.``: the folder's own name)."""
    return Path(path).name or Path(path).resolve().name


def _from_page(out_dir: Path, path: str | Path) -> str:
    """``path`` from the page's folder ``out_dir``: never absolute, never relative to the shell that ran the command."""
    try:
        return Path(os.path.relpath(Path(path).resolve(), out_dir.resolve())).as_posix()
    except ValueError:  # on another drive (Windows): no relative path leads there
        return _folder_name(str(path))


@dataclass(frozen=True, slots=True)
class _PageNames:
    """How a page in ``out_dir`` names the folders compared: a title of folder names, paths from the page, links to their pages."""

    title: str
    baseline: str
    candidate: str
    links: tuple[tuple[str, str], ...] = ()


def _page_names(comparison: ModelComparison, out_dir: Path | None) -> _PageNames:
    """The names the pages give the folders compared (``out_dir`` None: as recorded, no links).

    ``results.json`` records the folders as the command was given them (absolute, or from the
    shell's folder); a page in ``out_dir`` names them from where it lies: the title by their folder
    names (by their paths when both have the same name), the header by their paths from the page,
    and links each one's front page (``index.html``, else ``report.html``) that is there.
    """
    baseline, candidate = comparison.baseline, comparison.candidate
    links: tuple[tuple[str, str], ...] = ()
    if out_dir is not None:
        baseline, candidate = _from_page(out_dir, baseline), _from_page(out_dir, candidate)
        links = _front_pages(comparison, out_dir)
    names = (_folder_name(comparison.candidate), _folder_name(comparison.baseline))
    title = f"{candidate} against {baseline}" if names[0] == names[1] else f"{names[0]} against {names[1]}"
    return _PageNames(title, baseline, candidate, links)


def _front_pages(comparison: ModelComparison, out_dir: Path) -> tuple[tuple[str, str], ...]:
    """Per folder compared, candidate first, its front page there (a run's index, an analysis' report): label and link."""
    links = []
    for who, folder in (("candidate", comparison.candidate), ("baseline", comparison.baseline)):
        page = next((Path(folder) / name for name in _RUN_PAGES if (Path(folder) / name).is_file()), None)
        if page is not None:
            kind = "run" if page.name == _RUN_PAGES[0] else "analysis"
            links.append((f"the {who}'s {kind} ({_folder_name(folder)})", _from_page(out_dir, page)))
    return tuple(links)


def model_comparison_title(comparison: ModelComparison) -> str:
    """The comparison's title line, plain text: ``fairtalk compare: CANDIDATE against BASELINE``.

    :func:`model_comparison_table` with ``title=False`` leaves it out, so that the command line prints
    it as its other prose, wrapped between words and never inside a path with spaces.
    """
    return f"fairtalk compare: {_title(comparison)}"


#: Below this many columns (a CI log, ``| tee``: 80) the comparison prints one block per key instead of a table,
#: so that no measure name, figure or verdict is cut to ``sentimen…``.
WIDE_ENOUGH = 110


def model_comparison_table(comparison: ModelComparison, *, width: int | None = None, title: bool = True) -> RenderableType:
    """The comparison for a terminal ``width`` columns wide (None: wide): a ``rich`` Table, or blocks when narrow.

    The table has per axis and key both gaps, the change with its interval, p and verdict; below
    :data:`WIDE_ENOUGH` columns, or where the table's rows do not fit on one line each (a long verdict
    such as ``inconclusive (identical on all 600 pairs)``), each key is a block of short lines that
    wrap between figures, never inside one. Why an identical-gap key is inconclusive
    (:attr:`ComparisonRow.reason`) follows its verdict in a block, and the table in a table's case.
    ``title=False``: without :func:`model_comparison_title` (its caller prints it).
    """
    if width is not None and width < WIDE_ENOUGH:
        return _comparison_blocks(comparison, width, title=title)
    table = _comparison_table(comparison, title=title)
    if width is not None and _natural_width(table) > width:
        return _comparison_blocks(comparison, width, title=title)
    reasons = [f"{row.axis}/{row.key}: {row.verdict}; {row.reason}" for row in comparison_rows(comparison) if row.reason]
    if not reasons:
        return table
    from rich.console import Group
    from rich.text import Text

    return Group(table, *(Text(_wrap(line, width, "")) for line in reasons))


def _wrap(text: str, width: int | None, indent: str) -> str:
    """``text`` at ``indent``, wrapped between words to ``width`` columns (None: not wrapped), its next lines 2 further in."""
    if width is None:
        return indent + text
    return textwrap.fill(
        text, width=width, initial_indent=indent, subsequent_indent=indent + "  ", break_long_words=False, break_on_hyphens=False
    )


#: Wider than any table: rich measures a table's natural width within the width it is given.
_UNBOUNDED = 1 << 16


def _natural_width(table: Table) -> int:
    """The columns ``table`` takes with no cell wrapped or cut (rich's measurement; nothing is printed)."""
    from rich.console import Console
    from rich.measure import Measurement

    console = Console(width=_UNBOUNDED)
    return Measurement.get(console, console.options, table).maximum


def _comparison_blocks(comparison: ModelComparison, width: int, *, title: bool = True) -> RenderableType:
    """One block per (axis, key): its name on a line of its own, then its figures and verdict (and its reason), indented."""
    from rich.console import Group
    from rich.text import Text

    level = f"{1 - comparison.alpha:.0%}"
    parts: list[Text] = [Text(model_comparison_title(comparison), style="bold")] if title else []
    rows = comparison_rows(comparison)
    for i, row in enumerate(rows):
        if i == 0 or rows[i - 1].axis != row.axis:
            parts.append(Text(f"\n{row.axis}", style="bold"))
        style = _STYLE[comparison.changes[i].verdict]
        unit = f" ({row.unit})" if row.unit else ""
        parts += [
            Text(f"  {row.key}" + ("" if row.primary else " (secondary)")),
            Text(f"    gap{unit}: baseline {row.baseline}, candidate {row.candidate}"),
            Text(f"    change {row.change} ({level} CI {row.change_ci}), p {row.p_change}"),
            Text(f"    sum of the gaps {level} CI {row.total_ci}"),
            Text(f"    size of the gap changed: p {row.p_magnitude}, adj. {row.p_adjusted}"),
            Text(f"    {row.verdict}", style=style),
        ]
        if row.reason:
            parts.append(Text(_wrap(row.reason, width, "      ")))
    return Group(*parts)


def _comparison_table(comparison: ModelComparison, *, title: bool = True) -> Table:
    """The comparison as a ``rich`` Table: per axis and key both gaps, the change with its interval, p and verdict."""
    from rich.table import Table
    from rich.text import Text

    level = f"{1 - comparison.alpha:.0%}"
    table = Table(
        title=Text(model_comparison_title(comparison)) if title else None,
        caption=Text(_TABLE_CAPTION),
    )
    headers = (
        "Axis",
        "Measure",
        "Baseline gap",
        "Candidate gap",
        f"Change ({level} CI)",
        "p change",
        f"Sum ({level} CI)",
        "p size (adj.)",
        "Verdict",
    )
    for header in headers:
        table.add_column(Text(header), justify="left" if header in ("Axis", "Measure", "Verdict") else "right")
    rows = comparison_rows(comparison)
    for i, row in enumerate(rows):
        first = i == 0 or rows[i - 1].axis != row.axis
        last = i == len(rows) - 1 or rows[i + 1].axis != row.axis
        verdict = comparison.changes[i].verdict
        table.add_row(
            Text(row.axis if first else ""),
            Text(row.key + ("" if row.primary else " (secondary)")),
            Text(row.baseline),
            Text(row.candidate),
            Text(f"{row.change} {row.change_ci}"),
            Text(row.p_change),
            Text(row.total_ci),
            Text(f"{row.p_magnitude} ({row.p_adjusted})"),
            Text(row.verdict, style=_STYLE[verdict]),
            end_section=last,
        )
    return table


def render_model_comparison_markdown(
    comparison: ModelComparison, *, gated: bool = True, out_dir: str | os.PathLike[str] | None = None
) -> str:
    """``report.md``: per axis both gaps and the change with its interval, then the findings and notes.

    ``out_dir``: the folder the page is written to, from which it names and links the folders
    compared (None: as ``results.json`` records them).
    """
    level = f"{1 - comparison.alpha:.0%}"
    names = _page_names(comparison, None if out_dir is None else Path(out_dir))
    links = " · ".join(f"[{md_escape(label)}]({href})" for label, href in names.links)
    lines = [
        f"# fairtalk compare: {md_escape(names.title)}",
        "",
        *((f"← {links}", "") if links else ()),
        f"baseline `{md_escape(names.baseline)}` · candidate `{md_escape(names.candidate)}` · "
        f"α = {comparison.alpha:g} · correction: {comparison.correction} · intervals at {level}",
        "",
    ]
    base, cand = comparison.models
    if base or cand:
        lines += [f"models: baseline `{md_escape(base or _DASH)}` · candidate `{md_escape(cand or _DASH)}`", ""]
    rows = comparison_rows(comparison)
    paired = comparison.design == "paired"
    for axis in comparison.axes:
        lines += [
            f"## {md_escape(axis.axis)} ({md_escape(axis.groups[0])} vs {md_escape(axis.groups[1])})",
            "",
            (
                f"{axis.n_pairs:,} pairs both runs answered"
                + (f", from {axis.n_clusters:,} dialogues" if axis.n_clusters else "")
                + (f"; {axis.n_identical_answers:,} answered identically by both models" if axis.n_identical_answers else "")
            )
            if paired
            else _INDEPENDENT_AXIS,
            "",
            "| Measure | Verdict | Baseline gap | CI | Candidate gap | CI | Change | CI | p (no change) | Sum CI "
            "| p (size changed) | p (size changed, adj.) | Margin | Non-inferior |",
            "| --- | --- |" + " ---: |" * 12,
        ]
        for row in (r for r in rows if r.axis == axis.axis):
            cells = (
                row.label + ("" if row.primary else " (secondary)"),
                row.verdict,
                row.baseline,
                row.baseline_ci,
                row.candidate,
                row.candidate_ci,
                row.change,
                row.change_ci,
                row.p_change,
                row.total_ci,
                row.p_magnitude,
                row.p_adjusted,
                row.margin,
                row.non_inferior,
            )
            lines.append("| " + " | ".join(md_escape(c) for c in cells) + " |")
        lines.append("")
    lines += [
        "## Findings",
        "",
        *(f"- {md_escape(line)}" for line in gate_lines(comparison, gated=gated)),
        "",
        "## Notes",
        "",
        f"- {_PAIRED_NOTE}" if paired else f"- {_INDEPENDENT_NOTE}",
        f"- {_P_NOTE}",
        "- improved / regressed: the size of the gap is shown smaller / larger (both the change and the sum of "
        "the gaps differ from 0, corrected over the primary keys); unchanged: the sizes are shown to differ by less "
        "than the margin both ways; non-inferior: |candidate gap| < |baseline gap| + margin is shown.",
    ]
    for row in rows:
        lines += [f"- {md_escape(row.axis)}/{md_escape(row.key)}: {md_escape(note)}" for note in row.notes]
    return "\n".join(lines) + "\n"


def render_model_comparison_csv(comparison: ModelComparison) -> str:
    """``results.csv``: :meth:`ModelComparison.to_frame`, one row per (axis, key), values in their units."""
    return str(comparison.to_frame().to_csv(lineterminator="\n"))


def _version() -> str:
    try:
        return version("fairtalk")
    except PackageNotFoundError:
        return "unknown"


def render_model_comparison_html(
    comparison: ModelComparison, *, csp: bool = True, gated: bool = True, out_dir: str | os.PathLike[str] | None = None
) -> str:
    """``report.html``: self-contained (no script, no external load), both models side by side and the change.

    ``out_dir``: the folder the page is written to, from which it names and links the folders
    compared (None: as ``results.json`` records them).
    """
    rows = comparison_rows(comparison)
    axes = [
        {"axis": a, "rows": [(r, comparison.changes[i].verdict.value) for i, r in enumerate(rows) if r.axis == a.axis]}
        for a in comparison.axes
    ]
    template = jinja_environment().get_template(_TEMPLATE)
    return str(
        template.render(
            names=_page_names(comparison, None if out_dir is None else Path(out_dir)),
            comparison=comparison,
            axes=axes,
            findings=gate_lines(comparison, gated=gated),
            level=f"{1 - comparison.alpha:.0%}",
            csp=csp,
            version=_version(),
            independent=comparison.design != "paired",
            independent_axis=_INDEPENDENT_AXIS,
            independent_note=_INDEPENDENT_NOTE,
            paired_note=_PAIRED_NOTE,
            p_note=_P_NOTE,
            notes=[(r.axis, r.key, note) for r in rows for note in r.notes],
        )
    )


def write_model_comparison(
    comparison: ModelComparison, out_dir: str | os.PathLike[str], *, gated: bool = True
) -> dict[str, Path]:
    """Write ``results.json``, ``results.csv``, ``report.md`` and ``report.html`` into ``out_dir``, swapped in together.

    The reports state ``--fail-if-worse``'s outcome only when ``gated`` (the gate was requested);
    they name the folders compared from ``out_dir`` and link their front pages (``results.json``
    keeps the paths as given).

    Only files fairtalk wrote are replaced (:func:`fairtalk.files.staged`): a user's own file of
    one of these names is an OutputError, and nothing changes.
    """
    folder = Path(out_dir)
    with staged(folder) as staging:
        write_text_atomic(staging / COMPARISON_FILES["json"], comparison.to_json())
        write_text_atomic(staging / COMPARISON_FILES["csv"], render_model_comparison_csv(comparison), newline="")
        markdown = render_model_comparison_markdown(comparison, gated=gated, out_dir=folder)
        write_text_atomic(staging / COMPARISON_FILES["md"], markdown)
        write_text_atomic(
            staging / COMPARISON_FILES["html"], render_model_comparison_html(comparison, gated=gated, out_dir=folder)
        )
    return {kind: folder / name for kind, name in COMPARISON_FILES.items()}
