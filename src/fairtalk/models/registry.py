"""Model specs (``hf:gpt2``, ``openai:URL#MODEL``, ...) mapped lazily to responder factories.

Each prefix maps to a ``"module:attribute"`` string; the module is imported only when
a spec with that prefix is loaded. The attribute is either a class with a
``from_spec(rest, **options)`` classmethod or a plain function ``(rest, **options)``.
Third-party packages register prefixes through the ``fairtalk.models`` entry-point
group, whose values use the same ``"module:attribute"`` form.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from fairtalk.errors import SpecError
from fairtalk.models.base import Responder

__all__ = ["ENTRY_POINT_GROUP", "load_responder", "model_prefixes", "register_model"]

ENTRY_POINT_GROUP = "fairtalk.models"

_MSG_NO_PREFIX = "malformed model spec {spec!r} (expected PREFIX:VALUE, e.g. hf:gpt2)"
_MSG_UNKNOWN_PREFIX = "unknown model spec prefix {prefix!r} in {spec!r}"
_MSG_DUPLICATE = "model spec prefix {prefix!r} is registered twice ({first} and {second})"
_MSG_BAD_TARGET = "model spec prefix {prefix!r} points to {target!r}, which cannot be loaded: {error}"
_MSG_NOT_RESPONDER = "{target} returned {kind}, which is not a Responder"

_BUILTIN: dict[str, str] = {
    "hf": "fairtalk.models.hf:HFResponder",
    "openai": "fairtalk.models.openai_compat:OpenAIResponder",
    "python": "fairtalk.models.python_callable:PythonResponder",
    "replay": "fairtalk.models.replay:ReplayResponder",
    "builtin": "fairtalk.models.builtin:load_builtin",
    "retrieval": "fairtalk.models.retrieval:RetrievalResponder",
}

_registered: dict[str, str] = {}
_entry_points_loaded = False


def register_model(prefix: str, target: str) -> None:
    """Register a spec prefix for ``"module:attribute"``; registering a taken prefix is an error."""
    if not prefix.isidentifier():
        raise SpecError(f"model spec prefix must be an identifier, got {prefix!r}")
    if ":" not in target:
        raise SpecError(f"model target must be 'module:attribute', got {target!r}")
    first = _BUILTIN.get(prefix) or _registered.get(prefix)
    if first is not None:
        raise SpecError(_MSG_DUPLICATE.format(prefix=prefix, first=first, second=target))
    _registered[prefix] = target


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        register_model(ep.name, ep.value)


def _table() -> dict[str, str]:
    _load_entry_points()
    return {**_BUILTIN, **_registered}


def model_prefixes() -> tuple[str, ...]:
    """Return every registered spec prefix, sorted."""
    return tuple(sorted(_table()))


def _resolve(prefix: str, target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    try:
        return getattr(import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise SpecError(_MSG_BAD_TARGET.format(prefix=prefix, target=target, error=exc)) from exc


def load_responder(spec: str, **options: Any) -> Responder:
    """Build the responder a spec names.

    Parameters
    ----------
    spec : str
        ``PREFIX:VALUE``: ``hf:NAME_OR_PATH[?gguf_file=F]``, ``openai:URL#MODEL``,
        ``python:module:function``, ``replay:FILE``, ``builtin:echo``,
        ``retrieval:POOL``, or a prefix a third party registered.
    **options
        Adapter options (``device="cpu"``, ``max_concurrency=4``, ...).

    Returns
    -------
    Responder

    Raises
    ------
    SpecError
        Unknown prefix (with "did you mean" and the choices), or malformed value.

    Examples
    --------
    >>> from fairtalk.models import DecodingSettings, load_responder
    >>> with load_responder("builtin:echo") as model:
    ...     model.respond(["hello there"], DecodingSettings(), seeds=[0])
    ['there hello']
    """
    prefix, sep, rest = spec.partition(":")
    table = _table()
    if not sep or not prefix:
        raise SpecError(_MSG_NO_PREFIX.format(spec=spec), choices=table)
    target = table.get(prefix)
    if target is None:
        raise SpecError(_MSG_UNKNOWN_PREFIX.format(prefix=prefix, spec=spec), choices=table, given=prefix)
    factory = _resolve(prefix, target)
    build = getattr(factory, "from_spec", factory)
    responder = build(rest, **options)
    if not isinstance(responder, Responder):
        raise SpecError(_MSG_NOT_RESPONDER.format(target=target, kind=type(responder).__name__))
    return responder
