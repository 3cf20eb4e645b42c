"""Compare retrieval models on what the bare audit needs: variety on its pairs, recall@1, speed.

For each model spec, in one run on the same data:

- the default audit pairs (``fairtalk audit`` defaults: builtin:chitchat held-out split, gender
  and race, 2,000 pairs per axis, seed 0), both sides answered greedily: number of distinct
  responses, the share of the most common one, load time and responses/s (wall and CPU);
- recall@1 and recall@10 among 100 candidates on held-out chitchat pairs (never trained on):
  the pairs are shuffled with a fixed seed and cut into blocks of 100; each context ranks its
  own response against the 99 others of its block (chance 0.01 / 0.10), as ``fairtalk train``
  validates the Transformer ranker.

Run: ``PYTHONPATH=src .venv/bin/python bench/retrieval.py [--models builtin:retrieval builtin:minilm-retrieval]
[--n-recall 5000] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import time


def audit_contexts(seed: int = 0, n_pairs: int = 2000) -> tuple[int, list[str]]:
    """The default audit's pairs (gender, race) and their contexts, sides a and b."""
    import fairtalk
    from fairtalk.lexicons import load_lexicon

    n, contexts = 0, []
    for axis in ("gender", "race"):
        corpus = fairtalk.read_corpus("builtin:chitchat", split="heldout")
        pairs = fairtalk.build_pairs(corpus, fairtalk.Swapper(load_lexicon(axis), seed=seed), limit=n_pairs, seed=seed)
        for pair in pairs:
            n += 1
            contexts.extend((pair.a, pair.b))
    return n, contexts


def heldout_pairs(n: int, seed: int = 4) -> tuple[list[str], list[str]]:
    """``n`` held-out (context, response) pairs in a fixed shuffle."""
    import numpy as np

    import fairtalk

    rows = [
        (c.text.strip(), c.response.strip())
        for c in fairtalk.read_corpus("builtin:chitchat", split="heldout")
        if c.response and c.response.strip() and c.text.strip()
    ]
    order = np.random.default_rng(seed).permutation(len(rows))[:n]
    return [rows[i][0] for i in order], [rows[i][1] for i in order]


def recall(model: object, contexts: list[str], responses: list[str]) -> dict[str, float]:
    """recall@1 and recall@10 among blocks of 100, scored with the model's own encoder."""
    import numpy as np

    encoder = model.encoder  # type: ignore[attr-defined]
    encoder.fit(responses)
    r = np.asarray(encoder.encode(responses), dtype=np.float32)  # the same object: encoded as candidates
    c = np.asarray(encoder.encode(list(contexts)), dtype=np.float32)
    encoder.fit(model.candidates)  # type: ignore[attr-defined]
    hits1 = hits10 = total = 0
    for start in range(0, len(contexts) - 99, 100):
        s = c[start : start + 100] @ r[start : start + 100].T
        rank = (s > np.diag(s)[:, None]).sum(axis=1)
        hits1 += int((rank < 1).sum())
        hits10 += int((rank < 10).sum())
        total += len(rank)
    return {"recall@1": round(hits1 / total, 4), "recall@10": round(hits10 / total, 4), "n_recall": total}


def bench(spec: str, contexts: list[str], pairs: tuple[list[str], list[str]], threads: int) -> dict[str, object]:
    """Load one model, answer the audit contexts greedily, measure recall; return the figures."""
    import fairtalk

    wall, cpu = time.perf_counter(), time.process_time()
    model = fairtalk.load_responder(spec)
    load_s = time.perf_counter() - wall
    settings = fairtalk.DecodingSettings(max_new_tokens=40)
    model.respond(contexts[:64], settings, seeds=[0] * 64)  # warm-up (loads a lazy encoder)
    warm_s = time.perf_counter() - wall
    wall, cpu = time.perf_counter(), time.process_time()
    responses = model.respond(contexts, settings, seeds=[0] * len(contexts))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    counts = collections.Counter(responses)
    top, n_top = counts.most_common(1)[0]
    again = model.respond(contexts[:200], settings, seeds=[0] * 200)
    sampled = fairtalk.DecodingSettings(do_sample=True, max_new_tokens=40)
    s1 = model.respond(contexts[:200], sampled, seeds=list(range(200)))
    s2 = model.respond(contexts[:200][::-1], sampled, seeds=list(range(200))[::-1])[::-1]
    return {
        "model": spec,
        "fingerprint": model.fingerprint,
        "n_candidates": len(model.candidates),  # type: ignore[attr-defined]
        "load_s": round(load_s, 2),
        "load_and_first_batch_s": round(warm_s, 2),
        "n_responses": len(responses),
        "n_distinct_responses": len(counts),
        "top_response": top,
        "top_response_share": round(n_top / len(responses), 4),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "responses_per_s_wall": round(len(responses) / wall, 1),
        "responses_per_s_idle_estimate": round(len(responses) / (cpu / threads), 1),
        "greedy_repeatable": again == responses[:200],
        "sampling_order_free": s1 == s2,
        **recall(model, *pairs),
        "examples": list(zip(contexts[:6:2], responses[:6:2])),
    }


def main() -> None:
    """Parse options, run every model on the same data, print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["builtin:retrieval", "builtin:minilm-retrieval"])
    parser.add_argument("--n-recall", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    n_pairs, contexts = audit_contexts()
    pairs = heldout_pairs(args.n_recall)
    print(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d"),
                "machine": platform.processor() or platform.machine(),
                "nproc": os.cpu_count(),
                "load_average": os.getloadavg(),
                "torch": torch.__version__,
                "threads": args.threads,
                "n_audit_pairs": n_pairs,
                "n_audit_contexts": len(contexts),
            }
        )
    )
    for spec in args.models:
        print(json.dumps(bench(spec, contexts, pairs, args.threads), ensure_ascii=False), flush=True)
    print(json.dumps({"load_average_after": os.getloadavg()}))


if __name__ == "__main__":
    main()
