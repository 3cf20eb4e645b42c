"""Where the ``vllm:`` adapter's engines run: one ``vllm.LLM`` in this process, or one per Ray actor.

Both backends take prompts as contexts plus one ``SamplingParams`` keyword dict per item and
return ``(text, finish_reason)`` per item, in order; ``stream`` takes chunks of items and
yields each chunk's answers (or the :class:`~fairtalk.errors.ResponderError` its call raised)
as it finishes. ``vllm`` and ``ray`` are imported when an engine is built.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any, TypeAlias

from fairtalk.errors import FairtalkError, ResponderError
from fairtalk.progress import no_third_party_bars
from fairtalk.records import chat_messages, transcript

__all__ = ["Engine", "Found", "Job", "RayReplicas"]

_MSG_MISSING_VLLM = "the vllm: adapter needs vLLM on a CUDA machine: pip install 'fairtalk[vllm]' ({error})"
_MSG_MISSING_RAY = (
    "vllm: data_parallel_size={n} runs one engine per replica as a Ray actor and needs Ray: pip install 'fairtalk[ray]' ({error})"
)
_MSG_LOAD = "cannot load vllm model {name!r}: {kind}: {error}"
_MSG_GPUS = "vllm: data_parallel_size={dp} x tensor_parallel_size={tp} needs {need} GPUs, but the Ray cluster has {have}"
_MSG_GENERATE = "{name}: generation failed: {kind}: {error}"
_MSG_COUNT = "{name}: vLLM returned {n_outputs} outputs for {n_prompts} prompts"
#: Chunks queued on each Ray replica at once, so that it never waits between two of them.
_IN_FLIGHT_PER_REPLICA = 2
#: Seconds ``RayReplicas.stream`` waits for a replica before it yields None (a chance for the caller to commit).
_HEARTBEAT = 0.25

#: ``(text, finish_reason)`` per item.
Found: TypeAlias = list[tuple[str, str | None]]
#: One chunk of work: a key the caller knows it by, its contexts, and one SamplingParams dict per context.
Job: TypeAlias = tuple[Any, list[str], list[dict[str, Any]]]


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise FairtalkError(_MSG_MISSING_VLLM.format(error=exc)) from exc
    return vllm


def _import_ray(n_replicas: int) -> Any:
    try:
        import ray
    except ImportError as exc:
        raise FairtalkError(_MSG_MISSING_RAY.format(n=n_replicas, error=exc)) from exc
    return ray


def _cause(exc: BaseException) -> BaseException:
    """The error a Ray task raised (``RayTaskError.cause``), or ``exc`` itself."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def _end_ids(tokenizer: Any, config: Any) -> frozenset[int]:
    """The token ids vLLM ends an answer on: the tokenizer's end token and the generation config's.

    vLLM reports ``"length"`` when the end token is the ``max_tokens``-th token (it checks the limit
    first); that answer ended naturally, and ``hf:`` calls it ``"stop"``, so :meth:`Engine.generate`
    does too when the last token is one of these.
    """
    found: set[int] = set()
    values = [getattr(tokenizer, "eos_token_id", None)]
    try:
        values.append((config.try_get_generation_config() or {}).get("eos_token_id"))
    except Exception:  # noqa: BLE001 - an engine without a readable generation config: the tokenizer's alone
        pass
    for value in values:
        for v in value if isinstance(value, list | tuple) else [value]:
            if isinstance(v, int) and not isinstance(v, bool):
                found.add(v)
    return frozenset(found)


