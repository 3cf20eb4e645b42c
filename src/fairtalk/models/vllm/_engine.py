"""``vllm:MODEL[?tensor_parallel_size=2&data_parallel_size=2]``: vLLM's offline engine (``vllm.LLM``), in this process.

- The model (a hub name, a local folder, or a ``.gguf`` file with ``tokenizer=``) is loaded
  once; each batch goes to ``LLM.generate`` with one ``SamplingParams`` per item, so a
  sampled response depends on its own seed only (greedy decoding is ``temperature=0``).
  vLLM's own ranges hold: a sampling temperature above 2 is refused before anything runs,
  and one below 0.01 is raised to 0.01 by vLLM. Unset ``top_k``/``top_p``/``repetition_penalty``
  are vLLM's defaults (off, 1.0, 1.0), not the model's ``generation_config``.
- Contexts are formatted as the ``hf:`` adapter formats them: with the tokenizer's chat
  template when it has one (the turns as chat messages, ``system_prompt`` as the system turn,
  the generation prompt added; ``chat_template=never`` turns it off), else as the plain
  transcript with ``system_prompt`` as a paragraph before it. A prompt longer than the
  model's context less ``max_new_tokens`` keeps its last tokens, as ``hf:`` does.
- ``finish_reason`` is vLLM's, in fairtalk's vocabulary (:mod:`fairtalk.models._finish_reasons`):
  ``"stop"`` (an end token or a stop string, which is left out of the answer) or ``"length"``
  (cut at ``max_new_tokens`` or the context length). An answer whose end token is the
  ``max_new_tokens``-th token is ``"stop"``, as in ``hf:`` (vLLM itself says ``"length"``).
  An item vLLM finishes with ``"error"`` or ``"abort"`` fails alone, as a ResponderError.
  Answers are stripped.
- ``data_parallel_size=N`` runs N engines, each a Ray actor with ``tensor_parallel_size``
  GPUs on one node, and spreads the items over them. vLLM's own ``LLM(data_parallel_size=N)``
  is refused by vLLM for one process ("may hang"), so the replicas are Ray's. A running
  cluster is joined through ``RAY_ADDRESS``; otherwise Ray starts one on this machine. The
  nodes need fairtalk and vLLM installed.
- ``vllm`` (and ``ray``) are imported when a model is built; without vLLM the error names
  ``pip install 'fairtalk[vllm]'``, which needs a CUDA machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fairtalk.errors import ResponderError, SpecError
from fairtalk.models._base import (
    DecodingSettings,
    ModelFactory,
    Reply,
    Responder,
    Stream,
    check_batch,
    collect_stream,
    make_fingerprint,
)
from fairtalk.models._finish_reasons import normal_finish_reason
from fairtalk.models._hf import _local_digest
from fairtalk.models.vllm._backends import Engine, Job, RayReplicas

__all__ = ["VLLMOptions", "VLLMResponder", "sampling_kwargs"]

_MSG_SPEC = "malformed vllm spec {spec!r} (expected vllm:MODEL, a hub name or a local path, e.g. vllm:Qwen/Qwen2.5-0.5B-Instruct)"
_MSG_RANGE = "vllm: {name} must be {rule}, got {value!r}"
_MSG_BEAMS = "vllm: beam search (num_beams > 1) is not supported; decode greedily or sample"
_MSG_CLOSED = "{name}: the model was closed"
_MSG_TEMPERATURE = "vllm: a sampling temperature must be at most 2 (vLLM's SamplingParams takes [0, 2]), got {value!r}"
_MSG_FINISHED_BADLY = "{name}: vLLM ended the request with finish_reason={reason!r}"
#: vLLM's ``SamplingParams`` refuses a higher temperature (``sampling_params.py``, ``_verify_args``).
_MAX_TEMPERATURE = 2.0
#: vLLM reads ``seed=-1`` as "no seed" and carries seeds over msgpack (64-bit): seeds are taken modulo this.
_SEED_MODULUS = 2**63
#: The ``finish_reason`` values (of vLLM's five) that mean the request failed rather than answered.
_FAILED_REASONS = frozenset({"error", "abort"})


@dataclass(frozen=True, slots=True)
class VLLMOptions:
    """Options of the ``vllm:`` adapter (see :class:`VLLMResponder`)."""

    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    dtype: Literal["auto", "float16", "bfloat16", "float32"] = "auto"
    quantization: str | None = None
    revision: str | None = None
    tokenizer: str | None = None
    seed: int = 0
    enforce_eager: bool = False
    trust_remote_code: bool = False
    chat_template: Literal["auto", "never"] = "auto"
    system_prompt: str | None = None
    name: str | None = None
    chunk_size: int = 2048

    def __post_init__(self) -> None:
        for name, ok, rule in (
            ("tensor_parallel_size", self.tensor_parallel_size >= 1, ">= 1"),
            ("data_parallel_size", self.data_parallel_size >= 1, ">= 1"),
            ("gpu_memory_utilization", 0 < self.gpu_memory_utilization <= 1, "in (0, 1]"),
            ("max_model_len", self.max_model_len is None or self.max_model_len >= 1, ">= 1 or none"),
            ("max_num_seqs", self.max_num_seqs is None or self.max_num_seqs >= 1, ">= 1 or none"),
            ("chunk_size", self.chunk_size >= 1, ">= 1"),
        ):
            if not ok:
                raise SpecError(_MSG_RANGE.format(name=name, rule=rule, value=getattr(self, name)))

    def engine_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``vllm.LLM`` these options name (unset ones left to vLLM)."""
        kwargs: dict[str, Any] = {
            "tensor_parallel_size": self.tensor_parallel_size,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "dtype": self.dtype,
            "seed": self.seed,
            "enforce_eager": self.enforce_eager,
            "trust_remote_code": self.trust_remote_code,
        }
        for name in ("max_model_len", "max_num_seqs", "quantization", "revision", "tokenizer"):
            if getattr(self, name) is not None:
                kwargs[name] = getattr(self, name)
        return kwargs


