"""Benchmark the ``openai:`` adapter's throughput against a bare asyncio loop, on local stub servers.

A stub OpenAI-compatible server (``GET /v1/models``, ``POST /v1/chat/completions`` answering a
short reply with finish_reason "stop" after ``--latency-ms``; a payload without ``"stream": false``
is refused) runs in a child process, so that its threads share no GIL with the client measured;
``--replicas K`` starts K of them on different ports. Each server counts the requests in flight
(under a lock) and reports the peak at ``GET /stats``.

For each concurrency C of ``--concurrency``, N chat requests (distinct contexts and seeds; N is
``--n``, or ``--per-slot`` x C so that every level runs about as long) go
  * fairtalk: one ``respond_each`` of ``load_responder("openai:URL1,URL2,...#stub?max_concurrency=C")``
    over all N (one stream: C requests in flight all the time, spread over the replicas by least
    outstanding requests), the adapter's own path;
  * pipeline: ``fairtalk.respond`` on N/2 pairs (both sides; preflight, in-memory run store and
    the generation summary included), the path a user's run takes;
  * bare: C worker coroutines in one ``asyncio.run``, each with its own ``httpx.AsyncClient`` (as the
    adapter has one per slot), sending the same payloads round-robin over the replicas, each reply
    parsed as JSON like the adapter does: the same requests without fairtalk's machinery (helper
    thread, result queue, endpoints, retries, run store);
  * shared (``--shared``): the bare loop on one client with a pool of C connections, the naive way;
    httpcore's pool scans every connection for every waiting request, so it saturates a core
    from about C = 48 on a 2-core machine.
The three run interleaved over ``--rounds`` rounds (the order reversed every other round) so that
they share the machine's load; the load average is printed before each level. ``--repeat R`` runs
every level R times (all levels in turn, R times over) and ends with the medians: on a shared
machine one run is noise. Rates are responses per wall second; overhead = 1 - fairtalk / bare;
ideal = C / latency (a server that answers in exactly the latency, with no client cost). "in
flight" is each server's peak of concurrent requests during the fairtalk runs (one per replica)
and the adapter's own peak count, against C. "cpu us" is this process's CPU time (all its
threads, not the stubs') per response for fairtalk, bare and pipeline: steadier than the rates
when other jobs share the machine.

Usage::

    .venv/bin/python bench/scale.py                                   # N=2000, C=1,8,16,32, 20 ms, 1 replica
    .venv/bin/python bench/scale.py --n 500 --concurrency 1,8         # quick
    .venv/bin/python bench/scale.py --replicas 4 --latency-ms 50 --per-slot 100 --concurrency 1,8,32,64 --json s.json
    .venv/bin/python bench/scale.py --latency-ms 50 --per-slot 150 --concurrency 64 --repeat 3   # medians of 3
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
from _machine import cpu_model

import fairtalk
from fairtalk.models import DecodingSettings, load_responder
from fairtalk.records import Pair

MODEL = "stub"
REPLY = json.dumps(
    {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Sure, that sounds fine to me."}, "finish_reason": "stop"}
        ],
    }
).encode()
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
        if not self.path.endswith("/chat/completions") or not payload.get("messages") or payload.get("stream") is not False:
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
        procs.append(
            subprocess.Popen(
                [sys.executable, __file__, "--serve", "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE, text=True
            )
        )
        urls.append(f"http://127.0.0.1:{int(procs[-1].stdout.readline())}/v1")  # type: ignore[union-attr]
    for url in urls:  # wait until each one answers
        httpx.get(f"{url}/models", timeout=10).raise_for_status()
    return procs, urls


def peak(url: str) -> int:
    """The server's peak of requests in flight since the last call (then reset)."""
    return int(httpx.get(url.removesuffix("/v1") + "/stats", timeout=10).json()["max_in_flight"])


def run_fairtalk(url: str, contexts: Sequence[str], seeds: Sequence[int], c: int) -> tuple[int, float, int]:
    """Responses, wall seconds and the adapter's own in-flight peak of one ``respond_each`` over every context."""
    responder = load_responder(f"openai:{url}#{MODEL}?max_concurrency={c}")
    started = time.perf_counter()
    out = responder.respond_each(contexts, DecodingSettings(), seeds=seeds)  # type: ignore[attr-defined]
    seconds = time.perf_counter() - started
    responder.close()
    return sum(isinstance(item, str) for item in out), seconds, int(responder.in_flight.most)  # type: ignore[attr-defined]


