"""Whether an output path names one of the command's inputs: the first rule of every output (``check_not_input``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fairtalk.errors import OutputError

__all__ = ["check_not_input", "same_file"]

_MSG_IS_INPUT = "{option} {path} is also the input {name}; it would be overwritten (write the output elsewhere)"


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same file (the same inode when both exist, else the same resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def check_not_input(output: str | os.PathLike[str], inputs: Mapping[str, Any], *, option: str = "-o") -> None:
    """Raise OutputError if ``output`` is one of ``inputs`` (a name -> path mapping; None paths are skipped)."""
    for name, path in inputs.items():
        if path is not None and same_file(output, path):
            raise OutputError(_MSG_IS_INPUT.format(option=option, path=output, name=name))
