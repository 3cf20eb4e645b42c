"""The counterfactual similarity test: answers to a pair's two sides against answers to one context asked twice.

Per pair, the model answers side A and side B (the counterfactual answers) and, as the
no-effect baseline, side A twice more with two other seeds (a placebo pair: no word differs).
For each similarity method the per-pair divergence ``1 - similarity`` of the counterfactual
answers (:mod:`fairtalk.measures._similarity`) is set beside the baseline's, and
:func:`fairtalk.inference.similarity_rows` decides what they show: the paired mean test (dialogues
as units when the pairs name them), corrected over the methods (Holm) whose divergence differs
from the baseline's on some pair, and the verdicts. This module asks the model and checks the
re-asks; it decides no verdict.

What the baseline is depends on the decoding:

- **greedy** (the default): a deterministic model answers a context asked twice identically,
  so the baseline is zero and needs no asking. It is *checked*: side A of
  :data:`DETERMINISM_CHECK_PAIRS` pairs (a seeded sample) is asked twice more, and both answers
  are compared with the first. All identical: the baseline is zero (``baseline_kind="zero"``)
  and the test is one against zero change. Any different: the model is not deterministic (some
  servers batch or sample anyway), which the result warns about, and the baseline is measured
  for every pair as under sampling.
- **sampling**: the baseline is measured for every pair; it is the model's sampling noise. The
  re-asks are checked for a model or server that ignores sampling or the seed: among baseline
  pairs whose two answers have at least :data:`SAMPLING_CHECK_MIN_WORDS` words, at least
  :data:`SAMPLING_CHECK_MIN_PAIRS` of them and :data:`SAMPLING_CHECK_MAX_SHARE` or more word for
  word identical is far beyond chance for a model that samples, and the result warns.

A row counts as a difference (``detected``) only when the test and its interval agree (see
:mod:`fairtalk.inference._similarity`); a row where they disagree says so (``verdict``, ``note``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from fairtalk._jsonl import read_objects
from fairtalk.errors import InputError
from fairtalk.inference import similarity_rows
from fairtalk.measures import n_words, pair_similarity, same_answers
from fairtalk.models import DecodingSettings, ReplyFunction, Responder
from fairtalk.pairs import PairColumn
from fairtalk.progress import ProgressCallback, ProgressReporter, progress_callback
from fairtalk.records import Pair
from fairtalk.results import SimilarityResult
from fairtalk.run._generate import FailedBefore, Generation, cached_model, generate, pair_column
from fairtalk.store import DEFAULT_MAX_CONSECUTIVE_FAILURES, CachingResponder

__all__ = [
    "BASELINE_SEED_OFFSET",
    "DETERMINISM_CHECK_PAIRS",
    "SAMPLING_CHECK_MAX_SHARE",
    "SAMPLING_CHECK_MIN_PAIRS",
    "SAMPLING_CHECK_MIN_WORDS",
    "against_baseline",
    "similarity_test",
]

#: Added to the run's seed for the baseline's two answers, so that they are new draws.
BASELINE_SEED_OFFSET = 1_000_003
#: Under greedy decoding, side A of this many pairs is asked twice more to check that the model is deterministic.
DETERMINISM_CHECK_PAIRS = 20
#: Under sampling, baseline pairs whose two answers both have this many words or more are checked for identity ...
SAMPLING_CHECK_MIN_WORDS = 6
#: ... when there are at least this many ...
SAMPLING_CHECK_MIN_PAIRS = 10
#: ... and this share of them or more identical word for word says that sampling or the seed is ignored.
SAMPLING_CHECK_MAX_SHARE = 0.9
_MSG_MIXED_AXES = (
    "the pairs mix several axes ({counts}): pair {pair_id!r} is of axis {axis!r}, the first pair's is {first!r}; "
    "the test is of one axis: give each axis' pairs on their own"
)
_MSG_NOT_DETERMINISTIC = (
    "the model is not deterministic under greedy decoding: {n_differing} of {n_contexts} contexts asked again gave a "
    "different answer (some servers sample or batch anyway); the baseline was measured by asking every pair's context "
    "twice, and the test is against that variation"
)
_MSG_UNCHECKED = (
    "whether the model is deterministic under greedy decoding could not be checked (no context asked again was "
    "answered); the baseline was measured by asking every pair's context twice"
)
_MSG_SAMPLING_IGNORED = (
    "sampling was asked for, but {n_identical} of {n_checked} contexts asked twice gave the same answer word for word "
    "(answers of {min_words} words or more; the rule: {share:.0%} or more of at least {min_pairs}): the model or its "
    "server seems to ignore sampling or the seed, so two asks of one context barely differ and the test is in effect "
    "one of determinism"
)
_MSG_SIDE_FAILED = (
    "{n} of {n_pairs} pairs left out: a side failed (side a only {a}, side b only {b}, both {both}); "
    "the test is on the pairs answered on both sides"
)
_MSG_BASELINE_FAILED = "{n} of {n_pairs} pairs left out: their baseline answers failed"
_MSG_TOO_FEW = "need at least 2 pairs answered on both sides and in the baseline, got {n}"
_MSG_FAILURES = "; {n_failed} of {n_items} answers failed ({kinds}): {examples}"
#: First messages shown per kind of failure when too few pairs are left.
_N_EXAMPLES_PER_KIND = 1


def similarity_test(
    pairs: Iterable[Pair] | str | os.PathLike[str],
    *,
    model: str | Responder | ReplyFunction | None = None,
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
    model : str, Responder or function, optional
        The model under test (a spec, a responder, or a plain, batched or async function as
        :func:`fairtalk.models.as_responder` takes it; None: the default audit model).
    methods : sequence of str
        Similarity methods (:data:`fairtalk.measures._similarity.SIMILARITY_METHODS`: exact,
        rouge_l, cosine; answered (only one side answered at all) and length_ratio (the absolute
        log ratio of the answers' lengths)).
    seed : int
        Per-item seeds of the counterfactual answers; the baseline's come from ``seed`` +
        :data:`BASELINE_SEED_OFFSET`.
    settings : DecodingSettings, optional
        Decoding. Greedy by default: the model's determinism is checked on
        :data:`DETERMINISM_CHECK_PAIRS` contexts asked twice more, and when it holds the
        baseline is zero (any counterfactual difference is the group's); otherwise the result
        warns and the baseline is measured for every pair. Sampled: the baseline is measured,
        and the result warns when the re-asks are identical far beyond chance.
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
        Per method, the divergences, their difference with its 95% interval and test, and the
        verdict (a difference only when the test and the interval agree); the re-ask check and
        any warning it gave; a warning counting the pairs left out because a side of their
        answers failed (side a only, side b only, both) or their baseline did. A failed side is
        not an unanswered one for ``answered``: it compares the answers given.

    Raises
    ------
    TypeError
        ``pairs`` is neither a path nor Pair records (as :func:`fairtalk.respond` says).
    InputError
        Fewer than two pairs answered on both sides and in the baseline (saying how many
        answers failed, and the first message of each kind of failure).
    ResponderAborted
        ``max_consecutive_failures`` answers in a row failed with one kind of error.
    """
    chosen = pair_column(pairs, "similarity_test")
    _check_one_axis(chosen, pairs if isinstance(pairs, (str, os.PathLike)) else None)  # before any answer
    settings = settings or DecodingSettings()
    reporter = ProgressReporter(progress_callback(progress))
    with cached_model(
        model,
        store,
        batch_size=batch_size,
        max_errors=None,
        model_args=model_args,
        model_version=model_version,
        max_consecutive_failures=max_consecutive_failures,
    ) as cached:
        counterfactual = generate(cached, chosen, settings, seed=seed, progress=reporter, label="counterfactual answers")
        return against_baseline(
            cached,
            chosen,
            counterfactual,
            settings,
            seed=seed,
            methods=methods,
            alpha=alpha,
            clusters=clusters,
            progress=reporter,
        )


