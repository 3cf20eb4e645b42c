"""Benchmark the counterfactual swapper against the naive per-term ``re.sub`` method.

Streams N contexts (the built-in chitchat corpus, every message, repeated as often as needed)
through ``fairtalk.Swapper`` and, in the same run and interleaved round by round so that both see
the same machine load, through the naive method of the paper's CDA scripts: one ``re.sub`` per
lexicon term in sequence (every group-B term, then every group-A term when no group-B term
matched), each with a ``random.choice`` among the counterparts. Speeds are CPU seconds of this
single-threaded process (one core); wall-clock figures are printed alongside.

Memory: the fairtalk pass records the peak RSS after N/10 and after N contexts, and a second pass
traces Python allocations (tracemalloc peak) while streaming M/10 and M contexts. Flat figures
mean the swapper streams: memory does not grow with the corpus.

End to end through the CLI: ``fairtalk swap --axis AXIS < lines.txt > /dev/null`` on ``--cli-n``
chat lines (one message a line), timed as the child process' CPU seconds (user + system, one core)
and wall seconds, start-up included. Its ratio is against the precompiled per-pair loop, timed on
``--naive-n`` contexts right before and right after the CLI run (so both see the same load), and
printed on one line starting ``CLI ratio vs precompiled per-pair loop``. The child is
``python -m fairtalk.cli`` of this interpreter, so it runs the fairtalk this script imports
(``PYTHONPATH`` included); byte-compiled modules are written first, as an installed package has them.

Usage::

    .venv/bin/python bench/swap.py                 # 1M contexts, race lexicon
    .venv/bin/python bench/swap.py --n 100000 --naive-n 5000 --trace-n 50000   # quick
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import chitchat_dataset
from _machine import machine

from fairtalk import Lexicon, Swapper, load_lexicon


def chitchat_texts() -> list[str]:
    """Every message text of the chitchat-dataset corpus (about 258k short chat lines)."""
    path = Path(chitchat_dataset.__file__).with_name("dataset.json")
    conversations = json.loads(path.read_text(encoding="utf-8"))
    return [message["text"] for conversation in conversations.values() for turn in conversation["messages"] for message in turn]


def stream(base: list[str], n: int, offset: int = 0) -> Iterator[str]:
    """Yield ``n`` contexts, cycling through ``base`` from ``offset`` (nothing is accumulated)."""
    size = len(base)
    for index in range(offset, offset + n):
        yield base[index % size]


def naive_swapper(lexicon: Lexicon, seed: int, *, precompiled: bool) -> Callable[[str], str]:
    """The per-term method of the paper's CDA scripts: one re.sub per lexicon term, in sequence."""
    rng = random.Random(seed)
    a_to_b: dict[str, list[str]] = {}
    b_to_a: dict[str, list[str]] = {}
    for pair in lexicon.pairs:
        a_to_b.setdefault(pair.a.lower(), []).append(pair.b.lower())
        b_to_a.setdefault(pair.b.lower(), []).append(pair.a.lower())

    def pattern(term: str) -> re.Pattern[str] | str:
        source = r"(?<=\b)" + re.escape(term) + r"(?=\b)"
        return re.compile(source) if precompiled else source

    passes = [[(pattern(t), c) for t, c in table.items()] for table in (b_to_a, a_to_b)]
    sub = re.sub  # a pattern string goes through re's compiled-pattern cache, as in the scripts

    def swap(text: str) -> str:
        for terms in passes:
            changed = False
            for term, counterparts in terms:
                if precompiled:
                    new = term.sub(rng.choice(counterparts), text)  # type: ignore[union-attr]
                else:
                    new = sub(term, rng.choice(counterparts), text)
                if new != text:
                    text, changed = new, True
            if changed:  # the scripts try group A only when no group-B term matched
                break
        return text

    return swap


def timed(function: Callable[[str], object], contexts: Iterator[str]) -> tuple[int, float, float]:
    """Run ``function`` over the contexts: (count, CPU seconds, wall seconds)."""
    count = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for text in contexts:
        function(text)
        count += 1
    return count, time.process_time() - cpu, time.perf_counter() - wall


