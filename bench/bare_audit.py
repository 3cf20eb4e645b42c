"""The bare ``fairtalk audit`` against the torch floor of its default model, measured in one run.

- **torch floor**: the bare audit's distinct contexts (builtin:chitchat held-out split, the
  default axes and pairs, seed 0) encoded by all-MiniLM-L6-v2 in float32 in one
  sentence-transformers call (which sorts them by length), ``--floor-batch`` at a time, plus the
  product with the shipped pool's 30,000 vectors and the argmax: the least a plain torch encode
  of the run's contexts costs. Timed in a child process after the model has loaded.
- **bare audit**: ``fairtalk audit -o DIR`` with no other option, in a child process, timed from
  its start (imports, model load, pairs, answers, scores, reports).

Both children are timed for wall and CPU (user + system, from ``wait4``) and peak RSS, with the
load average before and after each; ``--rounds N`` alternates them N times so that they share
the machine's load; ``--floor-threads 1`` times the floor on one thread, which on a busy machine is
its best. The audit's answers are compared with the floor's float32 top candidates
(the same context) and, with ``--reference DIR``, with an earlier bare audit's report folder
(the same pair and side). ``--also MODEL_SPEC`` times one more audit with ``--model MODEL_SPEC``
(e.g. ``"builtin:minilm-retrieval?dtype=float32"``).

Run: ``nice -n 5 .venv/bin/python bench/bare_audit.py [--rounds 1] [--reference DIR]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from _machine import machine, run_child

_AUDIT = "import sys; from fairtalk.cli import main; sys.argv = ['fairtalk', 'audit', *sys.argv[1:]]; sys.exit(main())"


def bare_audit_contexts() -> list[str]:
    """The bare audit's contexts, both sides of every pair of every default axis, in order."""
    import fairtalk
    from fairtalk.lexicons import load_lexicon

    config = fairtalk.AuditConfig()
    corpus = fairtalk.read_corpus(config.corpus, split=config.effective_split)
    contexts: list[str] = []
    for axis in config.axes:
        swapper = fairtalk.Swapper(load_lexicon(axis), seed=config.seed)
        for pair in fairtalk.build_pairs(corpus, swapper, limit=config.n_pairs, seed=config.seed, mixed=config.mixed):
            contexts += (pair.a, pair.b)
    return contexts


