"""Benchmark of ``--engine ray``: responses/s of a local Ray cluster against the in-process path on the same cores.

One local cluster (``ray.init(num_cpus=--cpus)``) serves every measurement. Per model, the same
pair sides go through ``fairtalk.respond`` (run store in memory, the same batch size) three ways:
in this process with ``--cpus`` torch threads, in this process with one thread, and on ``--cpus``
Ray actors (one CPU and one torch thread each), interleaved over ``--rounds`` rounds so that they
share the machine's load; the median of each is reported. Start-up (model load; actors started
and loaded, and a warm-up batch of 8 on each path, so that models that load on first use have
loaded) is timed apart from generation, and the answers of every path are checked to be equal.

Models: ``builtin:echo`` (no compute: the framework's cost alone), a tiny randomly initialised
GPT-2 saved to a temporary folder (``hf:``, greedy, 20 new tokens) and ``builtin:minilm-retrieval``
(the default audit model). The overhead per task is measured with ``builtin:echo`` in batches of
one pair side: the round trip of one task to one actor, and the time per task through the whole
engine (two actors, two tasks in flight each) against the in-process path's time per batch of one.

Run: ``.venv/bin/python bench/ray_scale.py [--cpus 2] [--n-echo 20000] [--n-gpt2 1000] [--n-minilm 1000]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import fairtalk
from fairtalk import Pair
from fairtalk.models import RayEngine

SETTINGS = fairtalk.DecodingSettings(max_new_tokens=20)


def _pairs(n_sides: int) -> list[Pair]:
    """Pairs of two held-out chitchat contexts each, cycled to ``n_sides`` pair sides."""
    held = [c.text for c in itertools.islice(fairtalk.read_corpus("builtin:chitchat", split="heldout"), 5000)]
    texts = list(itertools.islice(itertools.cycle(held), n_sides + n_sides % 2))
    return [Pair(f"p{i}", "bench", texts[2 * i], texts[2 * i + 1], "a") for i in range(len(texts) // 2)]


def _tiny_gpt2(folder: Path, pairs: list[Pair]) -> Path:
    """A random two-layer GPT-2 (n_embd 64) with a word-level tokenizer over the contexts' words."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = sorted({w for p in pairs for side in (p.a, p.b) for w in side.split()})[:8000]
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[BOS]", "[EOS]", *words])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]"
    )
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(fast),
        n_positions=256,
        n_layer=2,
        n_head=2,
        n_embd=64,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


def _answers(generation: Any) -> list[str]:
    return [r.response for pair in generation.responses for r in pair]


