"""What docs/tutorial.md says its Python example prints is what it prints, at the tutorial's own size.

tests/test_readme_examples.py runs every block of the page, but at 20 pairs, where the measures found differ from
the 300 pairs the page runs; so the comment that quotes ``detected()`` is checked here against a run of its own
size. A review found it quoting ``('offense_rate', ...)`` where the tuple starts with ``'distinct_1'``.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

import fairtalk

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"


def _block(text: str, starts: str) -> str:
    """The first fenced block of ``text`` whose body starts with ``starts``."""
    for body in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M):
        if body.startswith(starts):
            return str(body)
    raise AssertionError(f"no block starting {starts!r}")


def _quoted_detected(block: str) -> tuple[str, ...]:
    """The tuple the block's comment says ``gender.detected()`` prints (the comment may go on to the next line)."""
    lines = block.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("print(gender.detected())"))
    said = " ".join(line.partition("#")[2] for line in lines[at : at + 2] if "#" in line)
    match = re.search(r"\(('[^)]*)\)", said)
    assert match is not None and "..." not in match.group(0), said
    quoted = ast.literal_eval(match.group(0))
    return tuple(quoted) if isinstance(quoted, tuple) else (quoted,)


def test_the_tutorial_s_detected_comment_is_what_its_run_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = TUTORIAL.read_text(encoding="utf-8")
    bot = _block(text, "# biasedbot.py")
    example = _block(text, "import fairtalk\n\nrun = fairtalk.audit(")
    (tmp_path / "biasedbot.py").write_text(bot, encoding="utf-8")
    call = re.search(r"fairtalk\.audit\((.*)\)", example)
    assert call is not None and 'model="python:biasedbot.py:reply", axes="gender", n_pairs=300' in call.group(1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(os.environ, "NO_COLOR", "1")
    run = fairtalk.audit(model="python:biasedbot.py:reply", axes="gender", n_pairs=300, out_dir="py-audit")
    assert run.results["gender"].detected() == _quoted_detected(example)