class Engine:
    """One ``vllm.LLM``: loads the model once, formats contexts as ``hf:`` does, generates.

    The same class runs in this process or, through ``ray.remote``, as a Ray actor.
    """

    def __init__(self, model: str, engine_kwargs: dict[str, Any], chat_template: str, system_prompt: str | None) -> None:
        vllm = _import_vllm()
        self._sampling_params = vllm.SamplingParams
        self.name = model
        try:
            with no_third_party_bars():
                self.llm = vllm.LLM(model=model, **engine_kwargs)
        except Exception as exc:  # pydantic's ValidationError, OSError, RuntimeError, vLLM's VLLMError (not a ValueError)...
            raise FairtalkError(_MSG_LOAD.format(name=model, kind=type(exc).__name__, error=exc)) from exc
        self.tokenizer = self.llm.get_tokenizer()  # a Hugging Face tokenizer (vLLM's Mistral tokenizer has no chat_template)
        template = getattr(self.tokenizer, "chat_template", None) if chat_template == "auto" else None
        self.template = str(template) if template else None
        self.system_prompt = system_prompt
        # LLM.model_config is the engine's: its max_model_len is already cut to what the KV cache holds
        config = getattr(self.llm, "model_config", None) or getattr(getattr(self.llm, "llm_engine", None), "model_config", None)
        limit = getattr(config, "max_model_len", None) or engine_kwargs.get("max_model_len")
        self.max_model_len = int(limit) if limit else None
        self.end_ids = _end_ids(self.tokenizer, config)

    def describe(self) -> dict[str, Any]:
        """The chat template in use (None: plain transcripts) and the context length in tokens."""
        return {"chat_template": self.template, "max_model_len": self.max_model_len}

    def _prompt(self, context: str, max_new_tokens: int) -> dict[str, list[int]]:
        """The token ids of one context; one too long keeps its last tokens, as ``hf:`` does."""
        if self.template is not None:  # the template writes its own special tokens
            text = self.tokenizer.apply_chat_template(
                chat_messages(context, self.system_prompt), tokenize=False, add_generation_prompt=True
            )
            ids = list(self.tokenizer.encode(text, add_special_tokens=False))
        else:  # a multi-turn context as its transcript, one turn per line
            text = transcript(context)
            ids = list(self.tokenizer.encode(text if self.system_prompt is None else f"{self.system_prompt}\n\n{text}"))
        if self.max_model_len is not None:  # vLLM refuses a prompt of max_model_len tokens or more
            ids = ids[-max(1, self.max_model_len - max_new_tokens) :]
        return {"prompt_token_ids": ids}  # a vllm.inputs.TokensPrompt

    def generate(self, contexts: Sequence[str], params: Sequence[dict[str, Any]]) -> Found:
        """``(text, finish_reason)`` per context, in order; a failure is one ResponderError for the call."""
        try:
            prompts = [self._prompt(c, int(p["max_tokens"])) for c, p in zip(contexts, params)]
            sampling = [self._sampling_params(**p) for p in params]
            outputs = self.llm.generate(prompts, sampling_params=sampling, use_tqdm=False)
        except Exception as exc:  # ValueError, RuntimeError, vLLM's EngineDeadError...: the call fails, named
            raise ResponderError(_MSG_GENERATE.format(name=self.name, kind=type(exc).__name__, error=exc)) from exc
        if len(outputs) != len(prompts):
            raise ResponderError(_MSG_COUNT.format(name=self.name, n_outputs=len(outputs), n_prompts=len(prompts)))
        found: Found = []
        for output in outputs:
            first = output.outputs[0]
            reason = getattr(first, "finish_reason", None)
            ids = list(getattr(first, "token_ids", None) or ())
            if reason == "length" and ids and ids[-1] in self.end_ids:  # vLLM checks the limit before the end token
                reason = "stop"
            found.append((str(first.text), reason if isinstance(reason, str) and reason else None))
        return found

    def stream(self, jobs: Sequence[Job]) -> Iterator[tuple[Any, Found | ResponderError] | None]:
        """Each job's answers (or its error) in turn: one ``generate`` call per job."""
        for key, contexts, params in jobs:
            try:
                yield key, self.generate(contexts, params)
            except ResponderError as exc:
                yield key, exc

    def close(self) -> None:
        """Drop the engine so that its GPU memory can be freed."""
        self.llm = None


