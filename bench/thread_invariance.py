"""Does torch's thread count change the default model's answers? The bare audit's contexts on 1 thread and on all.

``builtin:minilm-retrieval`` picks torch's threads per batch by timing (``ThreadChoice``: one
thread or all, whichever ran faster), and a short batch's vectors can differ in their last bits
between the two, so an answer could follow the machine's load. This script takes a bare
``fairtalk audit``'s report folder (each axis's ``responses.jsonl`` holds the contexts and seeds),
and hands each axis's contexts to the model as the audit does (one ``respond_stream`` call per
axis, in the order of the run's axes, one responder for all: the same chunks of 512, the same
batches of 64 sorted by word pieces, the same autocast, the same scoring and argmax), once with
every batch on one thread and once with every batch on all of torch's threads (``ThreadChoice``
replaced by a fixed choice), in each precision. Per precision it prints the contexts whose vector
differs at all, the largest absolute difference, the contexts whose top-1 candidate (and the pair
sides whose answer) differs, and the smallest gap between a context's top-1 and top-2 scores.

Run: ``nice -n 5 .venv/bin/python bench/thread_invariance.py REPORT_DIR`` (a bare audit's ``-o`` folder).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from _machine import machine

_PRECISIONS = ("bfloat16", "float32")


class _FixedThreads:
    """Stands in for ``ThreadChoice``: every batch on ``n`` threads."""

    def __init__(self, n: int) -> None:
        self.n = n

    def next(self, most: int) -> int:
        return self.n

    def record(self, threads: int, seconds_per_piece: float) -> None:
        pass


@dataclass
class _Run:
    """One pass over the audit's contexts: each distinct context's vector, top-1 index and top-1/top-2 gap; each item's answer."""

    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    top: dict[str, int] = field(default_factory=dict)
    gap: dict[str, float] = field(default_factory=dict)
    answers: dict[tuple[str, str], str] = field(default_factory=dict)
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)


def read_axes(report: Path) -> list[tuple[str, list[dict[str, object]]]]:
    """The run's axes in order (``run.json``), each with its ``responses.jsonl`` rows."""
    run = json.loads((report / "run.json").read_text(encoding="utf-8"))
    axes = []
    for axis in run["config"]["axes"]:
        folder = run["axes"][axis].get("folder", axis)
        lines = (report / folder / "responses.jsonl").read_text(encoding="utf-8").splitlines()
        axes.append((axis, [json.loads(line) for line in lines if line.strip()]))
    return axes


def one_run(axes: list[tuple[str, list[dict[str, object]]]], dtype: str, threads: int) -> _Run:
    """The audit's calls through a fresh ``builtin:minilm-retrieval`` in ``dtype``, every batch on ``threads``."""
    from fairtalk.models import DecodingSettings, load_responder

    responder = load_responder(f"builtin:minilm-retrieval?dtype={dtype}")
    encoder = responder.encoder  # type: ignore[attr-defined]
    encoder._threads = _FixedThreads(threads)
    run = _Run()
    scores = responder.scores  # type: ignore[attr-defined]

    def recording(contexts: list[str]) -> np.ndarray:
        s = scores(contexts)
        best = s.argmax(axis=1)  # what RetrievalResponder.respond answers with (ties: the earliest)
        two = -np.partition(-s, 1, axis=1)[:, :2]
        for context, j, (first, second) in zip(contexts, best, two):
            run.top.setdefault(context, int(j))
            run.gap.setdefault(context, float(first) - float(second))
        return s

    responder.scores = recording  # type: ignore[attr-defined]
    load_before, started = os.getloadavg()[0], time.perf_counter()
    for _, rows in axes:
        items = list(dict.fromkeys((str(r["context"]), int(r["seed"]), str(r["pair_id"]), str(r["side"])) for r in rows))
        misses = list(dict.fromkeys((context, seed) for context, seed, _, _ in items))  # the run store's key
        keys = {(context, seed): (pair, side) for context, seed, pair, side in items}
        stream = responder.respond_stream([c for c, _ in misses], DecodingSettings(), seeds=[s for _, s in misses])
        for done in stream:
            if done is not None:
                j, answer = done
                run.answers[keys[misses[j]]] = str(answer)
    run.seconds, run.load = time.perf_counter() - started, (load_before, os.getloadavg()[0])
    run.vectors = {text: row.copy() for text, row in encoder._memo.items()}
    return run


