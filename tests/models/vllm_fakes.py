"""Test doubles for the vllm: adapter: a fake ``vllm`` module, a fake ``ray``, and a fake vllm package for real Ray workers."""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from typing import Any

import pytest

from fairtalk.models import DecodingSettings

GREEDY = DecodingSettings(max_new_tokens=64)
SAMPLED = DecodingSettings(do_sample=True, temperature=0.7, top_k=20, top_p=0.9, max_new_tokens=64)
BOS = 1
TEMPLATE = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>"


def decode(ids: Sequence[int]) -> str:
    """Token ids back to text (a character a token; BOS as ``<bos>``)."""
    return "".join("<bos>" if i == BOS else chr(i) for i in ids)


class FakeTokenizer:
    """Characters as token ids; a chat template renders ``<role>content`` per message."""

    def __init__(self, chat_template: str | None) -> None:
        self.chat_template = chat_template

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return ([BOS] if add_special_tokens else []) + [ord(c) for c in text]

    def apply_chat_template(self, messages: list[dict[str, str]], *, tokenize: bool, add_generation_prompt: bool) -> str:
        assert not tokenize and add_generation_prompt
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"


class FakeSamplingParams:
    """Keeps the keywords it was built with."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class FakeLLM:
    """Records what it is given; answers `` echo:<the prompt> `` (a character a token, cut at ``max_tokens``)."""

    instances: list[FakeLLM] = []
    chat_template: str | None = None
    max_model_len = 4096

    def __init__(self, model: str, **kwargs: Any) -> None:
        if model == "missing/model":
            raise OSError("no such model")
        self.model = model
        self.kwargs = kwargs
        self.calls: list[tuple[list[dict[str, list[int]]], list[FakeSamplingParams]]] = []
        self.model_config = types.SimpleNamespace(max_model_len=kwargs.get("max_model_len") or self.max_model_len, model=model)
        FakeLLM.instances.append(self)

    def get_tokenizer(self) -> FakeTokenizer:
        return FakeTokenizer(self.chat_template)

    def generate(
        self, prompts: list[dict[str, list[int]]], sampling_params: list[FakeSamplingParams], *, use_tqdm: bool
    ) -> list[Any]:
        assert use_tqdm is False and len(prompts) == len(sampling_params)
        self.calls.append((prompts, sampling_params))
        outputs = []
        for prompt, params in zip(prompts, sampling_params):
            text = decode(prompt["prompt_token_ids"])
            if "BOOM" in text:
                raise ValueError("the prompt went boom")
            answer = f" echo:{text} "
            cut = len(answer) > params.kwargs["max_tokens"]
            done = types.SimpleNamespace(text=answer[: params.kwargs["max_tokens"]], finish_reason="length" if cut else "stop")
            outputs.append(types.SimpleNamespace(outputs=[done]))
        return outputs


def install_fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[FakeLLM]:
    """Put a fake ``vllm`` (LLM, SamplingParams) in sys.modules for the test; FakeLLM.instances starts empty."""
    module = types.ModuleType("vllm")
    module.LLM = FakeLLM  # type: ignore[attr-defined]
    module.SamplingParams = FakeSamplingParams  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setattr(FakeLLM, "instances", [])
    monkeypatch.setattr(FakeLLM, "chat_template", None)
    return FakeLLM


def prompts_of(llm: FakeLLM) -> list[str]:
    """Every prompt an engine was given, as text."""
    return [decode(p["prompt_token_ids"]) for prompts, _ in llm.calls for p in prompts]


def params_of(llm: FakeLLM) -> list[dict[str, Any]]:
    """Every SamplingParams an engine was given, as its keywords."""
    return [sp.kwargs for _, params in llm.calls for sp in params]


class _Ref:
    """A finished Ray task: its value or its error."""

    def __init__(self, call: Any) -> None:
        try:
            self.value, self.error = call(), None
        except Exception as exc:  # noqa: BLE001 - kept for ray.get, as Ray does
            self.value, self.error = None, exc


class FakeRay(types.ModuleType):
    """Actors run in this process: ``ray.remote(**options)(cls).remote(...)``, ``ray.get``, ``ray.wait``."""

    def __init__(self, n_gpus: int) -> None:
        super().__init__("ray")
        self.n_gpus = n_gpus
        self.started = False
        self.actor_options: list[dict[str, Any]] = []
        self.killed: list[Any] = []
        self.waits = 0

    def is_initialized(self) -> bool:
        return self.started

    def init(self, **options: Any) -> None:
        assert options["log_to_driver"] is False
        self.started = True

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 8.0, "GPU": float(self.n_gpus)}

    def remote(self, **options: Any) -> Any:
        fake = self

        def wrap(cls: type) -> Any:
            class Actor:
                def __init__(self, *args: Any) -> None:
                    self.instance = _Ref(lambda: cls(*args))

                def __getattr__(self, name: str) -> Any:
                    def call(*args: Any) -> _Ref:
                        return _Ref(lambda: getattr(fake.get(self.instance), name)(*args))

                    return types.SimpleNamespace(remote=call)

            fake.actor_options.append(options)
            return types.SimpleNamespace(remote=Actor)

        return wrap

    def get(self, refs: Any) -> Any:
        if isinstance(refs, list):
            return [self.get(r) for r in refs]
        if refs.error is not None:
            raise refs.error
        return refs.value

    def wait(self, refs: list[_Ref], *, num_returns: int, timeout: float) -> tuple[list[_Ref], list[_Ref]]:
        self.waits += 1
        return refs[:num_returns], refs[num_returns:]

    def kill(self, actor: Any) -> None:
        self.killed.append(actor)


FAKE_VLLM_PACKAGE = """
import types

class SamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs

class Tokenizer:
    chat_template = None

    def encode(self, text, add_special_tokens=True):
        return [ord(c) for c in text]

class LLM:
    def __init__(self, model, **kwargs):
        self.model_config = types.SimpleNamespace(max_model_len=1024, model=model)

    def get_tokenizer(self):
        return Tokenizer()

    def generate(self, prompts, sampling_params, use_tqdm):
        import os
        gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "?")
        return [types.SimpleNamespace(outputs=[types.SimpleNamespace(
            text=" " + "".join(map(chr, p["prompt_token_ids"])) + " seed=" + str(sp.kwargs.get("seed")) + " gpu=" + gpu,
            finish_reason="stop")]) for p, sp in zip(prompts, sampling_params)]
"""
