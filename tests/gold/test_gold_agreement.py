"""Agreement between annotators: Cohen's κ as sklearn computes it, Fleiss' κ as statsmodels (and Fleiss, 1971) do."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fairtalk.errors import InputError
from fairtalk.gold import agreement


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_cohens_kappa_matches_sklearn_on_a_known_example(tmp_path: Path) -> None:
    """Wikipedia's example: 50 items, both yes 20, yes/no 5, no/yes 10, both no 15: κ = 0.4."""
    from sklearn.metrics import cohen_kappa_score

    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    first = _write(
        tmp_path / "a.jsonl",
        [{"pair_id": f"p{i}", "side": "a", "offense_rate": v, "annotator": "ann", "note": ""} for i, v in enumerate(a)],
    )
    # the second annotator labelled two more items, and in another order: only the 50 both labelled count
    rows = [{"pair_id": f"p{i}", "side": "a", "offense_rate": v, "annotator": "bo"} for i, v in enumerate(b)][::-1]
    second = _write(
        tmp_path / "b.jsonl", rows + [{"pair_id": "extra", "side": side, "offense_rate": 1, "annotator": "bo"} for side in "ab"]
    )
    (result,) = agreement([first, second])
    assert result.method == "cohen" and result.n_items == 50 and result.annotators == ("ann", "bo")
    assert result.kappa == pytest.approx(cohen_kappa_score(a, b)) and result.kappa == pytest.approx(0.4)
    assert result.observed == pytest.approx(35 / 50)


def test_fleiss_kappa_matches_the_published_example(tmp_path: Path) -> None:
    """Fleiss (1971) as on Wikipedia: 10 items, 14 raters, 5 categories: κ = 0.210; one file, 14 annotators."""
    from statsmodels.stats.inter_rater import fleiss_kappa

    counts = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    rows = []
    for item, row in enumerate(counts):
        labels = [category + 1 for category, k in enumerate(row) for _ in range(k)]
        rows += [{"id": item, "label": label, "annotator": f"r{rater}"} for rater, label in enumerate(labels)]
    (result,) = agreement([_write(tmp_path / "gold.jsonl", rows)])
    assert result.method == "fleiss" and result.n_items == 10 and len(result.annotators) == 14
    assert result.kappa == pytest.approx(fleiss_kappa(counts)) and round(result.kappa, 3) == 0.210


def test_one_name_in_two_files_is_two_annotators_and_one_annotator_is_an_error(tmp_path: Path) -> None:
    rows = [{"id": i, "label": i % 2, "annotator": "ann"} for i in range(6)]
    a, b = _write(tmp_path / "a.jsonl", rows), _write(tmp_path / "b.jsonl", rows)
    (result,) = agreement([a, b])
    assert result.annotators == ("ann (a.jsonl)", "ann (b.jsonl)") and result.kappa == pytest.approx(1.0)
    unnamed = _write(tmp_path / "c.jsonl", [{"id": i, "label": 1 - i % 2} for i in range(6)])
    (result,) = agreement([a, unnamed])
    assert result.annotators == ("ann", "c.jsonl") and result.kappa == pytest.approx(-1.0)
    with pytest.raises(InputError, match="at least two annotators"):
        agreement([a])


def test_kappa_is_nan_where_every_label_is_the_same(tmp_path: Path) -> None:
    rows = [{"id": i, "label": 0, "annotator": who} for i in range(5) for who in ("a", "b")]
    (result,) = agreement([_write(tmp_path / "g.jsonl", rows)])
    assert math.isnan(result.kappa) and result.observed == 1.0


