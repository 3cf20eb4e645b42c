"""Issue 39: a count key whose pilot has few differing pairs is planned for every share that pilot leaves plausible.

From one differing pair in 200 the share of pairs that differ is known only within a wide interval. Planned at
that share taken at face value, a pilot like builtin:echo's got 323 pairs, and 4 of 8 audits at that size passed
a fair model on the full axis, whose share was lower: at a lower share most samples hold no differing pair, and
323 pairs are too few for the identical-answers bound. The plan now reaches the power at every share of the
share's 95% Clopper-Pearson interval; here that is checked at its ends with ``power_few_differing``, and that
function against the audit's own TOST on every sample it sums.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, binomtest
from typer.testing import CliRunner

from fairtalk.cli import app
from fairtalk.cli._plan import BUILTIN_GENDER_DIALOGUE_SIZES
from fairtalk.stats import (
    differing_share_interval,
    identical_units_needed,
    pairs_for_few_differing,
    pairs_spanning,
    plan_few_differing,
    power_few_differing,
    tost_mean,
    units,
)

runner = CliRunner()
ALPHA, POWER, MARGIN = 0.05, 0.8, 0.05723
#: The identical-answers bound's units at its default share (2%): 149 dialogues, which a sample of about 572 pairs of
#: the built-in gender axis spans with power 0.8.
UNITS, SPANNING = 149, 572
#: (identical pairs, clustered by the built-in axis' dialogues, design effect): pairs alone, the bound from more pairs
#: (a count bounded below a share under 2%, or dialogues at the pilot's pairs each), dialogues of a uniform sample.
DESIGNS = [(UNITS, False, 1.0), (600, False, 1.0), (SPANNING, True, 1.01)]


def _power(n: int, share: float, identical_pairs: int, clustered: bool, deff: float) -> float:
    return power_few_differing(
        n,
        share,
        MARGIN,
        alpha=ALPHA,
        design_effect=deff,
        identical_pairs=identical_pairs,
        identical_units=UNITS if clustered else None,
        cluster_sizes=BUILTIN_GENDER_DIALOGUE_SIZES if clustered else (),
    )[0]


def _planned(identical_pairs: int, clustered: bool, deff: float, share: float = 0.005, pilot: int = 200) -> int | None:
    return pairs_for_few_differing(
        share,
        MARGIN,
        normal=15,
        alpha=ALPHA,
        power=POWER,
        design_effect=deff,
        identical_pairs=identical_pairs,
        pilot_pairs=pilot,
        identical_units=UNITS if clustered else None,
        cluster_sizes=BUILTIN_GENDER_DIALOGUE_SIZES if clustered else (),
    )


@pytest.mark.parametrize(("identical_pairs", "clustered", "deff"), DESIGNS)
def test_one_differing_pair_in_200_is_planned_to_reach_the_power_at_both_ends_of_its_interval(
    identical_pairs: int, clustered: bool, deff: float
) -> None:
    """At face value the plan was 323 pairs (322 now), whose power at the interval's low end is 0.04."""
    n = _planned(identical_pairs, clustered, deff)
    assert n is not None
    low, high = differing_share_interval(0.005, 200, design_effect=deff)
    assert low < 0.0002 and high > 0.027  # 1 pair of 200: the share is known within two orders of magnitude
    assert _power(n, low, identical_pairs, clustered, deff) >= POWER
    assert _power(n, high, identical_pairs, clustered, deff) >= POWER
    assert _power(n, 0.005, identical_pairs, clustered, deff) >= POWER
    # inside too, on a grid far finer than the planner's
    assert min(_power(n, q, identical_pairs, clustered, deff) for q in np.geomspace(low, high, 60)) >= POWER
    # the share alone, taken as known, plans too few where the bound needs more pairs than the TOST
    alone = pairs_for_few_differing(0.005, MARGIN, normal=15, design_effect=deff, identical_pairs=identical_pairs)
    assert alone is not None and alone <= n
    if identical_pairs > UNITS:
        assert alone < n and _power(alone, low, identical_pairs, clustered, deff) < 0.1


def test_the_plan_says_where_the_power_is_least_and_what_the_share_alone_would_give() -> None:
    plan = plan_few_differing(
        0.005,
        MARGIN,
        normal=15,
        pilot_pairs=200,
        design_effect=1.01,
        identical_pairs=SPANNING,
        identical_units=UNITS,
        cluster_sizes=BUILTIN_GENDER_DIALOGUE_SIZES,
    )
    assert plan is not None
    assert (plan.low, plan.high) == differing_share_interval(0.005, 200, design_effect=1.01)
    assert plan.least >= POWER and plan.least == pytest.approx(_power(plan.pairs, plan.least_share, SPANNING, True, 1.01))
    assert plan.least_share == plan.low  # few samples hold a differing pair: the bound must pass them
    assert plan.at_low[0] == pytest.approx(plan.least) and plan.at_low[1] > plan.at_low[0] / 2
    assert plan.at_high[1] < 0.01  # at 2.8% nearly every sample holds differing pairs: the TOST decides
    assert plan.at_share == 322 and plan.at_share_least is not None and plan.at_share_least < 0.1
    # a sample spanning the bound's 149 dialogues is not certain at 572 pairs: its chance is part of the power
    none = (1 - plan.low) ** plan.pairs
    assert plan.at_low[1] < none * 0.95


