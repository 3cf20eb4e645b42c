"""Whether an inspect sample's output holds the model's answer: :func:`why_lost` (it imports no optional package at run time)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspect_ai.model import ModelOutput

__all__ = ["WHY_ERROR_OUTPUT", "WHY_NO_OUTPUT", "why_lost"]

#: Why a sample whose model gave no output has no answer: it failed, or a limit stopped it before the model answered.
WHY_NO_OUTPUT = "the sample failed: the model gave no output"
#: Why a sample whose output is a provider's stand-in for an error has no answer (``{error}``: the error).
WHY_ERROR_OUTPUT = "the model's request failed: {error}"


def why_lost(output: ModelOutput) -> str | None:
    """Why a sample's ``output`` holds no answer of the model's (its side is lost), or None: it holds one, maybe ``""``.

    - no output (no choice): the sample failed (the model raised; inspect scores it under
      ``score_on_error``), or a limit stopped it before the model answered;
    - an output with an ``error``: an inspect provider's stand-in for a request the model's API
      refused (the prompt too long, a content filter's block), whose text is the error's or
      inspect's, not the model's; the audit counts such a request (an HTTP 4xx) as a lost side too.

    Any other output is an answer, an empty completion too: the text ``""``, an empty answer.
    """
    if not output.choices:
        return WHY_NO_OUTPUT
    if output.error:
        return WHY_ERROR_OUTPUT.format(error=output.error)
    return None
