"""The options of the ``openai:`` adapter, validated once (:class:`OpenAIOptions`), and where its spec names the server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fairtalk.errors import SpecError
from fairtalk.models.openai._urls import shown_url

__all__ = ["MSG_SPEC", "MSG_TWO_URLS", "OpenAIOptions", "server_and_model"]

MSG_SPEC = (
    "malformed openai spec {spec!r} (expected openai:URL#MODEL, e.g. openai:http://127.0.0.1:8000/v1#my-model, "
    "or openai:MODEL?base_url=URL, e.g. openai:llama3?base_url=http://localhost:11434/v1)"
)
MSG_TWO_URLS = "openai: give the server URL once, before '#MODEL' or as base_url, not both (spec {spec!r})"

_MSG_RANGE = "openai: {name} must be {rule}, got {value!r}"
_MSG_KEY_ENV = (
    "openai: api_key_env must name the environment variable that holds the key, got {value!r} "
    "(leave the option out to send OPENAI_API_KEY when it is set)"
)


@dataclass(frozen=True, slots=True)
class OpenAIOptions:
    """Options of the ``openai:`` adapter (see :class:`~fairtalk.models.openai._responder.OpenAIResponder`).

    ``max_concurrency`` and ``timeout`` left out (None) are chosen from the latency the
    preflight measures (8 requests in flight and 30 s without a preflight); given, they are kept.
    ``base_url`` is the server's URL for the spec form ``openai:MODEL?base_url=URL`` (the same
    model as ``openai:URL#MODEL``, with the same fingerprint).

    Retries have two budgets. ``retry_seconds`` is a time: a request the server could not take
    (connection refused, reset or closed without an answer, HTTP 429, 502, 503, 504: a restart,
    a proxy restarting, a busy server) is retried with backoff for up to that many seconds from
    its first such failure, while the server has not been unavailable for longer; these retries
    draw on no count. Every other retry (a 500, a timeout, an unusable answer, and one past
    ``retry_seconds``) draws on ``retry_budget``, the retries of the whole call (None: 10% of the
    items plus 20), and on ``max_retries``, those of one item. ``retry_seconds=0`` counts them all.
    Each retry waits ``backoff`` doubling up to ``max_backoff`` (times a jitter), or a server's
    ``Retry-After`` when that is longer, up to the longer of ``max_backoff`` and ``retry_seconds``.
    """

    api_key_env: str | None = None
    max_concurrency: int | None = None
    timeout: float | None = None
    max_retries: int = 5
    retry_budget: int | None = None
    retry_seconds: float = 60.0
    backoff: float = 0.5
    max_backoff: float = 30.0
    system_prompt: str | None = None
    mode: Literal["chat", "completion"] = "chat"
    base_url: str | None = None

    def __post_init__(self) -> None:
        for name, ok, rule in (
            ("max_concurrency", self.max_concurrency is None or self.max_concurrency >= 1, ">= 1"),
            ("timeout", self.timeout is None or self.timeout > 0, "> 0"),
            ("max_retries", self.max_retries >= 0, ">= 0"),
            ("backoff", self.backoff >= 0, ">= 0"),
            ("retry_budget", self.retry_budget is None or self.retry_budget >= 0, ">= 0 (or left out)"),
            ("retry_seconds", 0 <= self.retry_seconds < float("inf"), "a finite number of seconds >= 0 (0: count every retry)"),
            ("max_backoff", self.max_backoff >= 0, ">= 0"),
        ):
            if not ok:
                raise SpecError(_MSG_RANGE.format(name=name, rule=rule, value=getattr(self, name)))
        if self.api_key_env is not None and not _is_variable_name(self.api_key_env):
            raise SpecError(_MSG_KEY_ENV.format(value=self.api_key_env))


def _is_variable_name(name: str) -> bool:
    """A name an environment variable can have: not empty, no ``=`` or NUL, no spaces, not the words none/null."""
    return bool(name) and name == name.strip() and not any(ch in name for ch in "=\0 \t") and name.lower() not in ("none", "null")


def server_and_model(target: str, base_url: str | None) -> tuple[str, str]:
    """The server URL(s) and the model name of ``openai:TARGET``: ``URL#MODEL``, or ``MODEL`` with ``base_url``.

    Examples
    --------
    >>> server_and_model("http://h:8000/v1#m", None), server_and_model("llama3.2:1b", "http://h:11434/v1")
    (('http://h:8000/v1', 'm'), ('http://h:11434/v1', 'llama3.2:1b'))
    """
    url, sep, model = target.rpartition("#")
    if base_url is not None:
        if sep:
            raise SpecError(MSG_TWO_URLS.format(spec=f"openai:{shown_url(target)}"))
        url, model = base_url, target
    if not url or not model:
        raise SpecError(MSG_SPEC.format(spec=f"openai:{shown_url(target)}"))
    return url, model
