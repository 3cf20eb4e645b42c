"""inspect_ai's model provider ``fairtalk/SPEC``: any fairtalk model spec as an inspect model (imports inspect_ai).

``inspect eval fairtalk/counterfactual --model fairtalk/python:bot.py:reply`` asks the model that
``fairtalk audit --model python:bot.py:reply`` would ask, through the same adapter: ``python:``,
``openai:URL#MODEL``, ``hf:``, ``replay:``, ``builtin:`` or a prefix a third party registered.
Inspect's ``-M key=value`` (``model_args=``) are the adapter's options, as ``--model-arg`` gives
them (``-M system_prompt=...``, ``-M device=cpu``). The conversation's turns, joined by newlines,
are the one context the model answers; inspect's generate config maps onto
:class:`~fairtalk.models.DecodingSettings` (greedy unless a temperature above 0 is set).

The provider counts no tokens (it reports no usage), so it needs no tokenizer download: with a
local model spec it runs offline, which inspect's own ``mockllm/model`` does not (it counts its
tokens with tiktoken). The entry point module :mod:`fairtalk.integrations._inspect` imports this
one, so inspect finds the provider by its name, ``fairtalk``.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import anyio
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, StopReason, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.models import DecodingSettings, Responder, finish_reason, hide_credentials, load_responder

try:  # inspect's command line prints a PrerequisiteError's message alone, without a traceback
    from inspect_ai._util.error import PrerequisiteError
except ImportError:  # a private class of inspect's: where it has moved, the error is a plain SpecError (with a traceback)

    class PrerequisiteError(Exception):  # type: ignore[no-redef]
        """Stands in for inspect's class of the same name."""


__all__ = ["FairtalkModelAPI", "InspectOptionError", "decoding_settings"]

_MSG_SYSTEM = (
    "fairtalk/{spec}: a system message is not passed on; give the system prompt as the adapter's option "
    "(-M system_prompt=TEXT, model_args={{'system_prompt': TEXT}})"
)
_MSG_SPEC = "fairtalk/{spec}: {error}"
_MSG_TOOLS = "fairtalk/{spec}: fairtalk's models answer text only; this task offers tools"
#: A fairtalk reply's ``finish_reason`` -> inspect's stop reason (anything else: ``"unknown"``).
_STOP_REASONS: dict[str | None, StopReason] = {"stop": "stop", "eos": "stop", "length": "max_tokens"}


def decoding_settings(config: GenerateConfig) -> DecodingSettings:
    """Inspect's generate config as fairtalk's decoding settings: sampled when the temperature is above 0, else greedy."""
    sampled = config.temperature is not None and config.temperature > 0
    fields: dict[str, Any] = {"do_sample": sampled}
    if sampled:
        fields["temperature"] = config.temperature
        if config.top_p is not None:
            fields["top_p"] = config.top_p
        if config.top_k is not None:
            fields["top_k"] = config.top_k
    if config.max_tokens is not None:
        fields["max_new_tokens"] = config.max_tokens
    if config.stop_seqs:
        fields["stop"] = tuple(config.stop_seqs)
    return DecodingSettings(**fields)


class InspectOptionError(SpecError, PrerequisiteError):
    """A bad option of fairtalk's in inspect (a model spec, ``-M``, ``-T``): a SpecError, printed by ``inspect eval`` as its message alone."""

    def __init__(self, message: str) -> None:
        SpecError.__init__(self, message)
        self.message = _Plain(message)


class _Plain(str):
    """A message that inspect's command line prints as it reads.

    inspect prints a PrerequisiteError's message through rich, formatted into markup
    (``print(f"{exc.message}")``), which reads ``[...]`` as styles and ``:name:`` as emoji
    (``fairtalk/bogus:x: unknown ...`` lost its ``:x:`` to ❌). Formatted, it escapes the markup
    and splits each colon from the text before it by an empty tag, which rich prints as nothing.
    """

    __slots__ = ()

    def __format__(self, format_spec: str) -> str:
        escaped = _MARKUP.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", str(self))  # as rich.markup.escape
        return escaped.replace(":", "[i][/i]:")


#: What rich's markup reads as a tag (``[bold]``, ``[/]``), with the backslashes before it (rich's own pattern).
_MARKUP = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


@modelapi(name="fairtalk")
class FairtalkModelAPI(ModelAPI):
    """The model a fairtalk spec names (``fairtalk/SPEC``), answering one context at a time.

    Its model is loaded once, when inspect creates the provider; ``model_args`` are the adapter's
    options. A spec or option fairtalk refuses raises :class:`InspectOptionError` (a SpecError),
    which ``inspect eval`` prints as one line, ``fairtalk/SPEC: why``, without a traceback. Calls are answered one at a time, in a worker thread, so the event loop never waits
    on the model and no adapter is called from two threads at once.
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        try:
            self.responder: Responder = load_responder(model_name, **model_args)
        except FairtalkError as exc:  # an unknown spec, a missing file, a bad -M option: one line, not a traceback
            raise InspectOptionError(_MSG_SPEC.format(spec=hide_credentials(model_name), error=exc)) from exc
        self._lock = threading.Lock()

    def max_connections(self) -> int:
        """One request at a time: the adapter itself keeps a server's requests in flight where it can."""
        return 1

    def close(self) -> None:
        """Release the model (a server client, a loaded network)."""
        self.responder.close()

    def _respond(self, context: str, settings: DecodingSettings, seed: int) -> str:
        with self._lock:
            (reply,) = self.responder.respond([context], settings, seeds=[seed])
        return reply

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        """Answer the conversation's turns, joined by newlines, as one context (the sample's seed, else 0)."""
        if tools:
            raise SpecError(_MSG_TOOLS.format(spec=hide_credentials(self.model_name)))
        if any(message.role == "system" for message in input):
            raise SpecError(_MSG_SYSTEM.format(spec=hide_credentials(self.model_name)))
        context = "\n".join(message.text for message in input)
        settings = decoding_settings(config)
        reply = await anyio.to_thread.run_sync(self._respond, context, settings, config.seed or 0)
        return ModelOutput.from_content(
            self.model_name, str(reply), stop_reason=_STOP_REASONS.get(finish_reason(reply), "unknown")
        )
