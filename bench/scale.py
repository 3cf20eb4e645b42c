"""Benchmark the ``openai:`` adapter's throughput against a bare asyncio loop, on a local stub server.

A stub OpenAI-compatible server (``GET /v1/models``, ``POST /v1/chat/completions`` answering a
short reply with finish_reason "stop" after ``--latency-ms``) runs in a child process, so that its
threads share no GIL with the client measured; ``--replicas K`` starts K of them on different ports.
The server counts the requests in flight (under a lock) and reports the peak at ``GET /stats``.

For each concurrency C of ``--concurrency``, ``--n`` chat requests (distinct contexts and seeds) go
  * fairtalk: ``load_responder("openai:URL#stub?max_concurrency=C").respond_each`` in batches of
    ``--batch-size`` (64, as the pipeline sends them), on replica 1 (``--adapter-replicas``: all of them,
    as ``openai:URL1,URL2#stub``, for an adapter that takes a comma-separated list);
  * pipeline: ``fairtalk.respond`` on N/2 pairs (both sides, in-memory run store, preflight included);
  * bare: one ``httpx.AsyncClient`` (at most C connections) and a semaphore of C over all N requests
    at once, round-robin over the replicas, each reply parsed as JSON like the adapter does.
The three run interleaved over ``--rounds`` rounds (the order reversed every other round) so that
they share the machine's load. Rates are responses per wall second; overhead = 1 - fairtalk / bare;
ideal = C / latency (a server that answers in exactly the latency, with no client cost).

Usage::

    .venv/bin/python bench/scale.py                                   # N=2000, C=1,8,16,32, 20 ms
    .venv/bin/python bench/scale.py --n 500 --concurrency 1,8         # quick
    .venv/bin/python bench/scale.py --replicas 2 --json scale.json       # add --adapter-replicas to spread
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx

import fairtalk
from fairtalk.models import DecodingSettings, load_responder, respond_each
from fairtalk.records import Pair

MODEL = "stub"
REPLY = json.dumps({"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": MODEL, "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "Sure, that sounds fine to me."}, "finish_reason": "stop"}],
}).encode()  # fmt: skip
MODELS = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "bench"}]}).encode()


class _Stub(BaseHTTPRequestHandler):
    """The stub server's handler: keep-alive HTTP/1.1, TCP_NODELAY, a fixed latency per completion, in-flight counts."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: Nagle + delayed ACK would add 40 ms each
    latency: ClassVar[float] = 0.02
    lock: ClassVar[threading.Lock] = threading.Lock()
    counts: ClassVar[dict[str, int]] = {"in_flight": 0, "max_in_flight": 0}

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: bytes, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/stats":
            with self.lock:  # read the counts and reset the peak
                body = json.dumps(self.counts).encode()
                self.counts["max_in_flight"] = self.counts["in_flight"]
            return self._send(body)
        found = self.path.rstrip("/").endswith("/models")
        self._send(MODELS if found else b"{}", 200 if found else 404)

    def do_POST(self) -> None:  # noqa: N802
        payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if not self.path.endswith("/chat/completions") or not payload.get("messages"):
            return self._send(b'{"error": "bad request"}', 400)
        with self.lock:
            self.counts["in_flight"] += 1
            self.counts["max_in_flight"] = max(self.counts["max_in_flight"], self.counts["in_flight"])
        try:
            time.sleep(self.latency)
            self._send(REPLY)
        finally:
            with self.lock:
                self.counts["in_flight"] -= 1


def serve(latency: float) -> None:
    """Run one stub server on a free port of 127.0.0.1; print the port, then serve until killed."""
    _Stub.latency = latency
    ThreadingHTTPServer.request_queue_size = 256  # the default 5 drops SYNs when 32 clients connect at once
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    httpd.daemon_threads = True
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever(poll_interval=0.05)


def start_servers(k: int, latency_ms: float) -> tuple[list[subprocess.Popen[str]], list[str]]:
    """Start ``k`` stub servers in child processes; their base URLs (up to ``/v1``)."""
    procs, urls = [], []
    for _ in range(k):
        procs.append(subprocess.Popen([sys.executable, __file__, "--serve", "--latency-ms", str(latency_ms)],
                                      stdout=subprocess.PIPE, text=True))  # fmt: skip
        urls.append(f"http://127.0.0.1:{int(procs[-1].stdout.readline())}/v1")  # type: ignore[union-attr]
    for url in urls:  # wait until each one answers
        httpx.get(f"{url}/models", timeout=10).raise_for_status()
    return procs, urls


