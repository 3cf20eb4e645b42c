"""Human labels in ``score()``: each labelled key's gap corrected by prediction-powered inference (``gold=``).

A gold file (``fairtalk label -o``) labels both sides of a uniform sample of pairs. For each
result key it labels, the scorer's per-pair difference ``a - b`` on every pair and the human's on
the labelled ones give :func:`fairtalk.stats._ppi.ppi_mean`: the gap the labels imply, with an
interval valid whatever the scorer's error (by dialogue where the audit has clusters).
Labels given on other answers than these (a row's ``text`` differs from the answer it joins to, or
the sample record's input is another file) are an error, never joined: the labelled gap would be
another model's. Labelled pairs this run does not hold, keys it does not score, keys with fewer than two
labelled pairs and labels outside their field's scheme (a 7 for the yes/no ``offense_rate``, a 2
for ``sentiment``: :func:`fairtalk.gold.label_scheme`) are counted, left out and said in a
warning, never silently dropped or averaged in. A key whose labels hold too few disagreements with the
scorer (its estimate the labels' alone) gets a warning too, so every output of the result carries it.

``audit --gold`` checks what it can before the model is asked for an answer (:func:`check_gold`):
the file reads, labels responses, labels at least one key the audit scores and at least one of its
pairs. The answers' texts can only be checked once they exist: a mismatch then is an
:class:`OtherAnswersError`, which the audit completes with where its answers are kept.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from fairtalk._jsonl import read_json_file
from fairtalk._responses import ResponseSet
from fairtalk.errors import InputError, SpecError
from fairtalk.gold import Gold, ItemKey, averaging_warnings, label_scheme, outside_scheme, read_gold, sample_record_path
from fairtalk.stats import MIN_DISAGREEMENTS, PPIEstimate, ppi_mean

__all__ = ["GoldEstimates", "OtherAnswersError", "check_gold", "gold_estimates"]

_MSG_TEXTS = (
    "the gold file labels texts or completions (rows by id), not an audit's responses: --gold needs labels by pair_id and side"
)
_MSG_OTHER_ANSWERS = (
    "{n:,} of the {total:,} labelled answers of the gold file are not these responses' answers (first: pair {pair_id} "
    "side {side}: labelled {labelled}, here {here}): the labels were given on other responses"
)
_MSG_OTHER_INPUT = "the gold file's labels were given on {input} (sha256 {sha}…), not on these responses (sha256 {here}…)"
#: What ``score --gold`` says to do about labels of other answers (an audit says where its answers are kept instead).
_HINT_OTHER = "; label these (fairtalk label RESPONSES), or score the responses that were labelled"
_MSG_NO_KEYS = (
    "the gold file labels {keys}, none of which this run scores (its measures give {scored}): "
    "give the measures the labels are of (--measures), or a gold file of these measures' keys"
)
_MSG_NO_PAIRS = (
    "none of the {n:,} labelled pairs of the gold file is among this run's pairs (first: {first}): the labels were "
    "given on another run's pairs (its corpus, --axis, --pairs, --seed or --split differ); label this run's answers "
    "(fairtalk label RESPONSES), or give the options of the run that was labelled"
)
WARN_UNCHECKED = (
    "the gold file keeps neither the answers it labels nor a sample record (GOLD.jsonl.sample.json): "
    "that its labels were given on these responses could not be checked"
)
WARN_NOT_SCORED = "gold labels for {keys}, which this run does not score: left out of the labelled estimates"
WARN_UNKNOWN_PAIRS = "{n} labelled pair(s) of the gold file are not among this run's pairs (first: {first}): left out"
WARN_ONE_SIDE = "{key}: {n} pair(s) labelled on one side only (first: {first}): a paired gap needs both sides, left out"
WARN_FEW = "{key}: only {n} labelled pair(s) scored on both sides, at least 2 are needed for its labelled estimate"
WARN_FEW_DISAGREEMENTS = (
    "{key}: only {k} labelled {unit} {verb} with the scorer, fewer than the {minimum} needed to estimate its error: its "
    "labelled gap and interval are the labels' alone (with more labels the scorer can narrow them)"
)
WARN_VALUES = (
    "{n:,} gold label(s) of {field} outside its labels {allowed} (first: {value} on pair {pair_id} side {side}): left out"
)


class OtherAnswersError(InputError):
    """The gold file's labels were given on other answers than the ones they would be joined to (checked after generation).

    ``finding`` is what differs, without the advice the message ends with (what to label or score).
    """

    def __init__(self, finding: str, *, path: str) -> None:
        self.finding = finding
        super().__init__(finding + _HINT_OTHER, path=path)


@dataclass(frozen=True, slots=True)
class GoldEstimates:
    """The labelled estimate of each key (``estimates``), what was left out (``warnings``) and the labels' record."""

    estimates: Mapping[str, PPIEstimate] = field(default_factory=lambda: MappingProxyType({}))
    warnings: tuple[str, ...] = ()
    n_labelled_pairs: int = 0