def _check_one_axis(pairs: PairColumn, path: str | os.PathLike[str] | None) -> None:
    """Raise InputError when the pairs are of several axes (naming the line of the first of another axis in ``path``)."""
    counts = Counter(pair.axis for pair in pairs)
    if len(counts) < 2:
        return
    first = pairs[0]
    other = next(pair for pair in pairs if pair.axis != first.axis)
    line = None
    if path is not None:
        line = next((n for n, obj in read_objects(path, what="pairs file") if obj.get("id") == other.id), None)
    listed = ", ".join(f"{axis} {n:,} pair{'s' if n != 1 else ''}" for axis, n in counts.most_common())
    message = _MSG_MIXED_AXES.format(counts=listed, pair_id=other.id, axis=other.axis, first=first.axis)
    raise InputError(message, path=None if path is None else os.fspath(path), line=line)


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
    failed: FailedBefore | None = None,
) -> SimilarityResult:
    """The baseline (or, under greedy decoding, the determinism check) through ``cached``, and the test against it.

    ``failed``: the baseline answers that failed earlier in the run, not asked again (:func:`generate`'s).
    """
    placebo = PairColumn.of(pairs).placebo()  # replace(pair, b=pair.a, swaps=()), held as columns
    base_seed = seed + BASELINE_SEED_OFFSET
    warnings: list[str] = []
    zero = False
    if settings.do_sample:
        baseline = generate(cached, placebo, settings, seed=base_seed, progress=progress, label=label, failed=failed)
    else:
        sample = placebo.take(_check_sample(len(placebo), seed))
        baseline = generate(
            cached, sample, settings, seed=base_seed, progress=progress, label=f"{label} (determinism check)", failed=failed
        )
        check = _determinism(counterfactual, baseline)
        zero = bool(check["deterministic"])
        if not zero:
            warnings.append(_MSG_NOT_DETERMINISTIC.format(**check) if check["n_contexts"] else _MSG_UNCHECKED)
            # every pair's baseline; the check's answers come from the store
            baseline = generate(cached, placebo, settings, seed=base_seed, progress=progress, label=label, failed=failed)
    if settings.do_sample:
        check = _sampling_check(baseline)
        if check["ignored"]:
            warnings.append(_MSG_SAMPLING_IGNORED.format(**check, share=SAMPLING_CHECK_MAX_SHARE))
    base = {ra.pair_id: (ra.response, rb.response) for ra, rb in baseline.responses}
    found = counterfactual.responses.clusters
    kept = [
        (ra.response, rb.response, base.get(ra.pair_id, ("", "")), None if found is None else found[i])
        for i, (ra, rb) in enumerate(counterfactual.responses)
        if zero or ra.pair_id in base
    ]
    if len(kept) < 2:
        raise InputError(_MSG_TOO_FEW.format(n=len(kept)) + _failures(counterfactual, baseline))
    warnings.extend(_left_out(counterfactual, len(pairs), len(counterfactual.responses) - len(kept)))
    units = [str(r[3]) for r in kept] if clusters and found is not None else None
    cf = pair_similarity([r[0] for r in kept], [r[1] for r in kept], methods=methods)
    cf_div = {m: 1.0 - cf[m] for m in methods}
    if zero:  # a deterministic model asked twice: the same answer, divergence 0 by every method
        bl_div = {m: np.zeros(len(kept)) for m in methods}
    else:
        bl = pair_similarity([r[2][0] for r in kept], [r[2][1] for r in kept], methods=methods)
        bl_div = {m: 1.0 - bl[m] for m in methods}
    rows = similarity_rows(cf_div, bl_div, alpha=alpha, units=units)
    summary = {"counterfactual": counterfactual.summary.to_dict(), "baseline": baseline.summary.to_dict()}
    return SimilarityResult(
        axis=pairs[0].axis if pairs else "",
        model=cached.recorded,
        alpha=alpha,
        seed=seed,
        n_pairs=len(kept),
        n_clusters=None if units is None else len(set(units)),
        rows=rows,
        summary=MappingProxyType(summary),
        sampled=settings.do_sample,
        baseline_kind="zero" if zero else "measured",
        reask_check=MappingProxyType(check),
        warnings=tuple(warnings),
    )


