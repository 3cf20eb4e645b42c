"""The gold file while a person labels: every label appended and fsynced the moment it is given; undo; resume after a kill.

A label is one JSON line appended to ``GOLD.jsonl`` (flushed and fsynced before the page hears
back), so a killed server or a closed tab loses nothing. **Undo rewrites the file atomically**
without the annotator's last row (a temporary file beside it, fsynced, then renamed over it): the
file always holds exactly one row per label given, so ``fairtalk regard check --gold`` and
``read_gold`` read it as it is, with no retraction rows to replay.

Beside it, ``GOLD.jsonl.sample.json`` records what drew the sample: the input and its sha256,
the seed, the size, the measures, and the items in order. A restart with the same ``-o`` checks
it and resumes at the first unlabelled item; a restart with another input, seed, size or
measure is refused (one line naming what differs), never mixed in. Several annotators may write to
one file (each row names its annotator; writes take a lock on the sample record), or each to
their own; one annotator labels in one session at a time.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairtalk._jsonl import json_line
from fairtalk.errors import InputError, OutputError
from fairtalk.files import atomic_writer, check_regular, write_text_atomic
from fairtalk.gold._reader import ItemKey, iter_labels, sample_record_path
from fairtalk.gold._sample import Sample, SampleItem
from fairtalk.gold._schemes import LabelScheme

__all__ = ["GoldLog", "Step"]

_FORMAT = 1
_MSG_OTHER_SAMPLE = (
    "{path} belongs to another sample ({what} differ); give the same INPUT, --seed, --n and --measure, or another -o"
)
_MSG_NO_RECORD = "{path} exists but has no sample record {record}: not written by `fairtalk label`; give another -o"
_MSG_BAD_RECORD = "{record} is not a sample record of `fairtalk label` ({reason})"
_MSG_ONE_MEASURE = "texts and completions take one --measure (each row holds one label), got {n}"
_MSG_ANNOTATOR = "--annotator must be a non-empty name, got {name!r}"
_MSG_NOT_NEXT = "label {step} is not the next one to give ({position})"
_MSG_VALUE = "{value!r} is not a label of {field} (one of {choices})"
_MSG_NOTHING_TO_UNDO = "nothing to undo"


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
        self._check_record()
        self._done: set[tuple[int, str]] = set()
        self._order: list[tuple[int, str]] = []
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
            return
        try:
            theirs = json.loads(self.record_path.read_text(encoding="utf-8"))
            if not isinstance(theirs, dict) or theirs.get("fairtalk_label_sample") != _FORMAT:
                raise ValueError("unknown format")
        except (OSError, ValueError) as exc:
            raise InputError(_MSG_BAD_RECORD.format(record=self.record_path, reason=exc)) from exc
        names = {"input_sha256": "input", "kind": "input", "seed": "--seed", "n": "--n", "measures": "--measure"}
        differ = list(dict.fromkeys(names[k] for k in names if theirs.get(k) != mine[k]))
        if differ or theirs.get("sample_sha256") != mine["sample_sha256"]:  # the same options, another draw: the items
            differ = differ or ["the items drawn"]
            raise InputError(_MSG_OTHER_SAMPLE.format(path=self.path, what=", ".join(differ)))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold an exclusive lock on the sample record (never replaced after it is written) while the file changes."""
        with self.record_path.open("rb") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    # ------------------------------------------------------------------ reading back

    @staticmethod
    def _key(item_id: str, side: str | None, field: str) -> tuple[str, str | None, str]:
        return (item_id, side, field)

    def _field_of(self, field: str) -> str:
        return self.schemes[0].field if self.sample.kind == "texts" and field in ("label", self.schemes[0].field) else field

    def _reload(self) -> None:
        """Read the file: a torn last line (a kill mid-write) is dropped; this annotator's labels set the position."""
        if not self.path.exists():
            return
        self._repair_tail()
        self._done.clear()
        self._order.clear()
        for _, label in iter_labels(self.path):
            if label.annotator != self.annotator:
                continue
            field = self._field_of(label.field)
            index = self._index.get(self._key(label.id, label.side, field))
            if index is not None and (index, field) not in self._done:
                self._done.add((index, field))
                self._order.append((index, field))

    def _repair_tail(self) -> None:
        data = self.path.read_bytes()
        if not data or data.endswith(b"\n"):
            return
        head, _, last = data.rpartition(b"\n")
        try:
            json.loads(last)
            fixed = data + b"\n"  # a whole record whose newline was not written
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
    def done(self) -> bool:
        """Whether every label is given."""
        return self.position == len(self.steps)

    def _row(self, step: Step, value: int, note: str) -> dict[str, Any]:
        item = step.item
        if self.sample.kind == "responses":
            return {"pair_id": item.id, "side": item.side, step.scheme.field: value, "annotator": self.annotator, "note": note}
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
            The file cannot be written.
        """
        if step != self.position:
            raise InputError(_MSG_NOT_NEXT.format(step=step, position=self.position))
        current = self.steps[step]
        choice = current.scheme.choice(value)
        if choice is None:
            choices = ", ".join(str(c.value) for c in current.scheme.choices)
            raise InputError(_MSG_VALUE.format(value=value, field=current.scheme.field, choices=choices))
        line = json_line(self._row(current, choice.value, note.strip())).encode("utf-8")
        try:
            with self._locked():
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, line)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except OSError as exc:
            raise OutputError(f"cannot write the label ({exc.strerror or exc})", path=str(self.path)) from exc
        key = (current.index, current.scheme.field)
        self._done.add(key)
        self._order.append(key)

    def undo(self) -> None:
        """Remove this annotator's last label of the sample: the file is rewritten atomically without that row.

        Raises
        ------
        InputError
            Nothing to undo.
        """
        if not self._order:
            raise InputError(_MSG_NOTHING_TO_UNDO)
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
        except ValueError:
            return False
        if not isinstance(row, dict) or str(row.get("annotator") or "") != self.annotator:
            return False
        if self.sample.kind == "responses":
            mine: ItemKey = (str(row.get("pair_id")), row.get("side"))
            return mine == (item.id, item.side) and field in row
        return str(row.get("id")) == item.id and "label" in row
