"""Read counters: the frozen :class:`ReadSummary` and the mutable tally readers fill."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["ReadSummary", "Tally"]


@dataclass(frozen=True, slots=True)
class ReadSummary:
    """What a corpus reader saw: records read, contexts yielded, and skips by reason.

    ``skipped`` holds ``(reason, count)`` pairs, most frequent first; ``first_location``
    gives, per reason, the ``path:line`` of its first occurrence. ``n_read == n_yielded + n_skipped``
    but where a problem drops part of a record and keeps the rest: a twitter reply problem keeps
    its context (yielded without a response), a JSONL conversation's system messages are left
    out of it (counted per message and per conversation); each is still counted under its reason.
    """

    source: str
    n_read: int = 0
    n_yielded: int = 0
    skipped: tuple[tuple[str, int], ...] = ()
    first_location: tuple[tuple[str, str], ...] = ()

    @property
    def n_skipped(self) -> int:
        """Total number of skips counted."""
        return sum(n for _, n in self.skipped)

    def count(self, reason: str) -> int:
        """Number of skips counted for ``reason`` (0 if none)."""
        return dict(self.skipped).get(reason, 0)

    def where(self, reason: str) -> str | None:
        """Location (``path:line``) of the first skip for ``reason``, or None."""
        return dict(self.first_location).get(reason)

    def skip_lines(self) -> list[str]:
        """One line per reason skipped: ``skipped: malformed JSON 2, first at c.jsonl:301``."""
        return [f"skipped: {reason} {n:,}, first at {self.where(reason) or '?'}" for reason, n in self.skipped]


class Tally:
    """Mutable counters a reader fills while streaming; freeze with :meth:`summary`."""

    __slots__ = ("first", "n_read", "n_yielded", "skipped", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self.n_read = 0
        self.n_yielded = 0
        self.skipped: Counter[str] = Counter()
        self.first: dict[str, str] = {}

    def skip(self, reason: str, where: str, *, record: bool = True) -> None:
        """Count one skipped record (``record=False``: a problem that drops no record)."""
        self.n_read += record
        self.skipped[reason] += 1
        self.first.setdefault(reason, where)

    def emit(self) -> None:
        """Count one record read and yielded."""
        self.n_read += 1
        self.n_yielded += 1

    def summary(self) -> ReadSummary:
        """Freeze the counters into a :class:`ReadSummary`."""
        return ReadSummary(
            source=self.source,
            n_read=self.n_read,
            n_yielded=self.n_yielded,
            skipped=tuple(sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0]))),
            first_location=tuple(sorted(self.first.items())),
        )
