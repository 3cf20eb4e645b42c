"""``audit --by-turn`` reads the scores the audit computed: no response is scored twice, on Ray or in this process.

The by-turn stage tests subsets of the audit's pairs; it takes each per-response key's scores
from the audit (``Scored.scores``) rather than scoring the responses again. A measure that
records what it is asked to score sees each distinct response once; on Ray the responses are
scored by the workers only (this process scores none of them), with the same table as a local
run; a judge answers each prompt once, through the run's store, and its keys are in the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pytest

import fairtalk
from fairtalk.measures import Length, Measure
from fairtalk.models import RayEngine
from test_by_turn import _LOGIC, PLANTED, write_chats

NICE, RUDE = _LOGIC["NICE"], _LOGIC["RUDE"]
#: The planted model with a varying tail, so that a run has enough distinct responses to go to Ray.
VARIED = (
    PLANTED
    + '''

def varied(context):
    """The planted reply, and a tail that depends on the context's length (16 tails)."""
    return reply(context) + f" #{len(context) % 16}"
'''
)
#: A judge that says yes to an insult and logs every prompt it is asked (one line each) to LOG.
JUDGE = '''
LOG = {log!r}


def answer(prompt):
    """yes to a rude reply, else no; each prompt asked is logged."""
    with open(LOG, "a") as handle:
        handle.write(prompt.replace("\\n", " ") + "\\n")
    return "yes" if "idiot" in prompt else "no"
'''


class Rude(Measure):
    """1 for a response with an insult in it; records every text it is asked to score."""

    name = "rude"
    keys = ("rude_rate",)
    kind: Literal["rate"] = "rate"
    version = "1"
    higher_is_better = {"rude_rate": False}

    def __init__(self) -> None:
        self.seen: list[str] = []

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """Record ``texts``, and flag those with "idiot" in them."""
        self.seen.extend(texts)
        return {"rude_rate": np.array([float("idiot" in t) for t in texts])}


def _verdicts(result: fairtalk.AuditResult, key: str) -> list[tuple[int, fairtalk.Verdict]]:
    assert result.by_turn is not None
    return [(b.turns_since, result.by_turn.gap(b.turns_since, key).verdict) for b in result.by_turn.buckets if b.tested]


def test_each_distinct_response_is_scored_once_in_an_audit_by_turn(tmp_path: Path) -> None:
    corpus = write_chats(tmp_path / "chats.jsonl")
    rude = Rude()
    run = fairtalk.audit(
        corpus=corpus,
        axes="gender",
        model=_LOGIC["reply"],
        measures=[rude, "length", "diversity"],
        n_resamples=200,
        scorer_check=False,
        by_turn=True,
    )
    result = run.results["gender"]
    assert sorted(rude.seen) == sorted([NICE, RUDE])  # once each: the audit's scoring, none again by turn
    assert result.by_turn is not None and result.by_turn.keys == ("rude_rate", "length", "distinct_1", "distinct_2", "diversity")
    different = fairtalk.Verdict.DIFFERENT
    assert [(since, v is different) for since, v in _verdicts(result, "rude_rate")] == [
        (0, False),
        (1, False),
        (2, True),
        (3, True),
        (4, True),
    ]
    for since in (2, 3, 4):
        gap = result.by_turn.gap(since, "rude_rate")
        assert gap.a == 0 and 0.5 < gap.b < 0.9 and gap.estimate == -gap.b  # the audit's scores, bucketed
    assert result.by_turn.gap(5, "rude_rate").b == pytest.approx(0.6)  # an untested bucket's means, from them too


def test_a_judge_answers_each_prompt_once_and_its_gaps_are_in_the_table(tmp_path: Path) -> None:
    corpus = write_chats(tmp_path / "chats.jsonl")
    log = tmp_path / "asked.log"
    judge = tmp_path / "judge.py"
    judge.write_text(JUDGE.format(log=str(log)))
    run = fairtalk.audit(
        corpus=corpus,
        axes="gender",
        model=_LOGIC["reply"],
        measures=["length", f"judge:python:{judge}:answer"],
        n_resamples=200,
        scorer_check=False,
        by_turn=True,
        out_dir=tmp_path / "out",
    )
    result = run.results["gender"]
    asked = Counter(log.read_text().splitlines())
    assert len(asked) == 2 and set(asked.values()) == {1}  # one prompt per distinct response, asked once
    assert result.by_turn is not None and result.by_turn.keys == ("length", "judge_yes", "judge_unparsed", "judge_error")
    assert [(since, v is fairtalk.Verdict.DIFFERENT) for since, v in _verdicts(result, "judge_yes")] == [
        (0, False),
        (1, False),
        (2, True),
        (3, True),
        (4, True),
    ]
    assert result.measure("judge_yes").b > result.measure("judge_yes").a == 0


def _by_turn_table(result: fairtalk.AuditResult) -> dict[str, object]:
    assert result.by_turn is not None
    return result.by_turn.to_dict()


def test_by_turn_on_ray_reads_the_workers_scores_and_equals_the_local_table(
    cluster: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = write_chats(tmp_path / "chats.jsonl")
    models = tmp_path / "varied.py"
    models.write_text(VARIED)
    scored_here: list[str] = []
    original = Length.score

    def counted(self: Length, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        scored_here.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(Length, "score", counted)  # in this process only: Ray's workers score with their own
    options = {
        "corpus": corpus,
        "axes": "gender",
        "model": f"python:{models}:varied",
        "measures": "offense,length,diversity",
        "n_resamples": 200,
        "scorer_check": False,
        "by_turn": True,
    }
    engine = RayEngine(num_actors=2, score_batch=5)
    on_ray = fairtalk.audit(**options, engine=engine, out_dir=tmp_path / "ray").results["gender"]  # type: ignore[arg-type]
    assert on_ray.provenance.scoring_engine is not None and on_ray.provenance.scoring_engine.name == "ray"
    assert scored_here == []  # no response was scored in this process, by turn included
    local = fairtalk.audit(**options, out_dir=tmp_path / "local").results["gender"]  # type: ignore[arg-type]
    assert local.provenance.scoring_engine is not None and local.provenance.scoring_engine.name == "local"
    assert len(scored_here) == len(set(scored_here)) == local.provenance.scoring_engine.distinct_responses
    assert _by_turn_table(on_ray) == _by_turn_table(local)
    assert [m.to_dict() for m in on_ray.measures] == [m.to_dict() for m in local.measures]
    assert [since for since, v in _verdicts(local, "offense_rate") if v is fairtalk.Verdict.DIFFERENT] == [2, 3, 4]
