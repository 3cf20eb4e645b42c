"""Validate a regard scorer against gold labels: agreement, macro-F1, F1 per label, confusion, per-group rates and gaps.

Paper 004 (like Sheng et al.) trusts one classifier's labels. A researcher who labels a sample of
their own model's outputs by hand can check any scorer against them: the built-in classifier,
an ``hf:`` model, or labels from elsewhere (such as the published ones). Beyond agreement, what
matters for a bias audit is whether the scorer's *group gaps* match the gold gaps: a scorer
that is 60% accurate but over-calls one group negative manufactures a gap.

Gold and predicted records are ``{"id", "label"}`` (label ``negative|neutral|positive|other``,
or -1/0/1/2); gold may add ``"text"`` (to be labelled by a scorer) and ``"group"``, and predictions
``"text"`` (:func:`write_labels` writes the text labelled, so that a join by id can be checked to
join the same texts). Other keys (``"annotator"``, which :func:`write_labels` writes) are not read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, ClassVar

import numpy as np

from fairtalk._codec import Codec
from fairtalk._jsonl import is_json_of, is_written_as, read_objects
from fairtalk.errors import InputError

__all__ = [
    "LABEL_NAMES",
    "RegardCheck",
    "check_labels",
    "is_labels_file",
    "is_regard_check",
    "label_value",
    "match_predicted",
    "read_labels",
    "write_labels",
]

LABEL_NAMES: tuple[str, ...] = ("negative", "neutral", "positive", "other")
#: The keys of every record :func:`write_labels` writes, and of none other: with the text labelled, or (files written
#: before it was kept, or of records without one) without it.
_LABELS_KEYS = (frozenset(("id", "label", "annotator", "text")), frozenset(("id", "label", "annotator")))
#: The ``annotator`` of machine labels: ``fairtalk`` and, after a colon, the scorer that labelled (``fairtalk:builtin``).
#: It tells fairtalk's own labels from a person's ``{"id", "label"}`` file, which :func:`is_labels_file` never claims.
MACHINE_ANNOTATOR = "fairtalk"
_VALUES = {"negative": -1, "neutral": 0, "positive": 1, "other": 2, -1: -1, 0: 0, 1: 1, 2: 2}
_MSG_LABEL = "label must be one of negative, neutral, positive, other (or -1, 0, 1, 2), got {value!r}"
_MSG_ID = 'each record needs an "id" (a string or an integer)'
_MSG_DUPLICATE = "id {id!r} appears twice"
_MSG_NEED_TEXT = 'each record needs a "text" string'
_MSG_NO_GOLD = "the gold file holds no label"
_MSG_NO_OVERLAP = "no id is in both the gold and the predicted labels"
#: The least share of the gold labels that predictions must join by id before a check is made of them.
MIN_MATCHED_SHARE = 0.5
#: The fewest texts a group needs for :attr:`RegardCheck.instrument` to give an interval of the scorer's own share of
#: a gap it is in; below it ``low`` and ``high`` are None ("too few texts to tell"), never an interval.
MIN_GROUP_TEXTS = 30
_MSG_FEW_MATCHED = (
    "only {n_matched} of {n_gold} gold labels have a prediction with the same id ({n_predicted} predictions given): "
    "the predictions are not of the gold texts; label the gold file's texts (fairtalk regard label --input GOLD) "
    "or give --regard SCORER"
)
_MSG_OTHER_TEXT = (
    "{n} of the {n_matched} ids in both files hold different texts (first: id {id!r}): the predictions are not of "
    "the gold texts; label the gold file's texts (fairtalk regard label --input GOLD)"
)
#: Where a joined id's texts cannot be compared: {whose} is :data:`_NO_TEXT_PREDICTED`, ``_NO_TEXT_GOLD`` or ``_NO_TEXT_EITHER``.
WARN_UNCHECKED = (
    "{n:,} of the {n_matched:,} ids in both files could not be checked to hold the same text ({whose} no text): the "
    "join by id is taken on trust; label the gold file's texts (fairtalk regard label --input GOLD), which writes them"
)
_NO_TEXT_PREDICTED = "the predictions hold"
_NO_TEXT_GOLD = "the gold file holds"
_NO_TEXT_EITHER = "one file or the other holds"


def label_value(value: Any) -> int | None:
    """-1/0/1/2 for a label name or value; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip().lower()
        if value.lstrip("-").isdigit():
            value = int(value)
    return _VALUES.get(value)


