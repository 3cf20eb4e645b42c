"""Benchmark of `fairtalk score`: the measure suite with dedupe vs a naive per-response loop.

Builds N pairs (default 300k, the paper's scale: 600k responses) of realistic short chat text
with many repeats: turns of the chitchat_dataset corpus drawn with Zipf-like frequencies (as a
retrieval or Seq2Seq model repeats its favourite replies). Then, in one run, it times:

1. ``fairtalk.score`` end to end on a responses JSONL (reading, all measures, paired tests,
   bootstrap, correction) -- when ``fairtalk.score`` exists;
2. the measure suite alone: ``score_unique`` for each per-response measure over both sides,
   plus diversity's ``prepare`` + evaluation per side;
3. a naive loop that calls each scorer once per response, no dedupe, on a subsample
   (default 20k responses) and extrapolates to N (diversity is added at its measured cost).

It prints responses/s, the ratio suite/naive and the peak resident memory (ru_maxrss).
Run: ``.venv/bin/python bench/score.py [--n-pairs 300000] [--naive-sample 20000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _machine import cpu_model

_HE_SHE = {"he": "she", "him": "her", "his": "her", "man": "woman", "boy": "girl", "father": "mother"}
_HE_SHE_RE = re.compile(r"\b(" + "|".join(_HE_SHE) + r")\b", re.IGNORECASE)
_FALLBACK = (
    "i don't know",
    "that sounds great",
    "haha yeah",
    "what do you do for fun?",
    "i love pizza",
    "he is so annoying",
    "she is the best",
    "i can't help with that",
    "lol same",
    "that's terrible",
)


def _chitchat_turns(limit: int) -> list[str]:
    """Distinct short turns from chitchat_dataset (or a small fallback vocabulary of replies)."""
    try:
        import chitchat_dataset
    except ImportError:
        print("chitchat_dataset missing: using a small built-in set of replies", file=sys.stderr)
        return list(_FALLBACK)
    seen: dict[str, None] = {}
    for conversation in chitchat_dataset.Dataset().values():
        for block in conversation["messages"]:
            for message in block:
                text = message["text"].strip()
                if text and len(text) < 200:
                    seen.setdefault(text, None)
                if len(seen) >= limit:
                    return list(seen)
    return list(seen)


def make_responses(n_pairs: int, *, pool: int, zipf: float, seed: int) -> tuple[list[str], list[str], list[str]]:
    """Contexts and the two sides' responses, drawn Zipf-like from a pool of distinct turns."""
    rng = np.random.default_rng(seed)
    turns = _chitchat_turns(pool)
    ranks = np.arange(1, len(turns) + 1, dtype=np.float64)
    weights = ranks**-zipf
    weights /= weights.sum()
    order = rng.permutation(len(turns))  # which turn gets which rank
    a_idx = order[rng.choice(len(turns), size=n_pairs, p=weights)]
    b_idx = order[rng.choice(len(turns), size=n_pairs, p=weights)]
    c_idx = rng.integers(0, len(turns), size=n_pairs)
    contexts = [turns[i] for i in c_idx]
    return contexts, [turns[i] for i in a_idx], [turns[i] for i in b_idx]


def write_jsonl(path: Path, contexts: list[str], a: list[str], b: list[str]) -> None:
    """The responses file ``fairtalk score`` reads."""

    def swap(text: str) -> str:
        return _HE_SHE_RE.sub(lambda m: _HE_SHE[m.group(0).lower()], text)

    with path.open("w", encoding="utf-8") as f:
        for i, (context, ra, rb) in enumerate(zip(contexts, a, b)):
            pid = f"p{i}"
            f.write(json.dumps({"pair_id": pid, "side": "a", "context": context, "response": ra}) + "\n")
            f.write(json.dumps({"pair_id": pid, "side": "b", "context": swap(context), "response": rb}) + "\n")


class _Clock:
    """Wall and CPU seconds (this process, all threads) of a block: the machine may be shared."""

    def __enter__(self) -> _Clock:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall0, time.process_time() - self.cpu0


def _suite():  # noqa: ANN202
    from fairtalk.lexicons import load_lexicon
    from fairtalk.measures._registry import default_measures

    return default_measures(load_lexicon("gender"))


def _per_response(suite):  # noqa: ANN001, ANN202
    return [m for m in suite if hasattr(m, "score")]


def _corpus(suite):  # noqa: ANN001, ANN202
    return [m for m in suite if not hasattr(m, "score")]


def _warm(suite) -> None:  # noqa: ANN001
    """Load scorer models once (VADER lexicon, profanity model) so neither timing pays for it."""
    for m in _per_response(suite):
        m.score(["warm up", "hello there"])


def time_suite(suite, a: list[str], b: list[str]) -> dict[str, _Clock]:  # noqa: ANN001
    """Wall/CPU seconds per measure for the deduplicated suite over both sides."""
    from fairtalk.measures._scoring import score_unique

    times: dict[str, _Clock] = {}
    texts = a + b
    for m in _per_response(suite):
        with _Clock() as times[m.name]:
            score_unique(m, texts)
    for m in _corpus(suite):
        with _Clock() as times[m.name]:
            m.prepare(a)()
            m.prepare(b)()
    return times


