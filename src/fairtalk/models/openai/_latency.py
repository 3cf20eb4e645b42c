"""How fast an ``openai:`` server answers, measured in the preflight, and the timeout and concurrency that follow.

A server on a CPU (``transformers serve``, a laptop's llama.cpp) may take seconds an answer and
answer one request at a time. With 8 requests in flight, each then waits for the 7 before it,
and at a 30 s timeout most time out, are sent again, and spend the retry budget while the
server still works on the abandoned ones. So the preflight measures, when the user left
``timeout`` or ``max_concurrency`` out (:func:`measure_latency`):

- one short request alone (:data:`PROBE_TOKENS` tokens at most, sent twice: the first may
  load the model), timed: seconds per token, scaled to ``max_new_tokens`` of the run; and
- :data:`N_AT_ONCE` such requests at once: a server that serialises them takes about
  :data:`N_AT_ONCE` times as long for the last (how many it runs at once is ``parallel``).

Each probe carries a nonce (:func:`probe_prompt`): a caching gateway in front of the server
cannot have seen it, so no probe is answered from a cache (a cached probe read 0.02 s and set a
30 s timeout for answers of 20 s), neither the second of one preflight nor one of a later run.

:func:`tune` then chooses what the user left out: ``max_concurrency`` is lowered to
``parallel + 1`` a replica when the server runs fewer requests at once than are sent and they
would queue past the timeout; ``timeout`` becomes :data:`SAFETY` times the wait of a request
at that concurrency (an answer of ``max_new_tokens`` times its place in the queue), never less
than the default. What the user set is kept, with a warning when the measure says requests
will time out. Measured values never enter the fingerprint (the run store's key).
"""

from __future__ import annotations

import json
import logging
import math
import secrets
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fairtalk._codec import Codec, via
from fairtalk.errors import BadResponse
from fairtalk.models.openai._replicas import parse_reply

__all__ = [
    "N_AT_ONCE",
    "PROBE_TOKENS",
    "SAFETY",
    "Latency",
    "Tuning",
    "choose",
    "is_probe",
    "measure_latency",
    "probe_prompt",
    "timeout_hint",
    "tune",
]

#: Tokens a latency probe asks for, and the prompt (one that runs that long on any chat model), before its nonce.
PROBE_TOKENS = 16
PROBE_PROMPT = "Count from 1 to 50, separated by commas."
#: Probes sent at once to see whether the server serialises requests.
N_AT_ONCE = 3
#: The timeout chosen is this many times the expected wait of a request.
SAFETY = 3.0
#: Longest wait for a probe, in seconds (or the user's ``timeout`` when longer): the first may load the model.
PROBE_TIMEOUT = 120.0
#: Answers longer than any run is likely to ask for: below this bound, a server is too fast to need the probe at once.
_LONG_ANSWER = 512
_LOG = logging.getLogger(__name__)
_RATIO_SERIAL = 1.5  # the last of N_AT_ONCE taking this many times one alone: the server runs fewer at once

_MSG_MEASURED = (
    "openai: %s answers a %d-token request in %s s alone%s; for answers of up to %d tokens: timeout %s s, max_concurrency %d (%s)"
)
_MSG_AT_ONCE = ", %d at once in %s s (it runs about %d at a time)"
_MSG_SLOW = (
    "openai: requests will likely time out: an answer of up to {n} tokens takes about {answer} s "
    "alone here, about {wait} s with {c} in flight, over timeout={timeout:g} s: raise timeout= "
    "or lower max_concurrency"
)
_MSG_HINT = "requests time out after {timeout:g} s: raise timeout={measured} or lower max_concurrency"
#: The hint of an item that timed out more than once: each retry of a timed-out request waits twice as long.
_MSG_HINT_RETRIED = (
    "its {n} tries that timed out waited {waits} s (timeout={timeout:g} s, doubled on each retry): "
    "raise timeout={measured} or lower max_concurrency"
)
#: Waits named in full up to this many; more are shortened to the first two, "...", and the last.
_MAX_WAITS_NAMED = 4
_MSG_UNMEASURED = "openai: could not measure the latency of %s (%s); keeping timeout=%g s and max_concurrency=%d"


def probe_prompt() -> str:
    """A latency probe's prompt: :data:`PROBE_PROMPT` and a nonce, so that no cache in front of the server has seen it.

    Examples
    --------
    >>> first, second = probe_prompt(), probe_prompt()
    >>> first != second and is_probe(first) and is_probe(second) and not is_probe("Count from 1 to 5.")
    True
    """
    return f"{PROBE_PROMPT} (Request {secrets.token_hex(8)}.)"


