"""The run store: a SQLite cache of responses (WAL mode) and the CachingResponder that uses it.

Every response is keyed by ``(fingerprint, context_hash, seed, settings_hash)``.
:class:`CachingResponder` wraps any responder: it serves stored responses, sends
only the misses to the model in batches, and commits finished items as they
arrive (every 1,024 items or 0.25 s, whichever comes first), so a run killed at
any point resumes where it stopped, without gaps or duplicates (a unique key
forbids them).

Per-item failures (after the adapter's own retries) are stored with their message
but never served from the cache: the next run retries them. A stored success is
never overwritten. When more than ``max_errors`` items have failed, the wrapper
raises :class:`~fairtalk.errors.ResponderError` after committing what it has; when
``max_consecutive_failures`` items in a row (5 by default) have failed with one kind of
error, it raises :class:`~fairtalk.errors.ResponderAborted` the same way, saying which kind
(see :class:`FailureBreaker`).
"""

from fairtalk.store._breaker import DEFAULT_MAX_CONSECUTIVE_FAILURES, FailureBreaker, failure_kind
from fairtalk.store._caching import CachingResponder
from fairtalk.store._sqlite import (
    SCHEMA_VERSION,
    RunStore,
    StoredResponse,
    context_hash,
    is_run_store,
    store_written,
)

__all__ = [
    "DEFAULT_MAX_CONSECUTIVE_FAILURES",
    "SCHEMA_VERSION",
    "CachingResponder",
    "FailureBreaker",
    "RunStore",
    "StoredResponse",
    "context_hash",
    "failure_kind",
    "is_run_store",
    "store_written",
]
