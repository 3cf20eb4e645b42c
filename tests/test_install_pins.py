"""Every install line the README and the docs give pins torch: an unpinned torch pulls gigabytes of CUDA wheels."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.search(r"^TORCH := (\S+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
INSTALL = re.compile(r"pip install ([^`\n&|;#]*)")
FAIRTALK = re.compile(r"""['"]?(?:fairtalk|-e\s+['"]?\.)(?:\[([\w,]+)\])?""")


def _extras_pinning_torch() -> set[str]:
    """The extras whose own requirements pin torch (installing one pins it)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return {name for name, reqs in extras.items() if PIN is not None and PIN.group(1) in reqs}


def _install_lines() -> list[tuple[str, str]]:
    """``(where, what the line installs)``, with what an earlier ``pip install`` of the same line installed first."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for match in INSTALL.finditer(text):
            line_start = text.rfind("\n", 0, match.start()) + 1
            before = text[line_start : match.start()]  # `pip install torch==2.13.0 && pip install -e .`
            found.append((f"{page.relative_to(ROOT)}: {match.group(0).strip()}", f"{before} {match.group(1)}"))
    return found


def test_every_documented_install_of_fairtalk_pins_torch() -> None:
    assert PIN is not None
    pinned_extras = _extras_pinning_torch()
    assert {"hf", "train", "llm"} <= pinned_extras, pinned_extras
    unpinned = []
    checked = 0
    for where, args in _install_lines():
        found = FAIRTALK.search(args)
        if found is None or "--no-deps" in args:
            continue
        extras = set(filter(None, (found.group(1) or "").split(",")))
        if "vllm" in extras:  # vLLM brings its own torch (CUDA machines only); the docs say so
            continue
        checked += 1
        if PIN.group(1) not in args and not extras & pinned_extras:
            unpinned.append(where)
    assert checked >= 5, "the scan found the docs' install lines"
    assert unpinned == [], unpinned
