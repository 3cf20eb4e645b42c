"""The labelling page shows the annotators' agreement: κ from the same code as ``fairtalk label --agreement``."""

from __future__ import annotations

import json
from pathlib import Path

from fairtalk.gold import GoldLog, LabelServer, agreement, draw_sample, label_schemes


def _log(folder: Path, gold: Path, annotator: str) -> GoldLog:
    return GoldLog(gold, draw_sample(folder, n=20, seed=3), label_schemes("offense_rate"), annotator=annotator)


def test_one_annotator_shows_no_agreement_two_show_cohens_kappa_over_the_items_in_common(
    axis_folder: Path, tmp_path: Path
) -> None:
    gold = tmp_path / "gold.jsonl"
    ann = _log(axis_folder, gold, "ann")
    server = LabelServer(ann)
    try:
        assert server.state()["agreement"] == []  # nothing labelled yet
        for step, value in enumerate([1, 0, 1, 1, 0, 0, 1, 0]):
            ann.add(step, value)
        assert server.state()["agreement"] == []  # one annotator: no κ
        bo = _log(axis_folder, gold, "bo")
        for step, value in enumerate([1, 0, 0, 1, 0, 1]):
            bo.add(step, value)
        shown = server.state()["agreement"]
        (expected,) = agreement([gold])
        assert shown == [
            {
                "field": "offense_rate",
                "method": "cohen",
                "kappa": round(expected.kappa, 3),
                "n_items": 6,
                "annotators": ["ann", "bo"],
            }
        ]
        assert expected.n_items == 6 and abs(expected.kappa - 0.333) < 1e-3
        page = server.render("n")
        assert "offense_rate: Cohen&#39;s κ 0.333 over 6 items labelled in common by ann, bo" in page
        state = json.loads(page.split('id="state">', 1)[1].split("</script>", 1)[0])
        assert state["agreement"] == shown
        carl = _log(axis_folder, gold, "carl")
        for step, value in enumerate([1, 0, 1]):
            carl.add(step, value)
        (three,) = server.state()["agreement"]
        assert three["method"] == "fleiss" and three["n_items"] == 3 and three["annotators"] == ["ann", "bo", "carl"]
    finally:
        server.server_close()
