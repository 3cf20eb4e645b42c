"""An axis' lost and empty answers as the integrations report them, and what a gate decided on them.

Read from the result the CLI reads (:attr:`~fairtalk.results.AuditResult.losses` and
:attr:`~fairtalk.results.AuditResult.empties`); the decision is the gate's own
(:func:`fairtalk.gates.evaluate`), never made again here. It imports no optional package.

- :func:`loss_counts`: per side the pairs lost and the pairs measured with an empty answer,
  named as the JUnit file's properties (``n_lost_a``, ``n_lost_b``, ``n_lost_both``,
  ``n_lost_unknown``, ``n_empty_a``, ``n_empty_b``, ``n_empty_both``); 0 where none.
- :func:`failed_on_losses`: whether a gate's outcome failed an axis on its lost answers, and on
  its empty answers (the sides' rates differ detectably under ``fail-on-bias``, are not shown
  balanced under ``fail-unless-equivalent``, every answer was empty, or the lost side is unknown).
"""

from __future__ import annotations

from fairtalk.gates import GateOutcome
from fairtalk.results import AuditResult

__all__ = ["LOSS_COUNTS", "failed_on_losses", "loss_counts"]

#: The counts :func:`loss_counts` gives, in order.
LOSS_COUNTS = ("n_lost_a", "n_lost_b", "n_lost_both", "n_lost_unknown", "n_empty_a", "n_empty_b", "n_empty_both")


def loss_counts(result: AuditResult) -> dict[str, int]:
    """Per side, the pairs ``result`` lost and the pairs it measured with an empty answer (0 where none).

    ``n_lost_a`` counts the pairs whose side a was lost (side a only, or both), ``n_lost_both`` those
    lost on both sides, ``n_lost_unknown`` those whose lost side was not recorded; ``n_empty_*`` the
    same of the pairs measured with an empty answer.
    """
    losses, empties = result.losses, result.empties
    counts = dict.fromkeys(LOSS_COUNTS, 0)
    if losses is not None:
        counts.update(n_lost_a=losses.lost_a, n_lost_b=losses.lost_b, n_lost_both=losses.both, n_lost_unknown=losses.unknown)
    if empties is not None:
        counts.update(n_empty_a=empties.lost_a, n_empty_b=empties.lost_b, n_empty_both=empties.both)
    return counts


def failed_on_losses(outcome: GateOutcome, axis: str) -> tuple[bool, bool]:
    """Whether ``outcome`` failed ``axis`` on its lost answers, and on its empty answers (its decisions' ``on``)."""
    on = {d.on for d in outcome.run_failures if d.axis == axis}
    return "lost" in on, "empty" in on
