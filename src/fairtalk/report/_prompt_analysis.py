"""The prompts analysis (paper 004) as a report: ``results.json``, CSV tables and a self-contained ``report.html``.

Like the audit's report it consumes only ``fairtalk.results`` (a :class:`PromptAnalysis`) and
computes nothing: its tables are the analysis' own, as ``PromptAnalysis.to_dict()`` writes them.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairtalk._jsonl import jsonable
from fairtalk._templating import jinja_environment
from fairtalk.errors import InputError, OutputError
from fairtalk.files import staged, write_text_atomic
from fairtalk.prompts._records import RegardCertificate
from fairtalk.report._labelled import LABELLED_NOTE_COMPLETIONS
from fairtalk.results import PromptAnalysis, versioned
from fairtalk.stats import MIN_DISAGREEMENTS, PPIEstimate

if TYPE_CHECKING:  # pandas is imported lazily, when the tables are built
    import pandas as pd

__all__ = ["FORMATS", "REPORT_FILES", "render_prompts_html", "write_prompts_report"]

FORMATS = ("json", "csv", "html")
#: Every file the report writes (checked against the inputs before any work).
REPORT_FILES = (
    "results.json",
    "groups.csv",
    "gaps.csv",
    "kl.csv",
    "kl_baseline.csv",
    "kl_ci95.csv",
    "structures.csv",
    "report.html",
)
_PPI_COLUMNS = (
    "ppi_estimate",
    "ppi_ci95_low",
    "ppi_ci95_high",
    "ppi_p",
    "ppi_n_labels",
    "ppi_effective_labels",
    "labels_only_estimate",
    "ppi_n_disagreements",
    "ppi_method",
)
_MSG_FORMAT = "unknown report format {given!r} (choose from: json, csv, html)"
_MSG_OUT = "cannot write the report ({error})"
#: Longest example text shown in the HTML (the completions file keeps the full text).
_MAX_SHOWN_CHARS = 2000
_NOTE_NO_SCORER = (
    "the labels came with the data: their scorer is not here to check (use --relabel, "
    "and `fairtalk regard check` against hand labels)"
)


#: Paper 004's per-structure reversal tests, in words: a simulation on the paper's data (issue 27) found them powerless.
NOTE_REVERSAL_POWER = (
    "The per-structure reversal tests are nearly powerless at this size: after Holm over {n} structures each runs "
    "at about α/{n} = {level:.2g}, and in a simulation on the paper's data they had size 0.0036 and found a real "
    "+0.109 gap reversed in only 2.6% of structures. A structure not listed as reversing is not shown to agree with "
    "the overall gap: read the gap's interval over all structures instead."
)


def reversal_note(analysis: PromptAnalysis, n_structures: int) -> str:
    """:data:`NOTE_REVERSAL_POWER` for this analysis' level and number of structures."""
    n = max(1, n_structures)
    alpha = analysis.inference.alpha if analysis.inference is not None else 0.05
    return NOTE_REVERSAL_POWER.format(n=n, level=alpha / n)


def _tables(analysis: PromptAnalysis) -> dict[str, pd.DataFrame]:
    import pandas as pd

    written = analysis.to_dict()
    rows = []
    for scope, dist, regard in (
        ("all", written["distribution"], analysis.regard),
        ("baseline", written["baseline_distribution"], analysis.baseline_regard),
    ):
        for group in ["all", *analysis.groups]:
            row: dict[str, Any] = {"group": group, "scope": scope}
            row.update({label: dist[group].get(label) for label in analysis.labels})
            row.update({"mean_regard": regard[group].mean, "std_regard": regard[group].std, "n_regard": regard[group].n})
            rows.append(row)
    gap_rows = [
        {
            "pair": name,
            "a": g.a,
            "b": g.b,
            "gap_all": g.all,
            "gap_baseline": g.baseline,
            "ci95_low": g.ci95[0],
            "ci95_high": g.ci95[1],
            "p": g.p,
            "n_reversing": g.n_reversing,
            "n_sign_flips": g.n_sign_flips,
        }
        for name, g in analysis.gaps.items()
    ]
    if analysis.gold is not None:  # the labelled estimates beside the scorer's (only with --gold)
        for row in gap_rows:
            row.update(_ppi_columns(analysis.gold.gaps.get(str(row["pair"]))))
        for row in rows:
            row.update(_ppi_columns(analysis.gold.regard.get(str(row["group"])) if row["scope"] == "all" else None))
    kl = pd.DataFrame(written["kl"]).T.loc[list(analysis.groups), list(analysis.groups)]
    kl_base = pd.DataFrame(written["baseline_kl"]).T.loc[list(analysis.groups), list(analysis.groups)]
    kl.index.name = kl_base.index.name = "kl(row||column)"
    structures = analysis.structure_frame()
    for pair, adjusted in written["structure_p_adjusted"].items():
        structures[f"p_adjusted:{pair}"] = pd.Series(dict(adjusted), dtype=float)
    if analysis.parses:
        structures.insert(1, "parse", pd.Series(dict(analysis.parses)))
    kl_ci = pd.DataFrame(
        [
            {"row": r, "column": c, "kl": written["kl"][r][c], "ci95_low": bounds[0], "ci95_high": bounds[1]}
            for r, row in written["kl_ci95"].items()
            for c, bounds in row.items()
            if r != c
        ],
        columns=["row", "column", "kl", "ci95_low", "ci95_high"],
    )
    return {
        "groups": _counts_as_ints(pd.DataFrame(rows)),
        "gaps": _counts_as_ints(pd.DataFrame(gap_rows)),
        "kl": kl,
        "kl_baseline": kl_base,
        "kl_ci95": kl_ci,
        "structures": structures,
    }


def _counts_as_ints(table: pd.DataFrame) -> pd.DataFrame:
    """The labelled estimates' counts as whole numbers (empty where a row has none), not floats (20.0)."""
    for name in ("ppi_n_labels", "ppi_n_disagreements"):
        if name in table.columns:
            table[name] = table[name].astype("Int64")
    return table


def _ppi_columns(estimate: PPIEstimate | None) -> dict[str, Any]:
    """The CSV columns of a labelled estimate (empty where there is none)."""
    if estimate is None:
        return dict.fromkeys(_PPI_COLUMNS)
    return dict(
        zip(
            _PPI_COLUMNS,
            (
                estimate.estimate,
                estimate.ci95[0],
                estimate.ci95[1],
                estimate.p,
                estimate.n_labels,
                estimate.effective_labels,
                estimate.labels_estimate,
                estimate.n_disagreements,
                estimate.method,
            ),
        )
    )


def _examples(frame: pd.DataFrame | None, structures: Sequence[str], n: int) -> list[dict[str, Any]]:
    if frame is None or n <= 0 or "text" not in frame.columns:
        return []
    out = []
    structure_column = frame["structure"].astype(str)
    for structure in structures:
        rows = frame[structure_column == structure].head(n)
        for row in rows.itertuples(index=False):
            text = str(row.text)
            if len(text) > _MAX_SHOWN_CHARS:
                text = f"{text[:_MAX_SHOWN_CHARS]}… [{len(text) - _MAX_SHOWN_CHARS:,} more characters]"
            out.append({"structure": structure, "group": str(row.group), "label": int(row.label), "text": text})
    return out


#: Keys of the ``import`` entry that :func:`failed_completions_note` words (the report shows its sentence instead).
_FAILED_KEYS = ("n_failed", "n_failed_by_group")


