"""Model specs (``hf:gpt2``, ``openai:URL#MODEL``, ...) mapped lazily to responder factories.

Each prefix maps to a ``"module:attribute"`` string; the module is imported only when
a spec with that prefix is loaded. The spec is parsed once, here
(:func:`~fairtalk.models.spec.parse_model_spec`): ``PREFIX:TARGET?key=value&...``. Its
options, merged with the keyword options (``--model-arg KEY=VALUE`` on the command line),
are coerced to the types the adapter declares and passed to it as one frozen options
object:

- an adapter with ``options_for(target) -> OptionsDataclass`` is built by
  ``from_spec(target, options)``; an option it does not declare is a SpecError naming
  those it does;
- a third-party factory without ``options_for`` gets ``from_spec(target, **options)`` (or
  is called as ``factory(target, **options)``), with the option values as given.

The table is :data:`MODELS`, a :class:`~fairtalk.registry.Registry`. Third-party packages
register prefixes through the ``fairtalk.models`` entry-point group, whose values use the
same ``"module:attribute"`` form, or at run time with :func:`register_model`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from fairtalk.errors import SpecError
from fairtalk.models.base import Responder
from fairtalk.models.spec import build_options, merge_spec_options, parse_model_spec
from fairtalk.registry import Registry

__all__ = ["ENTRY_POINT_GROUP", "MODELS", "load_responder", "model_prefixes", "register_model"]

ENTRY_POINT_GROUP = "fairtalk.models"

_MSG_UNKNOWN_PREFIX = "unknown model spec prefix {prefix!r} in {spec!r}"
_MSG_PREFIX = "model spec prefix must be an identifier, got {prefix!r}"
_MSG_NOT_RESPONDER = "model spec prefix {prefix!r} built {kind}, which is not a Responder"

#: Spec prefix -> the responder factory (a class with ``from_spec``, or a callable), imported on first use.
MODELS: Registry[Callable[..., Any]] = Registry(
    "model spec prefix",
    group=ENTRY_POINT_GROUP,
    base=Callable,  # type: ignore[arg-type]
    expected="a responder class or factory",
    builtins={
        "hf": "fairtalk.models.hf:HFResponder",
        "openai": "fairtalk.models.openai_compat:OpenAIResponder",
        "python": "fairtalk.models.python_callable:PythonResponder",
        "replay": "fairtalk.models.replay:ReplayResponder",
        "builtin": "fairtalk.models.builtin:BuiltinModels",
        "retrieval": "fairtalk.models.retrieval:RetrievalResponder",
        "vllm": "fairtalk.models.vllm_engine:VLLMResponder",
    },
)

_USERINFO = re.compile(r"//[^/@#?]*@")


def register_model(prefix: str, target: str | Callable[..., Any]) -> None:
    """Register a spec prefix for ``"module:attribute"`` (or the factory itself); a taken prefix is an error."""
    if not prefix.isidentifier():
        raise SpecError(_MSG_PREFIX.format(prefix=prefix))
    MODELS.add(prefix, target)


def model_prefixes() -> tuple[str, ...]:
    """Return every registered spec prefix, sorted."""
    return MODELS.names()


def _public_name(name: str) -> str:
    """A spec's name for messages, without ``user:password@`` in a URL."""
    return _USERINFO.sub("//", name)


def load_responder(spec: str, **options: Any) -> Responder:
    """Build the responder a spec names.

    Parameters
    ----------
    spec : str
        ``PREFIX:VALUE[?key=value&...]``: ``hf:NAME_OR_PATH?gguf_file=F``,
        ``openai:URL#MODEL?api_key_env=VAR``, ``python:module:function?batched=true``,
        ``replay:FILE``, ``builtin:echo?mode=upper``, ``retrieval:POOL``, or a prefix a third
        party registered.
    **options
        More adapter options (``device="cpu"``, ``max_concurrency=4``, or the strings of
        ``--model-arg``); an option given both here and in the spec is an error.

    Returns
    -------
    Responder

    Raises
    ------
    SpecError
        Unknown prefix (with "did you mean" and the choices), a malformed value, an
        option the adapter does not take (with the ones it does), or a value of the wrong type.

    Examples
    --------
    >>> from fairtalk.models import DecodingSettings, load_responder
    >>> with load_responder("builtin:echo") as model:
    ...     model.respond(["hello there"], DecodingSettings(), seeds=[0])
    ['there hello']
    """
    parsed = parse_model_spec(spec)
    factory: Any = MODELS.get(parsed.prefix, message=_MSG_UNKNOWN_PREFIX.format(prefix=parsed.prefix, spec=parsed.name))
    given = merge_spec_options(parsed, options)
    options_for = getattr(factory, "options_for", None)
    if callable(options_for):
        typed = build_options(options_for(parsed.target), given, spec=_public_name(parsed.name))
        responder = factory.from_spec(parsed.target, typed)
    else:
        build = getattr(factory, "from_spec", factory)
        responder = build(parsed.target, **given)
    if not isinstance(responder, Responder):
        raise SpecError(_MSG_NOT_RESPONDER.format(prefix=parsed.prefix, kind=type(responder).__name__))
    return responder


def completion_options(spec: str, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The options that make ``spec`` continue a prefix instead of answering it as a chat turn.

    ``hf:``, ``vllm:`` and ``builtin:smollm2``: ``chat_template=never``; ``openai:``: ``mode=completion``.
    Options already in the spec or in ``given`` are left as they are; other adapters need none.

    Examples
    --------
    >>> completion_options("hf:gpt2"), completion_options("openai:http://h/v1#m"), completion_options("builtin:echo")
    ({'chat_template': 'never'}, {'mode': 'completion'}, {})
    """
    parsed = parse_model_spec(spec)
    chosen = {**dict(parsed.options), **dict(given or {})}
    wanted: dict[str, str] = {}
    if parsed.prefix in ("hf", "vllm") or (parsed.prefix == "builtin" and parsed.target == "smollm2"):
        wanted = {"chat_template": "never"}
    elif parsed.prefix == "openai":
        wanted = {"mode": "completion"}
    return {key: value for key, value in wanted.items() if key not in chosen}
