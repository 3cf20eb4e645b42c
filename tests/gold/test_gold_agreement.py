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