def max_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def traced_peak_mib(swapper: Swapper, base: list[str], n: int) -> float:
    """tracemalloc peak (MiB) while streaming ``n`` contexts through the swapper."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    n_changed = 0
    for text in stream(base, n):
        n_changed += not swapper.swap(text).no_match
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def cli_lines_per_s(base: list[str], n: int, axis: str) -> dict[str, float]:
    """Lines per second of ``fairtalk swap --axis AXIS`` over ``n`` chat lines: CPU (child) and wall."""
    import fairtalk

    compileall.compile_dir(Path(fairtalk.__file__).parent, quiet=1)  # as installed: no module compiled at start-up
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lines.txt"
        with path.open("w", encoding="utf-8") as handle:
            for text in stream(base, n):
                handle.write(text.replace("\n", " ").replace("\r", " ") + "\n")
        size = path.stat().st_size
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        with path.open("rb") as source:
            subprocess.run(
                [sys.executable, "-m", "fairtalk.cli", "swap", "--axis", axis],
                stdin=source,
                stdout=subprocess.DEVNULL,
                check=True,
                env=env,
            )
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"lines": n, "mib": size / 2**20, "cpu_s": cpu, "wall_s": wall, "per_s": n / cpu, "per_s_wall": n / wall}


def cli_against_precompiled(base: list[str], args: argparse.Namespace, lexicon: Lexicon) -> dict[str, object]:
    """The CLI's rate and the precompiled per-pair loop's, timed right before and after it (CPU, one core)."""
    loop = naive_swapper(lexicon, args.seed, precompiled=True)
    half = max(1, args.naive_n // 2)
    count, cpu, _ = timed(loop, stream(base, half))
    cli = cli_lines_per_s(base, args.cli_n, args.axis)
    more, more_cpu, _ = timed(loop, stream(base, half, half))
    loop_rate = (count + more) / (cpu + more_cpu)
    return {**cli, "precompiled_per_s": loop_rate, "ratio_vs_precompiled": cli["per_s"] / loop_rate}


def main() -> None:
    """Parse arguments, run the benchmark, print the figures (and write JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="contexts through fairtalk (default 1M)")
    parser.add_argument("--naive-n", type=int, default=20_000, help="contexts through the naive method")
    parser.add_argument("--trace-n", type=int, default=200_000, help="largest tracemalloc stream (also /10)")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved timing rounds")
    parser.add_argument("--axis", default="race", help="lexicon axis (default race)")
    parser.add_argument("--cli-n", type=int, default=500_000, help="chat lines through `fairtalk swap` (0: skip)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args()

    base = chitchat_texts()
    lexicon = load_lexicon(args.axis)
    swapper = Swapper(lexicon, seed=args.seed)
    naive = naive_swapper(lexicon, args.seed, precompiled=False)
    naive_compiled = naive_swapper(lexicon, args.seed, precompiled=True)
    print(f"machine: {machine()}")
    print(f"corpus: chitchat-dataset, {len(base):,} messages, mean {sum(map(len, base)) / len(base):.1f} chars, cycled")
    print(f"lexicon: {lexicon.source}, {len(lexicon.pairs)} pairs")

    rss_start = max_rss_mib()
    totals = {name: [0, 0.0, 0.0] for name in ("fairtalk", "naive", "naive_precompiled")}
    rss_at: dict[int, float] = {}
    rounds = max(1, args.rounds)
    for round_ in range(rounds):
        share = args.n * (round_ + 1) // rounds - args.n * round_ // rounds
        naive_share = args.naive_n * (round_ + 1) // rounds - args.naive_n * round_ // rounds
        offset = totals["fairtalk"][0]
        for name, function, n in (
            ("fairtalk", swapper.swap, share),
            ("naive", naive, naive_share),
            ("naive_precompiled", naive_compiled, naive_share),
        ):
            done = timed(function, stream(base, n, offset))
            totals[name] = [t + d for t, d in zip(totals[name], done)]
        rss_at[totals["fairtalk"][0]] = max_rss_mib()

    figures: dict[str, object] = {"n": args.n, "naive_n": args.naive_n, "machine": machine()}
    print(f"\n{'method':<20}{'contexts':>12}{'CPU s':>9}{'ctx/s (CPU)':>14}{'ctx/min':>14}{'ctx/s (wall)':>14}")
    for name, (count, cpu, wall) in totals.items():
        rate = count / cpu if cpu else float("nan")
        figures[name] = {"contexts": count, "cpu_s": cpu, "per_s": rate, "per_s_wall": count / wall if wall else None}
        print(f"{name:<20}{count:>12,}{cpu:>9.2f}{rate:>14,.0f}{rate * 60:>14,.0f}{count / wall:>14,.0f}")
    fast = figures["fairtalk"]["per_s"]  # type: ignore[index]
    for name in ("naive", "naive_precompiled"):
        ratio = fast / figures[name]["per_s"]  # type: ignore[index]
        figures[f"ratio_vs_{name}"] = ratio
        print(f"speed-up vs {name}: {ratio:.1f}x")

    if args.cli_n:
        cli = cli_against_precompiled(base, args, lexicon)
        figures["cli"] = cli
        print(
            f"\nCLI `fairtalk swap --axis {args.axis}`: {cli['lines']:,} lines ({cli['mib']:.1f} MiB) in "
            f"{cli['cpu_s']:.2f} CPU s / {cli['wall_s']:.2f} wall s (start-up included): "
            f"{cli['per_s']:,.0f} lines/s (CPU), {cli['per_s_wall']:,.0f} lines/s (wall)"
        )
        print(
            f"CLI ratio vs precompiled per-pair loop (CPU, same run, loop timed around the CLI): "
            f"{cli['ratio_vs_precompiled']:.1f}x ({cli['per_s']:,.0f} / {cli['precompiled_per_s']:,.0f} per s)"
        )

    tenth = min(rss_at, key=lambda done: abs(done - args.n / 10))
    print(
        f"\npeak RSS: {rss_start:.1f} MiB before, {rss_at[tenth]:.1f} MiB after {tenth:,} contexts, "
        f"{rss_at[max(rss_at)]:.1f} MiB after {max(rss_at):,}"
    )
    small, large = max(1, args.trace_n // 10), args.trace_n
    peaks = {n: traced_peak_mib(swapper, base, n) for n in (small, large)}
    print(
        f"tracemalloc peak while streaming: {peaks[small]:.3f} MiB for {small:,} contexts, {peaks[large]:.3f} MiB for {large:,}"
    )
    figures["rss_mib"] = {"start": rss_start, **{str(k): v for k, v in rss_at.items()}}
    figures["tracemalloc_peak_mib"] = {str(k): v for k, v in peaks.items()}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
