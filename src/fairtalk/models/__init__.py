"""Models under test: the Responder base class, its adapters, and the spec registry.

Adapters (one module or subpackage each, imported only when their spec prefix is used):
``hf:`` (transformers, ``_hf.py``), ``openai:`` (OpenAI-compatible servers, ``openai/``), ``python:``
(a user callable, ``python/``), ``vllm:`` (``vllm/``), ``replay:`` (responses produced elsewhere),
``builtin:`` (``echo``, ``smollm2``) and ``retrieval:`` (encoder + candidate pool). :class:`RayEngine`
runs the local ones on Ray actors (``ray/``).

Every model subclasses :class:`Responder` (``fingerprint`` and ``respond`` are abstract; the
optional capabilities have defaults). :func:`as_responder` turns what ``model=`` takes into
one: a spec, a Responder, or a plain, :func:`batched` or ``async`` function.
"""

from __future__ import annotations

from fairtalk.models._base import (
    PAPER_MAX_NEW_TOKENS,
    Closing,
    DecodingSettings,
    ModelFactory,
    Reply,
    Responder,
    Stream,
    answered_before,
    check_batch,
    close_stream,
    finish_reason,
    identity_unknown,
    length_batches,
    make_fingerprint,
    raise_first_error,
    respond_each_checked,
)
from fairtalk.models._builtin import EchoResponder, recorded_specs
from fairtalk.models._credentials import hide_credentials
from fairtalk.models._finish_reasons import RECORD_LIMIT, normal_finish_reason
from fairtalk.models._planted import PLANTED_REPLIES, PlantedResponder
from fairtalk.models._registry import (
    ENTRY_POINT_GROUP,
    ReplyFunction,
    as_responder,
    check_model_spec,
    completion_options,
    load_responder,
    model_prefixes,
    register_model,
)
from fairtalk.models._retrieval import RetrievalResponder
from fairtalk.models._spec import ModelSpec, parse_model_args, parse_model_spec
from fairtalk.models.python._responder import batched, callable_name
from fairtalk.models.ray._engine import ENGINES, RayEngine, cluster_error, resolve_engine
from fairtalk.models.ray._scoring import RayScorer, worth_it

__all__ = [
    "EchoResponder",
    "RetrievalResponder",
    "ENTRY_POINT_GROUP",
    "length_batches",
    "make_fingerprint",
    "identity_unknown",
    "recorded_specs",
    "check_model_spec",
    "PLANTED_REPLIES",
    "PlantedResponder",
    "Closing",
    "PAPER_MAX_NEW_TOKENS",
    "Stream",
    "check_batch",
    "raise_first_error",
    "respond_each_checked",
    "answered_before",
    "close_stream",
    "normal_finish_reason",
    "RECORD_LIMIT",
    "RayScorer",
    "worth_it",
    "cluster_error",
    "callable_name",
    "ENGINES",
    "DecodingSettings",
    "ModelFactory",
    "ModelSpec",
    "RayEngine",
    "Reply",
    "ReplyFunction",
    "Responder",
    "as_responder",
    "batched",
    "completion_options",
    "finish_reason",
    "hide_credentials",
    "load_responder",
    "model_prefixes",
    "parse_model_args",
    "parse_model_spec",
    "register_model",
    "resolve_engine",
]
