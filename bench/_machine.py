"""The machine a benchmark ran on, one line for its output: CPU model (``lscpu``), cores (``nproc``), load, Python.

Shared by the bench scripts (``from _machine import machine``: a script's own folder is first on ``sys.path``).
"""

from __future__ import annotations

import os
import platform
import subprocess
import time

__all__ = ["cpu_model", "machine"]


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