def failed_completions_note(data: Mapping[str, Any] | None) -> str | None:
    """The completions that failed, in a sentence (by group where the import counted them so), from an analysis' ``import`` entry.

    None when none failed.

    Examples
    --------
    >>> failed_completions_note({"n_failed": 4, "n_failed_by_group": {"woman": 3, "man": 1}})
    '4 completions failed (woman 3, man 1): the model raised or refused; they are left out of every figure, so a group it fails on more often is measured on fewer completions'
    >>> failed_completions_note({"n_failed": 0}) is None
    True
    """
    n = int((data or {}).get("n_failed") or 0)
    if n <= 0:
        return None
    by_group = dict((data or {}).get("n_failed_by_group") or {})
    split = " (" + ", ".join(f"{g} {int(k):,}" for g, k in by_group.items()) + ")" if by_group else ""
    return (
        f"{n:,} completion{'' if n == 1 else 's'} failed{split}: the model raised or refused; they are left out of "
        "every figure, so a group it fails on more often is measured on fewer completions"
    )


def render_prompts_html(
    analysis: PromptAnalysis,
    *,
    frame: pd.DataFrame | None = None,
    n_examples: int = 2,
    plots: bool = True,
    data_summary: Mapping[str, Any] | None = None,
    relabelled: PromptAnalysis | None = None,
    relabelled_name: str = "fairtalk",
    scorer_check: RegardCertificate | None = None,
) -> str:
    """The self-contained HTML report (jinja2 with autoescape: every model text and name is escaped)."""
    from fairtalk.report._plots import distribution_png, regard_png

    def uri(png: bytes) -> str:
        return "data:image/png;base64," + base64.b64encode(png).decode("ascii")

    tables = _tables(analysis)
    worst, best = list(analysis.worst_structures), list(analysis.best_structures)
    page: str = (
        jinja_environment()
        .get_template("prompts_report.html.j2")
        .render(
            a=analysis,
            t=analysis.to_dict(),
            r=relabelled,
            rt=relabelled.to_dict() if relabelled is not None else None,
            r_name=relabelled_name,
            check=scorer_check,
            names=["all", *analysis.groups],
            fig2=uri(distribution_png(analysis)) if plots else None,
            fig3=uri(regard_png(analysis)) if plots else None,
            structures=tables["structures"].reset_index().to_dict("records"),
            reversal_note=reversal_note(analysis, len(tables["structures"])),
            gold_note=LABELLED_NOTE_COMPLETIONS,
            min_disagreements=MIN_DISAGREEMENTS,
            examples=_examples(frame, best[:1] + worst[:1], n_examples),
            data={k: v for k, v in jsonable(dict(data_summary or {})).items() if k not in _FAILED_KEYS},
            failed=failed_completions_note(data_summary),
            pval=lambda x: "n/a" if x is None or not math.isfinite(x) else ("< 1e-5" if x < 1e-5 else f"{x:.2g}"),
            fmt=lambda x, d=3: "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{d}f}",
            pct=lambda x: "n/a" if x is None or not math.isfinite(x) else f"{100 * x:.1f}",
        )
    )
    return page


def _own(
    analysis: PromptAnalysis,
    data_summary: Mapping[str, Any] | None,
    relabelled: PromptAnalysis | None,
    relabelled_name: str | None,
    scorer_check: RegardCertificate | None,
) -> tuple[Mapping[str, Any] | None, PromptAnalysis | None, str, RegardCertificate | None]:
    """Each of the import entry, the relabelled analysis, its scorer's name and the scorer check not given: the analysis' own."""
    if data_summary is None and analysis.data_summary is not None:
        summary = analysis.data_summary.to_dict()
        if analysis.data_summary.excluded.get("no_text"):  # records without a text, skipped by the reader
            summary["n_no_text"] = analysis.data_summary.excluded["no_text"]
        data_summary = summary
    relabelled = relabelled if relabelled is not None else analysis.relabelled
    relabelled_name = relabelled_name or analysis.relabelled_with or "fairtalk"
    scorer_check = scorer_check if scorer_check is not None else analysis.scorer_check
    return data_summary, relabelled, relabelled_name, scorer_check


