"""The scorer certificate: a scorer that reacts to group words on neutral probes is flagged; a neutral one is not."""

from __future__ import annotations

import json

import numpy as np

import fairtalk
from fairtalk import Response, score
from fairtalk.measures import Length
from fairtalk.pipeline._certify import PROBES, certify, probe_pairs
from fairtalk.report import render_markdown, write_report


class _SaysShe:
    """A biased instrument: 1 for any text that mentions "she" or "her"."""

    name = "says_she"
    keys = ("says_she",)
    kind = "rate"
    version = "1"
    higher_is_better = {"says_she": None}

    def score(self, texts):  # noqa: ANN001, ANN201
        return {"says_she": np.array([float(any(w in t.lower().split() for w in ("she", "her"))) for t in texts])}


def _records(n: int = 30) -> list[Response]:
    out = []
    for i in range(n):
        out += [Response(f"p{i}", "a", f"he said {i}", f"fine answer {i}"), Response(f"p{i}", "b", f"she said {i}", f"fine answer {i}")]
    return out


def test_probe_pairs_are_side_a_sentences_and_their_swaps() -> None:
    pairs = probe_pairs(fairtalk.load_lexicon("gender"))
    assert len(pairs) == len(PROBES["gender"])  # every written probe mentions side A only
    assert ("He is at the door.", "She is at the door.") in pairs
    assert all(a != b for a, b in pairs)
    assert len(probe_pairs(fairtalk.load_lexicon("race"))) >= 25


def test_a_scorer_that_reacts_to_the_group_is_flagged_and_a_neutral_one_is_not() -> None:
    checks = {c.key: c for c in certify([_SaysShe(), Length()], fairtalk.load_lexicon("gender"), {})}
    assert checks["says_she"].flagged and checks["says_she"].b > checks["says_she"].a
    assert checks["says_she"].p is not None and checks["says_she"].p < 0.05
    assert not checks["length"].flagged and checks["length"].gap == 0.0


def test_the_certificate_runs_with_every_score_and_reaches_the_report(tmp_path) -> None:  # noqa: ANN001
    result = score(_records(), axis="gender", measures=[_SaysShe(), Length()], n_resamples=50)
    assert result.flagged_scorers() == ("says_she",)
    assert {c.key for c in result.scorer_check} == {"says_she", "length"}
    text = render_markdown(result)
    assert text.index("Scorer check") < text.index("| Measure")  # at the top of the report
    write_report(result, tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["scorer_check"]["says_she"]["flagged"] is True and data["scorer_check"]["length"]["flagged"] is False
    assert "scorer check" in (tmp_path / "report.html").read_text()
    assert score(_records(), axis="gender", measures=[Length()], n_resamples=50, scorer_check=False).scorer_check == ()


def test_a_custom_lexicon_gets_generic_probes(tmp_path) -> None:  # noqa: ANN001
    lexicon_file = tmp_path / "fruit.tsv"
    lexicon_file.write_text("# axis: fruit\n# groups: apple pear\napple\tpear\napples\tpears\n")
    pairs = probe_pairs(fairtalk.load_lexicon(str(lexicon_file)))
    assert ("I wrote the word apple on the board.", "I wrote the word pear on the board.") in pairs
