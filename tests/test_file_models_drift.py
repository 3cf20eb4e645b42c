"""The file models (``results/_file_models.py``) name exactly the keys the records write: the two declarations of ``results.json`` and ``run.json`` cannot drift apart.

The records declare the files once (``to_dict()``, by the codec); the pydantic models declare them a
second time, with bounds, for validation and the published JSON Schema. Each model that describes a
record is checked, in the published schema (``docs/reference/*.schema.json``, which
``tests/test_result_schema.py`` holds equal to the models), against the keys real records write
(from real runs here: an audit by turn with a judge and masked groups, a sequential audit, a score
with gold labels), so a key added to a record without its model (or left in a model after the
record dropped it) fails here. (``PromptsFile`` and ``PlanningFile`` describe only what ``compare``
and ``plan --results`` read of their files, and are not published.)
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

import fairtalk
from fairtalk.results import AuditProvenance, ScoringEngine, ServedProvenance, TruncationProvenance
from test_by_turn import _LOGIC, PLANTED, write_chats
from test_by_turn_scores import JUDGE
from test_score_gold import _gold, _responses

Objects = Callable[[dict[str, list[dict[str, Any]]]], Iterable[dict[str, Any]]]
REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference"


def _published(file: str) -> dict[str, Any]:
    return json.loads((REFERENCE / file).read_text(encoding="utf-8"))


#: Each published model (a ``$defs`` entry, or the file's own object) by name.
MODELS: dict[str, dict[str, Any]] = {
    **_published("results.schema.json")["$defs"],
    **_published("run.schema.json")["$defs"],
    "RunFile": _published("run.schema.json"),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """The JSON of real results (as written, through JSON text): ``audit`` results.json objects, ``run`` run.json objects."""
    tmp = tmp_path_factory.mktemp("drift")
    corpus = write_chats(tmp / "chats.jsonl")
    judge = tmp / "judge.py"
    judge.write_text(JUDGE.format(log=str(tmp / "asked.log")))
    model = _LOGIC["reply"]
    measures = ["length", "offense", "diversity", f"judge:python:{judge}:answer"]  # diversity: corpus_differing_pairs
    turned = fairtalk.audit(
        corpus=corpus, axes="gender", model=model, measures=measures, n_resamples=100, by_turn=True, mask_groups=True
    )  # type: ignore[arg-type]
    planted = tmp / "planted.py"  # a python: model file: the run records its resolved target
    planted.write_text(PLANTED, encoding="utf-8")
    looked = fairtalk.audit(
        corpus=corpus,
        axes="gender",
        model=f"python:{planted}:reply",
        measures="length",
        n_resamples=100,
        until_decided=True,
        n_pairs=8,
        max_pairs=24,
    )
    responses = _responses(tmp / "responses.jsonl")
    labelled = fairtalk.score(
        responses,
        axis="gender",
        measures="offense",
        n_resamples=100,
        gold=str(_gold(tmp / "gold.jsonl", responses, 80, truth="none")),
    )
    runs = [json.loads(run.to_json()) for run in (turned, looked)]
    audits = [json.loads(labelled.to_json()), *(axis["result"] for run in runs for axis in run["axes"].values())]
    # a clustered audit that lost pairs tallies them by dialogue: hand-filled, as no run here loses a pair
    audits.append(json.loads(dataclasses.replace(labelled, lost_by_dialogue=((4, 0, 4, 0, 1), (4, 0, 0, 0, 2))).to_json()))
    # and one whose answers were empty on a side tallies those by dialogue too
    audits.append(json.loads(dataclasses.replace(labelled, empty_by_dialogue=((4, 0, 4, 0, 1), (4, 1, 0, 0, 2))).to_json()))
    # keys no run here reaches (a custom lexicon's copy, answers cut at the token limit, scoring on Ray, a server naming the
    # model that answered): the records hand-filled
    provenance = labelled.provenance
    assert provenance.lexicon is not None
    filled = dataclasses.replace(
        provenance,
        lexicon=dataclasses.replace(provenance.lexicon, text="he she\n", text_sha256="0" * 64),
        truncation=TruncationProvenance(True, False, 10, {"a": 1, "b": 0}, {"a": 0.1, "b": 0.0}, 0.05, True, 0),
        scoring_engine=ScoringEngine("ray", 3, 2, 2, 64),
        audit=dataclasses.replace(
            provenance.audit or AuditProvenance(), served=ServedProvenance("llama-3.1-8b", {"qwen2.5-0.5b": 18}, 2)
        ),
    )
    return {
        "audit": audits,
        "run": runs,
        "manifest": [a["manifest"] for a in audits] + [json.loads(json.dumps(filled.to_dict()))],
    }


def _measures(w: dict[str, list[dict[str, Any]]]) -> Iterable[dict[str, Any]]:
    return (m for a in w["audit"] for m in a["measures"].values())


def _pairs(w: dict[str, list[dict[str, Any]]]) -> Iterable[dict[str, Any]]:
    return (p for a in w["audit"] for p in a["divergent_pairs"])


def _buckets(w: dict[str, list[dict[str, Any]]]) -> Iterable[dict[str, Any]]:
    return (b for a in w["audit"] if "by_turn" in a for b in a["by_turn"]["buckets"])


def _sections(name: str) -> Objects:
    return lambda w: (m[name] for m in w["manifest"] if m.get(name))


def _axes(w: dict[str, list[dict[str, Any]]]) -> Iterable[dict[str, Any]]:
    return (axis for run in w["run"] for axis in run["axes"].values())


#: Each model, the objects of the records it describes, and the keys written beside the record by another writer.
CASES: list[tuple[str, Objects, frozenset[str]]] = [
    ("AuditResultFile", lambda w: w["audit"], frozenset()),
    ("Measure", _measures, frozenset()),
    ("Masked", lambda w: (m["masked"] for m in _measures(w) if "masked" in m), frozenset()),
    ("PPI", lambda w: (m["ppi"] for m in _measures(w) if "ppi" in m), frozenset()),
    ("ScorerCheck", lambda w: (c for a in w["audit"] for c in a["scorer_check"].values()), frozenset()),
    ("DivergentPair", _pairs, frozenset()),
    ("JudgeAnswer", lambda w: (j for p in _pairs(w) for j in p["judged"]), frozenset()),
    ("ByTurn", lambda w: (a["by_turn"] for a in w["audit"] if "by_turn" in a), frozenset()),
    ("TurnBucket", _buckets, frozenset()),
    ("TurnGap", lambda w: (g for b in _buckets(w) for g in b["gaps"]), frozenset()),
    ("Manifest", lambda w: w["manifest"], frozenset()),
    ("LexiconRecord", _sections("lexicon"), frozenset()),
    ("ManifestMeasure", lambda w: (x for m in w["manifest"] for x in m.get("measures") or ()), frozenset()),
    ("ScoringOptions", _sections("options"), frozenset()),
    ("InputRecord", _sections("input"), frozenset()),
    ("InputSource", lambda w: (s for i in _sections("input")(w) for s in i.get("sources") or ()), frozenset()),
    ("ScoringEngineRecord", _sections("scoring_engine"), frozenset()),
    ("GoldRecord", _sections("gold"), frozenset()),
    ("TruncationRecord", _sections("truncation"), frozenset()),
    ("AuditRecord", _sections("audit"), frozenset()),
    ("ServedRecord", lambda w: (a["served"] for a in _sections("audit")(w) if "served" in a), frozenset()),
    ("SequentialRecord", lambda w: (a["sequential"] for a in _sections("audit")(w) if "sequential" in a), frozenset()),
    ("RunFile", lambda w: w["run"], frozenset({"generator"})),  # the report marks the run.json it writes
    ("RunAxis", _axes, frozenset({"files"})),  # and lists each axis's files
    ("Generation", lambda w: (axis["generation"] for axis in _axes(w)), frozenset()),
]


def drift(model: str, objects: Iterable[dict[str, Any]], beside: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """The keys records write that the published ``model`` does not declare, and those it declares that no record writes."""
    seen: set[str] = set()
    n = 0
    for obj in objects:
        seen |= set(obj)
        n += 1
    assert n, f"no record of {model} was written"
    declared = set(MODELS[model]["properties"]) - beside
    return {"undeclared": sorted(seen - declared), "unwritten": sorted(declared - seen)}


@pytest.mark.parametrize(("model", "objects", "beside"), CASES, ids=[case[0] for case in CASES])
def test_a_file_model_declares_exactly_the_keys_its_record_writes(
    written: dict[str, list[dict[str, Any]]], model: str, objects: Objects, beside: frozenset[str]
) -> None:
    assert drift(model, objects(written), beside) == {"undeclared": [], "unwritten": []}


def test_a_key_added_to_a_record_without_its_model_is_found(written: dict[str, list[dict[str, Any]]]) -> None:
    measures = [{**m, "new_key": 1.0} for m in _measures(written)]
    assert drift("Measure", measures)["undeclared"] == ["new_key"]
    assert drift("Measure", ({k: v for k, v in m.items() if k != "mde"} for m in _measures(written)))["unwritten"] == ["mde"]
