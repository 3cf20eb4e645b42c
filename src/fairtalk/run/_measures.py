"""The measures of a scoring run: built from names (with score()'s options) or given as objects; ``judge:SPEC`` gets a model.

A name is built by :func:`~fairtalk.measures.build_measure` with the run's
:class:`~fairtalk.measures.MeasureOptions`: each option of
:data:`~fairtalk.measures.MEASURE_OPTIONS` its constructor takes (the one table of them), a
plugin's measure as well as a built-in one.

A judge answers through the run's store when the run has one (a rerun asks it nothing it
answered before), else through an in-memory one; :func:`judge_answers` collects its raw
answers per pair and side (``judge.jsonl``) and :func:`with_judged` puts them on the divergent pairs.
:func:`divergent_pairs` ranks a measure's most divergent pairs by its raw score.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fairtalk._responses import ResponseSet
from fairtalk.config import JUDGE_PREFIX
from fairtalk.errors import ResponderAborted, ResponderError, SpecError
from fairtalk.lexicons import Lexicon
from fairtalk.measures import AnyMeasure, Judge, Measure, MeasureOptions, build_default, build_measure
from fairtalk.results import DivergentPair, JudgeAnswer
from fairtalk.store import DEFAULT_MAX_CONSECUTIVE_FAILURES

if TYPE_CHECKING:
    from fairtalk.store import RunStore

__all__ = ["SideScores", "build_measures", "close_judges", "divergent_pairs", "judge_answers", "judge_measure", "with_judged"]

#: Each key's per-pair scores, side a and side b.
SideScores = dict[str, tuple[np.ndarray, np.ndarray]]
_MSG_DUPLICATE_KEY = "result key {key!r} is produced by two measures"
_MSG_JUDGE_STOPPED = "{judge}: {error}"
#: What a judge's stop message adds when the run has a store file: the model's answers, and the judge's, are in it.
_MSG_JUDGE_KEPT = (
    " (the model's answers and the judge's answers so far are kept in {store}; re-run to resume: "
    "the judge is asked only what it has not answered)"
)
#: Tokens a judge may answer with (a yes or a no, a number, and room for a short phrase).
_JUDGE_TOKENS = 8


def judge_measure(
    spec: str,
    lexicon: Lexicon,
    rubric: str | None,
    scale: tuple[int, int] | None = None,
    *,
    store: RunStore | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
) -> Judge:
    """The judge measure for ``judge:SPEC``: the model answers greedily, the audit's group words masked.

    The judge's model answers through a :class:`~fairtalk.store.CachingResponder` over
    ``store`` (the run's store, which keeps every raw answer, so a rerun asks the judge only
    what it has not answered; the caller owns and closes it), or an in-memory store without
    one: the path every model under test takes. An answer it fails to give is
    handed to the judge as that item's error (counted in ``judge_error``, its pair left out of
    the judge's tests), and ``max_consecutive_failures`` (the run's setting; 0 or None: never)
    failures of one kind in a row stop the scoring with ResponderAborted. A response the judge
    failed on that it fails on again the same way does not count toward them.
    """
    from fairtalk.lexicons import identity_terms
    from fairtalk.models import DecodingSettings, load_responder
    from fairtalk.store import CachingResponder, RunStore

    responder = load_responder(spec)
    try:
        responder.preflight()
    except BaseException:
        responder.close()
        raise
    settings = DecodingSettings(max_new_tokens=_JUDGE_TOKENS)
    own = store is None
    kept = RunStore(":memory:") if store is None else store
    try:
        cached = CachingResponder(responder, kept, max_consecutive_failures=max_consecutive_failures)
    except BaseException:
        responder.close()
        if own:
            kept.close()
        raise
    where = "" if own or str(kept.path) == ":memory:" else _MSG_JUDGE_KEPT.format(store=kept.path)

    def ask(prompts: list[str]) -> list[str | ResponderError]:
        try:
            return cached.respond_each(prompts, settings, seeds=[0] * len(prompts))
        except ResponderAborted as exc:
            raise ResponderAborted(_MSG_JUDGE_STOPPED.format(judge=f"judge:{spec}", error=exc) + where) from exc

    def close() -> None:
        try:
            cached.close()
        finally:
            if own:
                kept.close()

    terms = identity_terms(extra=[w for pair in lexicon.pairs for w in (pair.a, pair.b)])
    return Judge(ask, rubric=rubric, mask_terms=terms, judge=responder.fingerprint, close=close, scale=scale)


def build_measures(
    measures: Sequence[str | AnyMeasure] | None,
    options: MeasureOptions,
    *,
    judge_rubric: str | None = None,
    judge_scale: tuple[int, int] | None = None,
    store: RunStore | None = None,
    keys_only: bool = False,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
) -> list[AnyMeasure]:
    """Measure objects from names or objects (None: the default suite); names get ``options``, ``judge:SPEC`` a model.

    A judge asks ``judge_rubric`` (on ``judge_scale``) and answers through ``store`` (the run's)
    when given, else through an in-memory store, and stops after ``max_consecutive_failures``
    failures of one kind in a row (0 or None: never). With ``keys_only``, a judge gets no model: it
    has its keys and kinds (to check options against before any answer), and is never asked.
    """
    if measures is None:
        return build_default(options)
    built: list[AnyMeasure] = []
    try:
        for item in measures:
            if isinstance(item, str) and item.startswith(JUDGE_PREFIX) and keys_only:
                built.append(Judge(_never_asked, rubric=judge_rubric, scale=judge_scale))
            elif isinstance(item, str) and item.startswith(JUDGE_PREFIX):
                spec = item[len(JUDGE_PREFIX) :]
                built.append(
                    judge_measure(
                        spec,
                        options.lexicon,
                        judge_rubric,
                        judge_scale,
                        store=store,
                        max_consecutive_failures=max_consecutive_failures,
                    )
                )
            elif isinstance(item, str):
                built.append(build_measure(item, options))
            else:  # a Measure or CorpusMeasure (ScoreOptions checked)
                built.append(item)
        seen: set[str] = set()
        for measure in built:
            for key in measure.keys:
                if key in seen:
                    raise SpecError(_MSG_DUPLICATE_KEY.format(key=key))
                seen.add(key)
    except BaseException:
        close_judges(built)
        raise
    return built


def _never_asked(prompts: list[str]) -> list[str | BaseException]:
    """The answers of a judge built for its keys only (``build_measures(keys_only=True)``): it is never asked."""
    raise RuntimeError(f"a judge built for its keys only was asked about {len(prompts)} response(s)")


def divergent_pairs(
    measure: Measure, rs: ResponseSet, uniques: list[str], ia: np.ndarray, ib: np.ndarray, scored: SideScores, n: int
) -> list[DivergentPair]:
    """The ``n`` pairs whose responses differ most on the measure's own raw score (none for a measure without one).

    Candidates are the pairs whose per-response scores differ on some key; they are ranked
    by the difference of ``measure.raw_scores`` (offense probability, VADER compound).
    """
    gap = np.zeros(len(ia))
    for sa, sb in scored.values():
        gap = np.maximum(gap, np.abs(sa - sb))
    candidates = np.flatnonzero(gap > 0)
    if n == 0 or candidates.size == 0:
        return []
    needed = np.unique(np.concatenate([ia[candidates], ib[candidates]]))
    found = measure.raw_scores([uniques[i] for i in needed])
    if found is None:  # the measure declares no raw score
        return []
    values = np.asarray(found, dtype=float)
    raw = dict(zip(needed.tolist(), values.tolist()))
    raw_a = np.array([raw[i] for i in ia[candidates]])
    raw_b = np.array([raw[i] for i in ib[candidates]])
    label = measure.name
    order = np.argsort(-np.abs(raw_a - raw_b), kind="stable")[:n]
    out = []
    for j in order:
        i = int(candidates[j])
        out.append(
            DivergentPair(
                rs.pair_ids[i],
                label,
                rs.a[i].context,
                rs.b[i].context,
                rs.a[i].response,
                rs.b[i].response,
                float(raw_a[j]),
                float(raw_b[j]),
            )
        )
    return out


def close_judges(measures: Sequence[AnyMeasure]) -> None:
    """Release the model of every judge among ``measures``."""
    for measure in measures:
        if isinstance(measure, Judge):
            measure.close()


def judge_answers(measures: Sequence[AnyMeasure], responses: ResponseSet) -> tuple[JudgeAnswer, ...]:
    """Every judge's raw answer about each side of each pair, pair by pair (side a, then b), judge by judge."""
    out: list[JudgeAnswer] = []
    for measure in measures:
        if not isinstance(measure, Judge):
            continue
        for pair_id, a, b in zip(responses.pair_ids, responses.a, responses.b):
            for side, record in (("a", a), ("b", b)):
                reading = measure.reading(record.response)
                if reading is not None:  # every scored response has one
                    out.append(
                        JudgeAnswer(measure.name, pair_id, side, reading.response, reading.answer, reading.value, reading.error)
                    )
    return tuple(out)


def with_judged(divergent: Sequence[DivergentPair], answers: Sequence[JudgeAnswer]) -> list[DivergentPair]:
    """The divergent pairs, each with the judges' raw answers about its two sides."""
    if not answers:
        return list(divergent)
    by_pair: dict[str, list[JudgeAnswer]] = {}
    for answer in answers:
        by_pair.setdefault(answer.pair_id, []).append(answer)
    return [dataclasses.replace(d, judged=tuple(by_pair.get(d.pair_id, ()))) for d in divergent]
