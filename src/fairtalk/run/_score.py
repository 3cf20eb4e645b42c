"""``score()``: responses to parallel pairs -> measures -> paired stats -> an ``AuditResult``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np

from fairtalk._responses import (
    SAME_CONTEXT_DROPPED_KEY,
    ResponseSet,
    check_axis,
    prompt_cuts,
    read_responses,
    response_contexts,
    response_texts,
    responses_from_texts,
    same_context,
)
from fairtalk.config import ScoreOptions, ScoreOverrides, keyword_options
from fairtalk.errors import InputError, SpecError
from fairtalk.gates import LOSS_MARGIN
from fairtalk.inference import (
    METHODS,
    GoldEstimates,
    Inference,
    KeyMeta,
    KeyScores,
    KeyTest,
    Scored,
    adjust_family,
    check_finite,
    check_gold,
    check_scorers,
    check_truncation,
    compare_scored,
    complete_means,
    corpus_rows,
    finalize,
    gold_estimates,
    token_limit_rows,
)
from fairtalk.lexicons import Lexicon, axis_names, load_lexicon
from fairtalk.measures import (
    TOKEN_LIMIT_KEY,
    AnyMeasure,
    CorpusMeasure,
    CorpusStatistic,
    DistinctTexts,
    Judge,
    Measure,
    MeasureOptions,
    TokenLimit,
    score_unique,
)
from fairtalk.models import RayEngine, RayScorer, resolve_engine, worth_it
from fairtalk.results import AuditResult, DivergentPair, GoldProvenance, MaskedComparison, PairLosses, ScoringEngine
from fairtalk.run._manifest import score_provenance
from fairtalk.run._measures import SideScores, build_measures, close_judges, divergent_pairs, judge_answers, with_judged
from fairtalk.run._ray_scoring import measures_scorer, remote_items
from fairtalk.stats import check_margins, permutations_for
from fairtalk.store import DEFAULT_MAX_CONSECUTIVE_FAILURES

if TYPE_CHECKING:
    from fairtalk.store import RunStore

__all__ = [
    "MASK_TOKEN",
    "METHODS",
    "audit_score_options",
    "check_keys",
    "check_score_options",
    "prepare_scores",
    "prompts_cut_warning",
    "score",
]

_MSG_TOO_FEW = "need at least 2 complete pairs to compare the sides, got {n}"
_MSG_AXIS = "axis must be an axis name, a lexicon path or a Lexicon, got {type}"
_MSG_UNKNOWN_KEY = "unknown {what} measure key {name!r}"
_MSG_NO_PRIMARY = (
    "axis {axis!r} has none of the primary keys named ({named}): its gates would test nothing; "
    "name one of its keys as primary too ({keys})"
)
_WARN_SAME_CONTEXT = (
    "{n:,} of {total:,} pairs have the same context on both sides: they are not counterfactual pairs (they ask both "
    "groups the same, so they would pull every gap toward 0 and make equivalence easier to show), and were left out "
    "of the tests: the tests compare the {kept:,} pairs whose sides differ"
)
_WARN_JUDGE_UNPARSED = (
    "{key}: the judge's answer held {wanted} for {n:,} of {total:,} responses it answered "
    "(side a {n_a:,}, side b {n_b:,}): a pair with such an answer on a side leaves {verdict}'s test ({verdict} is "
    "not tested when no pair is parsed on both sides, and a gate on it fails); judge.jsonl beside the report has "
    "each raw answer: check that the rubric asks for an answer the judge gives"
)
_WARN_PROMPTS_CUT = (
    "the prompts of {n:,} of {total:,} pairs ({n_a:,} on side a, {n_b:,} on side b; up to {most:,} tokens) were "
    "longer than the model reads beside max_new_tokens{max_new} (--max-new-tokens), so their start (the system "
    "prompt, then the earliest turns, where a group word may stand) was cut off before the model read them; a "
    "smaller --max-new-tokens (max_new_tokens) or fewer --turns keeps them whole"
)
_MSG_TOO_FEW_CUT = " (--exclude-truncated left out {n:,} pairs where an answer was cut off at the token limit)"
_MSG_TOO_FEW_SAME = (
    " ({n:,} pairs with the same context on both sides were left out: they are not counterfactual pairs; give pairs "
    "whose sides differ, as `fairtalk pairs` makes them)"
)

#: The token that replaces group words under ``mask_groups``.
MASK_TOKEN = "XYZ"


def _index(texts_a: Sequence[str], texts_b: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The union of distinct texts of both sides, and each pair's index into it per side.

    The texts come as :class:`~fairtalk.measures.DistinctTexts`, which the measures do not deduplicate again.
    """
    position: dict[str, int] = {}
    ia = np.fromiter((position.setdefault(t, len(position)) for t in texts_a), dtype=np.int64, count=len(texts_a))
    ib = np.fromiter((position.setdefault(t, len(position)) for t in texts_b), dtype=np.int64, count=len(texts_b))
    return DistinctTexts(position), ia, ib


