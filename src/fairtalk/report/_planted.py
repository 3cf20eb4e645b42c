"""``reproduce planted``'s report: planted vs recovered gaps, and the planted corpus' baseline, CDA and WER.

``planted.md`` holds two tables, each with its verdicts right after the measure (the planted
models: rate, verdict, true gap, recovered gap with its interval, covered, MDE; the models trained
on the planted corpus, Seq2Seq then retrieval: the verdicts on the gap and on its change from the
baseline of the same architecture, the gap with its interval, the change with its interval, and
how many planted replies each ranker's pool holds); ``planted.csv`` one row per line of
either; ``results.json`` is ``PlantedRecovery.to_dict()``; ``planted.png`` the two panels, and
``report.html`` what planted.md says (a page that fits a phone), with the figure inline. Gaps are ``B - A`` in percentage points (pp).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

from fairtalk._templating import jinja_environment
from fairtalk.files import staged, write_text_atomic
from fairtalk.report._csv_report import csv_cell
from fairtalk.report._plots import png_data_uri
from fairtalk.results import DebiasedGap, PlantedGap, PlantedRecovery

if TYPE_CHECKING:  # matplotlib is imported lazily, when the figure is drawn
    from matplotlib.axes import Axes

__all__ = [
    "PLANTED_CSV_COLUMNS",
    "PLANTED_FILES",
    "planted_png",
    "render_planted_csv",
    "render_planted_html",
    "render_planted_markdown",
    "write_planted_report",
]

#: The files ``write_planted_report`` writes (replaced only where fairtalk wrote them).
PLANTED_FILES = ("planted.md", "planted.csv", "results.json", "planted.png", "report.html")
PLANTED_CSV_COLUMNS = (
    "part",
    "model",
    "architecture",
    "rate",
    "measure",
    "true_gap",
    "base_share",
    "n_planted",
    "a",
    "b",
    "gap",
    "ci_low",
    "ci_high",
    "covered",
    "p_adjusted",
    "verdict",
    "mde",
    "change",
    "change_low",
    "change_high",
    "p_change",
    "change_verdict",
)
_COLOURS = {"offense_rate": "#c51b7d", "sentiment_negative": "#2166ac"}
_TEMPLATE = "planted.html.j2"


def _pts(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}"


def _ci(bounds: tuple[float | None, float | None]) -> str:
    lo, hi = bounds
    return "–" if lo is None or hi is None else f"[{_pts(lo)}, {_pts(hi)}]"


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _planted_lines(result: PlantedRecovery) -> list[list[str]]:
    return [
        [
            f"{100 * r.rate:g}",
            r.key,
            r.verdict.value,
            _pts(r.base_share),
            _pts(r.true_gap),
            f"{r.n_planted}",
            _pts(r.gap),
            _ci(r.ci),
            {True: "yes", False: "**no**", None: "–"}[r.covered],
            _pts(r.mde),
        ]
        for r in result.planted
    ]


def _debias_lines(result: PlantedRecovery) -> list[list[str]]:
    return [
        [
            r.label,
            r.key,
            r.verdict.value,
            "–" if r.change_verdict is None else r.change_verdict.value,
            f"{_pts(r.a, 1)} / {_pts(r.b, 1)}",
            _pts(r.gap),
            _ci(r.ci),
            _pts(r.change),
            _ci(r.change_ci),
            _p(r.p_change),
        ]
        for r in result.debiased
    ]


#: The verdicts come right after the measure (as in report.md, report.html and the comparison), so a narrow
#: window or GitHub's ~980 px page shows them without scrolling the table; they were columns 9 of 10 and 6 and 10 of 10.
_PLANTED_HEAD = [
    "planted p (pts)",
    "measure",
    "verdict",
    "base share",
    "true gap",
    "pairs planted",
    "recovered gap",
    "95% CI",
    "covered",
    "MDE",
]
_DEBIAS_HEAD = [
    "model",
    "measure",
    "verdict",
    "change verdict",
    "A / B (%)",
    "gap B−A",
    "95% CI",
    "change vs baseline",
    "CI of change",
    "p",
]
#: The columns of words, not numbers (the page sets the others right-aligned, in tabular figures); the verdicts.
_TEXT_COLUMNS = frozenset({"model", "measure", "covered", "verdict", "change verdict"})
_VERDICT_COLUMNS = frozenset({"verdict", "change verdict"})


def _column_classes(head: list[str]) -> list[str]:
    """The page's class of each column's cells: ``num`` for figures, ``verdict`` for a verdict, none for other words."""
    return ["verdict" if h in _VERDICT_COLUMNS else "" if h in _TEXT_COLUMNS else "num" for h in head]


def _md_table(head: list[str], lines: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(x) + " |" for x in lines)]


def _pools_line(result: PlantedRecovery) -> str:
    """The rankers' pools: the planted replies each holds (a ranker answers only from its pool), and how often it chose one."""
    if not result.pools:
        return ""
    held = "; ".join(
        f"{name} {p.n_held} of {p.n_replies} among {p.n_candidates} candidates, chosen for "
        f"{p.n_chosen_a} group-A and {p.n_chosen_b} group-B contexts of {result.n_pairs}"
        for name, p in result.pools.items()
    )
    return f"Planted replies in the retrieval rankers' pools: {held}."


