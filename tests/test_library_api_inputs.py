"""What the library's entry points say about inputs of the wrong kind, and how its results show themselves.

``generate_completions`` takes the model forms ``audit()`` takes; ``gates.evaluate`` names the types it decides on
(and how to read a report folder first); ``score`` says a list of texts needs ``responses_b``; the results' reprs
are short; the docstrings state the real default token limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fairtalk
from fairtalk.errors import InputError, SpecError
from fairtalk.gates import evaluate
from fairtalk.models import DecodingSettings
from fairtalk.results import AuditResult, AuditRun


def _reply(text: str) -> str:
    return text + " indeed"


@pytest.mark.parametrize("model", ["builtin:echo", _reply], ids=["spec", "function"])
def test_generate_completions_takes_a_spec_or_a_function(tmp_path: Path, model: object) -> None:
    out = tmp_path / "c.jsonl"
    summary = fairtalk.generate_completions(fairtalk.build_prompts()[:2], model, out, seeds=1)  # type: ignore[arg-type]
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert summary.n_items == 2 and summary.n_errors == 0 and len(records) == 2
    assert all(r["completion"] for r in records)
    if model is _reply:
        assert records[0]["completion"] == records[0]["prompt"] + " indeed"


def test_generate_completions_refuses_what_is_no_model_before_any_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="spec string, a Responder or a function"):
        fairtalk.generate_completions(fairtalk.build_prompts()[:2], 5, tmp_path / "c.jsonl", seeds=1)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []  # no store file left behind


@pytest.mark.parametrize("given", ["report/", Path("report")])
def test_a_gate_on_a_path_says_to_read_the_folder_first(given: object) -> None:
    with pytest.raises(SpecError, match=r"AuditRun, an AuditResult.*got (str|PosixPath|WindowsPath).*AuditRun\.read_json"):
        evaluate(given, "fail-on-bias")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "named"), [(None, "NoneType"), (5, "int"), ([1], "list"), ({"gender": 5}, "a mapping holding int")]
)
def test_a_gate_on_anything_else_names_the_accepted_types(given: object, named: str) -> None:
    for gate in ("fail-on-bias", "fail-if-worse"):
        with pytest.raises(SpecError, match=f"ModelComparison, got {named}$"):
            evaluate(given, gate)  # type: ignore[arg-type]


@pytest.mark.parametrize("texts", [["he was great", "x"], ["a", "b", "c", "d"]])
def test_score_says_a_list_of_texts_needs_responses_b(texts: list[str]) -> None:
    with pytest.raises(InputError, match=f"given {len(texts)} texts and no responses_b: .* needs side B's"):
        fairtalk.score(texts, axis="gender")


def test_results_have_a_short_repr_and_keep_their_fields() -> None:
    run = fairtalk.audit(model="builtin:echo", axes="gender", n_pairs=60, measures="length", n_resamples=100)
    result = run.results["gender"]
    assert len(repr(run)) < 400 and len(repr(result)) < 300
    assert repr(result).startswith("AuditResult(axis='gender', groups=('male', 'female'), n_pairs=60, measures=")
    counts = {str(v): list(result.verdicts.values()).count(v) for v in set(result.verdicts.values())}
    assert counts and all(f"'{k}': {n}" in repr(result) for k, n in counts.items())
    assert "n_pairs={'gender': 60}" in repr(run) and "model='builtin:echo" in repr(run)
    axis = run.axes["gender"]
    assert repr(axis) == f"AxisRun(axis='gender', result={result!r}, generated=120, cached=0, errors=0)"
    assert axis.coverage.n_pairs == 60 and axis.generation.n_items == 120  # the fields stay whole
    assert AuditRun.from_dict(run.to_dict()) == run and AuditResult.from_dict(result.to_dict()) == result


def test_the_docstrings_state_the_real_default_token_limit() -> None:
    limit = DecodingSettings().max_new_tokens
    for function in (fairtalk.audit, fairtalk.respond):
        assert f"max_new_tokens={limit}" in (function.__doc__ or "")
        assert "max_new_tokens=40" not in (function.__doc__ or "")
