"""fairtalk as an inspect_ai task: ``inspect eval fairtalk/counterfactual --model ...`` (``pip install 'fairtalk[inspect]'``).

The task ``fairtalk/counterfactual`` (registered through the ``inspect_ai`` entry point) asks the
model under test both sides of each parallel context pair:

- its dataset is the pair sides of :func:`pair_sides` (:func:`fairtalk.build_pairs` on a corpus,
  the built-in one by default), one sample per side, with the pair's id, side and dialogue;
- its solver is inspect's ``generate()``;
- its scorer scores each answer with fairtalk's per-response measures (the sample's value), and
  its metric runs fairtalk's paired tests (:func:`fairtalk.score`) on the answers grouped by pair:
  per result key the gap A − B, its interval and p, the adjusted p and whether a difference was
  detected (``offense_rate_gap``, ``offense_rate_ci_low``, ``offense_rate_ci_high``,
  ``offense_rate_p``, ``offense_rate_p_adjusted``, ``offense_rate_detected``), clustered by
  dialogue as ``fairtalk score`` does. inspect's log viewer shows them as the task's metrics.
- a sample that fails (the model raised) is a lost side, as the audit counts it: the task sets
  ``fail_on_error=False`` and ``score_on_error=True``, so the eval goes on, the failed sample is
  scored as lost, and the metric counts the pairs lost per side (``n_lost_a``, ``n_lost_b``,
  ``n_lost_both``), the ``fail-on-bias`` gate deciding on them (``fail_on_bias_passed``,
  ``lost_fails_gate``); a run where every sample failed reports the gate failed (0). So is a
  sample with no output (a limit stopped it first) or with an output that stands in for an error
  (``ModelOutput.error``: a request the model's API refused, whose text is not the model's);
- an empty completion is an answer, the text ``""``: scored as such and counted per side as an
  empty answer (``n_empty_a``, ``n_empty_b``, ``n_empty_both``, ``empty_fails_gate``), as the
  audit counts it, never as a lost side.

The model under test is any inspect model (``--model openai/gpt-4o-mini``), or any fairtalk model
spec through the provider ``fairtalk/SPEC`` that the same entry point registers
(``--model fairtalk/python:bot.py:reply``, ``fairtalk/openai:URL#MODEL``, ``fairtalk/hf:NAME``;
``-M key=value`` are the adapter's options). That provider counts no tokens, so with a local
spec the task runs offline (inspect's ``mockllm/model`` downloads tiktoken's encoding).

Task options (``-T key=value``): ``axis``, ``n_pairs``, ``measures`` (comma-separated),
``corpus``, ``seed``, ``n_resamples``, ``alpha``. ``axis`` names one pair of groups: a bare
multi-way axis (``religion``) is a SpecError naming its pairs (``religion:christian-jewish``, ...),
as ``fairtalk score`` refuses it, and so is a list (``-T axis=gender,race``: one axis per task).
Running each pair of a multi-way axis in one task would need the metric to test and correct
across pairs as ``fairtalk audit`` does; the task leaves that to the audit. This module imports no inspect_ai itself (its
task lives in a private module that does), so ``fairtalk.integrations._inspect_task`` imports
without the extra; :func:`counterfactual` names the install command when it is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairtalk.errors import FairtalkError
from fairtalk.integrations._inspect_outputs import WHY_ERROR_OUTPUT, WHY_NO_OUTPUT, why_lost
from fairtalk.integrations._pair_sides import PairSide, pair_sides

if TYPE_CHECKING:
    from inspect_ai import Task

__all__ = ["METRIC_SUFFIXES", "WHY_ERROR_OUTPUT", "WHY_NO_OUTPUT", "PairSide", "counterfactual", "pair_sides", "why_lost"]

#: The metrics reported per result key (``<key>_<suffix>``).
METRIC_SUFFIXES = ("gap", "ci_low", "ci_high", "p", "p_adjusted", "detected")
#: The default measures: cheap ones, whose scorers ship with fairtalk.
DEFAULT_MEASURES = "offense,sentiment,length,refusal"
_MSG_MISSING = "the inspect_ai task needs inspect_ai: pip install 'fairtalk[inspect]'"


def counterfactual(
    axis: str = "gender",
    n_pairs: int = 100,
    measures: str = DEFAULT_MEASURES,
    corpus: str = "builtin:chitchat",
    seed: int = 0,
    n_resamples: int = 2000,
    alpha: float = 0.05,
) -> Task:
    """The ``fairtalk/counterfactual`` task (see the module docstring); for ``inspect_ai.eval(counterfactual(...))``.

    Raises
    ------
    FairtalkError
        inspect_ai is not installed (the message names the extra).
    """
    try:
        from fairtalk.integrations._inspect import counterfactual as task
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "inspect_ai":
            raise FairtalkError(_MSG_MISSING) from exc
        raise
    return task(axis=axis, n_pairs=n_pairs, measures=measures, corpus=corpus, seed=seed, n_resamples=n_resamples, alpha=alpha)
