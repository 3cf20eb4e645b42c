"""A continuous request pipeline for HTTP adapters: always ``max_concurrency`` in flight, results as they finish.

:func:`stream_results` runs an asyncio loop in a helper thread, where ``max_concurrency`` workers
take the next item as soon as they finish the last one (no batch waits for its slowest request),
and hands each result to the caller the moment it arrives, in completion order. Closing the
iterator early (an error budget spent, Ctrl-C) cancels what is still in flight: their
connections are closed and no further request is sent.

:class:`Endpoints` spreads requests over replicas of one deployment by least outstanding requests
and skips, for a while, a replica that keeps failing. :class:`RetryBudget` caps the retries of a
whole call, so that a failing server is not sent every item ``max_retries + 1`` times. :class:`Outage`
is the time budget beside it: while a server cannot be reached (restarting, behind a proxy that
restarts, busy), its requests are retried for a number of seconds, not a number of times.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import email.utils
import math
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

__all__ = ["Endpoints", "InFlight", "Outage", "RetryBudget", "RetryCounts", "TLSContext", "retry_after", "stream_results"]

T = TypeVar("T")
_DONE = object()


class InFlight:
    """Counts requests in flight and the most seen at once (read by the generation summary)."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    def enter(self) -> None:
        """One more request in flight."""
        self.now += 1
        self.most = max(self.most, self.now)

    def leave(self) -> None:
        """One request fewer in flight."""
        self.now -= 1


class RetryCounts:
    """Retries summed over calls: their budgets (``total``), the retries taken (``n_used``), the failures refused one.

    ``n_waited`` counts the retries of requests the server could not take (a 429, a 503, a refused
    connection), sent again on the :class:`Outage` time budget, never drawn on a retry budget.

    Examples
    --------
    >>> counts = RetryCounts()
    >>> for total in (1, 2):
    ...     budget = RetryBudget(total, counts=counts)
    ...     _ = budget.take(), budget.take()
    >>> counts.as_tuple()
    (3, 3, 1, 0)
    """

    def __init__(self) -> None:
        self.total = 0
        self.n_used = 0
        self.n_refused = 0
        self.n_waited = 0

    def as_tuple(self) -> tuple[int, int, int, int]:
        """``(total, n_used, n_refused, n_waited)``."""
        return self.total, self.n_used, self.n_refused, self.n_waited


class RetryBudget:
    """Retries left to one call, shared by all its items; used from one event loop (no locks).

    ``counts``, when given, adds this call's budget and each retry taken or refused to a running
    tally over many calls (what a generation summary reports).

    Examples
    --------
    >>> budget = RetryBudget(2)
    >>> [budget.take() for _ in range(3)], budget.n_used, budget.spent
    ([True, True, False], 2, True)
    """

    def __init__(self, total: int, *, counts: RetryCounts | None = None) -> None:
        self.total = total
        self.n_used = 0
        self.n_refused = 0
        self.counts = counts
        if counts is not None:
            counts.total += total

    @property
    def spent(self) -> bool:
        """Whether no retry is left."""
        return self.n_used >= self.total

    def take(self) -> bool:
        """Use one retry; False (counted in ``n_refused``) when none is left."""
        if self.spent:
            self.n_refused += 1
            if self.counts is not None:
                self.counts.n_refused += 1
            return False
        self.n_used += 1
        if self.counts is not None:
            self.counts.n_used += 1
        return True


