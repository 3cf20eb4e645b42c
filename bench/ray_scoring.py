"""Benchmark of scoring on Ray: texts/s of the per-response measures and of regard labelling, in this process and in Ray tasks.

One local cluster (``ray.init(num_cpus=--cpus)``) serves every measurement. The texts are
distinct chitchat responses (held-out split). Two workloads, each run in this process (torch with
``--cpus`` threads) and through :class:`~fairtalk.run._ray_scoring.RayScorer` (``--cpus``
tasks at once, one thread each, batches of ``--batch`` texts), interleaved over ``--rounds``
rounds; the median of each is reported, and the scores of both paths are checked to be equal:

- the default audit suite's per-response measures (offense, sentiment, attribute words, length,
  refusal) on ``--n-suite`` texts;
- regard labels from the shipped fine-tuned MiniLM (``prompts analyze``'s scorer) on
  ``--n-regard`` texts.

The Ray times include building the measures in each worker (the first batch of a new scorer);
the in-process times include building them here.

Run: ``.venv/bin/python bench/ray_scoring.py [--cpus 2] [--n-suite 40000] [--n-regard 4000] [--batch 2000]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import time
from functools import partial
from typing import Any

import numpy as np

import fairtalk
from fairtalk.measures import MeasureOptions
from fairtalk.measures._regard import Regard
from fairtalk.models import RayEngine
from fairtalk.models.ray._scoring import RayScorer
from fairtalk.prompts._completions import regard_labeller
from fairtalk.run._ray_scoring import measures_scorer


def _texts(n: int) -> list[str]:
    """``n`` distinct chitchat responses (held-out split first, then train)."""
    seen: dict[str, None] = {}
    for split in ("heldout", "train"):
        for dialogue in fairtalk.read_corpus("builtin:chitchat", split=split):
            if dialogue.response:
                seen.setdefault(dialogue.response, None)
            if len(seen) >= n:
                return list(seen)
    return list(seen)


def _timed(run: Any) -> tuple[float, dict[str, np.ndarray]]:
    start = time.perf_counter()
    out = run()
    return time.perf_counter() - start, out


def _compare(name: str, texts: list[str], local: Any, build: Any, engine: RayEngine, rounds: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {"local": [], "ray": []}
    first: dict[str, dict[str, np.ndarray]] = {}
    for _ in range(rounds):
        seconds, out = _timed(lambda: local(texts))
        times["local"].append(seconds)
        first.setdefault("local", out)
        scorer = RayScorer(engine, build)
        try:
            seconds, out = _timed(partial(scorer.score, texts))
        finally:
            scorer.close()
        times["ray"].append(seconds)
        first.setdefault("ray", out)
    same = set(first["local"]) == set(first["ray"]) and all(
        np.array_equal(np.asarray(first["local"][k]), np.asarray(first["ray"][k])) for k in first["local"]
    )
    row = {"workload": name, "n_texts": len(texts), "same_scores": bool(same)}
    for path, values in times.items():
        median = statistics.median(values)
        row[f"{path}_s"] = round(median, 2)
        row[f"{path}_texts_per_s"] = round(len(texts) / median, 1)
    row["ray_over_local"] = round(row["ray_texts_per_s"] / row["local_texts_per_s"], 2)
    return row


def main() -> None:
    """Run both workloads and print one JSON line per workload, then the machine."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--n-suite", type=int, default=40000)
    parser.add_argument("--n-regard", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import ray
    import torch

    torch.set_num_threads(args.cpus)
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    engine = RayEngine(num_actors=args.cpus, score_batch=args.batch)
    lexicon = fairtalk.load_lexicon("gender")
    texts = _texts(max(args.n_suite, args.n_regard))

    suite = measures_scorer(None, MeasureOptions(lexicon))
    print(
        json.dumps(
            _compare(
                "default per-response measures",
                texts[: args.n_suite],
                suite,
                partial(measures_scorer, None, MeasureOptions(lexicon)),
                engine,
                args.rounds,
            )
        ),
        flush=True,
    )
    regard = Regard()
    print(
        json.dumps(
            _compare(
                "regard labels (fine-tuned MiniLM)",
                texts[: args.n_regard],
                regard_labeller(regard),
                partial(regard_labeller, Regard()),
                engine,
                args.rounds,
            )
        ),
        flush=True,
    )
    ray.shutdown()
    print(
        json.dumps(
            {
                "machine": platform.processor() or platform.machine(),
                "cpus_used": args.cpus,
                "os_cpus": os.cpu_count(),
                "date": time.strftime("%Y-%m-%d"),
            }
        )
    )


if __name__ == "__main__":
    main()