def compare(
    spec: str,
    pairs: list[Pair],
    engine: RayEngine,
    *,
    batch_size: int,
    threads: int,
    rounds: int,
    args: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One model through both paths, ``rounds`` times interleaved: start-up, median seconds, responses/s, equal answers.

    In-process runs go once with ``threads`` torch threads and once with one; the Ray run uses
    ``engine.num_actors`` actors of one CPU (and one torch thread) each.
    """
    import torch

    n, args = 2 * len(pairs), args or {}
    warm = [side for pair in pairs[:4] for side in (pair.a, pair.b)]
    started = time.perf_counter()
    local_model = fairtalk.load_responder(spec, **args)
    local_model.respond(warm, SETTINGS, seeds=list(range(len(warm))))  # models that load on first use load here
    local_load = time.perf_counter() - started
    started = time.perf_counter()
    ray_model = engine.responder(spec, batch_size=batch_size, model_args=args)
    ray_model.respond(warm, SETTINGS, seeds=list(range(len(warm))))  # a small batch on every actor
    ray_start = time.perf_counter() - started
    seconds: dict[str, list[float]] = {"local": [], "local_1_thread": [], "ray": []}
    answers: dict[str, list[str]] = {}
    fingerprints: dict[str, str] = {}
    for _ in range(rounds):
        for path, model, n_threads in (
            ("local", local_model, threads),
            ("local_1_thread", local_model, 1),
            ("ray", ray_model, threads),
        ):
            torch.set_num_threads(n_threads)
            run = fairtalk.respond(pairs, model=model, batch_size=batch_size, settings=SETTINGS)
            seconds[path].append(run.summary.seconds)
            answers.setdefault(path, _answers(run))
            fingerprints.setdefault(path, run.summary.model)
    torch.set_num_threads(threads)
    n_actors = ray_model.n_actors  # type: ignore[attr-defined]
    local_model.close()
    ray_model.close()
    median = {path: statistics.median(values) for path, values in seconds.items()}
    return {
        "model": spec,
        "n_responses": n,
        "batch_size": batch_size,
        "rounds": rounds,
        "n_actors": n_actors,
        "local_load_s": round(local_load, 2),
        "ray_start_s": round(ray_start, 2),
        **{f"{path}_s": round(value, 3) for path, value in median.items()},
        **{f"{path}_per_s": round(n / value, 1) for path, value in median.items()},
        "ray_over_local": round(median["local"] / median["ray"], 2),
        "ray_over_local_1_thread": round(median["local_1_thread"] / median["ray"], 2),
        "same_answers": answers["local"] == answers["ray"] == answers["local_1_thread"],
        "same_fingerprint": fingerprints["local"] == fingerprints["ray"],
    }


def overhead(pairs: list[Pair], engine: RayEngine, n_round_trips: int) -> dict[str, Any]:
    """The cost of one task: a bare round trip to one actor, and per task through the engine (batches of one)."""
    import ray

    from fairtalk.models.ray._engine import ModelWorker

    worker = ray.remote(num_cpus=1)(ModelWorker).remote("builtin:echo", {}, os.getcwd(), [])
    ray.get(worker.describe.remote())
    trips = []
    for i in range(n_round_trips):
        started = time.perf_counter()
        ray.get(worker.respond.remote([pairs[i % len(pairs)].a], SETTINGS, [i]))
        trips.append(time.perf_counter() - started)
    ray.kill(worker)
    n = 2 * len(pairs)
    local = fairtalk.respond(pairs, model="builtin:echo", batch_size=1, settings=SETTINGS)
    model = engine.responder("builtin:echo", batch_size=1)
    on_ray = fairtalk.respond(pairs, model=model, batch_size=1, settings=SETTINGS)
    model.close()
    return {
        "round_trip_ms_median": round(1000 * statistics.median(trips), 3),
        "round_trip_ms_p90": round(1000 * statistics.quantiles(trips, n=10)[-1], 3),
        "n_tasks": n,
        "local_ms_per_batch_of_1": round(1000 * local.summary.seconds / n, 3),
        "ray_ms_per_task": round(1000 * on_ray.summary.seconds / n, 3),
        "overhead_ms_per_task": round(1000 * (on_ray.summary.seconds - local.summary.seconds) / n, 3),
    }


def main() -> None:
    """Start one local cluster, run every comparison, print one JSON line per measurement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local cluster, and torch threads in-process")
    parser.add_argument("--n-echo", type=int, default=20_000, help="pair sides for builtin:echo")
    parser.add_argument("--n-gpt2", type=int, default=1_000, help="pair sides for the tiny GPT-2 (0: skip)")
    parser.add_argument("--n-minilm", type=int, default=1_000, help="pair sides for builtin:minilm-retrieval (0: skip)")
    parser.add_argument("--n-overhead", type=int, default=2_000, help="pair sides in batches of one")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timed runs per path (the median is reported)")
    args = parser.parse_args()

    import ray
    import torch

    torch.set_num_threads(args.cpus)
    started = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    print(
        json.dumps(
            {
                "machine": platform.processor() or platform.machine(),
                "nproc": os.cpu_count(),
                "load_average": os.getloadavg(),
                "ray": ray.__version__,
                "torch": torch.__version__,
                "cluster_cpus": args.cpus,
                "ray_init_s": round(time.perf_counter() - started, 2),
            }
        )
    )
    engine = RayEngine(num_actors=args.cpus)
    pairs = _pairs(max(args.n_echo, args.n_gpt2, args.n_minilm, args.n_overhead))
    common = {"batch_size": args.batch_size, "threads": args.cpus, "rounds": args.rounds}
    print(json.dumps(compare("builtin:echo", pairs[: args.n_echo // 2], engine, **common)))
    print(json.dumps({"overhead": overhead(pairs[: args.n_overhead // 2], engine, 500)}))
    if args.n_gpt2:
        with tempfile.TemporaryDirectory(prefix="fairtalk-ray-bench-") as folder:
            path = _tiny_gpt2(Path(folder), pairs[: args.n_gpt2 // 2])
            print(
                json.dumps(
                    compare(f"hf:{path}", pairs[: args.n_gpt2 // 2], engine, **common, args={"device": "cpu", "batch_size": "16"})
                    | {"model": "hf:tiny-gpt2"}
                )
            )
    if args.n_minilm:
        print(json.dumps(compare("builtin:minilm-retrieval", pairs[: args.n_minilm // 2], engine, **common)))
    ray.shutdown()
    print(json.dumps({"load_average_after": os.getloadavg()}))


if __name__ == "__main__":
    main()