def sampling_kwargs(settings: DecodingSettings, seed: int) -> dict[str, Any]:
    """The ``vllm.SamplingParams`` keywords for one item: greedy is ``temperature=0``, a sample has its own seed.

    Only ``SamplingParams`` field names are used. The seed is taken modulo ``2**63``: vLLM
    reads ``-1`` as no seed at all, and its engine carries seeds as 64-bit integers.

    Examples
    --------
    >>> sampling_kwargs(DecodingSettings(max_new_tokens=20, stop=("User:",)), seed=7)
    {'n': 1, 'max_tokens': 20, 'temperature': 0.0, 'stop': ['User:']}
    >>> sampling_kwargs(DecodingSettings(do_sample=True, temperature=0.7, top_p=0.9), seed=7)
    {'n': 1, 'max_tokens': 256, 'temperature': 0.7, 'seed': 7, 'top_p': 0.9}
    >>> sampling_kwargs(DecodingSettings(do_sample=True), seed=-1)["seed"] == 2**63 - 1
    True
    """
    kwargs: dict[str, Any] = {"n": 1, "max_tokens": int(settings.max_new_tokens)}
    if settings.do_sample:
        kwargs.update(temperature=float(settings.temperature), seed=int(seed) % _SEED_MODULUS)
        if settings.top_p is not None:
            kwargs["top_p"] = float(settings.top_p)
        if settings.top_k is not None:  # vLLM wants a Python int (a NumPy integer is refused)
            kwargs["top_k"] = int(settings.top_k)
    else:
        kwargs["temperature"] = 0.0
    if settings.stop:
        kwargs["stop"] = list(settings.stop)
    if settings.repetition_penalty is not None:
        kwargs["repetition_penalty"] = float(settings.repetition_penalty)
    return kwargs


