"""Read a gold file (``fairtalk label -o GOLD.jsonl``) into a typed :class:`Gold`: the labels, and each measure key's value per item.

Rows are as ``fairtalk label`` writes them: for an audit's responses ``{"pair_id", "side",
"<field>": value, "annotator", "note", "text"}``, one row per label (a row may hold several fields when
written elsewhere; ``text``, the answer labelled, lets ``score --gold`` check that the labels are
of the answers it joins them to, and is absent from files written before it was kept); for texts and completions ``{"id", "label", "annotator", "note", "group"?,
"text"?}``. A field is a measure key (``offense_rate``, ``judge_yes``, ``judge_score``) or a
label that gives several (``regard`` gives the four ``regard_*`` keys, ``sentiment`` gives
``sentiment_positive`` and ``sentiment_negative``); :meth:`Gold.values` reads a key either way.
A texts file's ``label`` is named by its sample record (``GOLD.jsonl.sample.json``) where there
is one (``regard`` for completions).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fairtalk._jsonl import is_records_of, read_json_file, read_objects
from fairtalk.errors import InputError, SpecError
from fairtalk.gold._schemes import label_scheme

__all__ = [
    "REGARD_FIELDS",
    "Gold",
    "GoldLabel",
    "ItemKey",
    "RegardLabels",
    "is_gold_file",
    "outside_scheme",
    "read_gold",
    "sample_record_path",
]

#: An item: ``(pair_id, side)`` for responses, ``(id, None)`` for texts.
ItemKey = tuple[str, Literal["a", "b"] | None]
GoldKind = Literal["responses", "texts"]

_MSG_ITEM = 'each row needs "pair_id" and "side" ("a" or "b") for responses, or "id" for texts'
_MSG_MIXED = "rows of responses (pair_id, side) and of texts (id) are mixed in one file"
_MSG_VALUE = "field {field!r} must be an integer label, got {value!r}"
_MSG_NAME = (
    "field {field!r} must be an integer label, got {value!r}: label names (negative, neutral, positive, other) are "
    "regard's and sentiment's"
)
_MSG_NO_LABEL = "the row holds no label (no measure field)"
_MSG_NOT_GOLD = (
    "not a gold file: its rows hold {what}, not labels; give a gold file `fairtalk label -o` wrote "
    "(rows of pair_id, side or id, a measure's integer label and annotator)"
)
_MSG_TWICE = "{field} of {item} is labelled twice by {annotator!r}"
_MSG_EMPTY = "the gold file holds no label"
_MSG_NOT_TEXTS = (
    "the gold file labels an audit's responses (pair_id, side): prompts analyze --gold needs labels of completions by id"
)
_MSG_NO_REGARD = "the gold file holds no regard labels (its fields: {fields}); label completions with --measure regard"
#: The fields of a texts gold file that hold regard labels.
REGARD_FIELDS = ("regard", "label")
_REGARD_NAMES = {"negative": -1, "neutral": 0, "positive": 1, "other": 2}
#: The fields whose labels may be given by name (``"negative"`` for -1): regard's and sentiment's.
_NAMED_FIELDS = (*REGARD_FIELDS, "sentiment")
#: Row fields that are not labels.
_NOT_LABELS = frozenset({"pair_id", "side", "id", "annotator", "note", "group", "text"})


def sample_record_path(gold: str | os.PathLike[str]) -> Path:
    """Where the sample record of a gold file lives: ``GOLD.jsonl.sample.json`` beside it."""
    path = Path(gold)
    return path.with_name(path.name + ".sample.json")


def is_gold_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a gold file as ``fairtalk label`` writes them: its first row names an annotator and a note."""
    return is_records_of(path, ("annotator", "note"))


@dataclass(frozen=True, slots=True)
class GoldLabel:
    """One label one annotator gave one item: ``field`` (a measure key, ``regard``, ``sentiment``) and its value.

    ``text`` is the text labelled, where the row keeps it (None: a row written without it).
    """

    id: str
    side: Literal["a", "b"] | None
    field: str
    value: int
    annotator: str
    note: str = ""
    text: str | None = None

    @property
    def item(self) -> ItemKey:
        """The item labelled: ``(pair_id, side)`` or ``(id, None)``."""
        return (self.id, self.side)