def peak(url: str) -> int:
    """The server's peak of requests in flight since the last call (then reset)."""
    return int(httpx.get(url.removesuffix("/v1") + "/stats", timeout=10).json()["max_in_flight"])


def run_fairtalk(url: str, contexts: Sequence[str], seeds: Sequence[int], c: int, batch_size: int) -> tuple[int, float]:
    """Responses and wall seconds of ``respond_each`` (the adapter's own) in batches, as the pipeline sends them."""
    responder = load_responder(f"openai:{url}#{MODEL}?max_concurrency={c}")
    settings, n_ok = DecodingSettings(), 0
    started = time.perf_counter()
    for start in range(0, len(contexts), batch_size):
        out = respond_each(responder, contexts[start : start + batch_size], settings, seeds=seeds[start : start + batch_size])
        n_ok += sum(isinstance(item, str) for item in out)
    seconds = time.perf_counter() - started
    responder.close()
    return n_ok, seconds


def run_pipeline(url: str, contexts: Sequence[str], c: int, batch_size: int) -> tuple[int, float]:
    """Responses and wall seconds of ``fairtalk.respond`` on pairs made of the contexts (in-memory store)."""
    pairs = [Pair(f"p{i}", "gender", contexts[2 * i], contexts[2 * i + 1], "a") for i in range(len(contexts) // 2)]
    started = time.perf_counter()
    done = fairtalk.respond(pairs, model=f"openai:{url}#{MODEL}?max_concurrency={c}", batch_size=batch_size)
    return done.summary.n_generated - done.summary.n_errors, time.perf_counter() - started


async def _bare(urls: Sequence[str], payloads: Sequence[dict[str, Any]], c: int) -> int:
    limits = httpx.Limits(max_connections=c, max_keepalive_connections=c)
    semaphore = asyncio.Semaphore(c)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0), limits=limits) as client:

        async def one(i: int, payload: dict[str, Any]) -> bool:
            async with semaphore:
                reply = await client.post(f"{urls[i % len(urls)]}/chat/completions", json=payload)
            return reply.status_code == 200 and isinstance(json.loads(reply.text)["choices"][0]["message"]["content"], str)

        return sum(await asyncio.gather(*(one(i, p) for i, p in enumerate(payloads))))


def run_bare(urls: Sequence[str], contexts: Sequence[str], seeds: Sequence[int], c: int) -> tuple[int, float]:
    """Responses and wall seconds of a bare asyncio loop sending the same chat payloads as the adapter."""
    payloads = [{"model": MODEL, "max_tokens": 40, "seed": s, "messages": [{"role": "user", "content": x}],
                 "temperature": 0.0} for x, s in zip(contexts, seeds)]  # fmt: skip
    started = time.perf_counter()
    n_ok = asyncio.run(_bare(urls, payloads, c))
    return n_ok, time.perf_counter() - started


def machine() -> str:
    """CPU model and core count, as ``lscpu`` and ``os.cpu_count`` report them."""
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name")), "?")
    except OSError:
        model = platform.processor() or "?"
    sniffio = "present" if importlib.util.find_spec("sniffio") else "absent"  # httpcore 1.0 re-imports it per lock when absent
    return (f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, httpx {httpx.__version__}, "
            f"httpcore {importlib.metadata.version('httpcore')}, sniffio {sniffio}")  # fmt: skip


def code_version() -> str:
    """fairtalk's version and the checkout's commit, ``+dirty`` when ``src/`` has uncommitted changes."""
    git = ["git", "-C", str(Path(__file__).resolve().parent.parent)]
    try:
        sha = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False).stdout
        dirty = subprocess.run([*git, "status", "--porcelain", "src"], capture_output=True, text=True, check=False).stdout
    except OSError:
        sha = dirty = ""
    return f"fairtalk {fairtalk.__version__}, git {sha.strip() or '?'}{'+dirty' if dirty.strip() else ''}"


