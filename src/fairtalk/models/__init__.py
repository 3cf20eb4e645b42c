"""Models under test: the Responder protocol, its adapters, and the spec registry.

Adapters (one module each, imported only when their spec prefix is used):
``hf:`` (transformers), ``openai:`` (OpenAI-compatible servers), ``python:`` (a
user callable), ``replay:`` (responses produced elsewhere), ``builtin:`` (``echo``,
``smollm2``) and ``retrieval:`` (encoder + candidate pool).
"""

from __future__ import annotations

from fairtalk.models.base import BaseResponder, DecodingSettings, Responder, respond_each
from fairtalk.models.registry import load_responder, model_prefixes, register_model

__all__ = [
    "BaseResponder",
    "DecodingSettings",
    "Responder",
    "load_responder",
    "model_prefixes",
    "register_model",
    "respond_each",
]