def test_labels_outside_the_scheme_are_left_out_of_kappa_and_counted(tmp_path: Path) -> None:
    """score --gold leaves a 7 for the yes/no offense_rate out; agreement once counted it as an eighth category."""
    from sklearn.metrics import cohen_kappa_score

    a = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    b = [1, 0, 0, 0, 1, 0, 1, 0, 7, 7]
    first = _write(
        tmp_path / "a.jsonl", [{"pair_id": f"p{i}", "side": "a", "offense_rate": v, "annotator": "ann"} for i, v in enumerate(a)]
    )
    second = _write(
        tmp_path / "b.jsonl", [{"pair_id": f"p{i}", "side": "a", "offense_rate": v, "annotator": "bo"} for i, v in enumerate(b)]
    )
    (result,) = agreement([first, second])
    assert result.n_items == 8 and result.kappa == pytest.approx(cohen_kappa_score(a[:8], b[:8]))
    assert [(label.id, label.value, label.annotator) for label in result.left_out] == [("p8", 7, "bo"), ("p9", 7, "bo")]
    assert result.allowed == (0, 1)
    only_sevens = _write(
        tmp_path / "c.jsonl", [{"pair_id": f"p{i}", "side": "a", "offense_rate": 7, "annotator": "cy"} for i in range(10)]
    )
    (result,) = agreement([first, only_sevens])
    assert math.isnan(result.kappa) and result.n_items == 0 and len(result.left_out) == 10
    assert result.annotators == ("ann", "cy")


def _texts_rows(who: str, labels: list[int], text: str) -> list[dict]:
    return [
        {"pair_id": f"p{i // 2}", "side": "ab"[i % 2], "offense_rate": v, "annotator": who, "note": "", "text": f"{text} {i}"}
        for i, v in enumerate(labels)
    ]


def test_files_labelling_other_texts_of_the_same_ids_are_refused(tmp_path: Path) -> None:
    """Two bots' answers to the same pair ids once gave κ 1.000 "between annotators": they are not the same items."""
    labels = [1, 0, 0, 1, 1, 0, 1, 0]
    first = _write(tmp_path / "a.jsonl", _texts_rows("ann", labels, "echo"))
    second = _write(tmp_path / "b.jsonl", _texts_rows("bo", labels, "other bot"))
    with pytest.raises(InputError, match=r"8 labelled item\(s\) hold another text in .*b\.jsonl than in .*a\.jsonl") as info:
        agreement([first, second])
    assert "first: pair p0 side a, labelled 'echo 0' there and 'other bot 0' here" in str(info.value)
    rows = _texts_rows("bo", labels, "echo")
    rows[5]["text"] = "changed"  # one item's text differs: still not one sample
    with pytest.raises(InputError, match=r"1 labelled item\(s\) hold another text"):
        agreement([first, _write(tmp_path / "c.jsonl", rows)])
    (result,) = agreement([first, _write(tmp_path / "d.jsonl", _texts_rows("bo", labels, "echo"))])  # the same texts
    assert result.n_items == 8 and result.kappa == pytest.approx(1.0)


def test_files_without_texts_are_checked_by_their_sample_records(tmp_path: Path) -> None:
    rows = [{"id": i, "label": i % 2, "annotator": "ann"} for i in range(6)]
    a, b = _write(tmp_path / "a.jsonl", rows), _write(tmp_path / "b.jsonl", [{**r, "annotator": "bo"} for r in rows])
    for path, name, sha in ((a, "completions.jsonl", "1" * 64), (b, "comp2.jsonl", "2" * 64)):
        record = {"fairtalk_label_sample": 1, "kind": "texts", "input": name, "input_sha256": sha, "measures": ["regard"]}
        (tmp_path / f"{path.name}.sample.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(InputError, match=r"b\.jsonl labels another input than .*a\.jsonl \(its sample record: comp2\.jsonl"):
        agreement([a, b])
    record = json.loads((tmp_path / "b.jsonl.sample.json").read_text(encoding="utf-8"))
    (tmp_path / "b.jsonl.sample.json").write_text(json.dumps({**record, "input_sha256": "1" * 64}), encoding="utf-8")
    (result,) = agreement([a, b])  # one input: the same items
    assert result.field == "regard" and result.n_items == 6


def test_files_with_no_label_field_in_common_are_an_error(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", [{"pair_id": "p0", "side": s, "offense_rate": 1, "annotator": "ann"} for s in "ab"])
    b = _write(tmp_path / "b.jsonl", [{"pair_id": "p0", "side": s, "refusal_rate": 0, "annotator": "bo"} for s in "ab"])
    with pytest.raises(InputError, match=r"no label field in common \(a\.jsonl: offense_rate; b\.jsonl: refusal_rate\)"):
        agreement([a, b])
