"""The choices of the inference options, declared where the options are: which paired test, what a correction spans."""

from __future__ import annotations

__all__ = ["BINARY_TESTS", "CORRECTION_SCOPES", "COUNT_TESTS"]

#: ``--binary-test``: the paired test of rates. ``score`` (the default) is the test the printed score interval inverts,
#: by dialogue with clusters; ``exact``/``midp`` are McNemar's (without clusters; with them, the cluster mean test).
BINARY_TESTS = {"score": "score", "exact": "mcnemar_exact", "midp": "mcnemar_midp"}
#: ``--count-test``: ``mean`` (exact sign-flip, else t; tests the mean) or ``wilcoxon`` (signed-rank, with Hodges-Lehmann).
COUNT_TESTS = ("mean", "wilcoxon")
#: What the correction spans: each axis on its own, or every axis of the run together.
CORRECTION_SCOPES = ("axis", "run")