def run_pipeline(url: str, contexts: Sequence[str], c: int) -> tuple[int, float, int]:
    """Responses, wall seconds and the summary's in-flight peak of ``fairtalk.respond`` on pairs of the contexts."""
    pairs = [Pair(f"p{i}", "gender", contexts[2 * i], contexts[2 * i + 1], "a") for i in range(len(contexts) // 2)]
    started = time.perf_counter()
    done = fairtalk.respond(pairs, model=f"openai:{url}#{MODEL}?max_concurrency={c}")
    return done.summary.n_generated - done.summary.n_errors, time.perf_counter() - started, done.summary.max_in_flight or 0


async def _bare(urls: Sequence[str], payloads: Sequence[dict[str, Any]], c: int, *, shared: bool) -> int:
    timeout = httpx.Timeout(30.0)
    if shared:  # one client, one pool of C connections for every request
        one = httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=c, max_keepalive_connections=c))
        clients = [one] * c
    else:  # a client per slot, one connection per replica
        limits = httpx.Limits(max_connections=len(urls), max_keepalive_connections=len(urls))
        tls = httpx.create_ssl_context()
        clients = [httpx.AsyncClient(timeout=timeout, limits=limits, verify=tls) for _ in range(c)]
    todo = iter(enumerate(payloads))

    async def worker(client: httpx.AsyncClient) -> int:
        n_ok = 0
        for i, payload in todo:
            reply = await client.post(f"{urls[i % len(urls)]}/chat/completions", json=payload)
            n_ok += reply.status_code == 200 and isinstance(json.loads(reply.text)["choices"][0]["message"]["content"], str)
        return n_ok

    try:
        return sum(await asyncio.gather(*(worker(client) for client in clients)))
    finally:
        for client in dict.fromkeys(clients):
            await client.aclose()


def run_bare(
    urls: Sequence[str], contexts: Sequence[str], seeds: Sequence[int], c: int, *, shared: bool = False
) -> tuple[int, float, int]:
    """Responses and wall seconds of a bare asyncio loop: C workers sending the same chat payloads as the adapter."""
    payloads = [
        {
            "model": MODEL,
            "max_tokens": 40,
            "seed": s,
            "messages": [{"role": "user", "content": x}],
            "stream": False,
            "temperature": 0.0,
        }
        for x, s in zip(contexts, seeds)
    ]
    started = time.perf_counter()
    n_ok = asyncio.run(_bare(urls, payloads, c, shared=shared))
    return n_ok, time.perf_counter() - started, c


def machine() -> str:
    """CPU model and core count, as ``lscpu`` and ``os.cpu_count`` report them."""
    model = cpu_model()
    sniffio = "present" if importlib.util.find_spec("sniffio") else "absent"  # httpcore 1.0 re-imports it per lock when absent
    return (
        f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, httpx {httpx.__version__}, "
        f"httpcore {importlib.metadata.version('httpcore')}, sniffio {sniffio}"
    )


def code_version() -> str:
    """fairtalk's version and the checkout's commit, ``+dirty`` when ``src/`` has uncommitted changes."""
    git = ["git", "-C", str(Path(__file__).resolve().parent.parent)]
    try:
        sha = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False).stdout
        dirty = subprocess.run([*git, "status", "--porcelain", "src"], capture_output=True, text=True, check=False).stdout
    except OSError:
        sha = dirty = ""
    return f"fairtalk {fairtalk.__version__}, git {sha.strip() or '?'}{'+dirty' if dirty.strip() else ''}"


