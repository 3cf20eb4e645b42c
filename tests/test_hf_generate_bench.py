"""bench/hf_generate.py at a tiny size: the hf: adapter and the bare generate loop give the same answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from bench_scripts import load_bench  # noqa: E402

CHAT_TEMPLATE = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}[assistant]"


def _tiny_gpt2(path: Path, contexts: list[str], *, chat: bool) -> Path:
    """A random 2-layer GPT-2 with a word-level tokenizer over the contexts' words: a chat template, or a tokenizer that adds [BOS]."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    specials = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
    words = sorted({w for c in contexts for w in c.split()} | {"[user]", "[assistant]"})
    tok = Tokenizer(models.WordLevel(vocab={t: i for i, t in enumerate(specials + words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if not chat:  # the adapter then adds the tokenizer's special tokens, and the bare loop must too
        tok.post_processor = processors.TemplateProcessing(single="[BOS] $A", special_tokens=[("[BOS]", 2)])
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]"
    )
    if chat:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(fast),
        n_positions=512,
        n_layer=2,
        n_head=2,
        n_embd=32,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    transformers.GPT2LMHeadModel(config).save_pretrained(path)
    return path


@pytest.mark.parametrize("chat", [True, False], ids=["chat-template", "bos-no-template"])
def test_both_paths_answer_alike_at_every_batch_size_and_the_rows_are_written(tmp_path: Path, chat: bool) -> None:
    bench = load_bench("hf_generate")
    contexts = bench.read_contexts(bench.CONTEXTS)
    assert len(contexts) > 100 and len(set(contexts)) == len(contexts)
    model = _tiny_gpt2(tmp_path / "gpt2", contexts[:8], chat=chat)
    out = tmp_path / "rows.json"
    argv = ["--model", str(model), "--device", "cpu", "--batch-sizes", "1,3", "--max-new-tokens", "4"]
    result = bench.main([*argv, "--min-prompts", "5", "--repeats", "2", "--out", str(out)])
    assert json.loads(out.read_text()) == result
    assert result["dtype"] == "float32" and result["max_new_tokens"] == 4
    rows = result["rows"]
    assert [r["batch_size"] for r in rows] == [1, 3]
    assert [r["contexts"] for r in rows] == [5, 12]  # max(min prompts, 4 x batch size)
    assert [r["batches"] for r in rows] == [5, 4]
    for row in rows:
        assert row["same_answers"] == row["contexts"]  # same batches, greedy, float32: the same answers
        assert len(row["fairtalk_runs_s"]) == len(row["bare_runs_s"]) == 2
        assert row["fairtalk_s"] == min(row["fairtalk_runs_s"]) > 0
        assert row["ratio"] == pytest.approx(row["bare_s"] / row["fairtalk_s"], rel=1e-2)
        assert 0 < row["new_tokens"] <= 4 * row["contexts"]


def test_contexts_cycle_when_fewer_than_asked_and_counts_must_be_positive() -> None:
    bench = load_bench("hf_generate")
    assert bench.contexts_for(["a", "b"], 5) == ["a", "b", "a", "b", "a"]
    with pytest.raises(SystemExit):
        bench.main(["--repeats", "0"])
