"""CachingResponder: serve stored responses, generate the misses, commit as they arrive."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

from fairtalk._jsonl import replace_surrogates
from fairtalk.errors import ResponderError, SpecError, StoreError
from fairtalk.models import (
    DecodingSettings,
    Reply,
    Responder,
    Stream,
    answered_before,
    check_batch,
    close_stream,
    raise_first_error,
    respond_each_checked,
)
from fairtalk.store._breaker import DEFAULT_MAX_CONSECUTIVE_FAILURES, FailureBreaker
from fairtalk.store._sqlite import RunStore, context_hash

__all__ = ["CachingResponder"]

_MSG_TOO_MANY = "{n_errors} responses failed, more than max_errors={max_errors}; last error: {last}"
_MSG_BATCH_SIZE = "batch_size must be >= 1, got {value!r}"
_MSG_COMMIT_ROWS = "commit_rows must be >= 1, got {value!r}"
_MSG_COMMIT_SECONDS = "commit_seconds must be >= 0, got {value!r}"
_MSG_VERSION = "model_version must be a non-empty line of printable text, got {value!r}"
_MSG_UNKNOWN_STATE = (
    "the model {model} cannot be told from another one with the same code: its state cannot be read ({reason}), so "
    "the run store {store} could serve another model's answers as its own; give model_version=TAG, "
    "a tag you change whenever the model changes, or run without a store"
)
#: A store row: context hash, seed, context, response (None for a failure), error (None for an answer).
_Row = tuple[bytes, int, str, str | None, str | None]


class CachingResponder(Responder):
    """Wrap a responder with a run store: serve hits, generate misses, commit as they arrive.

    It is a :class:`~fairtalk.models.Responder` itself (its fingerprint is the wrapped model's,
    with the model version), and ``input_paths`` are the wrapped model's files. A model whose
    ``supports_stream`` is True (``openai:``, a single ``python:`` function, Ray) has its misses
    answered through ``respond_stream`` in one call, each answer stored as it arrives; any other,
    ``batch_size`` misses at a time through ``respond_each``.

    Finished items are committed in one transaction once ``commit_rows`` of them are
    waiting or ``commit_seconds`` have passed since the last commit, whichever comes
    first, and always before returning or raising. A crash therefore loses at most the
    last ``commit_seconds`` of generation, while a fast model is not slowed down by a
    commit per small batch (the unique index is keyed by a random hash, so every commit
    touches scattered pages). ``progress`` counts an item once it is committed, never
    before: whatever stops a run (the breaker, an error, Ctrl-C, a killed process),
    every item counted as done is in the store. What stops a call midway (Ctrl-C, the breaker,
    ``max_errors``) also stores the answers the model had given and not yet handed on: the halves
    of a failed batch already answered (the default ``respond_each``), the ``openai:`` answers on
    their way from its requests' thread (:func:`~fairtalk.models.answered_before`); a re-run asks
    only for the rest. A killed process loses those.

    Parameters
    ----------
    responder : Responder
        The model under test; its ``fingerprint`` keys the cache.
    store : RunStore
        Where responses are kept (the caller owns and closes it).
    batch_size : int
        Misses sent to the model per batch.
    commit_rows, commit_seconds
        Commit once this many finished items wait, or this long after the last commit.
    max_errors : int, optional
        Raise ResponderError once more items than this have failed (None: never).
    max_consecutive_failures : int, optional
        Raise :class:`~fairtalk.errors.ResponderAborted` once this many generated items in a
        row have failed with one kind of error (a model that hangs, a server that is down), after
        committing what finished; 0 or None: never. Items are counted as they finish: one by one
        from a streaming model (``openai:``, a single ``python:`` function, Ray), per batch otherwise.
        An item the store holds a failure for (a rerun retries it) that fails again with the same
        kind of error is not counted (see :class:`~fairtalk.store.FailureBreaker`).
    progress : callable, optional
        Called with the number of items just stored (cached ones included), after their commit.
    model_version : str, optional
        A tag for what the model's fingerprint cannot see (environment variables, a remote
        deployment, data files); it becomes part of :attr:`fingerprint`, so answers stored
        under another tag are never served. A model whose state its fingerprint cannot read
        (:attr:`~fairtalk.models.Responder.unknown_state`: a callable whose instance holds a torch
        model, say) needs one to use a store that outlives the run (a file, or a store already
        holding answers): without it, SpecError, as the store could serve another model's
        answers as its own.

    Attributes ``n_cached``, ``n_generated`` and ``n_errors`` count items over the
    wrapper's lifetime; duplicate requests within one call count once. For a model whose server
    names the model that answered (its ``served_models`` is not None: ``openai:``),
    ``served_models`` counts the answers, served from the store or generated now, by that name
    (the store keeps it with each answer), and ``n_served_unknown`` the answers without one (the
    server named none, or the store holds them from a fairtalk that did not keep the name); for
    any other model ``served_models`` is None and ``n_served_unknown`` stays 0. ``breaker`` is the
    :class:`~fairtalk.store.FailureBreaker` that counts failures in a row. ``n_unencodable``
    counts code points of generated responses that could not be stored (lone surrogates)
    and were replaced by U+FFFD.
    """

    def __init__(
        self,
        responder: Responder,
        store: RunStore,
        *,
        batch_size: int = 64,
        max_errors: int | None = None,
        progress: Callable[[int], object] | None = None,
        commit_rows: int = 1024,
        commit_seconds: float = 0.25,
        model_version: str | None = None,
        max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise StoreError(_MSG_BATCH_SIZE.format(value=batch_size))
        if isinstance(commit_rows, bool) or not isinstance(commit_rows, int) or commit_rows < 1:
            raise StoreError(_MSG_COMMIT_ROWS.format(value=commit_rows))
        if not commit_seconds >= 0:
            raise StoreError(_MSG_COMMIT_SECONDS.format(value=commit_seconds))
        if model_version is not None and (
            not isinstance(model_version, str) or not model_version.strip() or not model_version.isprintable()
        ):
            raise SpecError(_MSG_VERSION.format(value=model_version))
        if responder.unknown_state is not None and model_version is None and _outlives_run(store):
            model = responder.fingerprint.partition(" ")[0]
            raise SpecError(_MSG_UNKNOWN_STATE.format(model=model, reason=responder.unknown_state, store=store.path))
        self.model_version = model_version
        self.responder = responder
        self.store = store
        self.batch_size = batch_size
        self.commit_rows = commit_rows
        self.commit_seconds = commit_seconds
        self.max_errors = max_errors
        self.breaker = FailureBreaker(max_consecutive_failures)
        self.progress = progress
        self.n_cached = 0
        self.n_generated = 0
        self.n_errors = 0
        self.n_unencodable = 0
        self.requested_model = responder.requested_model
        self.served_models: dict[str, int] | None = None if responder.served_models is None else {}
        self.n_served_unknown = 0
        #: The files the wrapped model was loaded from.
        self.input_paths = tuple(str(p) for p in responder.input_paths)

    @property
    def fingerprint(self) -> str:
        """The wrapped responder's fingerprint, plus ``version=TAG`` when a model version is given."""
        base = self.responder.fingerprint
        return base if self.model_version is None else f"{base} version={self.model_version}"

    @property
    def recorded(self) -> str:
        """The model as a run records and shows it: :attr:`fingerprint`, its head the model's spec when it has one.

        A built-in model keyed in the store by its adapter's name (``retrieval:builtin-minilm {…}``)
        is recorded under the spec a user types (``builtin:minilm-retrieval {…}``,
        :attr:`Responder.user_spec`); the store keeps the fingerprint as it is, so its answers are reused.
        """
        spec = self.responder.user_spec
        if spec is None:
            return self.fingerprint
        _, space, rest = self.fingerprint.partition(" ")
        return f"{spec}{space}{rest}"

    def check_settings(self, settings: DecodingSettings) -> None:
        """The wrapped model's check of ``settings``."""
        self.responder.check_settings(settings)

    def prompts_cut(self, contexts: Sequence[str], settings: DecodingSettings) -> list[int] | None:
        """The wrapped model's count of the tokens cut from each prompt's start."""
        return self.responder.prompts_cut(contexts, settings)

    def _advance(self, n: int) -> None:
        if self.progress is not None and n:
            self.progress(n)

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Return per item the response or the ResponderError it failed with, in order.

        The wrapped model's :meth:`~fairtalk.models.Responder.check_settings` runs first: settings
        it cannot decode with are one SpecError before any answer is asked for or stored.
        """
        check_batch(contexts, seeds)
        self.responder.check_settings(settings)
        run_id = self.store.run_id(self.fingerprint, settings)
        todo: dict[tuple[bytes, int], list[int]] = {}
        keyed = getattr(self.responder, "keyed_text", None)  # what the model is given (a duck-typed model: the context)
        for i, (context, seed) in enumerate(zip(contexts, seeds)):
            text = keyed(context) if callable(keyed) else context
            todo.setdefault((context_hash(text), int(seed)), []).append(i)
        results: list[str | ResponderError | None] = [None] * len(contexts)
        hits, failed = self.store.lookup_outcomes(run_id, list(todo))
        n_served = 0
        for key, response in hits.items():
            for i in todo.pop(key):
                results[i] = response
                n_served += 1
        if self.served_models is not None:
            for response in hits.values():
                self._count_served(response)
        self.n_cached += len(hits)
        self._advance(n_served)
        misses = list(todo.items())
        if self.responder.supports_stream and misses:
            self._stream(misses, contexts, settings, results, run_id, failed)
            return results  # type: ignore[return-value]
        pending = self._pending(run_id)
        try:
            for start in range(0, len(misses), self.batch_size):
                batch = misses[start : start + self.batch_size]
                n_errors_before = self.n_errors
                self._generate(batch, contexts, settings, results, failed, pending)
                if pending.due():
                    pending.commit()
                if self.max_errors is not None and self.n_errors > max(self.max_errors, n_errors_before):
                    last_error = next(
                        item for _, indices in reversed(batch) if isinstance(item := results[indices[0]], ResponderError)
                    )
                    raise ResponderError(
                        _MSG_TOO_MANY.format(n_errors=self.n_errors, max_errors=self.max_errors, last=last_error)
                    ) from last_error
                self._check_breaker()
            pending.commit()
        finally:
            pending.stop()  # a run that stops keeps what finished (the progress line has stopped)
        return results  # type: ignore[return-value]

    def _pending(self, run_id: int) -> _Pending:
        """The finished items of one call, committed together; they count as done once stored."""
        return _Pending(self.store, run_id, self._advance, commit_rows=self.commit_rows, commit_seconds=self.commit_seconds)

    def _stream(
        self,
        misses: list[tuple[tuple[bytes, int], list[int]]],
        contexts: Sequence[str],
        settings: DecodingSettings,
        results: list[str | ResponderError | None],
        run_id: int,
        failed: dict[tuple[bytes, int], str],
    ) -> None:
        """The misses through a streaming responder: each answer stored as it arrives (not per batch), then counted.

        ``failed`` holds the kind each miss that failed before failed with (for the breaker).
        """
        batch_contexts = [contexts[indices[0]] for _, indices in misses]
        batch_seeds = [seed for (_, seed), _ in misses]
        items: Stream = self.responder.respond_stream(batch_contexts, settings, seeds=batch_seeds)
        pending = self._pending(run_id)
        try:
            for done in items:  # None: nothing finished lately, a chance to commit what waits
                if done is not None:
                    j, item = done
                    (h, seed), indices = misses[j]
                    row = self._row(h, seed, batch_contexts[j], item, indices, results, failed.get((h, seed)))
                    pending.add([row], len(indices))
                if pending.due():
                    pending.commit()
                if done is None:
                    continue
                if isinstance(item, ResponderError) and self.max_errors is not None and self.n_errors > self.max_errors:
                    raise ResponderError(
                        _MSG_TOO_MANY.format(n_errors=self.n_errors, max_errors=self.max_errors, last=item)
                    ) from item
                self._check_breaker()
            pending.commit()
        except BaseException as stop:  # the answers that came back but were not handed on are stored too
            pending.commit(count=False)  # first: what finished is stored even if closing the stream waits on the model
            left = answered_before(stop, self.responder, batch_contexts, settings, batch_seeds)  # Ctrl-C inside the stream
            try:
                left.update(close_stream(items, self.responder, batch_contexts, settings, batch_seeds))
            finally:
                self._add_rows(_answers(left, misses, batch_contexts, results), results, failed, pending)
            raise
        finally:
            pending.stop()  # first: what finished is stored even if cancelling the rest waits on the model
            items.close()  # cancels the requests still in flight

    @property
    def max_consecutive_failures(self) -> int | None:
        """Failed items of one kind in a row that stop a run (None: never)."""
        return self.breaker.limit

    def _check_breaker(self) -> None:
        """Raise ResponderAborted, saying why, when the breaker tripped; it then starts counting afresh."""
        if self.breaker.tripped:
            error, last = self.breaker.error(), self.breaker.last
            self.breaker = FailureBreaker(self.breaker.limit)
            raise error from last

    def _generate(
        self,
        batch: list[tuple[tuple[bytes, int], list[int]]],
        contexts: Sequence[str],
        settings: DecodingSettings,
        results: list[str | ResponderError | None],
        failed: dict[tuple[bytes, int], str],
        pending: _Pending,
    ) -> None:
        """Run one batch of misses through the model; fill ``results``; add the rows to store to ``pending``.

        A call stopped midway (Ctrl-C, the model stopping the run) still adds the answers it had
        (the halves of a failed batch already done), so that a re-run asks only for the rest.
        """
        batch_contexts = [contexts[indices[0]] for _, indices in batch]
        answered: dict[int, str | ResponderError] = {}
        try:
            out = respond_each_checked(
                self.responder, batch_contexts, settings, seeds=[seed for (_, seed), _ in batch], answered=answered
            )
        except BaseException:
            self._add_rows(_answers(answered, batch, batch_contexts, results), results, failed, pending)
            raise
        self._add_rows(list(zip(batch, batch_contexts, out)), results, failed, pending)

    def _add_rows(
        self,
        done: list[tuple[tuple[tuple[bytes, int], list[int]], str, str | ResponderError]],
        results: list[str | ResponderError | None],
        failed: dict[tuple[bytes, int], str],
        pending: _Pending,
    ) -> None:
        """Count the finished misses ``((hash, seed), indices), context, item``, and add their rows to ``pending``."""
        rows = [
            self._row(h, seed, context, item, indices, results, failed.get((h, seed)))
            for ((h, seed), indices), context, item in done
        ]
        pending.add(rows, sum(len(indices) for (_, indices), _, _ in done))

    def _row(
        self,
        h: bytes,
        seed: int,
        context: str,
        item: str | ResponderError,
        indices: list[int],
        results: list[str | ResponderError | None],
        before: str | None,
    ) -> _Row:
        """Count one finished item, put it in ``results`` at ``indices``, and return its store row.

        ``before`` is the kind the item failed with when last asked (None: it never failed): the
        breaker does not count it failing again that way.
        """
        context, _ = replace_surrogates(context)
        row: _Row
        if isinstance(item, ResponderError):
            row = (h, seed, context, None, replace_surrogates(f"{type(item).__name__}: {item}")[0])
            self.n_errors += 1
        else:
            text, n_replaced = replace_surrogates(item)
            if isinstance(item, Reply):  # unchanged, it stays the Reply it was; the served name is stored too
                served = item.model and replace_surrogates(item.model)[0]
                if n_replaced or served != item.model:
                    item = Reply(text, item.finish_reason, served)
            else:
                item = text
            self.n_unencodable += n_replaced
            row = (h, seed, context, item, None)
            self.n_generated += 1
            self._count_served(item)
        for i in indices:
            results[i] = item
        self.breaker.record(item, before)
        return row

    def _count_served(self, response: str) -> None:
        """Count an answer by the model its server said answered (``n_served_unknown`` when it did not say)."""
        if self.served_models is None:
            return
        name = response.model if isinstance(response, Reply) else None
        if name:
            self.served_models[name] = self.served_models.get(name, 0) + 1
        else:
            self.n_served_unknown += 1

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Return one response per context; raise the first item's error if any failed."""
        return raise_first_error(self.respond_each(contexts, settings, seeds=seeds))

    def close(self) -> None:
        """Close the wrapped responder (the store belongs to the caller)."""
        self.responder.close()

    def __repr__(self) -> str:
        return f"CachingResponder({self.responder!r}, {self.store!r})"