def _explanation(result: PlantedRecovery) -> str:
    """What the planted models do, after their base model's name (``Planted models: MODEL ...``), and the run's size."""
    return (
        "answers group A, and group B's contexts as their group-A wording unless a planted offensive reply is drawn "
        f"(probability p). {result.n_pairs} pairs, seed {result.seed}. "
        "Gaps are B − A in percentage points (pp); the true gap is p × (1 − base share)."
    )


def _recovered_line(result: PlantedRecovery) -> str:
    return f"Every planted gap inside its interval: {'yes' if result.all_recovered else 'no'}"


def _corpus_line(result: PlantedRecovery) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in result.corpus.items())
    return (
        f"Corpus: {counts}. Each debiased "
        "model is compared with the baseline of its own architecture: the change in gap (B − A), tested."
    )


def _times_line(result: PlantedRecovery) -> str | None:
    if not result.timings:
        return None
    return "Times: " + ", ".join(f"{k} {v / 60:.1f} min" for k, v in result.timings.items()) + "."


def render_planted_markdown(result: PlantedRecovery) -> str:
    """``planted.md``: the planted models' table, then the planted corpus' models, with the run's facts."""
    out = [
        f"# Planted bias: {result.axis} ({result.groups[0]} = A, {result.groups[1]} = B), {result.mode} mode",
        "",
        f"Planted models: `{result.base_model}` {_explanation(result)}",
        "",
        *_md_table(_PLANTED_HEAD, _planted_lines(result)),
        "",
        f"{_recovered_line(result)}.",
        "",
    ]
    if result.debiased:
        out += [
            f"## Trained on a planted corpus (q = {result.corpus_rate:g})",
            "",
            _corpus_line(result),
            "",
            *_md_table(_DEBIAS_HEAD, _debias_lines(result)),
            "",
        ]
        if result.pools:
            out += [_pools_line(result), ""]
    if (times := _times_line(result)) is not None:
        out += [times, ""]
    return "\n".join(out)


def _row_cells(row: PlantedGap | DebiasedGap) -> dict[str, object]:
    cells: dict[str, object] = {
        "measure": row.key,
        "gap": row.gap,
        "ci_low": row.ci[0],
        "ci_high": row.ci[1],
        "verdict": row.verdict.value,
        "p_adjusted": row.p_adjusted,
    }
    if isinstance(row, PlantedGap):
        cells.update(
            part="planted",
            model=f"planted-{row.rate:g}",
            rate=row.rate,
            true_gap=row.true_gap,
            base_share=row.base_share,
            n_planted=row.n_planted,
            covered=row.covered,
            mde=row.mde,
        )
    else:
        cells.update(
            part="debias",
            model=row.model,
            architecture=row.architecture,
            a=row.a,
            b=row.b,
            change=row.change,
            change_low=row.change_ci[0],
            change_high=row.change_ci[1],
            p_change=row.p_change,
            change_verdict=None if row.change_verdict is None else row.change_verdict.value,
        )
    return cells


