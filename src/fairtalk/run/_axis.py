"""One axis of ``audit()``: pairs -> responses -> scores (:func:`audit_axis`), then the run's correction (:func:`finish_axes`).

The pairs stage's :class:`~fairtalk.records.Coverage` and :class:`~fairtalk.records.PairsCheck`
stay typed here; they become JSON (``to_dict()``) only in the axis' provenance (``audit``) and in the
:class:`~fairtalk.results.AxisRun` handed to the report.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from fairtalk.config import GenerationOptions, InferenceOptions, PairsOptions
from fairtalk.corpora import Corpus
from fairtalk.counterfactual import Swapper
from fairtalk.errors import InputError, ResponderError
from fairtalk.inference import Scored, by_turn, check_multi_turn, correct_families, finalize
from fairtalk.lexicons import Lexicon
from fairtalk.pairs import PairColumn, build_pairs, check_pairs
from fairtalk.progress import ProgressReporter
from fairtalk.records import Coverage, Pair, PairsCheck
from fairtalk.results import AuditProvenance, AxisRun, ByTurnResult, GenerationSummary, ServedProvenance, SimilarityResult
from fairtalk.run._generate import FailedBefore, generate, served_warning
from fairtalk.run._score import prepare_scores
from fairtalk.run._similarity_test import against_baseline
from fairtalk.store import CachingResponder

__all__ = ["AxisWork", "audit_axis", "axis_pairs", "finish_axes", "too_few_pairs"]

_LOG = logging.getLogger(__name__)
_MSG_TOO_FEW_PAIRS = (
    "axis {axis}: {corpus} gave {n} pair(s) ({n_read} contexts read, {n_matched} mention a group{dropped}{skipped}); "
    "need at least 2{hint}"
)
#: Where contexts that mention both groups were dropped: how to keep them.
_HINT_MIXED = '; mixed="keep" (--mixed keep) swaps the contexts that mention both groups too'
#: One reason the corpus reader skipped lines, as `fairtalk pairs` lists them.
_SKIPPED = "{n:,} skipped: {reason}{first}"
_MSG_LOST_TO_ERRORS = (
    "axis {axis}: {n_complete} complete pair(s) left of {n_pairs}, need at least 2: the model failed on "
    "{n_errors} pair side(s) ({counts}); first error: {first}"
)
_MSG_NO_CONTEXTS = "axis {axis}: neither contexts nor pairs were given"


@dataclass(frozen=True, slots=True)
class AxisWork:
    """One axis audited up to its correction: the scores, and what its AxisRun records besides the result."""

    axis: str
    scored: Scored
    coverage: Coverage
    generation: GenerationSummary
    timings: Mapping[str, float]
    pairs: PairColumn
    audit: AuditProvenance
    similarity: SimilarityResult | None = None
    pairs_check: PairsCheck | None = None
    by_turn: ByTurnResult | None = None


def audit_axis(
    lexicon: Lexicon,
    cached: CachingResponder,
    reporter: ProgressReporter,
    *,
    pairing: PairsOptions,
    generation: GenerationOptions,
    inference: InferenceOptions,
    contexts: Corpus | None,
    given: tuple[Sequence[Pair], Coverage] | None,
    run_id: str,
    extra_manifest: Mapping[str, object] | None,
    timings: Mapping[str, float] | None = None,
    failed: FailedBefore | None = None,
) -> AxisWork:
    """One axis: the pairs given (with their coverage) or built from ``contexts``, responses, scores.

    Each stage receives its own options: the pairs ``pairing``, the model's answers
    ``generation``, scoring (and the similarity baseline, the gap by turn) ``inference``.
    ``timings``: the stages' seconds so far (the pairs stage's, when the caller built them).
    ``failed``: the pair sides that failed earlier in the run (an ``until_decided`` audit's earlier
    looks), not asked again; the sides that fail now are added to it.
    """
    axis = lexicon.axis
    spent: dict[str, float] = dict(timings or {})
    found, coverage = given if given is not None else axis_pairs(lexicon, contexts, pairing, reporter, spent)
    pairs = PairColumn.of(found)  # pairs given ready-made are held as columns too
    if inference.by_turn:
        check_multi_turn(pairs, axis)  # before any answer is asked for
    pairs_check = check_pairs(pairs, Swapper(lexicon, seed=pairing.seed))

    generated = generate(
        cached,
        pairs,
        generation.settings,
        seed=generation.seed,
        progress=reporter,
        label=f"{axis}: responses",
        warn_served=False,
        failed=failed,
    )
    spent["generation"] = generated.summary.seconds
    if generated.responses.n_pairs < 2 and generated.errors:
        raise ResponderError(_lost_to_errors(axis, generated.summary, generated.responses.n_pairs))

    similarity = None
    if inference.similarity:
        started = time.perf_counter()
        similarity = against_baseline(
            cached,
            pairs,
            generated,
            generation.settings,
            seed=generation.seed,
            methods=inference.similarity,
            alpha=inference.score.alpha,
            clusters=inference.score.clusters,
            progress=reporter,
            label=f"{axis}: baseline answers",
            failed=failed,
        )
        spent["similarity"] = time.perf_counter() - started
    started = time.perf_counter()
    reporter.start(f"{axis}: scoring", unit="pairs")
    scored = prepare_scores(
        generated.responses,
        axis=lexicon,
        options=inference.score,
        engine=generation.engine,
        store=cached.store,
        max_consecutive_failures=cached.max_consecutive_failures,
    )
    reporter.finish()  # the prompts the model cut to fit (each response records it) are warned by prepare_scores
    spent["scoring"] = time.perf_counter() - started
    served = _served(cached.requested_model, generated.summary)
    if (other_model := served_warning(served)) is not None:  # in the result's warnings: every report shows it
        scored = replace(scored, warnings=(other_model, *scored.warnings))
    _LOG.info("%s: scored %d pairs (%.1f s)", axis, generated.responses.n_pairs, spent["scoring"])
    turned = None
    if inference.by_turn:
        started = time.perf_counter()
        turned = by_turn(scored, inference.score)
        spent["by_turn"] = time.perf_counter() - started
    audit = AuditProvenance(
        run_id=run_id,
        corpus=pairing.corpus,
        split=pairing.split,
        model=cached.recorded,
        decoding=generation.settings.sent(),
        seed=pairing.seed,
        n_pairs_requested=pairing.n_pairs,
        mixed=pairing.mixed,
        balance=pairing.balance,
        coverage=coverage.to_dict(),
        served=served,
        extra=dict(extra_manifest or {}),
    )
    return AxisWork(
        axis,
        scored,
        coverage,
        generated.summary,
        MappingProxyType(spent),
        pairs,
        audit,
        similarity,
        pairs_check,
        turned,
    )


def _served(requested: str | None, generation: GenerationSummary) -> ServedProvenance | None:
    """What the server said of the model that answered the axis (None: a model that does not say)."""
    if generation.n_served_unknown is None:
        return None
    return ServedProvenance(requested, dict(generation.served_models or {}), generation.n_served_unknown)


def axis_pairs(
    lexicon: Lexicon,
    contexts: Corpus | None,
    pairing: PairsOptions,
    reporter: ProgressReporter,
    timings: dict[str, float],
) -> tuple[PairColumn, Coverage]:
    """The pairs stage of one axis: its pairs built from ``contexts`` and their coverage (its time in ``timings``)."""
    axis, seed = lexicon.axis, pairing.seed
    if contexts is None:
        raise ValueError(_MSG_NO_CONTEXTS.format(axis=axis))
    started = time.perf_counter()
    reporter.start(f"{axis}: pairs", unit="pairs")
    pair_set = build_pairs(
        contexts, Swapper(lexicon, seed=seed), mixed=pairing.mixed, limit=pairing.n_pairs, seed=seed, balance=pairing.balance
    )
    pairs = pair_set.column()  # held as columns, not a record per pair
    coverage = pair_set.coverage
    if not pairing.n_pairs_given:  # n_pairs left at its default: a smaller corpus is no shortfall to say
        coverage = replace(coverage, limit_given=False)
    reporter.finish()
    timings["pairs"] = time.perf_counter() - started
    _LOG.info("%s: %d pairs from %d contexts read (%d mention a group)", axis, len(pairs), coverage.n_read, coverage.n_matched)
    if len(pairs) < 2:
        raise too_few_pairs(axis, pairing, len(pairs), coverage)
    return pairs, coverage


def too_few_pairs(axis: str, pairing: PairsOptions, n: int, coverage: Coverage) -> InputError:
    """The error of an axis whose corpus gave ``n`` < 2 pairs: what was read, dropped and skipped, and how to keep mixed contexts."""
    return InputError(
        _MSG_TOO_FEW_PAIRS.format(
            axis=axis,
            corpus=pairing.corpus,
            n=n,
            n_read=coverage.n_read,
            n_matched=coverage.n_matched,
            dropped="" if (dropped := coverage.dropped_note()) is None else f": {dropped}",
            skipped=_skipped(coverage),
            hint=_HINT_MIXED if coverage.n_mixed and coverage.mixed == "drop" else "",
        )
    )


def _skipped(coverage: Coverage) -> str:
    """``; 13 skipped: missing field (first at c.jsonl:2); ...``: what the corpus reader skipped, or nothing."""
    first = dict(coverage.skipped_first)
    return "".join(
        "; " + _SKIPPED.format(n=n, reason=reason, first=f" (first at {first[reason]})" if reason in first else "")
        for reason, n in coverage.skipped
    )


def finish_axes(
    works: Sequence[AxisWork], inference: InferenceOptions, pvalues: Sequence[Sequence[float | None]] | None = None
) -> dict[str, AxisRun]:
    """Correct each axis' family (``correction_scope="axis"``) or all together (``"run"``), and build the AxisRuns.

    ``pvalues`` (per axis, per row) replaces the rows' ``p_paired`` as what is corrected.
    """
    adjusted, scopes, sizes = correct_families(
        [(w.axis, w.scored) for w in works],
        correction=inference.score.correction,
        scope=inference.correction_scope,
        pvalues=pvalues,
    )
    runs: dict[str, AxisRun] = {}
    for index, (work, p_adjusted) in enumerate(zip(works, adjusted)):
        result = finalize(
            work.scored,
            p_adjusted,
            correction_scope=scopes[index],
            audit=work.audit,
            family_size=sizes[index],
            dialogue_sizes=work.coverage.dialogue_sizes,
        )
        if work.by_turn is not None:
            result = replace(result, by_turn=work.by_turn)
        runs[work.axis] = AxisRun(
            axis=work.axis,
            result=result,
            coverage=work.coverage,
            generation=work.generation,
            timings=work.timings,
            pairs=work.pairs,
            responses=work.scored.responses,
            similarity=work.similarity,
            pairs_check=work.pairs_check,
        )
    return runs


def _lost_to_errors(axis: str, summary: GenerationSummary, n_complete: int) -> str:
    counts = ", ".join(f"{kind} {n}" for kind, n in summary.error_counts.items())
    first = summary.error_examples[0] if summary.error_examples else "?"
    return _MSG_LOST_TO_ERRORS.format(
        axis=axis, n_complete=n_complete, n_pairs=summary.n_pairs, n_errors=summary.n_errors, counts=counts, first=first
    )