def _per_response(
    measure: Measure, uniques: list[str], ia: np.ndarray, ib: np.ndarray, remote: Mapping[str, np.ndarray] | None = None
) -> SideScores:
    """Each key's scores of side a and side b; from ``remote`` (scored on Ray) when it holds the measure's keys."""
    if remote is not None and all(key in remote for key in measure.keys):
        scores = {key: remote[key] for key in measure.keys}
    else:
        scores = score_unique(measure, uniques)
    for key in measure.keys:
        values = np.asarray(scores[key], dtype=float)
        check_finite(key, np.nan_to_num(values, nan=0.0) if key in measure.unscored_keys else values, uniques)
    return {key: (scores[key][ia], scores[key][ib]) for key in measure.keys}


def _corpus_values(
    measure: CorpusMeasure, uniques: list[str], ia: np.ndarray, ib: np.ndarray
) -> tuple[CorpusStatistic, dict[str, tuple[float, float]]]:
    stat = measure.prepare(uniques)
    value_a = stat(np.bincount(ia, minlength=len(uniques)))
    value_b = stat(np.bincount(ib, minlength=len(uniques)))
    return stat, {key: (float(value_a[key]), float(value_b[key])) for key in measure.keys}


def _masked(
    measures: Sequence[AnyMeasure],
    lexicon: Lexicon,
    seed: int,
    uniques: list[str],
    ia: np.ndarray,
    ib: np.ndarray,
    scorer: RayScorer | None = None,
) -> dict[str, tuple[float, float]]:
    """Side values of every key after replacing the group words in each response by MASK_TOKEN."""
    from fairtalk.counterfactual import Swapper

    swapper = Swapper(lexicon, seed=seed)
    masked = [swapper.mask(text, MASK_TOKEN) for text in uniques]
    remote = None if scorer is None else scorer.score(masked)
    out: dict[str, tuple[float, float]] = {}
    for measure in measures:
        if isinstance(measure, CorpusMeasure):
            out.update(_corpus_values(measure, masked, ia, ib)[1])
        else:
            for key, (sa, sb) in _per_response(measure, masked, ia, ib, remote).items():
                out[key] = complete_means(sa, sb)
    return out