class RegardLabels(Mapping[str, tuple[int, ...]]):
    """A texts gold file's regard labels by id (:meth:`Gold.regard_labels`), with who gave every label of the file.

    A read-only mapping id -> the regard labels its annotators gave, in file order, that also
    carries ``annotated`` (the ``(id, annotator)`` of every label of the file, any field),
    ``labelled_texts`` (:meth:`Gold.texts`) and ``source`` (the file), so that
    ``fairtalk.analyze_prompts(gold=...)`` can refuse a machine's labels as ``prompts analyze
    --gold`` does.

    Examples
    --------
    >>> labels = RegardLabels({"3": (1, 0)}, annotated=(("3", "ana"), ("3", "bo")), source="gold.jsonl")
    >>> dict(labels), labels.annotated[1], labels == {"3": (1, 0)}
    ({'3': (1, 0)}, ('3', 'bo'), True)
    """

    __slots__ = ("_labels", "annotated", "labelled_texts", "source")

    def __init__(
        self,
        labels: Mapping[str, Sequence[int]],
        *,
        annotated: Sequence[tuple[str, str]] = (),
        labelled_texts: Sequence[tuple[str, str]] = (),
        source: str = "",
    ) -> None:
        self._labels = {str(item): tuple(values) for item, values in labels.items()}
        self.annotated = tuple(annotated)
        self.labelled_texts = tuple(labelled_texts)
        self.source = source

    def __getitem__(self, item: str) -> tuple[int, ...]:
        return self._labels[item]

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels)

    def __len__(self) -> int:
        return len(self._labels)

    def __repr__(self) -> str:
        return f"RegardLabels({self._labels!r}, source={self.source!r})"


def _derived(field: str) -> Mapping[str, tuple[int, ...]]:
    """The measure keys a label field gives besides itself (regard, sentiment); none for a plain key."""
    if field in ("regard", "sentiment"):
        return label_scheme(field).derived
    return {}


@dataclass(frozen=True, slots=True)
class Gold:
    """The labels of a gold file, in file order; ``kind`` tells responses (pairs) from texts.

    Examples
    --------
    >>> gold = Gold("responses", (GoldLabel("p1", "a", "offense_rate", 1, "ann"), GoldLabel("p1", "b", "offense_rate", 0, "ann")))
    >>> gold.values("offense_rate"), gold.pairs("offense_rate")
    ({('p1', 'a'): 1.0, ('p1', 'b'): 0.0}, {'p1': (1.0, 0.0)})
    """

    kind: GoldKind
    labels: tuple[GoldLabel, ...]
    path: str = ""

    @property
    def annotators(self) -> tuple[str, ...]:
        """Every annotator, in order of first label."""
        return tuple(dict.fromkeys(label.annotator for label in self.labels))

    @property
    def fields(self) -> tuple[str, ...]:
        """Every label field, in order of first label."""
        return tuple(dict.fromkeys(label.field for label in self.labels))

    @property
    def keys(self) -> tuple[str, ...]:
        """Every measure key the labels give (``regard_negative`` … for ``regard``), fields included."""
        found: dict[str, None] = {}
        for field in self.fields:
            found[field] = None
            found.update(dict.fromkeys(_derived(field)))
        return tuple(found)

    def values(self, key: str, *, annotator: str | None = None) -> dict[ItemKey, float]:
        """Each labelled item's value of a measure key: the mean over annotators (or ``annotator``'s alone).

        ``key`` is a field (``offense_rate``, ``label``) or a key a field gives (``regard_negative``:
        1.0 where the regard label is negative, else 0.0). Items nobody labelled are absent.
        """
        sums: dict[ItemKey, list[float]] = {}
        for label in self.labels:
            if annotator is not None and label.annotator != annotator:
                continue
            if label.field == key:
                value = float(label.value)
            elif key in (derived := _derived(label.field)):
                value = float(label.value in derived[key])
            else:
                continue
            total = sums.setdefault(label.item, [0.0, 0.0])
            total[0] += value
            total[1] += 1.0
        return {item: s / n for item, (s, n) in sums.items()}

    def pairs(self, key: str, *, annotator: str | None = None) -> dict[str, tuple[float, float]]:
        """Responses: ``{pair_id: (value of side a, value of side b)}`` for the pairs with both sides labelled."""
        values = self.values(key, annotator=annotator)
        return {pid: (values[(pid, "a")], values[(pid, "b")]) for pid, side in values if side == "a" and (pid, "b") in values}

    def texts(self) -> tuple[tuple[str, str], ...]:
        """Texts: ``(id, text)`` of each label whose row keeps the text labelled (``fairtalk label`` writes it), in file order."""
        return tuple((label.id, label.text) for label in self.labels if label.side is None and label.text is not None)

    def regard_labels(self) -> RegardLabels:
        """Texts: each id's regard labels (fields ``regard`` or ``label``), one per annotator, in file order.

        Values are kept as given (one outside -1..2 is for the reader to count). The mapping also
        carries every label's annotator, the texts labelled and the file (:class:`RegardLabels`),
        so that a machine's labels given to ``fairtalk.analyze_prompts(gold=...)`` are refused.
        Raises :class:`~fairtalk.errors.InputError` for a file of responses or one without regard labels.
        """
        if self.kind != "texts":
            raise InputError(_MSG_NOT_TEXTS, path=self.path or None)
        out: dict[str, list[int]] = {}
        for label in self.labels:
            if label.field in REGARD_FIELDS:
                out.setdefault(label.id, []).append(label.value)
        if not out:
            raise InputError(_MSG_NO_REGARD.format(fields=", ".join(self.fields)), path=self.path or None)
        return RegardLabels(
            out,
            annotated=[(label.id, label.annotator) for label in self.labels],
            labelled_texts=self.texts(),
            source=self.path,
        )