def client_cpu() -> float:
    """CPU seconds of this process so far, every thread (user + system; the stubs are child processes, not counted)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(
    c: int,
    n: int,
    methods: Sequence[str],
    urls: Sequence[str],
    contexts: Sequence[str],
    seeds: Sequence[int],
    rounds: int,
    latency_ms: float,
) -> dict[str, Any]:
    """One level: the N requests of every method, split into ``rounds`` interleaved rounds (order reversed every other)."""
    target = ",".join(urls)  # the adapter spreads over every replica (openai:URL1,URL2,...#stub)
    load = os.getloadavg()[0]
    totals = {m: [0, 0.0, 0.0] for m in methods}  # responses, wall seconds, client CPU seconds
    peaks: dict[str, tuple[list[int], int]] = {m: ([0] * len(urls), 0) for m in methods}  # per server, client
    for r in range(rounds):
        lo, hi = n * r // rounds, n * (r + 1) // rounds
        for method in methods if r % 2 == 0 else methods[::-1]:
            [peak(url) for url in urls]  # reset
            cpu = client_cpu()
            if method == "fairtalk":
                n_ok, seconds, own = run_fairtalk(target, contexts[lo:hi], seeds[lo:hi], c)
            elif method in ("bare", "shared"):
                n_ok, seconds, own = run_bare(urls, contexts[lo:hi], seeds[lo:hi], c, shared=method == "shared")
            else:
                n_ok, seconds, own = run_pipeline(target, contexts[lo:hi], c)
            cpu = client_cpu() - cpu
            servers, client = peaks[method]
            peaks[method] = ([max(p, peak(url)) for p, url in zip(servers, urls)], max(client, own))
            totals[method] = [totals[method][0] + n_ok, totals[method][1] + seconds, totals[method][2] + cpu]
    rate = {m: n_ok / s if s else 0.0 for m, (n_ok, s, _) in totals.items()}
    return {
        "concurrency": c,
        "replicas": len(urls),
        "n": n,
        "ideal_per_s": c / (latency_ms / 1000) if latency_ms else None,
        "load_average": load,
        **{
            m: {
                "responses": n_ok,
                "seconds": s,
                "per_s": rate[m],
                "cpu_seconds": cpu,
                "cpu_us_per_response": 1e6 * cpu / n_ok if n_ok else None,
                "max_in_flight_per_server": peaks[m][0],
                "max_in_flight_client": peaks[m][1],
            }
            for m, (n_ok, s, cpu) in totals.items()
        },
        "overhead": 1 - rate["fairtalk"] / rate["bare"],
        "pipeline_overhead": 1 - rate["pipeline"] / rate["bare"] if "pipeline" in rate else None,
    }


def row(run: dict[str, Any], methods: Sequence[str], label: str = "") -> str:
    """One printed line of a level (``label`` before it: the repeat, or "median")."""
    pipe = ("", "") if "pipeline" not in methods else (f"{run['pipeline']['per_s']:,.0f}", f"{run['pipeline_overhead']:.1%}")
    flight = f"{'+'.join(map(str, run['fairtalk']['max_in_flight_per_server']))} / {run['fairtalk']['max_in_flight_client']} of {run['concurrency']}"
    cpu = "/".join(f"{run[m]['cpu_us_per_response'] or 0:.0f}" for m in ("fairtalk", "bare", "pipeline") if m in methods)
    ideal = run["ideal_per_s"] or float("inf")
    return (
        f"{label:>7}{run['concurrency']:>5}{run['replicas']:>9}{run['n']:>7}{run['fairtalk']['per_s']:>12,.0f}"
        f"{run['bare']['per_s']:>10,.0f}{run['overhead']:>10.1%}{pipe[0]:>12}{pipe[1]:>10}{ideal:>9,.0f}{flight:>28}"
        f"{run['load_average']:>6.2f}{cpu:>16}" + (f"{run['shared']['per_s']:>10,.0f}" if "shared" in methods else "")
    )


def medians(runs: Sequence[dict[str, Any]], methods: Sequence[str]) -> dict[str, Any]:
    """The median of each figure over repeats of one level (overheads: the median of each repeat's own overhead)."""
    first = runs[0]
    out: dict[str, Any] = {key: first[key] for key in ("concurrency", "replicas", "n", "ideal_per_s")}
    out["load_average"] = statistics.median(r["load_average"] for r in runs)
    for m in methods:
        out[m] = {key: statistics.median(r[m][key] for r in runs) for key in ("per_s", "cpu_us_per_response")}
        out[m]["max_in_flight_per_server"] = [max(p) for p in zip(*(r[m]["max_in_flight_per_server"] for r in runs))]
        out[m]["max_in_flight_client"] = max(r[m]["max_in_flight_client"] for r in runs)
    for key in ("overhead", "pipeline_overhead"):
        out[key] = None if first[key] is None else statistics.median(r[key] for r in runs)
    out["repeats"] = len(runs)
    return out


def main() -> None:
    """Parse arguments, start the stub servers, run the benchmark, print the figures (and write JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="requests per method and concurrency (default 2000)")
    parser.add_argument("--per-slot", type=int, help="requests per unit of concurrency instead (N = PER_SLOT x C)")
    parser.add_argument("--concurrency", default="1,8,16,32", help="comma-separated max_concurrency values")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="the stub's delay per completion (default 20)")
    parser.add_argument("--replicas", type=int, default=1, help="stub servers on different ports (default 1)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds the N requests are split into")
    parser.add_argument("--repeat", type=int, default=1, help="run every level this many times (levels in turn); medians")
    parser.add_argument("--no-pipeline", action="store_true", help="skip the fairtalk.respond measurement")
    parser.add_argument("--shared", action="store_true", help="also time a bare loop on one shared client (slow at C > 32)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # child process: one stub server
    args = parser.parse_args()
    if args.serve:
        serve(args.latency_ms / 1000)
        return

    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    sizes = {c: args.n if args.per_slot is None else args.per_slot * c for c in levels}
    contexts = [f"context {i}: what did you think of the film last night?" for i in range(max(sizes.values()))]
    seeds = list(range(len(contexts)))
    procs, urls = start_servers(max(1, args.replicas), args.latency_ms)
    target = ",".join(urls)
    repeats, rounds = max(1, args.repeat), max(1, args.rounds)
    figures: dict[str, Any] = {
        "machine": machine(),
        "code": code_version(),
        "n": sizes,
        "latency_ms": args.latency_ms,
        "replicas": len(urls),
        "rounds": rounds,
        "repeats": repeats,
        "runs": [],
    }
    print(f"machine: {figures['machine']}\ncode: {figures['code']}")
    print(f"stub: {len(urls)} server(s) in child processes, {args.latency_ms:g} ms per completion, keep-alive, TCP_NODELAY")
    print(
        f"requests per method: {', '.join(f'C={c}: {n}' for c, n in sizes.items())}; {rounds} interleaved round(s)"
        f"{f', every level {repeats} times' if repeats > 1 else ''}"
    )
    if len(urls) > 1:
        print(f"replicas: fairtalk and pipeline spread over all {len(urls)} by least outstanding requests; bare round-robin")
    methods = ["fairtalk", "bare"] + ([] if args.no_pipeline else ["pipeline"]) + (["shared"] if args.shared else [])
    header = (
        f"{'':>7}{'C':>5}{'replicas':>9}{'N':>7}{'fairtalk/s':>12}{'bare/s':>10}{'overhead':>10}{'pipeline/s':>12}"
        f"{'overhead':>10}{'ideal/s':>9}{'in flight (server/adapter)':>28}{'load':>6}{'cpu us (f/b/p)':>16}"
        + (f"{'shared/s':>10}" if args.shared else "")
    )
    try:
        run_bare(urls, contexts[:50], seeds[:50], 8)  # warm-up: imports (the pipeline's too), first connections
        run_fairtalk(target, contexts[:50], seeds[:50], 8)
        if not args.no_pipeline:
            run_pipeline(target, contexts[:50], 8)
        print("\n" + header)
        for rep in range(repeats):
            for c in levels:
                run = measure(c, sizes[c], methods, urls, contexts, seeds, rounds, args.latency_ms)
                figures["runs"].append({"repeat": rep + 1, **run})
                print(row(run, methods, f"#{rep + 1}" if repeats > 1 else ""), flush=True)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
    if repeats > 1:
        figures["medians"] = [medians([r for r in figures["runs"] if r["concurrency"] == c], methods) for c in levels]
        print(f"\nmedians of {repeats} repeats (overhead: the median of each repeat's own)\n{header}")
        for run in figures["medians"]:
            print(row(run, methods, "median"))
    print(
        "\nin flight: each server's peak of concurrent requests in the fairtalk runs (one per replica, joined by +)"
        " / the adapter's own peak, of C; load: the 1-minute load average before the level; cpu us: this process's"
        " CPU (every thread; not the stubs') per response, fairtalk/bare/pipeline"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
