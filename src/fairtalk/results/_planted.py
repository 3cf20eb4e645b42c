"""A bias of known size, recovered: planted models (gap vs truth) and a planted corpus (baseline, CDA, WER).

Gaps here are written ``B - A`` (group B's rate minus group A's), the direction the bias was
planted in, so a recovered gap is positive; the audit's own intervals bound ``A - B`` and are
negated. :class:`PlantedGap` is one planted model and measure; :class:`DebiasedGap` one model
(a Seq2Seq generator or a retrieval ranker) trained on the planted corpus, with its change against
the baseline of its own architecture.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from fairtalk._codec import Codec
from fairtalk.results._debias import DebiasComparison
from fairtalk.results._model_comparison import Change
from fairtalk.results._protocol import Result, Verdict

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["ARCHITECTURES", "DebiasedGap", "PlantedGap", "PlantedRecovery", "RankerPool"]

#: The architectures trained on the planted corpus, in the table's order.
ARCHITECTURES = ("seq2seq", "retrieval")
_LABELS = {"baseline": "baseline", "cda": "CDA", "wer": "WER"}

_Bounds = tuple[float | None, float | None]


@dataclass(frozen=True, slots=True)
class PlantedGap(Codec):
    """One planted model, one measure: the planted rate, the true gap, and what the audit recovered.

    - ``rate``: the probability of a planted reply on a group-B context;
    - ``base_share``: the share of the group-A answers the measure flags (the base model's own rate);
    - ``true_gap``: ``rate * (1 - base_share)`` (a planted reply replaces an answer that may
      already have been flagged; the planted replies are all flagged);
    - ``n_planted``: pairs whose group-B side got a planted reply;
    - ``gap``, ``ci``: the audit's ``B - A`` and its interval; ``covered``: the interval holds ``true_gap``;
    - ``p_adjusted``, ``verdict``, ``mde``: the audit's test, verdict and minimum detectable effect;
    - ``n_unmapped``: pairs whose group-B side, swapped back by the lexicon, is not their group-A
      side (the planted model maps each pair's group-B side to its own group-A side, so these too
      get the group-A answer; the count says how often the swap alone would not have round-tripped).
    """

    rate: float
    key: str
    n_pairs: int
    base_share: float
    true_gap: float
    n_planted: int
    gap: float | None
    ci: _Bounds
    covered: bool | None
    p_adjusted: float | None
    verdict: Verdict
    mde: float | None
    n_unmapped: int = 0


@dataclass(frozen=True, slots=True)
class DebiasedGap(Codec):
    """One model trained on the planted corpus, one measure: its rates ``a``, ``b``, gap (``B - A``) and change from the baseline.

    ``model`` is the debiasing (``baseline``, ``cda``, ``wer``) and ``architecture`` the model kind
    (``seq2seq`` or ``retrieval``; files written before retrieval rows existed read as ``seq2seq``).
    ``change`` is the difference in differences (this model's ``B - A`` minus the baseline's of the
    same architecture), ``change_ci`` its interval and ``change_verdict`` the comparison's
    :class:`Change` (None for a baseline).
    """

    model: str
    key: str
    a: float
    b: float
    gap: float
    ci: _Bounds
    verdict: Verdict
    p_adjusted: float | None
    change: float | None = None
    change_ci: _Bounds = (None, None)
    p_change: float | None = None
    change_verdict: Change | None = None
    architecture: str = "seq2seq"

    @property
    def label(self) -> str:
        """The row's name in tables and the figure: ``seq2seq baseline``, ``retrieval CDA``."""
        return f"{self.architecture} {_LABELS.get(self.model, self.model)}"

    @property
    def name(self) -> str:
        """The row's key in :attr:`PlantedRecovery.verdicts`: the model for Seq2Seq (``cda``), else ``retrieval-cda``."""
        return self.model if self.architecture == "seq2seq" else f"{self.architecture}-{self.model}"


@dataclass(frozen=True, slots=True)
class RankerPool(Codec):
    """A retrieval ranker trained on the planted corpus: the planted replies in its pool, and how often it chose one.

    A ranker answers only from its candidate pool (the distinct training responses), so
    ``n_held`` of the ``n_replies`` planted replies are among its ``n_candidates``;
    ``n_chosen_a`` and ``n_chosen_b`` count the audited pairs whose group-A and group-B sides it
    answered with one of them.
    """

    n_held: int
    n_replies: int
    n_candidates: int
    n_chosen_a: int
    n_chosen_b: int


@dataclass(frozen=True, slots=True)
class PlantedRecovery(Codec, Result[tuple[str, str]]):
    """``reproduce planted``: planted models' gaps against the truth, and a planted corpus debiased. Built once.

    ``planted`` holds a :class:`PlantedGap` per (rate, measure); ``corpus_rate`` is the planted
    corpus' replacement probability and ``corpus`` the counts of its planting; ``debiased`` holds a
    :class:`DebiasedGap` per (model, measure), and ``debias`` the full comparison (None when the
    corpus part was skipped); ``debias_retrieval`` is the retrieval rankers' comparison (None when
    not trained) and ``pools`` maps each ranker (``baseline``, ``cda``, ``wer``) to its :class:`RankerPool`
    (the planted replies among its candidates, and how often it chose one). Keys are ``("planted-<rate>", measure)``
    and ``(DebiasedGap.name, measure)``: ``("cda", ...)`` for Seq2Seq, ``("retrieval-cda", ...)`` for rankers.
    """

    axis: str
    groups: tuple[str, str]
    base_model: str
    n_pairs: int
    seed: int
    mode: str
    planted: tuple[PlantedGap, ...]
    corpus_rate: float | None = None
    corpus: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    debiased: tuple[DebiasedGap, ...] = ()
    debias: DebiasComparison | None = None
    debias_retrieval: DebiasComparison | None = None
    pools: Mapping[str, RankerPool] = field(default_factory=lambda: MappingProxyType({}))
    timings: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def verdicts(self) -> Mapping[tuple[str, str], Verdict]:
        """Each planted model's and each trained model's verdict per measure."""
        out = {(f"planted-{row.rate:g}", row.key): row.verdict for row in self.planted}
        out.update({(row.name, row.key): row.verdict for row in self.debiased})
        return MappingProxyType(out)

    @property
    def all_recovered(self) -> bool:
        """Every planted gap lies in its interval (rows without an interval count as not recovered)."""
        return all(row.covered is True for row in self.planted)

    def to_frame(self) -> pd.DataFrame:
        """One row per planted model and measure, then one per trained model and measure (``part`` tells which)."""
        import pandas as pd

        rows = [{"part": "planted", **row.to_dict()} for row in self.planted]
        rows += [{"part": "debias", **row.to_dict()} for row in self.debiased]
        return pd.DataFrame(rows)