class Outage:
    """The time budget of one call's retries while its server cannot be reached; used from one event loop (no locks).

    A server that restarts refuses connections (or its proxy answers 502/503) for a few seconds;
    counted retries would all be spent in those seconds. So a request that failed that way may be
    retried, with backoff, for ``seconds`` from its own first such failure, as long as the server
    has not been unavailable for longer (``since``: the first such failure after the last answer;
    any answer ends the outage). Past either, a retry draws on the :class:`RetryBudget`.

    Examples
    --------
    >>> outage = Outage(60.0)
    >>> outage.failed(now=100.0), outage.allows(first=100.0, now=130.0), outage.allows(first=100.0, now=161.0)
    (100.0, True, False)
    >>> outage.answered(), outage.since, outage.allows(first=100.0, now=130.0)
    (True, None, False)
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.since: float | None = None
        #: retries this time budget allowed (none of them drawn on the retry budget)
        self.n_retries = 0

    def failed(self, now: float | None = None) -> float:
        """A request could not reach the server: the outage starts now unless it already had; when it started."""
        if self.since is None:
            self.since = time.monotonic() if now is None else now
        return self.since

    def answered(self) -> bool:
        """The server answered: the outage, if any, is over; True when there was one."""
        was, self.since = self.since is not None, None
        return was

    def allows(self, *, first: float, now: float | None = None) -> bool:
        """Whether a request that first failed at ``first`` may be retried on the time budget (counted in ``n_retries``)."""
        now = time.monotonic() if now is None else now
        ok = self.since is not None and now - first < self.seconds and now - self.since < self.seconds
        self.n_retries += ok
        return ok


class TLSContext:
    """One TLS context for every client of an adapter, built on first use (building one reads the CA bundle: ~20 ms)."""

    def __init__(self) -> None:
        self._context: Any = None

    def get(self) -> Any:
        """The context (``httpx.create_ssl_context()``)."""
        if self._context is None:
            import httpx

            self._context = httpx.create_ssl_context()
        return self._context


class Endpoints:
    """Replicas of one deployment: pick the one with the fewest outstanding requests among the healthy ones.

    A replica that fails ``fail_limit`` times in a row is skipped for ``cooldown`` seconds (when
    every replica is skipped, all are tried again). Used from one event loop: no locks.

    Examples
    --------
    >>> endpoints = Endpoints(["http://a/v1", "http://b/v1"])
    >>> first, second = endpoints.acquire(), endpoints.acquire()
    >>> (first, second), endpoints.outstanding
    ((0, 1), [1, 1])
    >>> for _ in range(3):
    ...     endpoints.release(0, ok=False); _ = endpoints.acquire()
    >>> endpoints.healthy()
    [1]
    """

    def __init__(self, urls: Sequence[str], *, fail_limit: int = 3, cooldown: float = 30.0) -> None:
        self.urls = list(urls)
        self.outstanding = [0] * len(self.urls)
        self.failures = [0] * len(self.urls)
        self.skip_until = [0.0] * len(self.urls)
        self.fail_limit = fail_limit
        self.cooldown = cooldown
        self.n_sent = [0] * len(self.urls)

    def healthy(self) -> list[int]:
        """The replicas not being skipped (all of them when every one is)."""
        now = time.monotonic()
        alive = [i for i, until in enumerate(self.skip_until) if until <= now]
        return alive or list(range(len(self.urls)))

    def acquire(self) -> int:
        """The replica for the next request (least outstanding, then fewest sent); counts it outstanding."""
        index = min(self.healthy(), key=lambda i: (self.outstanding[i], self.n_sent[i]))
        self.outstanding[index] += 1
        self.n_sent[index] += 1
        return index

    def release(self, index: int, *, ok: bool) -> None:
        """The request to ``index`` is over; ``ok=False`` (a transport error or 5xx) counts toward skipping it."""
        self.outstanding[index] -= 1
        if ok:
            self.failures[index] = 0
            return
        self.failures[index] += 1
        if self.failures[index] >= self.fail_limit:
            self.skip_until[index] = time.monotonic() + self.cooldown
            self.failures[index] = 0


#: Seconds without a finished item after which the stream yields None (the caller may commit).
HEARTBEAT = 0.25
#: Seconds finished items gather before they cross to the caller's thread together: a wake-up of the
#: caller per item costs ~0.15 ms of CPU (GIL hand-offs), 10-15% of a request at ~1,000 requests/s.
HAND_OVER = 0.01


def stream_results(  # noqa: C901
    n_items: int,
    work: Callable[[int], Awaitable[T]],
    *,
    max_concurrency: int,
    setup: Callable[[], Awaitable[object]] | None = None,
    teardown: Callable[[], Awaitable[object]] | None = None,
    not_yielded: list[tuple[int, T]] | None = None,
) -> Iterator[tuple[int, T] | None]:
    """Yield ``(index, await work(index))`` for every index as each finishes, ``max_concurrency`` at a time.

    A None comes every :data:`HEARTBEAT` seconds in which nothing finished, so that a caller can
    commit what it holds while a slow request is still out. ``setup``/``teardown`` run in the
    helper thread's loop before the first and after the last request (opening and closing the
    HTTP clients of the stream). Items finished within :data:`HAND_OVER` seconds cross to the
    caller's thread together (one wake-up, not one per item). An exception inside ``work`` is
    raised here; closing the iterator cancels the requests in flight. Whatever stops it early
    (closing it, Ctrl-C while it waits) puts the items that had finished but were not yet yielded
    in ``not_yielded``, when given, once the loop has ended: results that came back while the caller
    was being interrupted, or on their way to it when it closed the stream, for the run store.
    """
    results: queue.Queue[object] = queue.Queue()
    loop = asyncio.new_event_loop()
    tasks: list[asyncio.Task[None]] = []
    next_index = iter(range(n_items))
    finished: list[tuple[int, T]] = []

    def hand_over() -> None:
        if finished:
            results.put(finished.copy())
            finished.clear()

    async def worker() -> None:
        for index in next_index:
            result = await work(index)
            if not finished:
                loop.call_later(HAND_OVER, hand_over)
            finished.append((index, result))

    async def main() -> None:
        try:
            if setup is not None:
                await setup()
            tasks.extend(asyncio.ensure_future(worker()) for _ in range(min(max_concurrency, n_items)))
            await asyncio.gather(*tasks)
        except BaseException as exc:  # noqa: BLE001 - handed to the consuming thread (CancelledError: nobody reads it)
            hand_over()
            results.put(exc)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)  # each request unwinds: its connection is closed
            if teardown is not None:
                try:
                    await teardown()
                except Exception:  # noqa: BLE001 - closing a client must not hide the run's outcome
                    pass
            hand_over()
            results.put(_DONE)

    runner = loop.create_task(main())  # cancelling it (from the consuming thread) stops every worker, started or not

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(runner)

    thread = threading.Thread(target=run, name="fairtalk-requests", daemon=True)

    def stop() -> None:
        if thread.is_alive():
            loop.call_soon_threadsafe(runner.cancel)
        if thread.ident is not None:  # started (Ctrl-C can come before the thread is)
            thread.join()  # the loop hands over what finished before it ends

    try:
        thread.start()
    except BaseException:  # Ctrl-C while the thread starts: its loop may have answered already
        stop()
        loop.close()
        if not_yielded is not None:
            not_yielded += _drain(results)
        raise
    try:
        yield from _handed_on(results, stop, [] if not_yielded is None else not_yielded)
    finally:
        stop()
        loop.close()


def _handed_on(
    results: queue.Queue[object], stop: Callable[[], None], not_yielded: list[tuple[int, Any]]
) -> Iterator[tuple[int, Any] | None]:
    """The items :func:`stream_results`' loop hands over, one by one (None after a :data:`HEARTBEAT` without any).

    Whatever stops it early (a GeneratorExit, Ctrl-C while it waits) first ``stop``s the loop,
    then puts in ``not_yielded`` the items that had finished but were not yet yielded.
    """
    ready: collections.deque[tuple[int, Any]] = collections.deque()  # handed over, not yet yielded
    try:
        while True:
            try:
                item = results.get(timeout=HEARTBEAT)
            except queue.Empty:
                yield None
                continue
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            ready.extend(cast(list[tuple[int, Any]], item))
            while ready:
                yield ready.popleft()
    except BaseException:
        stop()
        not_yielded += [*ready, *_drain(results)]
        raise


def _drain(results: queue.Queue[object]) -> list[Any]:
    """The finished items waiting in ``results`` (the loop has ended)."""
    items: list[Any] = []
    with contextlib.suppress(queue.Empty):
        while True:
            item = results.get_nowait()
            if isinstance(item, list):
                items += item
    return items


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date); None when absent or unreadable.

    A number of seconds must be finite and not negative (``nan``, ``inf`` and ``-1`` are
    unreadable); a date already past is 0. The caller still waits at least its own backoff.

    Examples
    --------
    >>> [retry_after(v) for v in ("2", "0", "nan", "inf", "-1", "soon", None)]
    [2.0, 0.0, None, None, None, None, None]
    >>> retry_after("Wed, 21 Oct 2015 07:28:00 GMT")
    0.0
    """
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
