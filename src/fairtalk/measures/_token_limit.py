"""The token-limit measure: the share of answers cut off at ``max_new_tokens``, from the model's own finish reasons.

Unlike the other measures it reads no text: the ``openai:`` and ``vllm:`` adapters store the
server's or engine's ``finish_reason`` and the ``hf:`` adapter derives it (no end token and no stop
string within the limit), all in one vocabulary (:mod:`fairtalk.models._finish_reasons`: ``"stop"``,
``"length"`` or None), and ``score()`` reads stored reasons through the same mapping; an answer whose
reason is ``"length"`` scores 1, and so does one the generation stage cut to fit a JSONL record (8 MiB;
stored with the reason ``"record_limit"`` and counted in ``n_truncated``): every answer that is not whole. A group whose answers hit the limit more often gets answers whose
length says more about the cap than about the model, so the report shows this key beside
``length``. Every measure that reads the text scores a cut-off answer as a whole one: ``score()``
warns when more than 10% of one side's answers were cut off, and ``exclude_truncated`` tests only
the pairs where neither was. Models that do not report a reason (``builtin:``, ``replay:``, a
``python:`` callable returning plain strings) get no such key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from fairtalk.measures._base import Measure

__all__ = ["TOKEN_LIMIT_KEY", "TokenLimit"]

TOKEN_LIMIT_KEY = "hit_token_limit"
"""The result key of :class:`TokenLimit`: 1 for an answer cut off at the token limit, else 0."""
_MSG_NO_TEXT = "token_limit reads the model's finish reasons, not the texts: use TokenLimit().flags(reasons)"


class TokenLimit(Measure):
    """1 for an answer the token limit cut off (finish reason ``"length"``), else 0.

    Examples
    --------
    >>> TokenLimit().flags(["length", "stop", None]).tolist()
    [1.0, 0.0, 0.0]
    """

    name = "token_limit"
    keys = (TOKEN_LIMIT_KEY,)
    kind: Literal["rate"] = "rate"
    version = "1"
    higher_is_better: Mapping[str, bool | None] = MappingProxyType({TOKEN_LIMIT_KEY: False})

    def __repr__(self) -> str:
        return "TokenLimit()"

    @property
    def config(self) -> Mapping[str, Any]:
        """Settings for the manifest."""
        return {"source": "the model's finish_reason; 'length' counts as cut off, and so does an answer cut to the 8 MiB record"}

    def score(self, texts: Sequence[str]) -> Mapping[str, np.ndarray]:
        """Not defined: the key reads no text. Raises TypeError (score() calls :meth:`flags` on the finish reasons)."""
        raise TypeError(_MSG_NO_TEXT)

    def flags(self, reasons: Sequence[str | None]) -> np.ndarray:
        """One 0/1 score per answer; an unknown reason (None) counts as not cut off."""
        return np.fromiter((reason == "length" for reason in reasons), dtype=np.float64, count=len(reasons))