def is_probe(text: str) -> bool:
    """Whether ``text`` is a latency probe's prompt (:func:`probe_prompt`): what a stub server tells apart."""
    return text.startswith(PROBE_PROMPT)


def _seconds(value: float) -> str:
    """Seconds as a message shows them: two decimals below 1 s, one below 10 s, none above."""
    return f"{value:.2f}" if value < 1 else f"{value:.1f}" if value < 10 else f"{value:.0f}"


def _rounded(seconds: float | None) -> float | None:
    """Seconds as the run's record keeps them: four decimals."""
    return None if seconds is None else round(seconds, 4)


def _read_seconds(value: Any) -> float | None:
    return None if value is None else float(value)


#: Measured seconds, written to four decimals (a probe not sent is null).
_SECONDS = via(_rounded, float)
_SECONDS_OR_NONE = via(_rounded, _read_seconds)


@dataclass(frozen=True, slots=True)
class Latency(Codec):
    """What the preflight measured: a short request alone, and :data:`N_AT_ONCE` of them sent together.

    ``to_dict()`` (the run's record of it) writes the seconds to four decimals, and ``parallel``.

    Examples
    --------
    >>> serial = Latency(seconds=0.5, n_tokens=16, seconds_at_once=1.5)
    >>> serial.parallel, serial.answer_seconds(64)
    (1, 2.0)
    >>> Latency(seconds=0.5, n_tokens=16, seconds_at_once=0.6).parallel
    3
    """

    seconds: float = field(metadata=_SECONDS)
    n_tokens: int
    seconds_at_once: float | None = field(default=None, metadata=_SECONDS_OR_NONE)
    n_at_once: int = N_AT_ONCE

    _codec_keys: ClassVar[tuple[str, ...]] = ("seconds", "n_tokens", "n_at_once", "seconds_at_once", "parallel")

    @property
    def parallel(self) -> int | None:
        """Requests the server runs at once, as far as the probe tells (None when not measured)."""
        if self.seconds_at_once is None:
            return None
        ratio = self.seconds_at_once / max(self.seconds, 1e-9)
        if ratio < _RATIO_SERIAL:
            return self.n_at_once
        return min(self.n_at_once - 1, max(1, round(self.n_at_once / ratio)))

    def answer_seconds(self, max_new_tokens: int) -> float:
        """The time of an answer of ``max_new_tokens`` alone: the probe's time, scaled by tokens (never less)."""
        return self.seconds * max(1.0, max_new_tokens / max(self.n_tokens, 1))


@dataclass(frozen=True, slots=True)
class Tuning:
    """The timeout and concurrency a run uses, and the wait of one request they expect (seconds)."""

    timeout: float
    max_concurrency: int
    wait: float
    answer: float
    timeout_chosen: bool
    concurrency_chosen: bool


def _round_up(seconds: float) -> float:
    """Whole seconds from 10 s, tenths below."""
    return float(math.ceil(seconds)) if seconds >= 10 else math.ceil(seconds * 10) / 10


def tune(
    latency: Latency,
    *,
    max_new_tokens: int,
    timeout: float | None,
    max_concurrency: int | None,
    n_replicas: int,
    default_timeout: float,
    default_concurrency: int,
) -> Tuning:
    """Choose what the user left out (None): the concurrency first, then a timeout that covers its wait.

    Examples
    --------
    >>> serial = Latency(seconds=2.0, n_tokens=16, seconds_at_once=6.0)  # a CPU server, one at a time
    >>> t = tune(serial, max_new_tokens=40, timeout=None, max_concurrency=None, n_replicas=1, default_timeout=30,
    ...          default_concurrency=8)
    >>> t.max_concurrency, t.timeout
    (2, 30.0)
    >>> tune(serial, max_new_tokens=40, timeout=10, max_concurrency=8, n_replicas=1, default_timeout=30,
    ...      default_concurrency=8).timeout
    10.0
    """
    answer = latency.answer_seconds(max_new_tokens)
    parallel = latency.parallel
    reference = default_timeout if timeout is None else timeout
    concurrency = default_concurrency if max_concurrency is None else max_concurrency
    if max_concurrency is None and parallel is not None and parallel < latency.n_at_once:
        queued = answer * math.ceil(math.ceil(concurrency / n_replicas) / parallel)
        if SAFETY * queued > reference:  # requests would queue past the timeout, and more in flight gains nothing
            concurrency = min(concurrency, (parallel + 1) * n_replicas)
    wait = answer * math.ceil(math.ceil(concurrency / n_replicas) / (parallel or 1))
    chosen = float(timeout if timeout is not None else max(default_timeout, _round_up(SAFETY * wait)))
    return Tuning(chosen, concurrency, wait, answer, timeout is None, max_concurrency is None)


