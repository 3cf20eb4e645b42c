"""Gold labels by hand: a blind, stratified sample, a local labelling page, the gold file, and agreement between annotators.

Paper 001's and 004's verdicts rest on scorers; a person's labels of a random sample say whether
the scorer can be trusted, and (with ``stats.ppi``) correct its gaps. This package draws the
sample (:func:`draw_sample`: equal per group, seeded, both sides of each sampled pair), masks the
identity terms of what it shows, serves the page (:class:`LabelServer`, on 127.0.0.1 with a token),
keeps every label the moment it is given (:class:`GoldLog`), reads a gold file back
(:func:`read_gold` -> :class:`Gold`) and measures agreement (:func:`agreement`: Cohen's or
Fleiss' κ). ``fairtalk label`` is its command.
"""

from __future__ import annotations

from fairtalk.gold._agreement import MIN_SHARED_ITEMS, POOR_KAPPA, Agreement, agreement, averaging_warnings
from fairtalk.gold._labels import GoldLog, Step
from fairtalk.gold._reader import (
    REGARD_FIELDS,
    Gold,
    GoldLabel,
    ItemKey,
    is_gold_file,
    outside_scheme,
    read_gold,
    sample_record_path,
)
from fairtalk.gold._sample import MASK_TOKEN, Sample, SampleItem, draw_sample, read_items, resolve_input
from fairtalk.gold._schemes import Choice, Guideline, LabelScheme, guideline, label_scheme, label_schemes, question
from fairtalk.gold._server import MAX_NOTE, LabelServer

__all__ = [
    "MASK_TOKEN",
    "MAX_NOTE",
    "MIN_SHARED_ITEMS",
    "POOR_KAPPA",
    "REGARD_FIELDS",
    "Agreement",
    "Choice",
    "Gold",
    "GoldLabel",
    "GoldLog",
    "Guideline",
    "ItemKey",
    "LabelScheme",
    "LabelServer",
    "Sample",
    "SampleItem",
    "Step",
    "agreement",
    "averaging_warnings",
    "draw_sample",
    "guideline",
    "is_gold_file",
    "label_scheme",
    "label_schemes",
    "outside_scheme",
    "question",
    "read_gold",
    "read_items",
    "resolve_input",
    "sample_record_path",
]
