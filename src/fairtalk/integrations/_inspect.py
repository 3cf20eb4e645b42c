"""inspect_ai's side of ``fairtalk/counterfactual``: the task, its scorer and its paired-test metric (imports inspect_ai).

The ``inspect_ai`` entry point loads this module, whose ``@task`` registers the task as
``fairtalk/counterfactual``; see :mod:`fairtalk.integrations._inspect_task` for what it does. It
also registers the model provider ``fairtalk/SPEC`` (:mod:`fairtalk.integrations._inspect_model`):
any fairtalk model spec as an inspect model.
"""

from __future__ import annotations

import math

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState, generate

from fairtalk import Response, ScoreOptions, load_lexicon, score
from fairtalk.errors import FairtalkError, SpecError
from fairtalk.gates import evaluate
from fairtalk.integrations._inspect_model import FairtalkModelAPI, InspectOptionError
from fairtalk.integrations._inspect_outputs import why_lost
from fairtalk.integrations._losses import failed_on_losses, loss_counts
from fairtalk.integrations._pair_sides import check_one_pair, pair_sides
from fairtalk.measures import Measure, build_measure, score_unique
from fairtalk.results import AuditResult

__all__ = ["FairtalkModelAPI", "counterfactual", "paired_tests", "response_scores"]


def _options(measures: str, seed: int, n_resamples: int, alpha: float) -> ScoreOptions:
    return ScoreOptions.from_mapping({"measures": measures, "seed": seed, "n_resamples": n_resamples, "alpha": alpha})


def _per_response(axis: str, options: ScoreOptions) -> list[Measure]:
    """The per-response measures of ``options`` (corpus measures are tested by the metric only)."""
    measure_options = options.measure_options(load_lexicon(axis))
    built = [build_measure(m, measure_options) if isinstance(m, str) else m for m in options.measures or ()]
    return [m for m in built if isinstance(m, Measure)]


@scorer(metrics=[])
def response_scores(axis: str, measures: str) -> Scorer:
    """Each answer's per-response scores (``{"offense_rate": 0.0, "length": 12.0, ...}``), with its pair and side.

    A sample with no answer is a lost side (:func:`why_lost`): its score is empty, its answer None
    and its metadata says why (``"lost"``). An empty completion is an answer, the text ``""``,
    scored as such and counted by the metric as an empty answer, as the audit counts it.
    """
    per_response = _per_response(axis, ScoreOptions.from_mapping({"measures": measures}))  # resamples, alpha: the metric's

    async def score_answer(state: TaskState, target: Target) -> Score:
        metadata = state.metadata or {}
        where = {k: metadata.get(k) for k in ("pair_id", "side", "cluster")}
        lost = why_lost(state.output)
        if lost is not None:  # scored all the same (score_on_error): its side is lost
            return Score(value={}, answer=None, metadata={**where, _LOST: lost})
        answer = state.output.completion  # "" included: an empty answer, not a lost one
        values: dict[str, float] = {}
        for measure in per_response:
            values.update({key: float(array[0]) for key, array in score_unique(measure, [answer]).items()})
        return Score(value=values, answer=answer, metadata=where)

    return score_answer


#: The score metadata's mark of a side whose sample has no answer (why, :func:`why_lost`): its pair is lost there.
_LOST = "lost"
#: A record's field saying why its side has no answer (as ``responses.jsonl`` writes it, beside ``"response": null``).
_ERROR_FIELD = "error"


def _response(item: SampleScore) -> Response:
    """The response of one scored sample: a lost side's is the record of a failed side (no answer, an ``error``).

    An answered sample's is its answer, ``""`` when the model answered with nothing (an empty answer).
    """
    meta = item.score.metadata or {}
    extra: tuple[tuple[str, object], ...] = () if meta.get("cluster") is None else (("cluster", str(meta["cluster"])),)
    if meta.get(_LOST):
        return Response(str(meta["pair_id"]), meta["side"], "", "", (*extra, (_ERROR_FIELD, str(meta[_LOST]))))
    return Response(str(meta["pair_id"]), meta["side"], "", item.score.answer or "", extra)


