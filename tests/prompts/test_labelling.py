"""Tests for fairtalk.prompts._labelling: ``fairtalk.analyze_prompts`` and its labelling policy."""

from __future__ import annotations

import json

import pandas as pd

import fairtalk
from fairtalk.prompts import GroupPair, GroupSet, analyze, read_completions
from fairtalk.report import jsonable, write_prompts_report

GROUPS = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
FAST = {"n_draws": 3, "n_resamples": 0}


def _same(a, b) -> bool:
    """Equal results.json content (NaN equal to NaN)."""
    return json.dumps(jsonable(a.to_dict())) == json.dumps(jsonable(b.to_dict()))


def _completions(path, *, labelled: bool):
    texts = ("was kind and loved by all.", "was a thief and a liar.", "worked as a cook.")
    rows = []
    for group in GROUPS.groups:
        for structure in ("original", "wh_question"):
            for seed, text in enumerate(texts):
                prompt = f"The {group}"
                row = {
                    "group": group,
                    "template": "was known for",
                    "structure": structure,
                    "seed": seed,
                    "prompt": prompt,
                    "completion": f" {text}",
                    "text": f"{prompt} {text}",
                }
                if labelled:
                    row["label"] = (1, -1, 0)[seed]
                rows.append(row)
    rows.append({**rows[0], "seed": 9, "completion": "", "text": "The man"})  # empty: left out by the reader
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_published_labels_are_used_as_they_are(published, tmp_path) -> None:
    data = fairtalk.read_published(published, n_paraphrases=2)
    result = fairtalk.analyze_prompts(data, **FAST)
    assert _same(result, analyze(data.frame, parses=dict(data.parses), **FAST)) and result.parses
    assert result.data_summary == data.data_summary and result.frame is data.frame
    assert result.scorer_check is None and result.relabelled is None
    written = write_prompts_report(result, tmp_path / "out", formats=("json",))
    payload = json.loads(written["json"].read_text())
    assert payload["import"] == data.summary() and "note" in payload["scorer_check"]


def test_unlabelled_completions_are_labelled_and_the_scorer_certified(tmp_path) -> None:
    data = read_completions(_completions(tmp_path / "c.jsonl", labelled=False))
    assert data.data_summary.n_unlabelled == 12 and data.data_summary.excluded == {"empty": 1}
    result = fairtalk.analyze_prompts(data, groups=GROUPS, **FAST)
    assert result.data_summary.labelled_with == "builtin" and result.data_summary.n_unlabelled == 12
    assert (result.frame["label"] != -9).all() and (data.frame["label"] == -9).all()  # a new frame
    assert result.scorer_check is not None and set(result.scorer_check.pairs) == {"gender"}
    assert result.data_summary.to_dict() == {
        "n_records": 13,
        "n_failed": 0,
        "n_unlabelled": 12,
        "n_empty": 1,
        "n_echo": 0,
        "n_duplicates": 0,
        "prompts_sha256": data.data_summary.prompts_sha256,
        "regard": "builtin",
    }
    assert data.data_summary.prompts_sha256 is not None


def test_relabel_analyses_the_same_rows_with_the_scorer_beside_the_given_labels(tmp_path) -> None:
    data = read_completions(_completions(tmp_path / "c.jsonl", labelled=True))
    plain = fairtalk.analyze_prompts(data, groups=GROUPS, **FAST)
    assert plain.data_summary.labelled_with is None and plain.scorer_check is None
    result = fairtalk.analyze_prompts(data, groups=GROUPS, relabel=True, **FAST)
    assert _same(result, plain)  # the given labels stay the main ones
    assert result.relabelled is not None and result.relabelled_with == "builtin"
    assert result.relabelled.data.n_rows == result.data.n_rows == 12
    assert result.data_summary.to_dict()["relabelled_with"] == "builtin" and result.scorer_check is not None
    written = write_prompts_report(result, tmp_path / "out", formats=("json",))
    payload = json.loads(written["json"].read_text())
    assert payload["relabelled"]["scorer"] == "builtin" and payload["import"]["relabelled_with"] == "builtin"


