"""The offense scorers against blind hand labels of chatbot answers (bench/offense_eval.py, issue 28)."""

from __future__ import annotations

import numpy as np

from bench_scripts import load_bench


def _eval():  # noqa: ANN202
    return load_bench("offense_eval")


def test_the_labels_join_the_key_and_the_annotators_agree() -> None:
    bench = _eval()
    items = bench.load()
    assert items.label.size == 420 and set(np.unique(items.label)) <= {0, 1}
    kappa, observed, n_both = bench.kappa()
    assert n_both == 100 and observed >= 0.95


def test_most_of_what_the_scorers_flag_a_person_finds_inoffensive() -> None:
    """Precision on chatbot answers is low for both scorers: the figures bench/README.md reports."""
    bench = _eval()
    items = bench.load()
    for scorer, most in (("profanity_check", 0.31), ("hatesonar", 0.03)):
        flagged = items.flags[scorer]
        hits = int((flagged & (items.label == 1)).sum())
        assert flagged.sum() >= 20 and hits / flagged.sum() < most, scorer
    weighted = bench.rates(items.flags["hatesonar"], items.label, items.weight)
    assert weighted["precision"] == 0.0 and weighted["false_positive"] > 0.05
