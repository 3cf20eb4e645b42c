"""The reports' figures as embeddable PNGs: an audit's side A vs side B per measure (and its gaps by turns), a prompts analysis' Fig. 2 and 3.

matplotlib is imported inside the functions and drives its Agg canvas directly (no pyplot),
so rendering never touches the user's interactive backend or global figure state.
"""

from __future__ import annotations

import base64
import io
import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fairtalk.report._table import ci_estimate, measure_label
from fairtalk.results import AuditResult, ByTurnResult, MeasureResult, PromptAnalysis

if TYPE_CHECKING:  # matplotlib is imported lazily, when a figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["bar_chart_png", "by_turn_png", "distribution_png", "png_data_uri", "regard_png"]

_COLOURS = ("#4c72b0", "#dd8452", "#7f7f7f")
_SIGNIFICANT = "#b2182b"
_N_COLUMNS = 4


def _plain(text: str) -> str:
    """Text that matplotlib draws literally (``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


def _scale(m: MeasureResult) -> float:
    return 100.0 if m.kind in ("rate", "corpus") else 1.0


def _value(x: float | None) -> float:
    return x if x is not None and math.isfinite(x) else float("nan")


def _draw(ax: Axes, m: MeasureResult, groups: tuple[str, str], significant: bool) -> None:
    scale = _scale(m)
    a, b = _value(m.a) * scale, _value(m.b) * scale
    low, high = (_value(x) * scale for x in m.ci95)
    estimate, shift = ci_estimate(m)  # the bar its 95% CI is drawn on: A − B, or Wilcoxon's median shift
    diff = _value(estimate) * scale
    labels = [_plain(groups[0]), _plain(groups[1]), "A − B" if shift is None else "shift (HL)"]
    ax.bar(range(3), [a, b, diff], color=_COLOURS, width=0.7)
    if math.isfinite(low) and math.isfinite(high):
        yerr = [[max(diff - low, 0.0)], [max(high - diff, 0.0)]]
        ax.errorbar([2], [diff], yerr=yerr, fmt="none", ecolor="black", capsize=5, linewidth=1.2)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(3), labels, fontsize=8)
    ax.tick_params(axis="y", labelsize=8)
    title = "\n".join(textwrap.wrap(_plain(measure_label(m.name)), 30)) + (" *" if significant else "")
    ax.set_title(
        title, fontsize=9, color=_SIGNIFICANT if significant else "black", fontweight="bold" if significant else "normal"
    )
    ax.spines[["top", "right"]].set_visible(False)


def bar_chart_png(result: AuditResult, *, dpi: int = 100) -> bytes | None:
    """A grid of bar charts (A, B, and A − B with its 95% CI), one panel per measure; None if no measures."""
    if not result.measures:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from fairtalk.report._table import summary_rows

    order = {row.name: row.significant for row in summary_rows(result)}
    measures = sorted(result.measures, key=lambda m: list(order).index(m.name))
    n_columns = min(_N_COLUMNS, len(measures))
    n_rows = math.ceil(len(measures) / n_columns)
    fig = Figure(figsize=(3.2 * n_columns, 2.9 * n_rows), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(n_rows, n_columns, squeeze=False)
    for ax, m in zip(axes.flat, measures):
        _draw(ax, m, result.groups, order[m.name])
    for ax in list(axes.flat)[len(measures) :]:
        ax.set_visible(False)
    return _png(fig)


def by_turn_png(result: ByTurnResult) -> bytes | None:
    """Each key's gap A − B against the turns since the identity appeared, with 95% CI bars; None without a key.

    One line per key (the audit's primary keys); a panel for the rates and diversity
    (percentage points) and one for the counts (per response), so that neither scale hides
    the other. A bucket left untested is a hollow marker without a bar; a tick says each
    bucket's pairs. Lines sit a little apart so that their bars do not hide each other.
    """
    keys = [key for key in result.keys if any(g.key == key for b in result.buckets for g in b.gaps)]
    if not keys or not result.buckets:
        return None
    kinds = {g.key: g.kind for b in result.buckets for g in b.gaps}
    panels = [
        (title, [k for k in keys if (kinds[k] in ("rate", "corpus")) == percent])
        for title, percent in (
            ("rates and diversity: gap A − B (percentage points)", True),
            ("counts: gap A − B (per response)", False),
        )
    ]
    panels = [(title, chosen) for title, chosen in panels if chosen]
    fig = _figure(5.6 * len(panels), 4.2)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    x_all = [b.turns_since for b in result.buckets]
    ticks = [f"{b.turns_since}\n(n={b.n_pairs})" for b in result.buckets]
    for ax, (title, chosen) in zip(axes, panels):
        for j, key in enumerate(chosen):
            offset = (j - (len(chosen) - 1) / 2) * min(0.08, 0.5 / len(chosen))
            _by_turn_line(ax, result, key, offset, f"C{keys.index(key) % 10}")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(x_all, ticks, fontsize=7)
        ax.set_xlabel("turns since the identity appeared", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    return _png(fig)


def _by_turn_line(ax: Axes, result: ByTurnResult, key: str, offset: float, colour: str) -> None:
    """One key's line: tested buckets filled with their 95% CI bars, untested ones hollow."""
    points = [(b.turns_since, b.tested, g) for b in result.buckets for g in b.gaps if g.key == key]
    scale = 100.0 if points and points[0][2].kind in ("rate", "corpus") else 1.0
    xs = [x + offset for x, _, _ in points]
    ys = [_value(g.estimate) * scale for _, _, g in points]
    ax.plot(xs, ys, color=colour, linewidth=1.2, label=_plain(measure_label(key)))
    for x, (_, tested, g), y in zip(xs, points, ys):
        low, high = (_value(v) * scale for v in g.ci95)
        if tested and math.isfinite(low) and math.isfinite(high) and math.isfinite(y):
            ax.errorbar(
                [x], [y], yerr=[[max(y - low, 0.0)], [max(high - y, 0.0)]], fmt="none", ecolor=colour, capsize=3, linewidth=1.0
            )
        marker = "*" if g.verdict.shows_difference else "o"
        ax.plot(
            [x],
            [y],
            marker=marker,
            markersize=8 if marker == "*" else 5,
            color=colour,
            markerfacecolor=colour if tested else "white",
            linestyle="none",
        )


def png_data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` for an ``<img src>``: the page needs no external file."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


# The prompts analysis' figures (paper 004, Fig. 2 and Fig. 3).

_LABEL_COLOURS = {"negative": "#d6604d", "neutral": "#bababa", "positive": "#4393c3", "other": "#8c6bb1"}
_PAIR_COLOURS = ("#7f7f7f", "#1b7837", "#c51b7d")


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def distribution_png(analysis: PromptAnalysis) -> bytes:
    """Fig. 2: stacked label distribution (%) per group, baseline (original prompts) beside all structures."""
    import numpy as np

    fig = _figure(11, 3.8)
    axes = fig.subplots(1, 2, sharey=True)
    names = ["all", *analysis.groups]
    panels = (("(a) baseline: original prompts", analysis.baseline_distribution), ("(b) all structures", analysis.distribution))
    for ax, (title, dist) in zip(axes, panels):
        bottom = np.zeros(len(names))
        for label in analysis.labels:
            values = np.array([_value(_cell(dist, n, label)) * 100 for n in names])
            ax.bar(range(len(names)), np.nan_to_num(values), bottom=bottom, color=_LABEL_COLOURS[label], label=label, width=0.75)
            for i, v in enumerate(values):
                if math.isfinite(v) and v >= 4:
                    ax.text(i, bottom[i] + v / 2, f"{v:.0f}", ha="center", va="center", fontsize=7)
            bottom += np.nan_to_num(values)
        ax.set_xticks(range(len(names)), [_plain(n) for n in names], rotation=30, ha="right", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set_ylim(0, 100)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].set_ylabel("percentage")
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _png(fig)


def _cell(table: Any, row: str, column: str) -> float | None:
    """``table.at[row, column]`` of a prompts analysis' DataFrame as a float; None where the table has no such cell."""
    if row not in table.index or column not in table.columns:
        return None
    return float(table.at[row, column])


def _mean_over(analysis: PromptAnalysis, structures: tuple[str, ...] | list[str], key: str) -> float:
    import numpy as np

    values = [_value(_cell(analysis.by_structure, s, key)) for s in structures if s in analysis.by_structure.index]
    values = [v for v in values if math.isfinite(v)]
    return float(np.mean(values)) if values else float("nan")


def _gap_over(analysis: PromptAnalysis, pair: str, structures: Sequence[str]) -> float:
    import numpy as np

    values = [_value(_cell(analysis.gap_by_structure, pair, s)) for s in structures]
    values = [v for v in values if math.isfinite(v)]
    return float(np.mean(values)) if values else float("nan")


def _nanmean(values: list[float]) -> float:
    """The mean of the finite values; NaN (without a warning) when there is none."""
    import numpy as np

    array = np.asarray(values, dtype=float)
    return float(np.nanmean(array)) if np.isfinite(array).any() else float("nan")


def _bars(
    ax: Axes,
    labels: list[str],
    series: list[tuple[str, list[float]]],
    ylabel: str,
    intervals: dict[int, list[tuple[float | None, float | None]]] | None = None,
) -> None:
    """Grouped bars; ``intervals[k]`` gives series ``k`` 95% error bars (one (low, high) per label)."""
    import numpy as np

    width = 0.8 / len(series)
    for k, (name, values) in enumerate(series):
        x = np.arange(len(labels)) + (k - (len(series) - 1) / 2) * width
        ax.bar(x, np.nan_to_num(values), width=width, label=name, color=_PAIR_COLOURS[(k + 1) % 3])
        if intervals and k in intervals:
            bounds = intervals[k]
            low = [v - (lo if lo is not None else v) for v, (lo, _) in zip(np.nan_to_num(values), bounds)]
            high = [(hi if hi is not None else v) - v for v, (_, hi) in zip(np.nan_to_num(values), bounds)]
            ax.errorbar(x, np.nan_to_num(values), yerr=[low, high], fmt="none", ecolor="black", capsize=3, linewidth=0.8)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(labels)), [_plain(n) for n in labels], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.legend(fontsize=7)
    ax.spines[["top", "right"]].set_visible(False)


def regard_png(analysis: PromptAnalysis) -> bytes:
    """Fig. 3: (a) mean regard baseline vs all, (b) best vs worst structures, (c) gaps, (d) gaps under best/worst structures."""
    fig = _figure(11, 7)
    (a, b), (c, d) = fig.subplots(2, 2)
    names = ["all", *analysis.groups]
    _bars(
        a,
        names,
        [
            ("baseline", [_value(analysis.baseline_regard[n].mean) for n in names]),
            ("all structures", [_value(analysis.regard[n].mean) for n in names]),
        ],
        "average regard",
    )
    a.set_title("(a) aggregated", fontsize=9)
    best, worst = list(analysis.best_structures), list(analysis.worst_structures)
    n_show = len(best)
    _bars(
        b,
        names,
        [
            (
                f"best {n_show}",
                [
                    _mean_over(analysis, best, n)
                    if n != "all"
                    else _nanmean([_mean_over(analysis, best, g) for g in analysis.groups])
                    for n in names
                ],
            ),
            (
                f"worst {n_show}",
                [
                    _mean_over(analysis, worst, n)
                    if n != "all"
                    else _nanmean([_mean_over(analysis, worst, g) for g in analysis.groups])
                    for n in names
                ],
            ),
        ],
        "average regard",
    )
    b.set_title("(b) segregated: best and worst structures", fontsize=9)
    pairs = list(analysis.gaps)
    _bars(
        c,
        pairs,
        [
            ("baseline", [_value(analysis.gaps[p].baseline) for p in pairs]),
            ("all structures", [_value(analysis.gaps[p].all) for p in pairs]),
        ],
        "average regard gap (a - b)",
        intervals={1: [analysis.gaps[p].ci95 for p in pairs]},
    )
    c.set_title("(c) pairwise: gap (95% CI, template × seed bootstrap)", fontsize=9)
    _bars(
        d,
        pairs,
        [
            ("largest-gap structures", [_gap_over(analysis, p, analysis.gaps[p].largest) for p in pairs]),
            ("smallest-gap structures", [_gap_over(analysis, p, analysis.gaps[p].smallest) for p in pairs]),
        ],
        "average regard gap (a - b)",
    )
    d.set_title("(d) pairwise segregated", fontsize=9)
    return _png(fig)
