"""Why a model stopped, in one vocabulary on every path: ``"stop"``, ``"length"`` or None.

Servers and engines name the same two events differently: OpenAI and vLLM say ``"stop"`` and
``"length"``, others ``"eos"``, ``"end_turn"``, ``"stop_sequence"``, ``"max_tokens"`` or
``"MAX_TOKENS"``, and some send no reason at all. Every adapter that reports a reason passes it
through :func:`normal_finish_reason`, and ``score()`` reads stored reasons through it again (a
store or responses file written before, or by another tool), so ``"length"`` means one thing
everywhere: the answer is not whole, the token limit was reached without a natural end (or
fairtalk cut it to its 8 MiB record limit, stored as ``"record_limit"``: :data:`RECORD_LIMIT`). ``"stop"`` is a natural end (the
model's end token, a stop string, a tool call). None is unknown: no reason given, or one that is
neither (``"content_filter"``); such an answer counts as not cut off.

One difference cannot be read away: OpenAI-compatible servers (``transformers serve``, vLLM)
count the end token among ``max_tokens`` and check the limit first, so an answer whose end token
is exactly the limit-th token comes back ``"length"`` from them and ``"stop"`` from ``hf:`` and
``vllm:`` in process, which see the tokens. The reply holds nothing that tells the two apart.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["FINISH_REASONS", "LENGTH_REASONS", "RECORD_LIMIT", "STOP_REASONS", "normal_finish_reason"]

#: The vocabulary: a natural end, or the token limit.
FINISH_REASONS = ("stop", "length")
#: Values (lower-cased) that mean the model ended its answer itself.
STOP_REASONS = frozenset(
    {
        "stop",
        "eos",
        "eos_token",
        "end_turn",
        "end_of_turn",
        "stop_sequence",
        "stop_token",
        "stopped",
        "end",
        "finished",
        "tool_calls",
        "tool_use",
        "function_call",
    }
)
RECORD_LIMIT = "record_limit"
"""The finish reason fairtalk stores for an answer it cut to fit one JSONL record (8 MiB): cut off, as ``"length"``."""
#: Values (lower-cased) that mean the answer was cut off: by the token limit, or to fit a record (:data:`RECORD_LIMIT`).
LENGTH_REASONS = frozenset(
    {"length", "max_tokens", "max_length", "max_new_tokens", "max_output_tokens", "model_length", RECORD_LIMIT}
)


def normal_finish_reason(value: object) -> Literal["stop", "length"] | None:
    """``"stop"``, ``"length"`` or None (unknown) for any reported finish reason.

    Examples
    --------
    >>> [normal_finish_reason(v) for v in ("stop", "eos", "MAX_TOKENS", "length", "content_filter", "", None, 3)]
    ['stop', 'stop', 'length', 'length', None, None, None, None]
    """
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    if word in LENGTH_REASONS:
        return "length"
    if word in STOP_REASONS:
        return "stop"
    return None
