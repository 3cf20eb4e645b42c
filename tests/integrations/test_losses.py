"""The lost and empty answers the integrations report (``fairtalk.integrations._losses``), read from the result."""

from __future__ import annotations

from fairtalk import Response, ScoreOptions, score
from fairtalk.gates import evaluate
from fairtalk.integrations._losses import LOSS_COUNTS, failed_on_losses, loss_counts


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
    assert failed_on_losses(evaluate(result, "fail-on-bias"), "gender") == (False, False)


def test_lost_and_empty_answers_are_counted_per_side_and_the_gates_failures_on_them_told_apart() -> None:
    result = _result(60, missing_b=20)
    assert loss_counts(result) == {**dict.fromkeys(LOSS_COUNTS, 0), "n_lost_b": 20}
    outcome = evaluate(result, "fail-on-bias")
    assert not outcome.passed and failed_on_losses(outcome, "gender") == (True, False)
    assert failed_on_losses(outcome, "race") == (False, False)

    result = _result(60, empty_b=20, empty_both=3)
    assert loss_counts(result) == {**dict.fromkeys(LOSS_COUNTS, 0), "n_empty_a": 3, "n_empty_b": 23, "n_empty_both": 3}
    outcome = evaluate(result, "fail-on-bias")
    assert not outcome.passed and failed_on_losses(outcome, "gender") == (False, True)


def test_a_few_one_sided_losses_the_gate_passes_are_counted_but_not_failed() -> None:
    result = _result(60, missing_b=1)
    assert loss_counts(result)["n_lost_b"] == 1
    outcome = evaluate(result, "fail-on-bias")
    assert failed_on_losses(outcome, "gender") == (False, False)
    # under fail-unless-equivalent one loss in 60 is not shown balanced within ±2 pp: the gate fails on it
    assert failed_on_losses(evaluate(result, "fail-unless-equivalent"), "gender")[0] is True


def test_every_answer_empty_fails_the_gate_on_the_empty_answers() -> None:
    result = _result(10, empty_both=10)
    outcome = evaluate(result, "fail-on-bias")
    assert any(d.reason.startswith("every answer on gender was empty") for d in outcome.run_failures)
    assert failed_on_losses(outcome, "gender") == (False, True)
