"""What a pair column's context strings cost as Python objects, against the same texts packed (UTF-8 and offsets).

Builds the pairs of `bench/audit_scale.py`'s synthetic corpus (400,000 lines, 200,000 pairs,
gender axis) as the audit's pairs stage does (`PairSet.column()`), then adds up `sys.getsizeof` of
both sides' strings plus a list slot each, against their UTF-8 bytes plus an 8-byte offset each.

    .venv/bin/python bench/context_bytes.py
    .venv/bin/python bench/context_bytes.py --lines 2000000 --pairs 1000000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from audit_scale import make_corpus  # bench/ is first on sys.path when run as a script

from fairtalk.corpora import read_corpus
from fairtalk.counterfactual import Swapper
from fairtalk.lexicons import load_lexicon
from fairtalk.pairs import PairSet


def measure(corpus: Path, n_pairs: int) -> dict[str, float]:
    """Pairs, context strings, their bytes as objects (with list slots) and packed (with offsets)."""
    pair_set = PairSet(read_corpus(f"jsonl:{corpus}"), Swapper(load_lexicon("gender")), mixed="drop", limit=n_pairs, seed=0)
    column = pair_set.column()
    texts = [*column.a, *column.b]
    return {
        "pairs": len(column),
        "strings": len(texts),
        "objects": sum(sys.getsizeof(s) for s in texts) + 8 * len(texts),
        "packed": sum(len(s.encode("utf-8")) for s in texts) + 8 * len(texts),
        "chars": sum(map(len, texts)) / max(len(texts), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=400_000, help="lines of the synthetic corpus")
    parser.add_argument("--pairs", type=int, default=200_000, help="pairs to build")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        make_corpus(corpus, args.lines)
        m = measure(corpus, args.pairs)
    mib = 2**20
    print(f"pairs {m['pairs']:,}; context strings {m['strings']:,}; mean {m['chars']:.1f} characters")
    print(f"as str objects + list slots: {m['objects'] / mib:.1f} MiB ({m['objects'] / m['pairs']:.0f} B a pair)")
    print(f"packed UTF-8 + int64 offsets: {m['packed'] / mib:.1f} MiB ({m['packed'] / m['pairs']:.0f} B a pair)")
    print(
        f"packing would save {(m['objects'] - m['packed']) / mib:.1f} MiB ({(m['objects'] - m['packed']) / m['pairs']:.0f} B a pair)"
    )


if __name__ == "__main__":
    main()
