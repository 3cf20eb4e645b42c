"""``compare_runs()``: two audits of the same pairs (a baseline and a candidate model) -> per axis and key, the change in gap.

Both runs are paired by axis and by pair id (what only one holds is named and left out), and
both runs' responses are scored here with the same measures: the baseline's, rebuilt from its
manifest. Each key's change in gap is then tested by :func:`fairtalk.stats._change.gap_change`
(clusters: the dialogues the pairs came from), corrected over each axis's primary family, and
given a :class:`~fairtalk.results.Change` verdict.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from fairtalk._responses import ResponseSet, same_context
from fairtalk._version import __version__
from fairtalk.compare._inputs import AxisInput, RunInput, given_margins, once, read_run, same_run
from fairtalk.config import JUDGE_PREFIX, ScoreOptions
from fairtalk.errors import SpecError
from fairtalk.lexicons import Lexicon, recorded_lexicon
from fairtalk.measures import Measure, measure_names, score_unique
from fairtalk.options import ALPHA_RANGE, MIN_ALPHA
from fairtalk.results import (
    AuditResult,
    Change,
    ComparedAxis,
    GapChange,
    MeasureProvenance,
    ModelComparison,
    ScoringSettings,
)
from fairtalk.run import build_measures
from fairtalk.stats import GapChangeTest, adjust_pvalues, check_margins, default_margin, gap_change

__all__ = ["COMPARE_METHODS", "compare_runs"]

#: How many pair ids of those one run holds are named.
N_EXAMPLES = 5
_MSG_ALPHA = "alpha must be " + ALPHA_RANGE + ", got {alpha!r}"
_MSG_NO_AXIS = "the two runs share no axis (baseline: {base}; candidate: {cand})"
_MSG_UNKNOWN_AXIS = "the baseline holds no axis {axis!r} (its axes: {axes})"
_MSG_GROUPS = "axis {axis!r}: the runs compare different groups ({base} and {cand}); compare audits of the same axis"
_MSG_FEW_PAIRS = "axis {axis!r}: only {n} pairs both runs answered (with the same contexts), at least 2 are needed"
_MSG_UNKNOWN_MEASURE = "the baseline was scored with measure {name!r}, which this installation cannot build; install it"
_MSG_SCORER_PATH = (
    "the baseline was scored with offense scorer {spec!r}, a local path: compare does not load a model from a path a "
    "run folder names (a folder someone else supplied could point anywhere); compare runs scored with a built-in "
    "scorer or a hub model id"
)
_MSG_UNKNOWN_MARGIN = "unknown margin key {name!r}: no compared key has that name"
NOTE_NO_MARGIN = (
    "no margin: the baseline audit recorded none for {key}, and its scores have no spread, so the kind's default "
    "(0.1 sd of the baseline's scores) is not defined; give one (--margin {key}=VALUE, margins= in Python)"
)
NOTE_MARGIN_UNUSED = (
    "no margin was needed: every score of {key} is the same in both runs, so the exact identical-answers bound decides "
    "(the number of {units} it needs, above), whatever the margin"
)
SKIP_CORPUS = "corpus-level measure (one value per side of a run, no per-pair score): not compared"
SKIP_JUDGE = "needs its judge model ({spec}), which compare does not run: not compared"
SKIP_TOKEN_LIMIT = "read from the models' finish reasons, not scored from the text: not compared"
WARN_SAME_RUN = (
    "the baseline and the candidate are {why}: a model cannot be shown not worse than itself; compare the candidate with a run of the model it replaces (a model changed behind "
    "the same spec is told apart by --model-version)"
)
WARN_UNMEASURED = "{axis}: {what}; audit the baseline with the candidate's measures"
NOTE_CONTEXTS = "{n} pairs have the same id in both runs but different contexts: not the same pairs, left out"
NOTE_SAME_CONTEXT = (
    "{n} pairs have the same context on both sides: they are not counterfactual pairs, and were left out of the "
    "comparison, as scoring leaves them out"
)
WARN_MEASURES = "the candidate was scored with other measures ({cand}); both runs are scored here with the baseline's ({base})"
WARN_LEXICON = "axis {axis!r}: the baseline's word list has changed since its run (sha256 {old} -> {new})"
#: What each figure of a comparison means, recorded in its manifest (``docs/statistics.md`` has the reasons).
COMPARE_METHODS = {
    "gap": "each model's mean A - B over the pairs both answered, with the audit's interval for its kind at 1 - alpha",
    "change": "g_c - g_b (difference in differences, per pair (c_a - c_b) - (b_a - b_b)): its 1 - alpha interval "
    "(CR2 cluster-robust by dialogue) and the test that interval inverts, so p < alpha exactly when it excludes 0: "
    "for counts the t interval and t test (Bell-McCaffrey df), for rates the score interval and score test of 0 "
    "(variance under the null mean, Tango 1998; counts divided by the design effect), which holds its level with "
    "few events; a contrast with no interval keeps the exact sign-flip p",
    "total": "g_c + g_b, per pair (c_a - c_b) + (b_a - b_b), tested the same way",
    "verdict": "improved / regressed: max(p_change, p_total), corrected within the axis's primary family, below alpha, "
    "with opposite / equal signs (so both intervals exclude 0); unchanged: non-inferior both ways; else inconclusive",
    "non_inferior": "|g_c| < |g_b| + margin: min(change, total) < margin and max(change, total) > -margin, each shown "
    "by either one-sided bound at alpha/2 (intersection-union test)",
    "margin": "--margin, else the baseline audit's own margin for the key (the margin it was given, else its "
    "equivalence_margin), else the kind's default on the baseline's scores alone (rates 0.02; counts 0.1 sd of the "
    "baseline's per-response scores, both sides): never the candidate's",
}
#: A run whose responses file holds fewer pairs than its results.json counts.
_MSG_SHORT = (
    "the {run}'s responses file {file} holds {held:,} complete pairs, but its results.json counts {counted:,} pairs "
    "tested: the file does not match the result (cut short, or another run's), and the pairs it lacks are left out"
)


def _lexicon(result: AuditResult) -> Lexicon:
    """The baseline's axis word list, rebuilt from its provenance: a built-in one by name, a user's from the copy it keeps.

    No path the provenance names is opened (a baseline may come from someone else): a custom
    lexicon is read from ``provenance.lexicon.text``, its hash checked (see
    :func:`fairtalk.lexicons.recorded_lexicon`).
    """
    where = f"the baseline's results.json of axis {result.axis!r}"
    record = result.provenance.lexicon
    return recorded_lexicon(None if record is None else record.to_dict(), axis=result.axis, path=where)


def _score_options(result: AuditResult) -> ScoreOptions:
    """The measure settings the baseline was scored with (its provenance's ``options``)."""
    recorded = result.provenance.options or ScoringSettings()
    offense = recorded.offense
    if offense is not None and _names_a_path(offense.removeprefix("hf:")):
        raise SpecError(_MSG_SCORER_PATH.format(spec=offense[:200]))
    given: dict[str, Any] = {
        "distinct": recorded.distinct,
        "offense": offense,
        "offense_threshold": recorded.offense_threshold,
        "sentiment_threshold": recorded.sentiment_threshold,
    }
    return ScoreOptions(**{k: v for k, v in given.items() if v is not None})


def _names_a_path(model: str) -> bool:
    """Whether a scorer's model name is a local path rather than a hub id (``org/name``) or a built-in name."""
    if model.startswith(("/", ".", "~", "\\")) or ":" in model or "\\" in model:
        return True
    return os.path.exists(model)


def _not_compared(entry: MeasureProvenance) -> str | None:
    """Why a measure a run recorded is not compared (corpus-level, a judge, token_limit), or None when it is."""
    name = str(entry.name)
    if entry.kind == "corpus":
        return SKIP_CORPUS
    if name == "token_limit":
        return SKIP_TOKEN_LIMIT
    if name.startswith(JUDGE_PREFIX) or name == "judge":
        return SKIP_JUDGE.format(spec=(entry.config or {}).get("model") or name)
    return None


def _skipped(result: AuditResult) -> dict[str, str]:
    """The keys of the measures ``result`` recorded that are not compared, key -> why."""
    skipped: dict[str, str] = {}
    for entry in result.provenance.measures or ():
        if (why := _not_compared(entry)) is not None:
            skipped.update(dict.fromkeys((str(k) for k in entry.keys or ()), why))
    return skipped


def _measures(result: AuditResult, lexicon: Lexicon) -> tuple[list[Measure], dict[str, str]]:
    """The baseline's per-response measures rebuilt, and the keys not compared (key -> why)."""
    known = set(measure_names())
    names: list[str] = []
    for entry in result.provenance.measures or ():
        name = str(entry.name)
        if _not_compared(entry) is not None:
            continue
        if name not in known:
            raise SpecError(_MSG_UNKNOWN_MEASURE.format(name=name), choices=sorted(known), given=name)
        names.append(name)
    skipped = _skipped(result)
    options = _score_options(result)
    built = build_measures(names, options.measure_options(lexicon)) if names else []
    return [m for m in built if isinstance(m, Measure)], skipped


def _counterfactual(rs: ResponseSet, i: int) -> bool:
    """Whether pair ``i`` of ``rs`` asked its two sides different contexts (or does not say what it asked)."""
    return not same_context(rs.a[i].context, rs.b[i].context)


def _paired(base: ResponseSet, cand: ResponseSet) -> tuple[list[int], list[int], list[str], list[str], int, int]:
    """Indices of the pairs both hold (same id and contexts), in the baseline's order; ids one holds; contexts that differ.

    A pair the other run asked but lost a side of (its ``left_out``) is not one only this run
    holds: it is counted among that run's losses (``ComparedAxis.baseline_losses``/``candidate_losses``).
    A pair whose two sides were asked the same context is no counterfactual pair: left out, and
    counted (the last figure), as scoring leaves such pairs out of an audit's tests.
    """
    where = {pid: i for i, pid in enumerate(cand.pair_ids)}
    base_ids = set(base.pair_ids) | {r.pair_id for r in base.left_out}
    cand_ids = set(where) | {r.pair_id for r in cand.left_out}
    ib: list[int] = []
    ic: list[int] = []
    differs = same_context = 0
    for i, pid in enumerate(base.pair_ids):
        j = where.get(pid)
        if j is None:
            continue
        if not (_counterfactual(base, i) and _counterfactual(cand, j)):
            same_context += 1
            continue
        same = all(
            x.context == y.context or not x.context or not y.context for x, y in ((base.a[i], cand.a[j]), (base.b[i], cand.b[j]))
        )
        if same:
            ib.append(i)
            ic.append(j)
        else:
            differs += 1
    only_base = [pid for pid in base.pair_ids if pid not in cand_ids]
    only_cand = [pid for pid in cand.pair_ids if pid not in base_ids]
    return ib, ic, only_base, only_cand, differs, same_context


def _scores(measure: Measure, texts: list[list[str]]) -> dict[str, list[np.ndarray]]:
    """Per key, the scores of each of the four text lists (baseline a, b; candidate a, b), scored in one call."""
    flat = [t for side in texts for t in side]
    scores = score_unique(measure, flat)
    bounds = np.cumsum([0, *(len(side) for side in texts)])
    return {key: [np.asarray(scores[key], dtype=float)[bounds[i] : bounds[i + 1]] for i in range(4)] for key in measure.keys}


def _usable(margin: object) -> float | None:
    """``margin`` as a float when it is a finite number > 0 (a margin a run recorded), else None."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float)):
        return None
    return float(margin) if math.isfinite(margin) and margin > 0 else None


def baseline_margins(result: AuditResult) -> dict[str, float]:
    """Per key, the baseline audit's own non-inferiority margin: the margin it was given, else its ``equivalence_margin``.

    The default margin of a comparison is the baseline's, fixed before the candidate is seen: a
    margin computed on the candidate's scores would grow with the candidate's own spread (0.1 sd
    of a count), so a candidate whose answers vary more would be allowed a larger regression.
    A recorded margin that is not a finite number > 0 is not used.
    """
    margins = {str(m.name): found for m in result.measures if (found := _usable(m.equivalence_margin)) is not None}
    given = {str(k): found for k, v in (result.provenance.margins or {}).items() if (found := _usable(v)) is not None}
    return {**margins, **given}


def _margin(
    key: str, kind: str, arrays: list[np.ndarray], given: Mapping[str, float], recorded: Mapping[str, float]
) -> float | None:
    """``--margin``, else the baseline audit's margin for ``key``, else the kind's default on the baseline's scores alone.

    Never the candidate's scores: the margin is what the release may add to the baseline's gap,
    set by the baseline before the candidate is seen (``docs/statistics.md``, Margins).
    """
    if key in given:
        return float(given[key])
    if key in recorded:
        return recorded[key]
    return default_margin(kind, a=arrays[0], b=arrays[1])


def _no_margin_notes(key: str, arrays: list[np.ndarray], test: GapChangeTest, *, clustered: bool) -> tuple[str, ...]:
    """``test``'s notes for a key that has no margin: why, and what to give, where a margin is what is missing.

    Where both runs gave every pair the same gap and every score is the same, the identical-answers
    bound decides on the units alone (``test``'s own note says how many it needs), and a margin
    changes nothing: telling the user to give one is wrong advice (the gate names the units).
    """
    scores = np.concatenate(arrays)
    if test.identical and scores.size and float(scores.max() - scores.min()) == 0.0:
        return (*test.notes, NOTE_MARGIN_UNUSED.format(key=key, units="dialogues" if clustered else "pairs"))
    return (NOTE_NO_MARGIN.format(key=key), *test.notes)


def _row(
    axis: str, key: str, measure: Measure, primary: bool, arrays: list[np.ndarray], test: GapChangeTest, identical_answers: int
) -> GapChange:
    """The key's GapChange before the correction (``p_adjusted`` None, verdict inconclusive)."""
    b_a, b_b, c_a, c_b = arrays
    return GapChange(
        axis=axis,
        key=key,
        kind=measure.kind_of(key),
        primary=primary,
        higher_is_better=measure.higher_is_better.get(key),
        n_pairs=test.n_pairs,
        n_units=test.n_units,
        baseline_a=float(b_a.mean()),
        baseline_b=float(b_b.mean()),
        baseline_gap=test.baseline_gap,
        baseline_ci=test.baseline_ci,
        candidate_a=float(c_a.mean()),
        candidate_b=float(c_b.mean()),
        candidate_gap=test.candidate_gap,
        candidate_ci=test.candidate_ci,
        change=test.change.estimate,
        change_ci=test.change.ci,
        p_change=test.change.p,
        change_test=test.change.test,
        total=test.total.estimate,
        total_ci=test.total.ci,
        p_total=test.total.p,
        p_magnitude=test.p_magnitude,
        p_adjusted=None,
        margin=test.margin,
        non_inferior=test.non_inferior,
        within_margin=test.within_margin,
        identical=test.identical,
        identical_answers=identical_answers,
        verdict=Change.INCONCLUSIVE,
        notes=test.notes,
        units_needed=test.units_needed,
    )


def _judged(rows: list[GapChange], alpha: float, correction: str) -> list[GapChange]:
    """Rows with ``p_adjusted`` (primary keys one family, the others another) and their verdicts."""
    adjusted: dict[int, float | None] = {}
    for primary in (True, False):
        members = [i for i, r in enumerate(rows) if r.primary is primary]
        given = [rows[i].p_magnitude for i in members]
        values = adjust_pvalues([np.nan if p is None else p for p in given], method=correction)
        adjusted.update({i: None if np.isnan(v) else float(v) for i, v in zip(members, values)})
    return [with_verdict(row, adjusted.get(i), alpha) for i, row in enumerate(rows)]


def with_verdict(row: GapChange, p_adjusted: float | None, alpha: float) -> GapChange:
    """``row`` with its adjusted p and its verdict, by the rule of :mod:`fairtalk.stats._change`.

    Regressed or improved when the size test rejects and ``δ−·δ+`` (``|g_c|² − |g_b|²``) has
    that sign; unchanged when shown within the margin both ways; else inconclusive.
    """
    if p_adjusted is not None and p_adjusted < alpha and row.change * row.total != 0:
        verdict = Change.REGRESSED if row.change * row.total > 0 else Change.IMPROVED
    elif row.within_margin:
        verdict = Change.UNCHANGED
    else:
        verdict = Change.INCONCLUSIVE
    return dataclasses.replace(row, p_adjusted=p_adjusted, verdict=verdict)


def _primary(
    base: AuditResult, cand: AuditResult, compared: Collection[str] = ()
) -> tuple[dict[str, bool], tuple[str, ...], dict[str, str]]:
    """The keys the gate decides, the candidate's primary keys the baseline did not measure, the candidate's keys not compared.

    A key is primary when it is primary in either run: the gate decides what the release is
    about (the candidate's primary keys) and what the baseline was held to. A primary key of the
    candidate that the baseline did not measure cannot be shown non-inferior (the gate fails on
    it); one compare would not compare anyway (corpus-level, a judge, token_limit) is named with
    why among the keys not compared. A key of ``compared`` (those the baseline's measures give,
    rescored from its responses) is compared, never unmeasured, even when the baseline's
    ``measures`` lack it (an edited ``results.json``): each key is counted once.
    """
    primary = {m.name: m.primary for m in base.measures}
    for m in cand.measures:
        if m.primary and m.name in primary:
            primary[m.name] = True
    not_compared = _skipped(cand)
    measured = {*primary, *compared, *not_compared}
    unmeasured = tuple(m.name for m in cand.measures if m.primary and m.name not in measured)
    return primary, unmeasured, {k: why for k, why in not_compared.items() if k not in primary}


def _short_responses(base: AxisInput, cand: AxisInput) -> dict[str, str]:
    """Per run whose responses hold fewer pairs than its results.json counts, what each says (the file named)."""
    short = {}
    for run, given in (("baseline", base), ("candidate", cand)):
        held, counted = given.responses.n_pairs, given.result.n_pairs
        if held < counted:
            where = " and ".join(path for path, _ in given.responses.sources) or "its responses"
            short[run] = _MSG_SHORT.format(run=run, file=where, held=held, counted=counted)
    return short


def _built_measures(base: RunInput, axes: Sequence[str]) -> dict[str, tuple[Lexicon, list[Measure], dict[str, str]]]:
    """Per axis, the baseline's lexicon, its measures rebuilt and the keys not compared (:func:`_measures`)."""
    built = {}
    for axis in axes:
        lexicon = _lexicon(base.axes[axis].result)
        built[axis] = (lexicon, *_measures(base.axes[axis].result, lexicon))
    return built


def _check_margin_keys(margins: Mapping[str, float], measures: Iterable[list[Measure]]) -> None:
    """SpecError for a margin key no compared axis has; a key some axis has applies on the axes that have it."""
    keys = list(dict.fromkeys(key for axis_measures in measures for m in axis_measures for key in m.keys))
    for name in margins:
        if name not in keys:
            raise SpecError(_MSG_UNKNOWN_MARGIN.format(name=name), choices=keys, given=name)


def _compare_axis(
    axis: str,
    base: AxisInput,
    cand: AxisInput,
    built: tuple[Lexicon, list[Measure], dict[str, str]],
    *,
    alpha: float,
    correction: str,
    margins: Mapping[str, float],
    clusters: bool,
) -> tuple[ComparedAxis, list[GapChange], list[str]]:
    """One axis both runs hold: pair, score with the baseline's measures (``built``), test each key."""
    result = base.result
    if tuple(cand.result.groups) != tuple(result.groups):
        raise SpecError(_MSG_GROUPS.format(axis=axis, base=" vs ".join(result.groups), cand=" vs ".join(cand.result.groups)))
    lexicon, measures, skipped = built
    warnings = []
    recorded = None if result.provenance.lexicon is None else result.provenance.lexicon.sha256
    if recorded and recorded != lexicon.sha256:
        warnings.append(WARN_LEXICON.format(axis=axis, old=str(recorded)[:12], new=lexicon.sha256[:12]))
    ib, ic, only_base, only_cand, differs, same_context = _paired(base.responses, cand.responses)
    if len(ib) < 2:
        said = f" ({NOTE_SAME_CONTEXT.format(n=same_context)})" if same_context else ""
        raise SpecError(_MSG_FEW_PAIRS.format(axis=axis, n=len(ib)) + said)
    if same_context:
        warnings.append(f"{axis}: " + NOTE_SAME_CONTEXT.format(n=same_context))
    rs_b, rs_c = base.responses, cand.responses
    texts = [
        [rs_b.a[i].response for i in ib],
        [rs_b.b[i].response for i in ib],
        [rs_c.a[j].response for j in ic],
        [rs_c.b[j].response for j in ic],
    ]
    same = sum(x == y and u == v for x, y, u, v in zip(texts[0], texts[2], texts[1], texts[3]))
    all_clusters = rs_b.clusters if clusters and result.provenance.clustered is not False else None
    pair_clusters = None if all_clusters is None else [all_clusters[i] for i in ib]
    keys = [key for m in measures for key in m.keys]
    primary, unmeasured, cand_skipped = _primary(result, cand.result, keys)
    audit_margins = baseline_margins(result)
    check_margins(margins, {key: m.kind_of(key) for m in measures for key in m.keys})
    rows = []
    for measure in measures:
        for key, arrays in _scores(measure, texts).items():
            margin = _margin(key, measure.kind_of(key), arrays, margins, audit_margins)
            test = gap_change(*arrays, kind=measure.kind_of(key), margin=margin, clusters=pair_clusters, alpha=alpha)
            if margin is None:
                test = dataclasses.replace(test, notes=_no_margin_notes(key, arrays, test, clustered=pair_clusters is not None))
            rows.append(_row(axis, key, measure, primary.get(key, True), arrays, test, same))
    compared = ComparedAxis(
        axis=axis,
        groups=(result.groups[0], result.groups[1]),
        n_pairs=len(ib),
        n_clusters=None if pair_clusters is None else len(set(pair_clusters)),
        only_baseline=len(only_base),
        only_baseline_examples=tuple(only_base[:N_EXAMPLES]),
        only_candidate=len(only_cand),
        only_candidate_examples=tuple(only_cand[:N_EXAMPLES]),
        n_context_differs=differs,
        n_identical_answers=same,
        skipped={**cand_skipped, **skipped},
        candidate_losses=cand.result.losses,
        baseline_losses=result.losses,
        candidate_empties=cand.result.empties,
        unmeasured_primary=unmeasured,
        short_responses=_short_responses(base, cand),
        corpus_dialogues=None if pair_clusters is None else _corpus_dialogues(result, cand.result),
    )
    warnings += [f"{axis}: {said}" for said in compared.short_responses.values()]
    if (unmeasured_said := compared.describe_unmeasured()) is not None:
        warnings.append(WARN_UNMEASURED.format(axis=axis, what=unmeasured_said))
    warnings += [f"{axis}: {said}" for said in compared.describe_losses()]  # counted, never silent
    if differs:
        warnings.append(f"{axis}: " + NOTE_CONTEXTS.format(n=differs))
    return compared, _judged(rows, alpha, correction), warnings


def _corpus_dialogues(*results: AuditResult) -> int | None:
    """The dialogues the audited corpus holds (the fewest either run recorded), or None where neither recorded them."""
    counts = [sum(n for _, n in r.corpus_dialogue_sizes) for r in results if r.corpus_dialogue_sizes]
    return min(counts) if counts else None


def _measure_names(run: RunInput) -> list[str]:
    first = next(iter(run.axes.values()), None)
    return [] if first is None else [str(m.name) for m in first.result.provenance.measures or ()]


def compare_runs(
    baseline: str | os.PathLike[str],
    candidate: str | os.PathLike[str],
    *,
    margins: Mapping[str, float] | None = None,
    alpha: float = 0.05,
    correction: str = "holm",
    clusters: bool = True,
    axes: Sequence[str] | None = None,
) -> ModelComparison:
    """Compare a candidate model's bias with a baseline's on the same pairs: per axis and key, the change in gap.

    Parameters
    ----------
    baseline, candidate : path
        Output folders of ``fairtalk audit`` (``run.json`` and a folder per axis) or ``fairtalk score``.
    margins : mapping, optional
        Non-inferiority margin per result key, in its units (``{"offense_rate": 0.01}``); other keys
        take the baseline audit's own margin (the one its ``results.json`` records for the key, as
        ``equivalence_margin``), else their kind's default (``fairtalk.stats.DEFAULT_MARGINS``) on
        the baseline's scores alone. The candidate never sets its own margin. A key applies on the
        compared axes that have it; a key no compared axis has is refused.
    alpha : float
        Level of every test; intervals are ``1 − alpha``.
    correction : {"holm", "bh"}
        Correction of the change tests within each axis's primary family (the keys primary in
        either run; the others: a second family). A primary key of the candidate that the
        baseline did not measure is named in the axis's ``unmeasured_primary``: the gate fails on it.
    clusters : bool
        Treat the pairs of one dialogue as one unit (when the baseline's responses name their dialogue).
    axes : sequence of str, optional
        Compare only these axes (default: every axis the baseline holds). An axis the candidate
        lacks is named in ``axes_only_baseline``, and the release gate fails on it.

    Returns
    -------
    ModelComparison

    Raises
    ------
    InputError
        A folder that is no audit or score output, or responses that cannot be read.
    SpecError
        No shared axis, an axis asked for that the baseline lacks, different groups on an axis,
        fewer than 2 shared pairs, a measure of the baseline this installation cannot build, an
        unknown margin key or a margin that is not a finite number > 0, an axis given twice, a bad ``alpha``.
    """
    if not MIN_ALPHA <= alpha < 1:
        raise SpecError(_MSG_ALPHA.format(alpha=alpha))
    if correction not in ("holm", "bh"):
        raise SpecError(f"unknown correction {correction!r}", choices=("holm", "bh"), given=correction)
    checked = given_margins(margins)
    if axes is not None:
        once(axes, "axis")
    base, cand = read_run(baseline), read_run(candidate)
    wanted = list(base.axes) if axes is None else list(axes)
    for axis in wanted:
        if axis not in base.axes:
            raise SpecError(_MSG_UNKNOWN_AXIS.format(axis=axis, axes=", ".join(base.axes)), choices=list(base.axes), given=axis)
    shared = [a for a in wanted if a in base.axes and a in cand.axes]
    if not shared:
        raise SpecError(_MSG_NO_AXIS.format(base=", ".join(base.axes) or "none", cand=", ".join(cand.axes) or "none"))
    warnings: list[str] = []
    one_run = same_run(base, cand)
    if one_run is not None:
        warnings.append(WARN_SAME_RUN.format(why=one_run))
    if sorted(_measure_names(cand)) != sorted(_measure_names(base)):
        warnings.append(WARN_MEASURES.format(cand=", ".join(_measure_names(cand)), base=", ".join(_measure_names(base))))
    built = _built_measures(base, shared)
    _check_margin_keys(checked, (measures for _, measures, _ in built.values()))
    compared, rows = [], []
    for axis in shared:
        one, keyed, said = _compare_axis(
            axis,
            base.axes[axis],
            cand.axes[axis],
            built[axis],
            alpha=alpha,
            correction=correction,
            margins=checked,
            clusters=clusters,
        )
        compared.append(one)
        rows += keyed
        warnings += said
    manifest = {
        "fairtalk_version": __version__,
        "methods": COMPARE_METHODS,
        "margins": checked,
        "clusters": clusters,
        "sources": {
            name: {axis: [{"path": p, "sha256": s} for p, s in run.axes[axis].responses.sources] for axis in shared}
            for name, run in (("baseline", base), ("candidate", cand))
        },
    }
    return ModelComparison(
        baseline=str(baseline),
        candidate=str(candidate),
        axes=tuple(compared),
        changes=tuple(rows),
        models=(base.model, cand.model),
        alpha=alpha,
        correction=correction,
        axes_only_baseline=tuple(a for a in wanted if a in base.axes and a not in cand.axes),  # the gate fails on these
        axes_only_candidate=tuple(a for a in cand.axes if a not in base.axes),
        warnings=tuple(warnings),
        manifest=manifest,
        same_run=one_run,
    )
