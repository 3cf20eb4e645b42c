"""Issue 39 item 2: `plan --gate` plans a rare rate from the power of the gate's own rule, and that rule is monotone.

The normal formula planned 136, 193 and 31 pairs for the bare audit's sentiment_negative,
refusal_rate and degenerate_rate, where the gate passed a fair model 0-4% of the time. Then
degenerate_rate's power jumped from 0.77 (1,063 pairs) to 1.00 (1,064): no discordant pair
passed only from 149 dialogues, one or two passed from a few hundred pairs. Now a rate with fewer
than 10 discordant units (dialogues where the audit clusters) is decided by the exact bound on
each direction's units, of which identical answers are the case 0. Here the power of the planned
size is computed independently: every configuration of a fair model, weighted by its probability,
decided by the gate's own rule (``fairtalk.stats.rate_equivalence``).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, multinomial
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.cli._plan import BUILTIN_GENDER_DIALOGUE_SIZES
from fairtalk.inference import Inference, KeyMeta, compare_scored
from fairtalk.stats import (
    expected_clusters,
    pairs_for_rate_equivalence,
    power_rate_equivalence,
    rate_equivalence,
    share_equivalence,
)

runner = CliRunner()
ALPHA, MARGIN, FEW = 0.05, 0.02, 10


def _pairs(n10: int, n01: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n pairs, n10 with A above B and n01 with B above A, none positive on both sides."""
    a = np.repeat([1.0, 0.0, 0.0], [n10, n01, n - n10 - n01])
    b = np.repeat([0.0, 1.0, 0.0], [n10, n01, n - n10 - n01])
    return a, b


def _split_power(n: int, k: int, design_effect: float) -> float:
    """P(the rule passes | k of n pairs discordant, each way with probability 1/2), the units being pairs."""
    total = 0.0
    for n10 in range(k // 2 + 1):  # (n10, n01) and (n01, n10) mirror each other: the interval flips sign
        p = float(binom.pmf(n10, k, 0.5)) * (1 if 2 * n10 == k else 2)
        if p < 1e-8:
            continue
        a, b = _pairs(n10, k - n10, n)
        total += p * bool(rate_equivalence(a, b, margin=MARGIN, alpha=ALPHA, design_effect=design_effect).equivalent)
    return total


def _few_units(n: int, q: float, per_dialogue: float) -> tuple[float, float]:
    """P(under 10 dialogues hold a discordant pair and the rule passes), P(under 10 hold one): every configuration enumerated.

    floor(n / per_dialogue) dialogues of equal size; each holds an A-above pair only, a B-above
    pair only, both, or none. Each configuration is decided by the rule on pairs built to match.
    """
    n_units = math.floor(n / per_dialogue)
    size = n / n_units
    none, no_a = (1 - q) ** size, (1 - q / 2) ** size
    probs = [no_a - none, no_a - none, 1 - 2 * no_a + none, none]
    labels = np.repeat(np.arange(n_units), 2)  # two pairs a dialogue are enough to place one discordant pair each way
    passed = total = 0.0
    for x in range(FEW):
        for y in range(FEW - x):
            for z in range(FEW - x - y):
                weight = float(multinomial.pmf([x, y, z, n_units - x - y - z], n_units, probs))
                total += weight
                a, b = np.zeros(2 * n_units), np.zeros(2 * n_units)
                a[0 : 2 * x : 2] = 1  # dialogues 0..x-1: one pair A above B
                b[2 * x + 0 : 2 * (x + y) : 2] = 1  # the next y: one pair B above A
                a[2 * (x + y) : 2 * (x + y + z) : 2] = 1  # the next z: one pair each way
                b[2 * (x + y) + 1 : 2 * (x + y + z) : 2] = 1
                shown = rate_equivalence(a, b, margin=MARGIN, alpha=ALPHA, clusters=tuple(labels.tolist())).equivalent
                passed += weight * bool(shown)
    return passed, total


def _gate_power(n: int, q: float, *, design_effect: float = 1.0, per_dialogue: float = 1.0) -> tuple[float, float]:
    """Bounds on P(the gate passes) on n pairs of a fair model, q of them discordant, none positive on both sides.

    Without clusters (per_dialogue 1) both bounds are the exact sum over every table. With
    clusters: the part with under 10 discordant dialogues enumerated (``_few_units``); the rest
    lies between the Newcombe TOST's power over k >= 10 discordant pairs, less the chance that
    10 or more pairs fall in under 10 dialogues, and that power itself.
    """
    top = int(binom.isf(1e-7, n, q)) + 2
    if per_dialogue <= 1:
        power = sum(float(binom.pmf(k, n, q)) * _split_power(n, k, design_effect) for k in range(top))
        return power, power
    passed_few, few = _few_units(n, q, per_dialogue)
    many = sum(float(binom.pmf(k, n, q)) * _split_power(n, k, design_effect) for k in range(FEW, top))
    crowded = few - float(binom.cdf(FEW - 1, n, q))  # 10 or more discordant pairs in under 10 dialogues
    return passed_few + many - crowded, passed_few + many


def _pilot(tmp_path: Path, q: float, *, n: int = 1000, clusters: int | None = None, deff: float = 1.0) -> Path:
    """A pilot results.json with one rate whose discordant share is q (split evenly: A = B), none positive on both sides."""
    sd = math.sqrt(q * n / (n - 1))  # the sd of A - B (ddof 1) of n differences, q n of them ±1 and summing to 0
    row = {"kind": "rate", "a": q / 2, "b": q / 2, "sd_difference": sd, "design_effect": deff}
    row |= {"equivalence_margin": MARGIN, "primary": True}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"n_pairs": n, "n_clusters": clusters, "alpha": ALPHA, "measures": {"refusal_rate": row}}))
    return path


