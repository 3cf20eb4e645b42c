"""``python:module:function`` or ``python:path/to/file.py:function``: a user's callable as a model.

The same adapter turns a function given as ``model=fn`` into a model (:func:`fairtalk.models.as_responder`).
The callable gets each context as text: a multi-turn context as its transcript, one turn per
line without role marks (:func:`fairtalk.records.transcript`); a single-turn context as it is.
The callable is one of three forms:

- *single* (``str -> str``), called once per context;
- *batched* (``list[str] -> list[str]``), called once per batch. Which one is decided by, in
  order: the ``batched=`` option, a ``batched`` attribute on the function (``fn.batched = True``,
  which the :func:`batched` decorator sets), else single;
- *async* (``async def f(text) -> str``), awaited for ``max_concurrency`` contexts at once
  (default 8) on an event loop of its own, in a helper thread. An async batched function is
  awaited once per batch.

If the function has a ``seed`` parameter (single) or ``seeds`` parameter (batched), or a
``settings`` parameter, those are passed as keywords.

- Exceptions the callable raises become :class:`~fairtalk.errors.ResponderError` for
  that item (a batched call is bisected to find the failing items).
- A response that is not text (not a string, or a string with a lone surrogate, which no UTF-8
  file can hold) is a :class:`~fairtalk.errors.BadResponse` for that item: a failure of its
  side, counted by kind, as a server's bad answer is; it is never stored altered.
- A single function answers item by item through ``respond_stream``: the run store commits
  each answer, and counts each failure toward its ``max_consecutive_failures``, as it finishes
  (a function that hangs costs that many timeouts, not one per item of a batch).
- Each call may take at most ``timeout`` seconds (per item for a single function, per batch
  for a batched one; default 300; ``none``, ``inf`` or a timeout beyond
  ``threading.TIMEOUT_MAX / 2`` mean no limit). A call that takes longer fails its items with
  :class:`~fairtalk.errors.ResponderTimeout`. A plain call runs on a worker thread and cannot be
  killed, so it is abandoned and the next call gets a fresh thread; an async one is cancelled.
- ``sys.exit()`` or ``KeyboardInterrupt`` inside the callable stops the run with
  :class:`~fairtalk.errors.ResponderAborted`, which says so (what was answered stays in the
  run store when the run has a store file).
- A file spec's folder is put on ``sys.path`` (as when running a script), so the file can
  import its neighbours. The fingerprint is ``module:qualname`` (a lambda's with its line) plus a
  hash of the model's source *and* every module of the user's own code it imports (see
  ``_user_code``), so editing a helper invalidates the stored answers, and a rerun of an unchanged
  function resumes from the store.
- A callable given as an object (``model=fn``) has the state that makes it the model it is in
  its fingerprint too (``state``: a partial's arguments, a bound method's instance, a closure's
  cells; see ``_state``), so ``Bot(2).reply`` and ``Bot(9).reply`` are two models. It is read
  once per object and process (``remembered_state``): a bot that counts its calls or memoizes
  keeps its fingerprint, and a run it was interrupted in resumes from the store. When that
  state cannot be read (an instance holding a torch model), the fingerprint says
  ``"state":"unknown"`` and :attr:`unknown_state` says why. A spec's callable has no such state:
  its module's code, which the fingerprint hashes, makes it.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from fairtalk.errors import (
    BadResponse,
    ResponderAborted,
    ResponderError,
    ResponderTimeout,
    SpecError,
)
from fairtalk.models._base import (
    UNKNOWN_STATE,
    DecodingSettings,
    ModelFactory,
    Responder,
    Stream,
    check_batch,
    collect_stream,
    keep_answered,
    make_fingerprint,
    one_line,
    raise_first_error,
)
from fairtalk.models._streaming import InFlight, stream_results
from fairtalk.models.python._loading import (
    Loaded,
    Worker,
    callable_name,
    defined_by,
    load_callable,
    resolved_target,
    user_code,
)
from fairtalk.models.python._state import Unknown, remembered_state
from fairtalk.records import transcript

__all__ = ["PythonOptions", "PythonResponder", "batched", "callable_name"]

_MSG_RAISED = "{target} raised {kind}: {error}"
_MSG_NOT_LIST = "{target} returned {kind}; a batched callable must return a list of strings"
_MSG_LENGTH = "{target} returned {n_results} responses for {n_contexts} contexts"
_MSG_NOT_STR = "{target} returned {kind} for the context {excerpt}; responses must be strings{hint}"
#: Added to :data:`_MSG_NOT_STR` when a function called with one context returned a list or tuple.
_HINT_BATCHED = " (a batched function? add ?batched=true to the spec)"
_MSG_SURROGATE = (
    "{target} returned a string holding a lone surrogate (U+{code:04X} at character {at}) for the context {excerpt}; "
    "no UTF-8 text can hold one: responses must be text (decode bytes with errors='replace')"
)
#: Characters of a context's start, and of its end, that name it in a message (a context within twice that, whole).
_EXCERPT_CHARS = 30
_MSG_TIMEOUT = "{target} did not return within timeout={timeout:g} s (the call was abandoned)"
_MSG_ASYNC_TIMEOUT = "{target} did not return within timeout={timeout:g} s (the call was cancelled)"
#: The adapter cannot know whether the answers so far are kept (that depends on the run store): it does not say.
_MSG_EXIT = "{target} called sys.exit({code!r}) while answering; the run stopped"
_MSG_INTERRUPT = "{target} raised KeyboardInterrupt while answering; the run stopped"
_MSG_TIMEOUT_VALUE = "python: timeout must be > 0 seconds, or none (or inf) for no limit, got {value!r}"
_MSG_CONCURRENCY = "python: max_concurrency must be >= 1, got {value!r}"
#: Timeouts from here up (``inf`` included) mean no limit: a thread cannot wait longer than
#: ``threading.TIMEOUT_MAX``, and a deadline that far off overflows the clock.
NO_LIMIT_FROM = threading.TIMEOUT_MAX / 2
#: Default seconds one call may take (generous: a CPU LLM answering one item, or a batch).
DEFAULT_TIMEOUT = 300.0
#: Contexts an async function is awaited for at once, by default.
DEFAULT_MAX_CONCURRENCY = 8

F = TypeVar("F", bound=Callable[..., Any])


def batched(fn: F) -> F:
    """Mark ``fn`` as batched: it takes a list of contexts and returns one reply per context, in order.

    It sets ``fn.batched = True``, the attribute the ``python:`` adapter reads, and returns ``fn``.

    Examples
    --------
    >>> from fairtalk.models import DecodingSettings, as_responder, batched
    >>> @batched
    ... def shout(texts):
    ...     return [t.upper() for t in texts]
    >>> as_responder(shout).respond(["hi", "yo"], DecodingSettings(), seeds=[0, 0])
    ['HI', 'YO']
    """
    cast(Any, fn).batched = True
    return fn


@dataclass(frozen=True, slots=True)
class PythonOptions:
    """Options of the ``python:`` adapter.

    ``batched`` (None: the function's own ``batched`` attribute), ``timeout`` (seconds a call
    may take; None: no limit) and ``max_concurrency`` (contexts an async function is awaited for
    at once; a plain function is called one call at a time).
    """

    batched: bool | None = None
    timeout: float | None = DEFAULT_TIMEOUT
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY

    def __post_init__(self) -> None:
        if self.timeout is not None and not self.timeout > 0:
            raise SpecError(_MSG_TIMEOUT_VALUE.format(value=self.timeout))
        if self.timeout is not None and self.timeout >= NO_LIMIT_FROM:  # inf, 1e10: no limit, not an OverflowError
            object.__setattr__(self, "timeout", None)
        if isinstance(self.max_concurrency, bool) or not isinstance(self.max_concurrency, int) or self.max_concurrency < 1:
            raise SpecError(_MSG_CONCURRENCY.format(value=self.max_concurrency))


def _is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives a coroutine: an ``async def`` function, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


class PythonResponder(Responder, ModelFactory[PythonOptions]):
    """Wrap a user callable (single, batched or async) as a responder.

    Parameters
    ----------
    fn : callable
        ``str -> str``, ``list[str] -> list[str]`` when batched, or an ``async`` function of either form.
    name : str, optional
        Identity in the fingerprint (default ``module:qualname``).
    options : PythonOptions, optional
        ``batched``, ``timeout`` and ``max_concurrency`` (the defaults when left out).
    """

    #: The function gets a multi-turn context as its transcript, so the run store keys its answers on that
    #: (a store of before, keyed on the raw context the function was given then, is asked again, never served).
    gets_transcript = True

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        options: PythonOptions | None = None,
        _loaded: Loaded | None = None,
    ) -> None:
        options = options or PythonOptions()
        self.fn = fn
        self.name = name or callable_name(fn)
        self.resolved_target = resolved_target(_loaded, self.name)
        self.batched = bool(getattr(fn, "batched", False)) if options.batched is None else options.batched
        self.timeout = options.timeout
        self.is_async = _is_async(fn)
        if self.is_async and not self.batched:  # awaited max_concurrency at a time: the summary reports it
            self.max_concurrency = options.max_concurrency
            self.in_flight = InFlight()
        code = user_code(_loaded, defined_by(fn))
        self._code = None if code is None else code.digest
        self.input_paths = () if code is None else tuple(str(p) for p in sorted(code.files))
        if self._code is None:  # no source file (a builtin, a lambda from a notebook): hash what inspect sees
            try:
                self._code = hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:16]
            except (OSError, TypeError):
                self._code = None
        state = remembered_state(fn) if _loaded is None else None  # a spec's callable is made by its module's code
        self.unknown_state = state.reason if isinstance(state, Unknown) else None
        self._state = UNKNOWN_STATE if isinstance(state, Unknown) else state
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self._pass_seed = ("seeds" if self.batched else "seed") in params
        self._pass_settings = "settings" in params
        self._worker = Worker()

    @classmethod
    def options_for(cls, target: str) -> type[PythonOptions]:
        """The options this adapter takes."""
        return PythonOptions

    @classmethod
    def from_spec(cls, target: str, options: PythonOptions) -> PythonResponder:
        """Build from ``module:function`` or ``file.py:function`` (what follows ``python:``)."""
        loaded = load_callable(target)
        return cls(loaded.fn, name=target, options=options, _loaded=loaded)

    @property
    def fingerprint(self) -> str:
        """``python:<target>`` plus a hash of the model's code (its module and the user modules it imports) and of its state.

        ``state`` is there only for a callable given as an object that has state (a partial, a
        bound method of an instance with attributes, a closure); ``"unknown"`` when that state
        cannot be read (:func:`~fairtalk.models.identity_unknown`).
        """
        return make_fingerprint("python", self.name, code=self._code, batched=self.batched, state=self._state)

    @property
    def supports_stream(self) -> bool:
        """True for a single function (each answer is handed on as it returns); a batched one answers per batch."""
        return not self.batched

    def _kwargs(self, seed_value: Any, settings: DecodingSettings) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self._pass_seed:
            kwargs["seeds" if self.batched else "seed"] = seed_value
        if self._pass_settings:
            kwargs["settings"] = settings
        return kwargs

    def _failure(self, value: BaseException) -> ResponderError | ResponderAborted:
        """The error a call that raised ``value`` fails with (ResponderAborted: the run stops)."""
        if isinstance(value, SystemExit):
            return ResponderAborted(_MSG_EXIT.format(target=self.name, code=value.code))
        if isinstance(value, KeyboardInterrupt):
            return ResponderAborted(_MSG_INTERRUPT.format(target=self.name))
        if isinstance(value, ResponderError):
            return value
        if not isinstance(value, Exception):  # GeneratorExit and other BaseExceptions: stop, saying what
            return ResponderAborted(_MSG_RAISED.format(target=self.name, kind=type(value).__name__, error=one_line(value)))
        return ResponderError(_MSG_RAISED.format(target=self.name, kind=type(value).__name__, error=one_line(value)))

    def _call(self, arg: Any, seed_value: Any, settings: DecodingSettings) -> Any:
        kwargs = self._kwargs(seed_value, settings)

        def call() -> Any:
            value = self.fn(arg, **kwargs)
            return asyncio.run(_awaited(value)) if inspect.isawaitable(value) else value

        try:
            ok, value = self._worker.run(call, self.timeout)
        except TimeoutError:
            raise ResponderTimeout(_MSG_TIMEOUT.format(target=self.name, timeout=self.timeout)) from None
        if ok:
            return value
        failure = self._failure(value)
        if failure is value:
            raise failure
        raise failure from value

    def _check_item(self, value: Any, context: str) -> str:
        r"""``value`` when it is text, else BadResponse naming the context it answered (its start and end).

        Text is a string UTF-8 can hold: one with a lone surrogate (``"a\ud800b"``, bytes decoded
        with ``surrogateescape``) is a bad response, counted as a failure of its side as a
        non-string is, not stored altered.
        """
        if not isinstance(value, str):
            hint = _HINT_BATCHED if isinstance(value, (list, tuple)) and not self.batched else ""
            excerpt = _excerpt(transcript(context))
            raise BadResponse(_MSG_NOT_STR.format(target=self.name, kind=type(value).__name__, excerpt=excerpt, hint=hint))
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                code, excerpt = ord(value[exc.start]), _excerpt(transcript(context))
                raise BadResponse(_MSG_SURROGATE.format(target=self.name, code=code, at=exc.start, excerpt=excerpt)) from None
        return value

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Call the function on the batch (or per item) and validate what it returns."""
        check_batch(contexts, seeds)
        if not contexts:
            return []
        if self.is_async and not self.batched:
            return raise_first_error(self.respond_each(contexts, settings, seeds=seeds))
        if not self.batched:
            return [self._check_item(self._call(transcript(c), s, settings), c) for c, s in zip(contexts, seeds)]
        out = self._call([transcript(c) for c in contexts], list(seeds), settings)
        if not isinstance(out, list | tuple):
            raise BadResponse(_MSG_NOT_LIST.format(target=self.name, kind=type(out).__name__))
        if len(out) != len(contexts):
            raise BadResponse(_MSG_LENGTH.format(target=self.name, n_results=len(out), n_contexts=len(contexts)))
        return [self._check_item(v, c) for v, c in zip(out, contexts)]

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Per-item results; a single callable is isolated per item without bisection."""
        if self.batched:
            return super().respond_each(contexts, settings, seeds=seeds)
        return collect_stream(self.respond_stream(contexts, settings, seeds=seeds), len(contexts))

    def respond_stream(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> Stream:
        """Yield ``(index, answer or error)`` as each call returns (a batched function: once its batches are done).

        The run store commits every answer, and counts every failure, at once; closing the
        stream early makes no further call (an async function's calls in flight are cancelled).
        """
        check_batch(contexts, seeds)
        if self.batched:
            yield from enumerate(self.respond_each(contexts, settings, seeds=seeds))
        elif self.is_async:
            yield from self._gather(contexts, settings, seeds)
        else:
            for i, (c, s) in enumerate(zip(contexts, seeds)):
                try:
                    item: str | ResponderError = self._check_item(self._call(transcript(c), s, settings), c)
                except ResponderError as exc:
                    item = exc
                yield i, item

    def _gather(self, contexts: Sequence[str], settings: DecodingSettings, seeds: Sequence[int]) -> Stream:
        """An async function awaited for ``max_concurrency`` contexts at once, each answer yielded as it returns."""
        flight = self.in_flight or InFlight()

        async def work(index: int) -> str | ResponderError:
            flight.enter()
            limit = asyncio.timeout(self.timeout)
            try:
                async with limit:
                    value = await self.fn(transcript(contexts[index]), **self._kwargs(seeds[index], settings))
                return self._check_item(value, contexts[index])
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 - SystemExit must not escape the helper thread's loop
                if isinstance(exc, TimeoutError) and limit.expired():
                    return ResponderTimeout(_MSG_ASYNC_TIMEOUT.format(target=self.name, timeout=self.timeout))
                failure = self._failure(exc)
                if isinstance(failure, ResponderAborted):
                    raise failure from None
                return failure
            finally:
                flight.leave()

        not_yielded: list[tuple[int, str | ResponderError]] = []
        try:
            yield from stream_results(
                len(contexts),
                work,
                max_concurrency=self.max_concurrency or DEFAULT_MAX_CONCURRENCY,
                not_yielded=not_yielded,
            )
        except BaseException as stop:  # the answers back but not yet handed on go with it, for the run store to keep
            keep_answered(stop, self, contexts, settings, seeds, dict(not_yielded))
            raise

    def close(self) -> None:
        """Let the worker thread end."""
        self._worker.close()


def _excerpt(context: str) -> str:
    """A context as a message names it: whole when short, else its start and its end.

    >>> _excerpt("how was your weekend?")
    "'how was your weekend?'"
    >>> _excerpt("a" * 40 + "b" * 40)
    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' ... 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'"
    """
    if len(context) <= 2 * _EXCERPT_CHARS:
        return repr(context)
    return f"{context[:_EXCERPT_CHARS]!r} ... {context[-_EXCERPT_CHARS:]!r}"