def choose(
    latency: Latency,
    *,
    url: str,
    max_new_tokens: int,
    timeout: float | None,
    max_concurrency: int | None,
    n_replicas: int,
    default_timeout: float,
    default_concurrency: int,
) -> tuple[Tuning, dict[str, Any]]:
    """:func:`tune`, logged (INFO: what was measured and chosen; a warning when requests will time out), and its record.

    The record (``measured``, ``max_new_tokens``, ``timeout``, ``max_concurrency``, and which of
    the two were ``chosen`` rather than set) is what a run keeps of it; never part of a fingerprint.
    """
    tuning = tune(
        latency,
        max_new_tokens=max_new_tokens,
        timeout=timeout,
        max_concurrency=max_concurrency,
        n_replicas=n_replicas,
        default_timeout=default_timeout,
        default_concurrency=default_concurrency,
    )
    info, warning = _lines(latency, tuning, url=url, max_new_tokens=max_new_tokens)
    _LOG.info(*info)
    if warning is not None:
        _LOG.warning(warning)
    chosen = [name for name, yes in (("timeout", tuning.timeout_chosen), ("max_concurrency", tuning.concurrency_chosen)) if yes]
    return tuning, {
        "measured": latency.to_dict(),
        "max_new_tokens": max_new_tokens,
        "timeout": tuning.timeout,
        "max_concurrency": tuning.max_concurrency,
        "chosen": chosen,
    }


def _lines(latency: Latency, tuning: Tuning, *, url: str, max_new_tokens: int) -> tuple[tuple[Any, ...], str | None]:
    """The info log line (format and arguments) of what was measured and chosen, and a warning when it falls short."""
    at_once = (
        ""
        if latency.seconds_at_once is None
        else _MSG_AT_ONCE % (latency.n_at_once, _seconds(latency.seconds_at_once), latency.parallel)
    )
    how = ", ".join(
        f"{name} {'measured' if chosen else 'as set'}"
        for name, chosen in (("timeout", tuning.timeout_chosen), ("max_concurrency", tuning.concurrency_chosen))
    )
    info = (
        _MSG_MEASURED,
        url,
        latency.n_tokens,
        _seconds(latency.seconds),
        at_once,
        max_new_tokens,
        f"{tuning.timeout:g}",
        tuning.max_concurrency,
        how,
    )
    warning = None
    if tuning.wait > tuning.timeout:
        warning = _MSG_SLOW.format(
            n=max_new_tokens,
            answer=_seconds(tuning.answer),
            wait=_seconds(tuning.wait),
            c=tuning.max_concurrency,
            timeout=tuning.timeout,
        )
    return info, warning


def timeout_hint(timeout: float, answer: float | None, n_timeouts: int = 1) -> str:
    """What a timed-out request's error adds: which option to raise, with the measured latency when there is one.

    ``n_timeouts`` is how many of the item's tries timed out: the ``k``-th waited
    ``timeout * 2 ** (k - 1)`` seconds, and the hint names those waits.

    Examples
    --------
    >>> timeout_hint(30, 4.25)
    'requests time out after 30 s: raise timeout= (measured latency 4.2 s an answer alone) or lower max_concurrency'
    >>> timeout_hint(30, None)
    'requests time out after 30 s: raise timeout= or lower max_concurrency'
    >>> timeout_hint(3, None, 4)
    'its 4 tries that timed out waited 3, 6, 12, 24 s (timeout=3 s, doubled on each retry): raise timeout= or lower max_concurrency'
    >>> timeout_hint(3, None, 6).split(" (")[0]
    'its 6 tries that timed out waited 3, 6, ..., 96 s'
    """
    measured = "" if answer is None else f" (measured latency {_seconds(answer)} s an answer alone)"
    if n_timeouts <= 1:
        return _MSG_HINT.format(timeout=timeout, measured=measured)
    waits = [f"{timeout * 2**k:g}" for k in range(n_timeouts)]
    if len(waits) > _MAX_WAITS_NAMED:
        waits = [*waits[:2], "...", waits[-1]]
    return _MSG_HINT_RETRIED.format(n=n_timeouts, waits=", ".join(waits), timeout=timeout, measured=measured)