def floor(contexts_file: str, answers_file: str, batch_size: int, threads: int | None) -> None:
    """Child process: encode the distinct contexts in one float32 call, then the pool product; print the timings."""
    import numpy as np
    import torch

    if threads:
        torch.set_num_threads(threads)

    from fairtalk.models._sentence_retrieval import _load_model, load_sentence_pool
    from fairtalk.training import shipped_checkpoint

    started = time.perf_counter()
    model = _load_model(128)
    pool = load_sentence_pool(shipped_checkpoint("minilm-retrieval"))
    vectors = pool.vectors.astype(np.float32)
    model.encode(["warm up the model"], show_progress_bar=False)
    load = time.perf_counter() - started
    unique = sorted(set(json.loads(Path(contexts_file).read_text(encoding="utf-8"))))
    wall, cpu = time.perf_counter(), time.process_time()
    encoded = model.encode(unique, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    encode_wall, encode_cpu = time.perf_counter() - wall, time.process_time() - cpu
    top = np.concatenate([(encoded[s : s + 1024] @ vectors.T).argmax(axis=1) for s in range(0, len(unique), 1024)])
    total_wall, total_cpu = time.perf_counter() - wall, time.process_time() - cpu
    answers = {context: pool.texts[j] for context, j in zip(unique, top)}
    Path(answers_file).write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
    figures = {
        "n_contexts": len(unique),
        "load_wall": load,
        "encode_wall": encode_wall,
        "encode_cpu": encode_cpu,
        "wall": total_wall,
        "cpu": total_cpu,
        "torch_threads": torch.get_num_threads(),
    }
    print(json.dumps(figures))


def _answers(folder: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(pair id, side) -> (context, response) over every axis folder of an audit's report folder."""
    found = {}
    for path in sorted(folder.glob("*/responses.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found[(row["pair_id"], row["side"])] = (row["context"], row["response"])
    return found


def _agreement(answers: dict[tuple[str, str], tuple[str, str]], top: dict[str, str]) -> tuple[int, int]:
    same = sum(top.get(context) == response for context, response in answers.values())
    return same, len(answers)


def _reference_agreement(answers: dict, reference: dict) -> tuple[int, int]:
    shared = [key for key in answers if key in reference and reference[key][0] == answers[key][0]]
    return sum(answers[key][1] == reference[key][1] for key in shared), len(shared)


def _row(name: str, r: dict[str, float]) -> str:
    cpu = r["user"] + r["system"]
    return (
        f"{name:<34}{r['wall']:>8.1f}{cpu:>8.1f}{r['user']:>8.1f}{r['peak_rss_mib']:>9.0f}"
        f"   {r['load_before']:.1f} -> {r['load_after']:.1f}"
    )


def _one_round(args: argparse.Namespace, tmp: Path, k: int, contexts_file: Path) -> dict[str, object]:
    """One floor and one bare audit (and the ``--also`` audit), each in a fresh child process."""
    answers_file = tmp / f"floor-{k}.json"
    command = [sys.executable, __file__, "--floor", str(contexts_file), str(answers_file), "--floor-batch", str(args.floor_batch)]
    command += ["--floor-threads", str(args.floor_threads)] if args.floor_threads else []
    child = run_child(command, tmp / f"floor-{k}.log")
    inner = json.loads((tmp / f"floor-{k}.log").read_text().strip().splitlines()[-1])
    audits = {}
    for name, extra in [("bare audit", []), *((f"audit --model {spec}", ["--model", spec]) for spec in args.also)]:
        out = tmp / f"audit-{k}-{len(audits)}"
        audits[name] = {**run_child([sys.executable, "-c", _AUDIT, "-o", str(out), *extra], tmp / f"audit-{k}-{len(audits)}.log")}
        audits[name]["answers"] = _answers(out)
    return {"floor_child": child, "floor": inner, "audits": audits, "top": json.loads(answers_file.read_text())}


def main() -> None:
    """Time the floor and the bare audit; print the table, the ratios and the answers' agreement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="floor and audit alternated this many times")
    parser.add_argument("--floor-batch", type=int, default=128, help="contexts per batch in the floor's one call")
    parser.add_argument("--floor-threads", type=int, help="torch threads of the floor (default: torch's, one per core)")
    parser.add_argument("--reference", type=Path, help="an earlier bare audit's report folder, to compare answers with")
    parser.add_argument("--also", action="append", default=[], metavar="MODEL_SPEC", help="time one more audit with --model SPEC")
    parser.add_argument("--floor", nargs=2, metavar=("CONTEXTS", "ANSWERS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        floor(*args.floor, batch_size=args.floor_batch, threads=args.floor_threads)
        return

    print(machine(load=False, stamp=True))
    contexts = bare_audit_contexts()
    print(f"bare audit contexts: {len(contexts):,} ({len(set(contexts)):,} distinct)")
    reference = _answers(args.reference) if args.reference else None
    with tempfile.TemporaryDirectory() as tmp:
        contexts_file = Path(tmp) / "contexts.json"
        contexts_file.write_text(json.dumps(contexts, ensure_ascii=False), encoding="utf-8")
        rounds = [_one_round(args, Path(tmp), k, contexts_file) for k in range(args.rounds)]
    for k, r in enumerate(rounds):
        fl = r["floor"]
        print(f"\nround {k + 1} (torch {fl['torch_threads']} threads)")
        print(f"{'':<34}{'wall s':>8}{'CPU s':>8}{'user s':>8}{'peak MiB':>9}   load (1 min) before -> after")
        print(_row("torch floor, child process", r["floor_child"]))
        print(
            f"  floor itself (model loaded): {fl['wall']:.1f} s wall, {fl['cpu']:.1f} s CPU "
            f"(encode {fl['encode_wall']:.1f} s wall / {fl['encode_cpu']:.1f} s CPU, pool product the rest; "
            f"{fl['n_contexts']:,} contexts, {1000 * fl['encode_cpu'] / fl['n_contexts']:.2f} ms CPU each; load {fl['load_wall']:.1f} s)"
        )
        for name, a in r["audits"].items():
            print(_row(name, a))
            same, n = _agreement(a["answers"], r["top"])
            line = f"  {a['wall'] / fl['wall']:.2f}x the floor's wall, {(a['user'] + a['system']) / fl['cpu']:.2f}x its CPU; "
            line += f"answers equal to the float32 floor's top candidate: {same:,} of {n:,} ({same / max(n, 1):.2%})"
            if reference is not None:
                same_ref, n_ref = _reference_agreement(a["answers"], reference)
                line += f"; to --reference: {same_ref:,} of {n_ref:,} ({same_ref / max(n_ref, 1):.2%})"
            print(line)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"\nthis script: {usage.ru_utime + usage.ru_stime:.1f} s CPU")


if __name__ == "__main__":
    main()
