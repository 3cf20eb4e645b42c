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

import os
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

_MSG_ARGUMENT_TYPE = "{name} must be {what}, got {type}"
_PATH = "a str or os.PathLike"


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

    def __init__(self, message: str, *, choices: Iterable[str] = (), given: object = None) -> None:
        self.choices = tuple(sorted(choices))
        self.given = given
        text = message
        if isinstance(given, str):
            close = get_close_matches(given, self.choices, n=1) if self.choices else []
            if close:
                text += f"; did you mean {close[0]!r}?"
        elif given is not None:  # a number or a list where a name was expected: say so (no close match to look for)
            text += f" (got type {type(given).__name__}, expected a str)"
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


def path_argument(value: object, name: str, *, what: str = _PATH) -> str:
    """``value`` as a path string, or SpecError naming the argument (``name``: ``"read_pairs: path"``) and ``what`` it takes.

    The public entry points that take a path check it here, at once: None, a number or bytes
    would otherwise fail inside :mod:`pathlib` as a bare TypeError.

    >>> path_argument(None, "read_pairs: path")
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: read_pairs: path must be a str or os.PathLike, got NoneType
    """
    text = os.fspath(value) if isinstance(value, str | os.PathLike) else None
    if not isinstance(text, str):
        raise SpecError(_MSG_ARGUMENT_TYPE.format(name=name, what=what, type=type(value).__name__))
    return text


def check_output_argument(value: object, name: str) -> None:
    """SpecError naming the argument ``name`` unless ``value`` is a path or an open stream (something with ``write``).

    >>> check_output_argument(None, "write_pairs: path")
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: write_pairs: path must be a str or os.PathLike, or an open text stream, got NoneType
    """
    if isinstance(value, str | os.PathLike):
        path_argument(value, name, what=f"{_PATH}, or an open text stream")
    elif not callable(getattr(value, "write", None)):
        raise SpecError(_MSG_ARGUMENT_TYPE.format(name=name, what=f"{_PATH}, or an open text stream", type=type(value).__name__))