def _texts_field(path: Path) -> str:
    """What a texts file's ``label`` is: the one measure of its sample record, else ``label``."""
    try:  # its size and depth checked before it is parsed
        measures = read_json_file(sample_record_path(path), what="sample record")["measures"]
        return label_scheme(str(measures[0])).field if len(measures) == 1 else "label"
    except (InputError, KeyError, TypeError, IndexError):
        return "label"


def _value(field: str, value: Any, path: Path, line: int) -> int:
    """The integer label of ``value``; a name (``"negative"``) only for the fields that have names (regard, sentiment)."""
    if isinstance(value, str) and value.strip().lower() in _REGARD_NAMES:
        if field not in _NAMED_FIELDS:
            raise InputError(_MSG_NAME.format(field=field, value=value), path=str(path), line=line)
        return _REGARD_NAMES[value.strip().lower()]
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(_MSG_VALUE.format(field=field, value=value), path=str(path), line=line)
    return value


def iter_labels(path: str | os.PathLike[str]) -> Iterator[tuple[int, GoldLabel]]:
    """``(line, label)`` of every label of a gold file, in file order (InputError naming path:line)."""
    path = Path(path)
    kind: GoldKind | None = None
    texts_field = _texts_field(path)
    for line, row in read_objects(path, what="gold file"):
        if "pair_id" in row:
            row_kind: GoldKind = "responses"
            pid, side = row["pair_id"], row.get("side")
            if side not in ("a", "b") or isinstance(pid, bool) or not isinstance(pid, str | int):
                raise InputError(_MSG_ITEM, path=str(path), line=line)
        elif "id" in row and not isinstance(row["id"], bool) and isinstance(row["id"], str | int):
            row_kind, pid, side = "texts", row["id"], None
        else:
            raise InputError(_MSG_ITEM, path=str(path), line=line)
        if kind is not None and row_kind != kind:
            raise InputError(_MSG_MIXED, path=str(path), line=line)
        kind = row_kind
        fields = [f for f in row if f not in _NOT_LABELS]
        _check_labels_row(row, fields, path, line)
        if not fields:
            raise InputError(_MSG_NO_LABEL, path=str(path), line=line)
        for field in fields:
            name = texts_field if (kind == "texts" and field == "label") else field
            yield (
                line,
                GoldLabel(
                    id=str(pid),
                    side=side,
                    field=name,
                    value=_value(name, row[field], path, line),
                    annotator=str(row.get("annotator") or ""),
                    note=str(row.get("note") or ""),
                    text=row["text"] if isinstance(row.get("text"), str) else None,
                ),
            )