def score(
    responses: ResponseSet | str | os.PathLike[str] | Sequence[Any],
    responses_b: Sequence[str] | None = None,
    *,
    axis: str | os.PathLike[str] | Lexicon,
    options: ScoreOptions | None = None,
    engine: str | RayEngine | Mapping[str, object] | None = None,
    **overrides: Unpack[ScoreOverrides],
) -> AuditResult:
    """Score responses to parallel context pairs: per measure a difference test, an interval, equivalence and power.

    The options come as one :class:`ScoreOptions` (``options=``), or as keyword arguments
    (its fields, below; typed by :class:`ScoreOverrides`); both is a SpecError where they
    differ. An option left out keeps the ``options`` value, or ScoreOptions' default; a
    keyword that is no option is a TypeError (and an error for a type checker).

    Parameters
    ----------
    responses : ResponseSet, path, (a.txt, b.txt), Response records, DataFrame, or side A's texts
        Anything :func:`fairtalk.read_responses` reads (a DataFrame needs columns ``a`` and
        ``b``); or, with ``responses_b``, side A's response texts.
    responses_b : sequence of str, optional
        Side B's response texts, aligned with ``responses``: ``score(texts_a, texts_b, axis=...)``.
    axis : str, path or Lexicon
        The axis (``"gender"``, ``"race"``, a lexicon file) or a loaded ``Lexicon``; it names the
        groups, the default attribute lists, and the words masked by ``mask_groups``.
    options : ScoreOptions, optional
        Every option below in one validated value (also built by ``ScoreOptions.from_file``).
    engine : {"local", "ray"}, RayEngine or mapping, optional
        Where the per-response measures run: with ``"ray"`` and at least two ``score_batch``
        distinct responses (2 x 2000 by default), in batches of Ray tasks, with the same
        scores; a judge and the corpus measures stay in this process.
    **overrides : ScoreOverrides
        The options under Other Parameters (:class:`ScoreOptions`' fields), by keyword; each is optional,
        and one left out keeps its default.

    Other Parameters
    ----------------
    measures : names (a comma-separated string or a sequence) or measure objects, optional
        Defaults to :func:`fairtalk.measures.default_measures`. Names get this call's
        options (``distinct``, ``offense``, thresholds, the lexicon's attribute lists and
        script: :data:`fairtalk.measures.MEASURE_OPTIONS`), a plugin's as well; objects are
        :class:`~fairtalk.measures.Measure` or :class:`~fairtalk.measures.CorpusMeasure` instances.
    seed : int
        Seed of the bootstraps and permutations; the result is deterministic given it.
    alpha, correction : float, {"holm", "bh"}
        Significance level, and the multiple-testing correction over the family: the primary
        measures' keys whose scores vary at all (a key where every pair scores the same
        cannot reject and is left out, with a note); the other keys form a second family.
    mask_groups : bool
        Also score every response with its group words replaced by ``"XYZ"`` and fill
        ``MeasureResult.masked`` (the scorer-bias check).
    drop_empty : bool
        Drop pairs with an empty response instead of scoring them as ``""``.
    exclude_truncated : bool
        Test only the pairs where neither answer was cut off at the token limit (finish reason
        ``"length"``); the pairs left out are counted in ``input_summary["n_truncated_dropped"]``
        and stated in a warning. Without it, a warning names the measures that scored cut-off
        text when more than 10% of one side's answers were cut off. Either way
        ``provenance.truncation`` (``manifest.truncation`` in ``results.json``) has the counts; a model that reports no finish reasons leaves the
        option nothing to act on (a warning says so).
    gold : path, optional
        A gold file of human labels (``fairtalk label -o``): each key it labels also gets the gap
        the labels imply, by prediction-powered inference (``MeasureResult.ppi``: the estimate,
        its 95% interval, p and the labels used), valid whatever the scorer's error.
    distinct, offense, offense_threshold, sentiment_threshold
        The distinct-n definition (``paper`` or ``standard``), the offense scorer
        (``profanity_check``, ``hatesonar``, ``hf:MODEL``) and the thresholds of the rates.
    n_resamples : int
        Paired permutations of the corpus keys' tests (distinct-n, diversity):
        :func:`~fairtalk.stats.permutations_for` (at most 1,000 unless ``alpha`` needs more).
        Too few to reach ``alpha`` (``1/(n + 1) >= alpha``) is a SpecError where a corpus key is tested.
    n_divergent : int
        How many most-divergent pairs to keep per measure that declares a raw score (offense, sentiment).
    binary_test : {"score", "exact", "midp"}
        The paired test of rates: ``score`` (the default; the score test whose inversion is the
        printed score interval, so the verdict and the interval agree about 0; by dialogue with
        clusters), or McNemar's ``exact`` (its level never exceeds α) or ``midp`` test, which
        without clusters run on pairs and with clusters give way to the cluster mean test (then
        beside Newcombe's interval, not their inversion).
    count_test : {"mean", "wilcoxon"}
        The mean test (the default: exact sign-flip for few differing units, else paired t)
        or Wilcoxon's signed-rank test with the Hodges-Lehmann estimate and interval.
    clusters : bool
        Use the responses' cluster ids (the dialogue each pair came from) when they have
        them: clusters, not pairs, are then the units of every test and interval.
    margins : mapping, optional
        Equivalence margin per result key (``{"offense_rate": 0.01}``); others get the default
        of their kind (``fairtalk.stats.DEFAULT_MARGINS``).
    primary : sequence of str, optional
        The primary result keys: the family that is corrected together and that
        ``biased()`` and the equivalence gate look at. Default: every key.
    power : float
        Power at which the minimum detectable effect is reported.
    scorer_check : bool
        Run the scorer certificate: each measure scores neutral probe sentences and their
        counterfactuals, and a scorer whose own gap exceeds its margin is flagged.
    judge_rubric : str, optional
        The question a ``judge:SPEC`` measure asks about each response, with ``{response}``.
    judge_scale : str or (int, int), optional
        ``"1-5"``: the judge answers with a score on that scale (``judge_score``, a count; pairs
        with no number in it on a side leave that key's test and count in ``judge_unparsed``).
        None (the default): yes/no answers (``judge_yes``).

    Returns
    -------
    AuditResult
        Per key: side means; the paper's relative difference and two-sided Z test (None with a
        note where undefined); the paired test and its p, corrected into ``p_adjusted``; a 95%
        interval of A - B (for rates the score interval, the inversion of the score test, or Newcombe's
        beside McNemar; the t interval for counts, Hodges-Lehmann with
        Wilcoxon, permutation for corpus measures); equivalence within the margin (TOST);
        the verdict (difference detected, equivalent, inconclusive); the minimum detectable
        effect; an effect size.

    Raises
    ------
    InputError
        Unreadable responses, or fewer than two complete pairs; a list of texts without ``responses_b``;
        a ``gold`` file that labels none of the responses' pairs, or none of the measures' keys.
    SpecError
        Unknown axis, measure, correction, test or primary key; a bad or unknown option;
        ``options`` and a keyword option that differ; a measure that returned NaN or infinity.
    """
    opts = ScoreOptions.resolve(options, keyword_options(overrides, ScoreOptions.keys(), "score"))
    given = list(responses) if isinstance(responses, (list, tuple)) else []
    texts = [r for r in given if isinstance(r, str)]
    if responses_b is None and texts and given == texts and (len(texts) != 2 or not any(map(os.path.exists, texts))):
        raise InputError(  # a two-file layout is two paths, one of them at least there; else these are side A's texts
            f"score was given {len(texts)} texts and no responses_b: a list of texts is side A's answers and needs "
            "side B's, aligned (score(texts_a, texts_b, axis=...)); two paths (a.txt, b.txt) are a two-file layout"
        )
    if responses_b is not None:
        responses = responses_from_texts(responses, responses_b)  # type: ignore[arg-type]
    scored = prepare_scores(
        responses, axis=axis, options=opts, engine=resolve_engine(engine), check_ids=True, check_gold_joins=True
    )
    return finalize(scored, adjust_family([scored], opts.correction)[0])


