"""Tests for models/vllm/_engine.py against a fake ``vllm`` in sys.modules, and a real vLLM where a GPU has one.

The fake is held to vLLM's real API as read in vLLM 0.33.0 (``vllm/entrypoints/llm.py``,
``vllm/sampling_params.py``, ``vllm/outputs.py``): ``StrictSamplingParams`` takes only
``SamplingParams`` field names and checks their ranges as vLLM does, ``StrictLLM`` takes only
``LLM``/``EngineArgs`` keywords and returns outputs with the real attribute names. The tests
marked "real vLLM" import the installed vllm package (no GPU needed) and check the adapter's
keywords and the stand-in against it; they skip where vllm does not import.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from fairtalk import FairtalkError, ResponderError, SpecError
from fairtalk.models import DecodingSettings, finish_reason, load_responder
from fairtalk.models.vllm._engine import VLLMOptions, sampling_kwargs
from fairtalk.records import join_turns
from fairtalk.store import CachingResponder, RunStore

from .vllm_fakes import GREEDY, SAMPLED, TEMPLATE, FakeLLM, FakeTokenizer, decode, install_fake_vllm, params_of, prompts_of
from .vllm_strict import (
    DTYPES,
    ENGINE_ERROR,
    LLM_KEYWORDS,
    SAMPLING_DEFAULTS,
    TOKENS_PROMPT_KEYS,
    CompletionOutput,
    RequestOutput,
    StrictLLM,
    StrictSamplingParams,
)


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[FakeLLM]:
    install_fake_vllm(monkeypatch)
    monkeypatch.setattr(sys.modules["vllm"], "LLM", StrictLLM)
    monkeypatch.setattr(sys.modules["vllm"], "SamplingParams", StrictSamplingParams)
    monkeypatch.setattr(StrictLLM, "chat_template", None)
    return StrictLLM


def test_the_stand_in_refuses_what_vllm_refuses() -> None:
    with pytest.raises(TypeError, match="max_new_tokens"):
        StrictSamplingParams(max_new_tokens=3)
    with pytest.raises(ValueError, match=r"temperature must be in \[0, 2\]"):
        StrictSamplingParams(temperature=2.5)
    with pytest.raises(ValueError, match="top_k must be"):
        StrictSamplingParams(top_k=1.0)
    assert StrictSamplingParams(seed=-1).seed is None and StrictSamplingParams(temperature=0.0, top_k=5).top_k == 0
    with pytest.raises(ValueError, match="may hang"):
        StrictLLM("org/tiny", data_parallel_size=2)
    with pytest.raises(TypeError, match="max_new_tokens"):
        StrictLLM("org/tiny", max_new_tokens=3)


def test_engine_options_go_to_vllm_and_greedy_is_temperature_zero(fake_vllm: type[FakeLLM]) -> None:
    spec = "vllm:org/tiny?tensor_parallel_size=2&gpu_memory_utilization=0.5&max_model_len=512&dtype=bfloat16&seed=3"
    with load_responder(spec, revision="abc123") as model:
        out = model.respond(["hello there", "how are you"], GREEDY, seeds=[5, 6])
    (llm,) = fake_vllm.instances
    assert llm.model == "org/tiny"
    assert llm.kwargs == {
        "tensor_parallel_size": 2,
        "gpu_memory_utilization": 0.5,
        "dtype": "bfloat16",
        "seed": 3,
        "enforce_eager": False,
        "trust_remote_code": False,
        "max_model_len": 512,
        "revision": "abc123",
    }
    assert len(llm.calls) == 1  # one engine call: vLLM batches inside it
    assert params_of(llm) == [{"n": 1, "max_tokens": 64, "temperature": 0.0}] * 2  # greedy: no seed, no top-k/top-p
    assert prompts_of(llm) == ["<bos>hello there", "<bos>how are you"]
    assert out == ["echo:<bos>hello there", "echo:<bos>how are you"] and [finish_reason(r) for r in out] == ["stop", "stop"]


def test_sampling_gives_each_item_its_own_seed_and_knobs(fake_vllm: type[FakeLLM]) -> None:
    settings = DecodingSettings(
        do_sample=True, temperature=0.7, top_k=20, top_p=0.9, max_new_tokens=30, repetition_penalty=1.2, stop=("\nUser:", "###")
    )
    with load_responder("vllm:org/tiny") as model:
        model.respond(["a", "b", "c"], settings, seeds=[11, 12, 13])
    common = {
        "n": 1,
        "max_tokens": 30,
        "temperature": 0.7,
        "top_p": 0.9,
        "top_k": 20,
        "stop": ["\nUser:", "###"],
        "repetition_penalty": 1.2,
    }
    assert params_of(fake_vllm.instances[0]) == [{**common, "seed": s} for s in (11, 12, 13)]


def test_seeds_stay_seeds_in_vllm(fake_vllm: type[FakeLLM]) -> None:
    # vLLM reads seed=-1 as no seed at all: every seed is taken modulo 2**63 instead
    with load_responder("vllm:org/tiny") as model:
        model.respond(["a", "b"], SAMPLED, seeds=[-1, 2**64 + 5])
    seeds = [sp.seed for _, params in fake_vllm.instances[0].calls for sp in params]
    assert seeds == [2**63 - 1, 5]


def test_a_temperature_vllm_refuses_is_a_spec_error(fake_vllm: type[FakeLLM]) -> None:
    with load_responder("vllm:org/tiny") as model:
        with pytest.raises(SpecError, match=r"temperature must be at most 2 .*got 2.5"):
            model.respond(["a"], DecodingSettings(do_sample=True, temperature=2.5), seeds=[0])
        assert model.respond(["a"], DecodingSettings(do_sample=True, temperature=2.0), seeds=[0]) == ["echo:<bos>a"]
        assert model.respond(["a"], DecodingSettings(temperature=2.5), seeds=[0]) == ["echo:<bos>a"]  # greedy ignores it
    assert len(fake_vllm.instances[0].calls) == 2  # the refused one never reached vLLM


def test_an_item_vllm_ends_with_error_fails_alone(fake_vllm: type[FakeLLM]) -> None:
    contexts = ["a", f"b {ENGINE_ERROR}", "c"]
    with load_responder("vllm:org/tiny") as model:
        each = model.respond_each(contexts, GREEDY, seeds=[0, 1, 2])
        with pytest.raises(ResponderError, match="vLLM ended the request with finish_reason='error'"):
            model.respond(contexts, GREEDY, seeds=[0, 1, 2])
    assert each[0] == "echo:<bos>a" and each[2] == "echo:<bos>c"
    assert isinstance(each[1], ResponderError) and "finish_reason='error'" in str(each[1])
    assert len(fake_vllm.instances[0].calls) == 2  # one call each: the failed item needs no second try


def test_length_finish_reason_means_cut_at_the_token_limit(fake_vllm: type[FakeLLM]) -> None:
    with load_responder("vllm:org/tiny") as model:
        (reply,) = model.respond(["a rather long context"], DecodingSettings(max_new_tokens=4), seeds=[0])
    assert reply == "ech" and finish_reason(reply) == "length"


def test_conversation_goes_through_the_chat_template_with_the_system_prompt(fake_vllm: type[FakeLLM]) -> None:
    fake_vllm.chat_template = TEMPLATE
    conversation = join_turns(["hi", "hello!", "how are you?"])
    with load_responder("vllm:org/chat", system_prompt="Be kind.") as chat:
        chat.respond([conversation], GREEDY, seeds=[0])
        fingerprint = chat.fingerprint
    # the template writes its own special tokens: no BOS is added before it
    assert prompts_of(fake_vllm.instances[0]) == ["<system>Be kind.<user>hi<assistant>hello!<user>how are you?<assistant>"]
    assert "chat_template" in fingerprint and "Be kind." in fingerprint
    with load_responder("vllm:org/chat?chat_template=never", system_prompt="Be kind.") as plain:
        plain.respond([conversation], GREEDY, seeds=[0])
        assert "chat_template" not in plain.fingerprint
    assert prompts_of(fake_vllm.instances[1]) == ["<bos>Be kind.\n\nhi\nhello!\nhow are you?"]


def test_a_prompt_too_long_keeps_its_last_tokens(fake_vllm: type[FakeLLM]) -> None:
    with load_responder("vllm:org/tiny?max_model_len=20") as model:
        model.respond(["x" * 50 + "the end"], DecodingSettings(max_new_tokens=8), seeds=[0])
    (prompt,) = prompts_of(fake_vllm.instances[0])
    assert prompt == "xxxxxthe end"  # 20 - 8 tokens


def test_fingerprint_names_model_revision_and_what_changes_outputs(fake_vllm: type[FakeLLM], tmp_path: Path) -> None:
    with load_responder("vllm:org/tiny?revision=v2&dtype=float16&tensor_parallel_size=2&seed=9&gpu_memory_utilization=0.4") as m:
        fp = m.fingerprint
    assert fp.startswith("vllm:org/tiny ") and '"revision":"v2"' in fp and '"dtype":"float16"' in fp
    assert '"tensor_parallel_size":2' in fp and "seed" not in fp and "gpu_memory" not in fp
    with load_responder("vllm:org/tiny") as default:
        assert default.fingerprint == 'vllm:org/tiny {"dtype":"auto"}'
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with load_responder(f"vllm:{folder}?name=mine") as local:
        assert local.fingerprint.startswith('vllm:mine {"dtype":"auto","weights":"') and local.input_paths == (str(folder),)


def test_beam_search_and_seed_count_are_refused(fake_vllm: type[FakeLLM]) -> None:
    with load_responder("vllm:org/tiny") as model:
        with pytest.raises(SpecError, match=r"beam search \(num_beams > 1\) is not supported"):
            model.respond(["a"], DecodingSettings(num_beams=2), seeds=[0])
        with pytest.raises(SpecError, match="got 2 contexts but 1 seeds"):
            model.respond(["a", "b"], GREEDY, seeds=[0])
        assert model.respond([], GREEDY, seeds=[]) == []


def test_stream_runs_chunks_and_a_bad_item_fails_alone(fake_vllm: type[FakeLLM]) -> None:
    contexts = [f"item {i}" for i in range(5)] + ["BOOM"] + ["item 6"]
    with load_responder("vllm:org/tiny?chunk_size=3") as model:
        items = list(model.respond_stream(contexts, GREEDY, seeds=list(range(7))))
        each = model.respond_each(contexts, GREEDY, seeds=list(range(7)))
        with pytest.raises(ResponderError, match="generation failed: ValueError: the prompt went boom"):
            model.respond(contexts, GREEDY, seeds=list(range(7)))
    assert sorted(i for i, _ in items) == list(range(7))
    # chunk 2 holds BOOM: it fails, is tried whole and by halves ([3], [4, 5], [4], [5]), then chunk 3 runs
    assert [len(p) for p, _ in fake_vllm.instances[0].calls][:8] == [3, 3, 3, 1, 2, 1, 1, 1]
    for out in (dict(items), dict(enumerate(each))):
        assert isinstance(out[5], ResponderError) and "boom" in str(out[5])
        assert [out[i] for i in (0, 3, 4, 6)] == ["echo:<bos>item 0", "echo:<bos>item 3", "echo:<bos>item 4", "echo:<bos>item 6"]


def test_run_store_streams_answers_and_serves_them_again(fake_vllm: type[FakeLLM]) -> None:
    store = RunStore(":memory:")
    with load_responder("vllm:org/tiny?chunk_size=2") as model:
        cached = CachingResponder(model, store)
        first = cached.respond_each(["a", "b", "c"], SAMPLED, seeds=[1, 2, 3])
        again = cached.respond_each(["a", "b", "c"], SAMPLED, seeds=[1, 2, 3])
    assert first == again == ["echo:<bos>a", "echo:<bos>b", "echo:<bos>c"]
    assert len(fake_vllm.instances[0].calls) == 2  # two chunks, then everything from the store
    store.close()


def test_missing_vllm_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(FairtalkError, match=r"the vllm: adapter needs vLLM on a CUDA machine: pip install 'fairtalk\[vllm\]'"):
        load_responder("vllm:org/tiny")


def test_load_failure_is_a_fairtalk_error(fake_vllm: type[FakeLLM]) -> None:
    with pytest.raises(FairtalkError, match="cannot load vllm model 'missing/model': OSError: no such model"):
        load_responder("vllm:missing/model")


def test_spec_errors(fake_vllm: type[FakeLLM]) -> None:
    with pytest.raises(
        SpecError, match=r"unknown option 'tensor_paralel_size' for vllm:org/tiny; did you mean 'tensor_parallel_size'"
    ):
        load_responder("vllm:org/tiny?tensor_paralel_size=2")
    with pytest.raises(SpecError, match=r"choose from: chat_template, chunk_size, data_parallel_size"):
        load_responder("vllm:org/tiny?colour=red")
    with pytest.raises(SpecError, match=r"gpu_memory_utilization must be in \(0, 1\], got 1.5"):
        load_responder("vllm:org/tiny?gpu_memory_utilization=1.5")
    with pytest.raises(SpecError, match="data_parallel_size must be >= 1, got 0"):
        load_responder("vllm:org/tiny", data_parallel_size="0")
    with pytest.raises(SpecError, match=r"option dtype='fp8' for vllm:org/tiny is not one of the choices"):
        load_responder("vllm:org/tiny?dtype=fp8")
    with pytest.raises(SpecError, match="option max_model_len='long' for vllm:org/tiny is not an integer"):
        load_responder("vllm:org/tiny?max_model_len=long")
    with pytest.raises(SpecError, match="malformed vllm spec 'vllm:'"):
        load_responder("vllm:")
    assert not fake_vllm.instances


# --- the real vllm package, no GPU needed ---------------------------------------------------------------------------


def _real(module: str) -> Any:
    """``module`` of the installed vllm, or skip: vllm is absent, or present but ``module`` does not import here."""
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vllm is not installed")
    try:
        return importlib.import_module(module)
    except Exception as exc:  # a partial install (no GPU stack) may lack what the module imports
        pytest.skip(f"vllm is installed but {module} does not import: {type(exc).__name__}: {exc}")


def _fields(params: Any) -> dict[str, Any]:
    """The SAMPLING_DEFAULTS fields of a SamplingParams (real or stand-in); top_k -1 and 0 both mean off."""
    out = {name: getattr(params, name) for name in SAMPLING_DEFAULTS}
    out["top_k"] = max(out["top_k"], 0)
    return out


SETTINGS = {
    "greedy": DecodingSettings(max_new_tokens=20),
    "greedy with stop strings and a penalty": DecodingSettings(
        max_new_tokens=20, stop=("\nUser:", "###"), repetition_penalty=1.2
    ),
    "sampled with top-k, top-p, temperature": DecodingSettings(
        do_sample=True, temperature=0.7, top_k=20, top_p=0.9, max_new_tokens=30
    ),
    "sampled with vLLM's defaults": DecodingSettings(do_sample=True),
}


@pytest.mark.parametrize("name", list(SETTINGS))
def test_real_vllm_sampling_params_take_the_adapters_keywords(name: str) -> None:
    vllm_sampling = _real("vllm.sampling_params")
    settings = SETTINGS[name]
    kwargs = sampling_kwargs(settings, seed=-1)
    real = vllm_sampling.SamplingParams(**kwargs)
    assert _fields(real) == _fields(StrictSamplingParams(**kwargs))
    assert real.n == 1 and real.max_tokens == settings.max_new_tokens
    assert real.stop == list(settings.stop) and real.include_stop_str_in_output is False  # stop strings left out
    assert real.repetition_penalty == (settings.repetition_penalty or 1.0)
    if settings.do_sample:
        assert real.sampling_type == vllm_sampling.SamplingType.RANDOM_SEED and real.seed == 2**63 - 1
        assert real.temperature == settings.temperature and real.top_p == (settings.top_p or 1.0)
        assert max(real.top_k, 0) == (settings.top_k or 0)
    else:
        assert real.sampling_type == vllm_sampling.SamplingType.GREEDY and real.seed is None


def test_real_vllm_sampling_params_refuse_what_the_stand_in_refuses() -> None:
    SamplingParams = _real("vllm.sampling_params").SamplingParams
    assert _fields(SamplingParams()) == _fields(StrictSamplingParams())
    candidates = [
        {"max_new_tokens": 3},
        {"temperature": 2.0},
        {"temperature": 2.5},
        {"temperature": -0.1},
        {"top_k": 1.0},
        {"top_k": -1},
        {"top_k": -2},
        {"top_p": 0.0},
        {"max_tokens": 0},
        {"repetition_penalty": 0.0},
        {"seed": -1},
        {"stop": ["", "x"]},
        {"temperature": 0.0, "top_k": 5, "top_p": 0.5},
    ]
    for kwargs in candidates:
        try:
            real = SamplingParams(**kwargs)
        except Exception:  # vLLM's VLLMValidationError (not a ValueError in 0.33), or TypeError
            with pytest.raises((TypeError, ValueError)):
                StrictSamplingParams(**kwargs)
        else:
            assert _fields(real) == _fields(StrictSamplingParams(**kwargs)), kwargs


def test_real_vllm_llm_takes_the_adapters_engine_keywords_and_prompts() -> None:
    llm_module = _real("vllm.entrypoints.llm")
    arg_utils, inputs = _real("vllm.engine.arg_utils"), _real("vllm.inputs")
    LLM = llm_module.LLM
    accepted = set(inspect.signature(LLM.__init__).parameters) | {f.name for f in dataclasses.fields(arg_utils.EngineArgs)}
    assert LLM_KEYWORDS <= accepted, sorted(LLM_KEYWORDS - accepted)
    every = VLLMOptions(max_model_len=256, max_num_seqs=8, quantization="awq", revision="main", tokenizer="tok")
    assert set(every.engine_kwargs()) | {"distributed_executor_backend"} <= LLM_KEYWORDS
    assert {"auto", "float16", "bfloat16", "float32"} <= DTYPES
    generate = inspect.signature(LLM.generate).parameters
    assert list(generate)[1:3] == ["prompts", "sampling_params"]
    assert generate["use_tqdm"].kind is inspect.Parameter.KEYWORD_ONLY
    assert callable(LLM.get_tokenizer) and "self.model_config =" in inspect.getsource(LLM.__init__)
    keys = inputs.TokensPrompt.__required_keys__ | inputs.TokensPrompt.__optional_keys__
    assert "prompt_token_ids" in inputs.TokensPrompt.__required_keys__ and TOKENS_PROMPT_KEYS <= keys
    source = inspect.getsource(LLM.__init__)
    assert "data_parallel_size" in source and "may hang" in source, "vLLM no longer refuses LLM(data_parallel_size=N)"


def test_real_vllm_outputs_have_what_the_adapter_reads() -> None:
    outputs = _real("vllm.outputs")
    real_fields = {f.name for f in dataclasses.fields(outputs.CompletionOutput)}
    assert {f.name for f in dataclasses.fields(CompletionOutput)} <= real_fields
    assert {f.name for f in dataclasses.fields(RequestOutput)} <= set(
        inspect.signature(outputs.RequestOutput.__init__).parameters
    )
    reasons = set(_real("vllm.v1.engine").FINISH_REASON_STRINGS)
    assert {"stop", "length", "error", "abort"} <= reasons


def test_real_sampling_params_and_outputs_through_the_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter with vLLM's own SamplingParams and output classes; only the engine is a stand-in."""
    SamplingParams = _real("vllm.sampling_params").SamplingParams
    outputs = _real("vllm.outputs")
    seen: list[Any] = []

    class EchoLLM:
        def __init__(self, model: str, **kwargs: Any) -> None:
            self.model_config = types.SimpleNamespace(max_model_len=256)

        def get_tokenizer(self) -> FakeTokenizer:
            return FakeTokenizer(None)

        def generate(
            self, prompts: list[dict[str, list[int]]], sampling_params: list[Any], *, use_tqdm: bool = True
        ) -> list[Any]:
            found = []
            for i, (prompt, params) in enumerate(zip(prompts, sampling_params)):
                assert isinstance(params, SamplingParams)
                seen.append(params)
                answer = f" {decode(prompt['prompt_token_ids'])} "
                text, reason = answer[: params.max_tokens], "length" if len(answer) > params.max_tokens else "stop"
                done = outputs.CompletionOutput(
                    index=0,
                    text=text,
                    token_ids=[ord(c) for c in text],
                    cumulative_logprob=None,
                    logprobs=None,
                    finish_reason=reason,
                    stop_reason=None,
                )
                found.append(
                    outputs.RequestOutput(
                        request_id=str(i),
                        prompt=None,
                        prompt_token_ids=prompt["prompt_token_ids"],
                        prompt_logprobs=None,
                        outputs=[done],
                        finished=True,
                    )
                )
            return found

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=EchoLLM, SamplingParams=SamplingParams))
    with load_responder("vllm:org/tiny") as model:
        greedy = model.respond(["hello", "a much longer context"], DecodingSettings(max_new_tokens=12), seeds=[1, 2])
        sampled = model.respond_each(["hi"], SAMPLED, seeds=[-1])
    assert greedy == ["<bos>hello", "<bos>a much"] and [finish_reason(r) for r in greedy] == ["stop", "length"]
    assert sampled == ["<bos>hi"] and finish_reason(sampled[0]) == "stop"
    assert [p.seed for p in seen] == [None, None, 2**63 - 1] and [p.top_k for p in seen] == [0, 0, 20]


