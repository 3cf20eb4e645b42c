"""Benchmark of `fairtalk audit` end to end: time per stage for N pairs with a fast deterministic model.

Runs ``fairtalk.audit`` on the built-in chitchat corpus (all of it, one axis) with an
echo model wrapped so that its own compute is timed, then writes the report. Stages:

- **pairs**: reading the corpus, swapping, de-duplicating, sampling N pairs;
- **generation**: both sides of every pair through the run store (SQLite, WAL) and the model;
  the framework's overhead is this stage minus the model's own compute (item seeds, cache
  lookup, store writes, response records);
- **scoring**: the measures (``score_unique``, corpus statistics, masked re-scoring);
- **stats**: the rest of ``score()``: paired tests, intervals, equivalence, the scorer certificate, permutations, correction;
- **report**: ``write_run`` (results.json/csv, report.md/html per axis, index.html) plus the
  pairs/responses JSONL files the audit writes.

It also times a second run against the same store (every response served from it), and the
store's raw write speed (``RunStore.write``) separately. Targets: overhead <= 10% of the scoring
time; store writes >= 50k responses/s.
Run: ``.venv/bin/python bench/audit.py [--n-pairs 10000] [--axis gender]``.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from _machine import machine

import fairtalk
import fairtalk.run._score as score_module
from fairtalk.models import DecodingSettings, Responder, load_responder
from fairtalk.report import write_run
from fairtalk.store import RunStore, context_hash


class TimedModel(Responder):
    """A model whose own compute is timed: ``seconds`` accumulates the time spent inside ``respond``."""

    def __init__(self, inner: Responder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.n_calls = 0

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        started = time.perf_counter()
        try:
            return self.inner.respond(contexts, settings, seeds=seeds)
        finally:
            self.seconds += time.perf_counter() - started
            self.n_calls += 1


class TimedStore(RunStore):
    """A run store whose writes are timed: ``seconds`` and ``n_rows`` accumulate over ``write`` calls."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.seconds = self.cpu_seconds = 0.0
        self.n_rows = 0

    def write(self, run_id: int, rows: Sequence[tuple]) -> None:
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            super().write(run_id, rows)
        finally:
            self.seconds += time.perf_counter() - started
            self.cpu_seconds += time.thread_time() - cpu
            self.n_rows += len(rows)


class MeasureTimer:
    """Wraps score()'s measure-evaluating helpers so that their time can be told from the stats' time."""

    NAMES = ("_per_response", "_corpus_values", "_masked")

    def __init__(self) -> None:
        self.seconds = 0.0
        self._saved = {name: getattr(score_module, name) for name in self.NAMES}

    def __enter__(self) -> Self:
        for name, fn in self._saved.items():
            setattr(score_module, name, self._timed(fn))
        return self

    def __exit__(self, *exc: object) -> None:
        for name, fn in self._saved.items():
            setattr(score_module, name, fn)

    def _timed(self, fn):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return wrapper


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _run(args: argparse.Namespace, folder: Path, model: TimedModel) -> dict[str, float]:
    model.seconds = 0.0
    wall, cpu = time.perf_counter(), _cpu()
    with MeasureTimer() as measures, TimedStore(folder / "store.sqlite") as store:
        run = fairtalk.audit(
            corpus=args.corpus,
            split=args.split,
            axes=args.axis,
            model=model,
            n_pairs=args.n_pairs,
            seed=0,
            store=store,
            out_dir=folder,
            batch_size=args.batch_size,
            n_resamples=args.resamples,
        )
    started = time.perf_counter()
    write_run(run, folder)
    report = time.perf_counter() - started
    timings = run.timings
    return {
        "n_pairs": run.results[args.axis].n_pairs,
        "n_generated": run.n_generated,
        "n_cached": run.n_cached,
        "pairs": timings["pairs"],
        "generation": timings["generation"],
        "model": model.seconds,
        "store_write": store.seconds,
        "store_write_cpu": store.cpu_seconds,
        "store_rows": store.n_rows,
        "overhead": timings["generation"] - model.seconds,
        "scoring": measures.seconds,
        "stats": timings["scoring"] - measures.seconds,
        "report": report + timings.get("write", 0.0),
        "total_wall": time.perf_counter() - wall,
        "total_cpu": _cpu() - cpu,
    }