def _planned(path: Path) -> int:
    result = runner.invoke(app, ["plan", "--gate", "--results", str(path)])
    assert result.exit_code == 0, result.output
    found = re.search(r"refusal_rate \(rate\): ([\d,]+) pairs", result.output)
    assert found, result.output
    return int(found.group(1).replace(",", ""))


@pytest.mark.parametrize("q", [0.02, 0.025])
def test_plan_gate_gives_a_rare_rate_the_power_of_the_gates_own_test(tmp_path: Path, q: float) -> None:
    n = _planned(_pilot(tmp_path, q))
    low, high = _gate_power(n, q)
    assert 0.75 <= low and high <= 0.85, (n, low, high)  # the normal formula: 431 and 538 pairs, 0.67 and 0.72


def test_plan_gate_counts_dialogues_where_the_audit_clusters(tmp_path: Path) -> None:
    """Half a percent discordant: few dialogues ever differ, so the exact bound on dialogues carries much of the power."""
    q, per_dialogue, deff = 0.005, 5, 1.2
    path = _pilot(tmp_path, q, clusters=200, deff=deff)
    n = _planned(path)
    low, high = _gate_power(n, q, design_effect=deff, per_dialogue=per_dialogue)
    assert 0.75 <= low and high <= 0.85, (n, low, high)
    output = runner.invoke(app, ["plan", "--gate", "--results", str(path)]).output
    expected = f"{n:,} pairs (about {math.ceil(n / per_dialogue):,} dialogues, if they hold the pilot's 5 pairs each)"
    assert expected in " ".join(output.split())


