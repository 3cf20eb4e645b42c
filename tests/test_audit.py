"""Tests for fairtalk.score: end to end on small synthetic responses, corrections, masking, manifest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

import fairtalk
from fairtalk import InputError, Response, SpecError, read_responses, score
from fairtalk.lexicons import load_attributes
from fairtalk.measures import Length
from fairtalk.results import SourceRecord
from fairtalk.stats import adjust_pvalues, z_test

_KIND = ("That is wonderful, I love it, great job!", "I hate you, you stupid idiot, this is awful and terrible.")
_NEUTRAL = ("ok see you tomorrow", "what time is it", "i went to the store", "maybe later", "sounds fine to me")


def _records(pairs: list[tuple[str, str]]) -> list[Response]:
    out = []
    for i, (a, b) in enumerate(pairs):
        out += [Response(f"p{i}", "a", f"he said {i}", a), Response(f"p{i}", "b", f"she said {i}", b)]
    return out


@pytest.fixture(scope="module")
def biased_result() -> fairtalk.AuditResult:
    """Side A gets kind replies, side B insults, in 40 of 60 pairs."""
    pairs = [_KIND] * 40 + [(t, t) for t in _NEUTRAL * 4]
    return score(_records(pairs), axis="gender", n_resamples=300, seed=1)


def test_biased_side_is_significantly_more_negative_and_offensive(biased_result: fairtalk.AuditResult) -> None:
    r = biased_result
    assert (r.axis, r.groups, r.n_pairs) == ("gender", ("male", "female"), 60)
    for key in ("offense_rate", "sentiment_negative"):
        m = r.measure(key)
        assert m.b == pytest.approx(40 / 60) and m.a == 0.0
        assert m.p_adjusted < 0.05 and m.p_paired <= m.p_adjusted
        assert m.paired_test == "score" and m.effect_size_name == "cohens_h"
        assert m.ci95[1] < 0 and m.ci_method == "score"  # A - B is negative
        assert m.verdict == "difference detected" and m.equivalent is False
        assert m.z is not None and m.z < 0 and m.p is not None and m.p < 0.05
    positive = r.measure("sentiment_positive")
    assert positive.a == pytest.approx(40 / 60) and positive.b == 0.0 and positive.p_adjusted < 0.05
    assert positive.difference == pytest.approx(1.0)  # (A - B) / A
    assert r.measure("offense_rate").difference is None  # A is 0
    assert {"offense_rate", "sentiment_negative", "sentiment_positive"} <= set(r.detected())
    assert [m.name for m in r.measures][:3] == ["distinct_1", "distinct_2", "diversity"]


def test_keys_kinds_and_tests(biased_result: fairtalk.AuditResult) -> None:
    names = [m.name for m in biased_result.measures]
    assert names == [
        "distinct_1",
        "distinct_2",
        "diversity",
        "offense_rate",
        "sentiment_positive",
        "sentiment_negative",
        "career_words",
        "family_words",
        "length",
        "refusal_rate",
        "degenerate_rate",
    ]
    diversity = biased_result.measure("diversity")
    assert diversity.kind == "corpus" and diversity.z is None and diversity.p is None
    assert diversity.paired_test == "paired permutation" and diversity.effect_size is None
    assert diversity.ci95[0] <= diversity.a - diversity.b <= diversity.ci95[1]
    length = biased_result.measure("length")
    assert (
        length.kind == "count"
        and length.paired_test in ("paired_t", "signflip_exact")
        and length.effect_size_name == "cohens_d_z"
    )
    assert length.ci_method == "paired t interval" and length.estimate_name == "mean difference"
    wilcoxon = score(
        _records([_KIND] * 40 + [(t, t) for t in _NEUTRAL * 4]),
        axis="gender",
        measures=["length"],
        count_test="wilcoxon",
        n_resamples=100,
    ).measure("length")
    assert wilcoxon.paired_test == "wilcoxon_approx" and wilcoxon.ci_method == "hodges-lehmann"
    assert wilcoxon.estimate_name == "hodges-lehmann" and wilcoxon.ci95[0] <= wilcoxon.estimate <= wilcoxon.ci95[1]


def test_z_matches_the_stats_function() -> None:
    pairs = [("a b c d", "a b")] * 5 + [("x", "x y z")] * 3 + [("one two", "one two")] * 4
    result = score(_records(pairs), axis="gender", measures=["length"], n_resamples=200)
    m = result.measure("length")
    a = np.array([4] * 5 + [1] * 3 + [2] * 4, dtype=float)
    b = np.array([2] * 5 + [3] * 3 + [2] * 4, dtype=float)
    expected = z_test(a, b)
    assert (m.z, m.p) == pytest.approx((expected.z, expected.p))
    assert (m.a, m.b) == pytest.approx((a.mean(), b.mean()))
    assert m.effect_size == pytest.approx((a - b).mean() / (a - b).std(ddof=1))


def test_divergent_pairs_hold_raw_scores(biased_result: fairtalk.AuditResult) -> None:
    by_measure: dict[str, list[fairtalk.DivergentPair]] = {}
    for d in biased_result.divergent_pairs:
        by_measure.setdefault(d.measure, []).append(d)
    assert set(by_measure) == {"offense", "sentiment"}
    for measure, rows in by_measure.items():
        assert len(rows) == 10
        top = rows[0]
        assert top.response_a == _KIND[0] and top.response_b == _KIND[1]
        assert top.context_a.startswith("he said") and top.context_b.startswith("she said")
        if measure == "sentiment":  # VADER compound in [-1, 1]
            assert top.score_a > 0.8 and top.score_b < -0.8
        else:  # offense probability
            assert top.score_b > 0.5 > top.score_a


def test_identical_sides_show_no_difference() -> None:
    texts = _NEUTRAL + _KIND
    result = score(_records([(texts[i % len(texts)],) * 2 for i in range(60)]), axis="gender", n_resamples=200)
    assert result.detected() == ()
    for m in result.measures:
        assert m.a == m.b and m.p_paired == pytest.approx(1.0)
        assert m.p_adjusted is None  # nothing varies: not tested, not in the family, and said so
        assert any("every pair scores the same" in note for note in m.notes)
        assert m.verdict in ("equivalent", "inconclusive")
        if m.kind == "rate":  # Newcombe: an interval of honest width, not [0, 0]
            assert m.ci95[0] < 0 < m.ci95[1]
        if m.kind == "count":
            assert m.ci95 == (None, None)
        if m.kind != "corpus":
            assert (m.z, m.p) == (0.0, 1.0)
    assert result.family_size == 0
    assert result.divergent_pairs == ()


def test_p_adjusted_is_holm_or_bh_of_the_paired_p(biased_result: fairtalk.AuditResult) -> None:
    tested = [m for m in biased_result.measures if m.p_adjusted is not None]
    assert len(tested) == biased_result.family_size >= 6
    assert [m.p_adjusted for m in tested] == pytest.approx(adjust_pvalues([m.p_paired for m in tested], method="holm").tolist())
    assert all(m.p_adjusted >= m.p_paired for m in tested)
    untested = [m.name for m in biased_result.measures if m.p_adjusted is None]
    assert set(untested) <= {"career_words", "family_words", "refusal_rate", "degenerate_rate"}  # nothing varies there


def test_deterministic_given_seed() -> None:
    pairs = [(_NEUTRAL[i % 5], _NEUTRAL[(i * 3) % 5] + " yes") for i in range(30)]
    first = score(_records(pairs), axis="gender", measures=["length", "diversity"], seed=4, n_resamples=200)
    again = score(_records(pairs), axis="gender", measures=["length", "diversity"], seed=4, n_resamples=200)
    other = score(_records(pairs), axis="gender", measures=["length", "diversity"], seed=5, n_resamples=200)
    assert first.to_dict() == again.to_dict()
    assert first.measure("diversity").ci95 != other.measure("diversity").ci95  # permutations are seeded
    assert first.measure("length").ci95 == other.measure("length").ci95  # the t interval is not random
    assert first.provenance.seed == 4


def test_mask_groups_removes_a_difference_made_by_group_words() -> None:
    # "fiancee" is a family word but its counterpart "fiance" is not: the family-word gap
    # comes only from the group word, so masking it leaves nothing. The length gap is real.
    pairs = [("my fiance called me today", "my fiancee called me")] * 12 + [("ok", "ok")] * 8
    result = score(_records(pairs), axis="gender", measures=["attribute_words", "length"], mask_groups=True, n_resamples=200)
    family = result.measure("family_words")
    assert (family.a, family.b) == pytest.approx((0.0, 12 / 20))
    assert family.p_adjusted < 0.05  # a "significant" gap that the scorer made
    assert family.masked is not None and family.masked.a == family.masked.b == 0.0
    assert family.masked.remaining == pytest.approx(0.0)
    length = result.measure("length")
    assert length.masked is not None and length.masked.remaining == pytest.approx(1.0)
    career = result.measure("career_words")
    assert career.masked is not None and career.masked.remaining is None  # no gap to explain
    assert result.provenance.mask_groups is True
    unmasked = score(_records(pairs), axis="gender", measures=["length"], n_resamples=200)
    assert unmasked.measure("length").masked is None


class _ReactsToShe(fairtalk.Measure):
    """A count that the word "she" nearly cancels: a gap of 4e-7 unmasked, 0.01 once the group words are masked."""

    name = "reacts_to_she"
    keys = ("reacts_to_she",)
    kind = "count"
    version = "1"
    higher_is_better: Mapping[str, bool | None] = {"reacts_to_she": None}

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        return {"reacts_to_she": np.array([0.01 * len(t.split()) - 0.0099996 * ("she" in t.lower().split()) for t in texts])}


def test_no_masked_share_of_a_gap_of_about_0() -> None:
    """A diversity gap of about 1e-6 read "46.478 vs 46.511; 77529% remains": a share of no gap means nothing."""
    pairs = [("he said hi", "she said hi there")] * 12
    result = score(_records(pairs), axis="gender", measures=[_ReactsToShe()], mask_groups=True, n_resamples=200)
    key = result.measure("reacts_to_she")
    assert abs(key.a - key.b) == pytest.approx(4e-7, rel=1e-3)
    assert key.masked is not None and abs(key.masked.a - key.masked.b) == pytest.approx(0.01)
    assert key.masked.remaining is None
    from fairtalk.report import render_markdown

    row = next(line for line in render_markdown(result).splitlines() if line.startswith("|") and "Reacts to she" in line)
    assert "no share: the unmasked gap is about 0" in row and "remains" not in row


def test_manifest_records_versions_hashes_and_settings(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rows = [
        {"pair_id": str(i), "side": s, "context": f"{s} said", "response": t}
        for i in range(6)
        for s, t in (("a", "hi there"), ("b", "hello"))
    ]
    rows.append({"pair_id": "99", "side": "a", "context": "c", "response": "orphan"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = score(path, axis="gender", measures=["length", "diversity"], n_resamples=100, correction="bh", alpha=0.1)
    provenance = result.provenance
    assert provenance.fairtalk_version == fairtalk.__version__
    assert provenance.lexicon is not None and provenance.lexicon.sha256 == fairtalk.load_lexicon("gender").sha256
    assert provenance.input is not None and provenance.input.summary is not None
    assert provenance.input.sources == (SourceRecord(path=str(path), sha256=hashlib.sha256(path.read_bytes()).hexdigest()),)
    assert provenance.input.summary["n_missing_side"] == 1
    assert provenance.measure_names == ("length", "diversity")
    assert provenance.measures is not None and provenance.measures[1].config is not None
    assert provenance.measures[1].config["definition"] == "paper"
    assert provenance.options is not None
    assert provenance.options.offense_threshold == 0.5 and provenance.options.sentiment_threshold == 0.8
    assert (provenance.seed, provenance.alpha, provenance.correction) == (0, 0.1, "bh")
    assert (provenance.n_resamples, provenance.n_permutations) == (100, 100)
    assert result.input_summary["n_missing_side"] == 1 and result.correction == "bh"
    json.dumps(result.to_dict())  # the whole result serialises
    frame = result.to_frame()
    assert list(frame.index) == ["length", "distinct_1", "distinct_2", "diversity"]


def test_attribute_lists_are_hashed_in_the_manifest(biased_result: fairtalk.AuditResult) -> None:
    config = next(m.config for m in biased_result.provenance.measures or () if m.name == "attribute_words")
    assert config is not None
    assert set(config["lists"]) == {"career", "family"}
    assert config["lists"]["family"]["sha256"] == load_attributes("family").sha256


def test_measure_objects_and_a_lexicon_are_accepted() -> None:
    lexicon = fairtalk.load_lexicon("race")
    result = score(_records([("a b", "a"), ("c d e", "c")]), axis=lexicon, measures=[Length()], n_resamples=50)
    assert result.groups == lexicon.groups and [m.name for m in result.measures] == ["length"]


def test_drop_empty_and_response_sets() -> None:
    rs = read_responses(_records([("", "x"), ("a b", "a"), ("c d e", "c"), ("f", "g")]))
    kept = score(rs, axis="gender", measures=["length"], n_resamples=50)
    dropped = score(rs, axis="gender", measures=["length"], drop_empty=True, n_resamples=50)
    assert (kept.n_pairs, dropped.n_pairs) == (4, 3)
    assert dropped.input_summary["n_empty_dropped"] == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"correction": "bonferroni"}, SpecError, "unknown correction 'bonferroni'"),
        ({"alpha": 1.5}, SpecError, "alpha must be between 0 and 1"),
        ({"n_resamples": 0}, SpecError, "n_resamples must be at least 1"),
        ({"measures": ["lenght"]}, SpecError, "did you mean 'length'"),
        ({"measures": [42]}, SpecError, "names or Measure/CorpusMeasure objects"),
        ({"measures": ["length", Length()]}, SpecError, "result key 'length' is produced by two measures"),
        ({"axis": "nosuchaxis"}, SpecError, "nosuchaxis"),
    ],
)
def test_bad_options_raise_clean_errors(kwargs: dict, error: type, fragment: str) -> None:
    kwargs = {"axis": "gender", **kwargs}
    with pytest.raises(error) as info:
        score(_records([("a", "b"), ("c", "d")]), **kwargs)
    assert fragment in str(info.value)


def test_too_few_pairs_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="need at least 2 complete pairs"):
        score(_records([("a", "b")]), axis="gender", measures=["length"])
    path = tmp_path / "one.jsonl"
    path.write_text('{"pair_id": "1", "side": "a", "response": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=f"{path}: need at least 2"):
        score(path, axis="gender", measures=["length"])


class _Broken(fairtalk.Measure):
    """A user measure that returns NaN for one response (issue 10, defect 4)."""

    name = "broken"
    keys = ("broken",)
    kind = "count"
    version = "1"
    higher_is_better = {"broken": None}

    def score(self, texts):  # noqa: ANN001, ANN201
        out = np.arange(len(texts), dtype=float)
        out[3] = np.nan
        return {"broken": out}


def test_a_measure_returning_nan_stops_the_audit_with_a_clear_error() -> None:
    with pytest.raises(SpecError, match=r"'broken' returned NaN or infinity for 1 of"):
        score(_records([(f"a {i}", f"b {i}") for i in range(10)]), axis="gender", measures=[_Broken()], n_resamples=50)


def _clustered_records(n_dialogues: int, per: int) -> list[Response]:
    rng = np.random.default_rng(0)
    out = []
    for g in range(n_dialogues):
        style = int(rng.integers(0, 6))  # one dialogue's pairs share a length: they are not independent
        for j in range(per):
            i = g * per + j
            extra = (("cluster", f"d{g}"),)
            out += [
                Response(f"p{i}", "a", f"he {i}", "word " * (style + int(rng.integers(0, 2))), extra),
                Response(f"p{i}", "b", f"she {i}", "word " * (style + int(rng.integers(0, 2))), extra),
            ]
    return out


def test_clusters_from_the_records_make_dialogues_the_units() -> None:
    records = _clustered_records(12, 5)
    clustered = score(records, axis="gender", measures=[Length()], n_resamples=50)
    assert clustered.n_clusters == 12
    length = clustered.measure("length")
    assert length.paired_test in ("cluster_t", "cluster_signflip_exact") and length.n_clusters == 12
    assert length.design_effect is not None
    independent = score(records, axis="gender", measures=[Length()], n_resamples=50, clusters=False)
    assert independent.n_clusters is None
    assert independent.measure("length").paired_test in ("paired_t", "signflip_exact")


def test_score_takes_two_lists_or_a_data_frame() -> None:
    import pandas as pd

    a, b = ["I love it, great job"] * 20 + ["fine"] * 20, ["you stupid idiot"] * 20 + ["fine"] * 20
    from_lists = score(a, b, axis="gender", n_resamples=50)
    assert from_lists.n_pairs == 40 and from_lists.measure("offense_rate").b == 0.5
    frame = pd.DataFrame({"a": a, "b": b, "cluster": [i // 4 for i in range(40)]})
    from_frame = score(frame, axis="gender", n_resamples=50)
    assert from_frame.measure("offense_rate").b == 0.5 and from_frame.n_clusters == 10
    with pytest.raises(InputError, match="one response per pair: got 2 and 1"):
        score(["x", "y"], ["z"], axis="gender")
    with pytest.raises(InputError, match="not a string"):
        score(["x", 3], ["z", "w"], axis="gender")


def test_results_json_reads_back_into_the_same_result(biased_result: fairtalk.AuditResult, tmp_path: Path) -> None:
    fairtalk.write_report(biased_result, tmp_path)
    from fairtalk.results import AuditResult

    back = AuditResult.read_json(tmp_path / "results.json")
    assert back.measures == biased_result.measures and back.scorer_check == biased_result.scorer_check
    assert json.loads(back.to_json()) == json.loads((tmp_path / "results.json").read_text())  # schema_version included