def _store_speed(n: int, batch_sizes: Sequence[int]) -> dict[int, tuple[float, float]]:
    """(wall, CPU) responses/s of RunStore.write in transactions of each batch size (fresh file store each)."""
    rows = [
        (
            context_hash(f"context number {i} about her day"),
            i,
            f"context number {i} about her day",
            f"a response of typical length number {i}",
            None,
        )
        for i in range(n)
    ]
    speeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in batch_sizes:
            with RunStore(Path(tmp) / f"s{size}.sqlite") as store:
                run_id = store.run_id("bench:echo", DecodingSettings())
                started, cpu = time.perf_counter(), time.thread_time()
                for start in range(0, n, size):
                    store.write(run_id, rows[start : start + size])
                speeds[size] = (n / (time.perf_counter() - started), n / (time.thread_time() - cpu))
    return speeds


def _print_run(title: str, r: dict[str, float]) -> None:
    print(f"\n{title}: {r['n_pairs']:,} pairs, {r['n_generated']:,} generated, {r['n_cached']:,} from the store")
    print(f"{'stage':<28}{'seconds':>9}")
    stages = (
        "pairs",
        "generation",
        "  model compute",
        "  framework overhead",
        "    of which store writes",
        "scoring",
        "stats",
        "report",
    )
    keys = {"  model compute": "model", "  framework overhead": "overhead", "    of which store writes": "store_write"}
    for stage in stages:
        key = keys.get(stage, stage)
        print(f"{stage:<28}{r[key]:>9.3f}")
    print(f"{'total (wall / CPU)':<28}{r['total_wall']:>9.3f} / {r['total_cpu']:.3f}")
    per_item = r["overhead"] / max(1, r["n_generated"] + r["n_cached"]) * 1e6
    print(f"overhead / scoring = {r['overhead'] / r['scoring']:.1%} (target <= 10%); {per_item:.1f} us per pair side")
    if r["store_rows"]:
        rate = r["store_rows"] / max(r["store_write"], 1e-9)
        cpu_rate = r["store_rows"] / max(r["store_write_cpu"], 1e-9)
        print(
            f"store writes in the audit: {r['store_rows']:,} rows, {rate:,.0f} responses/s wall, "
            f"{cpu_rate:,.0f}/s CPU (target >= 50k/s)"
        )


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-pairs", type=int, default=10_000)
    parser.add_argument("--axis", default="gender")
    parser.add_argument("--corpus", default="builtin:chitchat")
    parser.add_argument("--split", default="all")
    parser.add_argument("--model", default="builtin:echo", help="a fast deterministic model spec")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--store-n", type=int, default=200_000, help="rows for the raw store-write measurement")
    args = parser.parse_args()

    print(machine())
    model = TimedModel(load_responder(args.model))
    with tempfile.TemporaryDirectory() as tmp:
        first = _run(args, Path(tmp), model)
        _print_run("fresh store", first)
        again = _run(args, Path(tmp), model)
        _print_run("same store again (all cached)", again)
    for n in (20_000, args.store_n):
        speeds = _store_speed(n, (64, 256, 1024))
        print(f"\nRunStore.write, {n:,} rows into a fresh store (responses/s wall / CPU):")
        print("  " + ", ".join(f"batch {k}: {w:,.0f} / {c:,.0f}" for k, (w, c) in speeds.items()))
    in_audit = (first["n_generated"]) / max(first["overhead"], 1e-9)
    print(f"generation stage without the model: {in_audit:,.0f} pair sides/s (store lookup + writes + records)")


if __name__ == "__main__":
    main()