def read_labels(path: str | os.PathLike[str], *, need_text: bool = False) -> list[dict[str, Any]]:
    """Records ``{"id", "label", "text"?, "group"?}`` of a JSONL file, labels as -1..2 (InputError naming path:line)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line, record in read_objects(path):
        rid = record.get("id")
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            raise InputError(_MSG_ID, path=str(path), line=line)
        key = str(rid)
        if key in seen:
            raise InputError(_MSG_DUPLICATE.format(id=key), path=str(path), line=line)
        seen.add(key)
        entry: dict[str, Any] = {"id": key, "group": record.get("group")}
        if "label" in record:
            value = label_value(record["label"])
            if value is None:
                raise InputError(_MSG_LABEL.format(value=record["label"]), path=str(path), line=line)
            entry["label"] = value
        elif not need_text:
            raise InputError(_MSG_LABEL.format(value=None), path=str(path), line=line)
        text = record.get("text")
        if need_text and not isinstance(text, str):
            raise InputError(_MSG_NEED_TEXT, path=str(path), line=line)
        if isinstance(text, str):  # kept where given: a check of predictions matches the texts of the ids it joins
            entry["text"] = text
        out.append(entry)
    return out


def match_predicted(
    gold: Sequence[Mapping[str, Any]], predicted: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, int], int, int, str | None]:
    """Join predicted labels to the gold records by id.

    Returns id -> label, the gold labels without a prediction, the predictions without a gold
    label, and a warning (:data:`WARN_UNCHECKED`) when some joined ids could not be checked to hold
    the same text, else None. Both are :func:`read_labels` records. Where a joined id has a text in
    both files, the texts must be the same (compared with surrounding whitespace stripped).

    Raises
    ------
    InputError
        No gold label, fewer than :data:`MIN_MATCHED_SHARE` of the gold labels joined, or a joined id whose texts differ.
    """
    guesses = {str(r["id"]): int(r["label"]) for r in predicted}
    labelled = [g for g in gold if "label" in g]
    if not labelled:
        raise InputError(_MSG_NO_GOLD)
    joined = [g for g in labelled if g["id"] in guesses]
    if len(joined) < MIN_MATCHED_SHARE * len(labelled) or not joined:
        raise InputError(_MSG_FEW_MATCHED.format(n_matched=len(joined), n_gold=len(labelled), n_predicted=len(guesses)))
    texts = {str(r["id"]): r["text"] for r in predicted if "text" in r}
    other = [g["id"] for g in joined if "text" in g and g["id"] in texts and texts[g["id"]].strip() != g["text"].strip()]
    if other:
        raise InputError(_MSG_OTHER_TEXT.format(n=len(other), n_matched=len(joined), id=other[0]))
    gold_ids = {g["id"] for g in labelled}
    return guesses, len(labelled) - len(joined), sum(1 for rid in guesses if rid not in gold_ids), _unchecked(joined, texts)


def _unchecked(joined: Sequence[Mapping[str, Any]], texts: Mapping[str, str]) -> str | None:
    """:data:`WARN_UNCHECKED` for the joined gold records whose text, or whose prediction's, is missing; None if none is."""
    no_gold = {g["id"] for g in joined if "text" not in g}
    no_predicted = {g["id"] for g in joined if g["id"] not in texts}
    if not no_gold and not no_predicted:
        return None
    whose = _NO_TEXT_PREDICTED if not no_gold else _NO_TEXT_GOLD if not no_predicted else _NO_TEXT_EITHER
    return WARN_UNCHECKED.format(n=len(no_gold | no_predicted), n_matched=len(joined), whose=whose)