def compare(dtype: str, one: _Run, many: _Run, threads: int, pool: np.ndarray, audit: dict[tuple[str, str], str]) -> None:
    """Print how the two runs' vectors, top-1 candidates and answers differ."""
    contexts = list(one.vectors)
    a = np.stack([one.vectors[c] for c in contexts])
    b = np.stack([many.vectors[c] for c in contexts])
    moved = np.flatnonzero((a != b).any(axis=1))
    diff = float(np.abs(a - b).max()) if len(moved) else 0.0
    change = np.concatenate(  # per moved context, the largest change of its score for any candidate
        [np.abs((a[rows] - b[rows]) @ pool.T).max(axis=1) for rows in np.array_split(moved, max(1, len(moved) // 512))]
    )
    score_change = float(change.max()) if len(moved) else 0.0
    flipped = [c for c in contexts if one.top[c] != many.top[c]]
    answers = sum(one.answers[k] != many.answers[k] for k in one.answers)
    gaps = np.array([min(one.gap[c], many.gap[c]) for c in contexts])
    moved_gaps = gaps[moved]
    from fairtalk.models._sentence_retrieval import _load_model

    pieces = (
        _load_model(128).tokenizer([contexts[i] for i in moved], truncation=True, max_length=128)["input_ids"]
        if len(moved)
        else []
    )
    lengths = sorted(len(p) for p in pieces)
    print(
        f"\n{dtype}: 1 thread {one.seconds:.1f} s (load {one.load[0]:.1f} -> {one.load[1]:.1f}), "
        f"{threads} threads {many.seconds:.1f} s (load {many.load[0]:.1f} -> {many.load[1]:.1f})"
    )
    print(f"  distinct contexts: {len(contexts):,}; pair sides: {len(one.answers):,}")
    print(
        f"  contexts whose vector differs at all: {len(moved):,}"
        + (f" (word pieces {lengths[0]}-{lengths[-1]})" if lengths else "")
    )
    print(
        f"  largest absolute difference in a vector component: {diff:.3g}; in a score (any of the 30,000 candidates): {score_change:.3g}"
    )
    print(f"  contexts whose top-1 candidate differs: {len(flipped):,}; pair sides whose answer differs: {answers:,}")
    print(
        f"  smallest top-1 vs top-2 score gap: {gaps.min():.3g} (over all {len(contexts):,} contexts); "
        f"{moved_gaps.min() if len(moved) else float('nan'):.3g} among those whose vector differs"
    )
    print(f"  contexts whose gap is at most twice the largest score change seen: {int((gaps <= 2 * score_change).sum()):,}")
    if len(moved):  # how far each moved context's own gap moved, against that gap
        g1 = np.array([one.gap[contexts[i]] for i in moved])
        g2 = np.array([many.gap[contexts[i]] for i in moved])
        ratio = np.abs(g1 - g2) / np.maximum(np.minimum(g1, g2), 1e-30)
        k = int(np.argmax(ratio))
        print(
            f"  closest call among the contexts that moved: gap {g1[k]:.3g} on 1 thread, {g2[k]:.3g} on {threads} "
            f"(moved by {ratio[k]:.1%} of the smaller; each context's own score change at most {change[k]:.3g})"
        )
    for c in flipped[:10]:
        print(f"    flipped (gap {one.gap[c]:.3g} / {many.gap[c]:.3g}): {c[:80]!r}")
    if audit:
        same = [sum(run.answers.get(k) == v for k, v in audit.items()) for run in (one, many)]
        print(f"  the audit's own answers equal to 1 thread's: {same[0]:,} of {len(audit):,}; to {threads} threads': {same[1]:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a bare `fairtalk audit -o DIR` report folder")
    parser.add_argument("--dtype", choices=_PRECISIONS, action="append", help="a precision to test (default: both)")
    args = parser.parse_args()
    import torch

    from fairtalk.models._sentence_retrieval import load_sentence_pool
    from fairtalk.training import shipped_checkpoint

    most = torch.get_num_threads()
    axes = read_axes(args.report)
    run = json.loads((args.report / "run.json").read_text(encoding="utf-8"))
    audit = {(str(r["pair_id"]), str(r["side"])): str(r["response"]) for _, rows in axes for r in rows}
    pool = load_sentence_pool(shipped_checkpoint("minilm-retrieval")).vectors.astype(np.float32)
    print(machine(stamp=True))
    print(f"torch {torch.__version__}, {most} threads by default; the report's model: {run['model']}")
    print(f"axes: {', '.join(f'{axis} ({len(rows):,} pair sides)' for axis, rows in axes)}")
    for dtype in args.dtype or _PRECISIONS:
        one = one_run(axes, dtype, 1)
        many = one_run(axes, dtype, most)
        same_precision = ("-bf16" in run["model"]) == (dtype == "bfloat16")
        compare(dtype, one, many, most, pool, audit if same_precision else {})


if __name__ == "__main__":
    main()
