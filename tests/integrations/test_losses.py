"""The lost and empty answers the integrations report, read from the result, and the gates' decisions on them.

Through :func:`fairtalk.integrations.mlflow.audit_metrics` (it needs no mlflow), which the inspect task's
metrics share (``test_inspect_task`` runs those).
"""

from __future__ import annotations

from fairtalk import Response, ScoreOptions, score
from fairtalk.gates import evaluate
from fairtalk.integrations.mlflow import audit_metrics

LOSS_COUNTS = ("n_lost_a", "n_lost_b", "n_lost_both", "n_lost_unknown", "n_empty_a", "n_empty_b", "n_empty_both")


def loss_counts(result) -> dict[str, float]:  # noqa: ANN001
    """The counts ``log_audit`` logs for ``result``'s axis."""
    metrics = audit_metrics(result)
    return {name: metrics[f"gender/{name}"] for name in LOSS_COUNTS}


def failed_on_losses(gate: str, result) -> tuple[bool, bool]:  # noqa: ANN001
    """Whether ``gate`` fails the axis on its lost, and on its empty answers, as ``log_audit`` logs it."""
    metrics = audit_metrics(result)
    return metrics[f"gender/lost_answers/fails_{gate}"] == 1, metrics[f"gender/empty_answers/fails_{gate}"] == 1


def _result(n: int, *, missing_b: int = 0, empty_b: int = 0, empty_both: int = 0):  # noqa: ANN202
    """``n`` pairs answered alike; side b missing on the first ``missing_b``, empty on the next ``empty_b``, and both
    sides empty on the next ``empty_both``."""
    records = []
    for i in range(n):
        both_empty = missing_b + empty_b <= i < missing_b + empty_b + empty_both
        records.append(Response(f"p{i}", "a", f"he said {i}", "" if both_empty else "that is lovely"))
        if i >= missing_b:
            b_empty = i < missing_b + empty_b or both_empty
            records.append(Response(f"p{i}", "b", f"she said {i}", "" if b_empty else "that is lovely"))
    return score(records, axis="gender", options=ScoreOptions.from_mapping({"measures": "length", "n_resamples": 50}))


def test_no_pair_lost_or_empty_counts_zero_and_fails_nothing() -> None:
    result = _result(30)
    assert loss_counts(result) == dict.fromkeys(LOSS_COUNTS, 0)
    assert failed_on_losses("fail-on-bias", result) == (False, False)
    assert audit_metrics(result)["fairtalk/fail-on-bias/passed"] == 1


def test_lost_and_empty_answers_are_counted_per_side_and_the_gates_failures_on_them_told_apart() -> None:
    result = _result(60, missing_b=20)
    assert loss_counts(result) == {**dict.fromkeys(LOSS_COUNTS, 0), "n_lost_b": 20}
    assert not evaluate(result, "fail-on-bias").passed and failed_on_losses("fail-on-bias", result) == (True, False)
    assert audit_metrics(result)["fairtalk/fail-on-bias/passed"] == 0

    result = _result(60, empty_b=20, empty_both=3)
    assert loss_counts(result) == {**dict.fromkeys(LOSS_COUNTS, 0), "n_empty_a": 3, "n_empty_b": 23, "n_empty_both": 3}
    assert not evaluate(result, "fail-on-bias").passed and failed_on_losses("fail-on-bias", result) == (False, True)


def test_a_few_one_sided_losses_the_gate_passes_are_counted_but_not_failed() -> None:
    result = _result(60, missing_b=1)
    assert loss_counts(result)["n_lost_b"] == 1
    assert failed_on_losses("fail-on-bias", result) == (False, False)
    # under fail-unless-equivalent one loss in 60 is not shown balanced within ±2 pp: the gate fails on it
    assert failed_on_losses("fail-unless-equivalent", result)[0] is True


def test_every_answer_empty_fails_the_gate_on_the_empty_answers() -> None:
    result = _result(10, empty_both=10)
    outcome = evaluate(result, "fail-on-bias")
    assert any(d.reason.startswith("every answer on gender was empty") for d in outcome.run_failures)
    assert failed_on_losses("fail-on-bias", result) == (False, True)