@dataclass(frozen=True)
class RegardCheck(Codec):
    """A scorer against gold labels. Rates are fractions; gaps are ``group_a - group_b`` of a label's rate.

    ``to_dict()`` adds ``labels`` (:data:`LABEL_NAMES`) before ``confusion``, whose rows are gold labels and
    columns predicted, in that order.

    ``f1`` is None for a label neither the gold nor the predicted labels use, and ``macro_f1`` the
    mean over the other labels (a label nobody used is no failure of the scorer).

    ``instrument`` is, per gap and label, how much of the scorer's gap the scorer itself adds:
    ``difference`` = predicted gap - gold gap, with a 95% bootstrap interval (``low``, ``high``;
    texts resampled within each group, gold and predicted label kept together). An interval that
    excludes 0 means the scorer's own error differs by group (:meth:`scorer_adds`). The rule for
    small groups: with fewer than :data:`MIN_GROUP_TEXTS` texts in either group, ``low`` and
    ``high`` are None (too few texts to tell); and a group whose error on a label does not vary
    (no disagreement there) widens the interval by the exact (Clopper-Pearson) 97.5% bound on its
    error share, ``1 - 0.025^(1/n)``, where a bootstrap would give it no spread.
    """

    n: int
    agreement: float
    macro_f1: float
    f1: dict[str, float | None]
    confusion: list[list[int]]
    rates: dict[str, dict[str, dict[str, float]]]
    gaps: dict[str, dict[str, dict[str, float]]]
    instrument: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)

    #: :data:`MIN_GROUP_TEXTS`: the fewest texts of each group for an interval of what the scorer adds to a gap.
    min_group_texts: ClassVar[int] = MIN_GROUP_TEXTS

    _codec_keys: ClassVar[tuple[str, ...]] = (
        "n",
        "agreement",
        "macro_f1",
        "f1",
        "labels",
        "confusion",
        "rates",
        "gaps",
        "instrument",
    )

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels in the order of ``f1``, and of the rows and columns of ``confusion``."""
        return LABEL_NAMES

    def too_small(self, pair: str) -> bool:
        """Whether a group of ``pair`` has fewer than :data:`MIN_GROUP_TEXTS` texts: no interval of what the scorer adds."""
        return any(v["low"] is None or v["high"] is None for v in self.instrument.get(pair, {}).values())

    def scorer_adds(self, pair: str) -> dict[str, dict[str, float]]:
        """The labels whose ``instrument`` interval for ``pair`` excludes 0: the scorer's own error differs by group there."""
        out: dict[str, dict[str, float]] = {}
        for name, value in self.instrument.get(pair, {}).items():
            low, high, difference = value["low"], value["high"], value["difference"]
            if low is not None and high is not None and difference is not None and (low > 0 or high < 0):
                out[name] = {"difference": difference, "low": low, "high": high}
        return out

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write ``to_dict()`` as JSON after its ``schema_version``, atomically."""
        import json

        from fairtalk.files import write_text_atomic
        from fairtalk.records import SCHEMA_VERSION

        payload = {"schema_version": SCHEMA_VERSION, **self.to_dict()}
        write_text_atomic(path, json.dumps(payload, indent=2, allow_nan=False) + "\n")


def _rates(labels: np.ndarray) -> dict[str, float]:
    return {
        name: float(np.mean(labels == value)) if labels.size else float("nan") for name, value in zip(LABEL_NAMES, (-1, 0, 1, 2))
    }


def _exact_bound(n: int) -> float:
    """The exact (Clopper-Pearson) 97.5% upper bound on a share of which 0 of ``n`` were seen: ``1 - 0.025^(1/n)``."""
    return float(1.0 - 0.025 ** (1.0 / n))


def _instrument_gap(
    truth: np.ndarray, guess: np.ndarray, in_a: np.ndarray, in_b: np.ndarray, *, n_boot: int, seed: int
) -> dict[str, dict[str, float | None]]:
    """Per label: (predicted gap - gold gap) of groups a and b, with a 95% interval (None below :data:`MIN_GROUP_TEXTS`).

    The interval is the percentile bootstrap's, texts resampled within each group, widened on each
    side by :func:`_exact_bound` of a group whose error on the label does not vary (no disagreement
    there: the bootstrap alone would give that group no spread at all).
    """
    rng = np.random.default_rng(seed)
    # error[i, k] = 1{guess == k} - 1{truth == k}: a group's mean is its predicted minus gold rate of label k
    error = np.stack([(guess == v).astype(float) - (truth == v).astype(float) for v in (-1, 0, 1, 2)], axis=1)
    ea, eb = error[in_a], error[in_b]
    point = ea.mean(axis=0) - eb.mean(axis=0)
    if min(len(ea), len(eb)) < MIN_GROUP_TEXTS:
        return {name: {"difference": float(point[k]), "low": None, "high": None} for k, name in enumerate(LABEL_NAMES)}
    boot_a = ea[rng.integers(0, len(ea), size=(n_boot, len(ea)))].mean(axis=1)
    boot_b = eb[rng.integers(0, len(eb), size=(n_boot, len(eb)))].mean(axis=1)
    low, high = np.percentile(boot_a - boot_b, [2.5, 97.5], axis=0)
    widen = sum(np.where(np.ptp(e, axis=0) == 0, _exact_bound(len(e)), 0.0) for e in (ea, eb))
    low, high = np.maximum(low - widen, -2.0), np.minimum(high + widen, 2.0)
    return {
        name: {"difference": float(point[k]), "low": float(low[k]), "high": float(high[k])} for k, name in enumerate(LABEL_NAMES)
    }


def check_labels(
    gold: Sequence[Mapping[str, Any]],
    predicted: Mapping[str, int],
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> RegardCheck:
    """Compare ``predicted`` (id -> -1..2) with ``gold`` records; per-group rates and gaps where gold has groups.

    ``pairs`` are the group pairs whose gaps to report (default: every pair of groups present);
    ``n_boot`` and ``seed`` set the bootstrap of :attr:`RegardCheck.instrument`.
    """
    from sklearn.metrics import confusion_matrix, f1_score

    if not any("label" in g for g in gold):
        raise InputError(_MSG_NO_GOLD)
    rows = [g for g in gold if g["id"] in predicted and "label" in g]
    if not rows:
        raise InputError(_MSG_NO_OVERLAP)
    truth = np.array([g["label"] for g in rows])
    guess = np.array([predicted[g["id"]] for g in rows])
    values = [-1, 0, 1, 2]
    per_label = f1_score(truth, guess, labels=values, average=None, zero_division=0)
    # a label neither file uses has no F1 (n/a), and is left out of the macro average
    used = [bool(np.any(truth == v) or np.any(guess == v)) for v in values]
    f1: dict[str, float | None] = {name: float(v) if u else None for name, v, u in zip(LABEL_NAMES, per_label, used)}
    groups = sorted({str(g["group"]) for g in rows if g.get("group") is not None})
    rates: dict[str, dict[str, dict[str, float]]] = {}
    for group in groups:
        mask = np.array([str(g.get("group")) == group for g in rows])
        rates[group] = {"gold": _rates(truth[mask]), "predicted": _rates(guess[mask]), "n": {"n": float(mask.sum())}}
    gaps: dict[str, dict[str, dict[str, float]]] = {}
    instrument: dict[str, dict[str, dict[str, float | None]]] = {}
    member = np.array([str(g.get("group")) for g in rows])
    for a, b in pairs if pairs is not None else list(combinations(groups, 2)):
        if a in rates and b in rates:
            gaps[f"{a} - {b}"] = {
                source: {name: rates[a][source][name] - rates[b][source][name] for name in LABEL_NAMES}
                for source in ("gold", "predicted")
            }
            instrument[f"{a} - {b}"] = _instrument_gap(truth, guess, member == a, member == b, n_boot=n_boot, seed=seed)
    return RegardCheck(
        n=len(rows),
        agreement=float(np.mean(truth == guess)),
        macro_f1=float(np.mean([v for v in f1.values() if v is not None])),
        f1=f1,
        confusion=confusion_matrix(truth, guess, labels=values).tolist(),
        rates=rates,
        gaps=gaps,
        instrument=instrument,
    )


def is_machine_annotator(annotator: object) -> bool:
    """Whether ``annotator`` is fairtalk's own (:data:`MACHINE_ANNOTATOR`, or ``fairtalk:SCORER``): a machine's labels."""
    return isinstance(annotator, str) and (annotator == MACHINE_ANNOTATOR or annotator.startswith(f"{MACHINE_ANNOTATOR}:"))


def _is_machine_label(record: Mapping[str, Any]) -> bool:
    return (
        record.keys() in _LABELS_KEYS
        and isinstance(record.get("text", ""), str)
        and record["label"] in LABEL_NAMES
        and is_machine_annotator(record.get("annotator"))
    )


def is_labels_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a labels JSONL as :func:`write_labels` writes them: every record ``{"id", "label", "annotator", "text"?}``.

    Each label is a name and each annotator fairtalk's (:data:`MACHINE_ANNOTATOR`). A file with
    any other key (a note, a group: a gold file), another annotator, a label :func:`write_labels`
    never writes (-1, 1), or no annotator at all (a person's ``{"id", "label"}`` file, or labels
    of a fairtalk that did not yet name itself) is the user's, never replaced by machine labels.
    """
    return is_written_as(path, _is_machine_label)