def test_the_interval_is_clopper_pearson_and_widens_with_the_design_effect() -> None:
    for k, n in ((1, 200), (3, 1470), (7, 150)):
        exact = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert differing_share_interval(k / n, n) == pytest.approx((exact.low, exact.high), rel=1e-6)
    # a design effect of 2: the pilot's 200 pairs count as 100 (Korn-Graubard), the interval as of 5 in 100
    exact = binomtest(5, 100).proportion_ci(confidence_level=0.95, method="exact")
    assert differing_share_interval(0.05, 200, design_effect=2.0) == pytest.approx((exact.low, exact.high), rel=1e-6)
    narrow, wide = differing_share_interval(0.01, 400), differing_share_interval(0.01, 400, design_effect=1.5)
    assert wide[0] < narrow[0] and wide[1] > narrow[1]
    with pytest.raises(ValueError, match="pilot_pairs"):
        differing_share_interval(0.01, 0)


def test_the_interval_covers_the_share_at_its_level() -> None:
    """Exact coverage: over every count a pilot of 200 pairs could hold, the interval holds the true share >= 95%."""
    n = 200
    bounds = [differing_share_interval(k / n, n) for k in range(n + 1)]
    for share in (0.001, 0.005, 0.02, 0.1):
        covered = sum(binom.pmf(k, n, share) for k, (low, high) in enumerate(bounds) if low <= share <= high)
        assert covered >= 0.95, (share, covered)


@pytest.mark.parametrize(("n", "share"), [(60, 0.01), (150, 0.005), (120, 0.04)])
def test_the_power_sums_the_audits_own_tost_over_every_sample(n: int, share: float) -> None:
    """Each sample of k differing pairs, j of them A above B, decided by ``tost_mean`` as the audit decides a count."""
    total = 0.0
    for k in range(1, n + 1):
        weight = binom.pmf(k, n, share)
        if weight < 1e-12:
            continue
        for j in range(k + 1):
            d = np.zeros(n)
            d[:j], d[j:k] = 1.0, -1.0
            passed = tost_mean(units(d, None), margin=MARGIN, alpha=ALPHA).equivalent
            total += weight * binom.pmf(j, k, 0.5) * bool(passed)
    identical = (1 - share) ** n if n >= UNITS else 0.0
    power, part = power_few_differing(n, share, MARGIN, alpha=ALPHA, identical_pairs=UNITS)
    assert part == pytest.approx(identical)
    assert power == pytest.approx(total + identical, abs=1e-6)


def test_no_size_within_bounds_says_so_with_the_interval() -> None:
    """A hundredth of a point: at the interval's high end (2.75%) the TOST would need millions of pairs."""
    with pytest.raises(ValueError) as raised:
        pairs_for_few_differing(0.005, 1e-4, normal=15, identical_pairs=10**6 + 1, pilot_pairs=200)
    said = str(raised.value)
    assert "does not reach power 0.80 on 1,000,000 pairs at every differing share" in said
    assert "the pilot's 95% interval, 0.013% to 2.754%" in said


def test_a_key_whose_differing_pairs_are_not_few_is_left_to_the_normal_formula() -> None:
    """120 of the normal formula's 400 pairs would differ: the spread decides, with or without the pilot's pairs."""
    assert plan_few_differing(0.3, MARGIN, normal=400, pilot_pairs=200, identical_pairs=SPANNING) is None
    assert pairs_for_few_differing(0.3, MARGIN, normal=400, identical_pairs=SPANNING, pilot_pairs=200) is None


def test_the_reports_gate_pairs_plan_few_differing_pairs_as_plan_does(tmp_path: Path) -> None:
    """One decision: builtin:echo's 200-pair audit differs in family_words on 1 pair; its report's gate_pairs (323 at the
    share taken as known) is plan --gate's from its results.json, and reaches the power at both ends of the interval,
    the identical-answers bound counted at the units the key's own scores need (156 dialogues, not the default's 149)."""
    out = tmp_path / "run"
    done = runner.invoke(
        app, ["audit", "--model", "builtin:echo", "--axis", "gender", "--pairs", "200", "--quiet", "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    data = json.loads((out / "gender" / "results.json").read_text())
    row = data["measures"]["family_words"]
    n_pairs, deff, margin = data["n_pairs"], row["design_effect"], row["equivalence_margin"]
    share = row["sd_difference"] ** 2 * (n_pairs - 1) / n_pairs + (row["a"] - row["b"]) ** 2
    assert round(share * n_pairs) == 1, row
    planned = runner.invoke(app, ["plan", "--gate", "--results", str(out / "gender" / "results.json")])
    assert planned.exit_code == 0, planned.output
    found = re.search(r"family_words \(count\): ([\d,]+) pairs", planned.output)
    assert found, planned.output
    assert int(found.group(1).replace(",", "")) == row["gate_pairs"]
    low, high = differing_share_interval(share, n_pairs, design_effect=deff)
    sizes = tuple((int(m), int(count)) for m, count in data["corpus_dialogue_sizes"])
    # the identical-answers bound's units are the key's own: its margin over the range of its scores (3 words here)
    assert row["identical_share"] == pytest.approx(margin / 3)
    own = identical_units_needed(alpha=ALPHA, margin=row["identical_share"], max_difference=1.0)
    assert own == 156 > UNITS
    for end in (low, high):
        power, _ = power_few_differing(
            row["gate_pairs"],
            end,
            margin,
            alpha=ALPHA,
            design_effect=deff,
            identical_pairs=pairs_spanning(own, power=POWER, cluster_sizes=sizes),
            identical_units=own,
            cluster_sizes=sizes,
        )
        assert power >= POWER, (end, power)
