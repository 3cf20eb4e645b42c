"""Tests for models/_hf.py against a tiny random GPT-2 and T5 saved to a temp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from fairtalk import FairtalkError, SpecError  # noqa: E402
from fairtalk.models import DecodingSettings, load_responder  # noqa: E402

SENTENCES = [
    "he is a doctor and she is a nurse",
    "my mother works at home and my father works in the city",
    "what do you think about the new job",
    "i love my family and my career",
    "the man went to the store to buy some bread",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}"
)


def _tokenizer(path: Path, *, chat: bool) -> transformers.PreTrainedTokenizerFast:
    from tokenizers import Tokenizer, models, pre_tokenizers

    specials = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
    words = sorted({w for s in SENTENCES for w in s.split()} | {"[user]", "[assistant]", "[", "]"})
    vocab = {t: i for i, t in enumerate(specials + words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]"
    )
    if chat:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    return fast


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gpt2")
    tok = _tokenizer(path, chat=False)
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(tok),
        n_positions=64,
        n_layer=2,
        n_head=2,
        n_embd=32,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    transformers.GPT2LMHeadModel(config).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def gpt2_chat_dir(tmp_path_factory: pytest.TempPathFactory, gpt2_dir: Path) -> Path:
    path = tmp_path_factory.mktemp("gpt2chat")
    _tokenizer(path, chat=True)
    for f in gpt2_dir.iterdir():
        if f.name in {"config.json", "model.safetensors", "generation_config.json"}:
            (path / f.name).write_bytes(f.read_bytes())
    return path


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("t5")
    tok = _tokenizer(path, chat=False)
    torch.manual_seed(0)
    config = transformers.T5Config(
        vocab_size=len(tok),
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    transformers.T5ForConditionalGeneration(config).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def gpt2(gpt2_dir: Path):
    with load_responder(f"hf:{gpt2_dir}", device="cpu", batch_size=2) as model:
        yield model


GREEDY = DecodingSettings(max_new_tokens=6)
SAMPLED = DecodingSettings(do_sample=True, temperature=1.0, top_k=20, top_p=0.95, max_new_tokens=6)


def test_greedy_is_deterministic_and_batching_keeps_order(gpt2) -> None:
    contexts = SENTENCES
    batched = gpt2.respond(contexts, GREEDY, seeds=[0] * 5)
    assert batched == gpt2.respond(contexts, GREEDY, seeds=[0] * 5)
    singles = [gpt2.respond([c], GREEDY, seeds=[0])[0] for c in contexts]
    assert batched == singles
    reversed_out = gpt2.respond(contexts[::-1], GREEDY, seeds=[0] * 5)
    assert reversed_out == batched[::-1]
    assert all(isinstance(r, str) and r == r.strip() for r in batched)


def test_sampling_is_seeded_per_item_regardless_of_batch(gpt2) -> None:
    a = gpt2.respond(SENTENCES, SAMPLED, seeds=[1, 2, 3, 4, 5])
    b = gpt2.respond(SENTENCES[2:], SAMPLED, seeds=[3, 4, 5])
    assert a[2:] == b
    c = gpt2.respond([SENTENCES[0]] * 4, SAMPLED, seeds=[7, 8, 9, 10])
    assert len(set(c)) > 1  # different seeds, different samples


def test_max_new_tokens_is_respected(gpt2) -> None:
    out = gpt2.respond(SENTENCES, DecodingSettings(max_new_tokens=3), seeds=[0] * 5)
    assert all(len(r.split()) <= 3 for r in out)
    out = gpt2.respond(SENTENCES, DecodingSettings(do_sample=True, max_new_tokens=2), seeds=range(5))
    assert all(len(r.split()) <= 2 for r in out)


def test_beam_search_runs(gpt2) -> None:
    out = gpt2.respond(SENTENCES[:2], DecodingSettings(num_beams=2, max_new_tokens=4), seeds=[0, 0])
    assert len(out) == 2


def test_chat_template_is_used_and_fingerprinted(gpt2_chat_dir: Path, gpt2) -> None:
    with load_responder(f"hf:{gpt2_chat_dir}?device=cpu") as chat:
        assert chat.use_chat_template
        assert "chat_template" in chat.fingerprint
        assert chat.fingerprint != gpt2.fingerprint
        assert chat._prompts(["hi"]) == ["[user] hi [assistant]"]
        assert len(chat.respond(SENTENCES[:2], GREEDY, seeds=[0, 0])) == 2
    with load_responder(f"hf:{gpt2_chat_dir}", device="cpu", chat_template="never") as plain:
        assert not plain.use_chat_template


def test_system_prompt_is_the_system_turn_or_a_paragraph_and_is_fingerprinted(gpt2_chat_dir: Path) -> None:
    with load_responder(f"hf:{gpt2_chat_dir}?device=cpu", system_prompt="Be brief.") as chat:
        assert chat._prompts(["hi"]) == ["[system] Be brief. [user] hi [assistant]"]
        with load_responder(f"hf:{gpt2_chat_dir}?device=cpu") as bare:
            assert chat.fingerprint != bare.fingerprint
    with load_responder(f"hf:{gpt2_chat_dir}?device=cpu&chat_template=never&system_prompt=Be+brief.") as plain:
        assert plain._prompts(["hi"]) == ["Be brief.\n\nhi"]


def test_a_conversation_goes_through_the_chat_template_turn_by_turn(gpt2_chat_dir: Path) -> None:
    from fairtalk import join_turns

    conversation = join_turns(["hi", "hello", "bye"])
    with load_responder(f"hf:{gpt2_chat_dir}?device=cpu") as chat:
        assert chat._prompts([conversation]) == ["[user] hi [assistant] hello [user] bye [assistant]"]
    with load_responder(f"hf:{gpt2_chat_dir}?device=cpu&chat_template=never") as plain:
        assert plain._prompts([conversation]) == ["hi\nhello\nbye"]


def test_seq2seq_t5(t5_dir: Path) -> None:
    with load_responder(f"hf:{t5_dir}", device="cpu") as t5:
        assert t5.is_encoder_decoder
        out = t5.respond(SENTENCES, GREEDY, seeds=[0] * 5)
        assert out == [t5.respond([c], GREEDY, seeds=[0])[0] for c in SENTENCES]
        assert all(len(r.split()) <= 6 for r in out)
        s1 = t5.respond(SENTENCES, SAMPLED, seeds=[1, 2, 3, 4, 5])
        assert s1[1:2] == t5.respond(SENTENCES[1:2], SAMPLED, seeds=[2])


def test_fingerprint_is_stable_and_tracks_weights(gpt2_dir: Path, gpt2, tmp_path: Path) -> None:
    with load_responder(f"hf:{gpt2_dir}", device="cpu") as again:
        assert again.fingerprint == gpt2.fingerprint
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in gpt2_dir.iterdir():
        copy.joinpath(f.name).write_bytes(f.read_bytes())
    config = copy / "config.json"
    config.write_text(config.read_text().replace('"resid_pdrop": 0.1', '"resid_pdrop": 0.2'))
    with load_responder(f"hf:{copy}", device="cpu") as changed:
        assert changed.fingerprint.split(" ", 1)[1] != gpt2.fingerprint.split(" ", 1)[1]


def test_errors(tmp_path: Path) -> None:
    # review: a folder that does not exist was transformers' "Repo id must be in the form 'repo_name'..."
    for given, named in ((tmp_path / "nope", tmp_path / "nope"), ("./nope/model", "./nope/model"), ("~/nope-ft", "nope-ft")):
        with pytest.raises(SpecError, match="no such folder: .*" + str(named)):
            load_responder(f"hf:{given}")
    with pytest.raises(SpecError, match=r"option device='tpu' for hf:.* is not one of the choices; did you mean 'cpu'"):
        load_responder(f"hf:{tmp_path}", device="tpu")
    with pytest.raises(SpecError, match="unknown option 'colour'"):
        load_responder(f"hf:{tmp_path}?colour=red")


def test_finish_reason_says_whether_the_token_limit_cut_the_answer(gpt2_dir: Path, tmp_path: Path) -> None:
    with load_responder(f"hf:{gpt2_dir}", device="cpu") as model:
        cut = model.respond(SENTENCES, GREEDY, seeds=[0] * 5)
    assert [r.finish_reason for r in cut] == ["length"] * 5  # a random model never says its end token in 6
    eager = tmp_path / "eager"
    _tokenizer(eager, chat=False)
    weights = transformers.GPT2LMHeadModel.from_pretrained(gpt2_dir)
    weights.generation_config.sequence_bias = [[[weights.config.eos_token_id], 50.0]]  # says [EOS] at once
    weights.save_pretrained(eager)
    with load_responder(f"hf:{eager}", device="cpu", batch_size=2) as model:
        done = model.respond(SENTENCES, GREEDY, seeds=[0] * 5)
    assert [(str(r), r.finish_reason) for r in done] == [("", "stop")] * 5


def test_a_stop_string_ends_the_answer_before_it(gpt2) -> None:  # noqa: ANN001
    plain = gpt2.respond(SENTENCES[:1], GREEDY, seeds=[0])[0]
    word = plain.split()[1]
    stopped = gpt2.respond(SENTENCES[:1], DecodingSettings(max_new_tokens=6, stop=(word,)), seeds=[0])[0]
    assert word not in stopped and plain.startswith(stopped) and stopped.finish_reason == "stop"
    penalised = gpt2.respond(SENTENCES[:1], DecodingSettings(max_new_tokens=6, repetition_penalty=5.0), seeds=[0])[0]
    assert penalised != plain  # the random model repeats itself; a strong penalty changes that


def _greedy_ids(model, sentence: str, n: int) -> list[int]:  # noqa: ANN001
    """The ids the adapter's model says after ``sentence`` under greedy decoding, ``n`` of them."""
    enc = model.tokenizer([sentence], return_tensors="pt")
    out = model.model.generate(**enc, max_new_tokens=n, do_sample=False, pad_token_id=model.tokenizer.pad_token_id)
    return out[0, enc["input_ids"].shape[1] :].tolist()