def test_a_frame_is_analysed_as_prompt_data() -> None:
    rows = pd.DataFrame(
        [
            {"group": g, "template": "t", "structure": s, "seed": k, "label": (k % 3) - 1}
            for g in GROUPS.groups
            for s in ("original", "x")
            for k in range(6)
        ]
    )
    result = fairtalk.analyze_prompts(rows, groups=GROUPS, **FAST)
    assert result.data_summary.source == "frame" and result.data_summary.n_texts == 24
    assert result.regard["man"].n == 12 and result.gaps["gender"].all == 0.0


def test_records_are_read_only() -> None:
    import pytest

    rows = pd.DataFrame([{"group": g, "template": "t", "structure": "original", "seed": 0, "label": 1} for g in GROUPS.groups])
    result = fairtalk.analyze_prompts(rows, groups=GROUPS, **FAST)
    with pytest.raises(TypeError):
        result.gaps["gender"] = result.gaps["gender"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        result.gaps["gender"].all = 1.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        result.kl = result.baseline_kl  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.gaps["gender"]["all"]  # type: ignore[index]  # records, not dicts: no item access


def test_labelling_reports_its_progress_in_blocks() -> None:
    from fairtalk.measures import Regard
    from fairtalk.prompts import label_completions
    from fairtalk.prompts._completions import LABEL_BLOCK

    n = LABEL_BLOCK + 10
    frame = pd.DataFrame({"group": ["man"] * n, "text": [f"The man was kind {i}." for i in range(n)], "label": [-9] * n})
    events: list = []
    labelled = label_completions(frame, Regard(scorer="builtin:tfidf"), progress=events.append)
    assert len(labelled) == n and set(labelled["label"]) <= {-1, 0, 1, 2}
    assert [(e.stage, e.done, e.total, e.finished) for e in events] == [
        ("regard labels", 0, n, False),
        ("regard labels", LABEL_BLOCK, n, False),
        ("regard labels", n, n, False),
        ("regard labels", n, n, True),
    ]


def test_labelling_labels_each_distinct_text_once_with_the_same_labels(monkeypatch) -> None:
    """Review finding: 30,000 completions of which 3,000 distinct were all labelled (stopped at 573 s, nothing written)."""
    from fairtalk.lexicons import identity_terms
    from fairtalk.measures import Regard
    from fairtalk.prompts import label_completions

    endings = [" a nurse, loved by all.", " rude to strangers.", " a clerk at the store.", " a thief.", " kind and patient."]
    rows = [
        {"group": g, "text": f"The {g} worked as{endings[(k * 7 + len(g)) % 5]}", "label": -9 if k % 4 else 1}
        for g in ("man", "woman")
        for k in range(300)
    ]
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=0).reset_index(drop=True)
    seen: list[str] = []
    original = Regard.labels

    def counting(self: Regard, texts):
        seen.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(Regard, "labels", counting)
    events: list = []
    labelled = label_completions(frame, Regard(scorer="builtin:tfidf"), progress=events.append)
    assert sorted(seen) == sorted(set(frame["text"])) and len(seen) == 10  # each distinct text once
    assert events[-1].total == 10
    # the same labels as labelling every row, in the frame's order
    expected = original(Regard(scorer="builtin:tfidf", mask_terms=identity_terms(["man", "woman"])), frame["text"].tolist())
    assert labelled["label"].tolist() == list(expected) and labelled["text"].tolist() == frame["text"].tolist()
    seen.clear()
    kept = label_completions(frame, Regard(scorer="builtin:tfidf"), only_missing=True)
    todo = (frame["label"] == -9).to_numpy()
    assert kept["label"][~todo].tolist() == [1] * int((~todo).sum())  # labels that came with the rows stay
    assert kept["label"][todo].tolist() == list(expected[todo]) and len(seen) == len(set(frame["text"][todo]))
