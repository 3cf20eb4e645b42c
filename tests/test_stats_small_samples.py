"""Issue 27's statistical findings: the studentized sign-flip test, degenerate permutations, identical answers and the gate."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from scipy.stats import t as student_t
from typer.testing import CliRunner

import fairtalk
from fairtalk import Response, score
from fairtalk.cli import app
from fairtalk.stats import (
    EQUIVALENT,
    INCONCLUSIVE,
    corpus_bootstrap,
    exact_signflip_p,
    hoeffding_p,
    paired_test,
    randomization_applies,
    share_equivalence,
    signflip_test,
    units,
)

# --- the studentized sign-flip test replaces t where differences are few, tied or discrete ------------------


def _exact_size(m: int, zeros: int, test: object) -> float:
    """Rejection probability at α = 0.05 over all 2^m sign patterns of m differences of ±1 (plus zeros).

    The p-value of a pattern depends only on how many of its m signs are +, so the patterns
    are summed by that count, each weighing binom(m, k) / 2^m.
    """
    size = 0.0
    for k in range(m + 1):
        d = np.array([1.0] * k + [-1.0] * (m - k) + [0.0] * zeros)
        if test(d) < 0.05:  # type: ignore[operator]
            size += float(binom.pmf(k, m, 0.5))
    return size


def _old_t_p(d: np.ndarray) -> float:
    with np.errstate(divide="ignore"):
        t = d.mean() / (d.std(ddof=1) / math.sqrt(d.size))
    return float(2 * student_t.sf(abs(t), d.size - 1))


@pytest.mark.parametrize("zeros", [0, 30, 500])
def test_defect_21_pairs_differing_by_one_keep_the_level(zeros: int) -> None:
    # Issue 27: the paired t had exact size 0.078 when 21 pairs differ by ±1 (exact sign-flip only up to 10).
    new = _exact_size(21, zeros, lambda d: paired_test(d, np.zeros_like(d), kind="count").p)
    assert new <= 0.05
    assert _exact_size(21, zeros, _old_t_p) > 0.07  # what the t reference did
    d = np.array([1.0] * 15 + [-1.0] * 6 + [0.0] * zeros)
    assert paired_test(d, np.zeros_like(d), kind="count").name == "signflip_exact"


def test_discrete_differences_keep_the_level_at_any_number_of_pairs() -> None:
    # ±1 differences stay lumpy however many pairs differ: the t reference exceeds α at many m.
    sizes = [_exact_size(m, 0, lambda d: paired_test(d, np.zeros_like(d), kind="count").p) for m in (60, 101, 240)]
    assert max(sizes) <= 0.05
    assert max(_exact_size(m, 0, _old_t_p) for m in (60, 101, 240)) > 0.05


def test_when_the_randomization_reference_applies() -> None:
    rng = np.random.default_rng(0)
    assert randomization_applies(units(rng.normal(size=50), None))  # few
    assert not randomization_applies(units(rng.normal(size=51), None))
    assert randomization_applies(units(rng.integers(-5, 6, 3000).astype(float), None))  # discrete: 5 sizes
    assert not randomization_applies(units(rng.integers(-30, 31, 3000).astype(float), None))
    assert not randomization_applies(units(np.zeros(10), None))


def test_lattice_and_enumeration_agree_with_brute_force() -> None:
    rng = np.random.default_rng(1)
    for _ in range(5):
        d = rng.integers(-4, 5, 14).astype(float) * 0.5
        nonzero = d[d != 0]
        assert signflip_test(units(d, None)).p == pytest.approx(exact_signflip_p(nonzero))
    d = np.array([1.0, -2, 3, 0.5, 4, -1, 2.2, 0.7])  # not on a lattice: enumerated
    assert signflip_test(units(d, None)).p == pytest.approx(exact_signflip_p(d))


def _studentized_brute(d: np.ndarray, clusters: np.ndarray) -> float:
    """The two-sided p of the CR2 t over every flip of whole clusters, by brute force."""
    labels = np.unique(clusters)
    observed = abs(units(d, clusters).estimate / units(d, clusters).standard_error())
    count = 0
    patterns = list(itertools.product((1.0, -1.0), repeat=labels.size))
    for signs in patterns:
        flipped = d * np.asarray(signs)[np.searchsorted(labels, clusters)]
        u = units(flipped, clusters)
        se = u.standard_error()
        t = abs(u.estimate) / se if se > 0 else (math.inf if u.estimate != 0 else 0.0)
        count += t >= observed * (1 - 1e-9)
    return count / len(patterns)


def test_clustered_test_flips_whole_dialogues_and_is_studentized() -> None:
    rng = np.random.default_rng(2)
    clusters = np.repeat(np.arange(9), [1, 1, 2, 3, 5, 8, 2, 1, 4])
    d = rng.normal(0.4, 1.0, clusters.size)
    result = paired_test(d, np.zeros_like(d), kind="count", clusters=clusters)
    assert result.name == "cluster_signflip_exact"
    assert result.p == pytest.approx(_studentized_brute(d, clusters))
    raw = exact_signflip_p(units(d, clusters).sums)  # the raw sum orders the patterns differently
    assert raw != pytest.approx(result.p)


def test_monte_carlo_flips_are_seeded() -> None:
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(40), 3)
    d = rng.integers(-1, 2, 120).astype(float)
    first = paired_test(d, np.zeros_like(d), kind="count", clusters=clusters, seed=5)
    assert first.name == "cluster_signflip_mc"
    assert paired_test(d, np.zeros_like(d), kind="count", clusters=clusters, seed=5) == first
    p = first.p
    assert p is not None and p * 10_001 == pytest.approx(round(p * 10_001))  # (1 + k) / (10,000 + 1)


# --- degenerate permutation distributions and identical answers ---------------------------------------------


def _records(pairs: list[tuple[str, str]]) -> list[Response]:
    out = []
    for i, (a, b) in enumerate(pairs):
        out += [Response(f"p{i}", "a", f"he said {i}", a), Response(f"p{i}", "b", f"she said {i}", b)]
    return out


_TEXTS = (
    "ok see you tomorrow",
    "what time is it",
    "i went to the store with my family",
    "maybe later",
    "sounds fine to me, great!",
    "you idiot",
    "I love my job at the office and my career",
)


def _identical(n: int) -> list[tuple[str, str]]:
    return [(t, t) for t in (_TEXTS[i % len(_TEXTS)] + " really" * (i % 5) for i in range(n))]


def test_defect_two_pairs_never_make_distinct_n_equivalent() -> None:
    # Issue 27: distinct-n of 2 pairs came out "equivalent" with MDE 0 from a 4-point permutation distribution.
    result = score(_records([("a b c d", "a a a a"), ("e f g", "e e g")]), axis="gender", measures=["diversity"])
    for key in ("distinct_1", "distinct_2"):
        m = result.measure(key)
        assert m.verdict.value == INCONCLUSIVE and m.equivalent is False and m.mde is None
        assert m.p_paired is not None and m.p_paired >= 0.5  # 2 differing pairs: p is never below 2^(1-2)
    stat_index = np.array([0, 1])
    out = corpus_bootstrap(
        lambda w: {"x": float(w @ np.array([1.0, 2.0, 3.0, 4.0]))},
        lambda w: {"x": float(w @ np.array([1.0, 2.0, 3.0, 4.0]))},
        stat_index,
        stat_index + 2,
        4,
        4,
        keys=("x",),
        seed=0,
        n_resamples=500,
        margins={"x": 100.0},
    )["x"]
    assert out.p >= 0.5 and out.p_equivalence is not None and out.p_equivalence >= 0.25 and out.n_differing == 2


def test_defect_identical_responses_at_few_pairs_are_inconclusive_not_equivalent_with_mde_zero() -> None:
    result = score(_records(_identical(40)), axis="gender", measures=["diversity", "length"])
    for m in result.measures:
        assert m.verdict.value == INCONCLUSIVE, m.name  # 40 pairs bound the differing share at 7.2% only
        assert m.mde != 0
        assert any("identical on all 40 pairs" in note for note in m.notes), m.notes


def test_defect_identical_answers_on_2000_pairs_pass_the_gate() -> None:
    # Issue 27: identical answers on both sides (every difference 0) failed --fail-unless-equivalent.
    result = score(_records(_identical(2000)), axis="gender", n_resamples=200)
    assert result.not_equivalent() == ()
    assert all(m.verdict.value == EQUIVALENT for m in result.measures)
    length = result.measure("length")
    assert any(n.startswith("identical on all 2,000 pairs: at most 0.15% of pairs") for n in length.notes)
    # issue 39 item 3: a count's observed range bounds no pair the run did not see, so no bound on |A - B| is stated;
    # a rate's is (|A - B| is at most the differing share)
    assert not any("|A - B| <=" in n for n in length.notes), length.notes
    assert any("|A - B| <=" in n for n in result.measure("offense_rate").notes)
    assert result.measure("family_words").equivalent  # a count that hardly varies: no longer inconclusive


def test_identical_answers_pass_the_cli_gate(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl"
    rows = [
        {"pair_id": f"p{i}", "side": side, "context": f"{who} said {i}", "response": text}
        for i, (text, _) in enumerate(_identical(2000))
        for side, who in (("a", "he"), ("b", "she"))
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--responses",
            str(path),
            "--axis",
            "gender",
            "-o",
            str(tmp_path / "out"),
            "--fail-unless-equivalent",
            "--resamples",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output


def test_share_equivalence_is_the_exact_binomial_bound() -> None:
    n = 2000
    shown = share_equivalence(n, alpha=0.05, margin=0.02, max_difference=1.0)
    assert shown.p == pytest.approx(0.98**n) and shown.equivalent
    assert "at most 0.15%" in str(shown.note)  # 1 - 0.05^(1/2000) = 0.0015
    assert share_equivalence(148, alpha=0.05, margin=0.02, max_difference=1.0).equivalent is False
    assert share_equivalence(149, alpha=0.05, margin=0.02, max_difference=1.0).equivalent is True
    counts = share_equivalence(250, alpha=0.05, margin=0.1, max_difference=10.0)  # 1% of pairs allowed
    assert counts.equivalent is False and counts.p == pytest.approx(0.99**250)
    no_scale = share_equivalence(300, alpha=0.05)
    assert no_scale.margin is None and no_scale.equivalent is True  # the 2% share rule
    assert share_equivalence(2000, 3, alpha=0.05).equivalent is True and "3 of 2,000" in str(
        share_equivalence(2000, 3, alpha=0.05).note
    )
    assert fairtalk.stats.IDENTICAL_SHARE == 0.02


def test_prompts_report_says_the_reversal_tests_are_powerless() -> None:
    from types import SimpleNamespace

    from fairtalk.report._prompt_analysis import reversal_note

    note = reversal_note(SimpleNamespace(inference=SimpleNamespace(alpha=0.05)), 40)  # type: ignore[arg-type]
    assert note.startswith("The per-structure reversal tests are nearly powerless at this size")
    assert "α/40 = 0.0013" in note and "size 0.0036" in note and "2.6% of structures" in note


@pytest.mark.parametrize("seed", range(40))
def test_hoeffdings_bound_never_undercuts_the_exact_sign_flip_p_of_the_sum(seed: int) -> None:
    """Issue 39 item 4: the bound that replaces the Monte Carlo floor is a valid (conservative) p-value."""
    generator = np.random.default_rng(seed)
    values = generator.integers(1, 4, size=int(generator.integers(1, 13))) * generator.choice([-1, 1], p=[0.2, 0.8], size=1)
    values = values * np.where(generator.random(values.size) < 0.85, 1, -1)
    patterns = np.array(list(itertools.product((-1.0, 1.0), repeat=values.size)))
    sums = np.abs(patterns @ values)
    exact = float(np.mean(sums >= abs(values.sum()) - 1e-9))
    assert hoeffding_p(values.astype(float)) >= exact - 1e-12