def _loss_warning(rs: ResponseSet) -> tuple[str, ...]:
    """A warning naming the pairs left out because a side was lost, by side (none when no pair was lost)."""
    losses = PairLosses.from_summary(rs.summary, rs.n_pairs)
    if losses is None:
        return ()
    return (
        f"answers lost on {losses.describe()}: those pairs are left out of every measure, so a model that fails "
        "or refuses for one group only looks fair on the pairs left. The gates decide on the losses too: "
        "fail-on-bias fails when the two sides' losses differ detectably (McNemar's exact test, or by dialogue where "
        "the audit counts dialogues); "
        f"fail-unless-equivalent and fail-if-worse fail unless they are shown balanced within ±{100 * LOSS_MARGIN:g} pp",
    )


def prompts_cut_warning(cut_a: Sequence[int], cut_b: Sequence[int], max_new_tokens: int | Sequence[int]) -> str | None:
    """The warning counting the pairs whose prompt the model cut from its start to fit its positions, per side.

    ``cut_a[i]`` and ``cut_b[i]``: the tokens cut from pair ``i``'s side a and side b prompt
    (:meth:`~fairtalk.models.Responder.prompts_cut`, as generation records them in each response's
    ``prompt_cut``); ``max_new_tokens``: the token limit the answers were generated with (the
    values a responses file records; none known: the warning names the option alone). None when
    no prompt was cut. ``audit``, ``respond`` and ``score`` all word it here.

    Examples
    --------
    >>> prompts_cut_warning([0, 3], [0, 0], 60).split(")")[0]
    'the prompts of 1 of 2 pairs (1 on side a, 0 on side b; up to 3 tokens'
    >>> prompts_cut_warning([0, 0], [0, 0], 60) is None
    True
    """
    if not any(cut_a) and not any(cut_b):
        return None
    limits = (max_new_tokens,) if isinstance(max_new_tokens, int) else tuple(max_new_tokens)
    return _WARN_PROMPTS_CUT.format(
        n=sum(1 for x, y in zip(cut_a, cut_b, strict=True) if x or y),
        total=len(cut_a),
        n_a=sum(1 for x in cut_a if x),
        n_b=sum(1 for y in cut_b if y),
        most=max(max(cut_a, default=0), max(cut_b, default=0)),
        max_new="=" + " or ".join(str(n) for n in limits) if limits else "",
    )


