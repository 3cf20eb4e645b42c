"""Agreement between annotators of one sample: Cohen's κ for two, Fleiss' κ for more, per label field.

Each annotator is a name in a gold file; the same name in two files is two annotators, told
apart by the file (rows without a name are the file's annotator). For each field (``offense_rate``, ``regard``, ``label``) κ is computed over
the items every annotator of that field labelled (``n_items``); items some left out do not count.
Cohen's κ is :func:`sklearn.metrics.cohen_kappa_score`, Fleiss' κ
:func:`statsmodels.stats.inter_rater.fleiss_kappa`; ``observed`` is the share of items on which
all annotators agree. Labels outside their field's scheme (a 7 for the yes/no ``offense_rate``:
:func:`~fairtalk.gold._reader.outside_scheme`) are left out and counted in ``left_out``, as
``score --gold`` leaves them out: they are no category to agree on.

An id is one item only where the annotators labelled one text: κ between labels of different answers (two bots'
answers to the same pair ids, two completions files' line numbers) is no agreement. So, as ``score --gold`` and
``prompts analyze --gold`` refuse labels of other texts, :func:`agreement` refuses files that label different texts
(an :class:`~fairtalk.errors.InputError` naming how many items and the first): a row keeps the text it labelled
(``fairtalk label`` writes it), and where rows lack it the files' sample records (``GOLD.jsonl.sample.json``) must
name one input (its sha256). Skipping the differing ids instead would report κ over the few answers two models happen
to share, as if the files were one sample: files of different samples are an error, not a count.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from fairtalk._jsonl import read_json_file
from fairtalk.errors import InputError
from fairtalk.gold._reader import Gold, GoldLabel, ItemKey, outside_scheme, read_gold, sample_record_path

__all__ = ["MIN_SHARED_ITEMS", "POOR_KAPPA", "Agreement", "agreement", "averaging_warnings"]

#: Below this κ (Landis and Koch's "slight" agreement, 0 to 0.2, or worse), on at least :data:`MIN_SHARED_ITEMS` items
#: labelled by all, the annotators of one gold file are said to contradict each other where their labels are averaged.
POOR_KAPPA = 0.2
#: The fewest items all annotators labelled for their κ to be judged (fewer: κ is too uncertain to warn on).
MIN_SHARED_ITEMS = 20
_WARN_POOR = (
    "{field}: the gold file's annotators {names} agree poorly ({method} κ {kappa:.2f}, below {poor:g}; {observed:.0%} of "
    "the {n:,} items all of them labelled agree): their labels are averaged on each item, so the labelled estimate mixes "
    "judgements that contradict each other; settle the guideline with them, or give a gold file of one annotator's labels"
)

_MSG_OTHER_TEXTS = (
    "{n:,} labelled item(s) hold another text in {here} than in {there} (first: {item}, labelled {labelled} there and "
    "{other} here): the files label different answers, and κ of labels of different texts is no agreement; give gold "
    "files labelled on the same input"
)
_MSG_OTHER_INPUTS = (
    "{here} labels another input than {there} (its sample record: {input_here}, sha256 {sha_here}…; theirs: "
    "{input_there}, sha256 {sha_there}…): the files label different answers, and κ of labels of different texts is no "
    "agreement; give gold files labelled on the same input"
)
_MSG_NO_COMMON = (
    "the gold files have no label field in common ({fields}): agreement compares labels of one field; give files "
    "labelled with the same --measure"
)
_MSG_ONE_ANNOTATOR = "agreement needs labels of at least two annotators; the gold files hold one ({names})"


@dataclass(frozen=True, slots=True)
class Agreement:
    """κ of one label field among ``annotators`` over the ``n_items`` items all of them labelled (NaN: too few items).

    ``left_out`` holds the field's labels outside its scheme (``allowed``, its labels), which
    no κ counts.
    """

    field: str
    method: Literal["cohen", "fleiss"]
    kappa: float
    observed: float
    n_items: int
    annotators: tuple[str, ...]
    left_out: tuple[GoldLabel, ...] = ()
    allowed: tuple[int, ...] = ()


def _raters(golds: Sequence[Gold]) -> dict[str, Gold]:
    """Annotator name -> the file's labels; a name in several files gets the file name after it, a missing name is the file's."""
    count: dict[str, int] = {}
    for gold in golds:
        for name in gold.annotators:
            count[name] = count.get(name, 0) + 1
    out: dict[str, Gold] = {}
    for gold in golds:
        for name in gold.annotators:
            file = Path(gold.path).name
            key = (name if count[name] == 1 else f"{name} ({file})") if name else file
            labels = tuple(label for label in gold.labels if label.annotator == name)
            out[key] = Gold(gold.kind, labels, gold.path)
    return out


def _kappa(table: np.ndarray, method: str) -> float:
    """κ of an items × raters table of labels."""
    if table.shape[0] < 2:
        return math.nan
    if method == "cohen":
        from sklearn.metrics import cohen_kappa_score

        if np.unique(table).size < 2:  # one category everywhere: chance agreement is 1, κ undefined
            return math.nan
        return float(cohen_kappa_score(table[:, 0], table[:, 1]))
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    counts, _ = aggregate_raters(table)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(fleiss_kappa(counts, method="fleiss"))


def agreement(paths: Sequence[str | os.PathLike[str]]) -> list[Agreement]:
    r"""Cohen's κ (two annotators) or Fleiss' κ (more) per label field of the gold files ``paths``.

    Labels outside their field's scheme are left out of κ and returned in each field's ``left_out``
    (a field all of whose labels but one annotator's are left out gets a NaN κ over 0 items).

    Raises
    ------
    InputError
        A file :func:`~fairtalk.gold._reader.read_gold` refuses, or fewer than two annotators.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> rows = lambda who, labels: "".join(f'{{"id": {i}, "label": {v}, "annotator": "{who}"}}\n' for i, v in enumerate(labels))
    >>> _ = (folder / "a.jsonl").write_text(rows("ann", [1, 0, 1, 1, 0, 0]), encoding="utf-8")
    >>> _ = (folder / "b.jsonl").write_text(rows("bo", [1, 0, 0, 1, 0, 1]), encoding="utf-8")
    >>> [(a.method, round(a.kappa, 3), a.n_items) for a in agreement([folder / "a.jsonl", folder / "b.jsonl"])]
    [('cohen', 0.333, 6)]
    """
    golds = [read_gold(path) for path in paths]
    raters = _raters(golds)
    if len(raters) < 2:
        raise InputError(_MSG_ONE_ANNOTATOR.format(names=", ".join(raters)))
    _check_same_texts(golds)
    found = _agreements(raters)
    if not found:
        fields = "; ".join(f"{Path(gold.path).name}: {', '.join(gold.fields)}" for gold in golds)
        raise InputError(_MSG_NO_COMMON.format(fields=fields))
    return found


def _check_same_texts(golds: Sequence[Gold]) -> None:
    """InputError unless every labelled item is one text in every file (and row) that labels it.

    Rows that keep their text are compared item by item; where some lack it, the files' sample records must name one
    input (a file without a record, or rows without text and no record, cannot be checked: taken as they are).
    """
    first: dict[ItemKey, tuple[str, str]] = {}  # item -> (its text, the file it was first labelled in)
    differ: list[tuple[ItemKey, str, str, str, str]] = []
    for gold in golds:
        for label in gold.labels:
            if label.text is None:
                continue
            text, there = first.setdefault(label.item, (label.text, gold.path))
            if text != label.text:
                differ.append((label.item, text, there, label.text, gold.path))
    if differ:
        (pair_id, side), text, there, other, here = differ[0]
        raise InputError(
            _MSG_OTHER_TEXTS.format(
                n=len({found[0] for found in differ}),
                here=here,
                there=there,
                item=f"id {pair_id}" if side is None else f"pair {pair_id} side {side}",
                labelled=_short(text),
                other=_short(other),
            )
        )
    if all(label.text is not None for gold in golds for label in gold.labels):
        return
    inputs = [(gold.path, found) for gold in golds if (found := _recorded_input(gold.path)) is not None]
    for path, (name, sha) in inputs[1:]:
        there, (name_there, sha_there) = inputs[0]
        if sha != sha_there:
            raise InputError(
                _MSG_OTHER_INPUTS.format(
                    here=path, there=there, input_here=name, sha_here=sha[:12], input_there=name_there, sha_there=sha_there[:12]
                )
            )


def _recorded_input(path: str) -> tuple[str, str] | None:
    """The input and its sha256 a gold file's sample record names (None: no record, or one without them)."""
    record_path = sample_record_path(path)
    if not record_path.exists():
        return None
    try:  # its size and depth checked before it is parsed
        record = read_json_file(record_path, what="sample record")
    except InputError:
        return None
    sha = record.get("input_sha256") if isinstance(record, dict) else None
    return (str(record.get("input")), sha) if isinstance(sha, str) else None


def _short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters, as a Python literal."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _agreements(raters: dict[str, Gold]) -> list[Agreement]:
    """κ per label field among ``raters`` (annotator -> their labels)."""
    fields = list(dict.fromkeys(field for gold in raters.values() for field in gold.fields))
    labelled = {field: tuple(name for name, gold in raters.items() if field in gold.fields) for field in fields}
    outside: dict[str, tuple[tuple[int, ...], list[GoldLabel]]] = {}
    for name, gold in raters.items():
        raters[name], out_of_scheme = outside_scheme(gold)
        for field, (allowed, labels) in out_of_scheme.items():
            outside.setdefault(field, (allowed, []))[1].extend(labels)
    out: list[Agreement] = []
    for field in fields:
        allowed, left_out = outside.get(field, ((), []))
        values = {name: gold.values(field) for name, gold in raters.items()}
        names = tuple(name for name, v in values.items() if v)
        if len(names) < 2:
            if left_out:  # its labels left out leave too few annotators: said, not dropped
                out.append(Agreement(field, "cohen", math.nan, math.nan, 0, labelled[field], tuple(left_out), allowed))
            continue
        common: list[ItemKey] = [item for item in values[names[0]] if all(item in values[n] for n in names[1:])]
        table = np.array([[values[n][item] for n in names] for item in common], dtype=np.int64).reshape(len(common), len(names))
        method: Literal["cohen", "fleiss"] = "cohen" if len(names) == 2 else "fleiss"
        observed = float(np.mean(np.all(table == table[:, :1], axis=1))) if len(common) else math.nan
        out.append(Agreement(field, method, _kappa(table, method), observed, len(common), names, tuple(left_out), allowed))
    return out


def averaging_warnings(gold: Gold) -> tuple[str, ...]:
    """A warning for each label field whose annotators in one gold file agree poorly where their labels are averaged.

    ``Gold.values`` averages the annotators' labels of an item; where their κ over at least :data:`MIN_SHARED_ITEMS`
    items all of them labelled is below :data:`POOR_KAPPA`, that average mixes contradicting judgements: the warning
    names the annotators, κ and the share of items on which all agree. A NaN κ (one label everywhere) is no warning.
    """
    raters = _raters([gold])
    if len(raters) < 2:
        return ()
    return tuple(
        _WARN_POOR.format(
            field=found.field,
            names=" and ".join(found.annotators) if len(found.annotators) == 2 else ", ".join(found.annotators),
            method="Cohen's" if found.method == "cohen" else "Fleiss'",
            kappa=found.kappa,
            poor=POOR_KAPPA,
            observed=found.observed,
            n=found.n_items,
        )
        for found in _agreements(raters)
        if found.n_items >= MIN_SHARED_ITEMS and found.kappa < POOR_KAPPA
    )