def test_an_end_token_as_the_last_allowed_token_is_a_stop_and_one_token_less_is_length(gpt2_dir: Path) -> None:
    with load_responder(f"hf:{gpt2_dir}", device="cpu", batch_size=2) as model:
        said_by = {s: _greedy_ids(model, s, 8) for s in SENTENCES}
        found = [(s, said, k) for s, said in said_by.items() for k in range(1, 8) if said[k] not in said[:k]]
        sentence, said, k = found[0]  # a token it says first as its (k + 1)-th
        other = next(s for s in SENTENCES if s != sentence)
        other_says_it = said[k] in _greedy_ids(model, other, k + 1)
        model.model.generation_config.eos_token_id = [said[k]]  # ... is now its end token
        at_limit = model.respond([sentence], DecodingSettings(max_new_tokens=k + 1), seeds=[0])[0]
        short = model.respond([sentence], DecodingSettings(max_new_tokens=k), seeds=[0])[0]
        sampled = model.respond([sentence], DecodingSettings(do_sample=True, top_k=1, max_new_tokens=k + 1), seeds=[3])[0]
        batch = model.respond([sentence, other], DecodingSettings(max_new_tokens=k + 1), seeds=[0, 0])
    assert at_limit.finish_reason == "stop" and sampled.finish_reason == "stop"  # the answer ended: not cut off
    assert short.finish_reason == "length"
    assert [r.finish_reason for r in batch] == ["stop", "stop" if other_says_it else "length"]


