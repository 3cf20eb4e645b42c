"""Issue 39: results.json records, per count key, the share the exact identical-answers rule bounds it below.

The audit passes a count key identical on every unit by ``share_equivalence``: the share of units that could differ
lies below ``margin / (the range of its scores)``, which takes ``identical_units_needed`` of that share units, not
the default 2%'s 149. A planner cannot see the range, so each measure records that share (``identical_share``), and
the report's ``gate_pairs`` and ``plan --gate`` count the units it gives for a key whose differing pairs are few.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.inference import Inference, KeyMeta, compare_scored
from fairtalk.records import Response
from fairtalk.results import MeasureResult
from fairtalk.stats import (
    identical_share,
    identical_units_needed,
    pairs_for_equivalence,
    pairs_for_few_differing,
    share_equivalence,
)

runner = CliRunner()
ALPHA, POWER = 0.05, 0.8


def _count(a: np.ndarray, b: np.ndarray, margin: float | None = 0.05) -> float | None:
    opts = Inference(alpha=ALPHA, margins={} if margin is None else {"k": margin})
    return compare_scored("k", KeyMeta("count"), a, b, opts).identical_share


def test_a_count_records_its_margin_over_the_range_of_its_scores_which_the_rule_passes_identical_answers_at() -> None:
    """The recorded share is the one share_equivalence bounds identical answers below: they pass from exactly the
    units identical_units_needed gives for it (365 at ±0.05723 over 7 words), one fewer does not."""
    a = np.array([0.0, 7.0, 3.0, 2.0, 1.0])
    b = a.copy()
    b[0] = 1.0  # one pair differs: the range, over both sides, is still 7
    share = _count(a, b, margin=0.05723)
    assert share == pytest.approx(0.05723 / 7) == identical_share(0.05723, 7.0)
    units = identical_units_needed(alpha=ALPHA, margin=share, max_difference=1.0)
    assert units == 365
    for n, passes in ((units, True), (units - 1, False)):
        rule = share_equivalence(n, alpha=ALPHA, margin=0.05723, max_difference=7.0)
        assert rule.equivalent is passes, (n, rule)


def test_no_share_is_recorded_where_no_margin_applies_or_for_a_rate() -> None:
    ones = np.ones(20)
    assert _count(ones, ones) is None  # scores that do not vary: the rule's default share, unscaled by any margin
    assert _count(ones, ones, margin=None) is None
    assert _count(np.arange(20.0), np.arange(20.0), margin=40.0) == 1.0  # a margin past the range: capped at 1
    opts = Inference(alpha=ALPHA, margins={"r": 0.02})
    rate = np.array([0.0, 1.0] * 10)
    assert compare_scored("r", KeyMeta("rate"), rate, rate, opts).identical_share is None


def test_an_entry_without_the_field_reads_as_none() -> None:
    """results.json files written before the field: the entry reads back, its share None (plan then assumes 2%)."""
    entry = {
        "name": "family_words",
        "kind": "count",
        "a": 0.3,
        "b": 0.3,
        "difference": 0.0,
        "z": None,
        "p": None,
        "p_paired": 1.0,
        "paired_test": "t",
        "ci95": [None, None],
        "effect_size": None,
        "effect_size_name": "cohens_d_z",
    }
    read = MeasureResult.from_dict(entry)
    assert read.identical_share is None
    written = MeasureResult.from_dict({**entry, "identical_share": 0.0191}).to_dict()
    assert written["identical_share"] == 0.0191
    assert list(written).index("identical_share") == list(written).index("equivalence_bound") + 1


def test_the_reports_gate_pairs_count_the_units_a_few_differing_counts_own_scores_need(tmp_path: Path) -> None:
    """Review finding (issue 39): gate_pairs planned a count with few differing pairs as if identical answers passed
    from the default 2%'s 149 pairs; this key's lengths span 10 words, so the rule needs more. Its gate_pairs is now
    the few-differing plan with the key's own units, and plan --gate gives the same from its results.json."""
    rows = []
    for i in range(200):
        words = " ".join(["word"] * (2 + i % 11)) + (" indeed" if i == 7 else "")
        rows += [Response(f"p{i}", "a", f"he said hi {i}", words), Response(f"p{i}", "b", f"she said hi {i}", words)]
    rows[15] = Response("p7", "b", "she said hi 7", rows[14].response.replace(" indeed", ""))
    fairtalk.write_responses(rows, tmp_path / "r.jsonl")
    args = ["score", "--responses", str(tmp_path / "r.jsonl"), "--axis", "gender", "--measures", "length"]
    done = runner.invoke(app, [*args, "--margin", "length=0.1", "-o", str(tmp_path / "out"), "--resamples", "100"])
    assert done.exit_code == 0, done.output
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    row = data["measures"]["length"]
    margin, sd, share = row["equivalence_margin"], row["sd_difference"], row["identical_share"]
    assert margin == 0.1 and share == pytest.approx(margin / 10)  # 2 to 12 words: 1%
    units = identical_units_needed(alpha=ALPHA, margin=share, max_difference=1.0)
    assert units == 299
    n_pairs = data["n_pairs"]
    differing = sd**2 * (n_pairs - 1) / n_pairs + (row["a"] - row["b"]) ** 2
    normal = pairs_for_equivalence(sd, margin, alpha=ALPHA, power=POWER, design_effect=1.0)

    def planned(identical: int) -> int | None:
        return pairs_for_few_differing(
            differing, margin, normal=normal, alpha=ALPHA, power=POWER, identical_pairs=identical, pilot_pairs=n_pairs
        )

    assert row["gate_pairs"] == planned(units) != planned(149)
    gate = runner.invoke(app, ["plan", "--gate", "--results", str(tmp_path / "out" / "results.json")])
    assert gate.exit_code == 0, gate.output
    text = " ".join(gate.output.split())
    assert f"length (count): {row['gate_pairs']:,} pairs" in text
    assert f"the identical-answers bound needs {units:,} pairs on this key" in text