def main() -> None:
    """Parse arguments, start the stub servers, run the benchmark, print the figures (and write JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="requests per method and concurrency (default 2000)")
    parser.add_argument("--concurrency", default="1,8,16,32", help="comma-separated max_concurrency values")
    parser.add_argument("--batch-size", type=int, default=64, help="contexts per respond_each call (default 64)")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="the stub's delay per completion (default 20)")
    parser.add_argument("--replicas", type=int, default=1, help="stub servers on different ports (default 1)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds the N requests are split into")
    parser.add_argument("--adapter-replicas", action="store_true", help="give fairtalk every replica (URL1,URL2)")
    parser.add_argument("--no-pipeline", action="store_true", help="skip the fairtalk.respond measurement")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # child process: one stub server
    args = parser.parse_args()
    if args.serve:
        serve(args.latency_ms / 1000)
        return

    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    contexts = [f"context {i}: what did you think of the film last night?" for i in range(args.n)]
    seeds = list(range(args.n))
    procs, urls = start_servers(max(1, args.replicas), args.latency_ms)
    figures: dict[str, Any] = {"machine": machine(), "code": code_version(), "n": args.n, "batch_size": args.batch_size,
                               "latency_ms": args.latency_ms, "replicas": len(urls), "adapter_replicas": args.adapter_replicas,
                               "rounds": args.rounds, "runs": []}  # fmt: skip
    print(f"machine: {figures['machine']}\ncode: {figures['code']}")
    print(f"stub: {len(urls)} server(s) in child processes, {args.latency_ms:g} ms per completion, keep-alive, TCP_NODELAY")
    print(f"requests: {args.n} per method and concurrency, batch size {args.batch_size}, {args.rounds} interleaved round(s)")
    target, used = (",".join(urls), urls) if args.adapter_replicas else (urls[0], urls[:1])
    if len(urls) > 1:
        print(f"note: bare spreads round-robin over {len(urls)} replicas; fairtalk and pipeline use "
              + (f"all {len(urls)} (openai:URL1,URL2,...#stub)" if args.adapter_replicas else "replica 1 only"))  # fmt: skip
    methods = ["fairtalk", "bare"] + ([] if args.no_pipeline else ["pipeline"])
    try:
        run_bare(urls, contexts[:50], seeds[:50], 8)  # warm-up: imports, first connections
        run_fairtalk(target, contexts[:50], seeds[:50], 8, args.batch_size)
        print(f"\n{'C':>4}{'replicas':>9}{'fairtalk/s':>12}{'bare/s':>10}{'overhead':>10}{'pipeline/s':>12}"
              f"{'overhead':>10}{'ideal/s':>9}{'max in flight':>15}")  # fmt: skip
        for c in levels:
            totals = {m: [0, 0.0] for m in methods}
            peaks = {m: [0] * len(urls) for m in methods}
            rounds = max(1, args.rounds)
            for r in range(rounds):
                lo, hi = args.n * r // rounds, args.n * (r + 1) // rounds
                for method in methods if r % 2 == 0 else methods[::-1]:
                    [peak(url) for url in urls]  # reset
                    if method == "fairtalk":
                        n_ok, seconds = run_fairtalk(target, contexts[lo:hi], seeds[lo:hi], c, args.batch_size)
                    elif method == "bare":
                        n_ok, seconds = run_bare(urls, contexts[lo:hi], seeds[lo:hi], c)
                    else:
                        n_ok, seconds = run_pipeline(target, contexts[lo:hi], c, args.batch_size)
                    peaks[method] = [max(p, peak(url)) for p, url in zip(peaks[method], urls)]
                    totals[method] = [totals[method][0] + n_ok, totals[method][1] + seconds]
            rate = {m: n / s if s else 0.0 for m, (n, s) in totals.items()}
            ideal = c / (args.latency_ms / 1000) if args.latency_ms else float("inf")
            run = {"concurrency": c, "replicas": len(urls), "ideal_per_s": ideal,
                   **{m: {"responses": n, "seconds": s, "per_s": rate[m], "max_in_flight": peaks[m]}
                      for m, (n, s) in totals.items()},
                   "overhead": 1 - rate["fairtalk"] / rate["bare"],
                   "pipeline_overhead": None if args.no_pipeline else 1 - rate["pipeline"] / rate["bare"]}  # fmt: skip
            figures["runs"].append(run)
            pipe = ("", "") if args.no_pipeline else (f"{rate['pipeline']:,.0f}", f"{run['pipeline_overhead']:.1%}")
            print(f"{c:>4}{len(urls):>9}{rate['fairtalk']:>12,.0f}{rate['bare']:>10,.0f}{run['overhead']:>10.1%}"
                  f"{pipe[0]:>12}{pipe[1]:>10}{ideal:>9,.0f}{'+'.join(map(str, peaks['fairtalk'][:len(used)])) + ' / ' + str(c):>15}")  # fmt: skip
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
    print("\nmax in flight: the server's peak of concurrent requests in the fairtalk runs (per replica used) / C")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
