"""The machine a benchmark ran on, one line for its output: CPU model (``lscpu``), cores (``nproc``), load, Python;
and :func:`run_child`, which times one command in a child process.

Shared by the bench scripts (``from _machine import machine``: a script's own folder is first on ``sys.path``).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["cpu_model", "machine", "run_child"]


def cpu_model() -> str:
    """The CPU's model name as ``lscpu`` reports it, else ``platform.processor()``, else ``unknown CPU``."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown CPU"
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "unknown CPU")


def machine(*, load: bool = True, stamp: bool = False) -> str:
    """``MODEL, N cores (nproc), load average L1, L5, L15, Python X.Y.Z`` (the load and a local time stamp optional)."""
    parts = [cpu_model(), f"{os.cpu_count()} cores (nproc)"]
    if load:
        parts.append("load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    parts.append(f"Python {platform.python_version()}")
    if stamp:
        parts.append(time.strftime("%Y-%m-%d %H:%M"))
    return ", ".join(parts)


def run_child(command: list[str], log: Path) -> dict[str, float]:
    """Run ``command`` with stdout and stderr to ``log``; its wall time, CPU time, peak RSS and the load around it.

    A command that fails ends the benchmark (``SystemExit``) with the tail of its log.
    """
    load_before = os.getloadavg()[0]
    with log.open("w") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(command[:6])}... failed ({code}); see {log}:\n{log.read_text()[-3000:]}")
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return {
        "wall": wall,
        "user": usage.ru_utime,
        "system": usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss * scale / 2**20,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }
