"""Tests for models/vllm_engine.py against a fake ``vllm`` in sys.modules, and a real vLLM where a GPU has one."""

from __future__ import annotations

import doctest
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from fairtalk import FairtalkError, ResponderError, SpecError
from fairtalk.models import DecodingSettings, finish_reason, load_responder
from fairtalk.records import join_turns
from fairtalk.store import CachingResponder, RunStore

from .vllm_fakes import GREEDY, SAMPLED, TEMPLATE, FakeLLM, install_fake_vllm, params_of, prompts_of


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[FakeLLM]:
    return install_fake_vllm(monkeypatch)


def test_engine_options_go_to_vllm_and_greedy_is_temperature_zero(fake_vllm: type[FakeLLM]) -> None:
    spec = "vllm:org/tiny?tensor_parallel_size=2&gpu_memory_utilization=0.5&max_model_len=512&dtype=bfloat16&seed=3"
    with load_responder(spec, revision="abc123") as model:
        out = model.respond(["hello there", "how are you"], GREEDY, seeds=[5, 6])
    (llm,) = fake_vllm.instances
    assert llm.model == "org/tiny"
    assert llm.kwargs == {"tensor_parallel_size": 2, "gpu_memory_utilization": 0.5, "dtype": "bfloat16", "seed": 3,
                          "enforce_eager": False, "trust_remote_code": False, "max_model_len": 512,
                          "revision": "abc123"}  # fmt: skip
    assert len(llm.calls) == 1  # one engine call: vLLM batches inside it
    assert params_of(llm) == [{"n": 1, "max_tokens": 64, "temperature": 0.0}] * 2  # greedy: no seed, no top-k/top-p
    assert prompts_of(llm) == ["<bos>hello there", "<bos>how are you"]
    assert out == ["echo:<bos>hello there", "echo:<bos>how are you"] and [finish_reason(r) for r in out] == ["stop", "stop"]


def test_sampling_gives_each_item_its_own_seed_and_knobs(fake_vllm: type[FakeLLM]) -> None:
    settings = DecodingSettings(do_sample=True, temperature=0.7, top_k=20, top_p=0.9, max_new_tokens=30,
                                repetition_penalty=1.2, stop=("\nUser:", "###"))  # fmt: skip
    with load_responder("vllm:org/tiny") as model:
        model.respond(["a", "b", "c"], settings, seeds=[11, 12, 13])
    common = {"n": 1, "max_tokens": 30, "temperature": 0.7, "top_p": 0.9, "top_k": 20, "stop": ["\nUser:", "###"],
              "repetition_penalty": 1.2}  # fmt: skip
    assert params_of(fake_vllm.instances[0]) == [{**common, "seed": s} for s in (11, 12, 13)]


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


def test_doctests() -> None:
    from fairtalk.models import vllm_engine

    failures, n_tests = doctest.testmod(vllm_engine)
    assert failures == 0 and n_tests > 0


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
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", bos_token="<s>",
                                               eos_token="</s>", pad_token="</s>")  # fmt: skip
    tok.save_pretrained(root)
    config = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                                      bos_token_id=1, eos_token_id=2, pad_token_id=2)  # fmt: skip
    transformers.LlamaForCausalLM(config).save_pretrained(root)
    return str(root)
