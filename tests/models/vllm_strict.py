"""A stricter stand-in for vLLM, held to its real API as read in vLLM 0.33.0: field names, ranges, output types.

``StrictSamplingParams`` takes only ``SamplingParams`` field names and checks their ranges as
vLLM does; ``StrictLLM`` takes only ``LLM``/``EngineArgs`` keywords, refuses what vLLM refuses
and returns outputs with the real attribute names (``vllm/entrypoints/llm.py``,
``vllm/sampling_params.py``, ``vllm/outputs.py``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from .vllm_fakes import FakeLLM, decode

#: ``SamplingParams`` fields with a meaning for generation, and their defaults in vLLM 0.33.0 (sampling_params.py:285-385).
SAMPLING_DEFAULTS: dict[str, Any] = {
    "n": 1,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "repetition_penalty": 1.0,
    "temperature": 1.0,
    "top_p": 1.0,
    "top_k": 0,
    "min_p": 0.0,
    "seed": None,
    "stop": [],
    "stop_token_ids": [],
    "ignore_eos": False,
    "max_tokens": 16,
    "min_tokens": 0,
    "logprobs": None,
    "prompt_logprobs": None,
    "detokenize": True,
    "skip_special_tokens": True,
    "spaces_between_special_tokens": True,
    "include_stop_str_in_output": False,
}
#: ``LLM(...)`` keywords the adapter may pass: named parameters of ``LLM.__init__`` or ``EngineArgs`` fields (llm.py:177-222).
LLM_KEYWORDS = frozenset(
    {
        "tokenizer",
        "trust_remote_code",
        "tensor_parallel_size",
        "dtype",
        "quantization",
        "revision",
        "seed",
        "gpu_memory_utilization",
        "enforce_eager",
        "max_model_len",
        "max_num_seqs",
        "distributed_executor_backend",
        "data_parallel_size",
    }
)
#: ``EngineArgs.dtype`` (``vllm.config.model.ModelDType``).
DTYPES = frozenset({"auto", "half", "float16", "bfloat16", "float", "float32"})
#: The text-only keys of ``vllm.inputs.TokensPrompt`` (vllm/inputs/llm.py:111-127).
TOKENS_PROMPT_KEYS = frozenset({"prompt_token_ids", "prompt", "token_type_ids", "prompt_token_offsets", "cache_salt"})
#: A prompt holding this makes StrictLLM end its request with ``finish_reason="error"``, as vLLM does for a failed request.
ENGINE_ERROR = "ENGINE-ERROR"


class StrictSamplingParams:
    """``vllm.SamplingParams`` as far as the adapter can tell: its field names, defaults and range checks.

    ``kwargs`` keeps the keywords given (what ``params_of`` reads); the fields hold the values
    vLLM would keep (``seed=-1`` is no seed, greedy clears top-k/top-p).
    """

    def __init__(self, **kwargs: Any) -> None:
        for name in kwargs:
            if name not in SAMPLING_DEFAULTS:
                raise TypeError(f"Unexpected keyword argument {name!r}")  # as msgspec.Struct says it
        self.kwargs = kwargs
        values = {**SAMPLING_DEFAULTS, **kwargs}
        stop = values["stop"]
        values["stop"] = [stop] if isinstance(stop, str) else list(stop or [])
        values["seed"] = None if values["seed"] == -1 else values["seed"]
        for name, value in values.items():
            setattr(self, name, value)
        self._verify()
        if self.temperature < 1e-5:  # greedy
            self.top_p, self.top_k, self.min_p = 1.0, 0, 0.0

    def _verify(self) -> None:
        """The checks of vLLM's ``SamplingParams._verify_args`` for these fields (sampling_params.py:634-747)."""
        checks = (
            (isinstance(self.n, int) and self.n >= 1, "n must be at least 1"),
            (math.isfinite(self.repetition_penalty) and self.repetition_penalty > 0, "repetition_penalty must be > 0"),
            (math.isfinite(self.temperature) and 0.0 <= self.temperature <= 2.0, "temperature must be in [0, 2]"),
            (0.0 < self.top_p <= 1.0, "top_p must be in (0, 1]"),
            (isinstance(self.top_k, int) and self.top_k >= -1, "top_k must be 0 (disable), or at least 1"),
            (self.max_tokens is None or self.max_tokens >= 1, "max_tokens must be at least 1"),
            # not a SamplingParams check: vLLM's msgpack transport to its engine core refuses a larger int
            (self.seed is None or (isinstance(self.seed, int) and -(2**63) <= self.seed < 2**64), "seed must fit 64 bits"),
            (all(isinstance(x, str) and x for x in self.stop), "stop cannot contain an empty string"),
        )
        for ok, message in checks:
            if not ok:
                raise ValueError(message)