def _in_scheme(gold: Gold, judge_scale: tuple[int, int] | None) -> tuple[Gold, list[str]]:
    """``gold`` without the labels outside their field's scheme, and a warning per field that had any."""
    kept, left_out = outside_scheme(gold, judge_scale)
    warnings = [
        WARN_VALUES.format(
            n=len(labels),
            field=name,
            allowed=", ".join(str(v) for v in sorted(allowed)),
            value=labels[0].value,
            pair_id=labels[0].id,
            side=labels[0].side,
        )
        for name, (allowed, labels) in left_out.items()
    ]
    return kept, warnings


def _answers(responses: ResponseSet) -> dict[ItemKey, str]:
    """Each answer of the run by ``(pair_id, side)``."""
    return {(r.pair_id, r.side): r.response for side in (responses.a, responses.b) for r in side}


def _check_answers(gold: Gold, responses: ResponseSet, path: str) -> list[str]:
    """Raise InputError unless the labels were given on these answers; a warning where that cannot be checked.

    A row that keeps its text (``fairtalk label`` writes it) is checked against the answer it
    joins to; rows without one are checked by the sample record's ``input_sha256`` against the
    files the responses were read from. Labels of pairs this run does not hold are not checked
    here (they are counted as unknown pairs).
    """
    answers = _answers(responses)
    wrong = {
        label.item: (label.text, answers[label.item])
        for label in gold.labels
        if label.text is not None and label.item in answers and label.text != answers[label.item]
    }
    if wrong:
        (pair_id, side), (labelled, here) = next(iter(wrong.items()))
        raise OtherAnswersError(
            _MSG_OTHER_ANSWERS.format(
                n=len(wrong),
                total=len({label.item for label in gold.labels}),
                pair_id=pair_id,
                side=side,
                labelled=_short(labelled),
                here=_short(here),
            ),
            path=path,
        )
    if all(label.text is not None for label in gold.labels):
        return []
    try:  # its size and depth checked before it is parsed
        record = read_json_file(sample_record_path(path), what="sample record")
        recorded = record.get("input_sha256") if isinstance(record, dict) else None
    except InputError:
        recorded = None
    shas = [sha for _, sha in responses.sources if sha]
    if not isinstance(recorded, str) or not shas:
        return [WARN_UNCHECKED]
    if recorded not in shas:
        raise OtherAnswersError(
            _MSG_OTHER_INPUT.format(input=record.get("input"), sha=recorded[:12], here=shas[0][:12]), path=path
        )
    return []


def check_gold(path: str, *, keys: Collection[str] | None = None, pair_ids: Iterable[str] | None = None) -> None:
    """Before any answer is asked for: InputError unless the gold file at ``path`` can give a labelled estimate.

    The file must read as a gold file (each row's item, side and labels), label an audit's
    responses (pairs, not texts), and label at least one of ``keys`` (the keys the run's measures
    give) and one of ``pair_ids`` (every pair of the run, all axes), each when given. Labels
    of other keys or pairs besides are counted in the result's warnings, as ``score --gold`` does.
    """
    gold = read_gold(path)
    if gold.kind != "responses":
        raise InputError(_MSG_TEXTS, path=path)
    if keys is not None and not any(key in keys for key in gold.keys):
        raise InputError(_MSG_NO_KEYS.format(keys=", ".join(gold.keys), scored=", ".join(keys)), path=path)
    if pair_ids is None:
        return
    labelled = {label.id for label in gold.labels}
    if labelled.isdisjoint(pair_ids):
        raise InputError(_MSG_NO_PAIRS.format(n=len(labelled), first=min(labelled)), path=path)