# --- a real vLLM on a GPU ------------------------------------------------------------------------------------------


def _has_cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None or not _has_cuda(), reason="needs vLLM and a CUDA GPU")
def test_real_vllm_generates(tmp_path: Path) -> None:
    """``FAIRTALK_VLLM_TEST_MODEL`` (a small model on disk or in the hub cache), else a tiny random Llama made here."""
    model = os.environ.get("FAIRTALK_VLLM_TEST_MODEL") or _tiny_llama(tmp_path)
    spec = f"vllm:{model}?gpu_memory_utilization=0.3&max_model_len=256&enforce_eager=true"
    with load_responder(spec) as vllm_model:
        greedy = vllm_model.respond(["hello there", "how are you"], DecodingSettings(max_new_tokens=8), seeds=[0, 1])
        again = vllm_model.respond(["hello there", "how are you"], DecodingSettings(max_new_tokens=8), seeds=[5, 6])
        sampled = vllm_model.respond(["hello there"] * 2, SAMPLED, seeds=[3, 3])
        each = vllm_model.respond_each(["hello there"], DecodingSettings(max_new_tokens=2), seeds=[0])
    assert greedy == again and sampled[0] == sampled[1]  # greedy ignores seeds; one seed, one sample
    assert all(finish_reason(r) in {"stop", "length"} for r in greedy + sampled)
    assert finish_reason(each[0]) in {"stop", "length"}


def _tiny_llama(root: Path) -> str:
    """A randomly initialised two-layer Llama with a word-level tokenizer, saved for vLLM to load."""
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    words = "hello there how are you i am fine thanks and what about".split()
    vocab = {t: i for i, t in enumerate(["<unk>", "<s>", "</s>", *words])}
    backend = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="</s>"
    )
    tok.save_pretrained(root)
    config = transformers.LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(root)
    return str(root)