class VLLMResponder(Responder, ModelFactory[VLLMOptions]):
    """A model served by vLLM's offline engine in this process (or by Ray actors, one engine each).

    Parameters
    ----------
    model : str
        Hub name, local folder, or a ``.gguf`` file (then give ``tokenizer``).
    options : VLLMOptions, optional
        ``tensor_parallel_size`` (GPUs per engine), ``data_parallel_size`` (engines, as Ray
        actors), ``gpu_memory_utilization``, ``max_model_len``, ``max_num_seqs``, ``dtype``,
        ``quantization``, ``revision``, ``tokenizer``, ``seed`` (the engine's; each sampled item
        has its own), ``enforce_eager`` and ``trust_remote_code`` go to ``vllm.LLM``.
        ``chat_template`` (``auto``/``never``), ``system_prompt`` and ``name`` work as in ``hf:``.
        ``chunk_size``: items per ``LLM.generate`` call when answers stream to the run store
        (larger keeps the engine fuller; each chunk is committed as it finishes).

    The fingerprint names the model (``name`` or the path, with a digest of local files), its
    revision and tokenizer, and what changes the outputs: dtype, quantization, max_model_len,
    tensor_parallel_size when > 1 (the sums run in another order), the chat template's hash and
    the system prompt. The engine seed (each sampled item has its own), data_parallel_size and
    the memory and batching options are left out: they change how fast, not what.
    """

    def __init__(self, model: str, options: VLLMOptions | None = None) -> None:
        if not model or not model.strip():
            raise SpecError(_MSG_SPEC.format(spec=f"vllm:{model}"))
        self.options = options = options or VLLMOptions()
        self.model_path = model
        self.name = options.name or model
        self.chunk_size = options.chunk_size
        args = (model, options.engine_kwargs(), options.chat_template, options.system_prompt)
        self._backend: Engine | RayReplicas | None
        if options.data_parallel_size == 1:
            self._backend = Engine(*args)
        else:
            self._backend = RayReplicas(
                *args, tensor_parallel_size=options.tensor_parallel_size, data_parallel_size=options.data_parallel_size
            )
        template = self._backend.describe()["chat_template"]
        self.input_paths = (model,) if Path(model).exists() else ()
        self._fingerprint = make_fingerprint(
            "vllm",
            self.name,
            weights=_local_digest(Path(model), None),
            revision=options.revision,
            tokenizer=options.tokenizer,
            dtype=options.dtype,
            quantization=options.quantization,
            max_model_len=options.max_model_len,
            tensor_parallel_size=options.tensor_parallel_size if options.tensor_parallel_size > 1 else None,
            chat_template=None if template is None else hashlib.sha256(str(template).encode()).hexdigest()[:12],
            system_prompt=options.system_prompt,
        )

    @classmethod
    def options_for(cls, target: str) -> type[VLLMOptions]:
        """The options this adapter takes."""
        return VLLMOptions

    @classmethod
    def from_spec(cls, target: str, options: VLLMOptions | None = None) -> VLLMResponder:
        """Build from ``MODEL`` (what follows ``vllm:``) and its options."""
        return cls(target, options)

    @property
    def fingerprint(self) -> str:
        """Model, revision, local digest and the options that change outputs (see the class docstring)."""
        return self._fingerprint

    def close(self) -> None:
        """Drop the engine, or stop the Ray actors, so that GPU memory can be freed."""
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def _ready(self, contexts: Sequence[str], settings: DecodingSettings, seeds: Sequence[int]) -> Engine | RayReplicas:
        """The backend, once the batch and settings are known to be ones vLLM can run."""
        check_batch(contexts, seeds)
        if settings.num_beams > 1:
            raise SpecError(_MSG_BEAMS)
        if settings.do_sample and settings.temperature > _MAX_TEMPERATURE:  # else every item fails alike
            raise SpecError(_MSG_TEMPERATURE.format(value=settings.temperature))
        if self._backend is None:
            raise ResponderError(_MSG_CLOSED.format(name=self.name))
        return self._backend

    def _reply(self, text: str, reason: str | None) -> Reply | ResponderError:
        """One item's answer, stripped; an item vLLM ended with ``error`` or ``abort`` is its error."""
        if reason in _FAILED_REASONS:
            return ResponderError(_MSG_FINISHED_BADLY.format(name=self.name, reason=reason))
        return Reply(text.strip(), normal_finish_reason(reason))

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Generate one response per context, in order: one engine call (vLLM batches inside it)."""
        backend = self._ready(contexts, settings, seeds)
        if not contexts:
            return []
        found = backend.generate(list(contexts), [sampling_kwargs(settings, seed) for seed in seeds])
        replies: list[str] = []
        for text, reason in found:
            reply = self._reply(text, reason)
            if isinstance(reply, ResponderError):  # respond_each/respond_stream let it fail alone
                raise reply
            replies.append(reply)
        return replies

    def respond_stream(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> Stream:
        """Yield ``(index, response or error)`` as each chunk of ``chunk_size`` items finishes.

        With Ray replicas, chunks run on all of them at once and None comes when none finished
        for a quarter of a second (a caller may commit meanwhile). A chunk whose engine call
        fails is tried again by halves, so that one bad item fails alone.
        """
        backend = self._ready(contexts, settings, seeds)
        jobs: list[Job] = []
        for start in range(0, len(contexts), self.chunk_size):
            chunk = range(start, min(start + self.chunk_size, len(contexts)))
            jobs.append((chunk, [contexts[i] for i in chunk], [sampling_kwargs(settings, seeds[i]) for i in chunk]))
        for done in backend.stream(jobs):
            if done is None:
                yield None
                continue
            chunk, found = done
            if isinstance(found, ResponderError):  # the whole call failed: find the items that fail alone
                items = super().respond_each([contexts[i] for i in chunk], settings, seeds=[seeds[i] for i in chunk])
            else:
                items = [self._reply(text, reason) for text, reason in found]
            yield from zip(chunk, items)

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Generate every context; each item yields its response or its own error, in order."""
        return collect_stream(self.respond_stream(contexts, settings, seeds=seeds), len(contexts))
