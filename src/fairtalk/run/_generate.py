"""Generation: both sides of every pair through a cached model, with per-item seeds and counted errors.

Each pair side gets a seed derived from ``(seed, pair id, side)`` (:func:`item_seed`), so
the run store's cache key of an item is the same in every run with the same seed: a
resumed or repeated run is served from the store. Items that fail (after the adapter's
own retries) are stored as errors, retried on the next run, and counted; pairs with a
failed side are left out of the :class:`~fairtalk._responses.ResponseSet` (kept in its
``left_out``: the side answered, and the failed side as a record saying why). Once
``max_consecutive_failures`` items in a row fail with one kind of error (5 by default: a model
that hangs, a server that is down) the run stops with
:class:`~fairtalk.errors.ResponderAborted`, saying which kind and how many; every answer
stored so far is kept, and a re-run resumes from it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from fairtalk._jsonl import MAX_RECORD_BYTES, RECORD_OVERHEAD, fit_in_record
from fairtalk._responses import (
    AXIS_FIELD,
    MAX_NEW_FIELD,
    PROMPT_CUT_FIELD,
    Extra,
    ResponseColumn,
    ResponseSet,
    aligned_responses,
    count_loss,
    failed_response,
    prompt_cuts,
)
from fairtalk.errors import FairtalkError, ResponderAborted, ResponderError, SpecError
from fairtalk.files import StoreHold
from fairtalk.models import (
    RECORD_LIMIT,
    DecodingSettings,
    RayEngine,
    ReplyFunction,
    Responder,
    as_responder,
    callable_name,
    finish_reason,
    load_responder,
    resolve_engine,
)
from fairtalk.pairs import PairColumn, read_pairs
from fairtalk.progress import ProgressCallback, ProgressReporter, loading_label, progress_callback
from fairtalk.records import Pair, Response, Side
from fairtalk.results import GenerationSummary, ServedProvenance
from fairtalk.run._engine import open_on_ray
from fairtalk.run._score import prompts_cut_warning
from fairtalk.run._store_paths import holds_nothing, new_paths, open_store, remove_new_store
from fairtalk.store import DEFAULT_MAX_CONSECUTIVE_FAILURES, CachingResponder, FailureBreaker, RunStore

__all__ = ["DEFAULT_MODELS", "FailedBefore", "Generation", "default_model", "item_seed", "respond", "served_warning"]

#: Tried in order when no model is given: the first that loads is the default.
DEFAULT_MODELS = ("builtin:minilm-retrieval", "builtin:retrieval", "builtin:smollm2")

_MSG_NO_DEFAULT = (
    "no default model is available ({reasons}); pass a model: --model SPEC on the command line "
    "(builtin:echo, hf:NAME, openai:URL#MODEL, python:FILE.py:FUNCTION, replay:FILE)"
)
_MSG_PAIRS_TYPE = "{who}: pairs must be a pairs JSONL path or Pair records (what fairtalk.build_pairs yields), got {type}"
_MSG_PAIR_TYPE = "{who}: pairs item {index} is of type {type}, not a Pair (what fairtalk.build_pairs yields)"
_MSG_ARGS_NEED_SPEC = "model arguments ({names}) need a model spec (--model SPEC) or a function, not {what}"
_MSG_ABORTED = "{error} ({n_stored} answers of this run are kept in {store}{from_store}; re-run to resume{failed})"
#: What the stop message adds when answers of this run came from the store (an earlier run's).
_MSG_ABORTED_CACHED = " ({n_cached} of them from an earlier run)"
#: What the stop message adds when items failed: the progress line counted them as done too.
_MSG_ABORTED_FAILED = "; the {n_failed} pair side(s) that failed are stored as failures, sent again by a re-run"
_MSG_ABORTED_MEMORY = (
    "{error} (no run store file: the {n_stored} answers of this run are not kept; give --store FILE (store=PATH in "
    "Python) to keep them and resume)"
)
_N_ERROR_EXAMPLES = 3
#: Pair sides sent to ``respond_each`` per call by :func:`generate`.
_CHUNK = 1 << 16
_SIDES: tuple[Side, Side] = ("a", "b")
_MSG_SERVED = (
    "{n:,} of {total:,} answers came from a model the server names {names}, not the model asked for ({asked!r}): "
    "the run store keeps them under {asked!r}; check what the server serves (run.json: served_models)"
)
_MSG_TRUNCATED = (
    "{label}: {n} response(s) longer than an {limit} MiB JSONL record were cut to fit (counted as n_truncated, and as cut off in "
    "hit_token_limit: finish reason 'record_limit')"
)
_LOG = logging.getLogger(__name__)


def item_seed(seed: int, pair_id: str, side: str) -> int:
    """The seed of one pair side: a stable 31-bit hash of ``(seed, pair_id, side)``.

    Examples
    --------
    >>> item_seed(0, "gender-1f", "a") == item_seed(0, "gender-1f", "a") != item_seed(0, "gender-1f", "b")
    True
    """
    digest = hashlib.blake2b(f"{seed}\x1f{pair_id}\x1f{side}".encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big") & 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class Generation:
    """Responses to pairs: the complete pairs, the failures, and the counts.

    ``errors`` holds ``(pair_id, side, message)`` per failed pair side. ``warnings``: what the
    answers cannot show, such as the pairs whose prompt the model cut from its start to fit its
    positions (:func:`~fairtalk.run._score.prompts_cut_warning`; each such response records it).
    """

    responses: ResponseSet
    summary: GenerationSummary
    errors: tuple[tuple[str, str, str], ...] = ()
    warnings: tuple[str, ...] = ()


class FailedBefore:
    """The pair sides that failed earlier in one run, keyed as the run store keys them (context, item seed), with their error.

    An audit that takes its pairs look by look (``until_decided``) asks each pair side at most
    once: :func:`generate` given one sends the model only the sides it does not hold, gives each
    side it holds its earlier failure again (a lost answer of the run, counted and reported as a
    fixed audit's), and adds the sides that fail now. The run store keeps each failure as a fixed
    audit's does, so a rerun of the command asks for it again.
    """

    __slots__ = ("_errors",)

    def __init__(self) -> None:
        self._errors: dict[tuple[str, int], ResponderError] = {}

    def __len__(self) -> int:
        return len(self._errors)

    def respond_each(
        self, cached: CachingResponder, contexts: Sequence[str], settings: DecodingSettings, seeds: Sequence[int]
    ) -> tuple[list[str | ResponderError], int]:
        """Each side's answer or failure, the model asked only for the sides that did not fail before; and how many did."""
        out: list[str | ResponderError | None] = [
            self._errors.get((context, int(seed))) for context, seed in zip(contexts, seeds)
        ]
        ask = [i for i, item in enumerate(out) if item is None]
        if ask:
            answers = cached.respond_each([contexts[i] for i in ask], settings, seeds=[seeds[i] for i in ask])
            for i, item in zip(ask, answers):
                out[i] = item
                if isinstance(item, ResponderError):
                    self._errors[(contexts[i], int(seeds[i]))] = item
        return out, len(out) - len(ask)  # type: ignore[return-value]  # every item filled above


def default_model() -> Responder:
    """Load the first of :data:`DEFAULT_MODELS` that is available, or raise FairtalkError saying why none is."""
    reasons = []
    for spec in DEFAULT_MODELS:
        try:
            return load_responder(spec)
        except (FairtalkError, ImportError) as exc:
            reasons.append(f"{spec}: {exc}")
    raise FairtalkError(_MSG_NO_DEFAULT.format(reasons="; ".join(reasons)))


def open_model(
    model: str | Responder | ReplyFunction | None,
    model_args: Mapping[str, object] | None = None,
    *,
    engine: RayEngine | None = None,
    batch_size: int = 64,
) -> tuple[Responder, bool]:
    """The responder to use and whether the caller owns (must close) it; ``model_args`` go to the spec's adapter.

    A function becomes a model through :func:`~fairtalk.models.as_responder` (``model_args`` are
    then its ``batched``, ``timeout`` and ``max_concurrency``). With a Ray ``engine`` the spec is
    loaded on its actors, ``batch_size`` pair sides per batch.
    """
    if model_args and (model is None or isinstance(model, Responder)):
        what = "the default model" if model is None else "a Responder object"
        raise SpecError(_MSG_ARGS_NEED_SPEC.format(names=", ".join(sorted(model_args)), what=what))
    if engine is not None:
        return open_on_ray(model, model_args, engine, batch_size=batch_size, defaults=DEFAULT_MODELS), True
    if model is None:
        return default_model(), True
    return as_responder(model, **dict(model_args or {})), not isinstance(model, Responder)


def _loading(model: str | Responder | ReplyFunction | None) -> str:
    """The label of the stage that loads ``model``: its spec, its fingerprint, or a function's ``python:`` name."""
    if model is None or isinstance(model, str):
        return loading_label(model)
    if isinstance(model, Responder):
        return loading_label(None, fingerprint=model.fingerprint)
    return loading_label(None, fingerprint="python:" + callable_name(model) if callable(model) else type(model).__name__)


@contextmanager
def cached_model(
    model: str | Responder | ReplyFunction | None,
    store: str | os.PathLike[str] | RunStore | None,
    *,
    batch_size: int,
    max_errors: int | None,
    model_args: Mapping[str, object] | None = None,
    model_version: str | None = None,
    engine: RayEngine | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    progress: ProgressReporter | None = None,
) -> Iterator[CachingResponder]:
    """The model behind the run store; closes what it opened. The store opens first, so a bad path fails fast.

    Loading the model and its preflight are a ``progress`` stage (``loading model SPEC``), so a slow load shows.

    With a Ray ``engine`` the model runs on its actors; this process alone writes the store.
    ``max_consecutive_failures`` failed items of one kind in a row stop the run (0 or None: never).

    A run that fails before anything was stored (a server that is down, too few pairs) removes
    the store file it created, and the folders it created for it when they are left empty; not
    while another fairtalk run has the file open (:class:`~fairtalk.files.StoreHold`, held here
    from before the store opens until it is closed): that run's answers go in it.
    """
    FailureBreaker(max_consecutive_failures)  # a bad limit fails before any store or model is opened
    created = new_paths(store)
    hold = StoreHold(store.path if isinstance(store, RunStore) else store).acquire()  # held until the store is closed
    try:
        run_store, own_store = open_store(store)
    except BaseException:
        with hold:
            remove_new_store(created, hold, file=False)  # the folders made for a store that could not open
        raise
    try:
        with ExitStack() as opened:
            with (progress or ProgressReporter(None)).stage(_loading(model)):
                responder, own_model = open_model(model, model_args, engine=engine, batch_size=batch_size)
                if own_model:
                    opened.callback(responder.close)
                responder.preflight()  # a server that is down or lacks the model: one clear error before any pair
            yield CachingResponder(
                responder,
                run_store,
                batch_size=batch_size,
                max_errors=max_errors,
                model_version=model_version,
                max_consecutive_failures=max_consecutive_failures,
            )
    except BaseException:
        # alone first: a run that had the file open may have stored answers and left before the count
        if own_store and created and hold.alone() and holds_nothing(run_store):
            run_store.close()
            remove_new_store(created, hold)
        raise
    finally:
        if own_store:
            run_store.close()
        hold.release()


def _stopped(error: BaseException, cached: CachingResponder, before: tuple[int, ...]) -> str:
    """The message of a run stopped by ``error``: how many answers of this run the store keeps, and its failures.

    ``before`` is ``(n_cached, n_generated, n_errors)`` of ``cached`` when the run began.
    """
    n_cached, n_new, n_failed = cached.n_cached - before[0], cached.n_generated - before[1], cached.n_errors - before[2]
    message = _MSG_ABORTED if str(cached.store.path) != ":memory:" else _MSG_ABORTED_MEMORY
    return message.format(
        error=error,
        n_stored=n_cached + n_new,
        store=cached.store.path,
        from_store=_MSG_ABORTED_CACHED.format(n_cached=n_cached) if n_cached else "",
        failed=_MSG_ABORTED_FAILED.format(n_failed=n_failed) if n_failed else "",
    )


def generate(
    cached: CachingResponder,
    pairs: Sequence[Pair],
    settings: DecodingSettings,
    *,
    seed: int,
    progress: ProgressReporter,
    label: str = "responses",
    warn_served: bool = True,
    failed: FailedBefore | None = None,
) -> Generation:
    """Both sides of every pair through ``cached``; complete pairs become the ResponseSet.

    The pairs go to the model ``_CHUNK`` pair sides at a time, so that what one call to
    ``respond_each`` holds besides the answers (contexts, seeds, store keys) stays bounded.
    ``warn_served``: log :func:`served_warning` here (False: the caller puts it in its result's warnings).
    ``failed``: the sides that failed earlier in this run, not asked again (counted in ``n_errors``),
    and where the sides that fail now go.
    """
    started = time.perf_counter()
    before = (cached.n_cached, cached.n_generated, cached.n_errors, cached.n_unencodable)
    n_items = 2 * len(pairs)
    _LOG.debug("%s: %d pair sides, batch size %d, settings %s", label, n_items, cached.batch_size, settings.to_dict())
    progress.start(label, n_items, unit="responses")
    cached.progress = progress.advance if progress.enabled else None
    flight = cached.responder.in_flight  # a server adapter counts its requests in flight
    if flight is not None:
        flight.most = 0
    retry_counts = cached.responder.retry_counts  # and its retries, summed over its calls
    retries_before = (0, 0, 0, 0) if retry_counts is None else retry_counts.as_tuple()
    served_before = (dict(cached.served_models or {}), cached.n_served_unknown)  # and who its server said answered
    answers = _Answers(settings.max_new_tokens)
    n_failed_before = 0  # sides that failed earlier in the run: not asked again
    try:
        for start in range(0, len(pairs), _CHUNK // 2):
            chunk = pairs[start : start + _CHUNK // 2]
            contexts: list[str] = []
            seeds: list[int] = []
            for pair in chunk:
                contexts += (pair.a, pair.b)
                seeds += (item_seed(seed, pair.id, "a"), item_seed(seed, pair.id, "b"))
            cut = cached.prompts_cut(contexts, settings)  # counted from the prompts: answers from the store too
            if failed is None:
                out = cached.respond_each(contexts, settings, seeds=seeds)
            else:
                out, known = failed.respond_each(cached, contexts, settings, seeds)
                n_failed_before += known
                if known:
                    progress.advance(known)
            answers.add(chunk, out, seeds, cut)
    except ResponderError as exc:
        if cached.max_errors is not None and cached.n_errors > cached.max_errors:
            raise ResponderError(_stopped(exc, cached, before)) from exc
        raise
    except ResponderAborted as exc:
        raise ResponderAborted(_stopped(exc, cached, before)) from exc
    finally:
        cached.progress = None
    progress.finish()  # only a generation that ended: an interrupted or failed one is not said done
    errors = answers.errors
    served, n_served_unknown = _served(cached, served_before, label if warn_served else None)
    if answers.n_truncated:
        _LOG.warning(_MSG_TRUNCATED.format(label=label, n=answers.n_truncated, limit=MAX_RECORD_BYTES >> 20))
    rs = answers.responses()
    rs = replace(
        rs,
        left_out=tuple(answers.left_out),
        summary={
            **rs.summary,
            "n_errors": len(errors),
            "n_pairs_with_errors": answers.n_pairs_with_errors,
            **answers.lost,
            **({"n_truncated": answers.n_truncated} if answers.n_truncated else {}),
        },
    )
    retries: list[int | None] = (
        [None] * 4 if retry_counts is None else [n - was for n, was in zip(retry_counts.as_tuple(), retries_before)]
    )  # budget, used, refused, and those on the time budget of a server that could not take requests, over this run
    summary = GenerationSummary(
        model=cached.recorded,
        settings=settings.sent(),
        n_items=n_items,
        n_cached=cached.n_cached - before[0],
        n_generated=cached.n_generated - before[1],
        n_errors=cached.n_errors - before[2] + n_failed_before,
        n_pairs=len(pairs),
        n_pairs_with_errors=answers.n_pairs_with_errors,
        seconds=time.perf_counter() - started,
        error_examples=tuple(dict.fromkeys(message for *_, message in errors))[:_N_ERROR_EXAMPLES],
        error_counts=MappingProxyType(dict(sorted(answers.error_counts.items(), key=lambda kv: (-kv[1], kv[0])))),
        n_unencodable=cached.n_unencodable - before[3],
        max_in_flight=None if flight is None else int(flight.most),
        max_concurrency=cached.responder.max_concurrency if flight is not None else None,
        retry_budget=retries[0],
        n_retries=retries[1],
        n_retries_refused=retries[2],
        n_retries_waited=retries[3],
        tuning=dict(cached.responder.tuning) or None,
        served_models=served,
        n_served_unknown=n_served_unknown,
    )
    _LOG.info(
        "%s: %d pair sides through %s: %d from the store, %d generated, %d failed (%.1f s)",
        label,
        summary.n_items,
        summary.model,
        summary.n_cached,
        summary.n_generated,
        summary.n_errors,
        summary.seconds,
    )
    cut_warning = prompts_cut_warning(*prompt_cuts(rs)[:2], settings.max_new_tokens)
    return Generation(rs, summary, tuple(errors), () if cut_warning is None else (cut_warning,))


class _Answers:
    """The complete pairs' answers, side by side as columns (no record per answer), and the failed pair sides, counted."""

    def __init__(self, max_new_tokens: int) -> None:
        self.max_new_tokens = max_new_tokens  # recorded beside a prompt cut: the limit that left it no room
        self.ids: list[str] = []
        self.contexts: dict[Side, list[str]] = {"a": [], "b": []}
        self.texts: dict[Side, list[str]] = {"a": [], "b": []}
        self.seeds: dict[Side, array[int]] = {"a": array("q"), "b": array("q")}
        self.rest: dict[Side, list[Extra]] = {"a": [], "b": []}
        self.axis: str | None = None  # the complete pairs' axis (the first one's), recorded once per column
        self.other_axes: dict[int, str] = {}  # the complete pairs (by index) of another axis than the first
        self.errors: list[tuple[str, str, str]] = []
        self.error_counts: dict[str, int] = {}
        self.n_pairs_with_errors = self.n_truncated = 0
        self.lost: dict[str, int] = {}  # pairs left out by the side(s) that failed (LOSS_KEYS)
        self.left_out: list[Response] = []  # their records: the side answered, the failed side saying why

    def add(
        self, pairs: Sequence[Pair], out: Sequence[str | ResponderError], seeds: Sequence[int], cut: Sequence[int] | None = None
    ) -> None:
        """Pair ``i``'s sides are ``out[2 i]`` and ``out[2 i + 1]`` (seeds and the tokens ``cut`` from their prompts alike)."""
        for i, pair in enumerate(pairs):
            ra, rb = out[2 * i], out[2 * i + 1]
            for side, item in (("a", ra), ("b", rb)):
                if isinstance(item, ResponderError):
                    self.errors.append((pair.id, side, f"{type(item).__name__}: {item}"))
                    self.error_counts[type(item).__name__] = self.error_counts.get(type(item).__name__, 0) + 1
            lost_a, lost_b = isinstance(ra, ResponderError), isinstance(rb, ResponderError)
            cluster: Extra = () if pair.cluster is None else (("cluster", pair.cluster),)
            cut_a, cut_b = (self._cut(cut[2 * i]), self._cut(cut[2 * i + 1])) if cut else ((), ())
            if lost_a or lost_b:
                self.n_pairs_with_errors += 1
                count_loss(self.lost, lost_a, lost_b)
                self._keep_lost(pair, (ra, rb), (seeds[2 * i], seeds[2 * i + 1]), cluster, (cut_a, cut_b))
                continue
            self._note_axis(pair.axis)
            self.ids.append(pair.id)
            self._add("a", ra, pair.a, seeds[2 * i], (*cluster, *cut_a))
            self._add("b", rb, pair.b, seeds[2 * i + 1], (*cluster, *cut_b))

    def _note_axis(self, axis: str) -> None:
        """The axis of the next complete pair: the column's, or one of its own where it differs from the first's."""
        if self.axis is None:
            self.axis = axis
        elif axis != self.axis:
            self.other_axes[len(self.ids)] = axis

    def _cut(self, n_tokens: int) -> Extra:
        """The fields of a response whose prompt lost ``n_tokens`` from its start (none when it lost none)."""
        return ((PROMPT_CUT_FIELD, int(n_tokens)), (MAX_NEW_FIELD, self.max_new_tokens)) if n_tokens else ()

    def _keep_lost(
        self,
        pair: Pair,
        out: tuple[str | ResponderError, str | ResponderError],
        seeds: tuple[int, int],
        cluster: Extra,
        cuts: tuple[Extra, Extra],
    ) -> None:
        """The records of a pair left out: each side's answer, or its failure (``"<kind>: <message>"``)."""
        for side, item, context, seed, prompt_cut in zip(_SIDES, out, (pair.a, pair.b), seeds, cuts):
            extra: Extra = (("seed", seed), *_axis_field(pair.axis), *cluster, *prompt_cut)
            if isinstance(item, ResponderError):
                self.left_out.append(failed_response(pair.id, side, context, f"{type(item).__name__}: {item}", extra))
                continue
            text, cut = _fit(item, context)
            self.n_truncated += cut
            self.left_out.append(Response(pair.id, side, context, str(text), (*extra, *_reason(item, cut))))

    def _add(self, side: Side, item: str | ResponderError, context: str, seed: int, extra: Extra) -> None:
        """One side of a complete pair; ``extra``: its cluster and its prompt's cut, when it has them."""
        text, cut = _fit(item, context)  # type: ignore[arg-type]  # a failed pair never gets here
        self.n_truncated += cut  # an answer longer than a JSONL record may hold is cut, so outputs read back
        self.contexts[side].append(context)
        self.texts[side].append(str(text))
        self.seeds[side].append(seed)
        reason = _reason(item, cut)
        self.rest[side].append((*extra, *reason) if extra or reason else ())

    def responses(self) -> ResponseSet:
        """The complete pairs' ResponseSet: each side a :class:`~fairtalk._responses.ResponseColumn`.

        Each record names its pair's axis (:data:`~fairtalk._responses.AXIS_FIELD`): once per column
        where the pairs share one (no field per pair), else in each record's own fields.
        """
        ids = tuple(self.ids)
        rest = self.rest
        if self.other_axes:  # pairs of several axes: each record names its own
            axes = [self.other_axes.get(i, self.axis or "") for i in range(len(ids))]
            rest = {side: [(*_axis_field(axis), *extra) for axis, extra in zip(axes, rest[side])] for side in _SIDES}
        a, b = (
            ResponseColumn(
                ids,
                side,
                self.contexts[side],
                self.texts[side],
                np.frombuffer(self.seeds[side], dtype=np.int64) if self.seeds[side] else np.zeros(0, np.int64),
                rest[side],
                axis=None if self.other_axes else self.axis,
            )
            for side in _SIDES
        )
        return aligned_responses(ids, a, b)


def _axis_field(axis: str) -> Extra:
    """The field of a response naming its pair's axis (none for a pair of no axis)."""
    return ((AXIS_FIELD, axis),) if axis else ()


def _served(
    cached: CachingResponder, before: tuple[Mapping[str, int], int], label: str | None
) -> tuple[dict[str, int] | None, int | None]:
    """The model names the server said answered this generation, counted, and the answers without one.

    Answers the run store served count by the name it keeps with each (an answer stored by a
    fairtalk that did not keep it counts as unknown), so a rerun counts what the first run did.
    :func:`served_warning` is logged, after ``label``, when a name is not the model asked for
    (``label`` None: not logged). ``(None, None)`` for a model that does not say.
    """
    now = cached.served_models
    if now is None:
        return None, None
    counted, unknown_before = before
    served = {name: n - counted.get(name, 0) for name, n in now.items() if n > counted.get(name, 0)}
    n_unknown = cached.n_served_unknown - unknown_before
    warning = served_warning(ServedProvenance(cached.requested_model, served, n_unknown))
    if warning is not None and label is not None:
        _LOG.warning("%s: %s", label, warning)
    return served or None, n_unknown


def served_warning(served: ServedProvenance | None) -> str | None:
    """The warning that answers came from a model other than the one asked for (:func:`~fairtalk.results.is_requested_model`).

    The run store is keyed by the model asked for (its fingerprint, known before any answer), so
    answers of another served model are stored under that name. None when every named answer
    came from the model asked for, or the model does not say.
    """
    other = {} if served is None else served.others()
    if served is None or not other:
        return None
    names = ", ".join(f"{name!r} ({n:,} answers)" for name, n in other.items())
    total = sum((served.counts or {}).values()) + (served.n_unknown or 0)
    return _MSG_SERVED.format(n=sum(other.values()), total=total, asked=served.requested, names=names)


def _reason(item: object, cut: bool = False) -> tuple[tuple[str, str], ...]:
    """The ``finish_reason`` extra of a response record (none when the model did not say).

    An answer ``cut`` to fit its record is not whole whatever the model said: its reason is
    :data:`~fairtalk.models.RECORD_LIMIT`, which reads as ``"length"`` (cut off) everywhere.
    """
    reason = RECORD_LIMIT if cut else finish_reason(item)
    return () if reason is None else (("finish_reason", reason),)


def _fit(text: str, beside: str) -> tuple[str, bool]:
    """:func:`~fairtalk._jsonl.fit_in_record`, without encoding either text when they fit at 6 bytes a character.

    No character takes more than 6 bytes in a record (the longest JSON escape), so short texts
    need no check (it JSON-encoded every context: a few us a pair side).
    """
    if 6 * (len(text) + len(beside)) + 4 <= MAX_RECORD_BYTES - RECORD_OVERHEAD:
        return text, False
    return fit_in_record(text, beside=beside)


def _checked_pairs(pairs: Iterable[object], who: str) -> Iterator[Pair]:
    for index, pair in enumerate(pairs):
        if not isinstance(pair, Pair):
            raise TypeError(_MSG_PAIR_TYPE.format(who=who, index=index, type=type(pair).__name__))
        yield pair


def pair_column(pairs: object, who: str = "respond") -> PairColumn:
    """The pairs ``who`` (:func:`respond`, ``similarity_test``) was given, as a column.

    Read from a path, or checked to be Pair records: TypeError naming ``who`` and the first other.
    """
    if isinstance(pairs, (str, os.PathLike)):
        return PairColumn.of(read_pairs(pairs))
    if isinstance(pairs, PairColumn):
        return pairs
    if not isinstance(pairs, Iterable):
        raise TypeError(_MSG_PAIRS_TYPE.format(who=who, type=type(pairs).__name__))
    return PairColumn.of(_checked_pairs(pairs, who))


def respond(
    pairs: Iterable[Pair] | str | os.PathLike[str],
    *,
    model: str | Responder | ReplyFunction | None = None,
    seed: int = 0,
    store: str | os.PathLike[str] | RunStore | None = None,
    settings: DecodingSettings | None = None,
    max_errors: int | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
    model_args: Mapping[str, object] | None = None,
    model_version: str | None = None,
    engine: str | RayEngine | Mapping[str, object] | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
) -> Generation:
    """Generate the responses to both sides of every pair (generation alone, without scoring).

    Parameters
    ----------
    pairs : iterable of Pair, or a pairs JSONL path
        What :func:`fairtalk.build_pairs` yields or :func:`fairtalk.write_pairs` wrote.
    model : str, Responder or function, optional
        A model spec (``builtin:echo``, ``hf:NAME``, ``openai:URL#MODEL``, ``python:F.py:FN``,
        ...), a responder, or a function: one context text -> one reply, a batched one (list of
        texts -> list of replies, marked with :func:`fairtalk.models.batched`) or an ``async`` one
        (see :func:`fairtalk.models.as_responder`); None takes the first available of
        :data:`DEFAULT_MODELS`.
    seed : int
        Per-item seeds are derived from ``(seed, pair id, side)``.
    store : path or RunStore, optional
        The SQLite run store: stored responses are reused, new ones committed as they arrive,
        failures retried. None keeps them in memory.
    settings : DecodingSettings, optional
        Greedy decoding with ``max_new_tokens=256`` by default (:class:`~fairtalk.models.DecodingSettings`' defaults).
    max_errors : int, optional
        Abort with ResponderError once more pair sides than this have failed (None: never).
    batch_size : int
        Pair sides sent to the model, and committed, per batch.
    progress : callable, optional
        Receives a :class:`~fairtalk.progress.ProgressEvent` as pair sides finish (``False`` means None;
        ``True`` and a callable ``(label, n_done, n_total)`` still work, with a FutureWarning).
    model_args : mapping, optional
        Options for the model spec's adapter (``{"timeout": "60"}``), as ``?key=value`` in the spec,
        or a function's (``batched``, ``timeout``, ``max_concurrency``).
    model_version : str, optional
        A tag that becomes part of the model's fingerprint (the run store's key): change it when
        the model changes in a way its code does not show (a redeployed server, an environment
        variable), so that no stored answer of the old model is reused. A function whose state
        cannot be read (an instance holding a torch model: ``"state":"unknown"`` in its
        fingerprint) needs one to use a ``store`` file (SpecError without it).
    engine : {"local", "ray"}, RayEngine or mapping, optional
        Where the model runs: in this process (``"local"`` or None), or on Ray actors (``"ray"``,
        or a :class:`~fairtalk.models.RayEngine` saying which cluster and how many actors); ``model``
        must then be a spec (it is loaded on every actor). The answers and the store's keys are
        the same either way, so a run resumes across engines.
    max_consecutive_failures : int, optional
        Stop the run (ResponderAborted) once this many pair sides in a row have failed with one
        kind of error (``ResponderTimeout``, ``TransportError``, ...): a model that hangs or a
        server that is down costs that many failures, not one per item. Every answer generated
        so far stays in the store. 0 or None: never stop.

    Returns
    -------
    Generation
        ``responses`` (complete pairs; ``summary`` adds ``n_errors`` and ``n_pairs_with_errors``, and
        ``n_truncated`` when answers longer than a JSONL record may hold were cut to fit),
        ``summary`` (counts, model fingerprint, seconds), ``errors``, and ``warnings``: the pairs
        whose prompt the model cut from its start to fit its positions, per side, as ``audit`` words
        it (each such response records ``prompt_cut``, the tokens cut, and ``max_new_tokens``, so
        that :func:`fairtalk.score` of a file written from them warns again).

    Raises
    ------
    TypeError
        ``pairs`` is neither a path nor Pair records (before the model is loaded).
    FairtalkError
        No model given and none of the defaults available; unreadable pairs; an unknown spec;
        ResponderError when ``max_errors`` is exceeded, ResponderAborted when
        ``max_consecutive_failures`` items in a row failed alike (what was generated stays stored);
        ``engine="ray"`` without Ray installed, or with a model Ray does not run (``openai:``).
    """
    ray = resolve_engine(engine)
    items = pair_column(pairs)
    settings = DecodingSettings() if settings is None else settings
    reporter = ProgressReporter(progress_callback(progress))
    with cached_model(
        model,
        store,
        batch_size=batch_size,
        max_errors=max_errors,
        model_args=model_args,
        model_version=model_version,
        engine=ray,
        max_consecutive_failures=max_consecutive_failures,
        progress=reporter,
    ) as cached:
        return generate(cached, items, settings, seed=seed, progress=reporter)