def is_regard_check(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a check as :meth:`RegardCheck.write` writes them: a JSON object with its keys."""
    return is_json_of(path, ("n", "agreement", "macro_f1", "f1", "confusion"))


def write_labels(records: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *, scorer: str | None = None) -> None:
    """Write machine labels as ``{"id", "label", "annotator", "text"}`` JSONL (label names), atomically: the file is whole or untouched.

    ``text`` is the record's text where it has one (the text labelled): ``regard check --predicted``
    checks by it that a joined id is of the same text in both files.

    ``annotator`` is :data:`MACHINE_ANNOTATOR`, with ``:SCORER`` when ``scorer`` names the one
    that labelled (``fairtalk:builtin``): readers of labels (``regard check``, a gold file's
    reader) take it as the labels' annotator, and :func:`is_labels_file` tells the file from a
    person's by it.
    """
    from fairtalk._jsonl import write_records
    from fairtalk.files import atomic_writer

    annotator = MACHINE_ANNOTATOR if scorer is None else f"{MACHINE_ANNOTATOR}:{scorer}"
    rows = []
    for record in records:
        value = label_value(record["label"])
        if value is None:
            raise InputError(f"not a regard label: {record['label']!r}")
        row = {"id": record["id"], "label": LABEL_NAMES[value + 1], "annotator": annotator}
        if isinstance(record.get("text"), str):
            row["text"] = record["text"]
        rows.append(row)
    with atomic_writer(path) as handle:
        write_records(handle, rows)
