"""Benchmark of the reference models: batched responses/s of builtin:retrieval and builtin:seq2seq.

Contexts are the held-out split of the built-in chitchat corpus (never seen in training),
cycled to the requested count. For each model it times loading (checkpoint read, network
build, pool vectors) and ``respond`` over all contexts (greedy decoding; the retrieval
responder encodes contexts in length-sorted batches and scores each chunk of 1,024 against the
pool with one matrix product; Seq2Seq decodes batches of ``--seq2seq-batch``). It prints wall
and CPU seconds: on a machine shared with other jobs, CPU seconds / threads estimates the wall
time of an idle machine. Projection: minutes for 600k responses (paper scale: 300k pairs x 2).

Run: ``.venv/bin/python bench/models.py [--n-retrieval 20000] [--n-seq2seq 2000] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import time

PAPER_RESPONSES = 600_000


def _contexts(n: int) -> list[str]:
    import fairtalk

    held = [c.text for c in itertools.islice(fairtalk.read_corpus("builtin:chitchat", split="heldout"), n)]
    return list(itertools.islice(itertools.cycle(held), n))


def _time(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bench(spec: str, contexts: list[str], threads: int, **options: object) -> dict[str, object]:
    """Load one model, answer every context once (greedy), return the figures."""
    import fairtalk

    model, load_wall, load_cpu = _time(lambda: fairtalk.load_responder(spec, **options))
    settings = fairtalk.DecodingSettings(max_new_tokens=25)
    model.respond(contexts[:64], settings, seeds=[0] * 64)  # warm-up
    responses, wall, cpu = _time(lambda: model.respond(contexts, settings, seeds=[0] * len(contexts)))
    n = len(contexts)
    idle = cpu / threads
    return {
        "model": spec,
        "fingerprint": model.fingerprint,
        "n": n,
        "load_s": round(load_wall, 2),
        "load_cpu_s": round(load_cpu, 2),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "responses_per_s_wall": round(n / wall, 1),
        "responses_per_s_idle_estimate": round(n / idle, 1),
        "paper_scale_min_wall": round(PAPER_RESPONSES / (n / wall) / 60, 1),
        "paper_scale_min_idle_estimate": round(PAPER_RESPONSES / (n / idle) / 60, 1),
        "n_distinct_responses": len(set(responses)),
        "examples": list(zip(contexts[:3], responses[:3])),
    }


def main() -> None:
    """Parse options, run both benchmarks, print a JSON summary per model."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-retrieval", type=int, default=20_000)
    parser.add_argument("--n-seq2seq", type=int, default=2_000)
    parser.add_argument("--seq2seq-batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--retrieval", default="builtin:retrieval")
    parser.add_argument("--seq2seq", default="builtin:seq2seq")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    print(
        json.dumps(
            {
                "machine": platform.processor() or platform.machine(),
                "nproc": os.cpu_count(),
                "load_average": os.getloadavg(),
                "torch": torch.__version__,
                "threads": args.threads,
            }
        )
    )
    contexts = _contexts(max(args.n_retrieval, args.n_seq2seq))
    print(json.dumps(bench(args.retrieval, contexts[: args.n_retrieval], args.threads), ensure_ascii=False))
    print(
        json.dumps(
            bench(args.seq2seq, contexts[: args.n_seq2seq], args.threads, batch_size=args.seq2seq_batch), ensure_ascii=False
        )
    )
    print(json.dumps({"load_average_after": os.getloadavg()}))


if __name__ == "__main__":
    main()