def test_the_tokenizers_end_token_mid_answer_is_no_stop_when_generation_ends_on_another(gpt2_dir: Path, tmp_path: Path) -> None:
    """A chat model whose end of turn is not the tokenizer's end token runs on past the latter to the limit."""
    path = tmp_path / "eot"
    tok = _tokenizer(path, chat=False)
    weights = transformers.GPT2LMHeadModel.from_pretrained(gpt2_dir)
    weights.generation_config.sequence_bias = [[[tok.eos_token_id], 50.0]]  # says the tokenizer's [EOS] every time
    weights.generation_config.eos_token_id = [tok.unk_token_id]  # but generation ends on another token
    weights.save_pretrained(path)
    with load_responder(f"hf:{path}", device="cpu") as model:
        out = model.respond(SENTENCES[:2], GREEDY, seeds=[0, 0])
    assert [(str(r), r.finish_reason) for r in out] == [("", "length")] * 2  # six tokens said: the limit cut it


def test_a_seq2seq_start_token_that_is_also_the_end_token_is_no_stop(tmp_path: Path) -> None:
    """BART-style models start decoding with their end token; that token is not the answer's end."""
    path = tmp_path / "bartish"
    tok = _tokenizer(path, chat=False)
    torch.manual_seed(0)
    config = transformers.T5Config(
        vocab_size=len(tok),
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,
    )
    weights = transformers.T5ForConditionalGeneration(config)
    weights.generation_config.sequence_bias = [[[tok.eos_token_id], -50.0]]  # never says it after the start
    weights.save_pretrained(path)
    with load_responder(f"hf:{path}", device="cpu") as model:
        out = model.respond(SENTENCES, GREEDY, seeds=[0] * 5)
    assert [r.finish_reason for r in out] == ["length"] * 5


