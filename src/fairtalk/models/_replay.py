"""``replay:FILE``: serve responses produced elsewhere, looked up by context text.

The file is JSONL with one object per line holding ``"context"`` and ``"response"``
strings; other fields (``pair_id``, ``side``, ...) are ignored, so a responses file
written by ``fairtalk respond`` replays as is. Seeds and decoding settings are ignored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fairtalk._jsonl import read_objects
from fairtalk.errors import InputError, ResponderError
from fairtalk.models._base import (
    DecodingSettings,
    ModelFactory,
    Responder,
    check_batch,
    make_fingerprint,
    raise_first_error,
)

__all__ = ["ReplayOptions", "ReplayResponder"]

_MSG_MISSING_FILE = "replay file not found"
_MSG_JSON = "malformed JSON ({error})"
_MSG_NOT_OBJECT = "expected a JSON object with 'context' and 'response'"
_MSG_FIELD = "field {name!r} must be a string"
_MSG_CONFLICT = "context appears again with a different response (first at line {first})"
_MSG_NO_RESPONSE = "replay: no response recorded for context {prefix!r}"


@dataclass(frozen=True, slots=True)
class ReplayOptions:
    """``replay:`` takes no options (seeds and decoding settings are ignored)."""


class ReplayResponder(Responder, ModelFactory[ReplayOptions]):
    """Answer each context with the response recorded for it in a JSONL file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.input_paths = (str(self.path),)
        digest = hashlib.sha256()
        self._responses: dict[str, str] = {}
        first_line: dict[str, int] = {}
        for number, obj in read_objects(path, what="replay file", digest=digest):
            for name in ("context", "response"):
                if not isinstance(obj.get(name), str):
                    raise InputError(_MSG_FIELD.format(name=name), path=str(path), line=number)
            context, response = obj["context"], obj["response"]
            known = self._responses.get(context)
            if known is None:
                self._responses[context] = response
                first_line[context] = number
            elif known != response:
                raise InputError(_MSG_CONFLICT.format(first=first_line[context]), path=str(path), line=number)
        self._sha256 = digest.hexdigest()

    @classmethod
    def options_for(cls, target: str) -> type[ReplayOptions]:
        """The options this adapter takes (none)."""
        return ReplayOptions

    @classmethod
    def from_spec(cls, target: str, options: ReplayOptions) -> ReplayResponder:
        """Build from ``FILE`` (what follows ``replay:``)."""
        return cls(target)

    @property
    def fingerprint(self) -> str:
        """``replay:<file name>`` plus the file's sha256."""
        return make_fingerprint("replay", self.path.name, sha256=self._sha256)

    @property
    def n_responses(self) -> int:
        """Number of distinct contexts in the file."""
        return len(self._responses)

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Return the recorded responses; raise ResponderError for the first context not found."""
        return raise_first_error(self.respond_each(contexts, settings, seeds=seeds))

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Return the recorded response per context, or a ResponderError naming the missing context."""
        check_batch(contexts, seeds)
        out: list[str | ResponderError] = []
        for context in contexts:
            found = self._responses.get(context)
            if found is None:
                prefix = context if len(context) <= 60 else context[:57] + "..."
                out.append(ResponderError(_MSG_NO_RESPONSE.format(prefix=prefix)))
            else:
                out.append(found)
        return out