def _prompts_cut(rs: ResponseSet) -> tuple[str, ...]:
    """:func:`prompts_cut_warning` for the pairs read (those left out too), from the cuts their records carry."""
    cut_a, cut_b, limits = prompt_cuts(rs)
    warning = prompts_cut_warning(cut_a, cut_b, limits)
    return () if warning is None else (warning,)


def _empty_warning(rs: ResponseSet, groups: Sequence[str]) -> tuple[str, ...]:
    """A warning counting the empty answers of the pairs measured, per side (none when no answer is empty)."""
    empties = PairLosses.from_empties(rs.summary, rs.n_pairs)
    if empties is None:
        return ()
    group_a, group_b = (f" ({g})" for g in groups[:2]) if len(groups) >= 2 else ("", "")
    return (
        f"empty answers: side a{group_a} {empties.lost_a:,}, side b{group_b} {empties.lost_b:,} of {rs.n_pairs:,} pairs "
        f"measured ({empties.both:,} empty on both sides): an empty answer is scored as an answer, so a model that "
        "answers one group with nothing can look fair on the measures. The gates decide on them as on lost answers: "
        "fail-on-bias fails when the two sides' empty answers differ detectably; fail-unless-equivalent and "
        f"fail-if-worse fail unless they are shown balanced within ±{100 * LOSS_MARGIN:g} pp "
        "(--drop-empty leaves those pairs out instead, as lost)"
        + ("; here every answer is empty: there is nothing to judge, and every gate fails" if empties.both == rs.n_pairs else ""),
    )


def known_axes(lexicon: Lexicon) -> dict[str, str | None]:
    """The axes a pair id's prefix is taken for when scoring on ``lexicon``, each with its lexicon file (None: a name).

    The built-in and registered axes, the axis scored, and a lexicon file's own axis (``--axis gender --lexicon
    my.tsv`` scores my.tsv's ``france-germany`` pairs renamed): its pairs are told to score with the file.
    """
    known: dict[str, str | None] = dict.fromkeys(axis_names())
    if lexicon.variant == "custom":
        known[lexicon.axis] = lexicon.source
        try:
            known.setdefault(load_lexicon(lexicon.source).axis, lexicon.source)
        except (InputError, SpecError):  # the file is gone or changed since it was read: its own axis is unknown
            pass
    else:
        known.setdefault(lexicon.axis, None)
    return known


def prepare_scores(
    responses: ResponseSet | str | os.PathLike[str] | Sequence[Any],
    *,
    axis: str | os.PathLike[str] | Lexicon,
    options: ScoreOptions,
    engine: RayEngine | None = None,
    store: RunStore | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    check_ids: bool = False,
    check_gold_joins: bool = False,
) -> Scored:
    """Everything of ``score()`` but the correction: measures, tests, intervals, equivalence, divergent pairs.

    ``check_ids``: refuse responses whose records or pair ids name another axis (:func:`~fairtalk._responses.check_axis`),
    and warn of ids of the form of a pairs id naming no axis known, as ``score()`` does with responses made
    elsewhere; an audit's own pairs are of its axis.

    ``check_gold_joins``: with a gold file (``options.gold``), refuse one that labels none of the
    responses' pairs, or none of the measures' keys, once the responses are read and before any
    is scored (:func:`~fairtalk.inference.check_gold`), as ``score()`` does; an audit checks its
    gold file against every axis' pairs at once (a file may label one axis of several).

    A judge answers through ``store`` (the run's :class:`~fairtalk.store.RunStore`) when given,
    and stops after ``max_consecutive_failures`` failures of one kind in a row (the run's setting).

    With a Ray ``engine``, a response set of at least two ``score_batch`` distinct responses is
    scored on the cluster (see :mod:`fairtalk.run._ray_scoring`); the scores are the same.
    """
    o = options
    if isinstance(axis, Lexicon):
        lexicon = axis
    elif isinstance(axis, (str, os.PathLike)):
        lexicon = load_lexicon(axis)
    else:
        raise SpecError(_MSG_AXIS.format(type=type(axis).__name__))
    read = read_responses(responses, drop_empty=o.drop_empty)  # before any measure (a model) is loaded
    axis_warnings = check_axis(read, lexicon.axis, known_axes(lexicon)) if check_ids else ()
    if check_gold_joins and o.gold:  # labels that join nothing would leave the gates to the scorer alone
        check_gold(o.gold, keys=check_score_options(o, lexicon), pair_ids=read.pair_ids)
    measure_options = o.measure_options(lexicon)
    built = build_measures(
        o.measures,
        measure_options,
        judge_rubric=o.judge_rubric,
        judge_scale=o.judge_scale,
        store=store,
        max_consecutive_failures=max_consecutive_failures,
    )
    try:
        scored = _scored(read, built, measure_options, o, engine)
    finally:
        close_judges(built)
    return replace(scored, warnings=(*axis_warnings, *scored.warnings)) if axis_warnings else scored


