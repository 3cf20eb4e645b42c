"""Read counters: the frozen :class:`ReadSummary` and the mutable tally readers fill."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["BAD_DIALOGUE", "REPLY_PREFIX", "SYSTEM_MESSAGES", "ReadSummary", "Tally", "kept_in_part"]

#: The reasons of a reply's problems (a twitter context kept without its reply) start with this.
REPLY_PREFIX = "reply: "
#: A conversation's system messages are left out of its context: counted per conversation kept without them,
#: dropping no record (``record=False``). The reader does not know the model: ``fairtalk audit`` adds that
#: ``--system-prompt`` gives one where its model takes a system prompt (a ``python:`` function takes none).
SYSTEM_MESSAGES = "system messages (left out)"
#: A JSONL record whose ``cluster``/``dialogue_id``/``conversation_id`` is neither text nor a whole number
#: (a fraction, true/false, a list, an object, null, ""): kept as a dialogue of its own, counted (``record=False``).
BAD_DIALOGUE = "dialogue id not text or a whole number (kept as its own dialogue)"


def kept_in_part(reason: str) -> bool:
    """Whether a read problem keeps its record, without a part (a reply, system messages), rather than skipping it."""
    return reason in (SYSTEM_MESSAGES, BAD_DIALOGUE) or reason.startswith(REPLY_PREFIX)


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

    @property
    def replies(self) -> tuple[tuple[str, int], ...]:
        """The reasons of a reply's problems, with their counts: each kept its context, without a response."""
        return tuple((reason, n) for reason, n in self.skipped if reason.startswith(REPLY_PREFIX))

    def skip_lines(self, *, replies: bool = True) -> list[str]:
        """One line per reason: ``skipped: malformed JSON 2, first at c.jsonl:301``.

        A problem that kept its record in part says so (``kept without a part: system messages
        (left out) 1, first at c.jsonl:4``), as ``fairtalk pairs`` and ``augment`` say it.
        ``replies=False`` leaves out a reply's problems, for a caller that counts the records
        without a response (those contexts are among them): :meth:`reply_note` says them there.
        """
        return [
            f"{'kept without a part' if kept_in_part(reason) else 'skipped'}: {reason} {n:,}, first at {self.where(reason) or '?'}"
            for reason, n in self.skipped
            if replies or not reason.startswith(REPLY_PREFIX)
        ]

    def reply_note(self) -> str:
        """The reply problems among the records without a response: ``of which reply: missing (odd number of lines) 1, first at t.txt:3``.

        Empty when there was none; several are joined by ``; ``.
        """
        return f"of which {self._listed(self.replies)}" if self.replies else ""

    def with_skips(self, message: str) -> str:
        """``message`` (an error no line of a file caused) followed by what the reader skipped or kept in part, if anything.

        ``...; the reader skipped 2 line(s) of jsonl:c.jsonl: malformed JSON 2, first at c.jsonl:1``. A
        reply's problem kept its context without a response, so it is no skipped line:
        ``...; of the records without a response, reply: missing (odd number of lines) 1, first at t.txt:1``.
        """
        skipped = tuple((reason, n) for reason, n in self.skipped if not kept_in_part(reason))
        in_part = tuple((r, n) for r, n in self.skipped if kept_in_part(r) and not r.startswith(REPLY_PREFIX))
        if skipped:
            message += f"; the reader skipped {sum(n for _, n in skipped):,} line(s) of {self.source}: {self._listed(skipped)}"
        if in_part:
            message += f"; it kept {sum(n for _, n in in_part):,} record(s) without a part: {self._listed(in_part)}"
        if self.replies:
            message += f"; of the records without a response, {self._listed(self.replies)}"
        return message

    def _listed(self, rows: tuple[tuple[str, int], ...]) -> str:
        return "; ".join(f"{reason} {n:,}, first at {self.where(reason) or '?'}" for reason, n in rows)


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