def _not_scored(gold: Gold, scores: Collection[str]) -> list[str]:
    """The labelled keys this run does not score, to warn of.

    A field that gives keys (``sentiment``, ``regard``) is scored where any of its keys is: then only the keys the run
    lacks are named; where none is, the field alone is.
    """
    out: list[str] = []
    for name in gold.fields:
        try:
            derived = tuple(label_scheme(name).derived)
        except SpecError:  # a judge's score, ``label``: a key of its own
            derived = ()
        missing = [key for key in derived if key not in scores]
        if name in scores or (derived and len(missing) < len(derived)):
            out.extend(missing)
        else:
            out.append(name)
    return out


def _few_disagreements(estimates: Mapping[str, PPIEstimate], *, clustered: bool) -> list[str]:
    """A warning per key whose labels hold too few disagreements with the scorer (its estimate is the labels' alone).

    The disagreements are counted in the estimate's units: labelled dialogues where the run has clusters, else pairs.
    """
    out = []
    for key, estimate in estimates.items():
        if estimate.too_few_disagreements:
            k = estimate.n_disagreements or 0
            unit = ("dialogue" if k == 1 else "dialogues") if clustered else ("pair" if k == 1 else "pairs")
            verb = "disagrees" if k == 1 else "disagree"
            out.append(WARN_FEW_DISAGREEMENTS.format(key=key, k=k, unit=unit, verb=verb, minimum=MIN_DISAGREEMENTS))
    return out


def _short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters, as a Python literal."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def gold_estimates(
    path: str,
    responses: ResponseSet,
    scores: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    clusters: Sequence[Hashable] | None = None,
    judge_scale: tuple[int, int] | None = None,
) -> GoldEstimates:
    """The prediction-powered gap of every key ``path`` labels, from the per-response ``scores`` of ``responses``.

    Labels outside their field's scheme (``judge_scale``, ``(low, high)``, is a judge's score's)
    are counted in a warning and left out.

    Raises
    ------
    InputError
        The gold file cannot be read or labels texts rather than pairs.
    OtherAnswersError
        The gold file was labelled on other answers than ``responses`` (a row's text, or its
        sample record's input, differs).
    """
    gold = read_gold(path)
    if gold.kind != "responses":
        raise InputError(_MSG_TEXTS, path=path)
    warnings = _check_answers(gold, responses, path)
    gold, out_of_scheme = _in_scheme(gold, judge_scale)
    warnings += out_of_scheme
    warnings += averaging_warnings(gold)  # annotators who contradict each other, averaged item by item
    index = {r.pair_id: i for i, r in enumerate(responses.a)}
    n = len(index)
    groups = None if clusters is None else np.asarray(clusters)
    estimates: dict[str, PPIEstimate] = {}
    unknown: set[str] = set()
    labelled_pairs: set[str] = set()
    not_scored = _not_scored(gold, scores)
    for key in gold.keys:
        if key not in scores:
            continue
        labels = np.full(n, np.nan)
        both = gold.pairs(key)
        one_side = sorted({pair_id for pair_id, _side in gold.values(key)} - set(both))
        unknown.update(pair_id for pair_id in one_side if pair_id not in index)
        if one_side:
            warnings.append(WARN_ONE_SIDE.format(key=key, n=len(one_side), first=one_side[0]))
        for pair_id, (y_a, y_b) in both.items():
            i = index.get(pair_id)
            if i is None:
                unknown.add(pair_id)
                continue
            labels[i] = y_a - y_b
            labelled_pairs.add(pair_id)
        score_a, score_b = scores[key]
        scored = np.isfinite(score_a) & np.isfinite(score_b)  # a judge may give no score on a side
        n_labelled = int(np.count_nonzero(scored & ~np.isnan(labels)))
        if n_labelled < 2:
            warnings.append(WARN_FEW.format(key=key, n=n_labelled))
            continue
        estimates[key] = ppi_mean(
            (score_a - score_b)[scored],
            labels[scored],
            alpha=0.05,  # its ci95
            clusters=None if groups is None else groups[scored],
        )
    warnings += _few_disagreements(estimates, clustered=clusters is not None)
    if not_scored:
        warnings.append(WARN_NOT_SCORED.format(keys=", ".join(not_scored)))
    if unknown:
        warnings.append(WARN_UNKNOWN_PAIRS.format(n=len(unknown), first=sorted(unknown)[0]))
    return GoldEstimates(MappingProxyType(estimates), tuple(warnings), len(labelled_pairs))