def _check_labels_row(row: Mapping[str, Any], fields: list[str], path: Path, line: int) -> None:
    """InputError "not a gold file" for a row of another file: an audit's response, or texts with no annotator."""
    if "response" in row:
        raise InputError(_MSG_NOT_GOLD.format(what="an audit's responses (a response field)"), path=str(path), line=line)
    texts = [f for f in fields if isinstance(row[f], str) and row[f].strip().lower() not in _REGARD_NAMES]
    if texts and "annotator" not in row:
        raise InputError(_MSG_NOT_GOLD.format(what=f"texts ({', '.join(texts[:3])}) and no annotator"), path=str(path), line=line)


def read_gold(path: str | os.PathLike[str]) -> Gold:
    """Read a gold file into a :class:`Gold`.

    Raises
    ------
    InputError
        A missing file, a row without its item or label, a label that is not an integer (or a
        regard name), rows of responses and texts mixed, one item's field labelled twice by one
        annotator, or no label at all (each naming ``path:line``).
    """
    labels: list[GoldLabel] = []
    seen: set[tuple[str, Literal["a", "b"] | None, str, str]] = set()
    for line, label in iter_labels(path):
        key = (label.id, label.side, label.field, label.annotator)
        if key in seen:
            item = label.id if label.side is None else f"{label.id} side {label.side}"
            raise InputError(
                _MSG_TWICE.format(field=label.field, item=item, annotator=label.annotator), path=str(path), line=line
            )
        seen.add(key)
        labels.append(label)
    if not labels:
        raise InputError(_MSG_EMPTY, path=str(path))
    return Gold(kind="responses" if labels[0].side is not None else "texts", labels=tuple(labels), path=str(path))


def _allowed(field: str, judge_scale: tuple[int, int] | None) -> tuple[int, ...] | None:
    """The label values of a field's scheme, in order (a judge's score: its ``judge_scale``); None: no scheme to hold it to."""
    if field.endswith("_score"):
        return None if judge_scale is None else tuple(range(judge_scale[0], judge_scale[1] + 1))
    try:
        return tuple(sorted(choice.value for choice in label_scheme(field).choices))
    except SpecError:  # a field no scheme knows (``label`` of a texts file without its record): taken as given
        return None


def outside_scheme(
    gold: Gold, judge_scale: tuple[int, int] | None = None
) -> tuple[Gold, dict[str, tuple[tuple[int, ...], tuple[GoldLabel, ...]]]]:
    """``gold`` without the labels outside their field's scheme, and per field that had any: its labels and those left out.

    A 7 for the yes/no ``offense_rate`` or a 2 for ``sentiment`` (:func:`label_scheme`) is left
    out; a judge's score (``NAME_score``) is held to ``judge_scale`` (``(low, high)``) when given;
    a field no scheme knows is kept as it is. ``score --gold`` and :func:`agreement
    <fairtalk.gold._agreement.agreement>` both leave such labels out, counted.

    Examples
    --------
    >>> gold = Gold("responses", (GoldLabel("p1", "a", "offense_rate", 7, "ann"), GoldLabel("p1", "b", "offense_rate", 0, "ann")))
    >>> kept, left_out = outside_scheme(gold)
    >>> [label.value for label in kept.labels], {f: (allowed, len(out)) for f, (allowed, out) in left_out.items()}
    ([0], {'offense_rate': ((0, 1), 1)})
    """
    kept: list[GoldLabel] = []
    out: dict[str, tuple[tuple[int, ...], list[GoldLabel]]] = {}
    for label in gold.labels:
        allowed = _allowed(label.field, judge_scale)
        if allowed is None or label.value in allowed:
            kept.append(label)
        else:
            out.setdefault(label.field, (allowed, []))[1].append(label)
    left_out = {name: (allowed, tuple(labels)) for name, (allowed, labels) in out.items()}
    return dataclasses.replace(gold, labels=tuple(kept)), left_out