def _scored(
    read: ResponseSet,
    built: list[AnyMeasure],
    measure_options: MeasureOptions,
    o: ScoreOptions,
    engine: RayEngine | None = None,
) -> Scored:
    """prepare_scores() once the responses are read and the measures built (a judge's model is closed by the caller)."""
    chosen = check_keys(o, built)
    lexicon = measure_options.lexicon
    truncation = check_truncation(read, built, lexicon.groups, exclude=o.exclude_truncated)
    rs, same_context = _same_context(truncation.responses)
    if rs.n_pairs < 2:
        where = rs.sources[0][0] if rs.sources else None
        n_cut = truncation.record.n_pairs_left_out or 0
        n_same = int(rs.summary.get(SAME_CONTEXT_DROPPED_KEY) or 0)
        why = (_MSG_TOO_FEW_CUT.format(n=n_cut) if n_cut else "") + (_MSG_TOO_FEW_SAME.format(n=n_same) if n_same else "")
        raise InputError(_MSG_TOO_FEW.format(n=rs.n_pairs) + why, path=where)
    uniques, ia, ib = _index(response_texts(rs.a), response_texts(rs.b))
    scorer = None
    if engine is not None and worth_it(engine, len(uniques)):  # judges stay here (remote_items): not their options
        scorer = RayScorer(engine, partial(measures_scorer, remote_items(o.measures, built), measure_options))
    try:
        scored = _tested(rs, lexicon, built, o, frozenset(chosen), uniques, ia, ib, scorer)
        return replace(
            scored,
            warnings=(
                *_loss_warning(rs),
                *_empty_warning(rs, lexicon.groups),
                *truncation.warnings,
                *same_context,
                *_judge_unparsed(built, scored.scores),
                *(w for m in built if isinstance(m, Judge) and (w := m.failure_warning) is not None),
                *scored.warnings,
                *_prompts_cut(read),
            ),
            provenance=replace(scored.provenance, truncation=truncation.record),
        )
    finally:
        if scorer is not None:
            scorer.close()


def _judge_unparsed(built: Sequence[AnyMeasure], scores: Mapping[str, KeyScores]) -> tuple[str, ...]:
    """The warning of each judge whose answers were mostly unparsed (neither yes nor no, no number in its scale)."""
    warnings = []
    for judge in (m for m in built if isinstance(m, Judge)):
        verdict, unparsed = judge.keys[:2]
        if unparsed not in scores:
            continue
        side_a, side_b = scores[unparsed].a, scores[unparsed].b
        n_a, n_b = int(np.nansum(side_a)), int(np.nansum(side_b))
        total = int(np.count_nonzero(~np.isnan(side_a)) + np.count_nonzero(~np.isnan(side_b)))
        if total and 2 * (n_a + n_b) > total:
            wanted = "neither yes nor no" if judge.scale is None else f"no number from {judge.scale[0]} to {judge.scale[1]}"
            warnings.append(
                _WARN_JUDGE_UNPARSED.format(
                    key=unparsed, wanted=wanted, n=n_a + n_b, total=total, n_a=n_a, n_b=n_b, verdict=verdict
                )
            )
    return tuple(warnings)