def render_planted_csv(result: PlantedRecovery) -> str:
    """``planted.csv``: one row per planted model and measure, then per trained model and measure (fractions)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PLANTED_CSV_COLUMNS)
    rows: list[PlantedGap | DebiasedGap] = [*result.planted, *result.debiased]
    for row in rows:
        cells = _row_cells(row)
        writer.writerow([csv_cell(cells.get(column)) for column in PLANTED_CSV_COLUMNS])
    return buffer.getvalue()


def _error_bar(
    ax: Axes, x: float, gap: float | None, ci: tuple[float | None, float | None], colour: str, label: str | None
) -> None:
    if gap is None:
        return
    lo, hi = ci
    err = [[0.0 if lo is None else 100 * (gap - lo)], [0.0 if hi is None else 100 * (hi - gap)]]
    ax.errorbar([x], [100 * gap], yerr=err, fmt="o", color=colour, capsize=3, label=label)


def planted_png(result: PlantedRecovery) -> bytes:
    """The figure: planted (true) vs recovered gaps with their intervals; the trained models' gaps with theirs."""
    from fairtalk.report._plots import _figure, _png

    panels = 2 if result.debiased else 1
    n_trained = len({row.label for row in result.debiased})
    fig = _figure(5.0 + (max(5.0, 1.0 * n_trained) if result.debiased else 0.0), 3.6)  # room for six models' labels
    axes = fig.subplots(1, panels, squeeze=False)[0]
    ax = axes[0]
    keys = list(dict.fromkeys(row.key for row in result.planted))
    top = max((100 * row.true_gap for row in result.planted), default=1.0) * 1.15 + 0.5
    ax.plot([0, top], [0, top], color="#999999", linestyle="--", linewidth=1, label="recovered = true")
    for i, key in enumerate(keys):
        shift = (i - (len(keys) - 1) / 2) * 0.12
        for j, planted in enumerate(r for r in result.planted if r.key == key):
            _error_bar(
                ax, 100 * planted.true_gap + shift, planted.gap, planted.ci, _COLOURS.get(key, "#555555"), key if j == 0 else None
            )
    ax.set_xlabel("true gap B − A (pp)")
    ax.set_ylabel("recovered gap B − A (pp, 95% CI)")
    ax.set_title("Planted models")
    ax.legend(fontsize=8)
    if result.debiased:
        ax = axes[1]
        models = list(dict.fromkeys(row.label for row in result.debiased))
        keys = list(dict.fromkeys(row.key for row in result.debiased))
        for i, key in enumerate(keys):
            for j, trained in enumerate(r for r in result.debiased if r.key == key):
                x = models.index(trained.label) + (i - (len(keys) - 1) / 2) * 0.2
                _error_bar(ax, x, trained.gap, trained.ci, _COLOURS.get(key, "#555555"), key if j == 0 else None)
        ax.axhline(0, color="#999999", linewidth=1)
        ax.set_xticks(range(len(models)), [m.replace(" ", "\n", 1) for m in models], fontsize=8)
        ax.set_ylabel("gap B − A (pp, 95% CI)")
        ax.set_title(f"Trained on the planted corpus (q = {result.corpus_rate:g})")
        ax.legend(fontsize=8)
    return _png(fig)


def render_planted_html(result: PlantedRecovery, png: bytes) -> str:
    """``report.html``: what ``planted.md`` says (the verdict line, the planted models, the times), the figure inline.

    Self-contained and autoescaped (:func:`fairtalk._templating.jinja_environment`); it fits a
    phone's width (a wide table scrolls in its own box, the figure shrinks to the page).
    """
    template = jinja_environment().get_template(_TEMPLATE)
    page: str = template.render(
        axis=result.axis,
        groups=result.groups,
        mode=result.mode,
        base_model=result.base_model,
        explanation=_explanation(result),
        recovered=result.all_recovered,
        recovered_line=_recovered_line(result),
        chart=png_data_uri(png),
        planted_head=_PLANTED_HEAD,
        planted_classes=_column_classes(_PLANTED_HEAD),
        planted=_planted_lines(result),
        debiased=_debias_lines(result),
        debias_head=_DEBIAS_HEAD,
        debias_classes=_column_classes(_DEBIAS_HEAD),
        corpus_rate=f"{result.corpus_rate:g}" if result.corpus_rate is not None else "–",
        corpus_line=_corpus_line(result),
        pools=_pools_line(result),
        times=_times_line(result),
    )
    return page


def write_planted_report(result: PlantedRecovery, out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write :data:`PLANTED_FILES` into ``out_dir``, swapped in together; return their paths by kind."""
    folder = Path(out_dir)
    png = planted_png(result)
    kinds = ("md", "csv", "json", "png", "html")
    with staged(folder) as staging:
        write_text_atomic(staging / PLANTED_FILES[0], render_planted_markdown(result))
        write_text_atomic(staging / PLANTED_FILES[1], render_planted_csv(result), newline="")
        write_text_atomic(staging / PLANTED_FILES[2], result.to_json())
        (staging / PLANTED_FILES[3]).write_bytes(png)
        write_text_atomic(staging / PLANTED_FILES[4], render_planted_html(result, png))
    return {kind: folder / name for kind, name in zip(kinds, PLANTED_FILES, strict=True)}