class RayReplicas:
    """``data_parallel_size`` engines, each a Ray actor holding ``tensor_parallel_size`` GPUs on one node.

    vLLM refuses ``LLM(data_parallel_size=N)`` in one process ("may hang"), so each replica is
    its own ``vllm.LLM`` with vLLM's data parallelism off: no ``VLLM_DP_*`` variables are set,
    and none may reach the actors (with ``data_parallel_size=1`` vLLM reads ``VLLM_DP_SIZE``
    from the environment). Inside an actor vLLM starts its worker processes with ``spawn``
    on its own. ``ray.init()`` joins the cluster ``RAY_ADDRESS`` names, or starts one on this
    machine.
    """

    def __init__(
        self,
        model: str,
        engine_kwargs: dict[str, Any],
        chat_template: str,
        system_prompt: str | None,
        *,
        tensor_parallel_size: int,
        data_parallel_size: int,
    ) -> None:
        tp, dp = tensor_parallel_size, data_parallel_size
        self.name = model
        self._ray = ray = _import_ray(dp)
        if not ray.is_initialized():  # quiet, as the library is; no dashboard for a cluster started here
            options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
            if not os.environ.get("RAY_ADDRESS"):
                options["include_dashboard"] = False
            ray.init(**options)
        have = int(ray.cluster_resources().get("GPU", 0))
        if have < tp * dp:
            raise FairtalkError(_MSG_GPUS.format(dp=dp, tp=tp, need=tp * dp, have=have))
        if tp > 1:  # worker processes on the actor's own GPUs, not a second Ray placement
            engine_kwargs = {**engine_kwargs, "distributed_executor_backend": "mp"}
        actor = ray.remote(num_gpus=tp)(Engine)
        self.replicas = [actor.remote(model, engine_kwargs, chat_template, system_prompt) for _ in range(dp)]
        try:
            infos = ray.get([replica.describe.remote() for replica in self.replicas])
        except Exception as exc:  # a replica that could not load: all go, and the cause is named
            self.close()
            cause = _cause(exc)
            if isinstance(cause, FairtalkError):
                raise FairtalkError(str(cause)) from exc
            raise FairtalkError(_MSG_LOAD.format(name=model, kind=type(cause).__name__, error=cause)) from exc
        self.info: dict[str, Any] = dict(infos[0])

    def describe(self) -> dict[str, Any]:
        """What the first replica reported (all load the same model)."""
        return self.info

    def _get(self, ref: Any) -> Found:
        """One replica's answers; its failure (a ResponderError, a dead actor) as a ResponderError."""
        try:
            return list(self._ray.get(ref))
        except Exception as exc:
            cause = _cause(exc)
            if isinstance(cause, ResponderError):
                raise ResponderError(str(cause)) from exc
            raise ResponderError(_MSG_GENERATE.format(name=self.name, kind=type(cause).__name__, error=cause)) from exc

    def generate(self, contexts: Sequence[str], params: Sequence[dict[str, Any]]) -> Found:
        """Every context at once, an equal share per replica; any share failing fails the call."""
        n, k = len(contexts), len(self.replicas)
        bounds = [(n * r // k, n * (r + 1) // k) for r in range(k)]
        refs = [
            replica.generate.remote(list(contexts[a:b]), list(params[a:b]))
            for replica, (a, b) in zip(self.replicas, bounds)
            if b > a
        ]
        return [item for ref in refs for item in self._get(ref)]

    def stream(self, jobs: Sequence[Job]) -> Iterator[tuple[Any, Found | ResponderError] | None]:
        """Jobs to the least loaded replicas, two queued on each, yielded as each finishes (None: a quiet 0.25 s)."""
        queue = deque(jobs)
        load = [0] * len(self.replicas)
        pending: dict[Any, tuple[int, Any]] = {}
        while queue or pending:
            while queue and min(load) < _IN_FLIGHT_PER_REPLICA:
                r = load.index(min(load))
                key, contexts, params = queue.popleft()
                pending[self.replicas[r].generate.remote(contexts, params)] = (r, key)
                load[r] += 1
            done, _ = self._ray.wait(list(pending), num_returns=1, timeout=_HEARTBEAT)
            if not done:
                yield None
                continue
            r, key = pending.pop(done[0])
            load[r] -= 1
            try:
                yield key, self._get(done[0])
            except ResponderError as exc:
                yield key, exc

    def close(self) -> None:
        """Stop every replica (their GPUs go back to the cluster)."""
        for replica in self.replicas:
            self._ray.kill(replica)
        self.replicas = []