def test_the_builtin_rare_rates_need_more_pairs_than_the_normal_formula_said() -> None:
    result = runner.invoke(app, ["plan", "--gate"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    pairs = {m.group(1): int(m.group(2).replace(",", "")) for m in re.finditer(r"(\w+) \(rate\): ([\d,]+) pairs", text)}
    assert pairs["sentiment_negative"] > 136 and pairs["refusal_rate"] > 193 and pairs["degenerate_rate"] > 31, pairs
    assert "the built-in gender axis gives" in text and "1,470 pairs" in text


def test_pairs_for_a_rate_with_many_discordant_pairs_keep_the_normal_formula() -> None:
    from fairtalk.stats import pairs_for_equivalence, pairs_for_rate_equivalence

    q = 0.12  # about 300 discordant pairs at the answer: the normal formula holds
    assert pairs_for_rate_equivalence(q, MARGIN) == pairs_for_equivalence(math.sqrt(q), MARGIN)


def test_pairs_for_a_rate_refuses_what_no_audit_reaches() -> None:
    from fairtalk.stats import pairs_for_rate_equivalence

    with pytest.raises(ValueError, match="discordance must be in"):
        pairs_for_rate_equivalence(0.0, MARGIN)
    with pytest.raises(ValueError, match="discordance must be in"):
        pairs_for_rate_equivalence(1.0, MARGIN)


def _rate_key(a: np.ndarray, b: np.ndarray, clusters: tuple[int, ...] | None) -> bool | None:
    """The audit's own equivalence verdict on a rate key (``compare_scored``, as ``score()`` runs it)."""
    opts = Inference(alpha=ALPHA, clusters=clusters, margins={"degenerate_rate": MARGIN})
    return compare_scored("degenerate_rate", KeyMeta("rate"), a, b, opts).equivalence.equivalent


@pytest.mark.parametrize("n_dialogues", [100, 143, 149, 200, 236, 300, 386])
def test_a_discordant_dialogue_never_makes_the_gate_easier_to_pass(n_dialogues: int) -> None:
    """The defect: no discordant pair passed only from 149 dialogues, one or two passed from a few hundred pairs.

    Dialogues of 7 pairs (the bare audit's degenerate_rate: 0.14% of pairs discordant). Any
    discordant pair added (either way, in a new dialogue or one that already differs) never turns
    a fail into a pass, from none up to the 10 discordant dialogues the exact rule covers.
    """
    n = 7 * n_dialogues
    clusters = tuple(i // 7 for i in range(n))
    for shared in (True, False):  # the B-above pairs in the dialogues that hold the A-above ones, or in others
        verdicts = {}
        for up in range(6):
            for down in range(5):
                a, b = np.zeros(n), np.zeros(n)
                a[[7 * i for i in range(up)]] = 1  # dialogues 0..up-1 hold a pair with A above B
                first = 0 if shared else up
                b[[7 * i + 1 for i in range(first, first + down)]] = 1
                verdicts[up, down] = bool(_rate_key(a, b, clusters))
        for (up, down), passed in verdicts.items():
            for fewer in ((up - 1, down), (up, down - 1)):
                if passed and fewer in verdicts:
                    assert verdicts[fewer], (n_dialogues, shared, (up, down), fewer)
        assert verdicts[0, 0] == (n_dialogues >= 149)  # identical answers: the bound on 149 dialogues, as before


def test_the_exact_rule_holds_its_level_at_the_margin() -> None:
    """|A - B| = margin exactly: every table enumerated, decided by the rule (few discordant units: the exact bound).

    Pairs: A above B with probability m + t, B above A with t. Dialogues: at the margin the worst
    case puts whole dialogues' pairs the same way, so a share m + t of dialogues holds an A-above
    pair and t a B-above one. Under 10 discordant units the rule passes at most α of the time.
    """
    worst = 0.0
    for n_units in (50, 149, 236, 313, 500, 800):
        for t in (0.0, 0.002, 0.01, 0.03):
            up, down = MARGIN + t, t
            probs = [up, down, 1 - up - down]
            level = 0.0
            for x in range(FEW):
                for y in range(FEW - x):
                    weight = float(multinomial.pmf([x, y, n_units - x - y], n_units, probs))
                    a, b = _pairs(x, y, n_units)
                    level += weight * bool(rate_equivalence(a, b, margin=MARGIN, alpha=ALPHA).equivalent)
            worst = max(worst, level)
            assert level <= ALPHA, (n_units, t, level)
    assert worst > 0.02  # not vacuous: near α where the bound is tight (149 units, t = 0: 0.98^149 = 0.049)


@pytest.mark.parametrize("n", [150, 300, 600])
def test_the_whole_rule_holds_its_level_at_the_margin(n: int) -> None:
    """The exact rule under 10 discordant pairs, the Newcombe TOST from there: the union stays within α at the margin."""
    for t in (0.0, 0.01):
        up, down = MARGIN + t, t
        level = 0.0
        top_up, top_down = int(binom.isf(1e-9, n, up)) + 1, int(binom.isf(1e-9, n, down)) + 1
        for x in range(top_up + 1):
            for y in range(min(top_down, n - x) + 1):
                weight = float(multinomial.pmf([x, y, n - x - y], n, [up, down, 1 - up - down]))
                if weight < 1e-10:
                    continue
                a, b = _pairs(x, y, n)
                level += weight * bool(rate_equivalence(a, b, margin=MARGIN, alpha=ALPHA).equivalent)
        assert level <= ALPHA, (n, t, level)


@pytest.mark.parametrize(("n_units", "clusters"), [(148, False), (149, False), (148, True), (149, True), (600, True)])
def test_identical_answers_are_the_exact_rules_case_zero(n_units: int, clusters: bool) -> None:
    """No discordant unit: the same p, verdict and note as the identical-answers bound, on the same units."""
    per = 3 if clusters else 1
    labels = tuple(i // per for i in range(per * n_units)) if clusters else None
    zeros = np.zeros(per * n_units)
    rule = rate_equivalence(zeros, zeros, margin=MARGIN, alpha=ALPHA, clusters=labels)
    units = "dialogues" if clusters else "pairs"
    bound = share_equivalence(n_units, alpha=ALPHA, margin=MARGIN, max_difference=1.0, n_pairs=zeros.size, units=units)
    assert (rule.p, rule.equivalent, rule.note) == (bound.p, bound.equivalent, bound.note)
    assert rule.equivalent == (n_units >= 149)


def test_plan_gate_gives_degenerate_rate_a_power_in_the_band() -> None:
    """The bare audit's degenerate_rate (0.14% discordant, 7.14 pairs a dialogue): planned 1,064 pairs at power 1.00."""
    result = runner.invoke(app, ["plan", "--gate"])
    assert result.exit_code == 0, result.output
    found = re.search(r"degenerate_rate \(rate\): ([\d,]+) pairs", " ".join(result.output.split()))
    assert found, result.output
    n = int(found.group(1).replace(",", ""))
    q = 0.0369**2
    dialogues = round(expected_clusters(n, BUILTIN_GENDER_DIALOGUE_SIZES))  # as plan counts them: a sample's dialogues
    passed_few, few = _few_units(n, q, n / dialogues)
    # under 10 discordant dialogues enumerated; the rest (at most 1 - few) may pass or not
    assert 0.75 <= passed_few and passed_few + (1 - few) <= 0.85, (n, passed_few, few)


# --- the dialogues an audit of n pairs spans: a uniform sample of the corpus, not n / (the corpus' pairs per dialogue) --


def test_the_builtin_dialogue_sizes_are_those_of_the_builtin_gender_axis() -> None:
    """The constant plan counts dialogues with is the real axis': 1,470 pairs in 206 dialogues, each dialogue's size."""
    from collections import Counter

    import fairtalk

    corpus = fairtalk.read_corpus("builtin:chitchat", split="heldout")
    pairs = fairtalk.build_pairs(corpus, fairtalk.load_lexicon("gender"))
    sizes = Counter(Counter(pair.cluster for pair in pairs).values())
    assert tuple(sorted(sizes.items())) == BUILTIN_GENDER_DIALOGUE_SIZES
    assert pairs.coverage.dialogue_sizes == BUILTIN_GENDER_DIALOGUE_SIZES  # what an audit's results.json records


def test_expected_clusters_is_the_mean_of_uniform_samples() -> None:
    labels = np.repeat(np.arange(206), [m for m, count in BUILTIN_GENDER_DIALOGUE_SIZES for _ in range(count)])
    rng = np.random.default_rng(0)
    for n in (150, 500, 707, 1445):
        drawn = [np.unique(rng.choice(labels, size=n, replace=False)).size for _ in range(400)]
        assert abs(expected_clusters(n, BUILTIN_GENDER_DIALOGUE_SIZES) - float(np.mean(drawn))) < 1.0, n
    # a 707-pair audit spans about 165 of the 206 dialogues, not 707 / (1,470 / 206) = 99
    assert 160 < expected_clusters(707, BUILTIN_GENDER_DIALOGUE_SIZES) < 170
    assert expected_clusters(2940, BUILTIN_GENDER_DIALOGUE_SIZES) == pytest.approx(412)  # beyond the axis: two whole copies


def test_equal_dialogues_of_the_whole_corpus_give_the_pairs_per_unit_power() -> None:
    """At the corpus' every pair, a sample spans every dialogue: the sizes and the pairs per dialogue agree."""
    sizes = ((5, 300),)
    for n in (1500, 3000):
        by_sizes = power_rate_equivalence(n, 0.005, MARGIN, cluster_sizes=sizes)
        by_ratio = power_rate_equivalence(n, 0.005, MARGIN, pairs_per_unit=5.0)
        assert by_sizes == pytest.approx(by_ratio, abs=0.01), n  # the sizes model counts 10 units exactly, not by occupancy
    # on fewer pairs the sample spreads over more dialogues than n / 5, and the rule counts them
    assert power_rate_equivalence(750, 0.005, MARGIN, cluster_sizes=sizes) != power_rate_equivalence(
        750, 0.005, MARGIN, pairs_per_unit=5.0
    )


def test_plan_gate_counts_the_dialogues_a_sample_of_the_builtin_axis_spans() -> None:
    result = runner.invoke(app, ["plan", "--gate"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    found = re.search(r"offense_rate \(rate\): ([\d,]+) pairs \(about ([\d,]+) dialogues: a sample of", text)
    assert found, text
    n, dialogues = (int(g.replace(",", "")) for g in found.groups())
    assert dialogues == round(expected_clusters(n, BUILTIN_GENDER_DIALOGUE_SIZES))
    assert dialogues > n / (1470 / 206) * 1.4  # before: "about 100 dialogues at 7.14 pairs each" for 707 pairs (165 real)


def test_coverage_counts_each_dialogues_unique_pairs() -> None:
    import fairtalk
    from fairtalk.records import Context

    contexts = [
        Context("1", "he went home", cluster="d1"),
        Context("2", "his car is red", cluster="d1"),
        Context("3", "she went home", cluster="d1"),  # the twin of 1: a duplicate, not counted
        Context("4", "he is tall", cluster="d2"),
        Context("5", "he sings", cluster=None),  # no dialogue named: a unit of its own, as the statistics count it
    ]
    pairs = fairtalk.build_pairs(contexts, fairtalk.load_lexicon("gender"))
    assert len(list(pairs)) == 4
    assert pairs.coverage.dialogue_sizes == ((1, 2), (2, 1))
    alone = fairtalk.build_pairs([Context("1", "he went home"), Context("2", "he is tall")], fairtalk.load_lexicon("gender"))
    assert len(list(alone)) == 2 and alone.coverage.dialogue_sizes == ()  # no dialogue named at all: no clustering


def test_a_pilots_corpus_dialogue_sizes_plan_its_dialogues(tmp_path: Path) -> None:
    """A 200-pair pilot of a 2,000-pair corpus in 100 dialogues of 20: 5 pairs a dialogue in the pilot, far more in an audit."""
    q, sizes = 0.005, ((20, 100),)
    path = _pilot(tmp_path, q, n=200, clusters=40)
    data = json.loads(path.read_text())
    without = runner.invoke(app, ["plan", "--gate", "--results", str(path)]).output
    path.write_text(json.dumps(data | {"corpus_dialogue_sizes": [list(s) for s in sizes]}))
    result = runner.invoke(app, ["plan", "--gate", "--results", str(path)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    found = re.search(
        r"refusal_rate \(rate\): ([\d,]+) pairs \(about ([\d,]+) dialogues(?:: a sample of|, were the corpus)", text
    )
    assert found, text
    n, dialogues = (int(g.replace(",", "")) for g in found.groups())
    assert dialogues == round(expected_clusters(n, sizes)) and dialogues < n / 5
    assert "more than the 2,000 pairs (100 dialogues) the pilot's corpus gives" in text
    assert "if they hold the pilot's 5 pairs each" in " ".join(without.split())  # without the sizes: n / 5 dialogues
    # fewer dialogues than n / 5 hold the discordant pairs, so the exact bound on them needs more pairs
    assert n > int(re.search(r"refusal_rate \(rate\): ([\d,]+) pairs", without).group(1).replace(",", ""))  # type: ignore[union-attr]


def test_a_report_plans_the_gate_as_plan_does_from_its_results(tmp_path: Path) -> None:
    """One decision: an audit's gate_pairs for a rare rate equal plan --gate's from its results.json (dialogues of a sample)."""
    bot = tmp_path / "bot.py"
    bot.write_text(
        "import zlib\n"
        "def reply(text):\n"
        "    return 'shut up you stupid damn idiot' if zlib.crc32(text.encode()) % 53 == 0 else 'that sounds nice'\n"
    )
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["audit", "--model", f"python:{bot}:reply", "--axis", "gender", "--pairs", "300", "--quiet", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "gender" / "results.json").read_text())
    assert [tuple(s) for s in data["corpus_dialogue_sizes"]] == list(BUILTIN_GENDER_DIALOGUE_SIZES)
    row = data["measures"]["offense_rate"]
    assert row["gate_pairs"] is not None and 0 < row["sd_difference"], row
    planned = runner.invoke(app, ["plan", "--gate", "--results", str(out / "gender" / "results.json")])
    assert planned.exit_code == 0, planned.output
    text = " ".join(planned.output.split())
    found = re.search(r"offense_rate \(rate\): ([\d,]+) pairs \(about [\d,]+ dialogues: a sample of", text)
    assert found, text
    assert int(found.group(1).replace(",", "")) == row["gate_pairs"]


def test_beyond_the_corpus_the_power_never_passes_fewer_dialogues_than_the_rule_needs() -> None:
    """Five dialogues of 300 pairs: one whole copy (1,500 pairs) holds 5 dialogues, where the rule can pass nothing.

    Before, the effective units (n^2 / E[sum k^2]) could count more dialogues than there were and the Newcombe part
    add its power on top of the few-units part's whole probability (a reviewer: "power 1.00" for 9 dialogues).
    """
    sizes = ((300, 5),)
    assert expected_clusters(1500, sizes) == 5 and expected_clusters(3000, sizes) == 10
    assert power_rate_equivalence(1500, 0.03, MARGIN, cluster_sizes=sizes) == 0.0  # 5 dialogues: under 10, under 149
    for n in (1500, 1700, 2774, 3000, 6000):
        assert 0.0 <= power_rate_equivalence(n, 0.03, MARGIN, cluster_sizes=sizes) <= 1.0
    n = pairs_for_rate_equivalence(0.03, MARGIN, cluster_sizes=sizes)
    assert expected_clusters(n, sizes) >= 9.5  # planned where 10 discordant dialogues are at least possible


def test_plan_and_the_report_use_the_sizes_whenever_the_audit_clusters(tmp_path: Path) -> None:
    """A pilot whose 100 pairs fall in 100 dialogues (one pair each) still clusters: plan must use its corpus' sizes."""
    path = _pilot(tmp_path, 0.01, n=100, clusters=100)
    data = json.loads(path.read_text())
    path.write_text(json.dumps(data | {"corpus_dialogue_sizes": [list(s) for s in BUILTIN_GENDER_DIALOGUE_SIZES]}))
    text = " ".join(runner.invoke(app, ["plan", "--gate", "--results", str(path)]).output.split())
    found = re.search(r"refusal_rate \(rate\): ([\d,]+) pairs \(about [\d,]+ dialogues(?:: a sample of|, were the corpus)", text)
    assert found, text
    expected = pairs_for_rate_equivalence(
        0.01 * 100 / 99, MARGIN, pairs_per_unit=1.0, cluster_sizes=BUILTIN_GENDER_DIALOGUE_SIZES, sd_difference=math.sqrt(0.01)
    )
    assert int(found.group(1).replace(",", "")) == pytest.approx(expected, rel=0.05)


@pytest.mark.parametrize("sizes", [[[1, 10**20]], [[100_000_000, 1]], [[0, 3]], [[1, 2, 3]], "x"])
def test_a_hostile_corpus_dialogue_sizes_is_left_out_not_a_crash(tmp_path: Path, sizes: object) -> None:
    path = _pilot(tmp_path, 0.01, n=200, clusters=40)
    path.write_text(json.dumps(json.loads(path.read_text()) | {"corpus_dialogue_sizes": sizes}))
    result = runner.invoke(app, ["plan", "--gate", "--results", str(path)])
    assert result.exit_code == 0, result.output
    assert "internal error" not in result.output
    assert "if they hold the pilot's 5 pairs each" in " ".join(result.output.split())


def test_a_few_differing_units_are_not_called_identical() -> None:
    from fairtalk.stats import METHOD_FEW_DIFFERING, METHOD_IDENTICAL

    assert share_equivalence(1000, 3, alpha=ALPHA, margin=0.05).method == METHOD_FEW_DIFFERING
    assert share_equivalence(1000, 0, alpha=ALPHA, margin=0.05).method == METHOD_IDENTICAL


def test_a_rate_whose_differences_cancel_within_dialogues_counts_pairs_for_its_power() -> None:
    """Discordant pairs +1 and -1 in one dialogue: the clustered SE is 0, but the differences vary (not identical answers)."""
    a, b = np.zeros(200), np.zeros(200)
    a[0], b[1] = 1.0, 1.0
    clusters = tuple(f"d{i // 5}" for i in range(200))
    row = compare_scored("refusal_rate", KeyMeta("rate"), a, b, Inference(alpha=ALPHA, clusters=clusters))
    assert row.power_basis is not None and row.power_basis.n == 200