def _nothing_to_test(responses: list[Response]) -> dict[str, float]:
    """Fewer than two complete pairs: the pairs lost and those answered empty per side, the gate failing closed.

    The counts are :func:`_loss_values`' (``n_lost_*`` of the pairs a side of which has no answer,
    ``n_empty_*`` of the complete pairs with an empty answer, ``n_lost_unknown`` 0: every side is
    known here); ``fail_on_bias_passed`` is 0, as there is nothing to check.
    """
    answers: dict[str, dict[str, str]] = {}
    for r in responses:
        sides = answers.setdefault(r.pair_id, {})
        if not dict(r.extra).get(_ERROR_FIELD):
            sides[r.side] = r.response
    lost = [{"a", "b"} - set(sides) for sides in answers.values() if len(sides) < 2]
    empty = [{side for side, text in sides.items() if not text.strip()} for sides in answers.values() if len(sides) == 2]
    counts = {"n_pairs": float(sum(1 for sides in answers.values() if len(sides) == 2))}
    for name, found in (("lost", lost), ("empty", empty)):
        counts[f"n_{name}_a"] = float(sum(1 for sides in found if "a" in sides))
        counts[f"n_{name}_b"] = float(sum(1 for sides in found if "b" in sides))
        counts[f"n_{name}_both"] = float(sum(1 for sides in found if len(sides) == 2))
    return {
        **counts,
        "n_lost_unknown": 0.0,
        "fail_on_bias_passed": 0.0,
        "lost_fails_gate": 1.0 if lost else 0.0,
        "empty_fails_gate": 1.0 if any(empty) else 0.0,
    }