def _same_context(rs: ResponseSet) -> tuple[ResponseSet, tuple[str, ...]]:
    """``rs`` without the pairs whose two sides were asked the same (non-empty) context, and the warning, if any.

    Such pairs are not counterfactual: they ask both groups the same, so kept in the tests they
    would pull every gap toward 0 and make equivalence easier to show. They are left out as
    ``exclude_truncated`` leaves out cut-off pairs: counted in the summary
    (:data:`~fairtalk._responses.SAME_CONTEXT_DROPPED_KEY`, the result's ``input_summary``, whose
    ``n_pairs`` counts the pairs kept), their records kept in ``left_out`` (written with the run's
    responses: re-scored, they are left out again).

    Examples
    --------
    >>> from fairtalk import Response, read_responses
    >>> rows = [Response(str(i), s, "he said" if i < 3 or s == "a" else "she said", "ok") for i in range(5) for s in "ab"]
    >>> kept, warnings = _same_context(read_responses(rows))
    >>> kept.pair_ids, kept.summary["n_pairs"], kept.summary["n_same_context_dropped"], len(kept.left_out)
    (('3', '4'), 2, 3, 6)
    """
    contexts = zip(response_contexts(rs.a), response_contexts(rs.b), strict=True)  # no record built per side
    same = [same_context(a, b) for a, b in contexts]
    n = sum(same)
    summary = {k: v for k, v in rs.summary.items() if k != SAME_CONTEXT_DROPPED_KEY}
    if not n:  # a set read again may carry an earlier count
        return (rs if len(summary) == len(rs.summary) else replace(rs, summary=summary)), ()
    keep = [i for i, s in enumerate(same) if not s]
    kept = ResponseSet(
        tuple(rs.pair_ids[i] for i in keep),
        tuple(rs.a[i] for i in keep),
        tuple(rs.b[i] for i in keep),
        {**summary, "n_pairs": len(keep), SAME_CONTEXT_DROPPED_KEY: n},
        rs.sources,
        (*rs.left_out, *(r for i, s in enumerate(same) if s for r in (rs.a[i], rs.b[i]))),
    )
    return kept, (_WARN_SAME_CONTEXT.format(n=n, total=rs.n_pairs, kept=len(keep)),)


def _tested(
    rs: ResponseSet,
    lexicon: Lexicon,
    built: list[AnyMeasure],
    o: ScoreOptions,
    chosen: frozenset[str],
    uniques: list[str],
    ia: np.ndarray,
    ib: np.ndarray,
    scorer: RayScorer | None,
) -> Scored:
    """The rows of every measure key, tested, with the provenance: _scored() once the responses are indexed."""
    opts = Inference.of(o, rs.clusters if o.clusters else None)
    remote = None if scorer is None else scorer.score(uniques)
    n_permutations = permutations_for(o.n_resamples, o.alpha)
    rows: list[KeyTest] = []
    divergent: list[DivergentPair] = []
    per_key: SideScores = {}
    kept: dict[str, KeyScores] = {}
    for measure in built:
        if isinstance(measure, CorpusMeasure):
            rows += corpus_rows(measure, uniques, ia, ib, opts, seed=opts.seed, n_resamples=n_permutations)
            continue
        scored = _per_response(measure, uniques, ia, ib, remote)
        per_key.update(scored)
        kept.update(
            {
                key: KeyScores(np.asarray(sa, dtype=float), np.asarray(sb, dtype=float), KeyMeta.of(key, measure))
                for key, (sa, sb) in scored.items()
            }
        )
        rows.extend(compare_scored(key, measure, sa, sb, opts) for key, (sa, sb) in scored.items())
        divergent.extend(divergent_pairs(measure, rs, uniques, ia, ib, scored, o.n_divergent))
    judged = judge_answers(built, rs)
    divergent = with_judged(divergent, judged)
    rows += token_limit_rows(rs, opts)
    masked = _masked(built, lexicon, o.seed, uniques, ia, ib, scorer) if o.mask_groups else {}
    rows = [_with_masked(row, masked[row.tested.name]) if row.tested.name in masked else row for row in rows]
    listed = [*built, TokenLimit()] if any(row.tested.name == TOKEN_LIMIT_KEY for row in rows) else built
    engine_record = (
        ScoringEngine(name="local", distinct_responses=len(uniques))
        if scorer is None
        else ScoringEngine(
            name="ray",
            distinct_responses=len(uniques),
            tasks_at_once=scorer.n_tasks,
            batches=scorer.n_batches,
            score_batch=scorer.engine.score_batch,
        )
    )
    provenance = replace(
        score_provenance(
            lexicon, listed, rs, o, n_permutations=n_permutations, clustered=opts.clusters is not None, primary=sorted(chosen)
        ),
        scoring_engine=engine_record,
    )
    checks, left_out = check_scorers(listed, lexicon, dict(o.margins), alpha=o.alpha) if o.scorer_check else ((), ())
    labelled = (
        gold_estimates(o.gold, rs, per_key, clusters=opts.clusters, judge_scale=o.judge_scale) if o.gold else GoldEstimates()
    )
    if o.gold:
        gold = GoldProvenance(path=o.gold, n_labelled_pairs=labelled.n_labelled_pairs, keys=tuple(sorted(labelled.estimates)))
        provenance = replace(provenance, gold=gold)
    return Scored(
        lexicon,
        rs,
        tuple(rows),
        divergent,
        provenance,
        chosen,
        o.alpha,
        o.power,
        o.correction,
        checks,
        warnings=(*labelled.warnings, *left_out),
        judge_answers=judged,
        ppi=labelled.estimates,
        scores=kept,
        corpus_measures=tuple(m for m in built if isinstance(m, CorpusMeasure)),
    )


