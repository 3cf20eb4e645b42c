"""The model a run generates with on Ray (``engine="ray"``): the spec, or the first default that loads on the actors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.models import RayEngine, ReplyFunction, Responder, cluster_error

__all__ = ["open_on_ray"]

_MSG_OBJECT = (
    "engine ray loads the model from its spec on every actor: give the model as a spec string "
    "(hf:NAME, builtin:NAME, python:FILE.py:FUNCTION), not a {type} object"
)
_MSG_NO_DEFAULT = "no default model loads on the Ray actors ({reasons}); pass a model: --model SPEC"


def open_on_ray(
    model: str | Responder | ReplyFunction | None,
    model_args: Mapping[str, object] | None,
    engine: RayEngine,
    *,
    batch_size: int,
    defaults: Sequence[str],
) -> Responder:
    """The model's spec loaded on Ray actors; with no model, the first of ``defaults`` that loads there."""
    if model is not None and not isinstance(model, str):
        raise SpecError(_MSG_OBJECT.format(type=type(model).__name__))
    if model is not None:
        return engine.responder(model, batch_size=batch_size, model_args=model_args)
    reasons = []
    for spec in defaults:
        try:
            return engine.responder(spec, batch_size=batch_size)
        except FairtalkError as exc:
            if cluster_error(exc):  # no Ray, or no cluster: said once, not once per default model
                raise
            reasons.append(f"{spec}: {exc}")
    raise FairtalkError(_MSG_NO_DEFAULT.format(reasons="; ".join(reasons)))