def _answers(
    answered: dict[int, str | ResponderError],
    misses: list[tuple[tuple[bytes, int], list[int]]],
    contexts: list[str],
    results: list[str | ResponderError | None],
) -> list[tuple[tuple[tuple[bytes, int], list[int]], str, str | ResponderError]]:
    """The answers (not the failures: they are asked again anyway) a call stopped midway had, of misses not yet counted.

    ``answered`` maps an index of ``misses`` (and ``contexts``, their contexts) to its item.
    """
    return [
        (misses[j], contexts[j], item)
        for j, item in sorted(answered.items())
        if not isinstance(item, ResponderError) and results[misses[j][1][0]] is None
    ]


def _outlives_run(store: RunStore) -> bool:
    """Whether ``store`` may hold, or keep, another model's answers: a file, or a store in memory already holding some."""
    return str(store.path) != ":memory:" or store.count() > 0 or store.count(errors=True) > 0


class _Pending:
    """Finished items waiting for their commit: their store rows, and how many items they count for once stored."""

    __slots__ = ("advance", "commit_rows", "commit_seconds", "last", "n_items", "rows", "run_id", "store")

    def __init__(
        self, store: RunStore, run_id: int, advance: Callable[[int], None], *, commit_rows: int, commit_seconds: float
    ) -> None:
        self.store, self.run_id, self.advance = store, run_id, advance
        self.commit_rows, self.commit_seconds = commit_rows, commit_seconds
        self.rows: list[_Row] = []
        self.n_items = 0
        self.last = time.monotonic()

    def add(self, rows: list[_Row], n_items: int) -> None:
        """Rows to store, standing for ``n_items`` items (duplicate requests share a row)."""
        self.rows += rows
        self.n_items += n_items

    def due(self) -> bool:
        """Whether ``commit_rows`` rows wait, or ``commit_seconds`` have passed since the last commit."""
        return bool(self.rows) and (len(self.rows) >= self.commit_rows or time.monotonic() - self.last >= self.commit_seconds)

    def stop(self) -> None:
        """Store what finished, as a run stops (its progress line has stopped): :meth:`commit` without counting.

        Stopped by Ctrl-C after the store's file was deleted, nothing can be stored: the
        interruption goes on (its message says the answers are lost), not a StoreError.
        """
        if isinstance(sys.exc_info()[1], KeyboardInterrupt) and not self.store.in_place():
            self.rows, self.n_items = [], 0
            return
        self.commit(count=False)

    def commit(self, *, count: bool = True) -> None:
        """Store the rows in one transaction, then (``count``) count their items as done."""
        rows, n_items, self.rows, self.n_items = self.rows, self.n_items, [], 0
        if rows:
            self.store.write(self.run_id, rows)
            self.last = time.monotonic()
        if count:
            self.advance(n_items)