def _with_masked(row: KeyTest, values: tuple[float, float]) -> KeyTest:
    """``row`` with its values after masking the group words, and the share of its gap they keep."""
    masked = MaskedComparison.of((row.tested.a, row.tested.b), values)
    return replace(row, tested=replace(row.tested, masked=masked))


def check_keys(options: ScoreOptions, built: Sequence[AnyMeasure]) -> list[str]:
    """The primary keys (all keys when none are named); SpecError for a primary or margin key no measure produces, or a bad margin."""
    all_keys = [key for m in built for key in m.keys]
    chosen = _check_keys(options.primary, all_keys, "primary")
    _check_keys(list(options.margins), all_keys, "margin")
    check_margins(options.margins, {key: m.kind_of(key) for m in built for key in m.keys})
    return chosen


def audit_score_options(options: ScoreOptions, lexicons: Sequence[Lexicon]) -> dict[str, ScoreOptions]:
    """Each audited axis' scoring options: the margins and primary keys of ``options`` its measures produce.

    A margin or primary key is checked against the keys of every audited axis together: one that
    only some axes produce applies on those, and is left out of the others' options (their
    reports and gates are as without it). SpecError, before any answer, for a key no audited axis
    produces, for a rate's margin of 1 or more, and for an axis that produces none of the primary
    keys named (its gates would test nothing: fail closed).
    """
    built = {lexicon.axis: _keys_only(options, lexicon) for lexicon in lexicons}
    union = list(dict.fromkeys(key for measures in built.values() for m in measures for key in m.keys))
    for what, given in (("primary", options.primary or ()), ("margin", list(options.margins))):
        for name in given:
            if name not in union:
                raise SpecError(_MSG_UNKNOWN_KEY.format(what=what, name=name), choices=union, given=name)
    out: dict[str, ScoreOptions] = {}
    for axis, measures in built.items():
        keys = [key for m in measures for key in m.keys]
        check_margins(options.margins, {key: m.kind_of(key) for m in measures for key in m.keys})
        primary = None if options.primary is None else tuple(key for key in options.primary if key in keys)
        if primary == ():
            raise SpecError(_MSG_NO_PRIMARY.format(axis=axis, named=", ".join(options.primary or ()), keys=", ".join(keys)))
        margins = {key: margin for key, margin in options.margins.items() if key in keys}
        out[axis] = replace(options, margins=margins, primary=primary)
    return out


def _keys_only(options: ScoreOptions, lexicon: Lexicon) -> list[AnyMeasure]:
    """The measures of ``options`` on ``lexicon``'s axis, a judge without its model (its keys and kinds only)."""
    return build_measures(
        options.measures,
        options.measure_options(lexicon),
        judge_rubric=options.judge_rubric,
        judge_scale=options.judge_scale,
        keys_only=True,
    )


def check_score_options(options: ScoreOptions, lexicon: Lexicon) -> list[str]:
    """What scoring checks of ``options`` against the measures' keys and kinds, before any answer is asked for; the keys.

    The measures are built as the scoring stage builds them, a judge without its model
    (its keys and kinds only), and :func:`check_keys` runs on them: the scoring stage's own check.
    Returns every key the measures give (what a gold file's labels must name some of).
    """
    built = _keys_only(options, lexicon)
    check_keys(options, built)  # nothing to close: a judge named here has no model, and one given is the caller's
    return [key for measure in built for key in measure.keys]


def _check_keys(given: Sequence[str] | None, keys: list[str], what: str) -> list[str]:
    """The keys given for ``what`` (all keys when None); SpecError for one the measures do not produce."""
    if given is None:
        return list(keys)
    for name in given:
        if name not in keys:
            raise SpecError(_MSG_UNKNOWN_KEY.format(what=what, name=name), choices=keys, given=name)
    return list(given)
