"""The fairtalk exception tree; the CLI catches only the root.

::

    FairtalkError
    ├── InputError            bad user input; carries ``path`` and ``line``
    │   ├── CorpusError       a corpus that cannot be read
    │   └── LexiconError      a lexicon file that fails validation
    ├── SpecError             an unknown or malformed spec string; lists the valid choices
    ├── ResponderError        a model under test failed on an item (the item is counted, stored, retried)
    │   ├── TransportError    the connection failed or timed out
    │   ├── RateLimited       the server answered 429
    │   ├── BadResponse       the server answered something unusable
    │   └── ResponderTimeout  a local model did not answer within its timeout
    ├── ResponderAborted      a model under test stopped the run (sys.exit, KeyboardInterrupt)
    ├── StoreError            the run store cannot be opened or written
    └── OutputError           an output file or folder cannot be written, or would overwrite an input
"""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches

__all__ = [
    "BadResponse",
    "CorpusError",
    "FairtalkError",
    "InputError",
    "LexiconError",
    "OutputError",
    "RateLimited",
    "ResponderAborted",
    "ResponderError",
    "ResponderTimeout",
    "SpecError",
    "StoreError",
    "TransportError",
]


class FairtalkError(Exception):
    """Root of every error fairtalk raises on purpose."""


class InputError(FairtalkError):
    """Bad user input, located by file and line where known.

    Renders as ``pairs.jsonl:17: malformed JSON (expected an object)``.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


class CorpusError(InputError):
    """A corpus that cannot be read."""


class LexiconError(InputError):
    """A lexicon file that fails validation."""


class SpecError(FairtalkError):
    """An unknown or malformed spec string (``hf:...``, ``builtin:...``, a measure name)."""

    def __init__(self, message: str, *, choices: Iterable[str] = (), given: str | None = None) -> None:
        self.choices = tuple(sorted(choices))
        self.given = given
        text = message
        if given is not None and self.choices:
            close = get_close_matches(given, self.choices, n=1)
            if close:
                text += f"; did you mean {close[0]!r}?"
        if self.choices:
            text += f" (choose from: {', '.join(self.choices)})"
        super().__init__(text)


class ResponderError(FairtalkError):
    """A model under test failed to respond."""


class TransportError(ResponderError):
    """The connection to a model server failed or timed out."""


class RateLimited(ResponderError):
    """A model server answered 429 Too Many Requests."""


class BadResponse(ResponderError):
    """A model server answered something that cannot be used."""


class ResponderTimeout(ResponderError):
    """A local model (``python:``) did not answer within its timeout; its items fail, unbisected."""


class ResponderAborted(FairtalkError):
    """A model under test stopped the run: it called ``sys.exit()`` or raised ``KeyboardInterrupt``."""


class StoreError(FairtalkError):
    """The run store cannot be opened, read or written."""


class OutputError(FairtalkError):
    """An output cannot be written (full disk, permissions), or would overwrite one of the run's inputs.

    Renders as ``report/results.json: cannot write (No space left on device)``.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        super().__init__(message if self.path is None else f"{self.path}: {message}")