def _check_sample(n: int, seed: int) -> list[int]:
    """The pairs whose side A is asked again to check determinism: all of them, or a seeded sample of the size allowed."""
    if n <= DETERMINISM_CHECK_PAIRS:
        return list(range(n))
    return sorted(int(i) for i in np.random.default_rng(seed).choice(n, size=DETERMINISM_CHECK_PAIRS, replace=False))


def _determinism(counterfactual: Generation, check: Generation) -> dict[str, Any]:
    """How many contexts asked again (twice, beside their first answer when it exists) got a different answer."""
    first = {ra.pair_id: ra.response for ra, _ in counterfactual.responses}
    n_contexts = n_differing = 0
    for ra, rb in check.responses:
        answers = [ra.response, rb.response, *([first[ra.pair_id]] if ra.pair_id in first else [])]
        n_contexts += 1
        n_differing += not bool(same_answers(answers[1:], answers[:-1]).all())
    return {
        "kind": "determinism",
        "n_contexts": n_contexts,
        "n_reasks": 2 * n_contexts,
        "n_differing": n_differing,
        "deterministic": n_contexts > 0 and n_differing == 0,
    }


def _sampling_check(baseline: Generation) -> dict[str, Any]:
    """Among baseline pairs with two long enough answers, how many are identical, and whether that says sampling is ignored."""
    a = [ra.response for ra, _ in baseline.responses]
    b = [rb.response for _, rb in baseline.responses]
    long_enough = (n_words(a) >= SAMPLING_CHECK_MIN_WORDS) & (n_words(b) >= SAMPLING_CHECK_MIN_WORDS)
    n_checked = int(long_enough.sum())
    n_identical = int((same_answers(a, b) & long_enough).sum())
    decided = n_checked >= SAMPLING_CHECK_MIN_PAIRS
    return {
        "kind": "sampling",
        "min_words": SAMPLING_CHECK_MIN_WORDS,
        "n_checked": n_checked,
        "n_identical": n_identical,
        "min_pairs": SAMPLING_CHECK_MIN_PAIRS,
        "max_share": SAMPLING_CHECK_MAX_SHARE,
        "ignored": (n_identical >= SAMPLING_CHECK_MAX_SHARE * n_checked) if decided else None,
    }


def _left_out(counterfactual: Generation, n_pairs: int, n_baseline_failed: int) -> list[str]:
    """The warnings counting the pairs left out: a side of their counterfactual answers failed, or their baseline did."""
    sides: dict[str, set[str]] = {}
    for pair_id, side, _ in counterfactual.errors:
        sides.setdefault(pair_id, set()).add(side)
    out = []
    if sides:
        a = sum(found == {"a"} for found in sides.values())
        b = sum(found == {"b"} for found in sides.values())
        out.append(_MSG_SIDE_FAILED.format(n=len(sides), n_pairs=n_pairs, a=a, b=b, both=len(sides) - a - b))
    if n_baseline_failed:
        out.append(_MSG_BASELINE_FAILED.format(n=n_baseline_failed, n_pairs=n_pairs))
    return out


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
    return _MSG_FAILURES.format(
        n_failed=sum(counts.values()),
        n_items=n_items,
        kinds=kinds,
        examples="; ".join(m for kind in counts for m in examples[kind]),
    )
