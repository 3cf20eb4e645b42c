"""``openai:URL#MODEL``: any OpenAI-compatible ``/chat/completions`` server (vLLM, Ollama, OpenAI); ``mode=completion`` uses ``/completions``.

``openai:MODEL?base_url=URL`` (the way OpenAI's own clients name a server) is the same model, with
the same fingerprint, so both forms share a run store.

Each context is sent as one user message, not streamed (``"stream": false``). ``max_concurrency``
requests are in flight all the time (a new one starts as soon as one finishes, and each answer is
handed on as it arrives), each slot on its own HTTP client kept for the whole call; closing the
stream early cancels the requests in flight. The ``timeout`` doubles on each retry of a timed-out
request, so that a loaded server is not made to do the same work twice. 429, 5xx, timeouts,
connection errors and unusable 200s (not JSON, no ``choices``) are retried with exponential
backoff and jitter, on two budgets (a server's ``Retry-After`` is waited when longer than the
backoff, never shorter, so ``Retry-After: 0`` does not make a retry go at once; a wait asked for
longer than ``max_backoff`` and ``retry_seconds`` is cut to the longer of the two, with a warning
naming the server's wait):

- a server that cannot take the request (connection refused, reset or closed without an answer,
  429, 502, 503, 504: a restart, a proxy that restarts, a busy server) is retried for up to
  ``retry_seconds`` (60 s) from the request's first such failure, while the server has not been
  unavailable for longer: a restart shorter than that loses no item, and these retries draw on
  no count (:class:`~fairtalk.models._streaming.Outage`);
- any other retry (a 500, a timeout, an unusable answer, and one past ``retry_seconds``) draws on
  ``retry_budget``, the retries of the whole call (default 10% of the items plus 20), and on
  ``max_retries``, the item's own, so that a server failing on some items is not sent them again
  and again.

A refusal (``"content": null`` with a ``"refusal"`` text, OpenAI's way of declining) is the
model's answer, not an unusable one: its text is recorded as the response, never retried, and
``refusal_rate`` reads it like any other answer.

After that the item fails alone: :class:`~fairtalk.errors.RateLimited` for 429,
:class:`~fairtalk.errors.BadResponse` for an unusable answer (naming what was wrong),
:class:`~fairtalk.errors.TransportError` for the rest. Another 4xx is a BadResponse at once (not
retried).

Replicas of one deployment: ``openai:URL1,URL2#MODEL`` spreads the requests over the URLs by
least outstanding requests; a replica that fails three times in a row (a transport error, a 5xx,
an unusable 200) is skipped for 30 s, and each failed item is retried on another replica within
the budget. A replica that fails the preflight (down, refusing the key, serving another model) is
left out of the run with a warning (``skipped_replicas``); only when none passes is that an error.
The fingerprint (the run store's key) names the first URL: the replicas serve one model.

Latency: when ``timeout`` or ``max_concurrency`` is left out, the preflight times a few short
requests and chooses them from what it measured (see :mod:`fairtalk.models.openai._latency`;
logged at INFO, kept in ``tuning``): a CPU server answering one request at a time gets fewer in
flight and a longer timeout, instead of timeouts that spend the retry budget. A timed-out request's
error says which option to raise. Without a preflight the defaults hold: 30 s and 8 in flight.

The API key is read from the environment variable named by ``api_key_env`` and sent
as ``Authorization: Bearer``; without ``api_key_env``, ``OPENAI_API_KEY`` is sent when it is
set, and a named variable that is unset is an error. The key is kept out of ``repr``, the
fingerprint and every error message (any echo of it in a server reply is masked).

Options (``openai:URL#MODEL?timeout=60&max_concurrency=16`` or ``--model-arg KEY=VALUE``)
are the fields of :class:`OpenAIOptions`.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from fairtalk.errors import (
    BadResponse,
    FairtalkError,
    RateLimited,
    ResponderError,
    SpecError,
    TransportError,
)
from fairtalk.models._base import (
    DecodingSettings,
    ModelFactory,
    Responder,
    Stream,
    check_batch,
    collect_stream,
    keep_answered,
    make_fingerprint,
    raise_first_error,
)
from fairtalk.models._credentials import url_secrets
from fairtalk.models._spec import build_options
from fairtalk.models._streaming import (
    Endpoints,
    InFlight,
    Outage,
    RetryBudget,
    RetryCounts,
    TLSContext,
    retry_after,
    stream_results,
)
from fairtalk.models.openai._latency import PROBE_TOKENS, Latency, choose, measure_latency, timeout_hint
from fairtalk.models.openai._options import MSG_SPEC, MSG_TWO_URLS, OpenAIOptions, server_and_model
from fairtalk.models.openai._replicas import PREFLIGHT_TIMEOUT, parse_reply, usable_replicas
from fairtalk.models.openai._urls import endpoint, public_url, shown_url
from fairtalk.records import chat_messages, transcript

__all__ = ["OpenAIOptions", "OpenAIResponder"]

_MSG_MISSING_HTTPX = "the openai: adapter needs httpx: pip install httpx ({error})"
_MSG_BEAMS = "openai: servers do not take num_beams > 1"
_MSG_STATUS = "{url}: HTTP {status} after {n_attempts} attempt(s): {body}"
_MSG_TRANSPORT = "{url}: {kind} after {n_attempts} attempt(s): {error}"
#: What a 401 or 403 on a request adds (the preflight's ``/models`` may pass without a key).
_MSG_REFUSED = "; the server refused the request: check the API key ({key})"
_MSG_KEY_SENT = "the key in ${name} was sent"
_MSG_KEY_NONE = "none was sent: set ${name}, or name the variable with api_key_env="
_MSG_BUDGET = "{error}; not retried: the retry budget of this call (retry_budget={total}) is spent"
_MSG_BUDGET_LOG = "openai: the retry budget of this call (retry_budget=%d) is spent; failures are no longer retried%s"
_MSG_DOWN_BUDGET = (
    "{error}; not retried: unavailable for {seconds:.0f} s, past retry_seconds={window:g}, and the retry budget "
    "of this call (retry_budget={total}) is spent"
)
_MSG_DOWN_LOG = (
    "openai: %s cannot take requests (%s); they are retried for up to retry_seconds=%g s each time (said once a run; "
    "the summary counts these retries)"
)
_MSG_UP_LOG = "openai: %s answers again after %.1f s"
_MSG_LONG_WAIT_LOG = (
    "openai: %s asks to wait %g s before a retry (Retry-After); fairtalk waits %g s at most, the longer of max_backoff "
    "and retry_seconds (raise retry_seconds to wait longer; said once a run)"
)
#: Statuses of a server that cannot take a request now (busy, restarting, its proxy's backend down): retried by time.
_UNAVAILABLE = frozenset({429, 502, 503, 504})
#: ``timeout`` and ``max_concurrency`` when the user leaves them out and no preflight measured the server.
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_CONCURRENCY = 8
_MSG_KEY_UNSET = "openai: api_key_env={name} names an environment variable that is not set"
_MSG_BOTH_FORMS = "give the options as an options object or as keywords, not both"
_MASK = "***"
_DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_LOG = logging.getLogger(__name__)


class OpenAIResponder(Responder, ModelFactory[OpenAIOptions]):
    """Chat-completions client with concurrency limit, timeouts and retries.

    Parameters
    ----------
    url : str
        Base URL up to ``/v1`` (``/chat/completions`` is appended).
    model : str
        Model name sent in each request.
    options : OpenAIOptions, optional
        Every option below as one object (or give them as keywords).
    api_key_env : str, optional
        Environment variable holding the key (it must be set). None: ``OPENAI_API_KEY`` when
        set, else no Authorization header.
    max_concurrency, timeout, max_retries : int, float, int
        Requests in flight, seconds per request, counted retries per item. ``max_concurrency``
        and ``timeout`` left out (None) are chosen from the latency the preflight measures (8 and
        30 s without one).
    retry_budget : int, optional
        Counted retries for a whole call, all items together (None: 10% of the items plus 20).
    retry_seconds : float
        How long a request the server cannot take (connection refused, reset or closed; 429, 502,
        503, 504) is retried, uncounted, from its first such failure (60 s; 0: count every retry).
    backoff, max_backoff : float
        First retry delay and its cap, in seconds (doubling, times a jitter in [0.5, 1.5)). A
        server's ``Retry-After`` longer than that delay is waited instead, up to the longer of
        ``max_backoff`` and ``retry_seconds`` (:attr:`longest_wait`; cut with a warning).
    system_prompt : str, optional
        Sent as a system message before each context; part of the fingerprint.
    mode : {"chat", "completion"}
        ``chat`` (default): each context is a user turn of ``/chat/completions``. ``completion``:
        the context is a prefix to continue, sent as ``prompt`` to ``/completions`` (paper 004's
        way; ``prompts generate`` uses it by default).
    """

    in_flight: InFlight
    max_concurrency: int

    def __init__(self, url: str, model: str, options: OpenAIOptions | None = None, **kwargs: Any) -> None:
        given_url = url
        urls = [u.strip() for u in url.split(",")]
        for one in urls:
            if not one.lower().startswith(("http://", "https://")) or not model:  # a scheme is case-insensitive
                raise SpecError(MSG_SPEC.format(spec=f"openai:{shown_url(one)}#{model}"))
        url = urls[0]
        if options is None:
            options = build_options(OpenAIOptions, kwargs, spec="openai:")
        elif kwargs:
            raise SpecError(_MSG_BOTH_FORMS)
        if options.base_url is not None and options.base_url != given_url:
            raise SpecError(MSG_TWO_URLS.format(spec=f"openai:{shown_url(given_url)}#{model}"))
        self.options = options
        self.url = url.rstrip("/")
        self.urls = tuple(u.rstrip("/") for u in urls)
        self.public_url = public_url(url)
        self.public_urls = tuple(public_url(u) for u in urls)
        #: the replicas requests go to (all until :meth:`preflight` leaves out the ones that fail it), and the
        #: ones left out: public URL -> why
        self.in_use: tuple[int, ...] = tuple(range(len(urls)))
        self.skipped_replicas: Mapping[str, str] = MappingProxyType({})
        #: requests in flight now and the most at once (the generation summary reports it against max_concurrency)
        self.in_flight = InFlight()
        self.model = self.requested_model = model
        #: the model names the server's replies gave (``model``), with how many answers, over every call
        self.served_models: dict[str, int] = {}
        self.api_key_env = options.api_key_env or _DEFAULT_KEY_ENV
        self.max_concurrency = DEFAULT_MAX_CONCURRENCY if options.max_concurrency is None else options.max_concurrency
        self.timeout = DEFAULT_TIMEOUT if options.timeout is None else options.timeout
        #: what the preflight measured (None: nothing), and what was chosen from it for the last call (a record for
        #: the run: never part of the fingerprint)
        self.latency: Latency | None = None
        self.tuning: Mapping[str, Any] = MappingProxyType({})
        self._answer: float | None = None  # the measured seconds of an answer alone, for a timed-out request's error
        self.max_retries = options.max_retries
        self.retry_budget = options.retry_budget
        self.retry_seconds = options.retry_seconds
        #: the last call's time budget for a server that cannot take requests (its retries: ``outage.n_retries``)
        self.outage = Outage(self.retry_seconds)
        #: the last call's retry budget (``n_used`` of ``total`` retries, ``n_refused`` failures not retried), and the
        #: same summed over every call (``retry_counts``: a generation summary reports the difference over its run)
        self.retries, self.retry_counts = RetryBudget(0), RetryCounts()
        self._said_down: set[tuple[str, str]] = set()  # (replica, why) already warned of: once a run, not per outage
        self._said_long_wait = False  # a Retry-After longer than longest_wait already warned of (once a run)
        self.tls = TLSContext()  # one for every client of this adapter, the preflight's too
        self.backoff = options.backoff
        self.max_backoff = options.max_backoff
        self.system_prompt = options.system_prompt
        self.mode = options.mode
        self.__key = os.environ.get(self.api_key_env) or None
        if options.api_key_env is not None and self.__key is None:
            raise SpecError(_MSG_KEY_UNSET.format(name=options.api_key_env))

    @classmethod
    def options_for(cls, target: str) -> type[OpenAIOptions]:
        """The options this adapter takes."""
        return OpenAIOptions

    @classmethod
    def from_spec(cls, target: str, options: OpenAIOptions | None = None) -> OpenAIResponder:
        """Build from ``URL#MODEL``, or ``MODEL`` with the ``base_url`` option (what follows ``openai:``)."""
        options = options or OpenAIOptions()
        return cls(*server_and_model(target, options.base_url), options=options)

    @property
    def fingerprint(self) -> str:
        """``openai:URL#MODEL`` (credentials stripped from the URL) plus the system prompt and a non-chat mode."""
        mode = None if self.mode == "chat" else self.mode
        return make_fingerprint("openai", f"{self.public_url}#{self.model}", system_prompt=self.system_prompt, mode=mode)

    def __repr__(self) -> str:
        return f"OpenAIResponder(url={self.public_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r})"

    def _scrub(self, text: str, limit: int = 200) -> str:
        """Mask the key (and the raw URL's credentials: user:password, a key in its query) in text bound for a message."""
        if self.__key:
            text = text.replace(self.__key, _MASK)
        for url in self.urls:
            secrets, parts = url_secrets(url), urlsplit(url)
            if parts.username or parts.password:
                secrets = (url, *secrets, base64.b64encode(secrets[0].encode()).decode())  # Basic auth, as sent
            for secret in sorted(secrets, key=len, reverse=True):
                text = text.replace(secret, _MASK)
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def preflight(self) -> None:
        """Ask each replica for its models once, before any work: skip the ones that cannot answer, fail when none can.

        A server that does not list its models (no ``GET /models``, or another reply shape) is
        not an error: its first answer will tell. A replica that is down, refuses the key or
        lacks the model is left out of the following calls, named with its reason in
        ``skipped_replicas`` and a logged warning, while another one passes.

        Raises
        ------
        TransportError
            No replica can be reached (connection refused, a timeout, a DNS failure).
        ResponderError
            The server refused the request (HTTP 401 or 403), or the replicas fail in different ways.
        SpecError
            The servers list their models and the model asked for is not among them.
        """
        headers = {"Authorization": f"Bearer {self.__key}"} if self.__key else {}
        active, skipped = usable_replicas(
            self.urls,
            self.public_urls,
            model=self.model,
            headers=headers,
            timeout=min(self.timeout, PREFLIGHT_TIMEOUT),
            verify=self.tls.get(),
            scrub=self._scrub,
        )
        self.in_use, self.skipped_replicas = active, MappingProxyType(skipped)
        if self.options.timeout is None or self.options.max_concurrency is None:
            self._measure(headers)

    def _measure(self, headers: Mapping[str, str]) -> None:
        """Time a few short requests on the first usable replica (:func:`measure_latency`)."""
        path = "/completions" if self.mode == "completion" else "/chat/completions"
        self.tuning = MappingProxyType({})
        set_timeout, set_concurrency = self.options.timeout, self.options.max_concurrency  # not a previous call's choice
        self.latency = measure_latency(
            endpoint(self.urls[self.in_use[0]], path),
            lambda prompt: self._payload(prompt, DecodingSettings(max_new_tokens=PROBE_TOKENS), 0),  # each probe: a new nonce
            public=self.public_urls[self.in_use[0]],
            mode=self.mode,
            headers=headers,
            verify=self.tls.get(),
            timeout=set_timeout or DEFAULT_TIMEOUT,
            max_concurrency=set_concurrency or DEFAULT_MAX_CONCURRENCY,
            scrub=self._scrub,
        )

    def _tune(self, max_new_tokens: int) -> None:
        """Choose the timeout and concurrency left out, for answers of ``max_new_tokens`` (once per length)."""
        if self.latency is not None and self.tuning.get("max_new_tokens") != max_new_tokens:
            tuning, record = choose(
                self.latency,
                url=self.public_urls[self.in_use[0]],
                max_new_tokens=max_new_tokens,
                timeout=self.options.timeout,
                max_concurrency=self.options.max_concurrency,
                n_replicas=len(self.in_use),
                default_timeout=DEFAULT_TIMEOUT,
                default_concurrency=DEFAULT_MAX_CONCURRENCY,
            )
            self.timeout, self.max_concurrency, self._answer = tuning.timeout, tuning.max_concurrency, tuning.answer
            self.tuning = MappingProxyType(record)

    def _payload(self, context: str, settings: DecodingSettings, seed: int) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": settings.max_new_tokens,
            "seed": seed,
            "stream": False,
        }  # one JSON reply per request, said explicitly
        if self.mode == "completion":  # continue the text as it is (a prefix), no chat turn around it
            text = transcript(context)
            payload["prompt"] = text if self.system_prompt is None else f"{self.system_prompt}\n\n{text}"
        else:  # a multi-turn context goes as the conversation it is
            payload["messages"] = chat_messages(context, self.system_prompt)
        if settings.do_sample:
            payload["temperature"] = settings.temperature
            if settings.top_p is not None:
                payload["top_p"] = settings.top_p
            if settings.top_k is not None:
                payload["top_k"] = settings.top_k  # vLLM/Ollama extension
        else:
            payload["temperature"] = 0.0
        if settings.stop:
            payload["stop"] = list(settings.stop)
        if settings.repetition_penalty is not None:  # vLLM and TGI read the first name, llama.cpp servers the second
            payload["repetition_penalty"] = payload["repeat_penalty"] = settings.repetition_penalty
        return payload

    def _delay(self, attempt: int) -> float:
        """The wait before retry ``attempt + 1``: ``backoff`` doubling to ``max_backoff``, times a jitter in [0.5, 1.5)."""
        return float(min(self.max_backoff, self.backoff * 2.0 ** min(attempt, 64)) * random.uniform(0.5, 1.5))

    def _retry_wait(self, step: int, failed: _Failed) -> float:
        """Seconds before the next try: the backoff (:meth:`_delay`), or the server's ``Retry-After`` when longer.

        A ``Retry-After`` of 0 (or a date past) never makes a retry go at once: a rate-limiting
        server is not flooded. A wait asked for longer than :meth:`longest_wait` is cut to it, with
        a warning (once a run) that names the server's wait and what to raise.
        """
        wait = self._delay(step)
        if failed.wait is None or failed.wait <= wait:
            return wait
        longest = self.longest_wait
        if failed.wait <= longest:
            return failed.wait
        if not self._said_long_wait:
            self._said_long_wait = True
            _LOG.warning(_MSG_LONG_WAIT_LOG, failed.url, failed.wait, longest)
        return longest

    @property
    def longest_wait(self) -> float:
        """The longest wait before one retry: ``max_backoff`` or ``retry_seconds``, the longer (a longer Retry-After is cut)."""
        return max(self.max_backoff, self.retry_seconds)

    async def _one(
        self, client: Any, endpoints: Endpoints, budget: RetryBudget, payload: dict[str, Any], replicas: Sequence[int]
    ) -> str | ResponderError:
        """One item: sent to the least busy healthy replica (``endpoints`` over ``replicas``, indices of ``urls``).

        Retried, on any replica, on 429, 5xx, timeouts, lost connections and 200s that are not a
        usable answer: on the time budget (``self.outage``) while the server cannot take it, else
        within the retry budget.
        """
        item = _Item()
        while True:
            outcome = await self._attempt(client, endpoints, payload, replicas, item)
            if not isinstance(outcome, _Failed):
                return outcome  # an answer, or a failure not worth retrying (a 4xx)
            refused = self._refuse_retry(budget, item, outcome)
            if refused is not None:
                return refused
            await asyncio.sleep(self._retry_wait(item.step, outcome))

    async def _attempt(
        self, client: Any, endpoints: Endpoints, payload: dict[str, Any], replicas: Sequence[int], item: _Item
    ) -> str | ResponderError | _Failed:
        """Send the item once: its answer, a failure not retried, or a failure that may be (:class:`_Failed`)."""
        import httpx

        path = "/completions" if self.mode == "completion" else "/chat/completions"
        item.n_sent += 1
        index = endpoints.acquire()
        url, public = self.urls[replicas[index]], self.public_urls[replicas[index]]
        ok = False
        self.in_flight.enter()
        try:
            reply = await client.post(endpoint(url, path), json=payload, timeout=self.timeout * 2**item.n_timeouts)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            timed_out = isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout)
            item.n_timeouts += timed_out  # the next try waits longer
            hint = f"; {timeout_hint(self.timeout, self._answer, item.n_timeouts)}" if timed_out else ""
            error = self._scrub(str(exc) or type(exc).__name__)
            lost = TransportError(
                _MSG_TRANSPORT.format(url=public, kind=type(exc).__name__, n_attempts=item.n_sent, error=error) + hint
            )
            return _Failed(lost, public, hint=hint, down=None if timed_out else type(exc).__name__)
        else:
            ok = reply.status_code < 500
            if reply.status_code < 300:
                answer = parse_reply(reply.text, url=public, mode=self.mode, n_attempts=item.n_sent, scrub=self._scrub)
                if not isinstance(answer, ResponderError):
                    self._answered(public)
                    if answer.model is not None:
                        self.served_models[answer.model] = self.served_models.get(answer.model, 0) + 1
                    return answer
                ok = False  # a replica answering garbage: try another (counts toward skipping it)
                return _Failed(answer, public)
            failure = self._status_failure(reply, public, item.n_sent)
            if isinstance(failure, BadResponse):
                return failure
            if reply.status_code not in _UNAVAILABLE:
                return _Failed(failure, public)
            wait = retry_after(reply.headers.get("retry-after"))  # a 429 says when; a 503 may
            return _Failed(failure, public, wait=wait, down=f"HTTP {reply.status_code}")
        finally:
            self.in_flight.leave()
            endpoints.release(index, ok=ok)

    def _answered(self, url: str) -> None:
        """An answer came: an outage of the server, if any, is over (logged)."""
        since = self.outage.since
        if self.outage.answered() and since is not None:
            _LOG.info(_MSG_UP_LOG, url, time.monotonic() - since)

    def _refuse_retry(self, budget: RetryBudget, item: _Item, failed: _Failed) -> ResponderError | None:
        """None when the failed item may be sent again (on the time budget or the retry budget), else its error."""
        now = time.monotonic()
        down_for = None
        if failed.down is not None:
            item.first_down = now if item.first_down is None else item.first_down
            since = self.outage.failed(now)
            if self.retry_seconds > 0 and (failed.url, failed.down) not in self._said_down:
                self._said_down.add((failed.url, failed.down))
                _LOG.warning(_MSG_DOWN_LOG, failed.url, failed.down, self.retry_seconds)
            if self.outage.allows(first=item.first_down, now=now):
                item.step, item.n_free = item.n_free, item.n_free + 1
                if self.retry_counts is not None:  # always set here (the base class allows none)
                    self.retry_counts.n_waited += 1
                return None
            down_for = now - min(item.first_down, since)
        if item.n_counted >= self.max_retries:
            return failed.error
        if not budget.take():
            if budget.n_refused == 1:
                _LOG.warning(_MSG_BUDGET_LOG, budget.total, failed.hint)
            if down_for is None:
                return type(failed.error)(_MSG_BUDGET.format(error=failed.error, total=budget.total))
            message = _MSG_DOWN_BUDGET.format(error=failed.error, seconds=down_for, window=self.retry_seconds, total=budget.total)
            return type(failed.error)(message)
        item.step, item.n_counted = item.n_counted, item.n_counted + 1  # counted retries back off from ``backoff`` again
        return None

    def _status_failure(self, reply: Any, url: str, n_attempts: int) -> ResponderError:
        """The error of a non-2xx reply: RateLimited (429), TransportError (5xx, retried), BadResponse (not retried)."""
        message = _MSG_STATUS.format(url=url, status=reply.status_code, n_attempts=n_attempts, body=self._scrub(reply.text))
        if reply.status_code in (401, 403):
            key = (_MSG_KEY_SENT if self.__key else _MSG_KEY_NONE).format(name=self.api_key_env)
            message += _MSG_REFUSED.format(key=key)
        if reply.status_code == 429:
            return RateLimited(message)
        return TransportError(message) if reply.status_code >= 500 else BadResponse(message)

    def respond_stream(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> Stream:
        """Yield ``(index, response or error)`` as each item finishes, ``max_concurrency`` requests in flight all the time.

        None comes when nothing finished for a quarter of a second (a caller may commit meanwhile).
        Each request slot keeps its own client (one shared pool scans every connection for every
        waiting request: a whole core at ~48 in flight). Closing the iterator cancels what is in flight;
        what stops it early (Ctrl-C while it waits, :func:`~fairtalk.models.close_stream`) then carries
        the answers back but not yet yielded, for the run store (:func:`~fairtalk.models.answered_before`).
        """
        check_batch(contexts, seeds)
        if settings.num_beams > 1:
            raise SpecError(_MSG_BEAMS)
        self._tune(settings.max_new_tokens)
        try:
            import httpx
        except ImportError as exc:
            raise FairtalkError(_MSG_MISSING_HTTPX.format(error=exc)) from exc
        headers = {"Authorization": f"Bearer {self.__key}"} if self.__key else {}
        replicas = self.in_use  # the replicas that passed the preflight (all without one)
        limits = httpx.Limits(max_connections=len(replicas), max_keepalive_connections=len(replicas))
        endpoints = Endpoints([self.urls[i] for i in replicas])
        total = len(contexts) // 10 + 20 if self.retry_budget is None else self.retry_budget
        budget = self.retries = RetryBudget(total, counts=self.retry_counts)
        self.outage = Outage(self.retry_seconds)
        tls = self.tls.get()  # shared by the clients
        clients: list[Any] = []
        idle: list[Any] = []  # at most max_concurrency requests at once, so at most that many clients

        async def teardown() -> None:
            for client in clients:
                await client.aclose()

        async def work(index: int) -> str | ResponderError:
            if not idle:
                clients.append(httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(self.timeout), limits=limits, verify=tls))
                idle.append(clients[-1])
            client = idle.pop()
            try:
                return await self._one(
                    client, endpoints, budget, self._payload(contexts[index], settings, seeds[index]), replicas
                )
            finally:
                idle.append(client)

        not_yielded: list[tuple[int, str | ResponderError]] = []
        try:
            yield from stream_results(
                len(contexts), work, max_concurrency=self.max_concurrency, teardown=teardown, not_yielded=not_yielded
            )
        except BaseException as stop:  # the answers back but not yet handed on go with it, for the run store to keep
            keep_answered(stop, self, contexts, settings, seeds, dict(not_yielded))
            raise

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Send every context; each item yields its response or its own error, in order."""
        return collect_stream(self.respond_stream(contexts, settings, seeds=seeds), len(contexts))

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Return one response per context; raise the first item's error if any failed."""
        return raise_first_error(self.respond_each(contexts, settings, seeds=seeds))


class _Item:
    """The retries of one item so far.

    Requests sent, retries on the time budget (``n_free``) and on the retry budget (``n_counted``),
    timeouts, when the server first could not take it, and the backoff step of the next wait (each
    budget's retries double their wait from ``backoff``).
    """

    __slots__ = ("first_down", "n_counted", "n_free", "n_sent", "n_timeouts", "step")

    def __init__(self) -> None:
        self.n_sent = 0
        self.n_free = 0
        self.n_counted = 0
        self.n_timeouts = 0
        self.step = 0
        self.first_down: float | None = None


@dataclass(frozen=True, slots=True)
class _Failed:
    """A request that failed in a way worth retrying: its error, where, and why the server could not take it (``down``).

    ``down`` (``ConnectError``, ``HTTP 503``) is None for a failure that draws on the retry budget
    at once (a 500, a timeout, an unusable answer); ``wait`` is the server's ``Retry-After``.
    """

    error: ResponderError
    url: str
    down: str | None = None
    hint: str = ""
    wait: float | None = None
