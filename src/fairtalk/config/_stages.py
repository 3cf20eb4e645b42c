"""The audit's options by stage: what :class:`~fairtalk.config.AuditConfig` hands each stage, and nothing more.

:class:`~fairtalk.config.AuditConfig` holds every option flat (the keywords of ``audit()``, the
keys of a config file, the flags of ``fairtalk audit``, ``run.json``'s ``config``), validated
once. Each stage of a run receives only its own part, a frozen value read off the validated
config (nothing here validates again):

- :class:`PairsOptions` (``config.pairs``): the pairs stage, which contexts and how many pairs;
- :class:`GenerationOptions` (``config.generation``): the model, where it runs and its decoding;
- :class:`InferenceOptions` (``config.inference``): scoring and inference, the
  :class:`~fairtalk.config.ScoreOptions` (``config.score``) and the audit's correction family,
  similarity baseline and gap by turn;
- :class:`SequentialOptions` (``config.sequential``): ``until_decided`` and its looks;
- :class:`OutputOptions` (``config.output``): where the report goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from fairtalk.config._score_options import ScoreOptions
from fairtalk.models import DecodingSettings, RayEngine, ReplyFunction, Responder
from fairtalk.store import RunStore

__all__ = [
    "CorrectionScope",
    "GenerationOptions",
    "InferenceOptions",
    "Mixed",
    "OutputOptions",
    "PairsOptions",
    "SequentialOptions",
    "Spending",
]

#: Contexts that mention both groups: dropped, or kept (swapped both ways).
Mixed = Literal["drop", "keep"]
#: The correction family: each axis on its own, or all axes together.
CorrectionScope = Literal["axis", "run"]
#: The alpha spending of a sequential audit.
Spending = Literal["obrien-fleming", "pocock"]


@dataclass(frozen=True, slots=True)
class PairsOptions:
    """The pairs stage: the corpus and split read, the turns per context, and how each axis' pairs are drawn.

    ``split`` is the split read (:attr:`AuditConfig.effective_split`); ``n_pairs`` the pairs
    per axis (None: every pair); ``seed`` seeds the sample and the swapper. ``n_pairs_given``
    says whether ``n_pairs`` was asked for (:attr:`AuditConfig.n_pairs_given`; False: the
    default, left), so that only pairs asked for are a shortfall when the corpus has fewer.
    """

    corpus: str
    split: str
    turns: int
    n_pairs: int | None
    mixed: Mixed
    balance: bool
    seed: int
    n_pairs_given: bool = True


@dataclass(frozen=True, slots=True)
class GenerationOptions:
    """The generation stage: the model and its adapter options, where it runs, its batches, failures and decoding.

    ``store`` is the run store the answers are cached in; ``engine`` None runs the model in
    this process; ``seed`` seeds the per-item generation seeds.
    """

    model: str | Responder | ReplyFunction | None
    model_args: Mapping[str, object]
    model_version: str | None
    batch_size: int
    engine: RayEngine | None
    max_errors: int | None
    max_consecutive_failures: int | None
    store: str | RunStore | None
    settings: DecodingSettings
    seed: int


@dataclass(frozen=True, slots=True)
class InferenceOptions:
    """Scoring and inference: the :class:`ScoreOptions`, and what an audit tests beyond ``score()``.

    ``correction_scope`` is the correction family (each axis, or the run); ``similarity`` the
    methods of the no-effect baseline test (None: no baseline); ``by_turn`` the gap by turns
    since the identity appeared.
    """

    score: ScoreOptions
    correction_scope: CorrectionScope
    similarity: tuple[str, ...] | None
    by_turn: bool


@dataclass(frozen=True, slots=True)
class SequentialOptions:
    """``until_decided``: the first look's pairs, the budget, the looks and the alpha spending.

    ``alpha`` and ``correction`` are the scoring options' (the level spent over the looks and
    the correction over the sequential p-values).
    """

    until_decided: bool
    n_pairs: int | None
    max_pairs: int | None
    looks: int | None
    spending: Spending
    alpha: float
    correction: str


@dataclass(frozen=True, slots=True)
class OutputOptions:
    """Where the run goes: the report folder (None: none written)."""

    out_dir: str | None