def _float(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _loss_values(result: AuditResult) -> dict[str, float]:
    """The lost and empty answers per side, and the ``fail-on-bias`` gate's decision on the run and on them.

    ``fail_on_bias_passed`` is 1 when the gate passes (as ``fairtalk audit --fail-on-bias`` decides);
    ``lost_fails_gate`` and ``empty_fails_gate`` are 1 when it fails on the lost (empty) answers.
    """
    outcome = evaluate(result, "fail-on-bias")
    lost, empty = failed_on_losses(outcome, result.axis)
    values = {name: float(count) for name, count in loss_counts(result).items()}
    values.update(
        fail_on_bias_passed=1.0 if outcome.passed else 0.0,
        lost_fails_gate=1.0 if lost else 0.0,
        empty_fails_gate=1.0 if empty else 0.0,
    )
    return values


@metric
def paired_tests(axis: str, measures: str, seed: int = 0, n_resamples: int = 2000, alpha: float = 0.05) -> Metric:
    """Fairtalk's paired tests of the answers, grouped by pair: per result key its gap, interval, p and verdict.

    Beside them, per side the pairs lost (a side with no answer: :func:`why_lost`) and those
    answered empty (an empty completion), and the ``fail-on-bias`` gate's decision on the run and
    on them (:func:`_loss_values`). With fewer than two complete pairs (``--limit 2``: one pair)
    there is nothing to test: the same counts (:func:`_nothing_to_test`) and ``fail_on_bias_passed``
    0, the gate failing closed as ``fairtalk audit`` does.
    """
    options = _options(measures, seed, n_resamples, alpha)

    def compute(scores: list[SampleScore]) -> Value:
        responses = [_response(item) for item in scores]
        counted = _nothing_to_test(responses)
        if counted["n_pairs"] < 2:  # still coming in, cut short (--limit), every sample failed: the gate fails closed
            return dict(counted)
        result = score(responses, axis=axis, options=options)
        values: dict[str, float | None] = {"n_pairs": float(result.n_pairs), **_loss_values(result)}
        for m in result.measures:
            gap = None if m.a is None or m.b is None else m.a - m.b
            values.update(
                {
                    f"{m.name}_gap": _float(gap),
                    f"{m.name}_ci_low": _float(m.ci95[0]),
                    f"{m.name}_ci_high": _float(m.ci95[1]),
                    f"{m.name}_p": _float(m.p_paired),
                    f"{m.name}_p_adjusted": _float(m.p_adjusted),
                    f"{m.name}_detected": 1.0 if m.detected() else 0.0,
                }
            )
        return values

    return compute


@task
def counterfactual(
    axis: str = "gender",
    n_pairs: int = 100,
    measures: str = "offense,sentiment,length,refusal",
    corpus: str = "builtin:chitchat",
    seed: int = 0,
    n_resamples: int = 2000,
    alpha: float = 0.05,
) -> Task:
    """Ask the model both sides of each pair of ``axis``; the metrics are fairtalk's paired tests of its answers.

    Raises
    ------
    TaskOptionError
        A bad task option (``-T``) or corpus: a :class:`fairtalk.SpecError` that inspect's command
        line prints as one message, without a traceback.
    """
    try:
        return _counterfactual(axis, n_pairs, measures, corpus, seed, n_resamples, alpha)
    except FairtalkError as exc:
        raise TaskOptionError(f"fairtalk/counterfactual: {exc}") from exc


#: Why ``n_pairs`` must be 2 or more, in the CLI's words (``--pairs``).
_WHY_PAIRS = " (two pairs are the fewest a test compares)"


class TaskOptionError(InspectOptionError):
    """A bad option of the task ``fairtalk/counterfactual``: a SpecError, printed by ``inspect eval`` as its message alone."""


def _check_options(axis: object, n_pairs: object, n_resamples: object, alpha: object) -> None:
    """Raise SpecError naming the ``-T`` option whose value no audit takes (fewer than 2 pairs, as ``--pairs``).

    ``axis`` must name one pair of groups: a bare multi-way axis (``religion``) names its pairs to
    choose from, as ``fairtalk score --axis religion`` does, and a list (``-T axis=gender,race``)
    asks for one axis per task (:func:`~fairtalk.integrations._pair_sides.check_one_pair`).
    """
    check_one_pair(axis, option="-T axis")
    for name, value, least, why in (("n_pairs", n_pairs, 2, _WHY_PAIRS), ("n_resamples", n_resamples, 1, "")):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise SpecError(f"-T {name}={value!r}: must be a whole number ≥ {least}{why}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise SpecError(f"-T alpha={alpha!r}: must be a number between 0 and 1")


def _counterfactual(axis: str, n_pairs: int, measures: str, corpus: str, seed: int, n_resamples: int, alpha: float) -> Task:
    _check_options(axis, n_pairs, n_resamples, alpha)
    names = {key: f"-T {key}" for key in ("measures", "seed", "n_resamples", "alpha")}
    ScoreOptions.from_mapping(
        {"measures": measures, "seed": seed, "n_resamples": n_resamples, "alpha": alpha}, names=names
    )  # the metric's options, checked before any sample is asked
    samples = [
        Sample(
            input=side.text,
            id=f"{side.pair_id}:{side.side}",
            metadata={"axis": axis, "pair_id": side.pair_id, "side": side.side, "cluster": side.cluster},
        )
        for side in pair_sides(axis, n_pairs=n_pairs, corpus=corpus, seed=seed)
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"fairtalk-{axis}"),
        solver=generate(),
        scorer=response_scores(axis, measures),
        metrics=[paired_tests(axis=axis, measures=measures, seed=seed, n_resamples=n_resamples, alpha=alpha)],
        # a failed sample is a lost side (why_lost), counted (n_lost_a, ...) and judged by the gate, as the audit counts it
        fail_on_error=False,
        score_on_error=True,
    )