def test_a_model_that_cannot_be_fetched_is_one_error_without_the_hub_s_log_lines(tmp_path: Path) -> None:
    """No network here: huggingface_hub logs each failed request and retry; the CLI shows fairtalk's error alone."""
    import subprocess
    import sys

    # the hub's retries without their waits (its backoff sleeps, 1 s to 8 s each)
    launch = (
        "import sys, time; time.sleep = lambda seconds: None; from fairtalk.cli import main; sys.argv[0] = 'fairtalk'; main()"
    )
    argv = ["audit", "--model", "hf:this-model/does-not-exist", "--pairs", "5", "-o", str(tmp_path / "y")]
    done = subprocess.run([sys.executable, "-c", launch, *argv], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 2, done.stderr
    assert "error: cannot load hf model 'this-model/does-not-exist'" in done.stderr
    assert "thrown while requesting" not in done.stderr and "Retrying in" not in done.stderr, done.stderr
    assert not (tmp_path / "y").exists()


def test_the_hub_s_log_lines_of_a_load_go_to_the_debug_log_and_its_logging_is_put_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging
    import time

    import huggingface_hub  # noqa: F401 - its logger's handler is set up on import

    hub = logging.getLogger("huggingface_hub")
    before = (list(hub.handlers), hub.propagate)
    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # the hub's retries without their waits
    with caplog.at_level(logging.DEBUG, logger="fairtalk"), pytest.raises(FairtalkError, match="cannot load hf model"):
        load_responder("hf:this-model/does-not-exist")
    assert (list(hub.handlers), hub.propagate) == before
    lines = [r.getMessage() for r in caplog.records if r.name == "fairtalk.models._hf" and r.levelno == logging.DEBUG]
    assert any(line.startswith("huggingface_hub") and "thrown while requesting" in line for line in lines), lines
    assert not [r for r in caplog.records if r.name.startswith("huggingface_hub")]


def test_a_token_limit_of_the_models_positions_is_an_error_before_any_answer(gpt2_dir: Path, tmp_path: Path) -> None:
    """Review: 256 new tokens on a 64-position model failed each side (IndexError), stored as failures; now one error."""
    from fairtalk.store import CachingResponder, RunStore

    with load_responder(f"hf:{gpt2_dir}", device="cpu") as model:
        assert model.respond(SENTENCES[:1], DecodingSettings(max_new_tokens=63), seeds=[0])  # one position left for it
        for limit in (64, 256):
            with pytest.raises(SpecError, match=rf"reads at most 64 tokens.* max_new_tokens={limit} \(--max-new-tokens\)"):
                model.respond(SENTENCES[:1], DecodingSettings(max_new_tokens=limit), seeds=[0])
        with RunStore(tmp_path / "store.sqlite") as store:
            cached = CachingResponder(model, store)
            with pytest.raises(SpecError, match="leaves no room for the prompt"):
                cached.respond_each(SENTENCES, DecodingSettings(max_new_tokens=256), seeds=[0] * 5)
            assert cached.n_errors == 0 and cached.n_generated == 0


def test_prompts_cut_counts_the_tokens_cut_from_the_left(gpt2_chat_dir: Path) -> None:
    with load_responder(f"hf:{gpt2_chat_dir}", device="cpu", system_prompt="he is a doctor") as model:
        # [system] he is a doctor [user] CONTEXT [assistant]: 7 tokens besides the context's
        lengths = [len(s.split()) + 7 for s in SENTENCES]
        assert model.prompts_cut(SENTENCES, DecodingSettings(max_new_tokens=8)) == [0] * 5
        assert model.prompts_cut(SENTENCES, DecodingSettings(max_new_tokens=60)) == [n - 4 for n in lengths]
        assert model.prompts_cut([], DecodingSettings(max_new_tokens=60)) == []


def test_audit_warns_with_the_pairs_whose_prompt_was_cut_and_again_from_the_store(gpt2_chat_dir: Path, tmp_path: Path) -> None:
    """Review: a prompt longer than the positions less max_new_tokens lost its start (the system prompt) without a word."""
    import fairtalk
    from audit_toys import write_corpus

    options = {
        "model": f"hf:{gpt2_chat_dir}",
        "model_args": {"device": "cpu", "system_prompt": "be kind"},
        "corpus": f"text:{write_corpus(tmp_path)}",
        "axes": ("gender",),
        "n_pairs": 6,
        "measures": ("length",),
        "n_resamples": 20,
        "store": str(tmp_path / "store.sqlite"),
    }
    for _ in range(2):  # the second run's answers all come from the store
        run = fairtalk.audit(**options, settings=DecodingSettings(max_new_tokens=60))  # type: ignore[arg-type]
        said = [w for w in run.results["gender"].warnings if "prompts" in w]
        assert len(said) == 1 and said[0].startswith("the prompts of 6 of 6 pairs (6 on side a, 6 on side b;"), said
        assert "--max-new-tokens" in said[0] and "--turns" in said[0]
    assert run.axes["gender"].generation.n_cached == 12


def test_audit_s_model_line_and_its_cut_prompt_warning_fit_80_columns(gpt2_chat_dir: Path, tmp_path: Path) -> None:
    """Review: the `model …` line ran 127 columns for a GGUF model, its settings' JSON one word without a space."""
    import json
    import os
    import subprocess
    import sys

    from rich.cells import cell_len

    from audit_toys import write_corpus

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    env.pop("FORCE_COLOR", None)
    argv = ["audit", "--model", f"hf:{gpt2_chat_dir}?device=cpu", "--system-prompt", "be kind and helpful to everyone"]
    argv += ["--corpus", f"text:{write_corpus(tmp_path)}", "--axis", "gender", "--pairs", "4", "--measures", "length"]
    argv += ["--resamples", "20", "--max-new-tokens", "60", "-o", str(tmp_path / "run")]
    done = subprocess.run(
        [sys.executable, "-m", "fairtalk.cli", *argv], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    recorded = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["model"]
    assert len(recorded) > 100  # the model line would not fit 80 columns unwrapped
    wide = [line for line in done.stdout.splitlines() if cell_len(line) > 80 and " " in line.strip()]
    assert not wide, done.stdout
    said = " ".join(done.stdout.split())
    assert f"model {recorded.split(' ', 1)[0]} {{" in said and '"system_prompt": "be kind and helpful to everyone"' in said
    assert "gender: warning: the prompts of 4 of 4 pairs (4 on side a, 4 on side b;" in said, said


def test_a_load_error_of_several_lines_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """No network: transformers' "We couldn't connect …\\nCheck your internet connection …" made the error two lines."""

    def offline(*args: object, **kwargs: object) -> None:
        raise OSError("We couldn't connect to 'https://huggingface.co'.\nCheck your internet connection.")

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", offline)
    with pytest.raises(FairtalkError) as caught:
        load_responder("hf:gpt2")
    assert str(caught.value) == (
        "cannot load hf model 'gpt2': We couldn't connect to 'https://huggingface.co'. Check your internet connection."
    )
