"""The gold file while a person labels: every label appended and fsynced the moment it is given; undo; resume after a kill.

A label is one JSON line appended to ``GOLD.jsonl`` (written whole, looping on short writes, and
fsynced before the page hears back), so a killed server or a closed tab loses nothing; a write the
disk refuses (a full disk) is cut back to the rows before it and reported, never acknowledged.
**Undo rewrites the file atomically** without the annotator's last row (a temporary file beside
it, fsynced, then renamed over it): the file always holds exactly one row per label given, so
``fairtalk regard check --gold`` and ``read_gold`` read it as it is, with no retraction rows to
replay.

Beside it, ``GOLD.jsonl.sample.json`` records what drew the sample: the input and its sha256,
the seed, the size, the measures, and the items in order. A restart with the same ``-o`` checks
it and resumes at the first unlabelled item; a restart with another input, seed, size or
measure is refused (one line naming what differs), never mixed in. A record whose items are this
sample's in another order (written by a fairtalk that did not yet serve a pair's sides together)
is taken as it is: the labels given are kept and the rest come in this sample's order. A session that ends with no
label in the gold file (a busy port, Ctrl-C before the first label) removes the record it wrote, so it does not refuse
the next command's sample; a record a gold file holding labels belongs to is never removed. Several annotators may write to
one file (each row names its annotator; writes take a lock on the sample record), or each to
their own; one annotator labels in one session at a time: :meth:`GoldLog.claim` locks
``GOLD.jsonl.<annotator>.lock`` (removed by :meth:`GoldLog.release`), and a second session of the
same annotator on the same file is refused.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fairtalk._jsonl import MAX_DEPTH, json_line, read_json_file
from fairtalk.errors import InputError, OutputError
from fairtalk.files import atomic_writer, check_regular, write_text_atomic
from fairtalk.gold._reader import GoldLabel, ItemKey, iter_labels, sample_record_path
from fairtalk.gold._sample import Sample, SampleItem
from fairtalk.gold._schemes import LabelScheme

__all__ = ["GoldLog", "Step"]

_FORMAT = 1
_MSG_OTHER_SAMPLE = "{path} belongs to another sample ({what}); give the same INPUT, --seed, --n and --measure, or another -o"
#: The same input, seed, size and measures drew other items: for completions, others were kept to draw from.
_MSG_OTHER_ITEMS = (
    "{path} belongs to another sample (the items drawn differ); give the same INPUT, --seed, --n and --measure (for "
    "completions also the same --groups and --balanced-only: the sample draws from the completions prompts analyze "
    "keeps, where an earlier fairtalk drew from them all), or another -o"
)
_MSG_INPUT_CHANGED = (
    "{input} changed since the sample in {path} was drawn from it (its sha256 differs); "
    "label the file as it was, or the new one into another -o"
)
_MSG_NO_RECORD = "{path} exists but has no sample record {record}: not written by `fairtalk label`; give another -o"
_MSG_BAD_RECORD = "{record} is not a sample record of `fairtalk label` ({reason})"
_MSG_ONE_MEASURE = "texts and completions take one --measure (each row holds one label), got {n}"
_MSG_ANNOTATOR = "--annotator must be a non-empty name, got {name!r}"
_MSG_NOT_NEXT = "{given} is not the next label to give: {next}"
_MSG_NOT_LAST = "{given} is not the last label given: {last}"
_MSG_NO_STEP = "there is no label {step} in this sample"
_MSG_VALUE = "{value!r} is not a label of {field} (one of {choices})"
_MSG_NOTHING_TO_UNDO = "nothing to undo"
_MSG_BUSY = (
    "annotator {annotator!r} is already labelling {path} in another session (another `fairtalk label` is running): "
    "stop it first, or give another --annotator"
)
_MSG_LOCK = "cannot lock the labelling session ({reason})"
#: The longest file name most file systems take, in bytes.
_MAX_NAME_BYTES = 255
#: How often :meth:`GoldLog.claim` opens the lock file again when a finished session replaced it meanwhile.
_CLAIM_TRIES = 8
_MSG_WRITE = "the label was not saved: cannot write the gold file ({reason})"
_MSG_ROLLED_BACK = "; the file keeps every label given before it"
_MSG_NOT_ROLLED_BACK = "; a torn row may be left at its end (dropped when labelling resumes)"
_MSG_TOO_DEEP = "values nest deeper than {limit} levels, more than a label holds"
#: A row ``fairtalk label`` never writes, found when it resumes (``score --gold`` would refuse the file or drop the row).
_MSG_RESUME_TWICE = (
    "{field} of {item} is labelled twice by {annotator!r} (first on line {first}): score --gold refuses such a file; "
    "delete one of the two rows, then label again"
)
_MSG_RESUME_VALUE = (
    "{value!r} is not a label of {field} (one of {choices}): score --gold would leave it out, so it is no label given; "
    "correct or delete the row, then label again"
)
_MSG_RESUME_TEXT = (
    "the row labels another text than {item} of this sample ({labelled} there, {here} in the sample): score --gold "
    "would refuse it; delete the row, then label again"
)


@dataclass(frozen=True, slots=True)
class Step:
    """One label to give: the item (its index in the sample) and the measure (its scheme)."""

    index: int
    item: SampleItem
    scheme: LabelScheme


class GoldLog:
    """The labels one annotator gives one sample, kept in ``path``; :attr:`position` is the first one still to give.

    Not thread-safe by itself: the server calls it under one lock.
    """

    def __init__(self, path: str | os.PathLike[str], sample: Sample, schemes: Sequence[LabelScheme], *, annotator: str) -> None:
        if not annotator.strip():
            raise InputError(_MSG_ANNOTATOR.format(name=annotator))
        if sample.kind == "texts" and len(schemes) != 1:
            raise InputError(_MSG_ONE_MEASURE.format(n=len(schemes)))
        self.path = Path(path)
        check_regular(self.path)  # a FIFO would block the reader, a device would swallow every label
        self.record_path = sample_record_path(self.path)
        self.sample = sample
        self.schemes = tuple(schemes)
        self.annotator = annotator.strip()
        self.steps = tuple(Step(i, item, s) for i, item in enumerate(sample.items) for s in self.schemes)
        self._index = {self._key(step.item.id, step.item.side, step.scheme.field): step.index for step in self.steps}
        self._step_of = {(step.index, step.scheme.field): number for number, step in enumerate(self.steps)}
        self._wrote_record = False  # whether this log wrote the sample record (removed if it ends with no label)
        self._check_record()
        self._done: set[tuple[int, str]] = set()
        self._order: list[tuple[int, str]] = []
        self._session: tuple[int, Path] | None = None
        self._reload()

    # ------------------------------------------------------------------ the sample record

    def _record(self) -> dict[str, Any]:
        return {
            "fairtalk_label_sample": _FORMAT,
            "kind": self.sample.kind,
            "input": self.sample.source,
            "input_sha256": self.sample.source_sha256,
            "seed": self.sample.seed,
            "n": len(self.sample.items),
            "measures": [s.spec for s in self.schemes],
            "sample_sha256": self.sample.digest,
            "items": [[item.id, item.side] for item in self.sample.items],
        }

    def _check_record(self) -> None:
        """Write the sample record, or check that the one there is this sample's (InputError naming what differs)."""
        mine = self._record()
        if not self.record_path.exists():
            if self.path.exists() and self.path.stat().st_size > 0:
                raise InputError(_MSG_NO_RECORD.format(path=self.path, record=self.record_path.name))
            write_text_atomic(self.record_path, json.dumps(mine, indent=1) + "\n")
            self._wrote_record = True
            return
        try:  # its size and depth checked before it is parsed
            theirs = read_json_file(self.record_path, what="sample record")
        except InputError as exc:
            raise InputError(_MSG_BAD_RECORD.format(record=self.record_path, reason=exc.message)) from None
        if not isinstance(theirs, dict) or theirs.get("fairtalk_label_sample") != _FORMAT:
            raise InputError(_MSG_BAD_RECORD.format(record=self.record_path, reason="unknown format"))
        names = {"input_sha256": "input", "kind": "input", "seed": "--seed", "n": "--n", "measures": "--measure"}
        differ = list(dict.fromkeys(names[k] for k in names if theirs.get(k) != mine[k]))
        if not differ and _same_items(theirs.get("items"), mine["items"]):
            return  # the same items, drawn by an earlier fairtalk in another order: labelled now in this one's
        if "input" in differ and theirs.get("input") == mine["input"] and theirs.get("kind") == mine["kind"]:
            raise InputError(_MSG_INPUT_CHANGED.format(input=mine["input"], path=self.path))
        if differ:
            what = "its " + (differ[0] + " differs" if len(differ) == 1 else ", ".join(differ[:-1]) + f" and {differ[-1]} differ")
            raise InputError(_MSG_OTHER_SAMPLE.format(path=self.path, what=what))
        if theirs.get("sample_sha256") != mine["sample_sha256"]:  # the same options, another draw: the items
            raise InputError(_MSG_OTHER_ITEMS.format(path=self.path))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold an exclusive lock on the sample record while the file changes.

        A record is replaced only where a session that gave no label removed it (:meth:`release`) and another wrote it
        anew: the one locked is checked again (this sample's, or InputError), so labels of one sample never go under
        another's record.
        """
        for _ in range(_CLAIM_TRIES):
            if not self.record_path.exists():
                self._check_record()  # removed by a session that ended with no label given: written again
            try:
                handle = self.record_path.open("rb")
            except FileNotFoundError:
                continue
            with handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                try:
                    if _same_file(handle.fileno(), self.record_path):  # not removed while we waited for the lock
                        self._check_record()
                        yield
                        return
                finally:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        raise OutputError(_MSG_LOCK.format(reason="its sample record keeps being replaced"), path=str(self.record_path))

    def _forget_record(self) -> None:
        """Remove the sample record this log wrote where the gold file holds no label (none was given).

        Left, it would refuse another sample on a file that does not exist. One that a gold file holding labels belongs
        to is kept; another session of the same file writes it again with its first label (:meth:`_locked`).
        """
        if not self._wrote_record:
            return
        self._wrote_record = False
        with contextlib.suppress(OSError), self.record_path.open("rb") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # no label is being appended meanwhile
            try:
                if _same_file(handle.fileno(), self.record_path) and not _holds_rows(self.path):
                    self.record_path.unlink()
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    # ------------------------------------------------------------------ one session per annotator

    @property
    def session_lock_path(self) -> Path:
        """The annotator's lock file beside the gold file, ``GOLD.jsonl.<annotator>.lock`` (the name percent-encoded)."""
        gold = self.path.resolve()
        name = quote(self.annotator, safe="")
        if len(os.fsencode(f"{gold.name}.{name}.lock")) > _MAX_NAME_BYTES:
            name = hashlib.sha256(self.annotator.encode("utf-8")).hexdigest()
        return gold.with_name(f"{gold.name}.{name}.lock")

    def claim(self) -> None:
        """Start this annotator's labelling session on the file: an exclusive lock, held until :meth:`release`.

        One annotator labels one file in one session at a time (two would write disagreeing rows
        of the same items); other annotators may share the file. The file is read again once the
        lock is held, so the position is the one the last session left. Claiming twice is a no-op.

        Raises
        ------
        InputError
            Another session of this annotator holds the lock.
        OutputError
            The lock file cannot be made or locked.
        """
        if self._session is not None:
            return
        path = self.session_lock_path
        for _ in range(_CLAIM_TRIES):
            fd = self._lock_session(path)
            if _same_file(fd, path):  # not a lock file a finished session unlinked after we opened it
                self._session = (fd, path)
                self._reload()
                return
            os.close(fd)
        raise OutputError(_MSG_LOCK.format(reason="it keeps being replaced"), path=str(path))

    def _lock_session(self, path: Path) -> int:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputError(_MSG_LOCK.format(reason=exc.strerror or exc), path=str(path)) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise InputError(_MSG_BUSY.format(annotator=self.annotator, path=self.path)) from None
        except OSError as exc:
            os.close(fd)
            raise OutputError(_MSG_LOCK.format(reason=exc.strerror or exc), path=str(path)) from exc
        return fd

    def release(self) -> None:
        """End the session :meth:`claim` started: the lock file is removed and unlocked (a no-op without one).

        A sample record this log wrote is removed too where the gold file holds no label (the session gave none), so
        it does not refuse the next command's sample; one with labels is kept.
        """
        self._forget_record()
        if self._session is None:
            return
        fd, path = self._session
        self._session = None
        with contextlib.suppress(OSError):
            path.unlink()  # while still locked: a session that opened it meanwhile sees it replaced and opens anew
        os.close(fd)

    # ------------------------------------------------------------------ reading back

    @staticmethod
    def _key(item_id: str, side: str | None, field: str) -> tuple[str, str | None, str]:
        return (item_id, side, field)

    def _field_of(self, field: str) -> str:
        return self.schemes[0].field if self.sample.kind == "texts" and field in ("label", self.schemes[0].field) else field

    def _reload(self) -> None:
        """Read the file: a torn last line (a kill mid-write) is dropped; this annotator's labels set the position.

        The file is held to what ``score --gold`` takes (InputError naming ``path:line``), so a label counted as given
        here is one it uses: an item's field labelled twice by one annotator, a value outside its field's labels, or
        a row of one of the sample's items holding another text than the item's (rows edited by hand).
        """
        if not self.path.exists():
            return
        self._repair_tail()
        self._done.clear()
        self._order.clear()
        seen: dict[tuple[str, str | None, str, str], int] = {}
        for line, label in iter_labels(self.path):
            field = self._field_of(label.field)
            index = self._index.get(self._key(label.id, label.side, field))
            self._check_row(line, label, field, index, seen)
            if label.annotator == self.annotator and index is not None:
                self._done.add((index, field))
                self._order.append((index, field))

    def _check_row(
        self, line: int, label: GoldLabel, field: str, index: int | None, seen: dict[tuple[str, str | None, str, str], int]
    ) -> None:
        """InputError (``path:line``) for a row ``score --gold`` would refuse or leave out (see :meth:`_reload`)."""
        item = f"id {label.id}" if label.side is None else f"pair {label.id} side {label.side}"
        first = seen.setdefault((label.id, label.side, field, label.annotator), line)
        if first != line:
            message = _MSG_RESUME_TWICE.format(field=field, item=item, annotator=label.annotator, first=first)
            raise InputError(message, path=str(self.path), line=line)
        if index is None:  # an item of no step (another sample's, or a field not asked for): score counts it
            return
        scheme = next(s for s in self.schemes if s.field == field)
        if scheme.choice(label.value) is None:
            choices = ", ".join(str(c.value) for c in scheme.choices)
            message = _MSG_RESUME_VALUE.format(value=label.value, field=field, choices=choices)
            raise InputError(message, path=str(self.path), line=line)
        here = self.sample.items[index].text
        if label.text is not None and label.text != here:
            message = _MSG_RESUME_TEXT.format(item=item, labelled=_short(label.text), here=_short(here))
            raise InputError(message, path=str(self.path), line=line)

    def _repair_tail(self) -> None:
        data = self.path.read_bytes()
        if not data or data.endswith(b"\n"):
            return
        head, _, last = data.rpartition(b"\n")
        try:
            json.loads(last)
            fixed = data + b"\n"  # a whole record whose newline was not written
        except RecursionError:  # no torn record: a line no label holds
            raise InputError(_MSG_TOO_DEEP.format(limit=MAX_DEPTH), path=str(self.path), line=data.count(b"\n") + 1) from None
        except ValueError:
            fixed = head + b"\n" if head else b""  # the torn record of a kill mid-write
        with self._locked(), atomic_writer(self.path, binary=True) as handle:
            handle.write(fixed)

    # ------------------------------------------------------------------ state

    @property
    def position(self) -> int:
        """The index in :attr:`steps` of the first label still to give (``len(steps)`` when all are given)."""
        return next(
            (i for i, step in enumerate(self.steps) if (step.index, step.scheme.field) not in self._done), len(self.steps)
        )

    @property
    def n_given(self) -> int:
        """How many of this sample's labels the annotator has given."""
        return len(self._done)

    @property
    def n_pairs(self) -> int:
        """How many pairs the sample holds (both sides of each); 0 for texts."""
        return len({item.id for item in self.sample.items}) if self.sample.kind == "responses" else 0

    @property
    def complete_pairs(self) -> dict[str, int]:
        """Per label field, how many pairs this annotator has labelled on both sides (``score --gold`` uses only those).

        Empty for texts, which have no pairs.
        """
        if self.sample.kind != "responses":
            return {}
        sides: dict[tuple[str, str], set[str | None]] = {}
        for index, field in self._done:
            item = self.sample.items[index]
            sides.setdefault((field, item.id), set()).add(item.side)
        counts = dict.fromkeys((scheme.field for scheme in self.schemes), 0)
        for (field, _), found in sides.items():
            counts[field] += len(found) == 2
        return counts

    @property
    def last_given(self) -> int | None:
        """The index in :attr:`steps` of the label :meth:`undo` takes back (the last given), or None when none is given."""
        return self._step_of[self._order[-1]] if self._order else None

    def describe(self, step: int) -> str:
        """Step ``step`` as the page numbers it: ``item 8`` (``item 8, regard`` where items take several labels)."""
        current = self.steps[step]
        return f"item {current.index + 1}" + (f", {current.scheme.field}" if len(self.schemes) > 1 else "")

    def _refused(self, message: str, step: int, other: int | None, verb: str) -> InputError:
        """``message`` about ``step``, the next label (or the last given) being ``other`` (``verb``: is, was)."""
        if not 0 <= step < len(self.steps):
            return InputError(_MSG_NO_STEP.format(step=step))
        if other is None or other >= len(self.steps):
            tail = "every label is given" if other is not None else "none is given"
        else:
            tail = f"{self.describe(other)} {verb}"
        return InputError(message.format(given="the label of " + self.describe(step), next=tail, last=tail))

    @property
    def done(self) -> bool:
        """Whether every label is given."""
        return self.position == len(self.steps)

    def _row(self, step: Step, value: int, note: str) -> dict[str, Any]:
        item = step.item
        if self.sample.kind == "responses":
            return {
                "pair_id": item.id,
                "side": item.side,
                step.scheme.field: value,
                "annotator": self.annotator,
                "note": note,
                "text": item.text,  # the answer labelled: score --gold checks its labels are of the answers it scores
            }
        row: dict[str, Any] = {"id": item.id, "label": value, "annotator": self.annotator, "note": note}
        if item.group is not None:
            row["group"] = item.group
        row["text"] = item.text
        return row

    # ------------------------------------------------------------------ changes

    def add(self, step: int, value: object, note: str = "") -> None:
        """Append the label of ``steps[step]`` (which must be the next one), flushed and fsynced before returning.

        Raises
        ------
        InputError
            ``step`` is not :attr:`position`, or ``value`` is not one of the scheme's labels.
        OutputError
            The row cannot be written whole and fsynced (a full disk): the file is cut back to the
            rows before it and the label is not given.
        """
        if step != self.position:
            raise self._refused(_MSG_NOT_NEXT, step, self.position, "is")
        current = self.steps[step]
        choice = current.scheme.choice(value)
        if choice is None:
            choices = ", ".join(str(c.value) for c in current.scheme.choices)
            raise InputError(_MSG_VALUE.format(value=value, field=current.scheme.field, choices=choices))
        line = json_line(self._row(current, choice.value, note.strip())).encode("utf-8")
        try:
            with self._locked():
                self._append(line)
        except OSError as exc:  # the lock itself
            raise OutputError(_MSG_WRITE.format(reason=exc.strerror or exc), path=str(self.path)) from exc
        key = (current.index, current.scheme.field)
        self._done.add(key)
        self._order.append(key)

    def _append(self, line: bytes) -> None:
        """Append one whole row and fsync it; on any failure the file is cut back to the rows before it (OutputError).

        Called under :meth:`_locked`, so no other writer of the file appends meanwhile and its size
        before the write is where the row begins.
        """
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputError(_MSG_WRITE.format(reason=exc.strerror or exc), path=str(self.path)) from exc
        try:
            size = os.fstat(fd).st_size
            try:
                _write_all(fd, line)
                os.fsync(fd)
            except OSError as exc:
                kept = _MSG_ROLLED_BACK if _truncate(fd, size) else _MSG_NOT_ROLLED_BACK
                raise OutputError(_MSG_WRITE.format(reason=exc.strerror or exc) + kept, path=str(self.path)) from exc
        finally:
            os.close(fd)

    def undo(self, step: int | None = None) -> None:
        """Remove this annotator's last label of the sample: the file is rewritten atomically without that row.

        ``step``, when given, is the label the caller means to take back (a page's :attr:`last_given`
        when it was drawn): any other last label (one given since in another tab) is not undone.

        Raises
        ------
        InputError
            Nothing to undo, or ``step`` is not the last label given.
        """
        if not self._order:
            raise InputError(_MSG_NOTHING_TO_UNDO)
        if step is not None and step != self.last_given:
            raise self._refused(_MSG_NOT_LAST, step, self.last_given, "was")
        index, field = self._order[-1]
        item = self.sample.items[index]
        with self._locked():
            lines = self.path.read_bytes().splitlines(keepends=True)
            for number in range(len(lines) - 1, -1, -1):
                if self._is_row(lines[number], item, field):
                    del lines[number]
                    break
            with atomic_writer(self.path, binary=True) as handle:
                handle.write(b"".join(lines))
        self._order.pop()
        self._done.discard((index, field))

    def _is_row(self, raw: bytes, item: SampleItem, field: str) -> bool:
        """Whether a line is this annotator's label of ``field`` for ``item``."""
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError):
            return False
        if not isinstance(row, dict) or str(row.get("annotator") or "") != self.annotator:
            return False
        if self.sample.kind == "responses":
            mine: ItemKey = (str(row.get("pair_id")), row.get("side"))
            return mine == (item.id, item.side) and field in row
        return str(row.get("id")) == item.id and "label" in row


def _short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters, as a Python literal."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _same_items(recorded: object, mine: list[list[str | None]]) -> bool:
    """Whether a sample record's ``items`` are ``mine`` in some order (each ``[id, side]`` once)."""
    if not isinstance(recorded, list) or len(recorded) != len(mine):
        return False
    try:
        return Counter(tuple(item) for item in recorded) == Counter(tuple(item) for item in mine)
    except TypeError:  # an item that is not a list of ids and sides
        return False


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data``, looping on short writes; a write that makes no progress is ENOSPC."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _truncate(fd: int, size: int) -> bool:
    """Cut the file back to ``size`` bytes (the rows before a failed write) and fsync it; whether that worked."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        return False
    return True


def _holds_rows(path: Path) -> bool:
    """Whether the gold file exists and is not empty (it holds a label, or a torn row of one)."""
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:
        return False


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open ``fd`` is still the file at ``path`` (not unlinked or replaced since it was opened)."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