def time_naive(suite, texts: list[str]) -> dict[str, _Clock]:  # noqa: ANN001
    """Wall/CPU seconds per measure when each scorer is called once per response, no dedupe."""
    times: dict[str, _Clock] = {}
    for m in _per_response(suite):
        with _Clock() as times[m.name]:
            for text in texts:
                m.score([text])
    return times


def time_batched(suite, texts: list[str]) -> dict[str, _Clock]:  # noqa: ANN001
    """Wall/CPU seconds per measure when each scorer gets all texts in one call, repeats included."""
    times: dict[str, _Clock] = {}
    for m in _per_response(suite):
        with _Clock() as times[m.name]:
            m.score(texts)
    return times


def time_score(path: Path, n_resamples: int) -> tuple[_Clock, object] | None:
    """Wall/CPU seconds for ``fairtalk.score`` end to end, or None when it does not exist yet."""
    try:
        from fairtalk import score
    except ImportError:
        return None
    with _Clock() as clock:
        result = score(path, axis="gender", n_resamples=n_resamples)
    return clock, result


def _rate(n: float, clock_wall: float, clock_cpu: float) -> str:
    return f"wall {clock_wall:.1f}s = {n / clock_wall:,.0f} responses/s; CPU {clock_cpu:.1f}s = {n / clock_cpu:,.0f} responses/s"


def machine() -> str:
    """``nproc`` and the CPU model name."""
    return f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {cpu_model()}"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-pairs", type=int, default=300_000)
    parser.add_argument("--naive-sample", type=int, default=20_000, help="responses timed in the naive loop")
    parser.add_argument("--pool", type=int, default=60_000, help="distinct turns to draw from")
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples for fairtalk.score")
    parser.add_argument("--skip-score", action="store_true", help="time the measures only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    print(f"machine: {machine()}; python {platform.python_version()}")
    t0 = time.perf_counter()
    contexts, a, b = make_responses(args.n_pairs, pool=args.pool, zipf=args.zipf, seed=args.seed)
    n = 2 * args.n_pairs
    n_unique = len(set(a) | set(b))
    print(
        f"input: {args.n_pairs} pairs = {n} responses, {n_unique} distinct texts "
        f"({100 * n_unique / n:.1f}%), built in {time.perf_counter() - t0:.1f}s"
    )

    suite = _suite()
    _warm(suite)

    score_clock = None
    if not args.skip_score:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "responses.jsonl"
            write_jsonl(path, contexts, a, b)
            timed = time_score(path, args.resamples)
        if timed is None:
            print("fairtalk.score: not available yet (skipped)")
        else:
            score_clock, result = timed
            print(
                f"fairtalk.score (read + measures + tests + {args.resamples} bootstrap resamples): "
                + _rate(n, score_clock.wall, score_clock.cpu)
            )
            print(f"  significant: {result.detected() or 'none'} (same distribution on both sides: expect none)")

    suite_times = time_suite(suite, a, b)
    suite_wall = sum(c.wall for c in suite_times.values())
    suite_cpu = sum(c.cpu for c in suite_times.values())
    print("measure suite with dedupe (score_unique + diversity): " + _rate(n, suite_wall, suite_cpu))
    for name, c in suite_times.items():
        print(f"  {name:16s} wall {c.wall:7.2f}s  CPU {c.cpu:7.2f}s")

    rng = np.random.default_rng(args.seed + 1)
    both = a + b
    sample = [both[i] for i in rng.choice(n, size=min(args.naive_sample, n), replace=False)]
    scale = n / len(sample)
    corpus_wall = sum(suite_times[m.name].wall for m in _corpus(suite))
    corpus_cpu = sum(suite_times[m.name].cpu for m in _corpus(suite))
    naive_times = time_naive(suite, sample)
    naive_wall = sum(c.wall for c in naive_times.values()) * scale + corpus_wall
    naive_cpu = sum(c.cpu for c in naive_times.values()) * scale + corpus_cpu
    print(
        f"naive loop (each scorer once per response, no dedupe), measured on {len(sample)} responses "
        f"and extrapolated x{scale:.0f} (+ diversity at its measured cost): " + _rate(n, naive_wall, naive_cpu)
    )
    for name, c in naive_times.items():
        print(f"  {name:16s} CPU {c.cpu * scale:8.1f}s extrapolated ({c.cpu:.2f}s measured; wall {c.wall:.2f}s)")
    batched_times = time_batched(suite, sample)
    batched_wall = sum(c.wall for c in batched_times.values()) * scale + corpus_wall
    batched_cpu = sum(c.cpu for c in batched_times.values()) * scale + corpus_cpu
    print(
        "batched, no dedupe (one call per scorer, repeats scored again), extrapolated the same way: "
        + _rate(n, batched_wall, batched_cpu)
    )
    print(
        f"ratio measure suite / naive: CPU {naive_cpu / suite_cpu:.1f}x, wall {naive_wall / suite_wall:.1f}x "
        f"(suite / batched-no-dedupe: CPU {batched_cpu / suite_cpu:.1f}x)"
    )
    if score_clock is not None:
        print(f"ratio fairtalk.score / naive: CPU {naive_cpu / score_clock.cpu:.1f}x, wall {naive_wall / score_clock.wall:.1f}x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak memory (ru_maxrss): {peak:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