def _tokens(body: str, text: str) -> int:
    """Tokens a probe's answer has: ``usage.completion_tokens``, else all of them when cut, else ~4 characters each."""
    try:
        data = json.loads(body)
        usage = data.get("usage") or {}
        n = usage.get("completion_tokens")
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return n
        if data["choices"][0].get("finish_reason") == "length":
            return PROBE_TOKENS
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        pass
    return max(1, min(PROBE_TOKENS, math.ceil(len(text) / 4)))


def measure_latency(
    url: str,
    payload: Callable[[str], Mapping[str, Any]],
    *,
    public: str,
    mode: str,
    headers: Mapping[str, str],
    verify: Any,
    timeout: float,
    max_concurrency: int,
    scrub: Callable[[str], str],
) -> Latency | None:
    """Time a probe request (``payload(prompt)`` to ``url``) alone, then :data:`N_AT_ONCE` at once when that may matter.

    Every probe is a new :func:`probe_prompt` (a nonce in it), so that a caching gateway answers none.

    The requests at once are skipped when ``max_concurrency`` is 1, or when the server is so
    fast that even answers of 512 tokens, ``max_concurrency`` of them one after another, would
    stay well within ``timeout`` (a local GPU server: two requests in all). Each probe waits up
    to :data:`PROBE_TIMEOUT` seconds (or ``timeout`` when longer).

    Returns
    -------
    Latency or None
        What was measured; None when nothing could be (an error, a timeout, an unusable reply:
        logged as a warning that keeps ``timeout`` and ``max_concurrency``).
    """
    _LOG.info("openai: measuring the latency of %s (requests of %d tokens)", public, PROBE_TOKENS)
    measured = _measure(
        url,
        payload,
        mode=mode,
        headers=headers,
        verify=verify,
        timeout=max(PROBE_TIMEOUT, timeout),
        max_concurrency=max_concurrency,
        reference_timeout=timeout,
        scrub=scrub,
    )
    if isinstance(measured, str):
        _LOG.warning(_MSG_UNMEASURED, public, measured, timeout, max_concurrency)
        return None
    return measured


def _measure(
    url: str,
    payload: Callable[[str], Mapping[str, Any]],
    *,
    mode: str,
    headers: Mapping[str, str],
    verify: Any,
    timeout: float,
    max_concurrency: int,
    reference_timeout: float,
    scrub: Callable[[str], str],
) -> Latency | str:
    """:func:`measure_latency`'s requests: what was measured, or why nothing could be.

    Returns
    -------
    Latency or str
        What was measured, or why nothing could be (an error, a timeout, an unusable reply).
    """
    import httpx

    def once(client: Any) -> tuple[float, int]:
        started = time.perf_counter()
        reply = client.post(url, json=dict(payload(probe_prompt())), timeout=timeout)
        seconds = time.perf_counter() - started
        if reply.status_code >= 300:
            raise ValueError(f"HTTP {reply.status_code}: {scrub(reply.text)[:100]}")
        answer = parse_reply(reply.text, url="", mode=mode, n_attempts=1, scrub=scrub)
        if isinstance(answer, BadResponse):
            raise ValueError(str(answer).removeprefix(": "))
        return seconds, _tokens(reply.text, answer)

    limits = httpx.Limits(max_connections=N_AT_ONCE, max_keepalive_connections=N_AT_ONCE)
    try:
        with httpx.Client(headers=dict(headers), verify=verify, limits=limits) as client:
            first, _ = once(client)  # may load the model: the next one is the measure
            second, n_tokens = once(client)
            latency = Latency(min(first, second), n_tokens)
            queued = SAFETY * latency.answer_seconds(_LONG_ANSWER) * max_concurrency
            if max_concurrency == 1 or queued <= reference_timeout:
                return latency
            with ThreadPoolExecutor(N_AT_ONCE, thread_name_prefix="fairtalk-probe") as pool:
                together = list(pool.map(lambda _: once(client)[0], range(N_AT_ONCE)))
            return Latency(latency.seconds, n_tokens, max(together))
    except httpx.TimeoutException:
        return f"no answer to a {PROBE_TOKENS}-token request within {timeout:g} s"
    except (httpx.TransportError, ValueError) as exc:
        return scrub(str(exc) or type(exc).__name__)
