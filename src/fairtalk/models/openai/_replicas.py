"""What the ``openai:`` adapter makes of its replicas: the preflight that skips the failing ones, and each reply's answer.

Replicas exist for failover, so one that cannot be used at the start of a run (down, refusing
the key, serving another model) is left out of the run with a logged warning that names it
and why, and the run goes on with the others. Only when no replica can be used is that an
error, naming each replica's reason (one replica: its own error, as before).

:func:`parse_reply` reads the answer out of a 200's body, or says what is wrong with it (not
JSON, no ``choices``): the adapter retries such a reply on another replica, within its budget.
A refusal (``"content": null`` with a ``"refusal"`` text) is an answer, not a broken reply.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fairtalk.errors import BadResponse, FairtalkError, ResponderError, SpecError, TransportError
from fairtalk.models._base import Reply
from fairtalk.models._finish_reasons import normal_finish_reason
from fairtalk.models.openai._urls import endpoint

__all__ = ["PREFLIGHT_TIMEOUT", "check_replica", "parse_reply", "usable_replicas"]

#: Longest wait for a replica's ``GET /models``, in seconds (or the adapter's ``timeout`` when shorter).
PREFLIGHT_TIMEOUT = 10.0
_MSG_UNREACHABLE = "{url}: cannot reach the server ({kind}: {error}); is it running, and is the URL right?"
_MSG_REFUSED = "{url}: the server refused the request (HTTP {status}); check the API key (api_key_env)"
_MSG_NOT_SERVED = "{url}: the server does not serve a model named {model!r}"
_MSG_NONE = "none of the {n} replicas can be used: {reasons}"
_MSG_JSON = "{url}: the reply is not valid JSON after {n_attempts} attempt(s): {body}"
_MSG_SHAPE = "{url}: the reply has no choices[0].{field} string after {n_attempts} attempt(s): {body}"
_MSG_SKIPPED = "openai: %d of %d replicas fail the preflight and are left out of this run: %s; going on with %s"
_LOG = logging.getLogger(__name__)


def check_replica(
    url: str,
    public: str,
    *,
    model: str,
    headers: Mapping[str, str],
    timeout: float,
    verify: Any,
    scrub: Callable[[str], str],
) -> None:
    """Ask one replica for its models; return when it can answer for ``model``.

    A server that does not list its models (no ``GET /models``, or another reply shape) passes:
    its first answer will tell.

    Raises
    ------
    TransportError
        The replica cannot be reached (connection refused, a timeout, a DNS failure).
    ResponderError
        The replica refused the request (HTTP 401 or 403).
    SpecError
        The replica lists its models and ``model`` is not among them.
    """
    import httpx

    try:
        reply = httpx.get(endpoint(url, "/models"), headers=dict(headers), timeout=timeout, verify=verify)
    except (httpx.TimeoutException, httpx.TransportError) as exc:
        raise TransportError(
            _MSG_UNREACHABLE.format(url=public, kind=type(exc).__name__, error=scrub(str(exc) or type(exc).__name__))
        ) from exc
    if reply.status_code in (401, 403):
        raise ResponderError(_MSG_REFUSED.format(url=public, status=reply.status_code))
    try:
        served = [str(m["id"]) for m in reply.json()["data"]] if reply.status_code < 300 else []
    except (ValueError, KeyError, TypeError):
        served = []
    if served and model not in served:
        raise SpecError(_MSG_NOT_SERVED.format(url=public, model=model), choices=served[:50], given=model)


def usable_replicas(
    urls: Sequence[str],
    publics: Sequence[str],
    *,
    model: str,
    headers: Mapping[str, str],
    timeout: float,
    verify: Any,
    scrub: Callable[[str], str],
) -> tuple[tuple[int, ...], dict[str, str]]:
    """Check every replica (:func:`check_replica`); the indices of the usable ones, and the skipped ones' reasons.

    Returns
    -------
    tuple of int, dict
        The replicas that passed, in order, and public URL -> reason for each one left out
        (also logged as one warning).

    Raises
    ------
    FairtalkError
        No replica can be used: with one replica its own error; with several, one error of
        their common kind (:class:`~fairtalk.errors.ResponderError` when they differ) that
        names each replica's reason.
    """
    failures: dict[int, FairtalkError] = {}
    for index, (url, public) in enumerate(zip(urls, publics)):
        try:
            check_replica(url, public, model=model, headers=headers, timeout=timeout, verify=verify, scrub=scrub)
        except (ResponderError, SpecError) as exc:
            failures[index] = exc
    if len(failures) == len(urls):
        errors = list(failures.values())
        if len(errors) == 1:
            raise errors[0]
        kinds = {type(error) for error in errors}
        kind = kinds.pop() if len(kinds) == 1 else ResponderError
        raise kind(_MSG_NONE.format(n=len(errors), reasons=" | ".join(map(str, errors)))) from errors[0]
    skipped = {publics[index]: str(error) for index, error in failures.items()}
    usable = tuple(index for index in range(len(urls)) if index not in failures)
    if skipped:
        _LOG.warning(
            _MSG_SKIPPED, len(skipped), len(urls), " | ".join(skipped.values()), ", ".join(publics[index] for index in usable)
        )
    return usable, skipped


def _content_or_refusal(message: Any) -> object:
    """A chat message's answer: its ``content``, or its ``refusal`` text when the content is null or blank.

    OpenAI's models answer a request they decline with ``"content": null`` and the words of the
    refusal in ``"refusal"``: that is the model's answer to the context (``refusal_rate``
    reads it like any other), not a broken reply to retry.
    """
    content, refusal = message["content"], message.get("refusal")
    if isinstance(refusal, str) and refusal.strip() and (content is None or (isinstance(content, str) and not content.strip())):
        return refusal
    return content


def parse_reply(body: str, *, url: str, mode: str, n_attempts: int, scrub: Callable[[str], str]) -> Reply | BadResponse:
    """The answer in a 200's ``body`` (``choices[0].message.content``, or ``.text`` in completion mode).

    A chat reply whose content is null (or blank) and that holds a ``refusal`` text (OpenAI's way
    of declining) is answered by that text: a refusal is the model's answer, recorded as the
    response and never retried, for ``refusal_rate`` to read like any other answer.

    Returns
    -------
    Reply or BadResponse
        The stripped answer with its ``finish_reason`` in fairtalk's vocabulary (``"stop"``,
        ``"length"`` or None; see :func:`~fairtalk.models._finish_reasons.normal_finish_reason`), or an
        error naming what is malformed (the body not JSON, or no answer string in it), the replica
        and the attempts so far.

    Examples
    --------
    >>> parse_reply('{"choices": [{"text": " a chef."}]}', url="u", mode="completion", n_attempts=1, scrub=str)
    'a chef.'
    >>> refused = {"choices": [{"message": {"content": None, "refusal": "I can't help with that."}}]}
    >>> parse_reply(json.dumps(refused), url="u", mode="chat", n_attempts=1, scrub=str)
    "I can't help with that."
    >>> str(parse_reply("{oops", url="http://a/v1", mode="chat", n_attempts=3, scrub=str))
    'http://a/v1: the reply is not valid JSON after 3 attempt(s): {oops'
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return BadResponse(_MSG_JSON.format(url=url, n_attempts=n_attempts, body=scrub(body)))
    try:
        choice = data["choices"][0]
        content = choice["text"] if mode == "completion" else _content_or_refusal(choice["message"])
    except (KeyError, IndexError, TypeError):
        content = None
    if not isinstance(content, str):
        field = "text" if mode == "completion" else "message.content"
        return BadResponse(_MSG_SHAPE.format(url=url, field=field, n_attempts=n_attempts, body=scrub(body)))
    served = data.get("model") if isinstance(data, dict) else None
    return Reply(content.strip(), normal_finish_reason(choice.get("finish_reason")), served if isinstance(served, str) else None)
