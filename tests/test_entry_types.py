"""The public entry points check what they are given at once: a TypeError naming what they take, not an error from deep inside.

Review finding: ``write_report(None, ...)`` raised AttributeError ('NoneType' object has no attribute
'judge_answers') and ``respond(None, ...)`` TypeError ('NoneType' object is not iterable) from
inside fairtalk (``log_audit(None)``: tests/integrations/test_mlflow.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import fairtalk


@pytest.mark.parametrize("result", [None, {"axis": "gender"}])
def test_write_report_takes_an_audit_result_and_writes_nothing_else(result: object, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"^write_report: result must be an AuditResult .*got (NoneType|dict)$"):
        fairtalk.write_report(result, tmp_path / "report")  # type: ignore[arg-type]
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (None, "respond: pairs must be a pairs JSONL path or Pair records (what fairtalk.build_pairs yields), got NoneType"),
        (5, "respond: pairs must be a pairs JSONL path or Pair records (what fairtalk.build_pairs yields), got int"),
        (["he said hi"], "respond: pairs item 0 is of type str, not a Pair (what fairtalk.build_pairs yields)"),
    ],
    ids=["none", "a-number", "texts"],
)
def test_respond_takes_a_path_or_pairs(pairs: object, message: str) -> None:
    with pytest.raises(TypeError) as caught:
        fairtalk.respond(pairs, model="builtin:echo")  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_respond_still_takes_pairs_from_a_generator() -> None:
    pair = fairtalk.Pair("p1", "gender", "he said hi", "she said hi", "a", ())
    generation = fairtalk.respond((p for p in [pair]), model="builtin:echo")
    ((a, b),) = list(generation.responses)
    assert (a.pair_id, a.context, b.context) == ("p1", "he said hi", "she said hi")
