"""The generation's record-size shortcut: the same answer as ``fit_in_record`` on either side of its bound."""

from __future__ import annotations

import pytest

from fairtalk._jsonl import MAX_RECORD_BYTES, RECORD_OVERHEAD, fit_in_record
from fairtalk.run._generate import _fit

BOUND = (MAX_RECORD_BYTES - RECORD_OVERHEAD - 4) // 6  # characters of text + context the shortcut passes unchecked


@pytest.mark.parametrize("char", ["a", "\n", "\x00", "é", "😀"])
@pytest.mark.parametrize("context_chars", [0, 40, BOUND // 2])
@pytest.mark.parametrize("extra", [-1, 0, 1, BOUND])
def test_the_shortcut_agrees_with_fit_in_record(char: str, context_chars: int, extra: int) -> None:
    context = char * context_chars
    text = char * max(0, BOUND - context_chars + extra)
    assert _fit(text, context) == fit_in_record(text, beside=context)