@dataclasses.dataclass(slots=True)
class CompletionOutput:
    """The fields of ``vllm.outputs.CompletionOutput`` (outputs.py:87-98) that every vLLM has; slots, so a wrong name fails."""

    index: int
    text: str
    token_ids: Sequence[int]
    cumulative_logprob: float | None
    logprobs: Any
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclasses.dataclass(slots=True)
class RequestOutput:
    """``vllm.outputs.RequestOutput``'s attributes (outputs.py:169-209)."""

    request_id: str
    prompt: str | None
    prompt_token_ids: list[int] | None
    prompt_logprobs: Any
    outputs: list[CompletionOutput]
    finished: bool


class StrictLLM(FakeLLM):
    """FakeLLM behind ``vllm.LLM``'s real keywords, ``generate`` signature, prompt rules and output types."""

    def __init__(self, model: str, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - LLM_KEYWORDS)
        if unknown:
            raise TypeError(f"LLM() got unexpected keyword arguments {unknown}")
        if kwargs.get("dtype", "auto") not in DTYPES:
            raise ValueError(f"dtype {kwargs['dtype']!r} is not one of {sorted(DTYPES)}")
        dp = int(kwargs.get("data_parallel_size", 1))
        if dp > 1 and kwargs.get("distributed_executor_backend") != "external_launcher":  # llm.py:280-293
            raise ValueError(f"LLM(data_parallel_size={dp}) is not supported for single-process usage and may hang.")
        super().__init__(model, **kwargs)

    def generate(  # type: ignore[override]
        self,
        prompts: Any,
        sampling_params: Any = None,
        *,
        use_tqdm: bool = True,
        lora_request: Any = None,
        priority: Any = None,
        tokenization_kwargs: Any = None,
        mm_processor_kwargs: Any = None,
    ) -> list[RequestOutput]:
        assert isinstance(sampling_params, list) and all(isinstance(p, StrictSamplingParams) for p in sampling_params)
        if len(sampling_params) != len(prompts):
            raise ValueError(f"The lengths of prompts ({len(prompts)}) and params ({len(sampling_params)}) must be the same.")
        for prompt in prompts:
            assert isinstance(prompt, dict) and set(prompt) <= TOKENS_PROMPT_KEYS, prompt
            ids = prompt["prompt_token_ids"]
            assert isinstance(ids, list) and all(type(i) is int for i in ids)
            if not ids or len(ids) >= self.model_config.max_model_len:  # input_processor.py:_validate_prompt_len
                raise ValueError(f"The decoder prompt (length {len(ids)}) does not fit max_model_len")
        found = super().generate(prompts, sampling_params, use_tqdm=use_tqdm)
        outputs = []
        for i, (prompt, out) in enumerate(zip(prompts, found)):
            text, reason = out.outputs[0].text, out.outputs[0].finish_reason
            if ENGINE_ERROR in decode(prompt["prompt_token_ids"]):
                text, reason = "", "error"
            done = CompletionOutput(
                index=0, text=text, token_ids=[ord(c) for c in text], cumulative_logprob=None, logprobs=None, finish_reason=reason
            )
            outputs.append(
                RequestOutput(
                    request_id=str(i),
                    prompt=None,
                    prompt_token_ids=prompt["prompt_token_ids"],
                    prompt_logprobs=None,
                    outputs=[done],
                    finished=True,
                )
            )
        return outputs
