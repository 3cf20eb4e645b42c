"""The counterfactual similarity test: answers to a pair's two sides against answers to one context asked twice.

Per pair, the model answers side A and side B (the counterfactual answers) and, as the
no-effect baseline, side A twice more with two other seeds (a placebo pair: no word differs).
For each similarity method the per-pair divergence ``1 - similarity`` of the counterfactual
answers is compared with the baseline's by the paired mean test (dialogues as units when the
pairs name them), and the p-values are corrected over the methods (Holm). See
:mod:`fairtalk.measures.similarity`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

import numpy as np

from fairtalk.errors import InputError
from fairtalk.measures.similarity import pair_similarity
from fairtalk.models import DecodingSettings, Responder
from fairtalk.pairs import read_pairs
from fairtalk.pipeline._generate import Generation, cached_model, generate
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.records import Pair
from fairtalk.results import SimilarityResult, SimilarityRow
from fairtalk.stats import adjust_pvalues, difference_interval, paired_test
from fairtalk.store import DEFAULT_MAX_CONSECUTIVE_FAILURES, CachingResponder

__all__ = ["BASELINE_SEED_OFFSET", "against_baseline", "similarity_test"]

#: Added to the run's seed for the baseline's two answers, so that they are new draws.
BASELINE_SEED_OFFSET = 1_000_003
_MSG_TOO_FEW = "need at least 2 pairs answered on both sides and in the baseline, got {n}"
_MSG_FAILURES = "; {n_failed} of {n_items} answers failed ({kinds}): {examples}"
#: First messages shown per kind of failure when too few pairs are left.
_N_EXAMPLES_PER_KIND = 1


def similarity_test(
    pairs: Iterable[Pair] | str | os.PathLike[str],
    *,
    model: str | Responder | None = None,
    methods: Sequence[str] = ("exact", "rouge_l", "answered", "length_ratio"),
    seed: int = 0,
    settings: DecodingSettings | None = None,
    store: str | os.PathLike[str] | None = None,
    alpha: float = 0.05,
    clusters: bool = True,
    batch_size: int = 64,
    model_args: Mapping[str, object] | None = None,
    model_version: str | None = None,
    progress: ProgressCallback | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
) -> SimilarityResult:
    """Test whether a model's answers to counterfactual pairs diverge more than its answers to one context asked twice.

    Parameters
    ----------
    pairs : iterable of Pair, or a pairs JSONL path
        The counterfactual pairs (one axis).
    model : str or Responder, optional
        The model under test (a spec or a responder; None: the default audit model).
    methods : sequence of str
        Similarity methods (:data:`fairtalk.measures.similarity.SIMILARITY_METHODS`: exact,
        rouge_l, cosine; answered (only one side answered at all) and length_ratio (the absolute
        log ratio of the answers' lengths)).
    seed : int
        Per-item seeds of the counterfactual answers; the baseline's come from ``seed`` +
        :data:`BASELINE_SEED_OFFSET`.
    settings : DecodingSettings, optional
        Decoding (greedy by default: then the baseline's two answers are the same, and any
        counterfactual difference is the group's).
    store : path, optional
        A run store: stored answers are reused (None keeps them in memory).
    alpha : float
        Level of the Holm-corrected tests over the methods.
    clusters : bool
        Dialogues, not pairs, as the units when the pairs name their dialogue.
    batch_size, model_args, model_version, max_consecutive_failures
        As for :func:`fairtalk.respond`.

    Returns
    -------
    SimilarityResult

    Raises
    ------
    InputError
        Fewer than two pairs answered on both sides and in the baseline (saying how many
        answers failed, and the first message of each kind of failure).
    ResponderAborted
        ``max_consecutive_failures`` answers in a row failed with one kind of error.
    """
    chosen = list(read_pairs(pairs) if isinstance(pairs, (str, os.PathLike)) else pairs)
    settings = settings or DecodingSettings()
    reporter = ProgressReporter(progress_callback(progress))
    with cached_model(model, store, batch_size=batch_size, max_errors=None, model_args=model_args,
                      model_version=model_version, max_consecutive_failures=max_consecutive_failures) as cached:  # fmt: skip
        counterfactual = generate(cached, chosen, settings, seed=seed, progress=reporter, label="counterfactual answers")
        return against_baseline(cached, chosen, counterfactual, settings, seed=seed, methods=methods, alpha=alpha,
                                clusters=clusters, progress=reporter)  # fmt: skip


def against_baseline(
    cached: CachingResponder,
    pairs: Sequence[Pair],
    counterfactual: Generation,
    settings: DecodingSettings,
    *,
    seed: int,
    methods: Sequence[str],
    alpha: float,
    clusters: bool,
    progress: ProgressReporter,
    label: str = "baseline answers",
) -> SimilarityResult:
    """The baseline answers (side A asked twice more) through ``cached``, and the test of the counterfactual ones against them."""
    placebo = [replace(pair, b=pair.a, swaps=()) for pair in pairs]
    baseline = generate(cached, placebo, settings, seed=seed + BASELINE_SEED_OFFSET, progress=progress, label=label)
    fingerprint = cached.fingerprint
    base = {ra.pair_id: (ra.response, rb.response) for ra, rb in baseline.responses}
    found = counterfactual.responses.clusters
    kept = [(ra.response, rb.response, base[ra.pair_id], None if found is None else found[i])
            for i, (ra, rb) in enumerate(counterfactual.responses) if ra.pair_id in base]  # fmt: skip
    if len(kept) < 2:
        raise InputError(_MSG_TOO_FEW.format(n=len(kept)) + _failures(counterfactual, baseline))
    units = [str(r[3]) for r in kept] if clusters and found is not None else None
    cf = pair_similarity([r[0] for r in kept], [r[1] for r in kept], methods=methods)
    bl = pair_similarity([r[2][0] for r in kept], [r[2][1] for r in kept], methods=methods)
    tests = {m: _compare(1.0 - cf[m], 1.0 - bl[m], units) for m in methods}
    adjusted = adjust_pvalues(np.array([np.nan if t[2] is None else t[2] for t in tests.values()]), method="holm")
    out = []
    for (method, (test, interval, p, note)), p_adj in zip(tests.items(), adjusted):
        p_adjusted = None if np.isnan(p_adj) else float(p_adj)
        out.append(SimilarityRow(
            method=method, n_pairs=len(kept), counterfactual=float(np.mean(1.0 - cf[method])),
            baseline=float(np.mean(1.0 - bl[method])), difference=float(np.mean(bl[method] - cf[method])),
            ci95=interval, test=test, p=p, p_adjusted=p_adjusted,
            detected=p_adjusted is not None and p_adjusted < alpha, note=note,
        ))  # fmt: skip
    summary = {"counterfactual": counterfactual.summary.to_dict(), "baseline": baseline.summary.to_dict()}
    return SimilarityResult(
        axis=pairs[0].axis if pairs else "", model=fingerprint, alpha=alpha, seed=seed, n_pairs=len(kept),
        n_clusters=None if units is None else len(set(units)), rows=tuple(out), summary=MappingProxyType(summary),
    )  # fmt: skip


def _failures(*generations: Generation) -> str:
    """How many answers failed over ``generations``, by kind, with the first message(s) of each kind ("" if none)."""
    n_items = sum(g.summary.n_items for g in generations)
    counts: dict[str, int] = {}
    examples: dict[str, list[str]] = {}
    for generation in generations:
        for *_, message in generation.errors:
            kind = message.partition(":")[0]
            counts[kind] = counts.get(kind, 0) + 1
            shown = examples.setdefault(kind, [])
            if len(shown) < _N_EXAMPLES_PER_KIND and message not in shown:
                shown.append(message)
    if not counts:
        return ""
    kinds = ", ".join(f"{kind} {n:,}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return _MSG_FAILURES.format(n_failed=sum(counts.values()), n_items=n_items, kinds=kinds,
                                examples="; ".join(m for kind in counts for m in examples[kind]))  # fmt: skip


def _compare(cf: np.ndarray, bl: np.ndarray, units: Sequence[str] | None) -> tuple[str, tuple, float | None, str | None]:
    """The paired mean test and t interval of counterfactual - baseline divergence."""
    test = paired_test(cf, bl, kind="count", clusters=units)
    interval = difference_interval(cf, bl, kind="count", clusters=units)
    return test.name, (interval.low, interval.high), test.p, test.note or interval.note
