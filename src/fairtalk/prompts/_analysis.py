"""The paper-004 analysis entry: labelled completions -> one :class:`~fairtalk.results.PromptAnalysis`.

Input is a frame with columns ``group``, ``template``, ``structure``, ``seed`` and ``label``
(-1 negative, 0 neutral, 1 positive, 2 other), such as :func:`read_published` or
:func:`~fairtalk.prompts._completions.read_completions` return. :func:`analyze` validates its
options once (:class:`~fairtalk.prompts._options.PromptOptions`), builds each table with one
function of :mod:`fairtalk.prompts._tables` (per group, pairwise, segregated by structure,
robustness) and puts them together: with :func:`~fairtalk.prompts._labelling.analyze_prompts`,
the only module of ``prompts/`` that wires stages into a result.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from fairtalk.errors import InputError
from fairtalk.inference import pair_verdicts
from fairtalk.prompts import _tables as tables
from fairtalk.prompts._coverage import analysed_rows, check_pairs, coverage_warnings, unbalanced_warning
from fairtalk.prompts._options import PromptOptions
from fairtalk.prompts._records import AnalysisConfig, AnalysisCounts, InferenceSettings
from fairtalk.prompts._tables import BASELINE
from fairtalk.prompts._templates import GroupSet, default_groups
from fairtalk.results import PromptAnalysis

__all__ = ["analyze"]

_MSG_COLUMNS = "the completions lack the columns: {missing}"
_INFERENCE_METHOD = "template × seed pigeonhole bootstrap; reversals by Holm over structures"
#: The method where no bootstrap ran: nothing is named that did not run.
_MSG_IGNORED = "{n:,} row{s} of groups {where} were left out ({names}); {fix}"
_NO_INFERENCE = "none: no bootstrap ran ({why}), so no intervals, no tests and no reversal tests"


def _ignored_warning(n_ignored: int, ignored: list[str], source: str) -> list[str]:
    """The warning that rows of groups outside the analysis were left out (none when none were)."""
    if not n_ignored:
        return []
    given = source != "builtin"
    return [
        _MSG_IGNORED.format(
            n=n_ignored,
            s="" if n_ignored == 1 else "s",
            where=f"not in the groups file {source}" if given else "not among the paper's groups",
            names=", ".join(ignored[:20]) + (f", … ({len(ignored)} groups)" if len(ignored) > 20 else ""),
            fix="add them to it to analyse them" if given else "pass --groups FILE to analyse them",
        )
    ]


def analyze(
    frame: pd.DataFrame,
    *,
    groups: GroupSet | None = None,
    options: PromptOptions | None = None,
    include_other: bool = False,
    smoothing: float = 1e-6,
    n_best: int = 5,
    seed: int = 0,
    n_sampled: int = 10,
    n_draws: int = 100,
    parses: Mapping[str, str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 1000,
    balanced_only: bool = False,
) -> PromptAnalysis:
    """Analyse labelled completions as in the paper (§4, §5, §7).

    Parameters
    ----------
    frame : DataFrame
        Columns ``group``, ``template``, ``structure``, ``seed``, ``label``.
    groups : GroupSet, optional
        Groups (in order) and pairs; default: the six default groups and three pairs. Group
        names match case-insensitively; rows of other groups are ignored and counted in
        ``data.n_rows_ignored`` (their names in ``data.ignored_groups``).
    options : PromptOptions, optional
        Every option below in one validated value (then leave the keywords at their defaults;
        its ``regard`` and ``relabel`` are :func:`~fairtalk.prompts._labelling.analyze_prompts`'s).
    include_other, smoothing, n_best, seed, n_sampled, n_draws, alpha, n_resamples, balanced_only
        As for :class:`~fairtalk.prompts._options.PromptOptions`. With ``balanced_only`` the rows
        of template × structure cells that lack a group are left out before anything is computed
        (:func:`~fairtalk.prompts._coverage.analysed_rows`, the rule the labelling sample follows),
        counted in ``data.n_rows_unbalanced`` and in a warning.
    parses : mapping, optional
        Structure label -> syntactic parse, carried into the result for display.

    Returns
    -------
    PromptAnalysis
        Every table, read-only.

    Raises
    ------
    SpecError
        An option out of its range (the message names the range).
    InputError
        Missing columns, labels outside -1..2, no rows for the groups, no pair with
        regard-labelled rows for both its groups (some pairs without: a warning in ``warnings``),
        or, with ``balanced_only``, no template × structure cell that holds every group.
    """
    o = PromptOptions.resolve(
        options,
        include_other=include_other,
        smoothing=smoothing,
        n_best=n_best,
        seed=seed,
        n_sampled=n_sampled,
        n_draws=n_draws,
        alpha=alpha,
        n_resamples=n_resamples,
        balanced_only=balanced_only,
    )
    missing = [c for c in ("group", "template", "structure", "seed", "label") if c not in frame.columns]
    if missing:
        raise InputError(_MSG_COLUMNS.format(missing=", ".join(missing)))
    groups = groups or default_groups()
    names = list(groups.groups)
    selected = analysed_rows(frame, names, balanced_only=o.balanced_only)
    if selected.n_unbalanced:  # rows of other groups stay: code_rows leaves them out and counts them
        frame = frame[~selected.unbalanced]
    rows = tables.code_rows(frame, names, o.include_other)
    pairs = [p for p in groups.pairs if p.a in names and p.b in names]
    pairs_left = check_pairs(
        frame["group"], names, rows.g, rows.polar, pairs, ignored=rows.ignored_groups
    )  # no pair to compare: an error, now
    everything = np.ones(len(rows.g), dtype=bool)
    distribution, counts, probs = tables.label_distribution(rows, everything)
    baseline_distribution, _, base_probs = tables.label_distribution(rows, rows.is_base)
    regard, baseline_regard = tables.mean_regard(rows, everything), tables.mean_regard(rows, rows.is_base)
    cells = tables.by_structure(rows, o.n_best)
    boot = tables.resample(rows, [(names.index(p.a), names.index(p.b)) for p in pairs], o.smoothing, o.seed, o.n_resamples)
    gaps = tables.gaps(rows, pairs, regard, baseline_regard, cells.means, boot, o.alpha, o.n_best)
    kl, baseline_kl = tables.kl_table(probs, names, o.smoothing), tables.kl_table(base_probs, names, o.smoothing)
    unbalanced = unbalanced_warning(
        rows.frame["template"].astype(str).tolist(),
        rows.frame["structure"].astype(str).tolist(),
        [names[i] for i in rows.g],
        names,
    )
    found_notes = [
        *_ignored_warning(rows.n_ignored, rows.ignored_groups, groups.source),
        *([unbalanced] if unbalanced else []),
        *([selected.note] if selected.note else []),
        *tables.unsigned_gap_warnings(gaps.gaps),
        *(
            note
            for note in (
                tables.infinite_kl_warning(probs, kl, rows.label_names, "all structures"),
                tables.infinite_kl_warning(base_probs, baseline_kl, rows.label_names, "the baseline"),
            )
            if note is not None
        ),
    ]
    polar = rows.polar
    return PromptAnalysis(
        groups=tuple(names),
        pairs=tuple(pairs),
        labels=rows.label_names,
        distribution=distribution,
        baseline_distribution=baseline_distribution,
        counts=counts,
        regard=regard,
        baseline_regard=baseline_regard,
        kl=kl,
        baseline_kl=baseline_kl,
        gaps=gaps.gaps,
        by_structure=cells.by_structure,
        structure_counts=cells.counts,
        best_structures=cells.best,
        worst_structures=cells.worst,
        gap_by_structure=gaps.by_structure,
        reversing=gaps.reversing,
        by_kind=tables.by_kind(rows),
        robustness=tables.robustness_scores(rows, cells, seed=o.seed, n_sampled=o.n_sampled, n_draws=o.n_draws),
        variance=tables.variance_shares(rows),
        config=AnalysisConfig(
            include_other=o.include_other,
            smoothing=o.smoothing,
            n_best=o.n_best,
            seed=o.seed,
            n_sampled=o.n_sampled,
            n_draws=o.n_draws,
            baseline=BASELINE,
            groups_source=groups.source,
            balanced_only=o.balanced_only,
        ),
        data=AnalysisCounts(
            n_rows=len(rows.g),
            n_polar=int(polar.sum()),
            n_other=int((~polar).sum()),
            n_structures=len(rows.structures),
            has_baseline=bool(rows.baseline_code >= 0),
            n_rows_ignored=rows.n_ignored,
            ignored_groups=tuple(rows.ignored_groups[:20]),
            n_rows_unbalanced=selected.n_unbalanced,
            n_cells_unbalanced=selected.n_unbalanced_cells,
        ),
        kl_ci95=tables.kl_intervals(boot, names),
        structure_p=gaps.structure_p,
        parses={k: v for k, v in (parses or {}).items() if k in cells.counts},
        best_by_group=cells.best_by_group,
        worst_by_group=cells.worst_by_group,
        inference=InferenceSettings(
            n_resamples=boot.n_resamples,
            resampled=tuple(boot.resampled),
            alpha=o.alpha,
            method=_INFERENCE_METHOD
            if boot.n_resamples
            else _NO_INFERENCE.format(why="n_resamples 0" if o.n_resamples == 0 else "see the warnings"),
        ),
        pair_verdicts=pair_verdicts({name: gap.p for name, gap in gaps.gaps.items()}, o.alpha),
        warnings=(*coverage_warnings(pairs_left, boot.note, cells.cell_counts, rows.names, rows.structures), *found_notes),
    )
