"""Bar charts of side A vs side B per measure, with the difference's 95% CI, as an embeddable PNG.

matplotlib is imported inside the function and drives its Agg canvas directly (no pyplot),
so rendering never touches the user's interactive backend or global figure state.
"""

from __future__ import annotations

import base64
import io
import math
import textwrap

from fairtalk.report.table import measure_label
from fairtalk.results import AuditResult, MeasureResult

__all__ = ["bar_chart_png", "png_data_uri"]

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


def _draw(ax, m: MeasureResult, groups: tuple[str, str], significant: bool) -> None:  # noqa: ANN001
    scale = _scale(m)
    a, b = _value(m.a) * scale, _value(m.b) * scale
    low, high = (_value(x) * scale for x in m.ci95)
    diff = a - b
    labels = [_plain(groups[0]), _plain(groups[1]), "A − B"]
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

    from fairtalk.report.table import summary_rows

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
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def png_data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` for an ``<img src>``: the page needs no external file."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