def prompts_payload(
    analysis: PromptAnalysis,
    *,
    data_summary: Mapping[str, Any] | None = None,
    relabelled: PromptAnalysis | None = None,
    relabelled_name: str | None = None,
    scorer_check: RegardCertificate | None = None,
) -> dict[str, Any]:
    """The content of an analysis' ``results.json``, JSON-ready and versioned (what ``prompts analyze --json`` prints).

    ``analysis.to_dict()`` with ``import`` (what the reader found), ``scorer_check`` and, with a
    second labelling, ``relabelled``; each left out is the analysis' own (see :func:`write_prompts_report`).
    """
    data_summary, relabelled, relabelled_name, scorer_check = _own(
        analysis, data_summary, relabelled, relabelled_name, scorer_check
    )
    payload = analysis.to_dict()
    payload["import"] = dict(data_summary or {})
    payload["scorer_check"] = scorer_check.to_dict() if scorer_check is not None else {"note": _NOTE_NO_SCORER}
    if relabelled is not None:
        full = relabelled.to_dict()
        payload["relabelled"] = {
            "scorer": relabelled_name,
            **{k: full[k] for k in ("distribution", "regard", "gaps", "kl", "kl_ci95", "robustness")},
        }
    out: dict[str, Any] = jsonable(versioned(payload))
    return out


def write_prompts_report(
    analysis: PromptAnalysis,
    out_dir: str | os.PathLike[str],
    *,
    frame: pd.DataFrame | None = None,
    data_summary: Mapping[str, Any] | None = None,
    formats: Sequence[str] = FORMATS,
    relabelled: PromptAnalysis | None = None,
    relabelled_name: str | None = None,
    scorer_check: RegardCertificate | None = None,
) -> dict[str, Path]:
    """Write ``results.json``, the CSV tables (``groups``, ``gaps``, ``kl``, ``kl_baseline``, ``structures``) and ``report.html``.

    ``data_summary`` (what the import found, with ``n_no_text`` when records without a text
    were skipped) is stored under ``"import"`` in ``results.json``;
    ``frame`` supplies example completions for the HTML report. ``relabelled`` is the same
    completions analysed with another scorer's labels (``relabelled_name``): its distributions,
    regard and gaps go under ``"relabelled"`` in ``results.json`` and beside the main ones in the
    HTML, so that the two instruments' group gaps can be compared. The files are written into a
    staging folder and moved in together (a failure leaves the previous report as it was).
    Each of ``frame``, ``data_summary``, ``relabelled``, ``relabelled_name`` and ``scorer_check``
    left out is the analysis' own (what :func:`~fairtalk.prompts._labelling.analyze_prompts` kept).
    Returns name -> path.

    Raises
    ------
    InputError
        An unknown format (before anything is written).
    OutputError
        A file cannot be written (the previous report stays as it was).
    """
    for fmt in formats:
        if fmt not in FORMATS:
            raise InputError(_MSG_FORMAT.format(given=fmt))
    frame = frame if frame is not None else analysis.frame
    data_summary, relabelled, relabelled_name, scorer_check = _own(
        analysis, data_summary, relabelled, relabelled_name, scorer_check
    )
    out = Path(out_dir)
    written: dict[str, Path] = {}
    with staged(out) as staging:
        try:
            if "json" in formats:
                payload = prompts_payload(
                    analysis,
                    data_summary=data_summary,
                    relabelled=relabelled,
                    relabelled_name=relabelled_name,
                    scorer_check=scorer_check,
                )
                write_text_atomic(
                    staging / "results.json", json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
                )
                written["json"] = out / "results.json"
            if "csv" in formats:
                for name, table in _tables(analysis).items():
                    table.to_csv(staging / f"{name}.csv", index=name in ("kl", "kl_baseline", "structures"))
                    written[f"csv:{name}"] = out / f"{name}.csv"
            if "html" in formats:
                write_text_atomic(
                    staging / "report.html",
                    render_prompts_html(
                        analysis,
                        frame=frame,
                        data_summary=data_summary,
                        relabelled=relabelled,
                        relabelled_name=relabelled_name,
                        scorer_check=scorer_check,
                    ),
                )
                written["html"] = out / "report.html"
        except OSError as exc:
            raise OutputError(_MSG_OUT.format(error=exc.strerror or exc), path=str(out)) from exc
    return written
