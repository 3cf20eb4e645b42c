"""The failure circuit breaker: stop a run once many items in a row failed with one kind of error.

A model that hangs (a ``python:`` function past its timeout), or a server that is down, fails
every item the same way; without a breaker each item costs its full timeout and retries, hours
for a small audit. :class:`FailureBreaker` counts the items as they finish, in the order they
finish, and trips once ``max_consecutive_failures`` of them in a row failed with one *kind* of
error: the error's class (``ResponderTimeout``, ``TransportError``, ``RateLimited``,
``BadResponse``, ``ResponderError``). An answer, or a failure of another kind, starts the count
over, so a model that fails on some inputs (not on all) never trips it.

An item asked again because it failed before (a rerun retries the failures the store holds, and
a judge is asked again about a response it failed on) and that fails again *with the kind it
failed with before* is a repeat: it neither counts nor starts the count over. A rerun of a model
that refuses some prompts for good is then asked them again without stopping, while a server that
is down still stops it: the new items fail, and so do the retried ones, with another kind. (A
server down on a rerun whose stored failures are of the kind it fails with now costs each of
them one try before the new items stop the run.)

:class:`~fairtalk.store.CachingResponder` holds one, and every model path goes through it: the
in-process batches, the streamed adapters (``openai:``, a single ``python:`` function), Ray
actors, and the ``judge:`` measure's model. It raises the breaker's error only after committing
what finished, so the answers stay stored and a re-run resumes.
"""

from __future__ import annotations

from fairtalk.errors import ResponderAborted, SpecError

__all__ = ["DEFAULT_MAX_CONSECUTIVE_FAILURES", "FailureBreaker", "failure_kind"]

#: Items in a row that may fail with one kind of error before a run stops (``max_consecutive_failures``).
DEFAULT_MAX_CONSECUTIVE_FAILURES = 5
_MSG_BREAKER = (
    "stopped after {n} consecutive failures of one kind ({label}: {kind}); the last: {error} "
    "(max_consecutive_failures={limit}; 0 never stops)"
)
_MSG_LIMIT = "max_consecutive_failures must be a whole number >= 0 (0 or None: never stop), got {value!r}"
#: What each kind of failure means, for the message of a breaker that tripped.
_KIND_LABELS = {
    "ResponderTimeout": "timeout",
    "TransportError": "server error, or the connection failed or timed out",
    "RateLimited": "rate limited",
    "BadResponse": "request refused or answer unusable",
    "ResponderError": "the model failed",
}


def failure_kind(error: BaseException) -> str:
    """The kind of a failed item: its error's class name (``ResponderTimeout``, ``TransportError``, ...).

    It is what the run store records before the message (``"ResponderTimeout: ..."``) and what
    a Ray actor sends back, so that a failure has the same kind on every path.
    """
    return type(error).__name__


class FailureBreaker:
    """Trips once ``limit`` items in a row failed with one kind of error; an answer or another kind starts over.

    Parameters
    ----------
    limit : int or None
        Consecutive failures of one kind that stop the run; 0 or None: never stop.

    Raises
    ------
    SpecError
        A limit that is not a whole number >= 0 (or None).

    Examples
    --------
    >>> from fairtalk.errors import ResponderTimeout
    >>> breaker = FailureBreaker(2)
    >>> for item in ("ok", ResponderTimeout("slow"), "ok", ResponderTimeout("slow"), ResponderTimeout("slow")):
    ...     breaker.record(item)
    >>> breaker.tripped, breaker.n_failures, breaker.kind
    (True, 2, 'ResponderTimeout')
    >>> str(breaker.error()).split(";")[0]
    'stopped after 2 consecutive failures of one kind (timeout: ResponderTimeout)'

    A repeat (an item that failed before with the same kind) neither counts nor starts the count over:

    >>> breaker = FailureBreaker(2)
    >>> for _ in range(3):
    ...     breaker.record(ResponderTimeout("slow"), before="ResponderTimeout")
    >>> breaker.tripped, breaker.n_failures, breaker.n_repeats
    (False, 0, 3)
    """

    __slots__ = ("_tripped", "kind", "last", "limit", "n_failures", "n_repeats")

    def __init__(self, limit: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES) -> None:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise SpecError(_MSG_LIMIT.format(value=limit))
        self.limit = limit or None
        self.kind: str | None = None
        self.n_failures = 0
        self.last: BaseException | None = None
        #: Failures that repeated an item's earlier failure (of the same kind): not counted.
        self.n_repeats = 0
        self._tripped = False

    @property
    def tripped(self) -> bool:
        """Whether ``limit`` items in a row failed with one kind (it stays tripped)."""
        return self._tripped

    def record(self, item: object, before: str | None = None) -> None:
        """Count one finished item: an answer resets the count, an error extends it (or starts its own kind's).

        ``before`` is the kind the item failed with when it was last asked (None: it never
        failed). An error of that same kind is a repeat: it neither counts nor resets the count.
        Once tripped, the breaker keeps the run of failures that tripped it (later items change nothing).
        """
        if self._tripped:
            return
        if not isinstance(item, BaseException):
            self.kind, self.n_failures = None, 0
            return
        kind = failure_kind(item)
        if kind == before:
            self.n_repeats += 1
            return
        self.n_failures = self.n_failures + 1 if kind == self.kind else 1
        self.kind, self.last = kind, item
        if self.limit is not None and self.n_failures >= self.limit:
            self._tripped = True

    def error(self) -> ResponderAborted:
        """The error that stops the run: how many failed in a row, their kind, and the last one's message."""
        kind = self.kind or "ResponderError"
        return ResponderAborted(
            _MSG_BREAKER.format(
                n=self.n_failures, kind=kind, error=self.last, limit=self.limit, label=_KIND_LABELS.get(kind, "failed")
            )
        )
