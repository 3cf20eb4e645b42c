"""Models under test: the Responder protocol, its adapters, and the spec registry.

Adapters (one module each, imported only when their spec prefix is used):
``hf:`` (transformers), ``openai:`` (OpenAI-compatible servers), ``python:`` (a
user callable), ``replay:`` (responses produced elsewhere), ``builtin:`` (``echo``,
``smollm2``) and ``retrieval:`` (encoder + candidate pool). :class:`RayEngine` runs the local
ones on Ray actors (``ray_engine.py``, ``_ray_pool.py``).
"""

from __future__ import annotations

from fairtalk.models.base import (
    BaseResponder,
    DecodingSettings,
    Reply,
    Responder,
    finish_reason,
    preflight,
    respond_each,
)
from fairtalk.models.ray_engine import ENGINES, RayEngine, resolve_engine
from fairtalk.models.registry import (
    completion_options,
    load_responder,
    model_prefixes,
    register_model,
)
from fairtalk.models.spec import ModelSpec, parse_model_args, parse_model_spec

__all__ = [
    "BaseResponder",
    "DecodingSettings",
    "ENGINES",
    "ModelSpec",
    "RayEngine",
    "Reply",
    "Responder",
    "completion_options",
    "finish_reason",
    "load_responder",
    "model_prefixes",
    "parse_model_args",
    "parse_model_spec",
    "preflight",
    "register_model",
    "resolve_engine",
    "respond_each",
]
