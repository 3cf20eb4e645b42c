"""The one result protocol: what every result object answers, and the :class:`Verdict` its keys get.

Every result (:class:`~fairtalk.results.AuditResult`, :class:`~fairtalk.results.AuditRun`,
:class:`~fairtalk.results.SimilarityResult`, :class:`~fairtalk.results.DebiasComparison`,
:class:`~fairtalk.results.PromptAnalysis`) subclasses :class:`Result` and so answers the same
nouns and verbs, each meaning the same thing everywhere:

- ``verdicts``: key -> :class:`Verdict` (a key is a measure, a similarity method, a group pair,
  or ``(axis, measure)`` / ``(model, measure)`` for results that hold several audits);
- ``detected()``: the keys whose verdict shows a difference and counts (a tuple, in key order);
- ``to_frame()``: a pandas DataFrame; ``to_dict()`` / ``from_dict()``: the JSON schema and its
  inverse; ``write(path)``: ``to_dict()`` as strict JSON, atomically, after a first
  ``"schema_version"`` key (:data:`~fairtalk.results.SCHEMA_VERSION`); ``read_json(path)``: back,
  through :func:`~fairtalk.results.read_result_file` (the file is checked as hostile input).
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar

from fairtalk._jsonl import jsonable
from fairtalk.errors import InputError
from fairtalk.files import write_text_atomic
from fairtalk.results._schema import ResultKind, read_result_file, versioned

if TYPE_CHECKING:  # pandas is imported lazily by each to_frame()
    import pandas as pd

__all__ = ["Result", "Verdict"]

#: A result's key type: ``str`` (a measure, a method, a pair) or a tuple such as ``(axis, measure)``.
K = TypeVar("K", bound=Hashable)


class Verdict(StrEnum):
    """What the evidence says about one key; its value is the string ``results.json`` has always held.

    One vocabulary for every result: a key is ``DIFFERENT`` (its test rejects at the result's
    level, after correction), ``EQUIVALENT`` (shown within its equivalence margin),
    ``INCONCLUSIVE`` (neither), or, for a similarity method whose test and interval do not
    agree, ``DISAGREE`` (not counted). An audit's measures use the first three, a prompt
    analysis' group pairs the first and third, a similarity method all but ``EQUIVALENT``.

    Files written before the vocabulary was one hold a similarity method's ``"differs"`` and
    ``"no difference shown"``; they read as ``DIFFERENT`` and ``INCONCLUSIVE``.

    Examples
    --------
    >>> Verdict("difference detected") is Verdict.DIFFERENT, str(Verdict.EQUIVALENT)
    (True, 'equivalent')
    >>> Verdict("differs") is Verdict.DIFFERENT, Verdict("no difference shown") is Verdict.INCONCLUSIVE
    (True, True)
    >>> Verdict.DIFFERENT.shows_difference, Verdict.DISAGREE.shows_difference
    (True, False)
    """

    DIFFERENT = "difference detected"
    EQUIVALENT = "equivalent"
    INCONCLUSIVE = "inconclusive"
    DISAGREE = "test and interval disagree"

    @classmethod
    def _missing_(cls, value: object) -> Verdict | None:
        """The verdict an older file's similarity strings stand for (``"differs"``, ``"no difference shown"``)."""
        return _LEGACY.get(value) if isinstance(value, str) else None

    @property
    def shows_difference(self) -> bool:
        """Whether this verdict says the two sides differ (``DIFFERENT``)."""
        return self is Verdict.DIFFERENT


#: The similarity verdicts of files written before one vocabulary, and what they read as.
_LEGACY = {"differs": Verdict.DIFFERENT, "no difference shown": Verdict.INCONCLUSIVE}


class Result(ABC, Generic[K]):
    """The base of every result object: ``verdicts``, ``detected()``, ``to_frame()``, ``to_dict()``, ``from_dict()``, ``write()``.

    A subclass is a frozen dataclass built once; it implements the four abstract members and
    inherits ``detected()`` (the keys whose verdict shows a difference; a subclass narrows it to
    the keys that count, e.g. an audit's primary measures), ``to_json()``, ``write()`` and
    ``read_json()``.
    """

    __slots__ = ()

    #: What :meth:`read_json` checks a file against (see :func:`~fairtalk.results.read_result_file`).
    _file_kind: ClassVar[ResultKind] = "any"

    @property
    @abstractmethod
    def verdicts(self) -> Mapping[K, Verdict]:
        """Key -> its verdict, for every key of the result, in the result's order."""

    def detected(self) -> tuple[K, ...]:
        """The keys whose verdict shows a difference (see :attr:`Verdict.shows_difference`), in key order."""
        return tuple(key for key, verdict in self.verdicts.items() if verdict.shows_difference)

    @abstractmethod
    def to_frame(self) -> pd.DataFrame:
        """The result as a pandas DataFrame (one row per key, or per the unit the result is about)."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the result's JSON schema."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The result of a :meth:`to_dict` dict (keys the schema does not know are ignored)."""

    def to_json(self) -> str:
        """``to_dict()`` as strict JSON text after its ``schema_version`` (NaN and infinities become null), indented, with a final newline."""
        return json.dumps(jsonable(versioned(self.to_dict())), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_json` to ``path`` atomically (the file is whole or untouched); return the path."""
        return write_text_atomic(path, self.to_json())

    @classmethod
    def read_json(cls, path: str | os.PathLike[str]) -> Self:
        """Read a result back from a file :meth:`write` wrote (or a report's ``results.json``).

        Raises
        ------
        InputError
            The file is missing, too large, not JSON, of another ``schema_version``, or not of
            this result's shape (the message names the file and the field).
        """
        data = read_result_file(path, cls._file_kind)
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a field no declared shape covers
            raise InputError(f"not a {cls.__name__} file ({type(exc).__name__}: {exc})", path=str(path)) from exc
