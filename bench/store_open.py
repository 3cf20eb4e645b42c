"""What opening an existing run store costs now that it is checked first (``PRAGMA quick_check``).

A resumed run opens the store it wrote before; since 2026-11-30 ``RunStore`` refuses one that
SQLite finds damaged, so every open of an existing store reads it through once. For each size the
script writes a store of N answers (one run, contexts of ~60 characters, answers of ~80), closes
it, and then, per round, times in one process: opening it with ``RunStore`` (the check included),
the check alone (``PRAGMA quick_check(3)`` on a plain connection), and a plain ``sqlite3`` open
with one read of the schema version (the open without the check). Wall seconds, the best of the
rounds; the store's size on disk.

Usage::

    .venv/bin/python bench/store_open.py                     # 10k, 100k and 1M answers
    .venv/bin/python bench/store_open.py --sizes 10000 100000 --rounds 3
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _machine import machine

from fairtalk.models import DecodingSettings
from fairtalk.store import RunStore, context_hash


def _write(path: Path, n: int) -> None:
    with RunStore(path) as store:
        run = store.run_id("bench:store-open", DecodingSettings())
        step = 10_000
        for start in range(0, n, step):
            rows = []
            for i in range(start, min(n, start + step)):
                context = f"context {i:09d}: how was your weekend, did you see the game?"
                rows.append((context_hash(context), 0, context, f"answer {i:09d}: " + "it was fine, thanks " * 3, None))
            store.write(run, rows)


def _best(fn: Callable[[Path], None], path: Path, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(path)
        times.append(time.perf_counter() - start)
    return min(times)


def _open_checked(path: Path) -> None:
    RunStore(path).close()


def _check_only(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA quick_check(3)").fetchall()
    db.close()


def _open_plain(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("SELECT * FROM sqlite_master LIMIT 1").fetchall()
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    print("| answers | store MB | RunStore open (checked) s | quick_check alone s | plain open s |")
    print("|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="fairtalk-bench-store-") as folder:
        for n in args.sizes:
            path = Path(folder) / f"store-{n}.sqlite"
            _write(path, n)
            checked = _best(_open_checked, path, args.rounds)
            check = _best(_check_only, path, args.rounds)
            plain = _best(_open_plain, path, args.rounds)
            size = path.stat().st_size / 2**20
            print(f"| {n:,} | {size:.1f} | {checked:.3f} | {check:.3f} | {plain:.4f} |", flush=True)


if __name__ == "__main__":
    main()
